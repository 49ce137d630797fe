"""Vectors drawn as arrows in planes: arrows that stay visible, nice axis ranges, planes fitted to
their points, a plane turned so that one vector points right. Their labels are placed by
:mod:`scenes.kit.labels`."""

from __future__ import annotations

import numpy as np
from manim import Arrow, Line, NumberPlane, VGroup

from scenes.kit.labels import Box, box_of, shaft_boxes
from scenes.kit.palette import MUTED, VALUE

__all__ = [
    "Box",  # Box, box_of and shaft_boxes live in scenes.kit.labels; still importable from here
    "QueryFrame",
    "arrow",
    "box_of",
    "fitted_plane",
    "nice_span",
    "shaft_boxes",
]

LEAST_ARROW = 0.015  # the shortest arrow drawn
NICE_STEPS = (0.05, 0.1, 0.2, 0.25, 0.5, 1.0, 2.0, 2.5, 5.0)


def arrow(start: np.ndarray, end: np.ndarray, color: str = VALUE, width: float = 6, tip: float = 0.22) -> Arrow:
    """An arrow from ``start`` to ``end`` whose tip never swallows a short shaft.

    ``tip`` is the tip's length (smaller for arrows the camera will look at closely). An arrow shorter than
    :data:`LEAST_ARROW` is drawn that long along its own direction (rightwards when it has none), still ending at
    ``end``: where an arrow ends is what it plots (a chain's running sum, a vector's tip), and a weight near zero
    must not move it."""
    shaft = np.asarray(end, dtype=float) - np.asarray(start, dtype=float)
    length = float(np.linalg.norm(shaft))
    if length < LEAST_ARROW:  # a zero arrow still needs a direction to draw
        direction = shaft / length if length > 1e-9 else np.array([1.0, 0.0, 0.0])
        start = end - LEAST_ARROW * direction
    return Arrow(start, end, buff=0, color=color, stroke_width=width, tip_length=tip,
                 max_tip_length_to_length_ratio=0.4, max_stroke_width_to_length_ratio=12)


def nice_span(values: np.ndarray, ticks: int = 8) -> tuple[float, float, float]:
    """A nice tick step and a range holding ``values`` and 0 with a margin (ticks count from 0)."""
    low, high = min(0.0, float(values.min())), max(0.0, float(values.max()))
    margin = 0.1 * max(high - low, 1e-3)
    step = next((s for s in NICE_STEPS if s >= (high - low + 2 * margin) / ticks), NICE_STEPS[-1])
    return step, low - margin, high + margin


def fitted_plane(points: np.ndarray, area: Box, *, ticks: int = 6) -> NumberPlane:
    """A plane holding ``points`` (and the origin) in ``area``, with one unit the same on both axes.

    Equal units keep right angles right: a perpendicular drawn on it looks perpendicular.
    """
    left, right, bottom, top = area
    (x_tick, x0, x1), (y_tick, y0, y1) = nice_span(points[:, 0], ticks), nice_span(points[:, 1], ticks)
    tick = max(x_tick, y_tick)
    unit = min((right - left) / (x1 - x0), (top - bottom) / (y1 - y0))
    plane = NumberPlane(
        x_range=[x0, x1, tick], y_range=[y0, y1, tick], x_length=unit * (x1 - x0), y_length=unit * (y1 - y0),
        axis_config={"include_numbers": False, "stroke_color": MUTED, "include_tip": False, "stroke_width": 2},
        background_line_style={"stroke_color": MUTED, "stroke_opacity": 0.18, "stroke_width": 1},
    )
    return plane.move_to(((left + right) / 2, (top + bottom) / 2, 0.0))


class QueryFrame(VGroup):
    """A plane turned so that one vector (the query) points right: its line is the horizontal axis.

    A key's shadow on the query's line is then its horizontal position, and the perpendicular
    from its tip drops straight down (or up) onto the axis. ``c2p(x, y)`` maps coordinates of the
    original plane to the screen, turned; equal units on both axes keep right angles right.
    """

    def __init__(self, direction: np.ndarray, points: np.ndarray, area: Box, *, color: str = MUTED) -> None:
        super().__init__()
        d = np.asarray(direction[:2], dtype=float)
        norm = float(np.linalg.norm(d))
        cos, sin = (d / norm) if norm > 0 else (1.0, 0.0)
        self.rotation = np.array([[cos, sin], [-sin, cos]])  # turns the direction onto +x
        turned = np.vstack([points[:, :2] @ self.rotation.T, [[0.0, 0.0]]])
        low, high = turned.min(axis=0), turned.max(axis=0)
        span = np.maximum(high - low, 0.05 * max(float(np.max(high - low)), 1e-3)) * 1.15
        left, right, bottom, top = area
        unit = float(min((right - left) / span[0], (top - bottom) / span[1]))
        centre = (low + high) / 2
        origin = np.array([(left + right) / 2 - centre[0] * unit, (top + bottom) / 2 - centre[1] * unit, 0.0])
        half = span * unit / 2
        mid = origin[:2] + centre * unit
        self.axis = Line((mid[0] - half[0], origin[1], 0.0), (mid[0] + half[0], origin[1], 0.0), color=color,
                         stroke_width=2)
        self.cross = Line((origin[0], mid[1] - half[1], 0.0), (origin[0], mid[1] + half[1], 0.0), color=color,
                          stroke_width=1.5, stroke_opacity=0.5)
        # invisible: where the origin is and how long one unit is, wherever the frame is moved
        self.unit_line = Line(origin, origin + np.array([unit, 0.0, 0.0]), stroke_opacity=0.0)
        self.add(self.axis, self.cross, self.unit_line)

    def c2p(self, x: float, y: float = 0.0, *_: float) -> np.ndarray:
        """The screen point of ``(x, y)`` (coordinates of the unturned plane)."""
        turned = self.rotation @ np.array([x, y], dtype=float)
        origin, unit = self.unit_line.get_start(), self.unit_line.get_length()
        return np.array([origin[0] + turned[0] * unit, origin[1] + turned[1] * unit, 0.0])
