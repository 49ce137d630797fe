"""Scene 5: dropout on the masked attention weights, in training only.

The masked weights as a token × token heat map (numbers in the cells while they are legible, else
colours), each row's sum beside it (one). Dropout draws, with a fixed seed, which weights to drop
with probability p: those cells are outlined; a dropped weight becomes 0, every kept one is multiplied
by 1/(1 − p), so each keeps its expected value; the rows no longer add up to one, on purpose. Beside
the grid the query's row before and after, a line per key; under it the setting (p, the seed, the
factor). At inference nothing is dropped. Every number is ``attention_math.attention_dropout``'s.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from manim import (
    DOWN,
    LEFT,
    RIGHT,
    UP,
    Create,
    FadeIn,
    FadeTransform,
    LaggedStart,
    MathTex,
    Rectangle,
    SurroundingRectangle,
    TransformMatchingTex,
    VGroup,
)

from attention_math.heat import Extremes, Ranges
from attention_math.masking import attention_dropout
from scenes.base import READING_PACE, ExplainerScene
from scenes.facts import Fact, TokenPart, position, value
from scenes.kit.board import colours_only, fit_board, panel_size, token_board
from scenes.kit.formula import formula_title
from scenes.kit.heatmap import (
    HeatFit,
    HeatGrid,
    Legend,
    cell_numbers,
    ends_legend,
    fill_cells,
    inks,
    key_column,
    legend,
    opacity_of,
    text_height,
    text_width,
    widest,
)
from scenes.kit.layout import HALF_WIDTH
from scenes.kit.palette import HIGHLIGHT, INK, MUTED, WEIGHT
from scenes.kit.text import SMALLEST_SIZE, shorten_token, text
from scenes.masked import MASKED_DROPOUT

__all__ = ["SEED", "AttentionDropout", "P"]

P, SEED = MASKED_DROPOUT
"""The dropout probability (Raschka's chapter 3 example drops attention weights with p = 0.5) and the seed of
the draw (``attention_dropout``'s), the lecture's own (:data:`scenes.masked.MASKED_DROPOUT`, which its handout
replays too): the seed drops at least one weight of the triangle and keeps at
least one, for 2 to 16 tokens (and drops one and keeps one in the query's row of the lecture's preset)."""

SUMS_GAP = 0.3  # between the grid and its column of sums
PANEL_GAP = 0.5  # between the sums and the query's row
TOP_ROOM = 0.75  # over the grid: the query's row's title and heads stand over its first line
SUMS_HEAD = "row sum"  # the sums' column's head
SETTING_LINES = 3  # under the panel: p and the seed; dropped and kept; at inference


@dataclass(frozen=True)
class _Spacing:
    """The gaps around the panel: beside a colour-only grid tighter, so that its rows (16 of them) stand a line of
    their labels' type apart (a descender of one row's label never meets an ascender of the next's)."""

    title: float  # between the row's heads and its title
    setting: float  # between the grid's bracket and the setting's first line
    lines: float  # between the setting's lines


SPACING = {True: _Spacing(0.2, 0.15, 0.08), False: _Spacing(0.12, 0.08, 0.05)}
"""By numbers in the cells (True) or colours only (False)."""


@dataclass
class _Board:
    fit: HeatFit
    grid: HeatGrid
    titles: list[MathTex]  # the masked weights, then after dropout
    right: float  # where the panel beside the grid starts (the sums, then the query's row)
    numbers: VGroup = field(default_factory=VGroup)
    legend: VGroup = field(default_factory=VGroup)
    sums: VGroup = field(default_factory=VGroup)
    sums_head: VGroup = field(default_factory=VGroup)  # "row sum" over the sums, on the line of the row's heads
    outlines: VGroup = field(default_factory=VGroup)  # the dropped weights of the triangle
    row: VGroup = field(default_factory=VGroup)  # the query's row: masked, after dropout


def _setting_size(fit: HeatFit) -> float:
    return SMALLEST_SIZE + 2 if fit.numbers else SMALLEST_SIZE


def _band(size: float) -> float:
    """Under the grid: its title and legend; under the panel, the setting's lines (the panel at ``size``: at the
    floor beside a colour-only grid)."""
    if size > SMALLEST_SIZE:
        return 0.15 + SETTING_LINES * text_height(size + 2) + 0.16
    gaps = SPACING[False]
    return gaps.setting + SETTING_LINES * text_height(size) + (SETTING_LINES - 1) * gaps.lines + 0.03


def _top(size: float) -> float:
    """Over the grid's column labels: the row's title over its heads (at the floor beside a colour-only grid)."""
    return TOP_ROOM if size > SMALLEST_SIZE else SPACING[False].title + text_height(size) + 0.03


class AttentionDropout(ExplainerScene):
    """softmax(mask(QKᵀ/√d_k)) with some weights dropped and the rest scaled up: training only."""

    draws_decoder = True  # a decoder's head (--model smollm2): its own scores and weights

    reading_pace = READING_PACE

    board: _Board  # what the beats draw on (the geometry tests look at it)

    def construct(self) -> None:
        precision = self.scenario.precision
        causal = self.scenario.trace(causal=True)
        dropped = attention_dropout(causal.weights, P, seed=SEED)
        self.add_source("causal", causal, precision)
        self.add_source("causal_extremes", Extremes(causal), precision)
        self.add_source("dropout", dropped, precision)
        self.add_source("dropout_ends", Ranges(dropped), precision)  # its legend: 0 to the largest kept weight
        self.add_source("dropout_rate", dropped, 1)  # p and the factor 1/(1 − p), at one decimal
        self.add_source("dropout_seed", dropped, 0)
        self.dropped = dropped
        self._rounding_noted = False
        self.header("Dropout on the weights, in training", "query", "key", "scale", "softmax")
        board = self.board = self._board()
        self._weights(board)
        self._draw(board)
        self._scale(board)
        self._sums(board)
        self._training_only(board)

    @property
    def _triangle_dropped(self) -> list[tuple[int, int]]:
        """The weights of the triangle (a key up to the query) that the draw drops, row by row."""
        n = self.scenario.n_tokens
        return [(i, j) for i in range(n) for j in range(i + 1) if not self.dropped.kept[i, j]]

    # -- layout -----------------------------------------------------------------------------------------
    def _sums_width(self, size: float) -> float:
        n = self.scenario.n_tokens
        numbers = [self.text_for(value("causal", "weights", i, reduce="sum")) for i in range(n)]
        numbers += [self.text_for(value("dropout", "row_sums", i)) for i in range(n)]
        return max(widest(["≈ "], size) + widest(numbers, size) + 0.1, text_width(SUMS_HEAD, size))

    def _row_width(self, size: float) -> float:
        """The query's row, a line per key: "k16", then masked and after dropout under their heads."""
        n, q = self.scenario.n_tokens, self.scenario.query
        columns = [max(widest([self.text_for(value(source, "weights", q, j)) for j in range(n)], size),
                       widest([head], size)) for source, head in (("causal", "masked"), ("dropout", "dropout"))]
        return widest([f"k{n}"], size) + 0.3 + columns[0] + 0.3 + columns[1]

    def _panel_width(self, size: float) -> float:
        """The sums (from :data:`SUMS_GAP` after the grid: within ``fit_board``'s gap), then the query's row."""
        return self._sums_width(size) + PANEL_GAP + self._row_width(size)

    def _board(self) -> _Board:
        n, q = self.scenario.n_tokens, self.scenario.query
        cells = [self.text_for(value(s, "weights", i, j)) for s in ("causal", "dropout")
                 for i in range(n) for j in range(n)]
        fit, gap = fit_board(self.scenario.tokens, cells, q, panel=self._panel_width, band=_band, top=_top)
        size = panel_size(fit)
        width = fit.grid_width(self.scenario.tokens, n) + gap + self._panel_width(size)
        grid = token_board(self, fit, self.scenario.tokens, width=width, band=_band(size), top=_top(size))
        masked = ["\\mathrm{mask}\\big(", "Q", "K^{\\top}", "/\\sqrt{d_k}", "\\big)"]
        titles = [formula_title("\\mathrm{softmax}\\big(", *masked, "\\big)", font_size=28),
                  formula_title("\\mathrm{dropout}\\big(", "\\mathrm{softmax}\\big(", *masked, "\\big)", "\\big)",
                                font_size=28)]
        for title in titles:
            title.next_to(grid.brackets, DOWN, buff=0.18).align_to(grid, LEFT)
        if fit.numbers:  # each cell's number in its query's row and key's column
            self.rows("query", grid)
            self.columns("key", grid)
        return _Board(fit, grid, titles, grid.brackets.get_right()[0] + SUMS_GAP)

    # -- the beats -------------------------------------------------------------------------------------------
    def _weights(self, board: _Board) -> None:
        """The masked weights, each row's sum beside it."""
        grid, n = board.grid, self.scenario.n_tokens
        fill_cells(self, grid, "causal", "weights", "causal_extremes", WEIGHT, animate=False)
        if board.fit.numbers:
            board.numbers = cell_numbers(self, grid, "causal", "weights", "causal_extremes", size=board.fit.size)
        board.legend = legend(self, "causal_extremes", "weights", WEIGHT)
        self._place_legend(board, board.legend, board.titles[0])
        board.sums = self._sum_column(board, [value("causal", "weights", i, reduce="sum") for i in range(n)],
                                      [[value("causal", "weights", i, j) for j in range(n)] for i in range(n)])
        # over the sums, left-aligned with them, on the line the row's heads take later
        board.sums_head = VGroup(text(SUMS_HEAD, size=panel_size(board.fit), color=MUTED)
                                 .next_to(board.sums, UP, buff=0.16).align_to(board.sums, LEFT))
        cells = [square for row in grid.squares for square in row]
        self.beat(
            "In training, dropout acts on the masked weights; so far each row adds up to one." + self.said_rounded(),
            FadeIn(grid.brackets, grid.row_labels, grid.column_labels, board.titles[0], board.legend),
            LaggedStart(*(FadeIn(c) for c in cells), lag_ratio=0.2 / len(cells)),
            *(FadeIn(row, shift=DOWN * 0.1) for row in board.numbers),
            LaggedStart(*(FadeIn(s, shift=LEFT * 0.2) for s in board.sums), lag_ratio=0.05), FadeIn(board.sums_head),
            *self._notes(board), run_time=2, wait=1,
        )

    def _rounding(self) -> list[Any]:
        """The note that the numbers are rounded, once, when some shown sum first does not add up."""
        if not self.rounding_shows or self._rounding_noted:
            return []
        self._rounding_noted = True
        return [FadeIn(self.rounding_note())]

    def _notes(self, board: _Board) -> list[Any]:
        notes = self._rounding()
        if not board.fit.numbers:
            notes.append(FadeIn(colours_only(board.grid)))
        return notes

    def _place_legend(self, board: _Board, scale: VGroup, title: MathTex) -> None:
        """The legend right of the grid's title, or under it where that would reach the panel's band."""
        scale.next_to(title, RIGHT, buff=0.35)
        if scale.get_right()[0] > board.right - 0.2:
            scale.next_to(title, DOWN, buff=0.12).align_to(title, LEFT)

    def _sum_column(self, board: _Board, sums: list[Fact], terms: list[list[Fact]]) -> VGroup:
        """Each row's sum level with its row, "=" where the shown weights give it, else "≈"."""
        size, column = panel_size(board.fit), VGroup()
        for i, (total, parts) in enumerate(zip(sums, terms, strict=True)):
            sign = self.equals(total, parts)
            number = self.number(total.source, total.field, *total.index, reduce=total.reduce, size=size,
                                 color=WEIGHT)
            line = VGroup(text(sign, size=size, color=MUTED), number).arrange(RIGHT, buff=0.12)
            column.add(line.move_to((0, board.grid.row_y(i), 0)).align_to((board.right, 0, 0), LEFT))
        self.rows("query", board.grid, column)  # each row's sum level with its row
        return column

    def _draw(self, board: _Board) -> None:
        """The seeded draw: the weights it drops are outlined."""
        grid, size = board.grid, _setting_size(board.fit)
        board.outlines = VGroup(*(
            Rectangle(width=grid.cell_w - 0.1, height=grid.cell_h - 0.1, stroke_color=HIGHLIGHT, stroke_width=4)
            .move_to(grid.cell_center(i, j)) for i, j in self._triangle_dropped))
        self.setting = VGroup(self.label("training: p = {}, seed {}", value("dropout_rate", "p"),
                                         value("dropout_seed", "seed"), size=size, color=INK))
        self._place_setting(board)
        self.beat(
            f"Each weight is dropped with probability p = {self.fmt('dropout_rate', 'p')}; the seed, "
            f"{self.fmt('dropout_seed', 'seed')}, fixes the draw: the outlined weights are dropped.",
            FadeIn(self.setting[0]), LaggedStart(*(Create(box) for box in board.outlines), lag_ratio=0.1),
            run_time=2, wait=1.2,
        )

    def _place_setting(self, board: _Board) -> None:
        """The setting's lines under the panel, from its left edge down."""
        gaps = SPACING[board.fit.numbers]
        top = board.grid.brackets.get_bottom()[1] - gaps.setting
        for line in self.setting:
            line.next_to((board.right, top, 0), DOWN, buff=0, aligned_edge=LEFT)
            top = line.get_bottom()[1] - gaps.lines

    def _row(self, board: _Board) -> VGroup:
        """The query's row before and after dropout, a line per key, right of the sums; its dropped weights in the
        outline's colour."""
        q, size = self.scenario.query, panel_size(board.fit)
        left = VGroup(board.sums, board.sums_head).get_right()[0] + PANEL_GAP  # after the sums and their head
        heads = [self.label("masked", size=size, color=WEIGHT), self.label("dropout", size=size, color=INK)]
        table = key_column(self, board.grid, [("causal", "weights", q, WEIGHT), ("dropout", "weights", q, INK)],
                           left=left, heads=heads, size=size, names=("causal.weights", "dropout.weights"))
        heads[1].shift(UP * (heads[0][0].get_bottom()[1] - heads[1][0].get_bottom()[1]))  # one baseline: "m", "d"
        for j, entry in enumerate(table[3]):
            if not self.dropped.kept[q, j] and j <= q:
                entry.set_color(HIGHLIGHT)
        token, room = self.scenario.query_token, HALF_WIDTH - left
        limit = next((most for most in range(20, 4, -1)
                      if text_width(f"row {q + 1} {shorten_token(token, most)}", size) <= room), 4)
        title = self.label("row {} {}", position(q), TokenPart(token, limit), size=size, color=INK)
        title.next_to(table[0], UP, buff=SPACING[board.fit.numbers].title).align_to((left, 0, 0), LEFT)
        table.add(title)
        return VGroup(table, SurroundingRectangle(board.grid.row(q), color=INK, buff=0.03, stroke_width=2))

    def _dropout_ends(self) -> tuple[Fact, Fact]:
        """The legend's ends after dropout: the smallest weight (a dropped or masked one, 0) and the largest."""
        return value("dropout_ends", "weights", 0), value("dropout_ends", "weights", 1)

    def _dropout_cells(self, board: _Board) -> tuple[list[Any], VGroup, Legend]:
        """The cells refilled over the new range (0 to the largest weight), their numbers, the legend of it."""
        grid, ends = board.grid, self._dropout_ends()
        low, high = (self.value_of(end) for end in ends)
        weights = self.dropped.weights
        fills = grid.fill(weights, low, high, WEIGHT, animate=True)
        numbers = VGroup()
        if board.fit.numbers:
            n = self.scenario.n_tokens
            ink = inks(np.array([[opacity_of(float(w), low, high) for w in row] for row in weights]))
            numbers = grid.place([[self.number("dropout", "weights", i, j, size=board.fit.size, color=ink[i][j])
                                   for j in range(n)] for i in range(n)])
        low_mob, high_mob = (self.number(end.source, end.field, *end.index, size=SMALLEST_SIZE, color=MUTED)
                             for end in ends)
        scale = ends_legend(self, low_mob, high_mob, WEIGHT)
        return fills, numbers, scale

    def _scale(self, board: _Board) -> None:
        """A dropped weight becomes 0; each kept one is multiplied by 1/(1 − p)."""
        size = _setting_size(board.fit)
        first = self._triangle_dropped[0]
        q_dropped = [(i, j) for i, j in self._triangle_dropped if i == self.scenario.query]
        shown = q_dropped[0] if q_dropped else first
        swatch = Rectangle(width=0.3, height=0.22, stroke_color=HIGHLIGHT, stroke_width=3)
        self.setting.add(VGroup(swatch, self.label("dropped: {},", value("dropout", "weights", *shown), size=size,
                                                   color=INK),
                                self.label("kept: × {}", value("dropout_rate", "scale"), size=size, color=INK))
                         .arrange(RIGHT, buff=0.14))
        self._place_setting(board)
        fills, numbers, scale = self._dropout_cells(board)
        self._place_legend(board, scale, board.titles[1])
        old, board.numbers, old_legend, board.legend = board.numbers, numbers, board.legend, scale
        board.row = self._row(board)
        self.beat(
            f"A dropped weight becomes {self.fmt('dropout', 'weights', *shown)}; each kept one is multiplied by one "
            f"over one minus p, {self.fmt('dropout_rate', 'scale')}, so on average it keeps its size.",
            *fills, *([FadeTransform(old, numbers)] if len(old) else []), FadeTransform(old_legend, scale),
            TransformMatchingTex(board.titles[0], board.titles[1]), FadeIn(self.setting[1:]),
            FadeIn(board.row, shift=LEFT * 0.2), run_time=2, wait=1.5,
        )

    def _sums(self, board: _Board) -> None:
        """The rows no longer add up to one."""
        n, q = self.scenario.n_tokens, self.scenario.query
        old = board.sums
        board.sums = self._sum_column(board, [value("dropout", "row_sums", i) for i in range(n)],
                                      [[value("dropout", "weights", i, j) for j in range(n)] for i in range(n)])
        said = (f"So the rows no longer add up to one, on purpose: {self.quote(q, 'query')} now adds up to "
                f"{self.fmt('dropout', 'row_sums', q)}; only on average over draws do they.")
        self.beat(said + self.said_rounded(), FadeTransform(old, board.sums), *self._rounding(), run_time=1.5,
                  wait=1.5)

    def _training_only(self, board: _Board) -> None:
        size = _setting_size(board.fit)
        self.setting.add(text("inference: nothing dropped", size=size, color=MUTED))
        self._place_setting(board)
        self.beat("Training only: at inference nothing is dropped and nothing is scaled; the weights are used as "
                  "they are.", FadeIn(self.setting[-1], shift=UP * 0.1), run_time=1.2, wait=2)

