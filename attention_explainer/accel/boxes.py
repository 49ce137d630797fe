"""Boxes that hold what a mobject draws: its points' box widened by its stroke, mitres and antialiasing.

A Bézier curve stays within its control points, so a mobject's points' box holds its path; the
stroke reaches past it (five widths where the path has joins, Cairo's miter joins reaching at
most ten half-widths; three quarters of a width for a single curve's caps), and antialiasing
two pixels more. :mod:`.still_frames` decides by them which still mobjects share no pixel with
what moves; :mod:`.background_rows` which rows and columns a frame drew over.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["boxes", "meet"]

_PIXELS = 2.0  # antialiasing reaches a pixel beyond the shape; two to be sure
_MITER_WIDTHS = 5.0  # Cairo's default miter limit is 10 (half-widths)
_CAP_WIDTHS = 0.75  # a square cap's corner: half a width along and across, √2 / 2 of a width


def boxes(mobjects: Sequence[Any], pixel: float, line_width_multiple: float) -> np.ndarray:
    """Each mobject's drawing's box, ``(left, right, bottom, top)`` per row, widened as above."""
    if not mobjects:
        return np.zeros((0, 4))
    counts = np.fromiter((len(m.points) for m in mobjects), dtype=np.intp, count=len(mobjects))
    points = np.concatenate([m.points[:, :2] for m in mobjects])
    starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
    low, high = np.minimum.reduceat(points, starts), np.maximum.reduceat(points, starts)
    widths = np.fromiter(
        (max(m.get_stroke_width(), m.get_stroke_width(background=True)) for m in mobjects),
        dtype=float, count=len(mobjects),
    )
    reach = widths * line_width_multiple * np.where(counts > 4, _MITER_WIDTHS, _CAP_WIDTHS) + _PIXELS * pixel
    return np.column_stack((low[:, 0] - reach, high[:, 0] + reach, low[:, 1] - reach, high[:, 1] + reach))


def meet(these: np.ndarray, those: np.ndarray) -> np.ndarray:
    """Which of ``these`` boxes meets which of ``those`` (a matrix)."""
    return (
        (these[:, None, 0] <= those[None, :, 1]) & (those[None, :, 0] <= these[:, None, 1])
        & (these[:, None, 2] <= those[None, :, 3]) & (those[None, :, 2] <= these[:, None, 3])
    )
