"""Scene 6: the lower-triangular heat map — every token's masked weights, row by row.

The masked weights of every query as a token × token heat map (numbers in the cells while they are
legible, else colours): a triangle, the cells above the diagonal (keys after the query) under the
mask's staircase, weight 0. The query's row, written beside the grid, spreads its weight over keys 1
to i; a second query, the first token, has no past: it can only look at itself, with weight 1. The
last frame sums it up: the formula softmax(mask(QKᵀ/√d_k)) V beside the triangle.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

from manim import (
    DOWN,
    LEFT,
    RIGHT,
    UP,
    FadeIn,
    FadeOut,
    FadeTransform,
    LaggedStart,
    MathTex,
    MoveToTarget,
    Polygon,
    SurroundingRectangle,
    VGroup,
    VMobject,
)

from attention_math.heat import Extremes
from scenes.base import READING_PACE, ExplainerScene
from scenes.facts import TokenPart, position, value
from scenes.kit.board import colours_only, fit_board, panel_size, token_board
from scenes.kit.formula import formula_title
from scenes.kit.heatmap import HeatFit, HeatGrid, cell_numbers, fill_cells, key_column, legend, text_width, widest
from scenes.kit.layout import BOTTOM, HALF_WIDTH, TOP
from scenes.kit.mask import future_mask
from scenes.kit.palette import DIM, FAINT, INK, WEIGHT
from scenes.kit.text import SMALLEST_SIZE, shorten_token

__all__ = ["TriangularMap"]

BAND = 0.7  # under the grid: its title and legend
TOP_ROOM = 0.75  # over the grid: a row's title and head stand over its first line
SUMMARY_SIZE = 34  # the summary's formulas
LINE_SIZE = 24  # the summary's lines of words (the floor beside a colour-only grid)


@dataclass
class _Board:
    fit: HeatFit
    grid: HeatGrid
    title: MathTex
    right: float  # where the panel beside the grid starts
    mask: Polygon
    numbers: VGroup = field(default_factory=VGroup)
    legend: VGroup = field(default_factory=VGroup)


class TriangularMap(ExplainerScene):
    """softmax(mask(QKᵀ/√d_k)): a triangle of weights; the first token looks only at itself."""

    reading_pace = READING_PACE

    board: _Board  # what the beats draw on (the geometry tests look at it)
    summary: VGroup  # the last frame's formulas and lines
    marks: VGroup  # the outlines of the two rows written out, at the end

    def construct(self) -> None:
        causal = self.scenario.trace(causal=True)
        self.add_source("causal", causal, self.scenario.precision)
        self.add_source("causal_extremes", Extremes(causal), self.scenario.precision)
        self.header("The lower-triangular map", "query", "key", "scale", "softmax")
        board = self.board = self._board()
        self._triangle(board)
        first, second = self._rows
        box, table = self._row(board, first)
        table = self._other_row(board, second, box, table)
        self._summary(board, box, table)

    @property
    def _rows(self) -> tuple[int, int]:
        """The rows the scene writes out: the query's, then the first token's (the last token's when the query
        is the first)."""
        q = self.scenario.query
        return (q, 0) if q != 0 else (0, self.scenario.n_tokens - 1)

    # -- layout -------------------------------------------------------------------------------------------
    @cached_property
    def _formula(self) -> MathTex:
        """Z = softmax(mask(QKᵀ/√d_k)) V."""
        return formula_title("Z =", "\\mathrm{softmax}\\big(\\mathrm{mask}\\big(", "Q", "K^{\\top}", "/\\sqrt{d_k}",
                             "\\big)\\big)", "V", font_size=SUMMARY_SIZE)

    @cached_property
    def _mask_rule(self) -> MathTex:
        """What the mask does: −∞ for a key after the query (our own formula: no number of the scenario)."""
        return MathTex("\\mathrm{mask}(s_{ij}) = -\\infty\\ \\text{for}\\ j > i", font_size=SUMMARY_SIZE, color=INK)

    def _row_width(self, size: float) -> float:
        """A row written out: "k16", its weights under their head; over them its title."""
        n = self.scenario.n_tokens
        numbers = [self.text_for(value("causal", "weights", i, j)) for i in self._rows for j in range(n)]
        column = max(widest(numbers, size), widest(["weight"], size))
        title = max(text_width(f"row {i + 1} " + shorten_token(self.scenario.tokens[i], 6), size) for i in self._rows)
        return max(widest([f"k{n}"], size) + 0.3 + column, title)

    def _panel_width(self, size: float) -> float:
        return max(self._row_width(size), self._formula.width, self._mask_rule.width)

    def _board(self) -> _Board:
        n, q, tokens = self.scenario.n_tokens, self.scenario.query, self.scenario.tokens
        cells = [self.text_for(value("causal", "weights", i, j)) for i in range(n) for j in range(n)]
        fit, gap = fit_board(tokens, cells, q, panel=self._panel_width, band=lambda size: BAND, top=TOP_ROOM)
        width = fit.grid_width(tokens, n) + gap + self._panel_width(panel_size(fit))
        grid = token_board(self, fit, tokens, width=width, band=BAND, top=TOP_ROOM)
        title = formula_title("\\mathrm{softmax}\\big(\\mathrm{mask}\\big(", "Q", "K^{\\top}", "/\\sqrt{d_k}",
                              "\\big)\\big)", font_size=28)
        title.next_to(grid.brackets, DOWN, buff=0.18).align_to(grid, LEFT)
        if fit.numbers:  # each cell's number in its query's row and key's column
            self.rows("query", grid)
            self.columns("key", grid)
        return _Board(fit, grid, title, grid.get_right()[0] + gap, future_mask(grid, opacity=FAINT))

    # -- the beats -------------------------------------------------------------------------------------------
    def _triangle(self, board: _Board) -> None:
        """Every row's weights: a lower triangle, the future under the mask."""
        grid, n = board.grid, self.scenario.n_tokens
        fill_cells(self, grid, "causal", "weights", "causal_extremes", WEIGHT, animate=False)
        if board.fit.numbers:
            board.numbers = cell_numbers(self, grid, "causal", "weights", "causal_extremes", size=board.fit.size)
            for i in range(n):
                for j in range(i + 1, n):
                    board.numbers[i][j].set_opacity(DIM + 0.2)  # the future's zeros, under the mask
        board.legend = legend(self, "causal_extremes", "weights", WEIGHT).next_to(board.title, RIGHT, buff=0.35)
        rows = [VGroup(*(grid.squares[i][j] for j in range(i + 1))) for i in range(n)]
        notes = [] if board.fit.numbers else [colours_only(board.grid)]
        self.beat(
            "Masked, every token's weights fill a lower triangle: a token sees only itself and the tokens before it.",
            FadeIn(grid.brackets, grid.row_labels, grid.column_labels, board.title, board.legend, *notes),
            LaggedStart(*(FadeIn(row, shift=RIGHT * 0.1) for row in rows), lag_ratio=0.6 / n),
            *(FadeIn(row, shift=DOWN * 0.1) for row in board.numbers), FadeIn(board.mask),
            *(FadeIn(square) for i in range(n) for square in grid.squares[i][i + 1:]), run_time=2.5, wait=1.2,
        )

    def _written(self, board: _Board, row: int) -> VGroup:
        """Row ``row``'s weights, a line per key beside the grid, under its title."""
        size = panel_size(board.fit)
        table = key_column(self, board.grid, [("causal", "weights", row, WEIGHT)], left=board.right,
                           heads=[self.label("weight", size=size, color=WEIGHT)], size=size)
        token, room = self.scenario.tokens[row], HALF_WIDTH - board.right
        limit = next((most for most in range(20, 4, -1)
                      if text_width(f"row {row + 1} {shorten_token(token, most)}", size) <= room), 4)
        title = self.label("row {} {}", position(row), TokenPart(token, limit), size=size, color=INK)
        table.add(title.next_to(table[0], UP, buff=0.2).align_to((board.right, 0, 0), LEFT))
        return table

    def _sees(self, row: int) -> str:
        """What a caption says row ``row`` sees: itself only, or keys 1 to i."""
        token = self.scenario.tokens[row]
        if row == 0:
            return (f"The first token, {self.quote(0, 'query')}, has no past: it can only look at itself, with weight "
                    f"{self.fmt('causal', 'weights', 0, 0)}.")
        return (f"'{token}', token {self.cite(position(row))}, spreads its weight over keys "
                f"{self.cite(position(0))} to {self.cite(position(row))} only; they add up to one.")

    def _row(self, board: _Board, row: int) -> tuple[SurroundingRectangle, VGroup]:
        box = SurroundingRectangle(board.grid.row(row), color=INK, buff=0.03, stroke_width=2.5)
        table = self._written(board, row)
        self.beat(self._sees(row), FadeIn(box), FadeIn(table, shift=LEFT * 0.2), run_time=1.5, wait=1.5)
        return box, table

    def _other_row(self, board: _Board, row: int, box: SurroundingRectangle, old: VGroup) -> VGroup:
        """A second query: its row, its weights (the first token: itself alone, weight 1)."""
        table = self._written(board, row)
        box.generate_target().move_to(SurroundingRectangle(board.grid.row(row), buff=0.03))
        self.beat(self._sees(row), MoveToTarget(box), FadeTransform(old, table), run_time=1.5, wait=1.5)
        return table

    def _summary(self, board: _Board, box: SurroundingRectangle, table: VGroup) -> None:
        """The formula beside the triangle, and what the two rows showed."""
        first, second = self._rows
        size = LINE_SIZE if board.fit.numbers else SMALLEST_SIZE
        lines = VGroup(self._formula, self._mask_rule,
                       self._line(first, size), self._line(second, size)).arrange(DOWN, buff=0.35, aligned_edge=LEFT)
        lines[2].shift(DOWN * 0.15)
        lines[3].shift(DOWN * 0.15)
        lines.move_to((0, (TOP + BOTTOM + BAND) / 2, 0)).align_to((board.right, 0, 0), LEFT)
        left = board.grid.get_right()[0] + 0.3  # the grid drawn a hair wider than fitted: the panel's gap gives
        lines.shift(LEFT * min(max(0.0, lines.get_right()[0] - HALF_WIDTH), lines.get_left()[0] - left))
        marks = SurroundingRectangle(board.grid.row(first), color=INK, buff=0.03, stroke_width=2.5)
        self.summary, self.marks = lines, VGroup(marks, box)
        self.beat("Masked attention: softmax of the masked, scaled scores, times V. Each token mixes only the values "
                  "of its past.", FadeOut(table), FadeIn(marks), LaggedStart(*(FadeIn(line, shift=UP * 0.1)
                                                                              for line in lines), lag_ratio=0.3),
                  run_time=2, wait=2.5)

    def _line(self, row: int, size: float) -> VMobject:
        """What a row shows, in a line: the first token sees only itself; another, keys 1 to i."""
        token = TokenPart(self.scenario.tokens[row], 8)
        if row == 0:
            return self.label("row {} {}: itself only, {}", position(0), token, value("causal", "weights", 0, 0),
                              size=size, color=INK)
        return self.label("row {} {}: keys {} to {}", position(row), token, position(0), position(row), size=size,
                          color=INK)

