"""Spaces drawn flat: a 3-d space in an oblique view, a plane or a line, on a 2-d scene.

An oblique drawing places the point ``(x, y, z)`` at ``origin + x·e₁ + y·e₂ + z·e₃`` with
``e₁`` to the right, ``e₂`` up and ``e₃`` toward the viewer, down and to the left, foreshortened
by half. It is a fixed linear map, so nothing is ever drawn in the wrong order (Cairo has no
depth buffer) and it costs what a 2-d drawing costs. :class:`SpaceAxes` draws one, two or three
axes this way and maps coordinates to the screen with ``c2p`` like manim's axes, so a test can
map a plotted point back to its numbers. A plane or a line is fitted to its points
(:func:`plane_size`, :func:`fit_spans`): they use the drawing, with the origin in view where
it costs little. Labels of its points and axes are placed by :mod:`scenes.kit.labels`
(:func:`~scenes.kit.labels.place_by_dot`, :func:`~scenes.kit.labels.place_axis_name`).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

import numpy as np
from manim import RIGHT, UP, Arrow, Polygon, VGroup, VMobject

from scenes.kit.palette import MUTED

__all__ = [
    "DEPTH",
    "SpaceAxes",
    "drawn_size",
    "fit_spans",
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
