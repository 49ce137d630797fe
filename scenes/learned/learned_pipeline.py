"""Scene 3: the learned matrices through the lecture-6 pipeline — scores, softmax, weights for "it".

The lecture's scenario is the ``learned`` preset: the sentence's four words with the W_Q and W_K that
gradient descent learned (``TrainingTrace.scenario()``), the query the second "it". A table, a row per key:
its score q·k, the score divided by √d_k, and its weight after the softmax, drawn as a bar and written
beside it. The weights fall on the noun the "it" means, as the training asked. Any scenario of 2 to 16
tokens draws (its own query through the same steps); with 12 or more the rows close up and the type is the
floor's.
"""

from __future__ import annotations

import numpy as np
from manim import DOWN, LEFT, RIGHT, UP, FadeIn, Group, LaggedStart, Rectangle, SurroundingRectangle, VGroup, VMobject

from scenes.base import READING_PACE, ExplainerScene
from scenes.facts import TokenPart, position, query_number, size, value
from scenes.kit.bars import BarRows
from scenes.kit.heatmap import text_width, widest
from scenes.kit.layout import BOTTOM, HALF_WIDTH, TOP
from scenes.kit.palette import HIGHLIGHT, INK, KEY, MUTED, QUERY, WEIGHT
from scenes.kit.text import SMALLEST_SIZE, text

__all__ = ["LearnedPipeline"]

SIDE_FROM = 9  # from this many tokens the query's line and the summary stand beside the table, not over and under
COLUMN_GAP = 0.55
BAR_WIDTH = 3.5  # the weight 1's bar would be this long (2.5 beside the words)


