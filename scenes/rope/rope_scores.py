"""The rope lecture's last scene: the sentence's scores and weights without positions and with RoPE.

The scaled scores of the sentence as two token × token heat maps side by side (numbers in the cells
while they are legible, else colours): without positions, and with RoPE (every query and key turned
by its position, pair i by position × θ_i, θ_i = base^(−2i/d_k)). On the diagonal nothing changes: a
query and a key at one position turn by one angle. Then the weights: the query's row boxed in both,
where it looks most without positions and with them. The last frame sums it up: the RoPE map beside
the rule (R_m q)·(R_n k) = q·R_(n−m) k, the score a function of m − n alone.
"""

from __future__ import annotations

import numpy as np
from manim import (
    DOWN,
    LEFT,
    RIGHT,
    UP,
    FadeIn,
    FadeOut,
    LaggedStart,
    MathTex,
    SurroundingRectangle,
    UpdateFromAlphaFunc,
    VGroup,
)

from attention_math import rope_attention
from attention_math.heat import Extremes
from scenes.base import READING_PACE
from scenes.facts import TokenPart
from scenes.kit.heatmap import row_box
from scenes.kit.layout import BOTTOM, HALF_WIDTH, TOP
from scenes.kit.palette import HIGHLIGHT, INK, MUTED
from scenes.kit.text import SMALLEST_SIZE, text
from scenes.kit.twins import BAND, GAP, TwinBoard, show_scores, to_weights, twin_board
from scenes.rope.turning import Turning

__all__ = ["RopeScores"]

SIDES = (("trace", "extremes", "without positions"), ("rope", "rope_extremes", "with RoPE"))
"""Each grid's source, the source of its colour scale's ends, and its title: left, then right."""
RULE_SIZE = 40  # the summary's formula
LINE_SIZE = 24  # the summary's lines of words


