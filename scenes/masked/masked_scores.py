"""Scene 2 of the masked lecture: the mask — scores above the diagonal become −∞, each row's softmax runs
over its past only.

The scaled scores Q Kᵀ/√d_k fill a token × token grid (their numbers in the cells while they are
legible, else colours). The mask's staircase covers the keys after each query: those cells turn grey
and their scores become "−∞" (written as such: one "−∞" across the region when the cells carry no
numbers). Beside the grid, the row the lecture follows, a line per key: its scores, −∞ for the later
keys; exp(s − m), where exp(−∞) = 0; divided by their sum, the weights of the past alone. Then every
row the same way: zeros above the diagonal, each row's sum beside it, 1.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from manim import (
    DL,
    DOWN,
    LEFT,
    RIGHT,
    UP,
    Animation,
    FadeIn,
    FadeTransform,
    LaggedStart,
    MathTex,
    MoveToTarget,
    ReplacementTransform,
    TransformMatchingTex,
    VGroup,
    VMobject,
)

from attention_math.heat import Extremes
from scenes.base import READING_PACE, ExplainerScene
from scenes.facts import TokenPart, position, value
from scenes.kit.board import colours_only, token_grid
from scenes.kit.heatmap import (
    HeatFit,
    HeatGrid,
    cell_numbers,
    fill_cells,
    fit_heat,
    key_column,
    legend,
    roomier_rows,
    row_box,
    text_height,
    text_width,
    widest,
)
from scenes.kit.layout import BOTTOM, HALF_WIDTH, TOP
from scenes.kit.mask import block_centre, free_blocks, future_cells, future_mask, grey_future, mask_titles
from scenes.kit.palette import INK, MUTED, QUERY, WEIGHT
from scenes.kit.text import SMALLEST_SIZE, shorten_token, text

__all__ = ["MaskedScores"]

TABLE_MOST = 26  # the largest type of the row's table and the row sums
GAPS = (0.55, 0.4)  # between the grid and its row sums, and between those and the table: roomy, then tight
COLUMN_GAP = 0.3  # between the table's columns
TITLE_BAND = 0.7  # under the grid: its title and legend
MARK_SIZE = 40  # the "−∞" written across a colour-only mask
MARKS = {"scaled_scores": "{}", "weights": "masked: weight {}"}  # what it says, of the scores, then of the weights
STEPS = {  # the row's table: a column per step, (source, field, of a trace's row?, head)
    "score": ("causal", "scaled_scores", True, "score"),
    "exps": ("causal_step", "exps", False, "exp(s − m)"),
    "weights": ("causal", "weights", True, "weight"),
}


@dataclass
class _Board:
    """The grid, how it is drawn, and where the row sums and the row's table stand beside it."""

    fit: HeatFit
    grid: HeatGrid
    titles: list[MathTex]  # the scaled scores, masked, their softmax
    size: float  # the type of the row sums and the table
    sums_left: float
    table_left: float
    numbers: VGroup = field(default_factory=VGroup)
    legend: VGroup = field(default_factory=VGroup)
    marks: VGroup = field(default_factory=VGroup)  # colour only: "−∞" written once on the mask (then its weight)
    table: VGroup = field(default_factory=VGroup)  # the row's: heads, keys, a column per step, its title, m, Σ
    columns: dict[str, VGroup] = field(default_factory=dict)  # the table's columns by step
    heads: dict[str, VMobject] = field(default_factory=dict)
    note: VGroup = field(default_factory=VGroup)  # "colours only", where the cells carry no numbers
    offset: float = 0.0  # how far right of its place the grid stands until the row's table comes beside it

    @property
    def steps(self) -> tuple[str, ...]:
        """The table's columns: the row's scores too where the cells carry no numbers."""
        return tuple(STEPS) if not self.fit.numbers else ("exps", "weights")


def _band(size: float) -> float:
    """Under the grid: its title and legend; under the table two lines (m, and Σ)."""
    return max(TITLE_BAND, 0.16 + 2 * text_height(size) + 0.12 + 0.08)


