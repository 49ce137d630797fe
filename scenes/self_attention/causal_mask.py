"""Scene 8: coming next, the causal mask — a token may attend only to itself and earlier tokens.

The scaled scores return on a token × token grid (numbers in the cells while they are legible,
else colours, columns numbered); a mask slides over the keys after each query, their scores
become −∞, and after the softmax their weights are 0. Beside the grid, one query's weights
without and with the mask, a line per key: the last token's row is unchanged, an earlier one's
changes, and its z with it.
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
    FadeOut,
    FadeTransform,
    LaggedStart,
    MathTex,
    MoveToTarget,
    Polygon,
    ReplacementTransform,
    TransformMatchingTex,
    VGroup,
)

from attention_math.heat import Extremes
from scenes.base import ExplainerScene
from scenes.facts import TokenPart, position, value
from scenes.kit.board import colours_only, token_grid
from scenes.kit.heatmap import (
    HeatFit,
    HeatGrid,
    Legend,
    cell_numbers,
    fill_cells,
    fit_heat,
    key_column,
    legend,
    roomier_rows,
    row_box,
    text_height,
    text_width,
    vector_line,
    vector_width,
    widest,
)
from scenes.kit.layout import BOTTOM, HALF_WIDTH, TOP
from scenes.kit.mask import block_centre, free_block, future_mask, mask_titles
from scenes.kit.palette import CONTEXT, FAINT, INK, MUTED, QUERY, WEIGHT
from scenes.kit.text import SMALLEST_SIZE, shorten_token, text

__all__ = ["CausalMask"]

TABLE_MOST = 26  # the largest type of the comparison
GAP = 0.8  # between the grid and the comparison beside it (a colour-only grid's: :data:`TIGHT_GAP`)
TIGHT_GAP = 0.55
Z_BUFF, Z_LINES = 0.12, 0.1  # under the grid's bracket; between the two lines z without and with the mask
TITLE_BAND = 0.7  # under the grid: its title and legend
MARK_SIZE = 40  # the type of the "−∞" written across a colour-only mask


@dataclass
class _Board:
    fit: HeatFit
    grid: HeatGrid
    titles: list[MathTex]  # scores, masked scores, their softmax
    right: float  # where the comparison beside the grid starts
    numbers: VGroup = field(default_factory=VGroup)
    legend: VGroup = field(default_factory=VGroup)
    marks: VGroup = field(default_factory=VGroup)  # colour only: "−∞" written once, on the mask (then its weight)
    mark_cell: tuple[int, int] = (0, 1)  # the hidden cell whose number the mark is


def _table_size(fit: HeatFit) -> float:
    """The comparison's type: the grid's, up to :data:`TABLE_MOST`; the floor beside a colour-only grid."""
    return min(fit.size, TABLE_MOST) if fit.numbers else SMALLEST_SIZE


def _band(table_size: float) -> float:
    """Under the grid: its title and legend; beside them the two lines of z (a size above the table's)."""
    z_size = min(table_size + 2, 26)
    return max(TITLE_BAND, Z_BUFF + 2 * text_height(z_size) + Z_LINES + 0.08)


class CausalMask(ExplainerScene):
    """The scaled scores, masked above the diagonal, softmaxed: rows change, z changes."""

    board: _Board  # what the beats draw on (the geometry tests look at it)

    def construct(self) -> None:
        causal = self.scenario.trace(causal=True)
        self.add_source("causal", causal, self.scenario.precision)
        self.add_source("extremes", Extremes(self.trace), self.scenario.precision)
        self.add_source("causal_extremes", Extremes(causal), self.scenario.precision)
        self.header("Coming next: the causal mask", "query", "key", "scale")
        board = self.board = self._board()
        self._scores(board)
        mask = self._mask_future(board)
        self._softmax(board, mask)
        self._z_changes(board, self._row_changed(board, self._row_unchanged(board)))

    # -- layout ---------------------------------------------------------------------------------
    def _comparison_width(self, size: float) -> float:
        """The comparison beside the grid at type ``size``: "k16", then the two columns under their heads."""
        n = self.scenario.n_tokens
        numbers = [self.text_for(value(source, "weights", i, j)) for source in ("trace", "causal")
                   for i in range(n) for j in range(n)]
        columns = [max(widest(numbers, size), widest([head], size)) for head in ("no mask", "masked")]
        return widest([f"k{n}"], size) + 0.3 + columns[0] + 0.3 + columns[1]

    def _fit(self) -> tuple[HeatFit, float]:
        """The grid's drawing and the gap after it: numbers in the cells while they are legible beside
        the comparison at its largest type; else colours, the comparison at the floor beside them."""
        n, tokens, q = self.scenario.n_tokens, self.scenario.tokens, self.scenario.query
        most = max(10, len(shorten_token(tokens[q], 10**9)))  # the query's column label whole, if it fits
        cells = [self.text_for(value(source, name, i, j)) for source, name in
                 (("trace", "scaled_scores"), ("causal", "scaled_scores"), ("causal", "weights"))
                 for i in range(n) for j in range(n)]
        for size, gap in ((TABLE_MOST, GAP), (SMALLEST_SIZE, TIGHT_GAP)):
            width = 2 * HALF_WIDTH - gap - self._comparison_width(size)
            # 0.4 left over the heads of the comparison for its title
            fit = fit_heat(tokens, widest(cells, 26), width=width, height=TOP - BOTTOM - _band(size) - 0.4,
                           fill=min(width, 8.0), upright_most=most, query=q, noted=True)
            if fit.numbers:
                return fit, gap
        return roomier_rows(fit, tokens, width), gap

    def _board(self) -> _Board:
        tokens = self.scenario.tokens
        fit, gap = self._fit()
        grid = token_grid(self, fit, tokens)
        total = grid.width + gap + self._comparison_width(_table_size(fit))
        band = _band(_table_size(fit))
        grid.shift(RIGHT * (-total / 2 - grid.get_left()[0]) + UP * ((TOP + BOTTOM + band) / 2 - 0.2 - grid.get_y()))
        titles = mask_titles(grid, scaled=self.trace.scaled)
        if fit.numbers:  # each cell's number in its query's row and key's column (colour only: the one −∞
            self.rows("query", grid)  # written across the mask stands for every hidden cell, in none's row)
            self.columns("key", grid)
        return _Board(fit, grid, titles, grid.get_right()[0] + gap)

    def _numbers(self, board: _Board, source: str, name: str, ranges: str) -> VGroup:
        if not board.fit.numbers:
            return VGroup()
        return cell_numbers(self, board.grid, source, name, ranges, size=board.fit.size)

    def _legend(self, board: _Board, ranges: str, name: str, hue: str, title: MathTex) -> Legend:
        return legend(self, ranges, name, hue).next_to(title, RIGHT, buff=0.35)

    # -- the beats ------------------------------------------------------------------------------
    def _scores(self, board: _Board) -> None:
        grid = board.grid
        fill_cells(self, grid, "trace", "scaled_scores", "extremes", INK, animate=False)
        board.numbers = self._numbers(board, "trace", "scaled_scores", "extremes")
        board.legend = self._legend(board, "extremes", "scaled_scores", INK, board.titles[0])
        cells = [square for row in grid.squares for square in row]
        self.beat(
            "The scaled scores return: every query against every key.",
            FadeIn(grid.brackets, grid.row_labels, grid.column_labels, board.titles[0], board.legend),
            LaggedStart(*(FadeIn(c) for c in cells), lag_ratio=0.2 / len(cells)),
            *(FadeIn(row, shift=DOWN * 0.1) for row in board.numbers), *self._note(board), run_time=2, wait=1,
        )

    def _note(self, board: _Board) -> list[Animation]:
        if board.fit.numbers:
            return []
        return [FadeIn(colours_only(board.grid))]

    def _mask_future(self, board: _Board) -> Polygon:
        """A mask slides over the keys after each query: their scores become −∞, one region of one colour."""
        n, grid = self.scenario.n_tokens, board.grid
        mask = future_mask(grid)
        hidden = [(i, j) for i in range(n) for j in range(i + 1, n)]
        old = board.numbers
        board.numbers = self._numbers(board, "causal", "scaled_scores", "extremes")
        if not board.fit.numbers:
            board.marks = self._minus_infinity(board, hidden[0])
        changes: list[Any] = [grid.squares[i][j].animate.set_fill(opacity=0) for i, j in hidden]  # one colour
        if board.fit.numbers:
            changes += [FadeTransform(old[i][j], board.numbers[i][j]) for i, j in hidden]
            changes += [ReplacementTransform(old[i][j], board.numbers[i][j]) for i in range(n) for j in range(i + 1)]
        self.beat(
            "A mask hides every key after the query: those scores become "
            f"{self.fmt('causal', 'scaled_scores', *hidden[0])}.",
            FadeIn(mask, shift=DL * 0.6), TransformMatchingTex(board.titles[0], board.titles[1]), *changes,
            board.legend.animate.next_to(board.titles[1], RIGHT, buff=0.35),
            *([] if board.fit.numbers else [FadeIn(board.marks)]), run_time=2, wait=1.5,
        )
        return mask

    def _minus_infinity(self, board: _Board, cell: tuple[int, int]) -> VGroup:
        """Colour only: "−∞" written once for the whole mask (the first hidden cell's number), large, in the
        middle of the largest rectangle of hidden cells (:func:`free_block`)."""
        board.mark_cell = cell
        sign = self.number("causal", "scaled_scores", *cell, size=self._mark_size(board), color=INK)
        return VGroup(sign.move_to(block_centre(board.grid)))

    def _mark_size(self, board: _Board) -> float:
        """The mark's type: large, but within the rectangle it sits in (its widest text "0.00" or "−∞")."""
        rows, columns = free_block(self.scenario.n_tokens)
        room_w, room_h = columns * board.grid.cell_w - 0.2, rows * board.grid.cell_h - 0.2
        wide = max(text_width(self.text_for(value("causal", name, *board.mark_cell)), 26) / 26
                   for name in ("scaled_scores", "weights"))
        return max(float(SMALLEST_SIZE), min(MARK_SIZE, room_w / wide, room_h / (text_height(26) / 26)))

    def _softmax(self, board: _Board, mask: Polygon) -> None:
        """After the softmax the masked weights are 0, and each row still adds up to one."""
        n, grid = self.scenario.n_tokens, board.grid
        fills = fill_cells(self, grid, "causal", "weights", "causal_extremes", WEIGHT, animate=True)
        old, board.numbers = board.numbers, self._numbers(board, "causal", "weights", "causal_extremes")
        old_legend = board.legend
        board.legend = self._legend(board, "causal_extremes", "weights", WEIGHT, board.titles[2])
        sums = VGroup()
        for i in range(n):
            sign = self.equals(value("causal", "weights", i, reduce="sum"),
                               [value("causal", "weights", i, j) for j in range(n)])
            size = _table_size(board.fit)
            line = VGroup(text(f"Σ {sign}", size=size, color=MUTED),
                          self.number("causal", "weights", i, reduce="sum", size=size, color=WEIGHT))
            sums.add(line.arrange(RIGHT, buff=0.12).move_to((0, grid.row_y(i), 0)))
        sums.align_to((board.right, 0, 0), LEFT)
        self.rows("query", board.grid, sums)  # each row's sum level with its row
        self.formula.generate_target()
        self.formula.target.light("query", "key", "scale", "softmax")
        marks = board.marks
        if len(marks):  # colour only: the −∞ written on the mask becomes its weight
            board.marks = VGroup(self.number("causal", "weights", *board.mark_cell, size=self._mark_size(board),
                                             color=INK).move_to(marks))
        self.beat(
            "After the softmax they become zero weights, and each row still adds up to one." + self.said_rounded(),
            *fills, *([FadeTransform(old, board.numbers)] if board.fit.numbers else []),
            *([FadeTransform(marks, board.marks)] if len(marks) else []),
            mask.animate.set_fill(opacity=FAINT), TransformMatchingTex(board.titles[1], board.titles[2]),
            FadeTransform(old_legend, board.legend), MoveToTarget(self.formula),
            LaggedStart(*(FadeIn(s, shift=LEFT * 0.2) for s in sums), lag_ratio=0.05),
            *([FadeIn(self.rounding_note())] if self.rounding_shows else []), run_time=2, wait=1.5,
        )
        self.play(FadeOut(sums), *([FadeOut(board.marks)] if len(board.marks) else []), run_time=0.5)

    def _comparison(self, board: _Board, row: int) -> VGroup:
        """Row ``row``'s weights without and with the mask, a line per key, beside the grid."""
        size = _table_size(board.fit)
        heads = [self.label("no mask", size=size, color=MUTED), self.label("masked", size=size, color=WEIGHT)]
        table = key_column(self, board.grid, [("trace", "weights", row, INK), ("causal", "weights", row, WEIGHT)],
                           left=board.right, heads=heads, size=size, names=("trace.weights", "causal.weights"))
        token, room = self.scenario.tokens[row], HALF_WIDTH - board.right
        limit = next((most for most in range(20, 4, -1)
                      if text_width(f"row {row + 1} {shorten_token(token, most)}", size) <= room), 4)
        title = self.label("row {} {}", position(row), TokenPart(token, limit), size=size, color=QUERY)
        title.next_to(table[0], UP, buff=0.2).align_to((board.right, 0, 0), LEFT)
        table.add(title)
        return table

    def _row_unchanged(self, board: _Board) -> tuple[VGroup, Any]:
        """The last token could already see every token before it: its row is unchanged."""
        last, grid = self.scenario.n_tokens - 1, board.grid
        box = row_box(grid, last)
        table = self._comparison(board, last)
        self.beat(f"'{self.scenario.tokens[last]}' could already see every token before it: its row is unchanged.",
                  FadeIn(box), FadeIn(table, shift=LEFT * 0.2), run_time=1.5, wait=1.5)
        return table, box

    def _row_changed(self, board: _Board, shown: tuple[VGroup, Any]) -> VGroup:
        """An earlier token loses the tokens after it, so its weights change."""
        earlier, (old, box) = self.earlier_query, shown
        table = self._comparison(board, earlier)
        box.generate_target().move_to(row_box(board.grid, earlier))
        self.beat(f"'{self.scenario.tokens[earlier]}' loses the tokens after it, so its weights change.",
                  MoveToTarget(box), FadeTransform(old, table), run_time=1.5, wait=1.5)
        return table

    def _z_size(self, board: _Board, room: float) -> float | None:
        """The largest type (up to a size above the table's) at which both lines of z fit in ``room``."""
        row = self.earlier_query
        for size in (26, 24, 22, SMALLEST_SIZE):
            wide = max(text_width(caption, size) + 0.2 + vector_width(self, "z", source, "context", row, size)
                       for caption, source in (("no mask", "trace"), ("masked", "causal")))
            if size <= _table_size(board.fit) + 2 and wide <= room:
                return size
        return None

    def _z_changes(self, board: _Board, table: VGroup) -> None:
        """z of that token without and with the mask, in the band under the comparison.

        Beside the grid's title and legend; where they are too wide for the lines at their type and
        the cells carry their numbers, the legend makes room (the numbers say what it said).
        """
        row, lines = self.earlier_query, VGroup()
        size = self._z_size(board, HALF_WIDTH - board.legend.get_right()[0] - 0.3)
        free = self._z_size(board, HALF_WIDTH - board.titles[2].get_right()[0] - 0.3)
        drop = board.fit.numbers and free is not None and (size is None or free > size)
        size = (free if drop else size) or SMALLEST_SIZE
        for caption, source, color in (("no mask", "trace", INK), ("masked", "causal", CONTEXT)):
            vector = vector_line(self, "z", source, "context", row, size=size, color=color)
            lines.add(VGroup(text(caption, size=size, color=MUTED), vector).arrange(RIGHT, buff=0.2))
        lines.arrange(DOWN, buff=Z_LINES, aligned_edge=RIGHT)
        lines.next_to(board.grid.brackets, DOWN, buff=Z_BUFF).align_to((HALF_WIDTH, 0, 0), RIGHT)
        clear = (board.titles[2] if drop else board.legend).get_right()[0] + 0.3
        lines.shift(RIGHT * max(0.0, clear - lines.get_left()[0]))
        self.beat("In text generation a token may only attend to itself and the tokens before it.",
                  *([FadeOut(board.legend)] if drop else []),
                  LaggedStart(*(FadeIn(line, shift=UP * 0.1) for line in lines), lag_ratio=0.4), run_time=2, wait=2)

