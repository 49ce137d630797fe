"""Scene 6: the weighted sum gives z_i — each value shrinks by its weight, and the pieces add up.

Left, value space: every value as an arrow; each shrinks to w_j v_j and they are laid tip to
tail, the camera closing in so every piece can be seen, then pulling back to z_i from the
origin. Right, the same in numbers: w_j · v_j = (…) for every token, and the columns add up to z_i.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np
from manim import (
    DOWN,
    LEFT,
    RIGHT,
    UP,
    Arrow,
    Create,
    DashedLine,
    Dot,
    FadeIn,
    FadeOut,
    GrowArrow,
    LaggedStart,
    Line,
    MathTex,
    MovingCamera,
    MovingCameraScene,
    NumberLine,
    ReplacementTransform,
    Restore,
    SurroundingRectangle,
    Text,
    VGroup,
    VMobject,
    Write,
)

from scenes.base import ExplainerScene
from scenes.facts import Fact, position, query_number, size, value
from scenes.kit.layout import BOTTOM, HALF_WIDTH, TOP
from scenes.kit.palette import CONTEXT, DIM, HIGHLIGHT, MUTED, VALUE, WEIGHT
from scenes.kit.text import SMALLEST_SIZE, text, token_text
from scenes.kit.vectors import Box, arrow, box_of, clear_of, fitted_plane, shaft_boxes, try_place_label

__all__ = ["WeightedSum"]

Point = Callable[[np.ndarray, int], np.ndarray]  # (vector, token row) -> screen point
SHOWN_DIMS = 2  # value space and the terms show dimensions 1 and 2; z is written in full
MIN_ARROW = 0.6  # the camera closes in until every piece is about this long on screen


@dataclass
class _Table:
    """w_j · (v_j1, v_j2) = (t_j1, t_j2) for every token, the sum line z_i = (…) under it."""

    rows: list[VGroup]  # [token, weight, "·", values, sign, terms]
    weights: list[Text]
    values: list[list[Text]]
    terms: list[list[Text]]
    signs: list[Text]
    heads: VGroup
    rule: Line
    total: VGroup  # the formula, then "= (z1, …)"
    formula: MathTex
    sums: list[Text]
    font: float


@dataclass
class _Space:
    """The value-space panel: plane (or line) and note, the map to the screen, the token labels.

    ``axis(j)`` is what maps row j's coordinates to the screen (the plane itself, or row j of the
    line when d_v = 1), for the tests to map each drawn point back.
    """

    panel: VGroup
    axis: Callable[[int], Any]
    at: Point
    labels: VGroup
    arrows: list[Arrow] = field(default_factory=list)
    ghosts: VGroup = field(default_factory=VGroup)  # the values at full length, dimmed, once they shrink


class WeightedSum(ExplainerScene, MovingCameraScene):
    """z_i = Σ_j w_ij v_j: the formula, the terms with their numbers, the arrows in value space."""

    def construct(self) -> None:
        self.header("The weighted sum gives z{}", "softmax", "value", parts=[query_number()])
        table = self._table()
        self._formula(table)
        space = self._value_space(table)
        self._shrink(space, table)
        chain = self._chain(space, table)
        self._add_up(space, chain, table)
        self._context(space, chain, table)

    # -- the table of terms ---------------------------------------------------------------------
    @property
    def _dims(self) -> int:
        return min(SHOWN_DIMS, self.scenario.d_v)

    def _table(self) -> _Table:
        n, dims = self.scenario.n_tokens, self._dims
        pitch = float(np.clip((TOP - BOTTOM - 1.6) / n, 0.3, 0.62))
        font = float(np.clip(pitch * 40, SMALLEST_SIZE, 25))  # the plane keeps the larger share
        weights = [self.number("step", "weights", j, size=font, color=WEIGHT) for j in range(n)]
        values = [[self.number("step", "values", j, c, size=font, color=VALUE) for c in range(dims)] for j in range(n)]
        terms = [[self.number("step", "weighted_values", j, c, size=font, color=VALUE) for c in range(dims)]
                 for j in range(n)]
        signs = [text(self._row_sign(j), size=font, color=MUTED) for j in range(n)]
        rows = [VGroup(token_text(token, size=font, color=VALUE), weights[j], text("·", size=font, color=MUTED),
                       _vector(values[j], font), signs[j], _vector(terms[j], font))
                for j, token in enumerate(self.scenario.tokens)]
        _columns(rows, pitch)
        sums = [self.number("step", "context", c, size=font, color=CONTEXT) for c in range(self.scenario.d_v)]
        formula = self._sum_formula(font * 1.4)
        total = VGroup(self._sum_formula(font * 1.4), text(self._sum_sign(), size=font, color=MUTED),
                       _vector(sums, font))
        total.arrange(RIGHT, buff=0.2)
        rule = Line(LEFT, RIGHT, color=MUTED, stroke_width=1.5)
        heads = self._heads(rows, font)
        table = _Table(rows, weights, values, terms, signs, heads, rule, total, formula, sums, font)
        self._place_table(table, pitch)
        return table

    def _sum_formula(self, font: float) -> MathTex:
        """z_i = Σ_j w_ij v_j, each symbol in its role's colour."""
        i = self.text_for(query_number())
        colors = {f"z_{{{i}}}": CONTEXT, f"w_{{{i}j}}": WEIGHT, "v_j": VALUE}
        formula = self.label(r"z_{{{}}} = \sum_j w_{{{}j}} v_j", query_number(), query_number(), tex=True,
                             size=font, color=MUTED, tex_to_color_map=colors)
        assert isinstance(formula, MathTex)
        return formula

    def _row_sign(self, j: int) -> str:
        """"=" when w_j times each shown entry of v_j gives the shown term, else "≈"."""
        signs = [self.equals(value("step", "weighted_values", j, c),
                             [value("step", "weights", j), value("step", "values", j, c)], "product")
                 for c in range(self._dims)]
        return "=" if all(sign == "=" for sign in signs) else "≈"

    def _sum_sign(self) -> str:
        """"=" when each column of shown terms adds up to the shown entry of z_i, else "≈"."""
        n = self.scenario.n_tokens
        signs = [self.equals(value("step", "context", c), [value("step", "weighted_values", j, c) for j in range(n)])
                 for c in range(self._dims)]
        return "=" if all(sign == "=" for sign in signs) else "≈"

    def _heads(self, rows: list[VGroup], font: float) -> VGroup:
        """w, v_j and w·v over their columns."""
        small = max(SMALLEST_SIZE, font * 0.85)
        heads = VGroup(text("weight", size=small, color=WEIGHT), text("value", size=small, color=VALUE),
                       text("weight × value", size=small, color=VALUE))
        _place_heads(heads, rows)
        return heads

    def _place_table(self, table: _Table, pitch: float) -> None:
        """The table at the right of the frame, the sum line under it, everything inside the frame."""
        block = VGroup(*table.rows, table.heads)
        table.rule.put_start_and_end_on(table.rows[-1].get_corner(DOWN + LEFT) + DOWN * pitch * 0.45,
                                        table.rows[-1].get_corner(DOWN + RIGHT) + DOWN * pitch * 0.45)
        table.total.next_to(table.rule, DOWN, buff=0.18)
        table.total.shift(RIGHT * (table.rows[-1][5].get_left()[0] - table.total[2].get_left()[0]))
        whole = VGroup(block, table.rule, table.total)
        if whole.width > 2 * HALF_WIDTH - 5.0:  # the plane keeps 5 units unless the numbers would go below the floor
            whole.scale(max((2 * HALF_WIDTH - 5.0) / whole.width, SMALLEST_SIZE / table.font))
            for head in table.heads:
                size = cast(Text, head).font_size
                if size < SMALLEST_SIZE:  # the heads stay at the floor
                    head.scale(SMALLEST_SIZE / size)
            _place_heads(table.heads, table.rows)
        whole.shift(RIGHT * (HALF_WIDTH - whole.get_right()[0]) + UP * ((TOP + BOTTOM) / 2 - whole.get_y()))

    # -- the formula, then its numbers ---------------------------------------------------------------
    def _formula(self, table: _Table) -> None:
        big = table.formula.scale(1.5).move_to(UP * 0.4)
        self.beat(f"z{self.cite(query_number())}, the context vector of '{self.scenario.query_token}', "
                  "is a weighted sum of the values.", Write(big), run_time=2)
        parts = [VGroup(row[0], row[1], row[2], row[3]) for row in table.rows]
        self.beat("The weights from the softmax multiply the value vectors, one weight per token.",
                  ReplacementTransform(big, table.total[0]), FadeIn(table.heads[:2]),
                  LaggedStart(*(FadeIn(p, shift=LEFT * 0.2) for p in parts), lag_ratio=0.08), run_time=2.5)

    # -- value space: every value as an arrow -------------------------------------------------
    def _value_space(self, table: _Table) -> _Space:
        right = min(VGroup(*table.rows).get_left()[0], table.total.get_left()[0]) - 0.5
        area: Box = (-HALF_WIDTH + 0.1, right, BOTTOM + 0.15, TOP - 0.2)
        space = self._line_space(area) if self.scenario.d_v == 1 else self._plane_space(area)
        for j in range(self.scenario.n_tokens):
            facts = self._vector_facts("values", j)
            tip = space.at(self._values(facts), j)
            space.arrows.append(self.plot(arrow(space.at(np.zeros(self._dims), j), tip), space.axis(j), *facts,
                                          anchor="end"))
        self._label_arrows(space, area)
        self.beat("In value space each token's value is an arrow from the origin.", Create(space.panel, run_time=1),
                  LaggedStart(*(GrowArrow(a) for a in space.arrows), lag_ratio=0.1, run_time=1.5),
                  LaggedStart(*(FadeIn(lab) for lab in space.labels), lag_ratio=0.1, run_time=1.5))
        return space

    def _vector_facts(self, field_name: str, *row: int) -> list[Fact]:
        return [value("step", field_name, *row, c) for c in range(self._dims)]

    def _values(self, facts: list[Fact]) -> np.ndarray:
        return np.array([self.value_of(fact) for fact in facts])

    def _label_arrows(self, space: _Space, area: Box) -> None:
        """Each token's name off its arrow's tip, where it fits (the table names every token)."""
        taken = [b for a in space.arrows for b in shaft_boxes(a)] + [box_of(m) for m in space.panel[1:]]
        origin = space.at(np.zeros(self._dims), 0)
        kept = VGroup()
        order = np.argsort([-a.get_length() for a in space.arrows])
        for j in order:
            label = space.labels[j]
            tip = space.arrows[j].get_end()
            direction = tip - origin if self.scenario.d_v > 1 else LEFT
            if try_place_label(label, tip, direction, taken, (area[0] - 0.1, area[1] + 0.3, area[2], area[3] + 0.1)):
                kept.add(label)
        space.labels = kept

    def _line_space(self, area: Box) -> _Space:
        """d_v = 1: a number line, one row of arrows per token above it (the chain steps down the rows)."""
        n, step = self.scenario.n_tokens, self.step
        left, right, bottom, top = area
        values = np.concatenate([step.values[:, 0], step.running_context[:, 0], [0.0]])
        low, high = float(values.min()), float(values.max())
        pad = 0.1 * max(high - low, 1e-3)
        line = NumberLine(x_range=[low - pad, high + pad, (high - low + 2 * pad) / 6], length=right - left - 0.2,
                          color=MUTED, include_numbers=False).move_to(((left + right) / 2, bottom + 0.3, 0))
        gap = min(0.45, (top - bottom - 1.3) / n)
        ys = [line.get_y() + (n - j) * gap for j in range(n)] + [line.get_y()]
        note = self.label("d_v = {}: value space is a line, a row per token", size("d_v"), color=MUTED, size=20)
        note.move_to(((left + right) / 2, ys[0] + 0.45, 0))
        zero = DashedLine(line.n2p(0), line.n2p(0) + UP * (ys[0] - ys[-1] + 0.2), color=MUTED, stroke_opacity=0.5)
        rows = _Rows(line, ys)
        labels = VGroup(*(token_text(tok, color=VALUE, size=20) for tok in self.scenario.tokens))
        return _Space(VGroup(line, zero, note), rows.axis, rows.point, labels)

    def _plane_space(self, area: Box) -> _Space:
        """d_v ≥ 2: the plane of dimensions 1 and 2 (said on screen when d_v > 2)."""
        step = self.step
        notes = []
        if self.scenario.d_v > 2:
            note = self.label("dimensions {} and {} of d_v = {}", position(0), position(1), size("d_v"),
                              color=MUTED, size=20)
            notes.append(note.move_to(((area[0] + area[1]) / 2, area[3] - 0.15, 0)))
            area = (area[0], area[1], area[2], area[3] - 0.45)
        points = np.vstack([step.values[:, :2], step.running_context[:, :2], np.zeros((1, 2))])
        plane = fitted_plane(points, area)
        labels = VGroup(*(token_text(tok, color=VALUE, size=20) for tok in self.scenario.tokens))

        def at(v: np.ndarray, j: int) -> np.ndarray:
            return np.asarray(plane.c2p(v[0], v[1]))

        return _Space(VGroup(plane, *notes), lambda j: plane, at, labels)

    # -- each arrow shrinks to w_j v_j, then they add tip to tail -------------------------------
    def _shrink(self, space: _Space, table: _Table) -> None:
        ghosts = VGroup(*(a.copy().set_opacity(DIM) for a in space.arrows))  # the full values stay, dimmed
        self.add(ghosts)
        space.ghosts = ghosts
        weighted = [self.plot(arrow(space.at(np.zeros(self._dims), j),
                                    space.at(self._values(self._vector_facts("weighted_values", j)), j)),
                              space.axis(j), *self._vector_facts("weighted_values", j), anchor="end")
                    for j in range(self.scenario.n_tokens)]
        note = [FadeIn(self.rounding_note())] if self.rounding_shows else []
        self.beat("Each arrow shrinks to its weight times its value; the terms, in numbers." + self.said_rounded(),
                  *(ReplacementTransform(a, w) for a, w in zip(space.arrows, weighted, strict=True)),
                  *(FadeIn(VGroup(row[4], row[5])) for row in table.rows), FadeIn(table.heads[2]), *note,
                  space.labels.animate.set_opacity(0.6), run_time=2.5)
        space.arrows = list(weighted)

    def _chain(self, space: _Space, table: _Table) -> list[Arrow]:
        """Tip to tail, in token order, the camera close on the pieces; they end at one point."""
        n = self.scenario.n_tokens
        ends = [self._values(self._vector_facts("running_context", j)) for j in range(n)]
        starts = [np.zeros(self._dims), *ends[:-1]]
        spots = np.array([space.at(p, j) for j, p in enumerate([*starts, ends[-1]])])
        frame = cast(MovingCamera, self.camera).frame
        low, high = spots.min(axis=0), spots.max(axis=0)
        zoom_width = float(np.clip(max((high - low)[0] * 1.5, (high - low)[1] * 1.5 * 16 / 9), 1.6, frame.width))
        closer = frame.width / zoom_width
        # strokes grow with the zoom: thin enough to stay lines when the camera is close
        chain = [self.plot(arrow(space.at(s, j), space.at(e, j), width=max(1.0, 9 / closer), tip=0.22 / closer),
                           space.axis(j),
                           *self._vector_facts("running_context", j), anchor="end")
                 for j, (s, e) in enumerate(zip(starts, ends, strict=True))]
        frame.save_state()
        # text grows with the zoom: the token names step out while the camera is close
        words = VGroup(space.labels, *table.rows, table.heads, table.total[0], space.ghosts)
        self.play(frame.animate.set(width=zoom_width).move_to((low + high) / 2), words.animate.set_opacity(0),
                  run_time=1.2)
        self.words = words
        self.beat("Laid tip to tail, in token order, the shrunken arrows end at one point.",
                  LaggedStart(*(ReplacementTransform(a, c) for a, c in zip(space.arrows, chain, strict=True)),
                              lag_ratio=0.3), run_time=min(4.0, 1.2 + 0.2 * n))
        return chain

    def _add_up(self, space: _Space, chain: list[Arrow], table: _Table) -> None:
        """The camera pulls back; the columns of terms add up to z_i, the chain's end."""
        z_facts = self._vector_facts("context")
        end = space.at(self._values(z_facts), self.scenario.n_tokens)
        dot = self.plot(Dot(end, radius=0.07, color=CONTEXT), space.axis(self.scenario.n_tokens), *z_facts)
        frame = cast(MovingCamera, self.camera).frame
        self.play(FadeIn(dot, scale=0.5), run_time=0.5)
        said = f"The columns add up to z{self.cite(query_number())} = ("
        said += ", ".join(self.fmt("step", "context", c) for c in range(self.scenario.d_v)) + ")."
        self.beat(said, Restore(frame), Create(table.rule), FadeIn(table.total[1:]),
                  VGroup(*self.words[1:-1]).animate.set_opacity(1), space.labels.animate.set_opacity(0.6),
                  space.ghosts.animate.set_opacity(DIM),
                  run_time=2.0, wait=1.0)

    def _context(self, space: _Space, chain: list[Arrow], table: _Table) -> None:
        """z_i from the origin to that point; the most-attended token's term glows."""
        z_facts = self._vector_facts("context")
        n = self.scenario.n_tokens
        z_arrow = self.plot(arrow(space.at(np.zeros(self._dims), n), space.at(self._values(z_facts), n),
                                  color=CONTEXT, width=7), space.axis(n), *z_facts, anchor="end")
        z_tag = self.label("z_{{{}}}", query_number(), tex=True, size=34, color=CONTEXT)
        taken = [b for a in (*chain, z_arrow, *space.arrows) for b in shaft_boxes(a)]
        taken += [box_of(m) for m in space.labels]
        origin = space.at(np.zeros(self._dims), n)
        tip = z_arrow.get_end()
        crowded: list[Any] = []
        if not try_place_label(z_tag, tip, tip - origin if self.scenario.d_v > 1 else DOWN, taken,
                               (-HALF_WIDTH, table.rows[0].get_left()[0] - 0.2, BOTTOM, TOP)):
            z_tag.next_to(tip, UP, buff=0.1)  # z's name comes first: token labels in its way step aside
            crowded = [FadeOut(label) for label in space.labels if not clear_of(box_of(label), [box_of(z_tag)])]
        top = self.step.top_key
        glow = SurroundingRectangle(table.rows[top], color=HIGHLIGHT, buff=0.06, corner_radius=0.06)
        self.beat(f"The context vector for '{self.scenario.query_token}' is a mixture of values, leaning toward "
                  "the most-attended tokens.",
                  GrowArrow(z_arrow), FadeIn(z_tag), Create(glow), *crowded, run_time=2.0, wait=2)


