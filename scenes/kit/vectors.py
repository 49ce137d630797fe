"""Vectors drawn as arrows in planes: arrows that stay visible, nice axis ranges, labels that
keep off each other and off the arrows."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from manim import Arrow, Line, Mobject, NumberPlane, VGroup

from scenes.kit.palette import MUTED, VALUE

__all__ = [
    "Box",
    "QueryFrame",
    "arrow",
    "box_of",
    "clear_of",
    "fitted_plane",
    "nice_span",
    "place_label",
    "place_near",
    "shaft_boxes",
    "try_place_label",
]

Box = tuple[float, float, float, float]  # left, right, bottom, top
NICE_STEPS = (0.05, 0.1, 0.2, 0.25, 0.5, 1.0, 2.0, 2.5, 5.0)


def arrow(start: np.ndarray, end: np.ndarray, color: str = VALUE, width: float = 6, tip: float = 0.22) -> Arrow:
    """An arrow from ``start`` to ``end`` whose tip never swallows a short shaft.

    ``tip`` is the tip's length (smaller for arrows the camera will look at closely)."""
    if np.linalg.norm(end - start) < 0.015:  # a zero arrow still needs a direction to draw
        end = start + np.array([0.015, 0.0, 0.0])
    return Arrow(start, end, buff=0, color=color, stroke_width=width, tip_length=tip,
                 max_tip_length_to_length_ratio=0.4, max_stroke_width_to_length_ratio=12)


def nice_span(values: np.ndarray, ticks: int = 8) -> tuple[float, float, float]:
    """A nice tick step and a range holding ``values`` and 0 with a margin (ticks count from 0)."""
    low, high = min(0.0, float(values.min())), max(0.0, float(values.max()))
    margin = 0.1 * max(high - low, 1e-3)
    step = next((s for s in NICE_STEPS if s >= (high - low + 2 * margin) / ticks), NICE_STEPS[-1])
    return step, low - margin, high + margin


def shaft_boxes(line: Line, spacing: float = 0.2, size: float = 0.05) -> list[Box]:
    """Small boxes along an arrow (or any straight line), so labels keep off it."""
    start, end = line.get_start(), line.get_end()
    count = max(2, int(np.linalg.norm(end - start) / spacing) + 1)
    points = [start + t * (end - start) for t in np.linspace(0, 1, count)]
    return [(p[0] - size, p[0] + size, p[1] - size, p[1] + size) for p in points]


def box_of(mob: Mobject) -> Box:
    return (mob.get_left()[0], mob.get_right()[0], mob.get_bottom()[1], mob.get_top()[1])


def clear_of(box: Box, taken: list[Box], pad: float = 0.06) -> bool:
    """Is ``box`` at least ``pad`` away from every box of ``taken``?"""
    return not any(box[0] < b[1] + pad and b[0] < box[1] + pad and box[2] < b[3] + pad and b[2] < box[3] + pad
                   for b in taken)


def place_label(label: Mobject, tip: np.ndarray, direction: np.ndarray, taken: list[Box], area: Box) -> None:
    """Put ``label`` just beyond ``tip`` along ``direction``, turning away from boxes ``taken``.

    The label stays inside ``area``; its box is added to ``taken``.
    """
    turns = (0, 25, -25, 50, -50, 80, -80, 115, -115, 150, -150, 180)
    if not _place(label, tip, direction, taken, area, (0.1, 0.3, 0.55), turns, None):
        taken.append(box_of(label))


def try_place_label(
    label: Mobject, tip: np.ndarray, direction: np.ndarray, taken: list[Box], area: Box,
    reaches: tuple[float, ...] = (0.08, 0.25, 0.45), accept: Callable[[Box], bool] | None = None,
) -> bool:
    """Like :func:`place_label`, but a label that finds no free place is left out: returns False.

    ``reaches``: how far from ``tip`` its box's edge may sit, tried in turn; ``accept``: a further test a
    place's box must pass (say, that the label is nearer its own arrow than any other)."""
    return _place(label, tip, direction, taken, area, reaches, (0, 30, -30, 60, -60, 90, -90, 135, -135, 180), accept)


def place_near(label: Mobject, point: np.ndarray, taken: list[Box], area: Box, reach: float = 4.0) -> bool:
    """Put ``label`` as near ``point`` as it is clear of ``taken`` and inside ``area`` (its box joins ``taken``):
    rings 0.12 apart out to ``reach``, every 15°; False where nothing is free."""
    gaps = tuple(float(gap) for gap in np.arange(0.08, reach, 0.12))
    return _place(label, point, np.array([1.0, 0.0, 0.0]), taken, area, gaps, tuple(range(0, 360, 15)), None)


def _place(label: Mobject, tip: np.ndarray, direction: np.ndarray, taken: list[Box], area: Box,
           reaches: tuple[float, ...], turns: tuple[int, ...], accept: Callable[[Box], bool] | None) -> bool:
    """Try places around ``tip`` (each reach, each turn from ``direction``); move the label to the first free one.

    The label is measured once and moved only where it lands (measuring a text's box walks every glyph:
    moving and measuring it at each try cost more than the rest of a scene's build). A label that finds no
    place ends at the last one tried, as before."""
    angle = math.atan2(direction[1], direction[0]) if np.linalg.norm(direction) > 1e-6 else math.pi / 2
    half_w, half_h = label.width / 2, label.height / 2
    centre = tip
    for extra in reaches:
        for turn in turns:
            u = np.array([math.cos(angle + math.radians(turn)), math.sin(angle + math.radians(turn)), 0.0])
            reach = min(half_w / max(abs(u[0]), 1e-6), half_h / max(abs(u[1]), 1e-6))
            centre = tip + (reach + extra) * u  # the box's edge, not its centre, sits ``extra`` off the tip
            box = (centre[0] - half_w, centre[0] + half_w, centre[1] - half_h, centre[1] + half_h)
            inside = area[0] <= box[0] and box[1] <= area[1] and area[2] <= box[2] and box[3] <= area[3]
            if inside and clear_of(box, taken) and (accept is None or accept(box)):
                label.move_to(centre)
                taken.append(box_of(label))
                return True
    label.move_to(centre)
    return False


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