class MaskedScores(ExplainerScene):
    """Scaled scores, −∞ above the diagonal, exp(−∞) = 0, the softmax over the past; every row sums to 1."""

    draws_decoder = True  # a decoder's head (--model smollm2): its own scores and weights

    reading_pace = READING_PACE

    board: _Board  # what the beats draw on (the geometry tests look at it)

    def construct(self) -> None:
        causal = self.scenario.trace(causal=True)
        self.add_source("causal", causal, self.scenario.precision)
        self.add_source("causal_step", causal.query_step(self.earlier_query), self.scenario.precision)
        self.add_source("extremes", Extremes(self.trace), self.scenario.precision)
        self.add_source("causal_extremes", Extremes(causal), self.scenario.precision)
        self.header("The mask: {} above the diagonal", "query", "key", "scale",
                    parts=(value("causal", "scaled_scores", 0, self.scenario.n_tokens - 1),))
        board = self.board = self._board()
        self._centre(board)
        self._scores(board)
        self._mask(board)
        self._row(board)
        self._exps(board)
        self._weights(board)
        self._every_row(board)

    # -- layout ---------------------------------------------------------------------------------
    def _texts(self, source: str, name: str, *index: int) -> list[str]:
        n = self.scenario.n_tokens
        return [self.text_for(value(source, name, *index, j)) for j in range(n)]

    def _sums_width(self, size: float) -> float:
        n = self.scenario.n_tokens
        sums = [self.text_for(value("causal", "weights", i, reduce="sum")) for i in range(n)]
        return widest(["Σ ≈ "], size) + widest(sums, size)

    def _column_texts(self, step: str) -> list[str]:
        source, name, of_row, _ = STEPS[step]
        return self._texts(source, name, *([self.earlier_query] if of_row else []))

    def _table_width(self, size: float, steps: tuple[str, ...]) -> float:
        """The row's table at type ``size``: "k16", then its columns under their heads."""
        width = widest([f"k{self.scenario.n_tokens}"], size)
        return width + sum(COLUMN_GAP + max(widest(self._column_texts(step), size), widest([STEPS[step][3]], size))
                           for step in steps)

    def _fit(self) -> tuple[HeatFit, float, tuple[float, float]]:
        """The grid's drawing, the type beside it and the gaps: numbers in the cells while they are legible
        beside the sums and the table at their largest type; else colours, those at the floor."""
        n, tokens, q = self.scenario.n_tokens, self.scenario.tokens, self.earlier_query
        most = max(10, len(shorten_token(tokens[q], 10**9)))
        cells = [t for source, name in (("trace", "scaled_scores"), ("causal", "scaled_scores"), ("causal", "weights"))
                 for i in range(n) for t in self._texts(source, name, i)]
        width = 0.0
        for size, gaps, steps in ((TABLE_MOST, GAPS, ("exps", "weights")), (SMALLEST_SIZE, GAPS, tuple(STEPS)),
                                  (SMALLEST_SIZE, (0.3, 0.3), tuple(STEPS))):
            width = 2 * HALF_WIDTH - sum(gaps) - self._sums_width(size) - self._table_width(size, steps)
            fit = fit_heat(tokens, widest(cells, 26), width=width, height=TOP - BOTTOM - _band(size) - 0.45,
                           fill=min(width, 8.0), upright_most=most, query=q, noted=True)
            if fit.numbers == (steps != tuple(STEPS)):  # with numbers in the cells, the row's scores are there
                return fit, min(fit.size, size), gaps
        return roomier_rows(fit, tokens, width), float(SMALLEST_SIZE), gaps

    def _board(self) -> _Board:
        tokens = self.scenario.tokens
        fit, size, gaps = self._fit()
        grid = token_grid(self, fit, tokens)
        steps = ("exps", "weights") if fit.numbers else tuple(STEPS)
        total = grid.width + sum(gaps) + self._sums_width(size) + self._table_width(size, steps)
        # 0.45 above the column labels: the rounding note under the header, the table's title
        middle = (TOP - 0.45 + BOTTOM + _band(size)) / 2
        grid.shift(RIGHT * (-total / 2 - grid.get_left()[0]) + UP * (middle - grid.get_y()))
        titles = mask_titles(grid, scaled=self.trace.scaled)
        if fit.numbers:  # each cell's number in its query's row and key's column (colour only: the one −∞
            self.rows("query", grid)  # written across the mask stands for every hidden cell, in none's row)
            self.columns("key", grid)
        sums_left = grid.get_right()[0] + gaps[0]
        return _Board(fit, grid, titles, size, sums_left, sums_left + self._sums_width(size) + gaps[1])

    def _centre(self, board: _Board) -> None:
        """Until the row's table comes beside it, the grid (and what goes with it) stands in the middle."""
        grid = board.grid
        board.offset = -float(VGroup(grid, *board.titles).get_center()[0])
        grid.shift(RIGHT * board.offset)
        for title in board.titles:
            title.shift(RIGHT * board.offset)

    def _to_its_place(self, board: _Board, title: MathTex) -> Animation:
        """The grid and what goes with it move left, to make room for the row's table; the titles not on
        screen move at once."""
        for other in board.titles:
            if other is not title:
                other.shift(LEFT * board.offset)
        shown = VGroup(board.grid, board.numbers, title, board.legend, self.mask, board.marks, board.note)
        return shown.animate.shift(LEFT * board.offset).build()

    def _numbers(self, board: _Board, source: str, name: str, ranges: str) -> VGroup:
        if not board.fit.numbers:
            return VGroup()
        return cell_numbers(self, board.grid, source, name, ranges, size=board.fit.size)

    def _legend(self, ranges: str, name: str, hue: str, title: MathTex) -> VGroup:
        return legend(self, ranges, name, hue).next_to(title, RIGHT, buff=0.35)

    # -- the beats ------------------------------------------------------------------------------
    def _scores(self, board: _Board) -> None:
        grid = board.grid
        fill_cells(self, grid, "trace", "scaled_scores", "extremes", INK, animate=False)
        board.numbers = self._numbers(board, "trace", "scaled_scores", "extremes")
        board.legend = self._legend("extremes", "scaled_scores", INK, board.titles[0])
        cells = [square for row in grid.squares for square in row]
        board.note = VGroup() if board.fit.numbers else VGroup(colours_only(board.grid))
        note = [FadeIn(board.note)] if len(board.note) else []
        self.beat(
            "The scaled scores: every query against every key, a row per query.",
            FadeIn(grid.brackets, grid.row_labels, grid.column_labels, board.titles[0], board.legend),
            LaggedStart(*(FadeIn(c) for c in cells), lag_ratio=0.2 / len(cells)),
            *(FadeIn(row, shift=DOWN * 0.1) for row in board.numbers), *note, run_time=2, wait=1,
        )

    def _mask(self, board: _Board) -> None:
        """The staircase covers the keys after each query: their cells grey, their scores −∞."""
        n, grid = self.scenario.n_tokens, board.grid
        hidden = future_cells(grid)
        old = board.numbers
        board.numbers = self._numbers(board, "causal", "scaled_scores", "extremes")
        changes: list[Any] = grey_future(grid)
        if board.fit.numbers:
            changes += [FadeTransform(old[i][j], board.numbers[i][j]) for i, j in hidden]
            changes += [ReplacementTransform(old[i][j], board.numbers[i][j]) for i in range(n) for j in range(i + 1)]
        else:
            board.marks = VGroup(self._mark(board, "scaled_scores", hidden[0]))
            changes.append(FadeIn(board.marks))
        self.mask = future_mask(grid, opacity=0.0)
        self.beat(
            "A query may not read the keys after it: above the diagonal every score becomes "
            f"{self.fmt('causal', 'scaled_scores', *hidden[0])}.",
            FadeIn(self.mask, shift=DL * 0.4), TransformMatchingTex(board.titles[0], board.titles[1]), *changes,
            board.legend.animate.next_to(board.titles[1], RIGHT, buff=0.35), run_time=2, wait=1.5,
        )

    def _mark(self, board: _Board, name: str, cell: tuple[int, int]) -> VMobject:
        """Colour only: the first hidden cell's number (−∞, later its weight, named: "masked: weight 0.00"), written
        once and large in the middle of the block of hidden cells where the weight's is largest, away from the row the
        table follows (its box's line would strike the digits through: :func:`~scenes.kit.mask.free_blocks`). Where no
        block holds the weight's legibly (a few tokens at 4 decimals), −∞ takes its own best block and the weight's
        stands over the mask's corner, above the column labels."""
        n, grid = self.scenario.n_tokens, board.grid

        def wide(field_name: str) -> float:  # the mark's width at size 1
            return text_width(MARKS[field_name].format(self.text_for(value("causal", field_name, *cell))), 26) / 26

        def fitting(block: tuple[int, int], width: float) -> tuple[float, int]:
            rows, columns = block[1] - block[0] + 1, n - 1 - block[1]
            room_w, room_h = columns * grid.cell_w - 0.2, rows * grid.cell_h - 0.2
            return min(MARK_SIZE, room_w / width, room_h / (text_height(26) / 26)), rows * columns

        blocks = free_blocks(n, avoid=self.earlier_query) or free_blocks(n)
        block = max(blocks, key=lambda b: fitting(b, wide("weights")))
        inside = fitting(block, wide("weights"))[0] >= SMALLEST_SIZE
        if not inside:
            block = max(blocks, key=lambda b: fitting(b, wide("scaled_scores")))
        size = fitting(block, wide(name))[0]
        mark = self.label(MARKS[name], value("causal", name, *cell), size=max(float(SMALLEST_SIZE), size), color=INK)
        if inside or name != "weights":
            return mark.move_to(block_centre(grid, block))
        return mark.next_to(grid.column_labels, UP, buff=0.15).align_to(grid.brackets, RIGHT)

    def _table(self, board: _Board) -> None:
        """The row's table beside the row sums' place: its title, the keys, a column per step under its head."""
        r, tokens, size = self.earlier_query, self.scenario.tokens, board.size
        heads = [text(STEPS[step][3], size=size, color=WEIGHT if step == "weights" else MUTED) for step in board.steps]
        columns = [(STEPS[step][0], STEPS[step][1], r if STEPS[step][2] else None, WEIGHT if step == "weights" else INK)
                   for step in board.steps]
        table = key_column(self, board.grid, columns, left=board.table_left, heads=heads, size=size,
                           names=[f"{STEPS[step][0]}.{STEPS[step][1]}" for step in board.steps])
        board.columns = {step: VGroup(*table[2 + k]) for k, step in enumerate(board.steps)}
        board.heads = dict(zip(board.steps, heads, strict=True))
        room = HALF_WIDTH - board.table_left
        limit = next((most for most in range(20, 4, -1)
                      if text_width(f"row {r + 1} {shorten_token(tokens[r], most)}", size) <= room), 4)
        title = self.label("row {} {}", position(r), TokenPart(tokens[r], limit), size=size, color=QUERY)
        table.add(title.next_to(table[0], UP, buff=0.2).align_to((board.table_left, 0, 0), LEFT))
        board.table = table

    def _row(self, board: _Board) -> None:
        """The row followed, boxed, its keys listed beside the grid; where the cells carry no numbers, its
        scores there too, −∞ for the keys after its token."""
        r, q, tokens = self.earlier_query, self.scenario.query, self.scenario.tokens
        self._table(board)
        table = board.table
        self.box = row_box(board.grid, r, color=QUERY)
        scores = [FadeIn(board.heads["score"], board.columns["score"], shift=RIGHT * 0.2)] \
            if "score" in board.columns else []
        if r == q:
            row = self.quote(r, "query")
            later = self.fmt("causal", "scaled_scores", r, self.scenario.n_tokens - 1)
            said = f"Take the row of {row}: the keys after it score {later}."
        else:
            said = f"'{tokens[q]}' is the last token: the mask hides none of its keys. Take the row of '{tokens[r]}'."
        self.box.shift(LEFT * board.offset)  # where the row comes to stand
        self.beat(said, self._to_its_place(board, board.titles[1]), FadeIn(self.box), FadeIn(table[-1], table[1]),
                  *scores, run_time=1.8, wait=1.2)

    def _exps(self, board: _Board) -> None:
        """exp(s − m) for each key: 0 for a key after the row's token (from the row's cells, where they carry
        numbers)."""
        n, r = self.scenario.n_tokens, self.earlier_query
        exps, later = board.columns["exps"], n - 1
        m = self.label("m = {}", value("causal_step", "max_score"), size=board.size, color=MUTED)
        m.next_to(exps, DOWN, buff=0.22).align_to(exps, RIGHT)
        board.table.add(m)
        self.m_line = m
        sources = [board.numbers[r][j] for j in range(n)] if board.fit.numbers else list(board.columns["score"])
        said = (f"Subtract its largest score, {self.fmt('causal_step', 'max_score')}, and exponentiate: "
                f"exp({self.fmt('causal', 'scaled_scores', r, later)}) = {self.fmt('causal_step', 'exps', later)}.")
        self.beat(said, FadeIn(board.heads["exps"], m),
                  LaggedStart(*(FadeTransform(source.copy(), e) for source, e in zip(sources, exps, strict=True)),
                              lag_ratio=0.08), run_time=1.8, wait=1.2)

    def _weights(self, board: _Board) -> None:
        """Divided by their sum: the weights of the past, the later keys' 0."""
        n, exps = self.scenario.n_tokens, board.columns["exps"]
        sign = self.equals(value("causal_step", "exp_sum"), [value("causal_step", "exps", j) for j in range(n)])
        total = VGroup(text(f"Σ {sign}", size=board.size, color=MUTED),
                       self.number("causal_step", "exp_sum", size=board.size, color=INK)).arrange(RIGHT, buff=0.12)
        total.next_to(self.m_line, DOWN, buff=0.1).align_to(exps, RIGHT)
        board.table.add(total)
        said = f"Divided by their sum, {self.fmt('causal_step', 'exp_sum')}: the softmax runs over the past only."
        self.beat(said + self.said_rounded(), FadeIn(total), FadeIn(board.heads["weights"]),
                  LaggedStart(*(FadeIn(w, shift=RIGHT * 0.1) for w in board.columns["weights"]), lag_ratio=0.08),
                  *self._rounding(), run_time=1.6, wait=1.2)

    def _rounding(self) -> list[Animation]:
        """The rounding note, the first time a ``≈`` is written."""
        if not self.rounding_shows or getattr(self, "_noted", False):
            return []
        self._noted = True
        return [FadeIn(self.rounding_note())]

    def _every_row(self, board: _Board) -> None:
        """Every row the same way: the masked weights, zeros above the diagonal, each row's sum 1."""
        n, grid = self.scenario.n_tokens, board.grid
        # the future cells (key after query) stay grey
        fills = fill_cells(self, grid, "causal", "weights", "causal_extremes", WEIGHT, animate=True,
                           only=lambda i, j: j <= i)
        old, board.numbers = board.numbers, self._numbers(board, "causal", "weights", "causal_extremes")
        old_legend, board.legend = board.legend, self._legend("causal_extremes", "weights", WEIGHT, board.titles[2])
        sums = VGroup()
        for i in range(n):
            sign = self.equals(value("causal", "weights", i, reduce="sum"),
                               [value("causal", "weights", i, j) for j in range(n)])
            line = VGroup(text(f"Σ {sign}", size=board.size, color=MUTED),
                          self.number("causal", "weights", i, reduce="sum", size=board.size, color=WEIGHT))
            sums.add(line.arrange(RIGHT, buff=0.12).move_to((0, grid.row_y(i), 0)))
        sums.align_to((board.sums_left, 0, 0), LEFT)
        self.rows("query", grid, sums)  # each row's sum level with its row
        head = text("row sum", size=board.size, color=MUTED).next_to(sums, UP, buff=0.16).align_to(sums, RIGHT)
        if len(board.table):
            head.align_to(board.table[0], DOWN)  # on the line of the table's heads
        marks = board.marks
        if len(marks):  # colour only: the −∞ written on the mask becomes its weight
            board.marks = VGroup(self._mark(board, "weights", future_cells(grid)[0]))
        self.formula.generate_target()
        self.formula.target.light("query", "key", "scale", "softmax")
        self.beat(
            "Every row the same way: zero weight above the diagonal, and each row still adds up to one."
            + self.said_rounded(),
            *fills, *([FadeTransform(old, board.numbers)] if board.fit.numbers else []),
            *([FadeTransform(marks, board.marks)] if len(marks) else []),
            TransformMatchingTex(board.titles[1], board.titles[2]), FadeTransform(old_legend, board.legend),
            MoveToTarget(self.formula), FadeIn(head),
            LaggedStart(*(FadeIn(s, shift=LEFT * 0.2) for s in sums), lag_ratio=0.05),
            *self._rounding(), run_time=2.2, wait=2.0,
        )
