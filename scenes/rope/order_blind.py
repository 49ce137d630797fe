"""Scene 1 of the rope lecture: self-attention as built so far cannot tell the order of its tokens.

The scaled scores of the sentence as a token × token heat map (numbers in the cells while they are
legible, else colours), then beside it those of the sentence backwards, last token first (each token
keeps its embedding): the same numbers, each moved with its two tokens. One pair boxed in both, the
query's strongest other key: one number, two places. Then the weights, the same way. Without
positions attention reads a bag of tokens: shuffle them and its numbers shuffle with them.
"""

from __future__ import annotations

import numpy as np
from manim import (
    DOWN,
    FadeIn,
    SurroundingRectangle,
    TransformFromCopy,
    VGroup,
)

from attention_math import self_attention
from attention_math.heat import Extremes
from scenes.base import READING_PACE, ExplainerScene
from scenes.kit.palette import HIGHLIGHT
from scenes.kit.twins import TwinBoard, show_scores, to_weights, twin_board

__all__ = ["OrderBlind"]

SIDES = (("trace", "extremes", "in order"), ("backwards", "backwards_extremes", "backwards"))
"""Each grid's source, the source of its colour scale's ends, and its title: left, then right."""


class OrderBlind(ExplainerScene):
    """The scores of a sentence and of the sentence backwards: the same numbers, moved with their tokens."""

    reading_pace = READING_PACE

    board: TwinBoard  # what the beats draw on (the geometry tests look at it)

    def construct(self) -> None:
        one = self.scenario.heads[0] if self.scenario.w_out is not None else self.scenario
        backwards = self_attention(one.embeddings[::-1], one.w_query, one.w_key, one.w_value,
                                   scaled=self.scenario.scaled)
        precision = self.scenario.precision
        self.add_source("backwards", backwards, precision)
        self.add_source("extremes", Extremes(self.trace), precision)
        self.add_source("backwards_extremes", Extremes(backwards), precision)
        self.header("Attention does not see the order", "query", "key", "scale")
        board = self.board = self._board()
        self._in_order(board)
        self._backwards(board)
        self._one_pair(board)
        self._weights(board)

    # -- layout -------------------------------------------------------------------------------------------
    def _board(self) -> TwinBoard:
        n = self.scenario.n_tokens
        board = twin_board(self, SIDES, self.scenario.tokens[::-1])
        if board.fit.numbers:  # each cell's number in its query's row and key's column, in its own grid
            self.rows("query", board.grids[0])
            self.columns("key", board.grids[0])
            # backwards, row r is token n − 1 − r: its numbers are that token's (a query's, a key's)
            back = board.grids[1]
            self.rows("query", {n - 1 - r: mob for r, mob in back.row_anchors().items()}, *back.band_region())
            self.columns("key", {n - 1 - c: mob for c, mob in back.column_anchors().items()}, *back.band_region())
        return board

    @property
    def _pair(self) -> tuple[int, int]:
        """The query and the key it weighs most other than itself (the first of a tie)."""
        q = self.scenario.query
        weights = np.asarray(self.trace.weights[q], dtype=float).copy()
        weights[q] = -np.inf
        return q, int(np.argmax(weights))

    # -- the beats ---------------------------------------------------------------------------------------
    def _show(self, board: TwinBoard, side: int) -> list[object]:
        """Side ``side``'s grid filled with its scaled scores, its numbers, title and legend."""
        grid = board.grids[side]
        show_scores(self, board, side)
        notes = [FadeIn(board.notes[side])] if len(board.notes[side]) else []
        return [FadeIn(grid.brackets, grid.row_labels, grid.column_labels, board.titles[side], board.legends[side]),
                *notes]

    def _in_order(self, board: TwinBoard) -> None:
        grid = board.grids[0]
        cells = [square for row in grid.squares for square in row]
        self.beat("Self-attention as built so far: the scaled scores of the sentence, every query against every key.",
                  *self._show(board, 0), FadeIn(VGroup(*cells)),
                  FadeIn(board.numbers[0], shift=DOWN * 0.1), run_time=1.5, wait=1.5)

    def _backwards(self, board: TwinBoard) -> None:
        """The sentence backwards: each cell (i, j) moves to (n − 1 − i, n − 1 − j), its number with it."""
        n = self.scenario.n_tokens
        left, right = board.grids
        shown = self._show(board, 1)
        moves = [TransformFromCopy(left.squares[i][j], right.squares[n - 1 - i][n - 1 - j])
                 for i in range(n) for j in range(n)]
        if board.fit.numbers:
            moves += [TransformFromCopy(board.numbers[0][i][j], board.numbers[1][n - 1 - i][n - 1 - j])
                      for i in range(n) for j in range(n)]
        said = ("Now read it backwards, last token first, each token with its own embedding: the same numbers, "
                "each moved with its two tokens." if board.fit.numbers else
                "Now read it backwards, last token first, each token with its own embedding: the same colours, "
                "each moved with its two tokens.")
        self.beat(said, *shown, *moves, run_time=2.5, wait=1.2)

    def _one_pair(self, board: TwinBoard) -> None:
        """The query and its strongest other key, boxed in both grids: one number, two places."""
        n, tokens = self.scenario.n_tokens, self.scenario.tokens
        q, k = self._pair
        left, right = board.grids
        board.boxes = VGroup(
            SurroundingRectangle(left.squares[q][k], color=HIGHLIGHT, buff=0.02, stroke_width=3),
            SurroundingRectangle(right.squares[n - 1 - q][n - 1 - k], color=HIGHLIGHT, buff=0.02, stroke_width=3),
        )
        if board.fit.numbers:
            said = (f"{self.quote(q, 'query')} against {self.quote(k, 'key')}: "
                    f"{self.fmt('trace', 'scaled_scores', q, k)} in order, "
                    f"{self.fmt('backwards', 'scaled_scores', n - 1 - q, n - 1 - k)} backwards.")
        else:
            said = f"'{tokens[q]}' against '{tokens[k]}': the same colour in both, in its new place."
        self.beat(said, FadeIn(board.boxes), run_time=1.2, wait=1.5)

    def _weights(self, board: TwinBoard) -> None:
        """Both grids turn to their weights: the same weights, shuffled with the tokens."""
        changes = to_weights(self, board)
        (q, k), n = self._pair, self.scenario.n_tokens
        weight = ""
        if board.fit.numbers:
            weight = (f": {self.quote(q, 'query')} gives {self.quote(k, 'key')} {self.fmt('trace', 'weights', q, k)} "
                      "in order, "
                      f"{self.fmt('backwards', 'weights', n - 1 - q, n - 1 - k)} backwards")
        self.beat(f"The weights too{weight}. Without positions, attention reads a bag of tokens: shuffle them, and "
                  "its numbers shuffle with them.", *changes, run_time=1.5, wait=3.0)
