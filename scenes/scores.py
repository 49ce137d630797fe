"""Scene 3: the query asks every key — q_i · k_j term by term, one score per key."""

from __future__ import annotations

from collections.abc import Sequence

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
    VGroup,
    VMobject,
)

from scenes.base import ExplainerScene
from scenes.common import DIM, INK, KEY, MUTED, QUERY, Brackets, NumberGrid, shorten_token, text

__all__ = ["Scores", "fly_into", "token_labels"]

SAFE_WIDTH, TOP, BOTTOM = 13.4, 2.65, -3.1  # the free area below the header, above the subtitles


def token_labels(tokens: Sequence[str], width: float, *, size: float = 26, color: str = MUTED) -> VGroup:
    """One label per token, all in one type size, each no wider than ``width``.

    The largest size from ``size`` down to 20 at which every token fits; at 20, long tokens
    are shortened further."""
    for font_size in (size, 22, 20):
        labels = VGroup(*(text(shorten_token(token), size=font_size, color=color) for token in tokens))
        if max(label.width for label in labels) <= width:
            return labels
    for k, token in enumerate(tokens):
        for limit in range(9, 2, -1):
            if labels[k].width <= width:
                break
            labels[k] = text(shorten_token(token, limit), size=20, color=color)
    return labels


class Scores(ExplainerScene):
    """q_i against every key: the products appear beside each key row and collapse to a score."""

    def construct(self) -> None:
        step, tokens = self.step, self.scenario.tokens
        i, n, d_k = step.index, self.scenario.n_tokens, self.scenario.d_k
        name, whole = shorten_token(tokens[i]), tokens[i]  # on screen, and in captions
        self.header(3, "Scores: the query asks every key", "query", "key")

        # -- build the whole board once: K, Q beside it, the query above, products and scores
        keys = NumberGrid(
            [[self.number("trace", "keys", j, m, color=KEY) for m in range(d_k)] for j in range(n)],
            row_labels=tokens, color=KEY, h_buff=0.22,
        )
        queries = NumberGrid(
            [[self.number("trace", "queries", j, m, color=QUERY) for m in range(d_k)] for j in range(n)],
            color=QUERY, h_buff=0.22,
        )
        query = VGroup(*(self.number("step", "query", m, color=QUERY) for m in range(d_k)))
        products = [VGroup(*(self.number("step", "products", j, m) for m in range(d_k))) for j in range(n)]
        scores = VGroup(*(self.number("step", "scores", j) for j in range(n)))
        rows_y = [keys.cells[j][0].get_y() for j in range(n)]

        # columns of the products line up under the entries of the query
        start = keys.brackets.get_right()[0] + 0.8
        cell = max(mob.width for mob in [*query, *(p for row in products for p in row)])
        gap = 0.6
        rights = [start + cell + m * (cell + gap) for m in range(d_k)]
        pluses, equals = [], VGroup()
        for j, row in enumerate(products):
            for m, product in enumerate(row):
                product.move_to([rights[m], rows_y[j], 0], aligned_edge=RIGHT)
            pluses.append(VGroup(*(text("+", color=MUTED).move_to([r + gap / 2, rows_y[j], 0]) for r in rights[:-1])))
            equals.add(text("=", color=MUTED).move_to([rights[-1] + 0.4, rows_y[j], 0]))
            scores[j].move_to([rights[-1] + 0.75 + max(s.width for s in scores), rows_y[j], 0], aligned_edge=RIGHT)
        queries.shift([start - 0.1 - queries.get_left()[0], rows_y[0] - queries.cells[0][0].get_y(), 0])
        keys_title = text("K", size=30, color=KEY).next_to(keys.brackets, UP, buff=0.2)
        queries_title = text("Q", size=30, color=QUERY).next_to(queries.brackets, UP, buff=0.2)
        for m, entry in enumerate(query):
            entry.move_to([rights[m], rows_y[0] + 1.3, 0], aligned_edge=RIGHT)
        query_brackets = Brackets(query, color=QUERY)
        query_label = text(f"q{i + 1} ({name})", size=26, color=QUERY).next_to(query_brackets, LEFT, buff=0.3)
        query_line = VGroup(query_label, query_brackets, query)

        # the first dot product written out on one line, below the keys
        pairs = [
            VGroup(self.number("step", "query", m, color=QUERY), text("×", color=MUTED),
                   self.number("trace", "keys", 0, m, color=KEY)).arrange(RIGHT, buff=0.08)
            for m in range(d_k)
        ]
        working = [text(f"q{i + 1} · k1 =", color=INK)]
        for m, pair in enumerate(pairs):
            working += [pair] if m == 0 else [text("+", color=MUTED), pair]
        working_score = self.number("step", "scores", 0)
        working_line = VGroup(*working, text("=", color=MUTED), working_score).arrange(RIGHT, buff=0.2)

        board = VGroup(keys, keys_title, queries, queries_title, query_line, *products, *pluses, equals, scores)
        working_line.next_to(board, DOWN, buff=0.6).set_x(board.get_x())
        everything = VGroup(board, working_line)
        scale = min(1.25, SAFE_WIDTH / everything.width, (TOP - BOTTOM) / everything.height)
        everything.scale(scale).move_to([0, (TOP + BOTTOM) / 2, 0])

        # -- q_i lifts out of Q; K stays on the left with its token labels
        self.add(keys, keys_title, queries, queries_title)
        others_in_q = VGroup(*(queries.row(j) for j in range(n) if j != i))
        self.play(others_in_q.animate.set_opacity(DIM), queries.brackets.animate.set_stroke(opacity=DIM), run_time=0.6)
        self.beat(
            f"q{i + 1}, the query of '{whole}', lifts out of Q; the keys K stay.",
            *(ReplacementTransform(q.copy(), entry) for q, entry in zip(queries.row(i), query, strict=True)),
            FadeIn(query_label, query_brackets),
            run_time=1.5, wait=1.3,
        )
        self.play(FadeOut(queries, queries_title), run_time=0.6)

        # -- the first key, term by term
        key_box = keys.row_box(0, color=KEY)
        self.play(
            FadeIn(key_box),
            *(ReplacementTransform(query[m].copy(), pair[0]) for m, pair in enumerate(pairs)),
            *(ReplacementTransform(keys.cells[0][m].copy(), pair[2]) for m, pair in enumerate(pairs)),
            FadeIn(VGroup(*working[:1], *(pair[1] for pair in pairs), *working[2::2])),
            run_time=1.8,
        )
        self.play(
            *(fly_into(products[0][m], pair) for m, pair in enumerate(pairs)),
            FadeIn(pluses[0]), run_time=1.2,
        )
        factors = " + ".join(f"{self.fmt('step', 'query', m)}×{self.fmt('trace', 'keys', 0, m)}" for m in range(d_k))
        self.beat(
            f"q{i + 1} · k1 = {factors} = {self.fmt('step', 'scores', 0)}.",
            fly_into(scores[0], products[0], pluses[0]),
            FadeIn(equals[0], working_line[-2], working_score),
            VGroup(products[0], pluses[0]).animate.set_opacity(DIM),
            run_time=1.2, wait=2.0,
        )

        # -- every other key, quicker
        others = range(1, n)
        if others:
            self.play(
                FadeOut(working_line, key_box),
                LaggedStart(*(AnimationGroup(
                    *(fly_into(products[j][m], query[m], keys.cells[j][m]) for m in range(d_k)),
                    FadeIn(pluses[j])) for j in others), lag_ratio=0.25),
                run_time=min(2.5, 0.8 + 0.3 * len(others)),
            )
            self.beat(
                "The same for every other key: one score each.",
                LaggedStart(*(fly_into(scores[j], products[j], pluses[j]) for j in others), lag_ratio=0.2),
                FadeIn(VGroup(*(equals[j] for j in others))),
                VGroup(*(VGroup(products[j], pluses[j]) for j in others)).animate.set_opacity(DIM),
                run_time=min(2.5, 1.0 + 0.2 * len(others)), wait=1.2,
            )
        else:
            self.play(FadeOut(working_line, key_box), run_time=0.6)

        # -- the scores as one row, labelled by token
        row = VGroup(*(s.copy().scale(30 / 26 / scale) for s in scores))
        pitch = min(max(s.width for s in row) + 0.7, SAFE_WIDTH / n)
        for j, score in enumerate(row):
            score.move_to([(j - (n - 1) / 2) * pitch, 0.4, 0])
        labels = token_labels(tokens, pitch - 0.15)
        for label, score in zip(labels, row, strict=True):
            label.move_to([score.get_x(), 1.1, 0])
        title = text(f"scores for '{name}'", size=28, color=INK).next_to(row, DOWN, buff=0.6)
        self.play(FadeOut(keys, keys_title, query_line, *products, *pluses, equals), run_time=0.7)
        self.beat(
            f"Higher score, better match between what '{whole}' asks and what each token offers.",
            *(score.animate.become(target) for score, target in zip(scores, row, strict=True)),
            FadeIn(labels, shift=DOWN * 0.2), FadeIn(title, shift=UP * 0.2),
            run_time=1.5, wait=2.5,
        )


def fly_into(target: VMobject, *sources: VMobject) -> AnimationGroup:
    """Copies of ``sources`` fly into ``target``'s place and fade out as ``target`` fades in."""
    flights = [FadeOut(source.copy(), target_position=target, scale=0.6) for source in sources]
    return AnimationGroup(AnimationGroup(*flights), FadeIn(target), lag_ratio=0.5)
