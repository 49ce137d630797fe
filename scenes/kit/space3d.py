"""Spaces drawn flat: a 3-d space in an oblique view, a plane or a line, on a 2-d scene.

An oblique drawing places the point ``(x, y, z)`` at ``origin + x·e₁ + y·e₂ + z·e₃`` with
``e₁`` to the right, ``e₂`` up and ``e₃`` toward the viewer, down and to the left, foreshortened
by half. It is a fixed linear map, so nothing is ever drawn in the wrong order (Cairo has no
depth buffer) and it costs what a 2-d drawing costs. :class:`SpaceAxes` draws one, two or three
axes this way and maps coordinates to the screen with ``c2p`` like manim's axes, so a test can
map a plotted point back to its numbers. A plane or a line is fitted to its points
(:func:`plane_size`, :func:`fit_spans`): they use the drawing, with the origin in view where
it costs little. :class:`Obstacles` holds what labels keep off (texts, lines, dots, rings) and
:func:`place_label` puts a label beside its point, clear of all of it, with a leader line that
crosses nothing when the label must sit further away.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
from manim import RIGHT, UP, Arrow, Line, Mobject, Polygon, VGroup, VMobject

from scenes.kit.palette import MUTED
from scenes.kit.vectors import Box, box_of

__all__ = [
    "DEPTH",
    "LEADER",
    "Obstacles",
    "Placed",
    "SpaceAxes",
    "drawn_size",
    "fit_spans",
    "leader",
    "place_axis_name",
    "place_label",
    "plane_size",
    "span_of",
]

DEPTH = (math.radians(215.0), 0.5)
"""The third axis on screen: its angle (toward the viewer, down and to the left) and its
foreshortening."""

ORIGIN_COST = 1.4
"""A plane shows its origin when that widens the range of an axis by at most this factor."""


def span_of(values: np.ndarray, *, floor: float | Sequence[float] = 0.12, margin: float = 0.1,
            reach: float | None = None) -> list[tuple[float, float]]:
    """Per column of ``values``, a range holding the column and 0, with a ``margin`` (of the
    widest range) below and ``reach`` (as much, unless given) above.

    Every range reaches at least ``floor`` (one for all, or one per column) of the widest range
    on its positive side (an axis whose numbers are all 0 still shows where it points) and a
    little below 0.

    >>> span_of(np.array([[0.0, 1.0], [1.0, 2.0]]))
    [(-0.2, 1.2), (-0.2, 2.2)]
    """
    columns = np.atleast_2d(np.asarray(values, dtype=float))
    lows = np.minimum(columns.min(axis=0), 0.0)
    highs = np.maximum(columns.max(axis=0), 0.0)
    widest = max(float(np.max(highs - lows)), 1e-3)
    margin, reach = margin * widest, (margin if reach is None else reach) * widest
    floors = [floor] * len(lows) if isinstance(floor, float | int) else list(floor)
    return [
        (round(min(low - margin, -margin), 6), round(max(high + reach, least * widest), 6))
        for low, high, least in zip(lows.tolist(), highs.tolist(), floors, strict=True)
    ]


def _reach(values: np.ndarray, keep_origin: bool) -> tuple[np.ndarray, np.ndarray]:
    """Per column, the range its points need: theirs, with 0 where it costs little (or always),
    never narrower than a quarter of the widest (points that agree on an axis still spread)."""
    columns = np.atleast_2d(np.asarray(values, dtype=float))
    low, high = columns.min(axis=0), columns.max(axis=0)
    widest = max(float(np.max(high - low)), 1e-3)
    with_low, with_high = np.minimum(low, 0.0), np.maximum(high, 0.0)
    cheap = with_high - with_low <= ORIGIN_COST * np.maximum(high - low, 0.25 * widest)
    take = cheap | keep_origin
    low, high = np.where(take, with_low, low), np.where(take, with_high, high)
    least = 0.25 * max(float(np.max(high - low)), 1e-3)
    middle, half = (low + high) / 2, np.maximum((high - low) / 2, least / 2)
    return middle - half, middle + half


def plane_size(values: np.ndarray, width: float, height: float, inset: float, *, keep_origin: bool = False,
               least: float = 0.75, low: float = 0.0) -> tuple[float, float]:
    """The size of a plane (or the length of a line, height 0) that holds its points at one unit
    on both axes, ``inset`` in from its edges, within ``width`` × ``height``; never flatter (or
    narrower) than ``least`` of its other side, nor lower than ``low``, room allowing.

    >>> plane_size(np.array([[0.0, 0.0], [2.0, 1.0]]), 4.0, 4.0, 0.5)
    (4.0, 3.0)
    """
    low_, high = _reach(values, keep_origin)
    if len(low_) == 1:
        return width, 0.0
    extent = high - low_
    unit = min((width - 2 * inset) / extent[0], (height - 2 * inset) / extent[1])
    w, h = (extent * unit + 2 * inset).tolist()
    w = max(w, min(width, least * h))
    return round(w, 6), round(max(h, min(height, max(least * w, low))), 6)


def fit_spans(values: np.ndarray, width: float, height: float, inset: float, *,
              keep_origin: bool = False) -> list[tuple[float, float]]:
    """The spans of axes whose plane fills ``width`` × ``height`` exactly (a line: ``width``), the
    points ``inset`` in from its edges at one unit on both axes; room to spare goes toward the
    origin when it brings the origin in, else to both sides alike.

    >>> fit_spans(np.array([[1.0, 1.0], [3.0, 2.0]]), 4.0, 4.0, 0.5)  # the room to spare brings 0 in
    [(0.666667, 3.333333), (-0.333333, 2.333333)]
    """
    low, high = _reach(values, keep_origin)
    sizes = (width, height)[: len(low)]
    unit = min((size - 2 * inset) / extent for size, extent in zip(sizes, (high - low).tolist(), strict=True))
    spans = []
    for size, lo, hi in zip(sizes, low.tolist(), high.tolist(), strict=True):
        spare = size / unit - (hi - lo) - 2 * inset / unit
        if 0.0 < lo <= spare + 1e-9:  # the origin below the points comes into view
            spare, lo = max(spare - lo, 0.0), 0.0
        elif -spare - 1e-9 <= hi < 0.0:
            spare, hi = max(spare + hi, 0.0), 0.0
        margin = inset / unit + spare / 2
        spans.append((round(lo - margin, 6), round(hi + margin, 6)))
    return spans


def _basis(dims: int) -> list[np.ndarray]:
    angle, ratio = DEPTH
    depth = ratio * np.array([math.cos(angle), math.sin(angle), 0.0])
    return [np.array(RIGHT, dtype=float), np.array(UP, dtype=float), depth][:dims]


def _corners(spans: Sequence[tuple[float, float]]) -> tuple[np.ndarray, np.ndarray]:
    """The lowest and highest screen offsets of the spans' box, drawn at unit 1."""
    basis = _basis(len(spans))
    corners = np.array([sum((c * b for c, b in zip(corner, basis, strict=True)), np.zeros(3))
                        for corner in itertools.product(*spans)])
    return corners.min(axis=0), corners.max(axis=0)


