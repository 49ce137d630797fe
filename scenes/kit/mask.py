"""The causal mask on a token × token grid: the staircase over the future, its cells, its one "−∞".

Row ``i`` of a :class:`~scenes.kit.heatmap.HeatGrid` is query ``i``, column ``j`` key ``j``; the
cells above the diagonal (``j > i``) are the keys a query may not read, the future. This module
draws that region: the staircase that covers it (:func:`future_mask`), its cells greyed (a masked
score is no number on the colour scale: :func:`grey_future`), the lower triangle filled alone
(who reads whom: :func:`fill_past`), and where a single "−∞" written across the region of a grid
too small for numbers stands (:func:`free_block`, :func:`block_centre`), and the three titles the scores pass
under on their way to masked weights (:func:`mask_titles`). Lecture 6 ends on the
mask, lecture 7 explains it, lecture 9 fills the triangle a row per generated token.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from manim import DOWN, LEFT, RIGHT, UP, MathTex, Polygon

from scenes.kit.formula import formula_title
from scenes.kit.heatmap import HeatGrid
from scenes.kit.palette import HIGHLIGHT, MUTED

__all__ = [
    "GREYED",
    "block_centre",
    "fill_past",
    "free_block",
    "free_blocks",
    "future_cells",
    "future_mask",
    "grey_future",
    "mask_titles",
    "past_cells",
]

GREYED = 0.22
"""Fill opacity of a masked cell, in :data:`~scenes.kit.palette.MUTED` grey: dark enough for its "−∞" or
its 0 to read in ink, plainly not a colour of the grid's scale."""


def past_cells(grid: HeatGrid) -> list[tuple[int, int]]:
    """``(i, j)`` of every cell on or below the diagonal: the keys each query may read."""
    n = len(grid.squares)
    return [(i, j) for i in range(n) for j in range(min(i + 1, len(grid.squares[i])))]


def future_cells(grid: HeatGrid) -> list[tuple[int, int]]:
    """``(i, j)`` of every cell above the diagonal (``j > i``): the keys the mask hides, row by row."""
    return [(i, j) for i, row in enumerate(grid.squares) for j in range(i + 1, len(row))]


def grey_future(grid: HeatGrid, *, opacity: float = GREYED, animate: bool = True) -> list[Any]:
    """Grey every cell above the diagonal (the animations, or at once with ``animate=False``)."""
    cells = [grid.squares[i][j] for i, j in future_cells(grid)]
    if not animate:
        for cell in cells:
            cell.set_fill(MUTED, opacity=opacity)
        return []
    return [cell.animate.set_fill(MUTED, opacity=opacity) for cell in cells]


def fill_past(grid: HeatGrid, hue: str, *, opacity: float = 0.6, future: float = 0.0) -> None:
    """Fill the cells on and below the diagonal with ``hue`` and those above it at ``future`` (grey):
    the pattern of who may read whom, with no number in it."""
    for i, j in past_cells(grid):
        grid.squares[i][j].set_fill(hue, opacity=opacity)
    for i, j in future_cells(grid):
        grid.squares[i][j].set_fill(MUTED, opacity=future)


def future_mask(grid: HeatGrid, *, color: str = HIGHLIGHT, opacity: float = 0.35) -> Polygon:
    """A staircase over the cells above the diagonal of ``grid`` (at least 2 × 2)."""
    n = len(grid.squares)
    half_w, half_h = grid.cell_w / 2, grid.cell_h / 2
    points = [
        grid.cell_center(0, n - 1) + RIGHT * half_w + UP * half_h,
        grid.cell_center(n - 2, n - 1) + RIGHT * half_w + DOWN * half_h,
    ]
    for i in range(n - 2, -1, -1):  # down the staircase, right to left
        points.append(grid.cell_center(i, i + 1) + LEFT * half_w + DOWN * half_h)
        points.append(grid.cell_center(i, i + 1) + LEFT * half_w + UP * half_h)
    return Polygon(*points, color=color, fill_color=color, fill_opacity=opacity, stroke_width=2)


def free_block(n: int) -> tuple[int, int]:
    """``(rows, columns)`` of the largest block of cells above the diagonal of an ``n × n`` grid: the
    first ``rows`` rows by the last ``columns`` columns (``rows + columns = n``, as square as it goes).

    >>> free_block(5), free_block(16)
    ((2, 3), (8, 8))
    """
    return n // 2, n - n // 2


def free_blocks(n: int, avoid: int | None = None) -> list[tuple[int, int]]:
    """Every block of hidden cells of an ``n × n`` grid as ``(top, bottom)``: rows ``top`` to ``bottom`` by the
    columns after ``bottom`` (the widest such rows allow), none holding row ``avoid`` (a row a box outlines, whose
    line would cross a number written there).

    >>> free_blocks(3), free_blocks(3, avoid=0)
    ([(0, 0), (0, 1), (1, 1)], [(1, 1)])
    """
    return [(top, bottom) for top in range(n - 1) for bottom in range(top, n - 1)
            if avoid is None or not top <= avoid <= bottom]


def block_centre(grid: HeatGrid, block: tuple[int, int] | None = None) -> np.ndarray:
    """The centre of a block of :func:`free_blocks` on ``grid`` (by default :func:`free_block`'s): the middle of
    the masked region's free area."""
    n = len(grid.squares)
    top, bottom = block if block is not None else (0, free_block(n)[0] - 1)
    centre: np.ndarray = (grid.cell_center(top, bottom + 1) + grid.cell_center(bottom, n - 1)) / 2
    return centre



def mask_titles(grid: HeatGrid, *, scaled: bool) -> list[MathTex]:
    """The scores', the masked scores' and their softmax's formulas, each under ``grid``, left-aligned with it."""
    scores_tex = ["Q", "K^{\\top}", "/\\sqrt{d_k}"] if scaled else ["Q", "K^{\\top}"]
    masked_tex = ["\\mathrm{mask}\\big(", *scores_tex, "\\big)"]
    titles = [formula_title(*tex, font_size=28) for tex in
              (scores_tex, masked_tex, ["\\mathrm{softmax}\\big(", *masked_tex, "\\big)"])]
    for title in titles:
        title.next_to(grid.brackets, DOWN, buff=0.18).align_to(grid, LEFT)
    return titles
