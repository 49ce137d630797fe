"""Vectors drawn as arrows in planes: arrows that stay visible, nice axis ranges, labels that
keep off each other and off the arrows."""

from __future__ import annotations

import math

import numpy as np
from manim import Arrow, Mobject

from scenes.kit.palette import VALUE

__all__ = ["Box", "arrow", "box_of", "nice_span", "place_label", "shaft_boxes"]

Box = tuple[float, float, float, float]  # left, right, bottom, top
NICE_STEPS = (0.05, 0.1, 0.2, 0.25, 0.5, 1.0, 2.0, 2.5, 5.0)


def arrow(start: np.ndarray, end: np.ndarray, color: str = VALUE, width: float = 6) -> Arrow:
    """An arrow from ``start`` to ``end`` whose tip never swallows a short shaft."""
    if np.linalg.norm(end - start) < 0.02:  # a zero arrow still needs a direction to draw
        end = start + np.array([0.02, 0.0, 0.0])
    return Arrow(start, end, buff=0, color=color, stroke_width=width, tip_length=0.22,
                 max_tip_length_to_length_ratio=0.4, max_stroke_width_to_length_ratio=12)


def nice_span(values: np.ndarray, ticks: int = 8) -> tuple[float, float, float]:
    """A nice tick step and a range holding ``values`` and 0 with a margin (ticks count from 0)."""
    low, high = min(0.0, float(values.min())), max(0.0, float(values.max()))
    margin = 0.1 * max(high - low, 1e-3)
    step = next((s for s in NICE_STEPS if s >= (high - low + 2 * margin) / ticks), NICE_STEPS[-1])
    return step, low - margin, high + margin


def shaft_boxes(line: Arrow, spacing: float = 0.2, size: float = 0.05) -> list[Box]:
    """Small boxes along an arrow, so labels keep off it."""
    start, end = line.get_start(), line.get_end()
    count = max(2, int(np.linalg.norm(end - start) / spacing) + 1)
    points = [start + t * (end - start) for t in np.linspace(0, 1, count)]
    return [(p[0] - size, p[0] + size, p[1] - size, p[1] + size) for p in points]


def box_of(mob: Mobject) -> Box:
    return (mob.get_left()[0], mob.get_right()[0], mob.get_bottom()[1], mob.get_top()[1])


def _clear(box: Box, taken: list[Box], pad: float = 0.06) -> bool:
    return not any(box[0] < b[1] + pad and b[0] < box[1] + pad and box[2] < b[3] + pad and b[2] < box[3] + pad
                   for b in taken)


def place_label(label: Mobject, tip: np.ndarray, direction: np.ndarray, taken: list[Box], area: Box) -> None:
    """Put ``label`` just beyond ``tip`` along ``direction``, turning away from boxes ``taken``.

    The label stays inside ``area``; its box is added to ``taken``.
    """
    angle = math.atan2(direction[1], direction[0]) if np.linalg.norm(direction) > 1e-6 else math.pi / 2
    for extra in (0.1, 0.3, 0.55):
        for turn in (0, 25, -25, 50, -50, 80, -80, 115, -115, 150, -150, 180):
            u = np.array([math.cos(angle + math.radians(turn)), math.sin(angle + math.radians(turn)), 0.0])
            reach = min(label.width / 2 / max(abs(u[0]), 1e-6), label.height / 2 / max(abs(u[1]), 1e-6))
            label.move_to(tip + (reach + extra) * u)  # the box's edge, not its centre, sits ``extra`` off the tip
            box = box_of(label)
            inside = area[0] <= box[0] and box[1] <= area[1] and area[2] <= box[2] and box[3] <= area[3]
            if inside and _clear(box, taken):
                taken.append(box)
                return
    taken.append(box_of(label))
