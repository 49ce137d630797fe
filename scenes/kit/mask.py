"""The causal mask as a picture: a staircase over the cells above a token grid's diagonal.

Query ``i`` may use keys ``1..i`` only: the cells right of the diagonal are hidden. The staircase
follows the cells' edges, so it covers exactly the hidden cells of a :class:`~scenes.kit.heatmap.HeatGrid`
however the grid is drawn (numbers in the cells or colours only).
"""

from __future__ import annotations

from manim import DOWN, LEFT, RIGHT, UP, Polygon

from scenes.kit.heatmap import HeatGrid
from scenes.kit.palette import HIGHLIGHT

__all__ = ["staircase"]


def staircase(grid: HeatGrid, *, color: str = HIGHLIGHT, opacity: float = 0.35) -> Polygon:
    """A polygon over the cells above the diagonal of the ``n × n`` ``grid`` (``n`` at least 2).

    Its corners: the grid's top right, down the last column to row ``n − 1``'s top, then a step
    left and up per row, to the top of the second column.
    """
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
