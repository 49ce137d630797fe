"""Two token × token heat maps side by side: the same attention two ways, cell for cell comparable.

The rope lecture sets the scores of a sentence beside those of the sentence backwards, then the scores
without positions beside those with RoPE. Both grids are drawn alike (:func:`fit_twins`: one fit for
both, the numbers in the cells while they are legible in half the frame, else colours only, columns
numbered and each row label "j token"); each stands centred in its half (:func:`twin_grid`), a title
and the legend of its colour scale under it (:func:`under_grid`). :func:`twin_board` builds the two with
their titles; :func:`show_scores` and :func:`to_weights` fill them, as both of the lecture's pairs do.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from manim import DOWN, LEFT, RIGHT, UP, FadeIn, FadeOut, VGroup, VMobject

from scenes.facts import value
from scenes.kit.board import colours_only, token_grid
from scenes.kit.heatmap import HeatFit, HeatGrid, cell_numbers, fill_cells, fit_heat, legend, roomier_rows, widest
from scenes.kit.layout import BOTTOM, HALF_WIDTH, TOP
from scenes.kit.palette import INK, WEIGHT
from scenes.kit.text import SMALLEST_SIZE, text

__all__ = [
    "BAND", "GAP", "TwinBoard", "fit_twins", "half_width", "show_scores", "title_size", "to_weights", "twin_board",
    "twin_grid", "under_grid",
]

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
                   fill=min(width, 5.6), upright_most=max(10, len(tokens[query])), query=query, noted=True)
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



def _pair() -> list[VGroup]:
    return [VGroup(), VGroup()]


@dataclass
class TwinBoard:
    """The two grids and what is drawn with them; ``sides`` gives each grid's source, the source of its colour
    scale's ends, and its title: left, then right."""

    fit: HeatFit
    grids: tuple[HeatGrid, HeatGrid]
    titles: tuple[VGroup, VGroup]
    sides: tuple[tuple[str, str, str], tuple[str, str, str]]
    numbers: list[VGroup] = field(default_factory=_pair)
    legends: list[VGroup] = field(default_factory=_pair)
    notes: list[VGroup] = field(default_factory=_pair)  # colour only: "colours only" over each grid
    boxes: VGroup = field(default_factory=VGroup)


def twin_board(scene: Any, sides: tuple[tuple[str, str, str], tuple[str, str, str]],
               right_tokens: Sequence[str]) -> TwinBoard:
    """The scenario's tokens' grid on the left, ``right_tokens``' on the right, fitted to every scaled score and
    weight of both sides' sources, each titled; bands are the scene's to register."""
    n, tokens = scene.scenario.n_tokens, scene.scenario.tokens
    cells = [scene.text_for(value(source, name, i, j)) for source, _, _ in sides
             for name in ("scaled_scores", "weights") for i in range(n) for j in range(n)]
    fit = fit_twins(tokens, cells, scene.scenario.query)
    grids = (twin_grid(scene, fit, tokens, side=-1), twin_grid(scene, fit, right_tokens, side=1))
    size = title_size(fit)
    titles = tuple(under_grid(grid, text(title, size=size, color=INK))
                   for grid, (_, _, title) in zip(grids, sides, strict=True))
    return TwinBoard(fit, grids, (titles[0], titles[1]), sides)


def _cells(scene: Any, board: TwinBoard, side: int, name: str) -> VGroup:
    source, ranges, _ = board.sides[side]
    if not board.fit.numbers:
        return VGroup()
    return cell_numbers(scene, board.grids[side], source, name, ranges, size=board.fit.size)


def _legend(scene: Any, board: TwinBoard, side: int, name: str, hue: str) -> VGroup:
    _, ranges, _ = board.sides[side]
    return legend(scene, ranges, name, hue).next_to(board.titles[side][0], RIGHT, buff=0.35)


def show_scores(scene: Any, board: TwinBoard, side: int) -> None:
    """Side ``side``'s grid filled with its scaled scores at once; its numbers, legend and note made, not shown."""
    grid = board.grids[side]
    source, ranges, _ = board.sides[side]
    fill_cells(scene, grid, source, "scaled_scores", ranges, INK, animate=False)
    board.numbers[side] = _cells(scene, board, side, "scaled_scores")
    board.legends[side] = _legend(scene, board, side, "scaled_scores", INK)
    board.notes[side] = VGroup() if board.fit.numbers else VGroup(colours_only(grid))


def to_weights(scene: Any, board: TwinBoard) -> list[Any]:
    """The animations that turn both grids to their weights, numbers and legends with them."""
    changes: list[Any] = []
    for side in (0, 1):
        source, ranges, _ = board.sides[side]
        changes += fill_cells(scene, board.grids[side], source, "weights", ranges, WEIGHT, animate=True)
        old_numbers, board.numbers[side] = board.numbers[side], _cells(scene, board, side, "weights")
        old_legend, board.legends[side] = board.legends[side], _legend(scene, board, side, "weights", WEIGHT)
        # a fade out and in, not a FadeTransform: morphing every glyph of n² numbers costs the most frames
        if board.fit.numbers:
            changes += [FadeOut(old_numbers), FadeIn(board.numbers[side])]
        changes += [FadeOut(old_legend), FadeIn(board.legends[side])]
    return changes
