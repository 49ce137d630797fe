"""Scene 5: the weighted sum gives z_i — the value arrows shrink by their weights and add tip to tail."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from manim import DOWN, LEFT, RIGHT, UP, Arrow, Create, DashedLine, Dot, FadeIn, GrowArrow, LaggedStart, MathTex, Write
from manim.animation.transform import Transform
from manim.mobject.geometry.shape_matchers import SurroundingRectangle
from manim.mobject.graphing.coordinate_systems import NumberPlane
from manim.mobject.graphing.number_line import NumberLine
from manim.mobject.types.vectorized_mobject import VGroup, VMobject

from scenes.base import ExplainerScene
from scenes.common import CONTEXT, DIM, HIGHLIGHT, MUTED, VALUE, WEIGHT, shorten_token, text

__all__ = ["WeightedSum"]

PLOT = (-6.4, 0.1, -3.1, 2.2)  # left, right, bottom, top of the value-space panel
FRAME = (-6.8, 6.8, -3.2, 2.9)
NICE_STEPS = (0.05, 0.1, 0.2, 0.25, 0.5, 1.0, 2.0, 2.5, 5.0)


def _arrow(start: np.ndarray, end: np.ndarray, color: str = VALUE, width: float = 6) -> Arrow:
    if np.linalg.norm(end - start) < 0.02:  # a zero arrow still needs a direction to draw
        end = start + np.array([0.02, 0.0, 0.0])
    return Arrow(start, end, buff=0, color=color, stroke_width=width, tip_length=0.22,
                 max_tip_length_to_length_ratio=0.4, max_stroke_width_to_length_ratio=12)


def _span(values: np.ndarray) -> tuple[float, float, float]:
    """A nice tick step and a range holding ``values`` and 0 with a margin (ticks count from 0)."""
    low, high = min(0.0, float(values.min())), max(0.0, float(values.max()))
    margin = 0.1 * max(high - low, 1e-3)
    step = next((s for s in NICE_STEPS if s >= (high - low + 2 * margin) / 8), NICE_STEPS[-1])
    return step, low - margin, high + margin


def _shaft_boxes(arrow: Arrow, spacing: float = 0.2, size: float = 0.05) -> list[tuple[float, ...]]:
    """Small boxes along an arrow, so labels keep off it."""
    start, end = arrow.get_start(), arrow.get_end()
    count = max(2, int(np.linalg.norm(end - start) / spacing) + 1)
    points = [start + t * (end - start) for t in np.linspace(0, 1, count)]
    return [(p[0] - size, p[0] + size, p[1] - size, p[1] + size) for p in points]


def _box(mob: VMobject) -> tuple[float, ...]:
    return (mob.get_left()[0], mob.get_right()[0], mob.get_bottom()[1], mob.get_top()[1])


def _place(label: VGroup, tip: np.ndarray, direction: np.ndarray, taken: list[tuple[float, ...]]) -> None:
    """Put ``label`` just beyond ``tip`` along ``direction``, turning away from labels already placed."""
    angle = math.atan2(direction[1], direction[0]) if np.linalg.norm(direction) > 1e-6 else math.pi / 2
    for extra in (0.1, 0.3, 0.55):
        for turn in (0, 25, -25, 50, -50, 80, -80, 115, -115, 150, -150, 180):
            u = np.array([math.cos(angle + math.radians(turn)), math.sin(angle + math.radians(turn)), 0.0])
            reach = min(label.width / 2 / max(abs(u[0]), 1e-6), label.height / 2 / max(abs(u[1]), 1e-6))
            label.move_to(tip + (reach + extra) * u)  # the box's edge, not its centre, sits ``extra`` off the tip
            box, pad = _box(label), 0.06
            inside = FRAME[0] <= box[0] and box[1] <= PLOT[1] + 0.5 and FRAME[2] <= box[2] and box[3] <= PLOT[3] + 0.3
            if inside and not any(box[0] < b[1] + pad and b[0] < box[1] + pad and box[2] < b[3] + pad
                                  and b[2] < box[3] + pad for b in taken):
                taken.append(box)
                return
    taken.append(_box(label))


class WeightedSum(ExplainerScene):
    """z_i = Σ_j w_ij v_j: the formula with its numbers, then the arrows in value space."""

    def construct(self) -> None:
        scenario, step = self.scenario, self.step
        n, i, token = scenario.n_tokens, step.index + 1, scenario.query_token
        self.header(5, "The weighted sum gives z" + str(i), "softmax", "value")

        # -- the formula, then its numbers (a column on the right) ----------------------------------
        colors = {f"z_{{{i}}}": CONTEXT, f"w_{{{i}j}}": WEIGHT, "v_j": VALUE}
        formula = MathTex(rf"z_{{{i}}} = \sum_j w_{{{i}j}} v_j", font_size=40, color=MUTED, tex_to_color_map=colors)
        rows = VGroup(*(VGroup(text("+" if j else "", color=MUTED), self.number("step", "weights", j, color=WEIGHT),
                               MathTex(rf"\cdot\, v_{{{j + 1}}}", font_size=38, color=VALUE),
                               text(shorten_token(t), color=MUTED, size=22)) for j, t in enumerate(scenario.tokens)))
        self._align_columns(rows, top=1.3, spacing=min(0.5, 3.3 / n))
        lhs = MathTex(f"z_{{{i}}}", "=", font_size=34, color=CONTEXT).next_to(rows[0][1], LEFT, buff=0.3)
        z_value = self._z_readout().next_to(rows, DOWN, buff=0.3)
        z_value.shift(RIGHT * (lhs[1].get_x() - z_value[0].get_x()))
        panel = VGroup(formula, lhs, rows, z_value)
        formula.align_to(lhs, LEFT).set_y(2.25)
        panel.shift(RIGHT * (min(2.0, 6.7 - panel.width) - panel.get_left()[0]))
        self.beat(f"z{i}, the context vector of '{token}', is a weighted sum of the values.", Write(formula),
                  run_time=2)
        self.beat("The weights from the softmax multiply the value vectors, one weight per token.",
                  FadeIn(lhs), LaggedStart(*(FadeIn(r, shift=LEFT * 0.2) for r in rows), lag_ratio=0.15),
                  run_time=2.5)

        # -- value space: every value as an arrow -------------------------------------------------
        sums = np.cumsum(step.weighted_values, axis=0)
        assert np.allclose(sums[-1], step.context, rtol=0, atol=1e-9), "the chain must end exactly at z"
        starts = np.vstack([np.zeros_like(sums[:1]), sums[:-1]])
        space, at, labels = self._value_space(step.values, sums)
        base = VGroup(*(_arrow(at(0 * v, j), at(v, j)) for j, v in enumerate(step.values)))
        weighted = VGroup(*(_arrow(at(0 * w, j), at(w, j)) for j, w in enumerate(step.weighted_values)))
        chain = VGroup(*(_arrow(at(s, j), at(e, j)) for j, (s, e) in enumerate(zip(starts, sums, strict=True))))
        origin, z_end = at(0 * step.context, n), at(step.context, n)  # row n: the line itself when d_v = 1
        self._place_labels(space, labels, base, origin)
        self.beat("In value space each token's value is an arrow from the origin.", Create(space, run_time=1),
                  LaggedStart(*(GrowArrow(a) for a in base), lag_ratio=0.15, run_time=1.5),
                  LaggedStart(*(FadeIn(lab) for lab in labels), lag_ratio=0.15, run_time=1.5))

        # -- each arrow shrinks to w_j v_j, then they add tip to tail -------------------------------
        self.add(VGroup(*(a.copy().set_opacity(DIM) for a in base)))  # the full values stay, dimmed
        self.beat("Each arrow shrinks to its weighted length: w times v.",
                  *(Transform(a, w) for a, w in zip(base, weighted, strict=True)),
                  labels.animate.set_opacity(0.6), run_time=2.5)
        self.beat("Laid tip to tail, in token order, the shrunken arrows end at one point.",
                  LaggedStart(*(Transform(a, c) for a, c in zip(base, chain, strict=True)), lag_ratio=0.35),
                  run_time=3)
        dot = Dot(z_end, radius=0.08, color=CONTEXT)
        drop = DashedLine(chain[-1].get_end(), z_end, color=MUTED) if scenario.d_v == 1 else VGroup()
        self.play(FadeIn(dot, scale=0.5), Create(drop), run_time=0.6)

        # -- z_i from the origin to that point -----------------------------------------------------
        z_arrow = _arrow(origin, z_end, color=CONTEXT, width=7)
        z_tag = MathTex(f"z_{{{i}}}", font_size=36, color=CONTEXT)
        obstacles = self._label_boxes + [b for a in (*chain, z_arrow) for b in _shaft_boxes(a)]
        _place(z_tag, z_end, z_end - origin if scenario.d_v > 1 else DOWN, obstacles)
        top = int(np.argmax(step.weights))
        glow = SurroundingRectangle(rows[top][1:], color=HIGHLIGHT, buff=0.08, corner_radius=0.08)
        self.beat(f"The context vector for '{token}' is a mixture of values, leaning toward the most-attended tokens.",
                  GrowArrow(z_arrow), FadeIn(z_tag), FadeIn(z_value, shift=UP * 0.2), Create(glow),
                  labels[top].animate.set_opacity(1), run_time=2.5, wait=2)

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

    def _align_columns(self, rows: VGroup, top: float, spacing: float) -> None:
        """Lay the sum's terms out as a column: signs, weights right-aligned, v_j, tokens."""
        widths = [max(r[c].width for r in rows) for c in range(4)]
        starts = np.cumsum([0.0, widths[0] + 0.15, widths[1] + 0.12, widths[2] + 0.3])
        anchors = starts + np.array([widths[0], widths[1], 0.0, 0.0])  # signs and weights right-aligned
        for j, row in enumerate(rows):
            for c, (x, edge) in enumerate(zip(anchors, (RIGHT, RIGHT, LEFT, LEFT), strict=True)):
                row[c].move_to([x, top - j * spacing, 0], aligned_edge=edge)

    def _value_space(self, values: np.ndarray, sums: np.ndarray) -> tuple[VGroup, Callable, VGroup]:
        """The value-space panel, a map (vector, token row) -> screen point, and the token labels.

        d_v = 2: a plane. d_v > 2: the plane of dimensions 1 and 2, said on screen. d_v = 1: a number
        line with one row of arrows per token above it (the chain steps down the rows).
        """
        n, d_v = values.shape
        left, right, bottom, top = PLOT
        labels = VGroup(*(text(shorten_token(tok), color=VALUE, size=24) for tok in self.scenario.tokens))
        if d_v == 1:
            note = text("d_v = 1: value space is a line, one row per token", color=HIGHLIGHT, size=22)
            left += max(lab.width for lab in labels) + 0.3
            tick, low, high = _span(np.concatenate([values[:, 0], sums[:, 0]]))
            line = NumberLine(x_range=[low, high, tick], length=right - left, color=MUTED, include_numbers=False)
            line.move_to([(left + right) / 2, bottom + 0.3, 0])
            gap = min(0.6, (top - bottom - 1.2) / n)
            ys = [line.get_y() + (n - j) * gap for j in range(n)] + [line.get_y()]
            for lab, y in zip(labels, ys, strict=False):
                lab.move_to([left - 0.3, y, 0], aligned_edge=RIGHT)
            zero = DashedLine(line.n2p(0), line.n2p(0) + UP * (ys[0] - ys[-1] + 0.3), color=MUTED, stroke_opacity=0.5)
            space = VGroup(line, zero)
            at = lambda v, j: np.array([line.n2p(v[0])[0], ys[j], 0.0])  # noqa: E731
        else:
            note = text(f"showing dimensions 1 and 2 of d_v = {d_v}", color=HIGHLIGHT, size=22) if d_v > 2 else None
            top -= 0.45 if note else 0
            points = np.vstack([values[:, :2], sums[:, :2]])
            (x_tick, x0, x1), (y_tick, y0, y1) = _span(points[:, 0]), _span(points[:, 1])
            tick = max(x_tick, y_tick)
            unit = min((right - left) / (x1 - x0), (top - bottom) / (y1 - y0))
            space = plane = NumberPlane(
                x_range=[x0, x1, tick], y_range=[y0, y1, tick], x_length=unit * (x1 - x0), y_length=unit * (y1 - y0),
                axis_config={"include_numbers": False, "stroke_color": MUTED, "include_tip": False},
                background_line_style={"stroke_color": MUTED, "stroke_opacity": 0.2, "stroke_width": 1},
            ).move_to([(left + right) / 2, (top + bottom) / 2, 0])
            at = lambda v, j: plane.c2p(v[0], v[1])  # noqa: E731
        notes = [note.next_to(space, UP, buff=0.35).set_x((PLOT[0] + PLOT[1]) / 2)] if note else []
        return VGroup(space, *notes), at, labels

    def _place_labels(self, space: VGroup, labels: VGroup, base: VGroup, origin: np.ndarray) -> None:
        """Token labels beyond each arrow's tip (2-d: off the other labels, the arrows and the note)."""
        self._label_boxes = [_box(m) for m in (*space[1:], *labels)] if self.scenario.d_v == 1 else [
            _box(m) for m in space[1:]] + [b for a in base for b in _shaft_boxes(a)]
        for j in np.argsort([-a.get_length() for a in base]) if self.scenario.d_v > 1 else ():
            _place(labels[j], base[j].get_end(), base[j].get_end() - origin, self._label_boxes)
