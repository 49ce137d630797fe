"""Spaces drawn flat: a 3-d space in an oblique view, a plane or a line, on a 2-d scene.

An oblique drawing places the point ``(x, y, z)`` at ``origin + x·e₁ + y·e₂ + z·e₃`` with
``e₁`` to the right, ``e₂`` up and ``e₃`` toward the viewer, down and to the left, foreshortened
by half. It is a fixed linear map, so nothing is ever drawn in the wrong order (Cairo has no
depth buffer) and it costs what a 2-d drawing costs. :class:`SpaceAxes` draws one, two or three
axes this way and maps coordinates to the screen with ``c2p`` like manim's axes, so a test can
map a plotted point back to its numbers. :func:`place_labels` puts a label beside each point,
off the other labels, the points and the arrows, and says whether every label found a clear
place.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

import numpy as np
from manim import DOWN, RIGHT, UP, Arrow, Line, Mobject, Polygon, VGroup, VMobject

from scenes.kit.palette import MUTED
from scenes.kit.vectors import Box, box_of

__all__ = ["DEPTH", "LEADER", "SpaceAxes", "clear_of", "dot_box", "leader", "place_labels", "span_of"]

DEPTH = (math.radians(215.0), 0.5)
"""The third axis on screen: its angle (toward the viewer, down and to the left) and its
foreshortening."""


def span_of(values: np.ndarray, *, floor: float = 0.12) -> list[tuple[float, float]]:
    """Per column of ``values``, a range holding the column and 0, with a margin.

    Every range reaches at least ``floor`` of the widest range on its positive side (an axis
    whose numbers are all 0 still shows where it points) and a little below 0.

    >>> span_of(np.array([[0.0, 1.0], [1.0, 2.0]]))
    [(-0.2, 1.2), (-0.2, 2.2)]
    """
    columns = np.atleast_2d(np.asarray(values, dtype=float))
    lows = np.minimum(columns.min(axis=0), 0.0)
    highs = np.maximum(columns.max(axis=0), 0.0)
    widest = max(float(np.max(highs - lows)), 1e-3)
    margin = 0.1 * widest
    return [
        (round(min(low - margin, -margin), 6), round(max(high + margin, floor * widest), 6))
        for low, high in zip(lows.tolist(), highs.tolist(), strict=True)
    ]


def _basis(dims: int) -> list[np.ndarray]:
    angle, ratio = DEPTH
    depth = ratio * np.array([math.cos(angle), math.sin(angle), 0.0])
    return [np.array(RIGHT, dtype=float), np.array(UP, dtype=float), depth][:dims]


class SpaceAxes(VGroup):
    """One, two or three axes in the plane of the screen, ``c2p`` from coordinates to a point.

    Parameters
    ----------
    spans
        ``(low, high)`` of each axis, in the space's own numbers; one span draws a line, two a
        plane, three an oblique 3-d view. Every axis has the same unit.
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
        corners = np.array([sum((c * b for c, b in zip(corner, basis, strict=True)), np.zeros(3))
                            for corner in itertools.product(*self.spans)])
        low, high = corners.min(axis=0), corners.max(axis=0)
        extent = high - low
        unit = width / max(extent[0], 1e-9)
        if extent[1] > 1e-9:
            unit = min(unit, height / extent[1])
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
        return [x if k == m else 0.0 for k in range(self.dims)]

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

    def sheet(self, color: str, *, opacity: float = 0.08) -> Polygon | None:
        """A faint quadrilateral on the spans of the first axis and the last (the floor of a 3-d
        view, the plane itself), ``None`` for a line."""
        if self.dims < 2:
            return None
        (a0, a1), (b0, b1) = self.spans[0], self.spans[-1]

        def at(a: float, b: float) -> np.ndarray:
            coordinates = [0.0] * self.dims
            coordinates[0], coordinates[-1] = a, b
            return self.c2p(*coordinates)

        return Polygon(at(a0, b0), at(a1, b0), at(a1, b1), at(a0, b1), stroke_width=0, fill_color=color,
                       fill_opacity=opacity)

    def label_axes(self, labels: Sequence[VMobject], buff: float = 0.1) -> VGroup:
        """Put ``labels[m]`` beside the positive end of axis ``m``, inside the corner it makes (under
        the first axis's end, right of the second's, under the third's); returns them, grouped."""
        for m, label in enumerate(labels):
            end = self.lines[m].get_end()
            if m == 1:
                label.next_to(end, RIGHT, buff=buff).align_to(end, UP)
            else:
                label.next_to(end, DOWN, buff=buff)
                if m == 0:
                    label.align_to(end, RIGHT)
        return VGroup(*labels)