def _unit(spans: Sequence[tuple[float, float]], width: float, height: float) -> float:
    low, high = _corners(spans)
    extent = high - low
    unit = width / max(extent[0], 1e-9)
    if extent[1] > 1e-9:
        unit = min(unit, height / extent[1])
    return float(unit)


def drawn_size(spans: Sequence[tuple[float, float]], width: float, height: float) -> tuple[float, float]:
    """Width and height of the spans' box as :class:`SpaceAxes` draws it in ``width`` × ``height``."""
    low, high = _corners(spans)
    extent = (high - low) * _unit(spans, width, height)
    return float(extent[0]), float(extent[1])


class SpaceAxes(VGroup):
    """One, two or three axes in the plane of the screen, ``c2p`` from coordinates to a point.

    Parameters
    ----------
    spans
        ``(low, high)`` of each axis, in the space's own numbers; one span draws a line, two a
        plane, three an oblique 3-d view. Every axis has the same unit. Each axis is drawn
        where the others are 0, or at their nearest end when 0 is out of their span.
    width, height
        The box the spans' box (projected) fills, as far as the unit allows.
    center
        Where the middle of the spans' box is drawn.
    color, stroke_width
        Of the axes, each an arrow toward its positive end.
    """

    def __init__(
        self,
        spans: Sequence[tuple[float, float]],
        width: float,
        height: float,
        *,
        center: Sequence[float] = (0.0, 0.0, 0.0),
        color: str = MUTED,
        stroke_width: float = 2.0,
    ) -> None:
        super().__init__()
        self.spans = [(float(low), float(high)) for low, high in spans]
        self.dims = len(self.spans)
        basis = _basis(self.dims)
        low, high = _corners(self.spans)
        unit = _unit(self.spans, width, height)
        origin = np.asarray(center, dtype=float) - unit * (low + high) / 2
        # the map itself, kept as points that move with the group: origin, origin + unit·e_m
        frame = VMobject(stroke_width=0, fill_opacity=0)
        frame.set_points(np.array([origin, *(origin + unit * b for b in basis)] + [origin] * (3 - self.dims)))
        self.frame = frame
        self.lines = VGroup(*(
            Arrow(self.c2p(*self._on_axis(m, lo)), self.c2p(*self._on_axis(m, hi)), buff=0, color=color,
                  stroke_width=stroke_width, tip_length=0.14, max_tip_length_to_length_ratio=0.3)
            for m, (lo, hi) in enumerate(self.spans)
        ))
        self.add(frame, self.lines)

    def _on_axis(self, m: int, x: float) -> list[float]:
        return [x if k == m else min(max(0.0, lo), hi) for k, (lo, hi) in enumerate(self.spans)]

    @property
    def origin(self) -> np.ndarray:
        return np.array(self.frame.points[0], dtype=float)

    def unit_vector(self, m: int) -> np.ndarray:
        """The screen vector of one unit along axis ``m``."""
        vector: np.ndarray = np.array(self.frame.points[m + 1], dtype=float) - self.origin
        return vector

    def c2p(self, *coordinates: float) -> np.ndarray:
        """The screen point of ``coordinates`` (one per axis)."""
        if len(coordinates) != self.dims:
            raise ValueError(f"{self.dims} coordinates expected, got {len(coordinates)}")
        point = self.origin
        for m, x in enumerate(coordinates):
            point = point + float(x) * self.unit_vector(m)
        return point

    def sheet(self, color: str, *, opacity: float = 0.08, beyond: float = 0.0) -> Polygon | None:
        """A faint quadrilateral on the spans of the first axis and the last (the floor of a 3-d
        view, the plane itself), reaching ``beyond`` further along the last axis at both ends (a
        plane's strips above and below its axes, for labels); ``None`` for a line."""
        if self.dims < 2:
            return None
        (a0, a1), (b0, b1) = self.spans[0], self.spans[-1]
        up = self.unit_vector(self.dims - 1)
        more = beyond * up / max(float(np.linalg.norm(up)), 1e-9)

        def at(a: float, b: float) -> np.ndarray:
            coordinates = [0.0] * self.dims
            coordinates[0], coordinates[-1] = a, b
            return self.c2p(*coordinates)

        return Polygon(at(a0, b0) - more, at(a1, b0) - more, at(a1, b1) + more, at(a0, b1) + more, stroke_width=0,
                       fill_color=color, fill_opacity=opacity)


