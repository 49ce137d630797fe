"""Scene 1: raw dot products fail — both "it"s tie between "dog" and "ball" until W_K reshapes the keys.

Always the ``raw-dot-product`` preset, whatever the chosen scenario: its point holds for any sentence.
"""

from __future__ import annotations

import numpy as np
from manim import (
    DOWN,
    LEFT,
    RIGHT,
    UP,
    Arrow,
    Axes,
    Create,
    CurvedArrow,
    FadeIn,
    FadeOut,
    GrowArrow,
    Indicate,
    LaggedStart,
    MathTex,
    ReplacementTransform,
    SurroundingRectangle,
    TransformFromCopy,
    VGroup,
)

import attention_math
from scenes.base import ExplainerScene
from scenes.common import DIM, EMBEDDING, HIGHLIGHT, INK, KEY, MUTED, QUERY, VALUE, WEIGHT, TokenBox, text

__all__ = ["RawDotProducts"]

SENTENCE = ("The", "dog", "chased", "the", "ball", ",", "but", "it", "couldn't", "catch", "it", ".")
FIRST_IT, SECOND_IT, DOG_WORD, BALL_WORD = 7, 10, 1, 4  # places in SENTENCE
DOG, BALL = 1, 2  # rows of the preset (its tokens are it, dog, ball)