def _vector(entries: list[Text], font: float) -> VGroup:
    """(a, b): entries in parentheses, commas on the baseline."""
    parts: list[VMobject] = [text("(", size=font, color=MUTED)]
    for c, entry in enumerate(entries):
        parts += [entry] + ([text(",", size=font, color=MUTED)] if c < len(entries) - 1 else [])
    parts.append(text(")", size=font, color=MUTED))
    group = VGroup(*parts).arrange(RIGHT, buff=0.08)
    for k, part in enumerate(parts):
        if getattr(part, "text", "") == ",":
            part.align_to(parts[k - 1], DOWN).shift(DOWN * 0.05)
    return group


def _place_heads(heads: VGroup, rows: list[VGroup]) -> None:
    """"weight" ends over its column's right edge, "value" and "weight × value" start over theirs
    (the "·" between the first two keeps them apart however narrow the numbers)."""
    weight, value_, term = heads
    top = VGroup(*rows).get_top()[1] + 0.12
    weight.move_to((0, top + weight.height / 2, 0)).align_to(VGroup(*(row[1] for row in rows)), RIGHT)
    value_.move_to((0, top + value_.height / 2, 0)).align_to(VGroup(*(row[3] for row in rows)), LEFT)
    term.move_to((0, top + term.height / 2, 0)).align_to(VGroup(*(row[5] for row in rows)), LEFT)