# -- what labels keep off ----------------------------------------------------------------------


def _segments_enter_boxes(starts: np.ndarray, ends: np.ndarray, lows: np.ndarray, highs: np.ndarray) -> np.ndarray:
    """Which segments enter which boxes (Liang–Barsky clipping), broadcast over the leading axes;
    the last axis holds x and y."""
    d = ends - starts
    flat = np.abs(d) < 1e-12
    with np.errstate(divide="ignore", invalid="ignore"):
        a, b = (lows - starts) / d, (highs - starts) / d
    within = (starts >= lows) & (starts <= highs)
    enter = np.where(flat, np.where(within, -np.inf, np.inf), np.minimum(a, b))
    leave = np.where(flat, np.where(within, np.inf, -np.inf), np.maximum(a, b))
    result: np.ndarray = np.maximum(enter.max(axis=-1), 0.0) <= np.minimum(leave.min(axis=-1), 1.0)
    return result


def _point_to_segments(point: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """The distance from each point to each segment (broadcast: one point to many segments, or
    many points to one segment)."""
    d = ends - starts
    t = np.clip(np.sum((point - starts) * d, axis=-1) / np.maximum(np.sum(d * d, axis=-1), 1e-18), 0.0, 1.0)
    result: np.ndarray = np.linalg.norm(starts + t[..., None] * d - point, axis=-1)
    return result


def _cross(u: np.ndarray, v: np.ndarray) -> np.ndarray:
    result: np.ndarray = u[..., 0] * v[..., 1] - u[..., 1] * v[..., 0]
    return result


class Obstacles:
    """What labels keep off: boxes (texts), segments (lines, arrows, leader lines) and discs (dots,
    rings), each with a margin of its kind. A leader line keeps off all but lines and arrows (it
    may cross an axis, never another leader line)."""

    BOX_PAD, LINE_PAD, DISC_PAD = 0.1, 0.06, 0.05
    NEAREST = 0.06

    def __init__(self) -> None:
        self.boxes: list[Box] = []
        self.segments: list[tuple[float, float, float, float]] = []
        self.leaders: list[tuple[float, float, float, float]] = []
        self.discs: list[tuple[float, float, float]] = []
        self.dots: list[int] = []  # the discs that are labelled points

    def add_box(self, box: Box) -> None:
        self.boxes.append(tuple(float(v) for v in box))  # type: ignore[arg-type]

    def add_segment(self, start: np.ndarray, end: np.ndarray, *, leader: bool = False) -> None:
        """A straight line (``leader``: a leader line, which other leader lines keep off)."""
        segment = (float(start[0]), float(start[1]), float(end[0]), float(end[1]))
        self.segments.append(segment)
        if leader:
            self.leaders.append(segment)

    def add_line(self, line: Line) -> None:
        """A straight line or an arrow (its tip as a disc too)."""
        self.add_segment(line.get_start(), line.get_end())
        if line.has_tip():
            tip = line.get_tip()
            self.add_disc(tip.get_center(), max(tip.width, tip.height) / 2)

    def add_disc(self, centre: np.ndarray, radius: float, *, dot: bool = False) -> int:
        """A dot (a labelled point: ``dot``), a ring or a tip; returns its number, for
        :meth:`leaders_clear` to pass by."""
        self.discs.append((float(centre[0]), float(centre[1]), float(radius)))
        if dot:
            self.dots.append(len(self.discs) - 1)
        return len(self.discs) - 1

    def unmistaken(self, boxes: np.ndarray, gaps: np.ndarray, point: np.ndarray) -> np.ndarray:
        """Which label boxes (``gaps`` from the dot at ``point``) keep further from every other dot
        than from their own (by ``NEAREST`` at least), or a clear :data:`LEADER` from them: a label
        is read as naming the dot beside it. Dots on the same spot share their labels' places."""
        d = np.array(self.discs)[self.dots] if self.dots else np.zeros((0, 3))
        d = d[np.hypot(d[:, 0] - point[0], d[:, 1] - point[1]) > 0.08]
        if len(d) == 0:
            return np.ones(len(boxes), dtype=bool)
        dx = np.maximum(np.maximum(boxes[:, 0, None] - d[:, 0], d[:, 0] - boxes[:, 1, None]), 0.0)
        dy = np.maximum(np.maximum(boxes[:, 2, None] - d[:, 1], d[:, 1] - boxes[:, 3, None]), 0.0)
        away = np.hypot(dx, dy) - d[:, 2]
        result: np.ndarray = np.all(away >= np.minimum(gaps + self.NEAREST, LEADER)[:, None], axis=1)
        return result

    def add_all(self, mobs: Iterable[Mobject]) -> None:
        """Texts by their boxes, lines and arrows by their segments."""
        for mob in mobs:
            if isinstance(mob, Line):
                self.add_line(mob)
            else:
                self.add_box(box_of(mob))

    def box_is_clear(self, box: Box) -> bool:
        return bool(self.clear(np.array([box], dtype=float))[0])

    def clear(self, boxes: np.ndarray) -> np.ndarray:
        """Which of ``boxes`` (rows of left, right, bottom, top) keep off every obstacle."""
        left, right, bottom, top = (boxes[:, k, None] for k in range(4))
        ok = np.ones(len(boxes), dtype=bool)
        if self.boxes:
            b, pad = np.array(self.boxes), self.BOX_PAD
            ok &= ~np.any((left < b[:, 1] + pad) & (b[:, 0] < right + pad) & (bottom < b[:, 3] + pad)
                          & (b[:, 2] < top + pad), axis=1)
        if self.discs:
            d = np.array(self.discs)
            dx = np.maximum(np.maximum(left - d[:, 0], d[:, 0] - right), 0.0)
            dy = np.maximum(np.maximum(bottom - d[:, 1], d[:, 1] - top), 0.0)
            ok &= ~np.any(dx**2 + dy**2 < (d[:, 2] + self.DISC_PAD) ** 2, axis=1)
        if self.segments:
            s, pad = np.array(self.segments), self.LINE_PAD
            lows = np.stack([boxes[:, 0], boxes[:, 2]], axis=1)[:, None, :] - pad
            highs = np.stack([boxes[:, 1], boxes[:, 3]], axis=1)[:, None, :] + pad
            ok &= ~np.any(_segments_enter_boxes(s[None, :, :2], s[None, :, 2:], lows, highs), axis=1)
        return ok

    def segment_is_clear(self, start: np.ndarray, end: np.ndarray, skip: Sequence[int] = ()) -> bool:
        """May a leader line run here: does it keep off every box, disc (but those numbered in
        ``skip``) and leader line?"""
        return bool(self.leaders_clear(np.array([start[:2]], dtype=float), np.array([end[:2]], dtype=float), skip)[0])

    def leaders_clear(self, starts: np.ndarray, ends: np.ndarray, skip: Sequence[int] = (), *,
                      strict: bool = False) -> np.ndarray:
        """Which of the segments ``starts[k]``–``ends[k]`` (rows of x, y) may be leader lines: keep
        off every box, disc (but those numbered in ``skip``) and leader line (``strict``: and
        every line and arrow too)."""
        p, q = starts[:, None, :], ends[:, None, :]
        ok = np.ones(len(starts), dtype=bool)
        if self.boxes:
            b, pad = np.array(self.boxes), 0.03
            lows, highs = b[None, :, [0, 2]] - pad, b[None, :, [1, 3]] + pad
            ok &= ~np.any(_segments_enter_boxes(p, q, lows, highs), axis=1)
        kept = [disc for k, disc in enumerate(self.discs) if k not in skip]
        if kept:
            d = np.array(kept)
            ok &= ~np.any(_point_to_segments(d[None, :, :2], p, q) < d[:, 2] + 0.02, axis=1)
        lines = self.segments if strict else self.leaders
        if lines:
            s = np.array(lines)
            ok &= ~np.any(_segment_distance(p, q, s[None, :, :2], s[None, :, 2:]) < 0.03, axis=1)
        return ok


def _segment_distance(p: np.ndarray, q: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The distance between segments p–q and a–b (0 where they cross), broadcast."""
    crossing = (_cross(q - p, a - p) * _cross(q - p, b - p) < 0) & (_cross(b - a, p - a) * _cross(b - a, q - a) < 0)
    near = np.minimum.reduce([_point_to_segments(p, a, b), _point_to_segments(q, a, b),
                              _point_to_segments(a, p, q), _point_to_segments(b, p, q)])
    result: np.ndarray = np.where(crossing, 0.0, near)
    return result


# -- labels ------------------------------------------------------------------------------------

TURNS = (0, 30, -30, 60, -60, 90, -90, 120, -120, 150, -150, 180)
GAPS = (0.04, 0.1, 0.18, 0.28, 0.4, 0.55, 0.72, 0.9)
LEADER = 0.25
"""From this gap on, a label is far enough from its point to want a leader line to it."""


@dataclass(frozen=True)
class Placed:
    """Where a label went: its gap from its point's edge and the ends of its leader line, if any."""

    gap: float
    leader: tuple[np.ndarray, np.ndarray] | None


def _spot(point: np.ndarray, width: float, height: float, u: np.ndarray, gap: float) -> Box:
    """The box of a ``width`` × ``height`` label whose edge, not its centre, is ``gap`` from
    ``point`` along ``u``."""
    reach = min(width / 2 / max(abs(u[0]), 1e-6), height / 2 / max(abs(u[1]), 1e-6))
    x, y = point[0] + (reach + gap) * u[0], point[1] + (reach + gap) * u[1]
    return (x - width / 2, x + width / 2, y - height / 2, y + height / 2)


def _leader_ends(boxes: np.ndarray, point: np.ndarray, radius: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Leader lines from the edge (``radius``) around ``point`` to just short of each box (rows of
    left, right, bottom, top): to its nearest point, then to points along the edges that face
    the point. Returns starts and ends (box, choice, x y) and which choices exist."""
    left, right, bottom, top = (boxes[:, k, None] for k in range(4))
    x, y = float(point[0]), float(point[1])
    fractions = np.array([0.5, 0.15, 0.85])[None, :]
    across = np.where(y < bottom, bottom, top) + 0 * fractions  # the bottom or top edge, where it faces
    beside = np.where(x < left, left, right) + 0 * fractions
    xs = np.concatenate([np.clip(x, left, right), left + fractions * (right - left), beside], axis=1)
    ys = np.concatenate([np.clip(y, bottom, top), across, bottom + fractions * (top - bottom)], axis=1)
    exists = np.concatenate([np.ones_like(left, dtype=bool), ((y < bottom) | (y > top)) + 0 * fractions > 0,
                             ((x < left) | (x > right)) + 0 * fractions > 0], axis=1)
    targets = np.stack([xs, ys], axis=-1)
    along = targets - np.array([x, y])
    u = along / np.maximum(np.linalg.norm(along, axis=-1, keepdims=True), 1e-9)
    return np.array([x, y]) + u * radius, targets - u * 0.04, exists


def _radial(point: np.ndarray, width: float, height: float, angle: float, radius: float,
            gaps: Sequence[float], turns: Sequence[float] = TURNS) -> list[tuple[Box, float]]:
    """Boxes beside ``point``, nearer first, each way round from ``angle`` by ``turns``; with
    their gaps."""
    spots = []
    for gap in gaps:
        for turn in turns:
            u = np.array([math.cos(angle + math.radians(turn)), math.sin(angle + math.radians(turn)), 0.0])
            spots.append((_spot(point, width, height, u, radius + gap), gap))
    return spots


def _anywhere(point: np.ndarray, width: float, height: float, area: Box, radius: float, reach: float,
              step: float = 0.08) -> list[tuple[Box, float]]:
    """Every box of the size in ``area`` on a grid, at most ``reach`` from the dot's edge, nearest
    to ``point`` first; with their gaps."""
    xs, ys = np.meshgrid(np.arange(area[0], area[1] - width + 1e-9, step),
                         np.arange(area[2], area[3] - height + 1e-9, step))
    boxes = np.stack([xs.ravel(), xs.ravel() + width, ys.ravel(), ys.ravel() + height], axis=1)
    dx = np.maximum(np.maximum(boxes[:, 0] - point[0], point[0] - boxes[:, 1]), 0.0)
    dy = np.maximum(np.maximum(boxes[:, 2] - point[1], point[1] - boxes[:, 3]), 0.0)
    gaps = np.hypot(dx, dy) - radius
    order = [k for k in np.argsort(gaps, kind="stable").tolist() if 0 < gaps[k] <= reach]
    return [(tuple(boxes[k].tolist()), float(gaps[k])) for k in order]


def place_label(
    label: Mobject, point: np.ndarray, direction: np.ndarray, obstacles: Obstacles, area: Box, *,
    radius: float = 0.0, gaps: Sequence[float] = GAPS, own: Sequence[int] = (), reach: float = 0.0,
) -> Placed | None:
    """Move ``label`` beside ``point`` (a dot of ``radius``), preferably along ``direction``.

    Nearer places first, each at one of ``gaps`` from the dot, then anywhere in ``area`` up to
    ``reach`` from it, nearest first; each must lie inside ``area`` and keep off ``obstacles``;
    from :data:`LEADER` on, a leader line from the dot to the label must cross nothing either
    (the discs numbered ``own``, the point's dot and ring, aside), preferably not even a line or
    an arrow. The label's box (and its
    leader) join the obstacles. Returns where it went, or ``None`` (the label is not moved) if
    nowhere.
    """
    p = np.asarray(point, dtype=float)
    angle = math.atan2(direction[1], direction[0]) if np.linalg.norm(direction[:2]) > 1e-6 else math.pi / 4
    left, right, bottom, top = box_of(label)
    width, height = right - left, top - bottom
    near = _radial(p, width, height, angle, radius, gaps)
    placed = (_first_clear(label, near, p, radius, obstacles, area, own, strict=True)
              or _first_clear(label, near, p, radius, obstacles, area, own, strict=False))
    spots = _anywhere(p, width, height, area, radius, reach) if placed is None and reach > 0 else []
    for strict in (True, False):
        for k in range(0, len(spots), 400):
            placed = placed or _first_clear(label, spots[k:k + 400], p, radius, obstacles, area, own, strict=strict)
    return placed


def _first_clear(label: Mobject, spots: list[tuple[Box, float]], point: np.ndarray, radius: float,
                 obstacles: Obstacles, area: Box, own: Sequence[int], *, strict: bool) -> Placed | None:
    """Put ``label`` on the first of ``spots`` inside ``area``, clear of ``obstacles`` and, if far
    from its point, with a clear leader line (``strict``: crossing no line or arrow either)."""
    boxes = np.array([box for box, _ in spots], dtype=float)
    gaps = np.array([gap for _, gap in spots])
    inside = (area[0] <= boxes[:, 0]) & (boxes[:, 1] <= area[1]) & (area[2] <= boxes[:, 2]) & (boxes[:, 3] <= area[3])
    fit = np.flatnonzero(inside & obstacles.clear(boxes) & obstacles.unmistaken(boxes, gaps, point))
    for chunk in (fit[k:k + 40] for k in range(0, len(fit), 40)):
        starts, ends, exists = _leader_ends(boxes[chunk], point, radius + 0.02)
        clear = exists & obstacles.leaders_clear(starts.reshape(-1, 2), ends.reshape(-1, 2), own,
                                                 strict=strict).reshape(exists.shape)
        for n, k in enumerate(chunk.tolist()):
            if gaps[k] >= LEADER and not clear[n].any():
                continue
            line = None
            if gaps[k] >= LEADER:
                choice = int(np.argmax(clear[n]))
                line = (np.array([*starts[n, choice], 0.0]), np.array([*ends[n, choice], 0.0]))
                obstacles.add_segment(*line, leader=True)
            _put(label, spots[k][0], obstacles)
            return Placed(float(gaps[k]), line)
    return None


def place_axis_name(label: Mobject, axis: Line, obstacles: Obstacles, area: Box, *, beyond_first: bool = True) -> bool:
    """Put an axis's name just beyond its tip (``beyond_first``; else after the places beside
    it), or beside the axis near the tip (below or to the right first), sliding back along the
    axis as far as a quarter of its length, then a little off it, then further ahead of the tip,
    then back along the axis as far as its middle; False (not moved) where no place is clear."""
    start, tip = np.asarray(axis.get_start(), dtype=float), np.asarray(axis.get_end(), dtype=float)
    length = float(np.linalg.norm(tip - start))
    u = (tip - start) / max(length, 1e-9)
    normal = np.array([u[1], -u[0], 0.0])  # to the right of the axis: below a horizontal one
    left, right, bottom, top = box_of(label)
    width, height = right - left, top - bottom
    along = min(width / 2 / max(abs(u[0]), 1e-6), height / 2 / max(abs(u[1]), 1e-6))
    beyond = [_spot(tip, width, height, u, 0.1)]
    spots = list(beyond) if beyond_first else []
    for off in (0.07, 0.16):
        for slide in np.arange(along + 0.035, along + length / 4, 0.06).tolist():  # clear of an edge at the tip
            spots += [_spot(tip - slide * u, width, height, side * normal, off) for side in (1.0, -1.0)]
    spots += [] if beyond_first else beyond
    ahead = [turn for turn in TURNS if abs(turn) <= 60]  # round the tip, never back beside the other axes
    spots += [box for box, _ in _radial(tip, width, height, math.atan2(u[1], u[0]), 0.05, (0.1, 0.2, 0.3, 0.45), ahead)]
    for slide in np.arange(along + length / 4, along + length / 2, 0.06).tolist():  # as far as its middle
        spots += [_spot(tip - slide * u, width, height, side * normal, 0.07) for side in (1.0, -1.0)]
    for box in spots:
        if _fits(box, area, obstacles):
            _put(label, box, obstacles)
            return True
    return False


def _fits(box: Box, area: Box, obstacles: Obstacles) -> bool:
    inside = area[0] <= box[0] and box[1] <= area[1] and area[2] <= box[2] and box[3] <= area[3]
    return inside and obstacles.box_is_clear(box)


def _put(label: Mobject, box: Box, obstacles: Obstacles) -> None:
    """Move ``label`` onto ``box``, which joins the obstacles."""
    left, right, bottom, top = box_of(label)
    label.shift(np.array([(box[0] + box[1] - left - right) / 2, (box[2] + box[3] - bottom - top) / 2, 0.0]))
    obstacles.add_box(box)


def leader(ends: tuple[np.ndarray, np.ndarray], color: str, opacity: float = 0.6) -> Line:
    """A thin line from a dot to its far label (ends from :func:`place_label`)."""
    return Line(ends[0], ends[1], color=color, stroke_width=1.5, stroke_opacity=opacity)
