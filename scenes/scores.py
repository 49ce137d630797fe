"""Scene 3: the query asks every key — q_i · k_j term by term, one score per key."""

from __future__ import annotations

from dataclasses import dataclass

from manim import (
    DOWN,
    LEFT,
    RIGHT,
    UP,
    AnimationGroup,
    FadeIn,
    FadeOut,
    LaggedStart,
    ReplacementTransform,
    RoundedRectangle,
    Text,
    VGroup,
    VMobject,
)

from scenes.base import ExplainerScene
from scenes.facts import TokenPart, position, query_number
from scenes.kit.grids import Brackets, NumberGrid
from scenes.kit.layout import BOTTOM, SAFE_WIDTH, TOP
from scenes.kit.motion import fly_into
from scenes.kit.palette import DIM, INK, KEY, MUTED, QUERY
from scenes.kit.text import text, token_labels

__all__ = ["Scores"]


@dataclass
class _Board:
    """K on the left, Q beside it, q_i above, a row of products and a score per key."""

    keys: NumberGrid
    keys_title: Text
    queries: NumberGrid
    queries_title: Text
    query: VGroup  # the entries of q_i
    query_line: VGroup  # label, brackets, entries
    products: list[VGroup]
    pluses: list[VGroup]
    equals: VGroup
    scores: VGroup
    working: VGroup  # q_i · k_1 = a×b + c×d = s, below the keys
    pairs: list[VGroup]
    scale: float
    key_box: RoundedRectangle | None = None