def dot_box(point: np.ndarray, radius: float) -> Box:
    """The box a dot of ``radius`` at ``point`` covers."""
    return (point[0] - radius, point[0] + radius, point[1] - radius, point[1] + radius)


def clear_of(box: Box, taken: Sequence[Box], pad: float = 0.05) -> bool:
    """Does ``box`` keep at least ``pad`` away from every box of ``taken``?"""
    return not any(box[0] < b[1] + pad and b[0] < box[1] + pad and box[2] < b[3] + pad and b[2] < box[3] + pad
                   for b in taken)


TURNS = (0, 30, -30, 60, -60, 90, -90, 120, -120, 150, -150, 180)
GAPS = (0.06, 0.16, 0.3, 0.5, 0.75)
LEADER = 0.3
"""From this gap on, a label is far enough from its point to want a leader line to it."""


def _spot(point: np.ndarray, width: float, height: float, u: np.ndarray, gap: float) -> Box:
    """The box of a ``width`` × ``height`` label whose edge, not its centre, is ``gap`` from
    ``point`` along ``u``."""
    reach = min(width / 2 / max(abs(u[0]), 1e-6), height / 2 / max(abs(u[1]), 1e-6))
    x, y = point[0] + (reach + gap) * u[0], point[1] + (reach + gap) * u[1]
    return (x - width / 2, x + width / 2, y - height / 2, y + height / 2)


def _place_one(label: Mobject, point: np.ndarray, direction: np.ndarray, taken: list[Box], area: Box,
               pad: float) -> float | None:
    angle = math.atan2(direction[1], direction[0]) if np.linalg.norm(direction[:2]) > 1e-6 else math.pi / 4
    left, right, bottom, top = box_of(label)
    width, height = right - left, top - bottom
    found: tuple[Box, float | None] | None = None
    for gap in GAPS:
        for turn in TURNS:
            u = np.array([math.cos(angle + math.radians(turn)), math.sin(angle + math.radians(turn)), 0.0])
            box = _spot(point, width, height, u, gap)
            inside = area[0] <= box[0] and box[1] <= area[1] and area[2] <= box[2] and box[3] <= area[3]
            if inside and clear_of(box, taken, pad):
                found = (box, gap)
                break
        if found is not None:
            break
    if found is None:
        found = (_spot(point, width, height, np.array([math.cos(angle), math.sin(angle), 0.0]), GAPS[0]), None)
    box, placed = found
    label.shift(np.array([(box[0] + box[1]) / 2 - (left + right) / 2, (box[2] + box[3]) / 2 - (bottom + top) / 2, 0]))
    taken.append(box)
    return placed


def place_labels(
    labels: Sequence[Mobject], points: Sequence[np.ndarray], away_from: np.ndarray, taken: list[Box], area: Box,
    *, pad: float = 0.1,
) -> list[float | None]:
    """Put each label beside its point, preferably on the side away from ``away_from``.

    Labels are placed in the order given (put the most important first), each at least ``pad``
    off ``taken`` (the points, arrows, titles: boxes that labels avoid) and inside ``area``; each
    placed label's box joins ``taken``. Returns, for each label, the gap between it and its point
    (from :data:`LEADER` on, draw a leader line), or ``None`` where no clear place was found (the
    label then sits beside its point anyway, and the caller may choose another labelling).
    """
    return [_place_one(label, np.asarray(point, dtype=float), np.asarray(point, dtype=float) - away_from, taken,
                       area, pad)
            for label, point in zip(labels, points, strict=True)]


def leader(label: Mobject, point: np.ndarray, radius: float, color: str, opacity: float = 0.6) -> Line:
    """A thin line from a dot of ``radius`` at ``point`` to the nearest edge of its far label."""
    box = box_of(label)
    nearest = np.array([min(max(point[0], box[0]), box[1]), min(max(point[1], box[2]), box[3]), 0.0])
    along = nearest - point
    length = float(np.linalg.norm(along))
    start = point + along / max(length, 1e-9) * radius
    return Line(start, nearest - along / max(length, 1e-9) * 0.04, color=color, stroke_width=1.5,
                stroke_opacity=opacity)
