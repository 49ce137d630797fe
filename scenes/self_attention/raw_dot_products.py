"""Scene 1: raw dot products fail — both "it"s tie between "dog" and "ball" until W_K reshapes the keys.

Always the ``raw-dot-product`` preset, whatever the chosen scenario: its point holds for any sentence.
"""

from __future__ import annotations

from dataclasses import dataclass, field

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
    Text,
    TransformFromCopy,
    VGroup,
)

import attention_math
from scenes.base import ExplainerScene
from scenes.facts import position
from scenes.kit.grids import NumberGrid
from scenes.kit.palette import DIM, EMBEDDING, HIGHLIGHT, INK, KEY, MUTED, QUERY, VALUE, WEIGHT
from scenes.kit.text import TokenBox, text

__all__ = ["RawDotProducts"]

SENTENCE = ("The", "dog", "chased", "the", "ball", ",", "but", "it", "couldn't", "catch", "it", ".")
FIRST_IT, SECOND_IT, DOG_WORD, BALL_WORD = 7, 10, 1, 4  # places in SENTENCE
DOG, BALL = 1, 2  # rows of the preset (its tokens are it, dog, ball)
CENTRED = 3.4  # how far right of its final place the arithmetic sits until the plane comes


@dataclass
class _Plane:
    """The plane of axes 1 and 2 with the keys as arrows, each named."""

    axes: Axes
    arrows: dict[int, Arrow] = field(default_factory=dict)
    names: dict[int, Text] = field(default_factory=dict)


