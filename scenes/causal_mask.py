"""Scene 7: coming next, the causal mask — a token may attend only to itself and earlier tokens."""

from __future__ import annotations

from dataclasses import dataclass

from manim import (
    DL,
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
    TransformFromCopy,
    TransformMatchingTex,
    VGroup,
)

from scenes.base import ExplainerScene
from scenes.kit.formula import formula_title
from scenes.kit.heatmap import TokenGrid, fit_lattice, focus_row, heat_colors, row_box, row_sums, vector_line
from scenes.kit.layout import BOTTOM, TOP
from scenes.kit.palette import CONTEXT, FAINT, HIGHLIGHT, MUTED, WEIGHT
from scenes.kit.text import text

__all__ = ["CausalMask"]

SUMS = 1.5  # room for the "row sum" column right of the grid
BELOW = 1.15  # room for the two z lines under the comparison row


@dataclass
class _Board:
    grid: TokenGrid
    titles: list[MathTex]  # scores, masked scores, their softmax
    size: float


class CausalMask(ExplainerScene):
    """The scaled scores, masked above the diagonal, softmaxed: rows change, z changes."""

    def construct(self) -> None:
        self.add_source("causal", self.scenario.trace(causal=True), self.scenario.precision)
        self.header("Coming next: the causal mask", "query", "key", "scale")
        board = self._board()
        scores = self._scores(board)
        mask = self._mask_future(board, scores)
        weights = self._softmax(board, scores, mask)
        self._rows_compared(board, weights)

    @property
    def _earlier(self) -> int:
        """The token whose row the mask changes: the scene's second query, or the one before the last."""
        last = self.scenario.n_tokens - 1
        return self.second_query if self.second_query != last else max(last - 1, 0)

    def _board(self) -> _Board:
        tokens, n = self.scenario.tokens, self.scenario.n_tokens
        scores_tex = ["Q", "K^{\\top}", "/\\sqrt{d_k}"] if self.trace.scaled else ["Q", "K^{\\top}"]
        masked_tex = ["\\mathrm{mask}\\big(", *scores_tex, "\\big)"]
        titles = [formula_title(*scores_tex), formula_title(*masked_tex),
                  formula_title("\\mathrm{softmax}\\big(", *masked_tex, "\\big)")]
        title_h = max(t.height for t in titles) + 0.12
        fields = [("trace", "scaled_scores"), ("causal", "scaled_scores"), ("causal", "weights"), ("trace", "weights")]
        lattice = fit_lattice(
            self, tokens, lambda lat: lat.block_width(tokens, n, fields) + SUMS,
            height=(TOP - BOTTOM - title_h - 0.7 - BELOW) * n / (n + 1),
        )
        grid = TokenGrid(lattice, tokens, n, lattice.cell_width(fields), column_tokens=tokens)
        spare = (TOP - title_h - grid.height) - (BOTTOM + BELOW + grid.cell_h)
        grid.shift(RIGHT * (-(grid.width + SUMS) / 2 - grid.get_left()[0]))
        grid.shift(DOWN * (grid.get_top()[1] - TOP + title_h + spare / 2))
        for title in titles:
            title.next_to(grid, UP, buff=0.12).set_x(grid.cells.get_x())
        return _Board(grid, titles, max(lattice.size, 22))

    # -- the beats ------------------------------------------------------------------------------
    def _scores(self, board: _Board) -> VGroup:
        grid = board.grid
        scores = grid.numbers(self, "trace", "scaled_scores", WEIGHT)
        self.add(grid.cells)
        self.beat(
            "The scaled scores return: every query against every key.",
            FadeIn(board.titles[0], grid.brackets, grid.row_labels, grid.column_labels),
            LaggedStart(*(FadeIn(row, shift=DOWN * 0.1) for row in scores), lag_ratio=0.12), run_time=2, wait=1,
        )
        return scores

    def _mask_future(self, board: _Board, scores: VGroup) -> Polygon:
        """A mask slides over the keys after each query: their scores become −∞."""
        n, grid = self.scenario.n_tokens, board.grid
        mask = _mask(grid)
        hidden = [(i, j) for i in range(n) for j in range(i + 1, n)]
        minus_inf = {(i, j): self.number("causal", "scaled_scores", i, j).move_to(scores[i][j]) for i, j in hidden}
        self.beat(
            "A mask hides every key after the query: those scores become "
            f"{self.fmt('causal', 'scaled_scores', *hidden[0])}.",
            FadeIn(mask, shift=DL * 0.6), TransformMatchingTex(board.titles[0], board.titles[1]),
            *(FadeTransform(scores[i][j], minus_inf[i, j]) for i, j in hidden), run_time=2, wait=1.5,
        )
        for (i, j), mob in minus_inf.items():
            scores[i].submobjects[j] = mob
        return mask

    def _softmax(self, board: _Board, scores: VGroup, mask: Polygon) -> VGroup:
        """After the softmax the masked weights are 0, and each row still adds up to one."""
        weights, fills = heat_colors(self, board.grid, "causal")
        sums = row_sums(self, board.grid, "causal")
        self.formula.generate_target()
        self.formula.target.light("query", "key", "scale", "softmax")
        self.beat(
            "After the softmax they become zero weights, and each row still adds up to one.",
            FadeTransform(scores, weights), *fills, mask.animate.set_fill(opacity=FAINT),
            TransformMatchingTex(board.titles[1], board.titles[2]), MoveToTarget(self.formula),
            FadeIn(sums, shift=LEFT * 0.2), run_time=2, wait=1.5,
        )
        self.play(FadeOut(sums), run_time=0.5)
        return weights

    def _rows_compared(self, board: _Board, weights: VGroup) -> None:
        """The last token's row is unchanged; an earlier one's changes, and its z with it."""
        tokens, grid = self.scenario.tokens, board.grid
        last, earlier = self.scenario.n_tokens - 1, self._earlier
        causal_weights = self.sources["causal"][0].weights
        box = row_box(grid, last)
        before = self._unmasked_row(grid, last)
        self.beat(
            f"'{tokens[last]}' could already see every token before it: its row is unchanged.",
            *focus_row(grid, weights, causal_weights, last), FadeIn(box),
            TransformFromCopy(weights[last], before[1]), FadeIn(before[0]), run_time=2, wait=1.5,
        )
        after = self._unmasked_row(grid, earlier)
        box.generate_target().move_to(row_box(grid, earlier))
        self.beat(
            f"'{tokens[earlier]}' loses the tokens after it, so its weights change.",
            *focus_row(grid, weights, causal_weights, earlier), MoveToTarget(box),
            FadeTransform(before, after), run_time=1.5, wait=1.5,
        )
        z_lines = self._z_lines(earlier, grid, after, board.size)
        self.beat(
            "In text generation a token may only attend to itself and the tokens before it.",
            LaggedStart(*(FadeIn(line, shift=DOWN * 0.1) for line in z_lines), lag_ratio=0.4), run_time=2, wait=2,
        )

    def _unmasked_row(self, grid: TokenGrid, row: int) -> VGroup:
        """Row ``row`` of the unmasked weights, under the grid's columns, labelled "no mask"."""
        size = grid.size
        numbers = grid.place([[self.number("trace", "weights", row, j, size=size, color=WEIGHT)
                               for j in range(len(grid.squares))]])[0]
        numbers.shift(DOWN * (grid.cell_h * len(grid.squares) + 0.15))
        label = text("no mask", size=size, color=MUTED).next_to(grid.brackets, LEFT, buff=0.15)
        return VGroup(label.set_y(numbers.get_y()), numbers)

    def _z_lines(self, row: int, grid: TokenGrid, anchor: VGroup, size: float) -> VGroup:
        """z of the token without and with the mask, one line each, under the comparison row."""
        lines = VGroup()
        for caption, source in (("no mask", "trace"), ("masked", "causal")):
            vector = vector_line(self, "z", source, "context", row, size=size, color=CONTEXT)
            lines.add(VGroup(text(caption, size=size, color=MUTED), vector))
        lines[0].next_to(anchor, DOWN, buff=0.22)
        lines[1].next_to(lines[0], DOWN, buff=0.12)
        for name, line in lines:
            name.next_to(grid.brackets, LEFT, buff=0.15).set_y(line.get_y())
            line.align_to(grid.cells, LEFT)
        return lines


def _mask(grid: TokenGrid) -> Polygon:
    """A staircase over the cells above the diagonal."""
    n = len(grid.squares)
    half_w, half_h = grid.cell_w / 2, grid.cell_h / 2
    points = [
        grid.cell_center(0, n - 1) + RIGHT * half_w + UP * half_h,
        grid.cell_center(n - 2, n - 1) + RIGHT * half_w + DOWN * half_h,
    ]
    for i in range(n - 2, -1, -1):  # down the staircase, right to left
        points.append(grid.cell_center(i, i + 1) + LEFT * half_w + DOWN * half_h)
        points.append(grid.cell_center(i, i + 1) + LEFT * half_w + UP * half_h)
    return Polygon(*points, color=HIGHLIGHT, fill_color=HIGHLIGHT, fill_opacity=0.35, stroke_width=2)