def _columns(rows: list[VGroup], pitch: float) -> None:
    """Lay the rows out as a table: token, weight, ·, (v), sign, (w·v); numbers right-aligned."""
    widths = [max(row[c].width for row in rows) for c in range(6)]
    gaps = [0.25, 0.12, 0.12, 0.2, 0.2]
    starts = np.cumsum([0.0, *(w + g for w, g in zip(widths[:-1], gaps, strict=True))])
    for j, row in enumerate(rows):
        for c, part in enumerate(row):
            edge = RIGHT if c in (0, 1) else LEFT
            x = starts[c] + (widths[c] if edge is RIGHT else 0.0)
            part.move_to((x, -j * pitch, 0), aligned_edge=edge)


class _Rows:
    """A number line with one row per token above it: ``point(v, j)`` is v on row j (row n: the line)."""

    def __init__(self, line: NumberLine, ys: list[float]) -> None:
        self.line, self.ys = line, ys

    def point(self, v: np.ndarray, j: int) -> np.ndarray:
        return np.array([self.line.n2p(float(v[0]))[0], self.ys[j], 0.0])

    def axis(self, j: int) -> _Row:
        return _Row(self, j)


class _Row:
    """Row j of a :class:`_Rows`: ``c2p(x)``."""

    def __init__(self, rows: _Rows, j: int) -> None:
        self.rows, self.j = rows, j

    def c2p(self, x: float, *_: float) -> np.ndarray:
        return self.rows.point(np.array([x]), self.j)
