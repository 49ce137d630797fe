"""Scene 4: the query's context vector from its past only, beside the one without the mask.

Left, the query's weights, a row per key: without the mask, and with it (the keys after the query get
0, the others more). Right, value space twice at one scale (dimensions 1 and 2, as the weighted-sum
scene draws it): without the mask every token's weighted value tip to tail, the keys after the query
marked as the future; with it the future's arrows are gone and the past's are longer, each by one
factor; each chain ends at its z_i, written under its plane. Last, why: the past had a share of the
weight (the unmasked weights of keys 1 … i add up to it), and each past weight is divided by it.

Value space is drawn on a :class:`scenes.kit.zoom.View` (an origin, a unit, a grid: the weighted-sum
scene's approach in small), fitted and drawn apart from the beats.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np
from manim import (
    DOWN,
    LEFT,
    RIGHT,
    UP,
    Arrow,
    Create,
    FadeIn,
    GrowArrow,
    LaggedStart,
    Line,
    Mobject,
    Rectangle,
    ReplacementTransform,
    VGroup,
    VMobject,
)

from attention_math.masking import renormalised_weights
from scenes.base import READING_PACE, ExplainerScene
from scenes.facts import Fact, TokenPart, position, query_number, size, value
from scenes.kit.heatmap import text_height, text_width, vector_line, vector_width, widest
from scenes.kit.labels import Obstacles, place_near
from scenes.kit.layout import BOTTOM, HALF_WIDTH, TOP
from scenes.kit.palette import CONTEXT, DIM, HIGHLIGHT, INK, KEY, MUTED, WEIGHT
from scenes.kit.palette import VALUE as PAST
from scenes.kit.text import SMALLEST_SIZE, shorten_token, text
from scenes.kit.vectors import Box, arrow, nice_span, shaft_boxes
from scenes.kit.zoom import View

__all__ = ["MaskedContext"]

FUTURE = HIGHLIGHT  # the keys after the query: the mask's colour (always named by the legend too)
SHOWN_DIMS = 2  # value space shows dimensions 1 and 2; the lines under the planes show every component
PLANE_ASPECT = 0.5  # a plane's shorter side is at least this much of its longer
TABLE_SIZES = (24, 22, SMALLEST_SIZE)
TABLE_GAP = 0.3  # between the table's columns
PLANE_GAP = 0.45  # between the table and the planes, and between the two planes
GRID_LEAST = 0.3  # grid lines closer than this are left out
Z_SIZE = 22  # the lines of z under the planes


# -- value space on screen (the weighted-sum scene's view, in small) -------------------------------------
def _shifted(view: View, dx: float) -> View:
    """The same view ``dx`` to the right (the second plane, at the first one's scale)."""
    left, right, bottom, top = view.window
    return replace(view, origin=(view.origin[0] + dx, view.origin[1]), window=(left + dx, right + dx, bottom, top))


def _widened(low: float, high: float, least: float) -> tuple[float, float]:
    grow = max(0.0, least - (high - low)) / 2
    return low - grow, high + grow


def _fit(points: np.ndarray, box: Box, rows: int = 0) -> View:
    """The largest view holding ``points`` (and 0, with a margin) in the middle of ``box``, one unit alike on
    both axes; ``rows``: d_v = 1, that many rows spread over the box's height."""
    left, right, bottom, top = box
    x_tick, x0, x1 = nice_span(points[:, 0], 6)
    if rows:
        unit = (right - left) / (x1 - x0)
        gap = (top - bottom) / rows
        return View((left - unit * x0, 0.0), unit, x_tick, box, tuple(top - gap * (j + 0.5) for j in range(rows)))
    y_tick, y0, y1 = nice_span(points[:, 1], 6)
    x0, x1 = _widened(x0, x1, PLANE_ASPECT * (y1 - y0))  # no side of the plane collapses to a strip
    y0, y1 = _widened(y0, y1, PLANE_ASPECT * (x1 - x0))
    unit = min((right - left) / (x1 - x0), (top - bottom) / (y1 - y0))
    ox = (left + right) / 2 - unit * (x0 + x1) / 2
    oy = (bottom + top) / 2 - unit * (y0 + y1) / 2
    return View((ox, oy), unit, max(x_tick, y_tick), (ox + unit * x0, ox + unit * x1, oy + unit * y0, oy + unit * y1))


def _multiples(origin: float, step: float, low: float, high: float) -> list[float]:
    first, last = math.ceil((low - origin) / step - 1e-9), math.floor((high - origin) / step + 1e-9)
    return [origin + k * step for k in range(first, last + 1) if k != 0]


def _panel(view: View) -> VGroup:
    """The view's faint grid (where its lines are not too dense) and its axes through 0."""
    left, right, bottom, top = view.window
    ox, oy = view.origin
    step = view.unit * view.tick
    while step < GRID_LEAST:
        step *= 2
    lines = VGroup(*(Line((x, bottom, 0), (x, top, 0)) for x in _multiples(ox, step, left, right)))
    if not view.rows:
        lines.add(*(Line((left, y, 0), (right, y, 0)) for y in _multiples(oy, step, bottom, top)))
    lines.set_stroke(MUTED, width=1, opacity=0.18)
    if not view.rows:
        lines.add(Line((left, oy, 0), (right, oy, 0), color=MUTED, stroke_width=2))
    lines.add(Line((ox, bottom, 0), (ox, top, 0), color=MUTED, stroke_width=2))
    return lines


# -- what the beats draw on -------------------------------------------------------------------------------
@dataclass
class _Table:
    """The query's weights, a row per key: "k_j token", without the mask, with it; under a rule, the past's sum."""

    size: float
    keys: VGroup
    unmasked: VGroup
    masked: VGroup
    heads: VGroup
    future: VGroup = field(default_factory=VGroup)  # a band behind each key after the query
    sums: VGroup = field(default_factory=VGroup)  # rule, "Σ k1–k3", each column's sum
    divisor: VMobject = field(default_factory=VMobject)  # "masked = no mask ÷ 0.60"

    @property
    def right(self) -> float:
        return float(VGroup(self.keys, self.unmasked, self.masked, self.heads).get_right()[0])


@dataclass
class _Plane:
    """One drawing of value space: its title, grid and axes, the chain, z from the origin, z's tag and line."""

    view: View
    title: Mobject
    panel: VGroup
    chain: list[Arrow]
    z_arrow: Arrow
    z_tag: Mobject
    z_line: VGroup
    ghost: Arrow | None = None  # z without the mask, faint, in the masked plane


class MaskedContext(ExplainerScene):
    """z_i from keys 1 … i only, beside z_i from every key: the future's arrows go, the past's grow."""

    reading_pace = READING_PACE

    table: _Table
    planes: tuple[_Plane, _Plane]  # without the mask, with it (the geometry tests look at them)
    legend: VGroup

    def construct(self) -> None:
        precision, q = self.scenario.precision, self.scenario.query
        causal = self.scenario.trace(causal=True)
        self.add_source("causal", causal, precision)
        self.add_source("causal_query_step", causal.query_step(q), precision)
        self.add_source("renormalised", renormalised_weights(self.trace.scaled_scores), precision)
        self.header("The context from the past only: z{}", "softmax", "value", parts=[query_number()])
        table = self.table = self._table()
        note, box = self._plane_box(table)
        unmasked, masked = self.planes = self._planes(box)
        self._without_mask(table, unmasked, note)
        self._mask(table)
        self._past_grows(unmasked, masked)
        self._context(masked)
        self._why(table)

    @property
    def _dims(self) -> int:
        return min(SHOWN_DIMS, self.scenario.d_v)

    @property
    def _rows(self) -> int:
        """d_v = 1: a row per token and one for z; else 0 (a plane)."""
        return self.scenario.n_tokens + 1 if self.scenario.d_v == 1 else 0

    # -- the table ------------------------------------------------------------------------------------
    def _table_fit(self) -> tuple[float, float, float]:
        """``(type size, pitch, y of the first row)``: the largest type whose rows keep apart and whose table leaves
        the planes half the frame; the rows as far apart as the height allows (up to 0.5), the table (heads, rows,
        the sums under a rule, the divisor) in the middle of the height."""
        n, tokens = self.scenario.n_tokens, self.scenario.tokens
        numbers = [self.text_for(value(s, "weights", *i)) for s, i in
                   (*(("step", (j,)) for j in range(n)), *(("causal", (self.scenario.query, j)) for j in range(n)))]
        under = 0.21 + text_height(SMALLEST_SIZE)  # rule, gaps and the divisor's line, beyond half a row
        for size_ in TABLE_SIZES:
            high = TOP - 0.3 - 1.5 * text_height(size_)  # the first row, under the heads
            pitch = min(0.5, (high - BOTTOM - 0.05 - under - text_height(size_) / 2) / n)
            keys = max(text_width(f"k{n} " + shorten_token(t, 8), size_) for t in tokens)
            column = max(widest(numbers, size_), text_width("no mask", size_))
            fits = keys + 2 * (TABLE_GAP + column) <= HALF_WIDTH - 0.3
            if (text_height(size_) + 0.04 <= pitch and fits) or size_ == SMALLEST_SIZE:
                slack = high - BOTTOM - 0.05 - under - text_height(size_) / 2 - n * pitch
                return size_, pitch, high - slack / 2
        raise AssertionError("unreachable: the last size is always taken")

    def _table(self) -> _Table:
        n, q, tokens = self.scenario.n_tokens, self.scenario.query, self.scenario.tokens
        s, pitch, top = self._table_fit()
        keys = VGroup(*(self.label("k{} {}", position(j), TokenPart(t, 8), size=s, color=KEY)
                        for j, t in enumerate(tokens)))
        unmasked = VGroup(*(self.number("step", "weights", j, size=s, color=INK) for j in range(n)))
        masked = VGroup(*(self.number("causal", "weights", q, j, size=s, color=WEIGHT if j <= q else MUTED)
                          for j in range(n)))
        heads = VGroup(text("no mask", size=s, color=MUTED), text("masked", size=s, color=WEIGHT))
        x = -HALF_WIDTH + max(k.width for k in keys)
        for j, key in enumerate(keys):
            key.move_to((0, top - j * pitch, 0)).align_to((-HALF_WIDTH, 0, 0), LEFT)
        for column, head in zip((unmasked, masked), heads, strict=True):
            x += TABLE_GAP + max(max(e.width for e in column), head.width)
            for j, entry in enumerate(column):
                entry.move_to((0, top - j * pitch, 0)).align_to((x, 0, 0), RIGHT)
            head.move_to((0, top + pitch / 2 + 0.12 + head.height / 2, 0)).align_to((x, 0, 0), RIGHT)
        for key, number in zip(keys, unmasked, strict=True):  # on the numbers' baseline: "k" sits on it
            key.shift(UP * (number.get_bottom()[1] - key.submobjects[0].get_bottom()[1]))
        table = _Table(s, keys, unmasked, masked, heads)
        table.future = VGroup(*(self._band(table, j, pitch) for j in range(q + 1, n)))
        self._sums(table, top - (n - 0.5) * pitch - 0.02, pitch)
        self.rows("key", dict(enumerate(keys)), keys, unmasked, masked)  # each weight in its key's row
        return table

    def _band(self, table: _Table, j: int, pitch: float) -> Rectangle:
        """A faint band of the mask's colour behind key j's row (a key after the query)."""
        left, right = -HALF_WIDTH - 0.08, table.right + 0.08
        band = Rectangle(width=right - left, height=pitch - 0.04, stroke_width=0, fill_color=FUTURE, fill_opacity=0.16)
        return band.move_to(((left + right) / 2, table.unmasked[j].get_y(), 0)).set_z_index(-1)

    def _sums(self, table: _Table, rule_y: float, pitch: float) -> None:
        """Under a rule: "Σ k1–k_i", the unmasked weights of the past added up, the masked row's sum (one); under
        them "masked = no mask ÷ (that share)"."""
        n, q, s = self.scenario.n_tokens, self.scenario.query, table.size
        rule = Line((-HALF_WIDTH, rule_y, 0), (table.right, rule_y, 0), color=MUTED, stroke_width=1.5)
        label = self._keys_label("Σ k{}–k{}", "Σ k{}", 0, q, s, MUTED)
        share = self.number("renormalised", "row_sums", q, size=s, color=INK)
        whole = self.number("causal", "weights", q, reduce="sum", size=s, color=WEIGHT)
        signs = [self.equals(value("renormalised", "row_sums", q), [value("step", "weights", j) for j in range(q + 1)]),
                 self.equals(value("causal", "weights", q, reduce="sum"), [value("causal", "weights", q, j)
                                                                           for j in range(n)])]
        y = rule_y - 0.04 - pitch / 2
        line = VGroup(label.move_to((0, y, 0)).align_to((-HALF_WIDTH, 0, 0), LEFT))
        for number, column, sign in zip((share, whole), (table.unmasked, table.masked), signs, strict=True):
            number.move_to((0, y, 0)).align_to(column, RIGHT)
            line.add(number, text(sign, size=s, color=MUTED).next_to(number, LEFT, buff=0.14))
        table.sums = VGroup(rule, line)
        divisor = self.label("masked = no mask ÷ {}", value("renormalised", "row_sums", q), size=SMALLEST_SIZE,
                             color=MUTED)
        if divisor.width > table.right + HALF_WIDTH:
            divisor = self.label("÷ {}", value("renormalised", "row_sums", q), size=SMALLEST_SIZE, color=MUTED)
        table.divisor = divisor.next_to(line, DOWN, buff=0.1).align_to((table.right, 0, 0), RIGHT)

    def _keys_label(self, many: str, one: str, first: int, last: int, s: float, color: str) -> VMobject:
        """"k1–k3" (or "k1" for one key) in a template."""
        if first == last:
            return self.label(one, position(first), size=s, color=color)
        return self.label(many, position(first), position(last), size=s, color=color)

    # -- the planes -----------------------------------------------------------------------------------
    def _plane_box(self, table: _Table) -> tuple[VMobject | None, Box]:
        """Where the planes go: right of the table, under their titles (and the note on what they show of value
        space, when not all of it), over the lines of z and the legend (made here: their height counts)."""
        left = table.right + PLANE_GAP
        self.legend = self._legend(left)
        z_rows = 1 if self._z_fits((HALF_WIDTH - left - PLANE_GAP) / 2 + PLANE_GAP / 2) else 2
        bottom = BOTTOM + 0.05 + self.legend.height + 0.12 + z_rows * (text_height(Z_SIZE) + 0.08) + 0.12
        box: Box = (left, HALF_WIDTH, bottom, TOP - 0.45)
        if self.scenario.d_v == 2:
            return None, box
        if self.scenario.d_v == 1:
            note = self.label("d_v = {}: a line, a row per arrow", size("d_v"), size=SMALLEST_SIZE, color=MUTED)
        else:
            note = self.label("dimensions {} and {} of d_v = {}", position(0, "d_v"), position(1, "d_v"), size("d_v"),
                              size=SMALLEST_SIZE, color=MUTED)
        note.move_to(((box[0] + box[1]) / 2, box[3] - note.height / 2, 0))
        return note, (box[0], box[1], box[2], box[3] - note.height - 0.15)

    def _z_fits(self, width: float) -> bool:
        """Does each line of z fit under its own plane (``width`` each)?"""
        return all(vector_width(self, "z", trace, "context", self.scenario.query, Z_SIZE) <= width
                   for trace in ("trace", "causal"))

    def _legend(self, left: float) -> VGroup:
        """Under the planes: which colour is the past (keys 1 … i), which the future, which z the faint one."""
        n, q = self.scenario.n_tokens, self.scenario.query
        items = [(PAST, 1.0, self._keys_label("k{}–k{}: the past", "k{}: the past", 0, q, SMALLEST_SIZE, PAST))]
        if q < n - 1:
            items.append((FUTURE, 1.0, self._keys_label("k{}–k{}: the future", "k{}: the future", q + 1, n - 1,
                                                        SMALLEST_SIZE, FUTURE)))
        if not self._rows:  # the masked plane shows z without the mask, faint
            items.append((CONTEXT, DIM, text("faint: z without the mask", size=SMALLEST_SIZE, color=MUTED)))
        legend = VGroup(*(VGroup(Line(LEFT * 0.2, RIGHT * 0.2, color=color, stroke_width=5, stroke_opacity=opacity),
                                 label).arrange(RIGHT, buff=0.12) for color, opacity, label in items))
        legend.arrange(RIGHT, buff=0.4)
        if legend.width > HALF_WIDTH - left:
            legend.arrange(DOWN, buff=0.08, aligned_edge=LEFT)
        return legend.move_to(((left + HALF_WIDTH) / 2, BOTTOM + 0.05 + legend.height / 2, 0))

    def _points(self, source: str, field_name: str) -> np.ndarray:
        obj, _ = self.sources[source]
        return np.asarray(getattr(obj, field_name))[:, : self._dims]

    def _planes(self, box: Box) -> tuple[_Plane, _Plane]:
        """Both planes at one scale, fitted to both chains (and both z), side by side in ``box``."""
        width = (box[1] - box[0] - PLANE_GAP) / 2
        points = np.vstack([self._points("step", "running_context"),
                            self._points("causal_query_step", "running_context"), np.zeros((1, self._dims))])
        left = _fit(points, (box[0], box[0] + width, box[2], box[3]), self._rows)
        views = (left, _shifted(left, width + PLANE_GAP))
        planes = (self._plane(views[0], "step", "trace", "no mask"),
                  self._plane(views[1], "causal_query_step", "causal", "masked"))
        self._z_lines(planes, box)
        return planes

    def _plane(self, view: View, step: str, trace: str, title: str) -> _Plane:
        q, n = self.scenario.query, self.scenario.n_tokens
        chain = [self._link(view, step, j) for j in (range(n) if step == "step" else range(q + 1))]
        z_arrow = self._z_arrow(view, trace, CONTEXT, 4)
        ghost = self._z_arrow(view, "trace", CONTEXT, 3).set_opacity(DIM) if trace == "causal" and not view.rows \
            else None
        tag = self.label("z{}", query_number(), size=22, color=CONTEXT)
        left, right, bottom, top = view.window
        arrows = [*chain, z_arrow, *([ghost] if ghost else [])]
        taken = Obstacles([b for a in arrows for b in shaft_boxes(a, 0.08, 0.06)], box_pad=0.06)
        if not place_near(tag, z_arrow.get_end(), taken, (left - 0.2, right + 0.2, bottom, top + 0.1)):
            tag.next_to(z_arrow.get_end(), UP, buff=0.1)
        line = vector_line(self, "z", trace, "context", q, size=Z_SIZE, color=CONTEXT)
        head = text(title, size=SMALLEST_SIZE + 2, color=WEIGHT if trace == "causal" else MUTED)
        head.move_to(((left + right) / 2, TOP - 0.2, 0))
        return _Plane(view, head, _panel(view), chain, z_arrow, tag, line, ghost)

    def _link(self, view: View, step: str, j: int) -> Arrow:
        """w_j v_j from the running sum before it to the running sum after it (key j's link of the chain)."""
        facts = [value(step, "running_context", j, c) for c in range(self._dims)]
        start = self._at([value(step, "running_context", j - 1, c) for c in range(self._dims)]) if j else np.zeros(2)
        color = PAST if j <= self.scenario.query else FUTURE
        link = arrow(view.point(start, j), view.point(self._at(facts), j), color=color, width=5, tip=0.18)
        return self.plot(link, view.axis(j), *facts, anchor="end").set_z_index(1)  # over z, which it adds up to

    def _z_arrow(self, view: View, trace: str, color: str, width: float) -> Arrow:
        facts = [value(trace, "context", self.scenario.query, c) for c in range(self._dims)]
        row = self.scenario.n_tokens if view.rows else 0
        z = arrow(view.point((0.0, 0.0), row), view.point(self._at(facts), row), color=color, width=width, tip=0.2)
        return self.plot(z, view.axis(row), *facts, anchor="end").set_z_index(0 if width >= 4 else -1)

    def _at(self, facts: list[Fact]) -> np.ndarray:
        return np.array([self.value_of(fact) for fact in facts] + [0.0] * (2 - len(facts)))

    def _z_lines(self, planes: tuple[_Plane, _Plane], box: Box) -> None:
        """Each z under its plane; where one is wider than its plane, both on two lines under the planes, named."""
        y = BOTTOM + 0.05 + self.legend.height + 0.12
        if self._z_fits((box[1] - box[0] - PLANE_GAP) / 2 + PLANE_GAP / 2):
            for plane in planes:
                left, right = plane.view.window[0], plane.view.window[1]
                plane.z_line.move_to(((left + right) / 2, y + plane.z_line.height / 2, 0))
            return
        for plane, name in zip(planes, ("no mask", "masked"), strict=True):
            plane.z_line.add(text(name, size=SMALLEST_SIZE, color=MUTED).next_to(plane.z_line, LEFT, buff=0.2))
        both = VGroup(*(plane.z_line for plane in planes)).arrange(DOWN, buff=0.08, aligned_edge=RIGHT)
        both.move_to(((box[0] + box[1]) / 2, y + both.height / 2, 0))

    # -- the beats --------------------------------------------------------------------------------------
    def _without_mask(self, table: _Table, plane: _Plane, note: VMobject | None) -> None:
        items = self.legend[: 2 if self.scenario.query < self.scenario.n_tokens - 1 else 1]
        self.beat(
            f"Without the mask, z{self.cite(query_number())} of '{self.scenario.query_token}' adds every token's "
            "weighted value, tip to tail.",
            FadeIn(table.heads[0], table.keys, table.unmasked), FadeIn(plane.title), Create(plane.panel),
            *([FadeIn(note)] if note is not None else []),
            LaggedStart(*(GrowArrow(a) for a in plane.chain), lag_ratio=0.15), GrowArrow(plane.z_arrow),
            FadeIn(plane.z_tag, plane.z_line), FadeIn(items), run_time=2.5, wait=1.0,
        )

    def _mask(self, table: _Table) -> None:
        n, q, token = self.scenario.n_tokens, self.scenario.query, self.scenario.query_token
        if q == n - 1:
            said = f"'{token}' is the last token: no key comes after it, so the mask changes none of its weights."
        else:
            said = (f"With the mask, {self.quote(q, 'query')} may use only itself and the tokens before it: the "
                    f"future's weights become {self.fmt('causal', 'weights', q, q + 1)}, the past's grow.")
        self.beat(said, FadeIn(table.heads[1], table.masked), FadeIn(table.future), run_time=1.5, wait=1.2)

    def _past_grows(self, unmasked: _Plane, masked: _Plane) -> None:
        n, q = self.scenario.n_tokens, self.scenario.query
        if q == n - 1:
            said = "So every arrow stays as it was, and the chain ends where it did."
        elif q == 0:
            said = (f"The future's arrows are gone; its own arrow is left, at full length: its weight grew from "
                    f"{self.fmt('step', 'weights', 0)} to {self.fmt('causal', 'weights', 0, 0)}.")
        else:
            said = (f"The future's arrows are gone; each past arrow grows as its weight did: k{self.cite(position(0))} "
                    f"from {self.fmt('step', 'weights', 0)} to {self.fmt('causal', 'weights', q, 0)}.")
        self.beat(said, FadeIn(masked.title), Create(masked.panel),
                  *(ReplacementTransform(a.copy(), b) for a, b in zip(unmasked.chain, masked.chain, strict=False)),
                  run_time=2.0, wait=1.2)

    def _context(self, plane: _Plane) -> None:
        d_v, q = self.scenario.d_v, self.scenario.query
        if q == self.scenario.n_tokens - 1:
            said = f"z{self.cite(query_number())} is the same with the mask and without it."
        else:
            said = f"The chain now ends elsewhere: z{self.cite(query_number())} = ("
            said += ", ".join(self.fmt("causal", "context", q, c) for c in range(d_v)) + ") instead of ("
            said += ", ".join(self.fmt("trace", "context", q, c) for c in range(d_v)) + ")."
        extra = [FadeIn(plane.ghost), FadeIn(self.legend[-1])] if plane.ghost is not None else []
        self.beat(said, GrowArrow(plane.z_arrow), FadeIn(plane.z_tag, plane.z_line), *extra, run_time=1.8, wait=1.2)

    def _why(self, table: _Table) -> None:
        q = self.scenario.query
        share = value("renormalised", "row_sums", q)
        if q == self.scenario.n_tokens - 1:
            said = f"The past already had all of the weight, {self.cite(share)}: there is nothing to share out."
        else:
            said = (f"Why: the past had {self.cite(share)} of the weight; each past weight is divided by "
                    f"{self.cite(share)}, so they add up to one again.")
        note = [FadeIn(self.rounding_note())] if self.rounding_shows else []
        self.beat(said + self.said_rounded(), FadeIn(table.sums), FadeIn(table.divisor, shift=UP * 0.1), *note,
                  run_time=1.5, wait=2.0)