class LearnedPipeline(ExplainerScene):
    """The query's scores, scaled scores and weights with the learned W_Q and W_K."""

    reading_pace = READING_PACE

    _made_labels: dict[int, VMobject]
    keys: VGroup  # the row labels ("k1 dog"), the bands of the table's rows (the geometry test reads them)
    columns_made: list[VGroup]  # scores, scaled scores (each with its head)
    chart: BarRows  # the weights

    def construct(self) -> None:
        self.header("The learned weights, through the pipeline", "query", "key", "scale", "softmax")
        self._made_labels = {}
        self.spans: list[tuple[float, float]] = []  # the columns' extents, left to right, as laid out
        n = self.scenario.n_tokens
        self.side = n >= SIDE_FROM
        self.table_top = TOP - 0.1 if self.side else TOP - 0.75  # under the query's line, or level with it
        room = self.table_top - BOTTOM - (0.65 if self.side else 1.3)  # under the heads, above the summary
        self.bar_width = 2.5 if self.side else BAR_WIDTH
        self.pitch = min(0.75, room / n)
        self.size = 30 if self.pitch >= 0.7 else 24 if self.pitch >= 0.45 else SMALLEST_SIZE
        self.left = -HALF_WIDTH if self.side else -self._width() / 2  # the table centred across the frame
        self._query()
        self._scores()
        self._weights()
        self._summary()

    @property
    def top_key(self) -> int:
        """The key the query attends to most (the first of a tie)."""
        return int(np.argmax(self.step.weights))

    # -- layout ------------------------------------------------------------------------------------------
    def _width(self) -> float:
        """The table's width as it will be drawn: the key labels, two columns of numbers, the bars and weights."""
        n, size = self.scenario.n_tokens, self.size
        keys = max(self._key_label(j).width for j in range(n))
        heads = (("scores", text_width("q·k", size)), ("scaled_scores", text_width("÷ √0", size)))
        columns = [max(widest([self.text_for(value("step", field, j)) for j in range(n)], size), head)
                   for field, head in heads]
        weights = widest([self.text_for(value("step", "weights", j)) for j in range(n)], size)
        return keys + sum(columns) + 3 * COLUMN_GAP + self.bar_width + 0.12 + weights

    def _key_label(self, j: int) -> VMobject:
        """"k1 dog": the key's number and token, on one baseline (made once per key)."""
        made = self._made_labels.get(j)
        if made is None:
            made = self._made_labels[j] = self.label("k{} {}", position(j), TokenPart(self.scenario.tokens[j]),
                                                     size=self.size, color=KEY)
        return made

    def _row_y(self, j: int) -> float:
        return self.table_top - 0.55 - (j + 0.5) * self.pitch

    def _key_labels(self) -> VGroup:
        labels = VGroup(*(self._key_label(j).move_to((0, self._row_y(j), 0)) for j in range(self.scenario.n_tokens)))
        right = self.left + max(label.width for label in labels)
        for label in labels:
            label.align_to((right, 0, 0), RIGHT)
        return labels

    def _column(self, field: str, head: VMobject, left: float, color: str) -> VGroup:
        """One number per key in its row, right-aligned under its head."""
        numbers = [self.number("step", field, j, size=self.size, color=color) for j in range(self.scenario.n_tokens)]
        width = max(head.width, *(number.width for number in numbers))
        for j, number in enumerate(numbers):
            number.move_to((0, self._row_y(j), 0)).align_to((left + width, 0, 0), RIGHT)
        head.move_to((0, self.table_top - 0.25, 0)).align_to((left + width, 0, 0), RIGHT)
        self.spans.append((left, left + width))
        return VGroup(head, VGroup(*numbers))

    # -- the beats -----------------------------------------------------------------------------------------
    def _query(self) -> None:
        q = self.scenario.query
        line = self.label("query: token {}, '{}'", query_number(), TokenPart(self.scenario.tokens[q]), size=26,
                          color=QUERY)
        line.move_to((0, TOP - 0.25, 0)).align_to((self.left + (self._width() + 0.6 if self.side else 0), 0, 0), LEFT)
        self.keys = self._key_labels()
        self.query_line = line
        self.beat(f"Now the learned W_Q and W_K go through the lecture's pipeline. The query is token "
                  f"{self.cite(query_number())}, '{self.scenario.tokens[q]}'.", FadeIn(line),
                  LaggedStart(*(FadeIn(label) for label in self.keys), lag_ratio=0.1), run_time=1.5, wait=1.2)

    def _scores(self) -> None:
        left = self.keys.get_right()[0] + COLUMN_GAP
        scores = self._column("scores", text("q·k", size=self.size, color=MUTED), left, INK)
        left = scores.get_right()[0] + COLUMN_GAP
        scaled = self._column("scaled_scores", self.label("÷ √{}", size("d_k"), size=self.size, color=MUTED), left,
                              INK)
        self.columns_made = [scores, scaled]
        self.table = VGroup(self.keys, scores, scaled)
        self.rows("key", dict(enumerate(self.keys)), self.table)
        self.spans.append((scaled.get_right()[0] + COLUMN_GAP, self.left + self._width()))  # the bars, their weights
        self._register_fields()
        top = self.top_key
        self.beat(f"The query's score with every key, q·k: {self.quote(top, 'key')} scores "
                  f"{self.fmt('step', 'scores', top)}.", FadeIn(scores, shift=LEFT * 0.1), run_time=1.2, wait=1.5)
        self.beat(f"Divided by √{self.cite(size('d_k'))}, as before: {self.fmt('step', 'scaled_scores', top)}.",
                  FadeIn(scaled, shift=LEFT * 0.1), run_time=1.2, wait=1.2)

    def _weights(self) -> None:
        left = self.columns_made[1].get_right()[0] + COLUMN_GAP
        head = text("weight", size=self.size, color=WEIGHT)
        weights = self.step.weights
        chart = BarRows(None, weights.tolist(), width=self.bar_width * float(np.max(weights)), pitch=self.pitch,
                        color=WEIGHT, thickness=0.55)
        chart.align_to((left, 0, 0), LEFT)
        chart.shift(UP * (self._row_y(0) - chart.row_y(0)))
        numbers = VGroup()
        for j in range(self.scenario.n_tokens):
            number = self.number("step", "weights", j, size=self.size, color=WEIGHT)
            chart.number_spot(j, number)
            numbers.add(number)
            self.plot(chart.bars[j], chart.axis(j), value("step", "weights", j), anchor=chart.end_side(j))
        head.move_to((0, self.table_top - 0.25, 0)).align_to((left, 0, 0), LEFT)
        self.chart = chart
        self.rows("key", chart)
        top = self.top_key
        self.beat(f"Softmax turns the scaled scores into weights: {self.quote(top, 'key')} gets "
                  f"{self.fmt('step', 'weights', top)} of the attention.", FadeIn(head, chart),
                  LaggedStart(*(FadeIn(number) for number in numbers), lag_ratio=0.1), run_time=1.5, wait=1.5)

    def _register_fields(self) -> None:
        """Each number under its own quantity's column, as laid out (marks that draw nothing): the scores, the
        scaled scores, the weights by their bars."""
        marks = [Rectangle(width=right - left, height=0.1, stroke_width=0, fill_opacity=0).move_to(
            ((left + right) / 2, self.table_top - 0.25, 0)) for left, right in self.spans]
        self.fields("column", dict(zip(("trace.scores", "trace.scaled_scores", "trace.weights"), marks, strict=True)),
                    self.table)  # the keys' rows: the weights by their bars stand in them too

    def _summary(self) -> None:
        """The last frame: the top key's row outlined, what the lecture showed."""
        top = self.top_key
        row = Group(self.keys[top], self.chart.bars[top], self.chart.placed[top],
                    *(column[1][top] for column in self.columns_made))
        mark = SurroundingRectangle(row, color=HIGHLIGHT, buff=min(0.06, self.pitch / 8), stroke_width=3)
        line: VMobject
        if self.side:  # in lines, under the query's
            line = VGroup(*(text(words, size=SMALLEST_SIZE + 2, color=INK) for words in (
                "The same softmax(QKᵀ/√d_k);", "W_Q and W_K found", "by gradient descent."))).arrange(
                DOWN, aligned_edge=LEFT, buff=0.12)
            line.next_to(self.query_line, DOWN, buff=0.5, aligned_edge=LEFT)
            line.shift(LEFT * max(0.0, line.get_right()[0] - HALF_WIDTH))  # into the safe area, nearer the table
        else:
            line = text("The same softmax(QKᵀ/√d_k); W_Q and W_K found by gradient descent.", size=SMALLEST_SIZE + 2,
                        color=INK)
            line.next_to(self.chart, DOWN, buff=0.5).set_x(0)
            line.set_y(max(line.get_y(), BOTTOM + 0.35))
        self.summary = VGroup(mark, line)
        self.beat(f"The learned weights send the query to '{self.scenario.tokens[top]}': nobody wrote that rule "
                  "down; training found it.", FadeIn(mark), FadeIn(line, shift=UP * 0.1), run_time=1.2, wait=2.5)