class RopeScores(Turning):
    """The sentence's scores and weights without positions and with RoPE, side by side; the rule of RoPE."""

    reading_pace = READING_PACE

    board: TwinBoard  # what the beats draw on (the geometry tests look at it)
    summary: VGroup  # the last frame's formula and lines

    def construct(self) -> None:
        one = self.scenario.heads[0] if self.scenario.w_out is not None else self.scenario
        rope = rope_attention(one.embeddings, one.w_query, one.w_key, one.w_value, scaled=self.scenario.scaled)
        precision = self.scenario.precision
        self.add_source("rope", rope, precision)
        self.add_source("extremes", Extremes(self.trace), precision)
        self.add_source("rope_extremes", Extremes(rope), precision)  # type: ignore[arg-type]
        self.header("Scores with and without RoPE", "query", "key", "scale")
        board = self.board = self._board()
        self._scores(board)
        self._diagonal(board)
        self._weights(board)
        self._summary(board)

    # -- layout -------------------------------------------------------------------------------------------
    def _board(self) -> TwinBoard:
        board = twin_board(self, SIDES, self.scenario.tokens)
        if board.fit.numbers:  # each cell's number in its query's row and key's column, in its own grid
            for grid in board.grids:
                self.rows("query", grid)
                self.columns("key", grid)
        return board

    def _top(self, source: str) -> int:
        """The key the query weighs most in ``source`` (the first of a tie)."""
        obj, _ = self.sources[source]
        return int(np.argmax(np.asarray(obj.weights[self.scenario.query], dtype=float)))

    # -- the beats ---------------------------------------------------------------------------------------
    def _scores(self, board: TwinBoard) -> None:
        shown: list[object] = []
        for side, grid in enumerate(board.grids):
            show_scores(self, board, side)
            cells = [square for row in grid.squares for square in row]
            shown += [FadeIn(grid.brackets, grid.row_labels, grid.column_labels, board.titles[side],
                             board.legends[side], board.notes[side]),
                      FadeIn(VGroup(*cells)),
                      FadeIn(board.numbers[side], shift=DOWN * 0.1)]
        self.beat("The scaled scores of the sentence without positions, and with RoPE: every query and key turned "
                  "by its position before the dot product.", *shown, run_time=1.6, wait=1.8)

    def _diagonal(self, board: TwinBoard) -> None:
        """The query's own cell in both grids: a query and a key at one position turn by one angle."""
        n, q = self.scenario.n_tokens, self.scenario.query
        board.boxes = VGroup(*(VGroup(*(SurroundingRectangle(grid.squares[i][i], color=HIGHLIGHT, buff=0.02,
                                                             stroke_width=3) for i in range(n)))
                               for grid in board.grids))
        said = "On the diagonal nothing changes: a query and a key at one position turn by the same angle"
        if board.fit.numbers:
            said += (f" ({self.quote(q, 'query')} with itself: {self.fmt('trace', 'scaled_scores', q, q)} and "
                     f"{self.fmt('rope', 'scaled_scores', q, q)}).")
        else:
            said += "."
        self.beat(said + " Elsewhere the farther apart, the more the two have turned.", FadeIn(board.boxes),
                  run_time=1.2, wait=2.6)

    def _weights(self, board: TwinBoard) -> None:
        """Both grids turn to their weights; the query's row boxed; where it looks most, each way."""
        q, tokens = self.scenario.query, self.scenario.tokens
        changes = to_weights(self, board)
        rows = VGroup(*(row_box(grid, q, color=HIGHLIGHT) for grid in board.grids))
        plain, turned = self._top("trace"), self._top("rope")
        if board.fit.numbers:
            said = (f"After the softmax, {self.quote(q, 'query')} looks most at {self.quote(plain, 'key')} "
                    f"({self.fmt('trace', 'weights', q, plain)}) without positions, and at "
                    f"{self.quote(turned, 'key')} ({self.fmt('rope', 'weights', q, turned)}) with RoPE.")
        else:
            said = (f"After the softmax, '{tokens[q]}' looks most at '{tokens[plain]}' without positions, and at "
                    f"'{tokens[turned]}' with RoPE.")
        # the many numbers' cross-fade kept short, the beat's length kept: the still frames that follow cost little
        self.beat(said, *changes, FadeOut(board.boxes), FadeIn(rows), run_time=1.6, wait=2.6)
        board.boxes = rows

    def _rule(self) -> VGroup:
        """The summary: RoPE's rule, what follows from it, and what the query's row showed."""
        q, tokens = self.scenario.query, self.scenario.tokens
        size = LINE_SIZE if self.board.fit.numbers else SMALLEST_SIZE
        rule = MathTex("(R_m\\,q)\\cdot(R_n\\,k) = q\\cdot R_{n-m}\\,k", font_size=RULE_SIZE, color=INK)
        lines = [
            MathTex("\\text{at position } m\\text{, pair } i \\text{ turns by } m\\,\\theta_i", font_size=size * 1.6,
                    color=INK),
            text("a score depends on m − n only", size=size, color=INK),
            text("lengths are kept; values are not turned", size=size, color=MUTED),
            self.label("'{}' looks most at '{}', with RoPE at '{}'", TokenPart(tokens[q], 8),
                       TokenPart(tokens[self._top("trace")], 8), TokenPart(tokens[self._top("rope")], 8),
                       size=size, color=INK),
        ]
        return VGroup(rule, *lines).arrange(DOWN, buff=0.32, aligned_edge=LEFT)

    def _summary(self, board: TwinBoard) -> None:
        """The map without positions goes; the RoPE map moves left, the rule beside it."""
        left, right = board.grids
        gone = VGroup(left, board.numbers[0], board.titles[0], board.legends[0], board.notes[0], board.boxes[0])
        moving = VGroup(right, board.numbers[1], board.titles[1], board.legends[1], board.notes[1], board.boxes[1])
        shift = LEFT * (right.get_x() - left.get_x())
        summary = self.summary = self._rule()
        room = HALF_WIDTH - (moving.get_right()[0] + shift[0]) - GAP
        if summary.width > room:  # never below the font floor
            floor = SMALLEST_SIZE / (LINE_SIZE if board.fit.numbers else SMALLEST_SIZE)
            summary.scale(max(room / summary.width, floor))
        summary.move_to((0, (TOP + BOTTOM + BAND) / 2, 0)).align_to((HALF_WIDTH, 0, 0), RIGHT)
        summary[0].shift(UP * 0.1)
        self.beat("RoPE turns each query and key by its position, so a score depends only on how far apart its two "
                  "tokens stand.", FadeOut(gone), _slide(moving, shift),
                  LaggedStart(*(FadeIn(line, shift=UP * 0.1) for line in summary), lag_ratio=0.3),
                  run_time=1.6, wait=3.1)  # the move kept short, the beat's length kept (as in _weights)


def _slide(group: VGroup, by: np.ndarray) -> UpdateFromAlphaFunc:
    """``group`` moved by ``by``, a step a frame: cheaper than ``group.animate.shift``, which morphs every point of
    a copy of its n² numbers' glyphs into place."""
    done = [0.0]  # how much of the move is made

    def step(mobject: VGroup, alpha: float) -> None:
        mobject.shift(by * (alpha - done[0]))
        done[0] = alpha

    return UpdateFromAlphaFunc(group, step)  # type: ignore[arg-type]  # manim types it one-argument; it passes alpha