class RawDotProducts(ExplainerScene):
    """it · dog and it · ball tie on raw embeddings; projecting the keys with W_K breaks the tie."""

    def construct(self) -> None:
        scenario = attention_math.preset("raw-dot-product")
        raw, projected = scenario.simplified(), scenario
        for name, source in (("raw", raw.trace()), ("raw_step", raw.query_step()), ("projected", projected.trace()),
                             ("projected_step", projected.query_step())):
            self.add_source(name, source, scenario.precision)
        self.own = scenario
        self.header("Raw dot products fail", "query", "key")
        boxes = self._sentence()
        x_grid, x_title = self._one_embedding(boxes)
        raw_lines = self._raw_products(x_grid)
        plane = self._plane(VGroup(x_grid, x_title, *(VGroup(line[0], line[3]) for line in raw_lines)))
        key_rows = self._project_keys(x_grid, x_title, plane)
        self._new_products(key_rows, raw_lines)
        self._closing(boxes)

    def _closing(self, boxes: VGroup) -> None:
        """The last frame is the lesson: the tie, W_K, the broken tie, and what comes next."""
        closing = text("So we project every embedding into queries, keys and values.", size=30, color=INK,
                       t2c={"queries": QUERY, "keys": KEY, "values": VALUE}).move_to(UP * 2.62)
        self.play(FadeOut(boxes, shift=UP * 0.2), run_time=0.6)
        self.beat("So we project every embedding into queries, keys and values.", FadeIn(closing, shift=DOWN * 0.2),
                  wait=1.5)

    # -- the sentence and its two "it"s ------------------------------------------------------
    def _sentence(self) -> VGroup:
        boxes = VGroup(*(TokenBox(word) for word in SENTENCE)).arrange(RIGHT, buff=0.14).move_to(UP * 0.2)
        first = CurvedArrow(boxes[FIRST_IT].get_top(), boxes[DOG_WORD].get_top(), angle=0.9, color=WEIGHT)
        second = CurvedArrow(boxes[SECOND_IT].get_bottom(), boxes[BALL_WORD].get_bottom(), angle=-0.7, color=WEIGHT)
        self.play(LaggedStart(*(FadeIn(b, shift=UP * 0.15) for b in boxes), lag_ratio=0.08), run_time=1.2)
        self.beat("The first 'it' is the dog; the second is the ball.", Create(first), Create(second), wait=1.2)
        self.play(FadeOut(first), FadeOut(second), run_time=0.4)
        return boxes

    def _one_embedding(self, boxes: VGroup) -> tuple[NumberGrid, MathTex]:
        """Both "it"s point at one row of X (drawn in the middle of the frame until the plane comes)."""
        q = self.own.query
        x_grid = self.grid("raw", "embeddings", row_labels=self.own.tokens, color=EMBEDDING, rows="token")
        self.rows("key", x_grid)  # the keys W_K makes take the rows of their tokens
        x_grid.shift(RIGHT * (-6.5 + CENTRED - x_grid.get_left()[0]) + UP * (1.7 - x_grid.get_top()[1]))
        x_title = MathTex("X", color=EMBEDDING, font_size=34).next_to(x_grid.brackets, UP, buff=0.12)
        sentence_target = boxes.copy().scale(0.84).move_to(UP * 2.5)  # tokens at 20, the floor
        row_end = x_grid.brackets.get_right() * RIGHT + x_grid.cells[q][0].get_y() * UP + RIGHT * 0.15
        # both point at the row, their tips apart (one above the other) so they do not pile up
        links = VGroup(*(Arrow(sentence_target[i].get_bottom(), row_end + UP * lift, buff=0.08, color=EMBEDDING,
                               stroke_width=3, tip_length=0.18, max_tip_length_to_length_ratio=0.5)
                         for i, lift in ((FIRST_IT, 0.06), (SECOND_IT, -0.06))))
        self.play(boxes.animate.become(sentence_target), run_time=0.8)
        self.beat("But both 'it's share one embedding.", FadeIn(x_grid, shift=RIGHT * 0.3), FadeIn(x_title),
                  Create(links), wait=1.0)
        self.play(FadeOut(links), boxes.animate.fade(1 - DIM), run_time=0.5)
        return x_grid, x_title

    # -- raw dot products, term by term: a tie ------------------------------------------------
    def _raw_products(self, x_grid: NumberGrid) -> list[tuple[VGroup, VGroup, VGroup, Text]]:
        q, d_in = self.own.query, self.own.d_in
        lines = [self._dot_line(x_grid, j, y) for j, y in ((DOG, -0.35), (BALL, -1.05))]
        (label, factors, products, total), ball = lines
        said = "it · dog, term by term: " + " + ".join(
            f"{self.fmt('raw', 'embeddings', q, m)}×{self.fmt('raw', 'keys', DOG, m)}" for m in range(d_in))
        self.beat(said + ".", FadeIn(label), TransformFromCopy(VGroup(x_grid.row(q), x_grid.row(DOG)), factors),
                  wait=0.6)
        sums = " + ".join(self.fmt("raw_step", "products", DOG, m) for m in range(d_in))
        self.beat(f"Three products: {sums}.", *_products_from(factors, products), run_time=1.2, wait=0.6)
        self.beat(f"They add up to it · dog = {self.fmt('raw', 'scores', q, DOG)}.",
                  ReplacementTransform(products, total), run_time=0.9, wait=0.8)
        b_label, b_factors, b_products, b_total = ball
        self.play(FadeIn(b_label), TransformFromCopy(VGroup(x_grid.row(q), x_grid.row(BALL)), b_factors))
        self.play(*_products_from(b_factors, b_products), run_time=0.7)
        self.beat(f"Raw dot products give a tie: {self.fmt('raw', 'scores', q, DOG)} and "
                  f"{self.fmt('raw', 'scores', q, BALL)}.", ReplacementTransform(b_products, b_total), wait=0.3)
        self.play(Indicate(total, color=WEIGHT), Indicate(b_total, color=WEIGHT))
        return lines

    def _dot_line(self, x_grid: NumberGrid, j: int, y: float) -> tuple[VGroup, VGroup, VGroup, Text]:
        """'it · token =', the factor pairs, their products (with pluses) and the raw score, on one line."""
        q = self.own.query
        label = text(f"it · {self.own.tokens[j]} =", color=EMBEDDING)
        pairs, products = [], []
        for m in range(self.own.d_in):
            a = self.number("raw", "embeddings", q, m, color=EMBEDDING)
            b = self.number("raw", "keys", j, m, color=EMBEDDING)
            pairs.append(VGroup(a, text("×", color=MUTED), b).arrange(RIGHT, buff=0.08))
            products.append(self.number("raw_step", "products", j, m, color=WEIGHT))
        factors = _with_pluses(pairs, buff=0.22)
        line = VGroup(label, factors).arrange(RIGHT, buff=0.25)
        line.shift(RIGHT * (-6.5 + CENTRED - line.get_left()[0]) + UP * (y - line.get_y()))
        product_line = _with_pluses(products, buff=0.22).next_to(label, RIGHT, buff=0.25)
        total = self.number("raw", "scores", q, j, color=WEIGHT).next_to(label, RIGHT, buff=0.25)
        return VGroup(label), factors, product_line, total

    # -- the keys as arrows in the plane of axes 1 and 2 ----------------------------------------
    def _plane(self, board: VGroup) -> _Plane:
        """The plane on the right; what was worked out moves to the left to make room for it."""
        unit = 2.05
        axes = Axes(x_range=[0, 1.2, 0.5], y_range=[0, 2.0, 0.5], x_length=1.2 * unit, y_length=2.0 * unit,
                    tips=False, axis_config={"color": MUTED, "stroke_width": 2})
        axes.shift(RIGHT * (3.3 - axes.c2p(0, 0)[0]) + UP * (-2.55 - axes.c2p(0, 0)[1]))
        axis_names = VGroup(self.label("dim {}", position(0, "d_in"), size=20, color=MUTED),
                            self.label("dim {}", position(1, "d_in"), size=20, color=MUTED))
        axis_names[0].next_to(axes.x_axis, DOWN, buff=0.15)
        axis_names[1].next_to(axes.y_axis, LEFT, buff=0.15)
        plane = _Plane(axes)
        for j in range(3):
            plane.arrows[j] = self._arrow(axes, "raw", j, EMBEDDING)
            plane.names[j] = text(self.own.tokens[j], size=22, color=EMBEDDING)
            plane.names[j].next_to(plane.arrows[j].get_end(), RIGHT, buff=0.1)
        self.beat(f"Drawn in the plane of axes {self.cite(position(0, 'd_in'))} and {self.cite(position(1, 'd_in'))}, "
                  "'it' sits halfway between 'dog' and 'ball'.",
                  board.animate.shift(LEFT * CENTRED),
                  Create(axes), FadeIn(axis_names), *(GrowArrow(a) for a in plane.arrows.values()),
                  *(FadeIn(n) for n in plane.names.values()), wait=0.6)
        return plane

    # -- W_K stretches the keys ------------------------------------------------------------------
    def _project_keys(self, x_grid: NumberGrid, x_title: MathTex, plane: _Plane) -> dict[int, VGroup]:
        tokens, d_in = self.own.tokens, self.own.d_in
        w_key = self.grid("projected", "w_key", color=KEY)
        w_key.next_to(x_grid, RIGHT, buff=0.7).align_to(x_grid.brackets, UP)
        w_title = MathTex("W_K", color=KEY, font_size=34).next_to(w_key.brackets, UP, buff=0.12)
        self.play(FadeIn(VGroup(w_key, w_title), shift=LEFT * 1.5), run_time=0.9)
        key_rows = {j: VGroup(*(self.number("projected", "keys", j, m, color=KEY) for m in range(d_in)))
                    for j in (DOG, BALL)}
        self.add(VGroup(*(plane.arrows[j].copy().set_opacity(DIM) for j in (DOG, BALL))))  # where they were
        moves, old_cells = [], []
        for j, row in key_rows.items():
            old_cells += x_grid.cells[j]
            for m, cell in enumerate(row):
                cell.align_to(x_grid.cells[j][m], RIGHT).set_y(x_grid.cells[j][m].get_y())
            new_arrow = self._arrow(plane.axes, "projected", j, KEY)
            new_name = text(f"{tokens[j]} key", size=22, color=KEY).next_to(new_arrow.get_end(), RIGHT, buff=0.1)
            moves += [ReplacementTransform(x_grid.row(j), row), x_grid.row_labels[j].animate.set_color(KEY),
                      ReplacementTransform(plane.arrows[j], new_arrow), ReplacementTransform(plane.names[j], new_name)]
            plane.arrows[j], plane.names[j] = new_arrow, new_name
        said = f"W_K acts on the keys only, stretching axis {self.cite(position(1, 'd_in'))} by "
        said += f"{self.fmt('projected', 'w_key', 1, 1)}: dog → ("
        said += ", ".join(self.fmt("projected", "keys", DOG, m) for m in range(d_in)) + "), ball → ("
        said += ", ".join(self.fmt("projected", "keys", BALL, m) for m in range(d_in)) + ")."
        # rows 2 and 3 of the matrix are keys now: its title says so, so the last frame reads on its own
        keys_title = MathTex(r"x,\ ", r"k = x W_K", font_size=34).next_to(x_grid.brackets, UP, buff=0.12)
        keys_title[0].set_color(EMBEDDING)
        keys_title[1].set_color(KEY)
        self.beat(said, *moves, Indicate(w_key.column(1), color=HIGHLIGHT), ReplacementTransform(x_title, keys_title),
                  run_time=2.0, wait=1.0)
        x_grid.body.remove(*old_cells)
        return key_rows

    # -- new products: 'it' now prefers 'ball' -----------------------------------------------------
    def _new_products(self, key_rows: dict[int, VGroup], raw_lines: list[tuple[VGroup, VGroup, VGroup, Text]]) -> None:
        q, d_in = self.own.query, self.own.d_in
        lines = [self._product_line(j, y) for j, y in ((DOG, -1.85), (BALL, -2.55))]
        said = [" + ".join(self.fmt("projected_step", "products", j, m) for m in range(d_in)) for j in (DOG, BALL)]
        self.beat(f"With the new keys: it · dog key = {said[0]}, it · ball key = {said[1]}.",
                  *(FadeIn(line[0]) for line in lines),
                  *(TransformFromCopy(key_rows[j][m], line[1][2 * m])
                    for j, line in zip((DOG, BALL), lines, strict=True) for m in range(d_in)),
                  *(FadeIn(line[1][k]) for line in lines for k in range(1, len(line[1]), 2)),
                  run_time=1.2, wait=1.2)
        scores = self.sources["projected"][0].scores[q]
        winner = lines[int(scores[BALL] > scores[DOG])][2]
        glow = SurroundingRectangle(winner, color=HIGHLIGHT, buff=0.1, corner_radius=0.08)
        self.play(*(ReplacementTransform(line[1], line[2]) for line in lines), run_time=1.0)
        self.beat("After a learned projection of the keys, 'it' attends more to 'ball'.",
                  Create(glow), Indicate(winner, color=HIGHLIGHT), run_time=1.2, wait=1.3)

    def _product_line(self, j: int, y: float) -> tuple[Text, VGroup, Text]:
        """'it · token key =', the projected products and the new score."""
        label = text(f"it · {self.own.tokens[j]} key =", color=KEY, t2c={"it": EMBEDDING})
        products = _with_pluses([self.number("projected_step", "products", j, m, color=WEIGHT)
                                 for m in range(self.own.d_in)], buff=0.22)
        VGroup(label, products).arrange(RIGHT, buff=0.25)
        VGroup(label, products).shift(RIGHT * (-6.5 - label.get_left()[0]) + UP * (y - label.get_y()))
        total = self.number("projected", "scores", self.own.query, j, color=WEIGHT).next_to(label, RIGHT, buff=0.25)
        return label, products, total

    def _arrow(self, axes: Axes, source: str, j: int, color: str) -> Arrow:
        """Token j's key (components 1 and 2) as an arrow from the origin."""
        keys = self.sources[source][0].keys
        tip = axes.c2p(keys[j, 0], keys[j, 1])
        return Arrow(axes.c2p(0, 0), tip, buff=0, color=color, stroke_width=5, max_tip_length_to_length_ratio=0.15)


def _products_from(factors: VGroup, products: VGroup) -> list[ReplacementTransform]:
    """Each factor pair (and each plus) becomes its product (and its plus)."""
    return [ReplacementTransform(factors[k], products[k]) for k in range(len(factors))]


def _with_pluses(terms: list[Text] | list[VGroup], *, buff: float) -> VGroup:
    """Terms joined by '+' signs, left to right."""
    parts = [terms[0]]
    for term in terms[1:]:
        parts += [text("+", color=MUTED), term]
    return VGroup(*parts).arrange(RIGHT, buff=buff)
