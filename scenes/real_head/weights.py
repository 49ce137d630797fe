"""What one real head looks at in the user's sentence: the query's scores and weights over the real
WordPiece tokens ([CLS] and [SEP] included), then every token's row of weights as a heat map.

The numbers are the model's own (all-MiniLM-L6-v2 through :mod:`attention_math.minilm`): the scaled
scores ``q·k ÷ √32`` beside the key tokens, the weights as bars with their numbers, and the whole
``n × n`` weights as colours (their numbers in the cells while they fit, said so when they do not).
"""

from __future__ import annotations

from typing import cast

import numpy as np
from manim import DOWN, LEFT, RIGHT, UP, Create, FadeIn, GrowFromEdge, SurroundingRectangle, VGroup, VMobject

from scenes.facts import Fact, TokenPart, position, value
from scenes.kit.bars import BarRows
from scenes.kit.fades import fade_in
from scenes.kit.heatmap import (
    HeatFit,
    HeatGrid,
    cell_numbers,
    fill_cells,
    fit_heat,
    legend,
    row_box,
    text_width,
    widest,
)
from scenes.kit.layout import BOTTOM, HALF_WIDTH, TOP
from scenes.kit.palette import HIGHLIGHT, KEY, MUTED, QUERY, WEIGHT
from scenes.kit.text import SMALLEST_SIZE, shorten_token, text, token_text
from scenes.real_head.common import RealHeadScene

__all__ = ["RealWeights"]

SPLIT = 0.1  # the bars left of this x, the heat map right of it
HEADS_Y = TOP - 0.25  # the line of column heads over the bars
LEGEND_ROOM = 0.45  # under the heat map: its colour scale


