"""Two token × token heat maps side by side: the same attention two ways, cell for cell comparable.

The rope lecture sets the scores of a sentence beside those of the sentence backwards, then the scores
without positions beside those with RoPE. Both grids are drawn alike (:func:`fit_twins`: one fit for
both, the numbers in the cells while they are legible in half the frame, else colours only, columns
numbered and each row label "j token"); each stands centred in its half (:func:`twin_grid`), a title
and the legend of its colour scale under it (:func:`under_grid`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from manim import DOWN, LEFT, RIGHT, UP, VGroup, VMobject

from scenes.kit.board import token_grid
from scenes.kit.heatmap import HeatFit, HeatGrid, fit_heat, roomier_rows, widest
from scenes.kit.layout import BOTTOM, HALF_WIDTH, TOP
from scenes.kit.text import SMALLEST_SIZE

__all__ = ["BAND", "GAP", "fit_twins", "half_width", "title_size", "twin_grid", "under_grid"]

GAP = 0.6  # between the two grids (more, and 5 tokens of "−1.09" fall to colours only)
BAND = 0.75  # under each grid: its title and legend
TOP_ROOM = 0.15  # over the grids, under the header


def half_width() -> float:
    """The width each grid may take: half the safe width, less half the gap."""
    return (2 * HALF_WIDTH - GAP) / 2


def fit_twins(tokens: Sequence[str], cells: Sequence[str], query: int) -> HeatFit:
    """One drawing for both grids: ``cells`` are every number either may carry (their widest decides)."""
    width = half_width()
    fit = fit_heat(tokens, widest(cells, 26), width=width, height=TOP - BOTTOM - BAND - TOP_ROOM,
                   fill=min(width, 5.6), upright_most=max(10, len(tokens[query])), query=query)
    return roomier_rows(fit, tokens, width)


def twin_grid(scene: Any, fit: HeatFit, tokens: Sequence[str], *, side: int) -> HeatGrid:
    """The grid of ``tokens`` (rows and columns in their order) in the left half (``side`` −1) or the right (1).

    Colour only: columns numbered, each row label "j token" (labels made by ``scene.label``, so recorded).
    """
    grid = token_grid(scene, fit, tokens)
    centre = side * (GAP / 2 + half_width() / 2)
    middle = (TOP - TOP_ROOM + BOTTOM + BAND) / 2
    grid.shift(RIGHT * (centre - grid.get_x()) + UP * (middle - grid.get_y()))
    outer = grid.get_left()[0] + HALF_WIDTH if side < 0 else HALF_WIDTH - grid.get_right()[0]
    if outer < 0:  # labels a hair wider than measured: inwards, into the gap, rather than off the safe area
        grid.shift(RIGHT * -side * -outer)
    return grid


def under_grid(grid: HeatGrid, title: VMobject, legend: VMobject | None = None, *, gap: float = 0.3) -> VGroup:
    """``title`` under the grid's cells, left-aligned with the grid, and ``legend`` after it; the two as a group."""
    title.next_to(grid.brackets, DOWN, buff=0.18).align_to(grid, LEFT)
    if legend is None:
        return VGroup(title)
    legend.next_to(title, RIGHT, buff=gap)
    return VGroup(title, legend)


def title_size(fit: HeatFit) -> float:
    """The type of the titles under the grids: the grid's, between the floor and 26."""
    return max(float(SMALLEST_SIZE), min(26.0, fit.size))

