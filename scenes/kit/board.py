"""A token × token heat grid with a panel beside it.

The masked lecture's scenes draw every query's weights as a grid: the numbers in the cells while they are
legible beside a panel of their own (one row written out, sums, a setting), else colours only (columns
numbered, each row label "j token") with the panel's text at the font floor. :func:`fit_board` finds the
drawing, :func:`token_grid` builds the grid with its labels (every token × token grid of the lectures is
built so), :func:`token_board` places it (the mask's staircase over it is :func:`scenes.kit.mask.future_mask`)
— lecture 6's causal-mask scene draws its grid by the same recipe.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from manim import RIGHT, UP, Rectangle, VMobject

from scenes.facts import Fact, TokenPart
from scenes.kit.heatmap import COLOURS_ONLY, HeatFit, HeatGrid, fit_heat, numbered_columns, roomier_rows, widest
from scenes.kit.layout import BOTTOM, HALF_WIDTH, TOP
from scenes.kit.palette import KEY, MUTED, QUERY
from scenes.kit.text import SMALLEST_SIZE, shorten_token, text

__all__ = ["PANEL_MOST", "colours_only", "fit_board", "panel_size", "token_board", "token_grid"]

PANEL_MOST = 26  # the largest type of the panel beside the grid
GAPS = (0.8, 0.55)  # between the grid and the panel: with numbers in the cells, and colour only


def panel_size(fit: HeatFit) -> float:
    """The panel's type: the grid's, up to :data:`PANEL_MOST`; the floor beside a colour-only grid."""
    return min(fit.size, PANEL_MOST) if fit.numbers else SMALLEST_SIZE


def fit_board(tokens: Sequence[str], cells: Sequence[str], query: int, *, panel: Callable[[float], float],
              band: Callable[[float], float], top: float | Callable[[float], float] = 0.4) -> tuple[HeatFit, float]:
    """The grid's drawing and the gap after it.

    ``cells``: every number the cells may carry (their widest decides); ``panel(size)``: the panel's width at
    type ``size``; ``band(size)``: the height kept under the grid (its title, a legend) at that type; ``top``:
    kept over it (over the panel's heads), or ``top(size)``. Numbers in the cells while they are legible beside the
    panel at its largest type, else colours, the panel at the floor beside them.
    """
    most = max(10, len(shorten_token(tokens[query], 10**9)))  # the query's column label whole, if it fits
    fit: HeatFit | None = None
    width = 0.0
    for size, gap in zip((PANEL_MOST, SMALLEST_SIZE), GAPS, strict=True):
        width = 2 * HALF_WIDTH - gap - panel(size)
        over = top(size) if callable(top) else top
        fit = fit_heat(tokens, widest(cells, 26), width=width, height=TOP - BOTTOM - band(size) - over,
                       fill=min(width, 8.0), upright_most=most, query=query, noted=True)
        if fit.numbers:
            return fit, gap
    assert fit is not None
    return roomier_rows(fit, tokens, width), GAPS[1]


def token_grid(scene: Any, fit: HeatFit, tokens: Sequence[str]) -> HeatGrid:
    """The grid of ``fit`` with ``tokens`` as its rows and columns, not yet placed. Colour only: columns
    numbered, each row label "j token" (labels made by ``scene.label``, so recorded); a fit made ``noted``
    (:func:`~scenes.kit.heatmap.fit_heat`) keeps the place of the note over them (:func:`colours_only`)."""
    n = len(tokens)
    grid = HeatGrid(n, n, cell_w=fit.cell_w, cell_h=fit.cell_h, size=fit.size, row_tokens=tokens,
                    row_limit=fit.row_limit, column_tokens=None if fit.numbered else tokens,
                    column_limit=fit.column_limit, upright=fit.upright)
    if fit.numbered:
        numbered = numbered_columns(n, fit.size, fit.cell_w)
        grid.label_columns([scene.label("{}", Fact("position", "key", (j,)), size=fit.size, color=KEY)
                            for j in numbered], numbered)
        grid.label_rows([scene.label("{} {}", Fact("position", "query", (i,)), TokenPart(t, fit.row_limit),
                                     size=fit.size, color=QUERY) for i, t in enumerate(tokens)])
    if fit.noted:  # the note's place, a mark that draws nothing: the grid's extent holds the note where the row
        # labels of very short tokens are narrower than it, so a grid placed by its extent keeps the note in the frame
        note = colours_only(grid)
        grid.add(Rectangle(width=note.width, height=note.height, stroke_width=0, fill_opacity=0).move_to(note))
    return grid


def colours_only(grid: HeatGrid) -> VMobject:
    """"colours only", over the row labels of a grid whose cells carry no numbers (right-aligned with them: a grid
    made by :func:`token_grid` keeps room for it)."""
    note = text(COLOURS_ONLY, size=SMALLEST_SIZE, color=MUTED)
    return note.move_to((0, grid.column_labels.get_y(), 0)).align_to(grid.row_labels, RIGHT)


def token_board(scene: Any, fit: HeatFit, tokens: Sequence[str], *, width: float, band: float,
                top: float = 0.4) -> HeatGrid:
    """The grid of ``fit``: its left edge where a board ``width`` wide (grid, gap, panel) starts in the middle
    of the frame, in the middle of the height left between a ``band`` under it and ``top`` over it (as
    :func:`fit_board` was given). Colour only: columns numbered, each row label "j token" (labels made by
    ``scene.label``, so recorded)."""
    grid = token_grid(scene, fit, tokens)
    grid.shift(RIGHT * (-width / 2 - grid.get_left()[0]) + UP * ((TOP - top + BOTTOM + band) / 2 - grid.get_y()))
    return grid
