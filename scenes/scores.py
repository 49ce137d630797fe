"""Scene 3: the query asks every key — q_i · k_j, term by term, for every key."""

from __future__ import annotations

from manim import DOWN, LEFT, RIGHT, UP, FadeIn, FadeOut, ReplacementTransform, TransformFromCopy, VGroup

from scenes.base import ExplainerScene
from scenes.common import DIM, KEY, MUTED, QUERY, WEIGHT, text

__all__ = ["Scores"]


class Scores(ExplainerScene):
    """q_i against every key: the products appear beside each key row and collapse to a score."""

    def construct(self) -> None:
        scenario, step = self.scenario, self.step
        q = step.index
        d_k = scenario.d_k
        labels = scenario.tokens

        # -- keys on the left, the queries beside them -----------------------------------------
        keys = self.grid("trace", "keys", row_labels=labels, color=KEY)
        queries = self.grid("trace", "queries", row_labels=labels, color=QUERY)
        keys_title = text("K", color=KEY, size=30)
        queries_title = text("Q", color=QUERY, size=30)
        self.header(3, "Scores: the query asks every key", "query", "key")
        VGroup(keys, queries).arrange(RIGHT, buff=0.8).to_edge(LEFT, buff=0.6).shift(DOWN * 0.4)
        keys_title.next_to(keys.brackets, UP, buff=0.2)
        queries_title.next_to(queries.brackets, UP, buff=0.2)
        self.add(keys, keys_title, queries, queries_title)

        # -- q_i lifts out of Q --------------------------------------------------------------
        query_row = VGroup(*(self.number("step", "query", m, color=QUERY) for m in range(d_k)))
        query_row.arrange(RIGHT, buff=0.35)
        query_label = text(f"q{q + 1} ({labels[q]}) =", color=QUERY)
        query_line = VGroup(query_label, query_row).arrange(RIGHT, buff=0.3)
        query_line.to_edge(UP, buff=0.5).align_to(keys.row_labels, LEFT)
        self.beat(
            f"q{q + 1}, the query of '{labels[q]}', lifts out of Q.",
            TransformFromCopy(queries.row(q), query_row),
            FadeIn(query_label),
            queries.animate.set_opacity(DIM),
            queries_title.animate.set_opacity(DIM),
        )
        self.play(FadeOut(queries), FadeOut(queries_title))

        # -- for each key: the products, then the score ----------------------------------------
        scores = []
        for j in range(scenario.n_tokens):
            terms = []
            for m in range(d_k):
                terms.append(self.number("step", "products", j, m, color=WEIGHT))
                if m < d_k - 1:
                    terms.append(text("+", color=MUTED))
            expression = VGroup(*terms).arrange(RIGHT, buff=0.18)
            expression.next_to(keys.brackets, RIGHT, buff=0.6).set_y(keys.cells[j][0].get_y())
            score = self.number("step", "scores", j, color=WEIGHT)
            score.next_to(keys.brackets, RIGHT, buff=0.6).set_y(keys.cells[j][0].get_y())
            scores.append(score)
            row_box = keys.row_box(j, color=KEY)
            if j == 0:
                factors = " + ".join(
                    f"{self.fmt('step', 'query', m)}×{self.fmt('trace', 'keys', j, m)}"
                    for m in range(d_k)
                )
                caption = f"q{q + 1} · k1 = {factors} = {score.text}."
                self.beat(caption, FadeIn(row_box), TransformFromCopy(VGroup(query_row, keys.row(j)), expression))
                self.beat(f"The products add up to the score {score.text}.", ReplacementTransform(expression, score), FadeOut(row_box))
            else:
                self.play(FadeIn(row_box), TransformFromCopy(VGroup(query_row, keys.row(j)), expression), run_time=0.6)
                self.play(ReplacementTransform(expression, score), FadeOut(row_box), run_time=0.5)

        # -- the scores as one row -------------------------------------------------------------
        row = VGroup(*scores)
        target = row.copy().arrange(RIGHT, buff=0.4).next_to(keys, DOWN, buff=0.6).align_to(keys.row_labels, LEFT)
        title = text(f"scores for '{labels[q]}'", color=WEIGHT).next_to(target, DOWN, buff=0.2, aligned_edge=LEFT)
        self.beat(
            f"Higher score, better match between what '{labels[q]}' asks and what each token offers.",
            row.animate.become(target),
            FadeIn(title, shift=UP * 0.2),
        )