class Scores(ExplainerScene):
    """q_i against every key: the products appear beside each key row and collapse to a score."""

    def construct(self) -> None:
        self.header("Scores: the query asks every key", "query", "key")
        board = self._board()
        self._lift_query(board)
        self._first_key(board)
        self._other_keys(board)
        self._score_row(board)

    # -- the board, built once ---------------------------------------------------------------
    def _board(self) -> _Board:
        n, d_k, tokens = self.scenario.n_tokens, self.scenario.d_k, self.scenario.tokens
        keys = NumberGrid([[self.number("trace", "keys", j, m, color=KEY) for m in range(d_k)] for j in range(n)],
                          row_labels=tokens, color=KEY, h_buff=0.22)
        queries = NumberGrid([[self.number("trace", "queries", j, m, color=QUERY) for m in range(d_k)]
                              for j in range(n)], color=QUERY, h_buff=0.22)
        query = VGroup(*(self.number("step", "query", m, color=QUERY) for m in range(d_k)))
        products = [VGroup(*(self.number("step", "products", j, m) for m in range(d_k))) for j in range(n)]
        scores = VGroup(*(self.number("step", "scores", j) for j in range(n)))
        rows_y = [keys.cells[j][0].get_y() for j in range(n)]
        # the columns of the products line up under the entries of the query
        start = keys.brackets.get_right()[0] + 0.8
        cell = max(mob.width for mob in [*query, *(p for row in products for p in row)])
        gap = 0.6
        rights = [start + cell + m * (cell + gap) for m in range(d_k)]
        pluses, equals = [], VGroup()
        for j, row in enumerate(products):
            for m, product in enumerate(row):
                product.move_to((rights[m], rows_y[j], 0), aligned_edge=RIGHT)
            pluses.append(VGroup(*(text("+", color=MUTED).move_to((r + gap / 2, rows_y[j], 0)) for r in rights[:-1])))
            equals.add(text("=", color=MUTED).move_to((rights[-1] + 0.4, rows_y[j], 0)))
            scores[j].move_to((rights[-1] + 0.75 + max(s.width for s in scores), rows_y[j], 0), aligned_edge=RIGHT)
        queries.shift((start - 0.1 - queries.get_left()[0], rows_y[0] - queries.cells[0][0].get_y(), 0))
        for m, entry in enumerate(query):
            entry.move_to((rights[m], rows_y[0] + 1.3, 0), aligned_edge=RIGHT)
        query_brackets = Brackets(query, color=QUERY)
        name = TokenPart(tokens[self.step.index])
        query_label = self.label("q{} ({})", query_number(), name, size=26, color=QUERY)
        query_label.next_to(query_brackets, LEFT, buff=0.3)
        working, pairs = self._working_line()
        keys_title = text("K", size=30, color=KEY).next_to(keys.brackets, UP, buff=0.2)
        queries_title = text("Q", size=30, color=QUERY).next_to(queries.brackets, UP, buff=0.2)
        board = _Board(keys, keys_title, queries, queries_title, query, VGroup(query_label, query_brackets, query),
                       products, pluses, equals, scores, working, pairs, 1.0)
        drawn = VGroup(keys, board.keys_title, queries, board.queries_title, board.query_line, *products, *pluses,
                       equals, scores)
        working.next_to(drawn, DOWN, buff=0.6).set_x(drawn.get_x())
        everything = VGroup(drawn, working)
        board.scale = min(1.25, SAFE_WIDTH / everything.width, (TOP - BOTTOM) / everything.height)
        everything.scale(board.scale).move_to((0, (TOP + BOTTOM) / 2, 0))
        return board

    def _working_line(self) -> tuple[VGroup, list[VGroup]]:
        """q_i · k_1 = q_1×k_11 + q_2×k_12 = s_1, the first dot product on one line."""
        pairs = [
            VGroup(self.number("step", "query", m, color=QUERY), text("×", color=MUTED),
                   self.number("trace", "keys", 0, m, color=KEY)).arrange(RIGHT, buff=0.08)
            for m in range(self.scenario.d_k)
        ]
        parts: list[VMobject] = [self.label("q{} · k{} =", query_number(), position(0))]
        for m, pair in enumerate(pairs):
            parts += [pair] if m == 0 else [text("+", color=MUTED), pair]
        line = VGroup(*parts, text("=", color=MUTED), self.number("step", "scores", 0)).arrange(RIGHT, buff=0.2)
        return line, pairs

    # -- the beats ------------------------------------------------------------------------------
    def _lift_query(self, board: _Board) -> None:
        n, i = self.scenario.n_tokens, self.step.index
        queries = board.queries
        self.add(board.keys, board.keys_title, queries, board.queries_title)
        others = VGroup(*(queries.row(j) for j in range(n) if j != i))
        self.play(others.animate.set_opacity(DIM), queries.brackets.animate.set_stroke(opacity=DIM), run_time=0.6)
        self.beat(
            f"q{self.cite(query_number())}, the query of '{self.scenario.query_token}', lifts out of Q; "
            "the keys K stay.",
            *(ReplacementTransform(q.copy(), entry) for q, entry in zip(queries.row(i), board.query, strict=True)),
            FadeIn(board.query_line[0], board.query_line[1]),
            run_time=1.5, wait=1.3,
        )
        self.play(FadeOut(queries, board.queries_title), run_time=0.6)

    def _first_key(self, board: _Board) -> None:
        d_k, working, pairs = self.scenario.d_k, board.working, board.pairs
        key_box = board.keys.row_box(0, color=KEY)
        board.key_box = key_box
        self.play(
            FadeIn(key_box),
            *(ReplacementTransform(board.query[m].copy(), pair[0]) for m, pair in enumerate(pairs)),
            *(ReplacementTransform(board.keys.cells[0][m].copy(), pair[2]) for m, pair in enumerate(pairs)),
            FadeIn(VGroup(working[0], *(pair[1] for pair in pairs), *working[2:-2:2])),
            run_time=1.8,
        )
        self.play(*(fly_into(board.products[0][m], pair) for m, pair in enumerate(pairs)), FadeIn(board.pluses[0]),
                  run_time=1.2)
        said = f"q{self.cite(query_number())} · k{self.cite(position(0))} = "  # cited in the order said
        said += " + ".join(f"{self.fmt('step', 'query', m)}×{self.fmt('trace', 'keys', 0, m)}" for m in range(d_k))
        self.beat(
            f"{said} = {self.fmt('step', 'scores', 0)}.",
            fly_into(board.scores[0], board.products[0], board.pluses[0]),
            FadeIn(board.equals[0], working[-2], working[-1]),
            VGroup(board.products[0], board.pluses[0]).animate.set_opacity(DIM),
            run_time=1.2, wait=2.0,
        )

    def _other_keys(self, board: _Board) -> None:
        n, d_k = self.scenario.n_tokens, self.scenario.d_k
        others = range(1, n)
        clear = FadeOut(board.working, *([board.key_box] if board.key_box else []))
        self.play(
            clear,
            LaggedStart(*(AnimationGroup(
                *(fly_into(board.products[j][m], board.query[m], board.keys.cells[j][m]) for m in range(d_k)),
                FadeIn(board.pluses[j])) for j in others), lag_ratio=0.25),
            run_time=min(2.5, 0.8 + 0.3 * len(others)),
        )
        self.beat(
            "The same for every other key: one score each.",
            LaggedStart(*(fly_into(board.scores[j], board.products[j], board.pluses[j]) for j in others),
                        lag_ratio=0.2),
            FadeIn(VGroup(*(board.equals[j] for j in others))),
            VGroup(*(VGroup(board.products[j], board.pluses[j]) for j in others)).animate.set_opacity(DIM),
            run_time=min(2.5, 1.0 + 0.2 * len(others)), wait=1.2,
        )

    def _score_row(self, board: _Board) -> None:
        """The scores as one row, labelled by token: the scene's summary."""
        n, tokens = self.scenario.n_tokens, self.scenario.tokens
        row = VGroup(*(s.copy().scale(30 / 26 / board.scale) for s in board.scores))
        pitch = min(max(s.width for s in row) + 0.7, SAFE_WIDTH / n)
        for j, score in enumerate(row):
            score.move_to(((j - (n - 1) / 2) * pitch, 0.4, 0))
        labels = token_labels(tokens, pitch - 0.15)
        for label, score in zip(labels, row, strict=True):
            label.move_to((score.get_x(), 1.1, 0))
        title = self.label("scores for '{}'", TokenPart(self.scenario.query_token), size=28, color=INK)
        title.next_to(row, DOWN, buff=0.6)
        self.play(FadeOut(board.keys, board.keys_title, board.query_line, *board.products, *board.pluses,
                          board.equals), run_time=0.7)
        self.beat(
            f"Higher score, better match between what '{self.scenario.query_token}' asks and what each token offers.",
            *(score.animate.become(target) for score, target in zip(board.scores, row, strict=True)),
            FadeIn(labels, shift=DOWN * 0.2), FadeIn(title, shift=UP * 0.2),
            run_time=1.5, wait=2.5,
        )