class RawDotProducts(ExplainerScene):
    """it · dog and it · ball tie on raw embeddings; projecting the keys with W_K breaks the tie."""

    def construct(self) -> None:
        scenario = attention_math.preset("raw-dot-product")
        identity = np.eye(scenario.d_in)
        raw = attention_math.self_attention(scenario.embeddings, identity, identity, identity)
        projected = scenario.trace()
        q = scenario.query
        sources = {"raw": raw, "raw_step": raw.query_step(q), "projected": projected,
                   "projected_step": projected.query_step(q)}
        for name, source in sources.items():
            self.add_source(name, source, scenario.precision)
        tokens = scenario.tokens
        header = self.header(1, "Raw dot products fail", "query", "key")

        # -- the sentence and its two "it"s ------------------------------------------------------
        boxes = VGroup(*(TokenBox(word) for word in SENTENCE)).arrange(RIGHT, buff=0.14).move_to(UP * 0.2)
        first = CurvedArrow(boxes[FIRST_IT].get_top(), boxes[DOG_WORD].get_top(), angle=0.9, color=WEIGHT)
        second = CurvedArrow(boxes[SECOND_IT].get_bottom(), boxes[BALL_WORD].get_bottom(), angle=-0.7, color=WEIGHT)
        self.play(LaggedStart(*(FadeIn(b, shift=UP * 0.15) for b in boxes), lag_ratio=0.08), run_time=1.2)
        self.beat("The first 'it' is the dog; the second is the ball.", Create(first), Create(second), wait=1.2)

        # -- one embedding for both "it"s --------------------------------------------------------
        x_grid = self.grid("raw", "embeddings", row_labels=tokens, color=EMBEDDING)
        x_grid.shift(RIGHT * (-6.5 - x_grid.get_left()[0]) + UP * (1.7 - x_grid.get_top()[1]))
        x_title = MathTex("X", color=EMBEDDING, font_size=34).next_to(x_grid.brackets, UP, buff=0.12)
        sentence_target = boxes.copy().scale(0.8).move_to(UP * 2.5)
        row_end = x_grid.brackets.get_right() * RIGHT + x_grid.cells[q][0].get_y() * UP + RIGHT * 0.15
        links = VGroup(*(Arrow(sentence_target[i].get_bottom(), row_end, buff=0.08, color=EMBEDDING, stroke_width=3)
                         for i in (FIRST_IT, SECOND_IT)))
        self.play(FadeOut(first), FadeOut(second), boxes.animate.become(sentence_target), run_time=0.8)
        self.beat("But both 'it's share one embedding.", FadeIn(x_grid, shift=RIGHT * 0.3), FadeIn(x_title),
                  Create(links), wait=1.0)
        self.play(FadeOut(links), boxes.animate.fade(1 - DIM), run_time=0.5)

        # -- raw dot products, term by term: a tie ------------------------------------------------
        raw_lines = [self._dot_line(x_grid, j, y) for j, y in ((DOG, -0.35), (BALL, -1.05))]
        for j, (label, factors, products, total) in zip((DOG, BALL), raw_lines, strict=True):
            to_products = [ReplacementTransform(factors[k], products[k]) for k in range(len(factors))]
            if j == DOG:
                terms = " + ".join(f"{self.fmt('raw', 'embeddings', q, m)}×{self.fmt('raw', 'keys', j, m)}"
                                   for m in range(scenario.d_in))
                self.beat(f"it · dog, term by term: {terms}.", FadeIn(label),
                          TransformFromCopy(VGroup(x_grid.row(q), x_grid.row(j)), factors), wait=0.6)
                sums = " + ".join(p.text for p in products[::2])
                self.beat(f"Three products: {sums}.", *to_products, run_time=1.2, wait=0.6)
                self.beat(f"They add up to it · dog = {total.text}.", ReplacementTransform(products, total),
                          run_time=0.9, wait=0.8)
            else:
                self.play(FadeIn(label), TransformFromCopy(VGroup(x_grid.row(q), x_grid.row(j)), factors))
                self.play(*to_products, run_time=0.7)
                tie = (self.fmt("raw", "scores", q, DOG), self.fmt("raw", "scores", q, BALL))
                self.beat(f"Raw dot products give a tie: {tie[0]} and {tie[1]}.",
                          ReplacementTransform(products, total), wait=0.3)
                self.play(Indicate(raw_lines[0][3], color=WEIGHT), Indicate(total, color=WEIGHT))

        # -- the keys as arrows in the plane of axes 1 and 2 ----------------------------------------
        unit = 2.05
        axes = Axes(x_range=[0, 1.2, 0.5], y_range=[0, 2.0, 0.5], x_length=1.2 * unit, y_length=2.0 * unit,
                    tips=False, axis_config={"color": MUTED, "stroke_width": 2})
        axes.shift(RIGHT * (3.3 - axes.c2p(0, 0)[0]) + UP * (-2.55 - axes.c2p(0, 0)[1]))
        axis_names = VGroup(text("dim 1", size=20, color=MUTED).next_to(axes.x_axis, DOWN, buff=0.15),
                            text("dim 2", size=20, color=MUTED).next_to(axes.y_axis, LEFT, buff=0.15))
        arrows = {j: self._arrow(axes, "raw", "keys", j, EMBEDDING) for j in range(3)}
        names = {j: text(tokens[j], size=22, color=EMBEDDING).next_to(arrows[j].get_end(), RIGHT, buff=0.1)
                 for j in range(3)}
        self.beat("Drawn in the plane of axes 1 and 2, 'it' sits halfway between 'dog' and 'ball'.",
                  Create(axes), FadeIn(axis_names), *(GrowArrow(a) for a in arrows.values()),
                  *(FadeIn(n) for n in names.values()), wait=0.6)

        # -- W_K stretches the keys ------------------------------------------------------------------
        w_key = self.grid("projected", "w_key", color=KEY)
        w_key.next_to(x_grid, RIGHT, buff=0.7).align_to(x_grid.brackets, UP)
        w_title = MathTex("W_K", color=KEY, font_size=34).next_to(w_key.brackets, UP, buff=0.12)
        self.play(FadeIn(VGroup(w_key, w_title), shift=LEFT * 1.5), run_time=0.9)
        key_rows = {j: VGroup(*(self.number("projected", "keys", j, m, color=KEY) for m in range(scenario.d_in)))
                    for j in (DOG, BALL)}
        ghosts = VGroup(*(arrows[j].copy().set_opacity(DIM) for j in (DOG, BALL)))
        self.add(ghosts)
        moves, old_cells = [], []
        for j, row in key_rows.items():
            old_cells += x_grid.cells[j]
            for m, cell in enumerate(row):
                cell.align_to(x_grid.cells[j][m], RIGHT).set_y(x_grid.cells[j][m].get_y())
            new_arrow = self._arrow(axes, "projected", "keys", j, KEY)
            new_name = text(f"{tokens[j]} key", size=22, color=KEY).next_to(new_arrow.get_end(), RIGHT, buff=0.1)
            moves += [ReplacementTransform(x_grid.row(j), row), x_grid.row_labels[j].animate.set_color(KEY),
                      ReplacementTransform(arrows[j], new_arrow), ReplacementTransform(names[j], new_name)]
            arrows[j], names[j] = new_arrow, new_name
        dog_key = ", ".join(c.text for c in key_rows[DOG])
        ball_key = ", ".join(c.text for c in key_rows[BALL])
        self.beat(f"W_K = diag(1, 2, 1) acts on the keys only: dog → ({dog_key}), ball → ({ball_key}).",
                  *moves, Indicate(w_key.column(1), color=HIGHLIGHT), run_time=2.0, wait=1.0)
        x_grid.body.remove(*old_cells)

        # -- new products: 'it' now prefers 'ball' -----------------------------------------------------
        new_lines = [self._product_line(q, j, tokens[j], y) for j, y in ((DOG, -1.85), (BALL, -2.55))]
        sums = [" + ".join(p.text for p in line[1][::2]) for line in new_lines]
        self.beat(f"With the new keys: it · dog key = {sums[0]}, it · ball key = {sums[1]}.",
                  *(FadeIn(line[0]) for line in new_lines),
                  *(TransformFromCopy(key_rows[j][m], line[1][2 * m])
                    for j, line in zip((DOG, BALL), new_lines, strict=True) for m in range(scenario.d_in)),
                  *(FadeIn(line[1][k]) for line in new_lines for k in range(1, len(line[1]), 2)),
                  run_time=1.2, wait=1.2)
        winner = new_lines[int(projected.scores[q, BALL] > projected.scores[q, DOG])][2]
        glow = SurroundingRectangle(winner, color=HIGHLIGHT, buff=0.1, corner_radius=0.08)
        self.play(*(ReplacementTransform(line[1], line[2]) for line in new_lines), run_time=1.0)
        self.beat("After a learned projection of the keys, 'it' attends more to 'ball'.",
                  Create(glow), Indicate(winner, color=HIGHLIGHT), run_time=1.2, wait=1.3)

        # -- closing line -------------------------------------------------------------------------------
        closing = text("So we project every embedding into queries, keys and values.", size=30, color=INK,
                       t2c={"queries": QUERY, "keys": KEY, "values": VALUE})
        self.play(*(FadeOut(mob) for mob in self.mobjects if mob is not header), run_time=0.8)
        self.beat("So we project every embedding into queries, keys and values.", FadeIn(closing, shift=UP * 0.2),
                  wait=1.5)

    # -- helpers ------------------------------------------------------------------------------------
    def _dot_line(self, x_grid: VGroup, j: int, y: float) -> tuple[VGroup, VGroup, VGroup, VGroup]:
        """'it · token =', the factor pairs, their products (with pluses) and the raw score, on one line."""
        label = text(f"it · {x_grid.row_labels[j].text} =", color=EMBEDDING)
        pairs, products = [], []
        for m in range(3):
            a = self.number("raw", "embeddings", 0, m, color=EMBEDDING)
            b = self.number("raw", "keys", j, m, color=EMBEDDING)
            pairs.append(VGroup(a, text("×", color=MUTED), b).arrange(RIGHT, buff=0.08))
            products.append(self.number("raw_step", "products", j, m, color=WEIGHT))
        factors = _with_pluses(pairs, buff=0.22)
        line = VGroup(label, factors).arrange(RIGHT, buff=0.25)
        line.shift(RIGHT * (-6.5 - line.get_left()[0]) + UP * (y - line.get_y()))
        product_line = _with_pluses(products, buff=0.22).next_to(label, RIGHT, buff=0.25)
        total = self.number("raw", "scores", 0, j, color=WEIGHT).next_to(label, RIGHT, buff=0.25)
        return label, factors, product_line, total

    def _product_line(self, q: int, j: int, token: str, y: float) -> tuple[VGroup, VGroup, VGroup]:
        """'it · token key =', the projected products and the new score."""
        label = text(f"it · {token} key =", color=KEY, t2c={"it": EMBEDDING})
        products = _with_pluses([self.number("projected_step", "products", j, m, color=WEIGHT) for m in range(3)],
                                buff=0.22)
        VGroup(label, products).arrange(RIGHT, buff=0.25)
        VGroup(label, products).shift(RIGHT * (-6.5 - label.get_left()[0]) + UP * (y - label.get_y()))
        total = self.number("projected", "scores", q, j, color=WEIGHT).next_to(label, RIGHT, buff=0.25)
        return label, products, total

    def _arrow(self, axes: Axes, source: str, field: str, j: int, color: str) -> Arrow:
        """Token j's vector (components 1 and 2) as an arrow from the origin."""
        tip = axes.c2p(self.value_of(source, field, (j, 0)), self.value_of(source, field, (j, 1)))
        return Arrow(axes.c2p(0, 0), tip, buff=0, color=color, stroke_width=5, max_tip_length_to_length_ratio=0.15)


def _with_pluses(terms: list, *, buff: float) -> VGroup:
    """Terms joined by '+' signs, left to right."""
    parts = [terms[0]]
    for term in terms[1:]:
        parts += [text("+", color=MUTED), term]
    return VGroup(*parts).arrange(RIGHT, buff=buff)