class RealWeights(RealHeadScene):
    """The query's scores and weights over the real tokens; the head's whole weights heat map."""

    def construct(self) -> None:
        self.open_head()
        self.header("What head {} of layer {} looks at", "softmax",
                    parts=[Fact("place", "head_number"), Fact("place", "layer_number")])
        q = self.scenario.query
        self.size = 24 if self.scenario.n_tokens <= 9 else SMALLEST_SIZE
        labels, scores, heads = self._score_column()
        asks = ("every token, [CLS] and [SEP] included" if self.scenario.model is None or not self.scenario.model.causal
                else "itself and the tokens before it, the later ones masked")
        self.beat(
            f"'{self.scenario.query_token}' asks {asks}: "
            f"its scores q·k ÷ √{self.cite(Fact('place', 'd_head'))}, the model's own numbers.",
            fade_in(heads[0]), fade_in(heads[1]), fade_in(labels), fade_in(scores), wait=1.2,
        )
        chart, numbers = self._weight_bars(labels, heads)
        self.beat("Softmax turns the scores into weights that sum to one: the bars.",
                  *(GrowFromEdge(bar, LEFT) for bar in chart.bars), fade_in(heads[2]), fade_in(numbers), wait=1.2)
        grid, cells, scale = self._heat_map()
        outline = row_box(grid, q)
        self.chart, self.heat, self.outline = chart, grid, outline  # for the geometry tests
        colours = "with its numbers" if len(cells) else "colours only"
        self.beat(f"Every token's row at once: the head's weights, {colours}; brighter is more. "
                  f"'{self.scenario.query_token}' is the row outlined.",
                  FadeIn(grid), *fill_cells(self, grid, "model", "weights", "model_extremes", WEIGHT, animate=True),
                  fade_in(cells), fade_in(scale), Create(outline), wait=1.2)
        self._summary(chart, q)

    # -- the query's row: scores, then weights -----------------------------------------------
    def _pitch(self) -> float:
        n = self.scenario.n_tokens  # the rows and the half row the bars' zero line reaches below them
        return min(0.5, (HEADS_Y - 0.4 - (BOTTOM + 0.05)) / (n - 0.5))

    def _score_column(self) -> tuple[VGroup, VGroup, VGroup]:
        """The key tokens down the left, each with its scaled score; the heads over them."""
        n, q, size = self.scenario.n_tokens, self.scenario.query, self.size
        pitch, top = self._pitch(), HEADS_Y - 0.4
        labels = VGroup(*(token_text(t, size=size, color=QUERY if j == q else KEY)
                          for j, t in enumerate(self.scenario.tokens)))
        right = -HALF_WIDTH + max(label.width for label in labels)
        for j, label in enumerate(labels):
            label.move_to((right - label.width / 2, top - j * pitch, 0))
        shown = [self.number("model", "scaled_scores", q, j, size=size) for j in range(n)]
        score_head = self.label("q·k ÷ √{}", Fact("place", "d_head"), size=SMALLEST_SIZE, color=MUTED)
        score_right = right + 0.35 + max(max(s.width for s in shown), score_head.width)
        for j, number in enumerate(shown):
            number.move_to((0, labels[j].get_y(), 0)).align_to((score_right, 0, 0), RIGHT)
        scores = VGroup(*shown)
        key_head = text("key", size=SMALLEST_SIZE, color=KEY).move_to((right, HEADS_Y, 0), aligned_edge=RIGHT)
        score_head.move_to((score_right, HEADS_Y, 0), aligned_edge=RIGHT)
        weight_head = text("weight", size=SMALLEST_SIZE, color=WEIGHT)
        self.rows("key", dict(enumerate(labels)), labels, scores)  # each score in its key's row
        return labels, scores, VGroup(key_head, score_head, weight_head)

    def _weight_bars(self, labels: VGroup, heads: VGroup) -> tuple[BarRows, VGroup]:
        """The query's weights as bars right of the scores, each with its number."""
        n, q, size = self.scenario.n_tokens, self.scenario.query, self.size
        shown = [self.number("model", "weights", q, j, size=size, color=WEIGHT) for j in range(n)]
        left = heads[1].get_right()[0] + 0.35
        width = SPLIT - 0.3 - left - max(s.width for s in shown) - 0.15
        weights = [float(w) for w in self.head_found.trace.weights[q]]
        chart = BarRows(None, weights, width=width, pitch=self._pitch(), color=WEIGHT)
        chart.shift(RIGHT * (left - chart.zero_line.get_x()) + UP * (labels[0].get_y() - chart.row_y(0)))
        for j, number in enumerate(shown):
            chart.number_spot(j, number)
        numbers = VGroup(*shown)
        heads[2].move_to((left, HEADS_Y, 0), aligned_edge=LEFT)
        self.rows("key", chart)  # each weight in its key's row
        self.add(chart.zero_line)
        return chart, numbers

    # -- the whole head ----------------------------------------------------------------------
    def _heat_map(self) -> tuple[HeatGrid, VGroup, VGroup]:
        """The ``n × n`` weights right of the bars: numbers in the cells while they fit, else colours."""
        n, tokens = self.scenario.n_tokens, self.scenario.tokens
        width, top = HALF_WIDTH - SPLIT - 0.2, TOP - 0.1
        texts = [self.text_for(value("model", "weights", i, j)) for i in range(n) for j in range(n)]
        fit = fit_heat(tokens, widest(texts, 26), width=width, height=top - BOTTOM - LEGEND_ROOM, fill=width,
                       query=self.scenario.query)
        if not fit.numbers:  # the numbered row labels and the cells within the part
            labels = max(text_width(f"{n} " + shorten_token(t, fit.row_limit), fit.size) for t in tokens)
            cell = min(fit.cell_w, (width - labels - 0.35) / n)
            fit = HeatFit(False, fit.size, cell, min(fit.cell_h, cell), fit.row_limit, 0, False, numbered=True)
        grid = HeatGrid(n, n, cell_w=fit.cell_w, cell_h=fit.cell_h, size=fit.size,
                        row_tokens=None if fit.numbered else tokens, row_limit=fit.row_limit,
                        column_tokens=None if fit.numbered else tokens, column_limit=fit.column_limit,
                        upright=fit.upright)
        if fit.numbered:
            self._number_labels(grid, fit)
        grid.shift(RIGHT * (HALF_WIDTH - grid.get_right()[0]) + UP * (top - grid.get_top()[1]))
        self.rows("query", grid)  # each cell's number in its query's row and key's column
        self.columns("key", grid)
        cells = cell_numbers(self, grid, "model", "weights", "model_extremes", size=fit.size) if fit.numbers \
            else VGroup()
        scale = VGroup(legend(self, "model_extremes", "weights", WEIGHT))
        if not fit.numbers:
            scale.add(text("colours only: too many to print", size=SMALLEST_SIZE, color=MUTED)
                      .next_to(scale[0], RIGHT, buff=0.25))
        scale.next_to(grid, DOWN, buff=0.2).align_to(grid.brackets, RIGHT)
        return grid, cells, scale

    def _number_labels(self, grid: HeatGrid, fit: HeatFit) -> None:
        """Colour only: columns numbered (every other one where two digits do not fit), rows "j token"."""
        n = self.scenario.n_tokens
        step = 1 if text_width(str(n), fit.size) + 0.06 <= fit.cell_w else 2
        grid.column_labels.submobjects = []
        for j in range(0, n, step):
            label = self.label("{}", position(j), size=fit.size, color=KEY)
            grid.column_labels.add(label.next_to(grid.brackets, UP, buff=0.12).set_x(grid.cell_center(0, j)[0]))
        grid.label_rows([self.label("{} {}", position(i), TokenPart(t, fit.row_limit), size=fit.size, color=QUERY)
                         for i, t in enumerate(self.scenario.tokens)])

    # -- the summary -------------------------------------------------------------------------
    def _summary(self, chart: BarRows, q: int) -> None:
        """The key the query weighs most, outlined on its bar, said with its weight."""
        weights = self.head_found.trace.weights[q]
        top = int(np.argmax(weights))  # which key: a choice of what to point at, its number the model's
        mark = SurroundingRectangle(VGroup(chart.bars[top], cast(VMobject, chart.placed[top])), color=HIGHLIGHT,
                                    buff=0.05, stroke_width=3)
        self.mark = mark
        self.beat(
            f"Head {self.cite(Fact('place', 'head_number'))} of layer {self.cite(Fact('place', 'layer_number'))}: "
            f"{self.quote(q, 'query')} puts most weight on {self.quote(top, 'key')}, "
            f"{self.cite(value('model', 'weights', q, top))} of it.",
            Create(mark), wait=2.0,
        )
