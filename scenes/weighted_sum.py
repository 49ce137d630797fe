"""Scene 5: the weighted sum gives z_i — the value arrows shrink by their weights and add tip to tail."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from manim import (
    DOWN,
    LEFT,
    RIGHT,
    UP,
    Create,
    DashedLine,
    Dot,
    FadeIn,
    GrowArrow,
    LaggedStart,
    MathTex,
    NumberLine,
    NumberPlane,
    SurroundingRectangle,
    Transform,
    VGroup,
    Write,
)

from scenes.base import ExplainerScene
from scenes.facts import position, query_number, size
from scenes.kit.palette import CONTEXT, DIM, HIGHLIGHT, MUTED, VALUE, WEIGHT
from scenes.kit.text import text, token_text
from scenes.kit.vectors import Box, arrow, box_of, nice_span, place_label, shaft_boxes

__all__ = ["WeightedSum"]

PLOT = (-6.4, 0.1, -3.1, 2.2)  # left, right, bottom, top of the value-space panel
FRAME = (-6.8, 6.8, -3.2, 2.9)
LABEL_AREA: Box = (FRAME[0], PLOT[1] + 0.5, FRAME[2], PLOT[3] + 0.3)  # where token labels may go

Point = Callable[[np.ndarray, int], np.ndarray]  # (vector, token row) -> screen point


@dataclass
class _Space:
    """The value-space panel: plane (or line) and note, the map to the screen, the token labels."""

    panel: VGroup
    at: Point
    labels: VGroup
    taken: list[Box]
    arrows: VGroup = field(default_factory=VGroup)  # the values, from the origin


class WeightedSum(ExplainerScene):
    """z_i = Σ_j w_ij v_j: the formula with its numbers, then the arrows in value space."""

    def construct(self) -> None:
        self.header("The weighted sum gives z{}", "softmax", "value", parts=[query_number()])
        rows, z_value = self._formula()
        space = self._value_space()
        chain = self._shrink_and_chain(space)
        self._context(space, chain, rows, z_value)

    # -- the formula, then its numbers (a column on the right) ----------------------------------
    def _formula(self) -> tuple[VGroup, VGroup]:
        i = self.text_for(query_number())
        colors = {f"z_{{{i}}}": CONTEXT, f"w_{{{i}j}}": WEIGHT, "v_j": VALUE}
        formula = self.label(r"z_{{{}}} = \sum_j w_{{{}j}} v_j", query_number(), query_number(), tex=True,
                             size=40, color=MUTED, tex_to_color_map=colors)
        rows = VGroup(*(VGroup(text("+" if j else "", color=MUTED), self.number("step", "weights", j, color=WEIGHT),
                               self.label(r"\cdot\, v_{{{}}}", position(j), tex=True, size=38, color=VALUE),
                               token_text(t, size=22)) for j, t in enumerate(self.scenario.tokens)))
        _align_columns(rows, top=1.3, spacing=min(0.5, 3.3 / self.scenario.n_tokens))
        lhs = VGroup(self.label("z_{{{}}}", query_number(), tex=True, size=34, color=CONTEXT),
                     MathTex("=", font_size=34, color=CONTEXT)).arrange(RIGHT, buff=0.15)
        lhs.next_to(rows[0][1], LEFT, buff=0.3)
        z_value = self._z_readout().next_to(rows, DOWN, buff=0.3)
        z_value.shift(RIGHT * (lhs[1].get_x() - z_value[0].get_x()))
        panel = VGroup(formula, lhs, rows, z_value)
        formula.align_to(lhs, LEFT).set_y(2.25)
        panel.shift(RIGHT * (min(2.0, 6.7 - panel.width) - panel.get_left()[0]))
        self.beat(f"z{self.cite(query_number())}, the context vector of '{self.scenario.query_token}', "
                  "is a weighted sum of the values.", Write(formula), run_time=2)
        self.beat("The weights from the softmax multiply the value vectors, one weight per token.",
                  FadeIn(lhs), LaggedStart(*(FadeIn(r, shift=LEFT * 0.2) for r in rows), lag_ratio=0.15),
                  run_time=2.5)
        return rows, z_value

    def _z_readout(self) -> VGroup:
        """= (z[0], z[1], ...): every component of z_i, recorded."""
        d_v, ink = self.scenario.d_v, CONTEXT
        parts = [MathTex("=", font_size=34, color=ink)] + ([text("(", color=ink)] if d_v > 1 else [])
        for k in range(d_v):
            parts += [self.number("step", "context", k, color=ink)] + ([text(",", color=ink)] if k < d_v - 1 else [])
        parts += [text(")", color=ink)] if d_v > 1 else []
        group = VGroup(*parts).arrange(RIGHT, buff=0.12)
        for k, part in enumerate(parts[1:], start=1):
            if getattr(part, "text", "") == ",":  # a comma sits on the baseline, not mid-height
                part.align_to(parts[k - 1], DOWN).shift(DOWN * 0.06 + LEFT * 0.07)
        return group

    # -- value space: every value as an arrow -------------------------------------------------
    def _value_space(self) -> _Space:
        step = self.step
        space = self._line_space() if self.scenario.d_v == 1 else self._plane_space()
        arrows = [arrow(space.at(0 * v, j), space.at(v, j)) for j, v in enumerate(step.values)]
        base = VGroup(*arrows)
        if self.scenario.d_v > 1:
            space.taken += [b for a in arrows for b in shaft_boxes(a)]
            origin = space.at(0 * step.context, 0)
            for j in np.argsort([-a.get_length() for a in arrows]):
                tip = arrows[j].get_end()
                place_label(space.labels[j], tip, tip - origin, space.taken, LABEL_AREA)
        self.beat("In value space each token's value is an arrow from the origin.", Create(space.panel, run_time=1),
                  LaggedStart(*(GrowArrow(a) for a in arrows), lag_ratio=0.15, run_time=1.5),
                  LaggedStart(*(FadeIn(lab) for lab in space.labels), lag_ratio=0.15, run_time=1.5))
        space.arrows = base
        return space

    def _line_space(self) -> _Space:
        """d_v = 1: a number line with one row of arrows per token above it (the chain steps down)."""
        n, step = self.scenario.n_tokens, self.step
        left, right, bottom, top = PLOT
        labels = VGroup(*(token_text(tok, color=VALUE) for tok in self.scenario.tokens))
        note = self.label("d_v = {}: value space is a line, one row per token", size("d_v"), color=HIGHLIGHT, size=22)
        left += max(lab.width for lab in labels) + 0.3
        tick, low, high = nice_span(np.concatenate([step.values[:, 0], step.running_context[:, 0]]))
        line = NumberLine(x_range=[low, high, tick], length=right - left, color=MUTED, include_numbers=False)
        line.move_to(((left + right) / 2, bottom + 0.3, 0))
        gap = min(0.6, (top - bottom - 1.2) / n)
        ys = [line.get_y() + (n - j) * gap for j in range(n)] + [line.get_y()]
        for lab, y in zip(labels, ys, strict=False):
            lab.move_to((left - 0.3, y, 0), aligned_edge=RIGHT)
        zero = DashedLine(line.n2p(0), line.n2p(0) + UP * (ys[0] - ys[-1] + 0.3), color=MUTED, stroke_opacity=0.5)
        note.next_to(VGroup(line, zero), UP, buff=0.35).set_x((PLOT[0] + PLOT[1]) / 2)

        def at(v: np.ndarray, j: int) -> np.ndarray:
            return np.array([line.n2p(v[0])[0], ys[j], 0.0])

        return _Space(VGroup(line, zero, note), at, labels, [box_of(m) for m in (zero, note, *labels)])

    def _plane_space(self) -> _Space:
        """d_v ≥ 2: the plane of dimensions 1 and 2 (said on screen when d_v > 2)."""
        step, d_v = self.step, self.scenario.d_v
        left, right, bottom, top = PLOT
        labels = VGroup(*(token_text(tok, color=VALUE) for tok in self.scenario.tokens))
        note = None
        if d_v > 2:
            note = self.label("showing dimensions {} and {} of d_v = {}", position(0), position(1), size("d_v"),
                              color=HIGHLIGHT, size=22)
            top -= 0.45
        points = np.vstack([step.values[:, :2], step.running_context[:, :2]])
        (x_tick, x0, x1), (y_tick, y0, y1) = nice_span(points[:, 0]), nice_span(points[:, 1])
        tick = max(x_tick, y_tick)
        unit = min((right - left) / (x1 - x0), (top - bottom) / (y1 - y0))
        plane = NumberPlane(
            x_range=[x0, x1, tick], y_range=[y0, y1, tick], x_length=unit * (x1 - x0), y_length=unit * (y1 - y0),
            axis_config={"include_numbers": False, "stroke_color": MUTED, "include_tip": False},
            background_line_style={"stroke_color": MUTED, "stroke_opacity": 0.2, "stroke_width": 1},
        ).move_to(((left + right) / 2, (top + bottom) / 2, 0))
        notes = [note.next_to(plane, UP, buff=0.35).set_x((PLOT[0] + PLOT[1]) / 2)] if note else []

        def at(v: np.ndarray, j: int) -> np.ndarray:
            return np.asarray(plane.c2p(v[0], v[1]))

        return _Space(VGroup(plane, *notes), at, labels, [box_of(m) for m in notes])

    # -- each arrow shrinks to w_j v_j, then they add tip to tail -------------------------------
    def _shrink_and_chain(self, space: _Space) -> VGroup:
        step, at = self.step, space.at
        base = space.arrows
        ends = step.running_context
        starts = np.vstack([np.zeros_like(ends[:1]), ends[:-1]])
        weighted = VGroup(*(arrow(at(0 * w, j), at(w, j)) for j, w in enumerate(step.weighted_values)))
        chain = VGroup(*(arrow(at(s, j), at(e, j)) for j, (s, e) in enumerate(zip(starts, ends, strict=True))))
        self.add(VGroup(*(a.copy().set_opacity(DIM) for a in base)))  # the full values stay, dimmed
        self.beat("Each arrow shrinks to its weighted length: w times v.",
                  *(Transform(a, w) for a, w in zip(base, weighted, strict=True)),
                  space.labels.animate.set_opacity(0.6), run_time=2.5)
        self.beat("Laid tip to tail, in token order, the shrunken arrows end at one point.",
                  LaggedStart(*(Transform(a, c) for a, c in zip(base, chain, strict=True)), lag_ratio=0.35),
                  run_time=3)
        return chain

    def _context(self, space: _Space, chain: VGroup, rows: VGroup, z_value: VGroup) -> None:
        """z_i from the origin to the chain's end, exactly; the most-attended term glows."""
        step, n = self.step, self.scenario.n_tokens
        origin, z_end = space.at(0 * step.context, n), space.at(step.context, n)  # row n: the line itself
        dot = Dot(z_end, radius=0.08, color=CONTEXT)
        drop = DashedLine(chain[-1].get_end(), z_end, color=MUTED) if self.scenario.d_v == 1 else VGroup()
        self.play(FadeIn(dot, scale=0.5), Create(drop), run_time=0.6)
        z_arrow = arrow(origin, z_end, color=CONTEXT, width=7)
        z_tag = self.label("z_{{{}}}", query_number(), tex=True, size=36, color=CONTEXT)
        obstacles = space.taken + [b for a in (*chain, z_arrow) for b in shaft_boxes(a)]
        place_label(z_tag, z_end, z_end - origin if self.scenario.d_v > 1 else DOWN, obstacles, LABEL_AREA)
        top = step.top_key
        glow = SurroundingRectangle(rows[top][1:], color=HIGHLIGHT, buff=0.08, corner_radius=0.08)
        self.beat(f"The context vector for '{self.scenario.query_token}' is a mixture of values, leaning toward "
                  "the most-attended tokens.",
                  GrowArrow(z_arrow), FadeIn(z_tag), FadeIn(z_value, shift=UP * 0.2), Create(glow),
                  space.labels[top].animate.set_opacity(1), run_time=2.5, wait=2)


def _align_columns(rows: VGroup, top: float, spacing: float) -> None:
    """Lay the sum's terms out as a column: signs, weights right-aligned, v_j, tokens."""
    widths = [max(r[c].width for r in rows) for c in range(4)]
    starts = np.cumsum([0.0, widths[0] + 0.15, widths[1] + 0.12, widths[2] + 0.3])
    anchors = starts + np.array([widths[0], widths[1], 0.0, 0.0])  # signs and weights right-aligned
    for j, row in enumerate(rows):
        for c, (x, edge) in enumerate(zip(anchors, (RIGHT, RIGHT, LEFT, LEFT), strict=True)):
            row[c].move_to((x, top - j * spacing, 0), aligned_edge=edge)
