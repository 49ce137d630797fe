"""The safe area of the frame and fitting things into it.

The frame is 14.2 × 8 units. The header (scene title, corner formula) takes the top 1.1 units;
the lowest 0.8 units stay quiet for subtitles a player may burn in; 0.3–0.5 units of margin at
the sides. Everything a scene lays out fits the box between, scaled down when it must be, never
below the font floor of :mod:`scenes.kit.text`.
"""

from __future__ import annotations

from manim import Mobject

__all__ = ["BOTTOM", "HALF_WIDTH", "SAFE_HEIGHT", "SAFE_WIDTH", "TOP", "fit_scale", "fit_width", "place_in_safe_area"]

TOP = 2.85  # just below the header
BOTTOM = -3.2  # above the subtitles' band
HALF_WIDTH = 6.7  # x from -6.7 to 6.7
SAFE_WIDTH = 2 * HALF_WIDTH
SAFE_HEIGHT = TOP - BOTTOM


def fit_scale(mob: Mobject, *, most: float = 1.15, width: float = SAFE_WIDTH, height: float = SAFE_HEIGHT) -> float:
    """The scale that fits ``mob`` into ``width`` × ``height`` (up to ``most``, to fill the frame)."""
    return float(min(most, width / max(mob.width, 1e-6), height / max(mob.height, 1e-6)))


def fit_width(mob: Mobject, width: float) -> Mobject:
    """Shrink ``mob`` if it is wider than ``width``; returns ``mob``."""
    if mob.width > width:
        mob.scale(width / mob.width)
    return mob


def place_in_safe_area(mob: Mobject, *, most: float = 1.15) -> float:
    """Scale ``mob`` to fit the safe area and centre it there; returns the scale used."""
    scale = fit_scale(mob, most=most)
    mob.scale(scale).move_to((0.0, (TOP + BOTTOM) / 2, 0.0))
    return scale
