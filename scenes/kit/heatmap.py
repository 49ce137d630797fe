"""Token × token grids and heat maps: scores and weights with a row per query, a column per key.

A :class:`TokenGrid` is an ``n × m`` matrix whose rows (and, for score and weight matrices,
columns) are tokens. Cell sizes, font size and label length come from the data through
:func:`fit_lattice`, so every scenario lays out without overlaps. Several matrices of numbers
(scores, scaled scores, weights) can sit on one grid in turn; the weights are drawn as a heat
map: one hue (WEIGHT), fill opacity by value, the number in a contrasting colour.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np
from manim import LEFT, RIGHT, UP, Rectangle, SurroundingRectangle, Text, VGroup

from scenes.facts import position, value
from scenes.kit.grids import Brackets
from scenes.kit.palette import BACKGROUND, HIGHLIGHT, INK, KEY, MUTED, QUERY, WEIGHT
from scenes.kit.text import shorten_token, text, token_text

__all__ = [
    "FRAME_WIDTH",
    "Lattice",
    "TokenGrid",
    "fit_lattice",
    "focus_row",
    "heat_colors",
    "opacity_of",
    "row_box",
    "row_sums",
    "text_width",
    "vector_line",
    "widest",
]

FRAME_WIDTH = 13.6  # usable width: x in ±6.8
SIZES = (26, 24, 22, 20)  # font sizes tried, largest first (20 still reads at 480p)
LABEL_LIMITS = (10, 8, 6, 5, 4)  # characters kept of a row label, most first
PAD = 0.24  # horizontal space around the widest number of a cell
TIGHT_PAD = 0.16  # the same when space is short
LABEL_GAP = 0.15  # between a row label and its bracket
BRACKET = 0.22  # what the two brackets add to a block's width


@cache
def _width26(content: str) -> float:
    return float(text(content, size=26).width)


def text_width(content: str, size: float) -> float:
    """Width of ``text(content, size=size)``: Pango text scales linearly with its size."""
    return _width26(content) * size / 26


def widest(scene: Any, source: str, field: str, size: float) -> float:
    """The widest formatted entry of a matrix field, at ``size``."""
    rows, columns = np.shape(getattr(scene.sources[source][0], field))
    return max(
        text_width(scene.text_for(value(source, field, i, j)), size) for i in range(rows) for j in range(columns)
    )


@dataclass(frozen=True)
class Lattice:
    """Font size, label length, cell padding and row pitch shared by the matrices of a scene."""

    scene: Any
    size: float
    label_limit: int
    pad: float
    cell_h: float

    def label_width(self, tokens: Sequence[str]) -> float:
        return max(text_width(shorten_token(t, self.label_limit), self.size) for t in tokens)

    def cell_width(self, fields: Sequence[tuple[str, str]]) -> float:
        """A cell wide enough for every entry of the ``(source, field)`` matrices."""
        return max(widest(self.scene, source, field, self.size) for source, field in fields) + self.pad

    def block_width(self, tokens: Sequence[str], columns: int, fields: Sequence[tuple[str, str]]) -> float:
        """Width of a token-labelled matrix of these fields: labels, brackets and cells."""
        return self.label_width(tokens) + LABEL_GAP + BRACKET + columns * self.cell_width(fields)


def fit_lattice(
    scene: Any, tokens: Sequence[str], total_width: Callable[[Lattice], float], *, height: float
) -> Lattice:
    """The largest font size (then the longest labels, then tighter cells) that fits the frame.

    ``total_width(lattice)`` returns the scene's widest row of matrices; ``height`` is the
    height available to the ``n`` rows.
    """
    cell_h = float(np.clip(height / len(tokens), 0.4, 0.62))
    candidates = [(size, limit, PAD) for size in SIZES for limit in LABEL_LIMITS[:2]]
    candidates += [(SIZES[-1], limit, TIGHT_PAD) for limit in LABEL_LIMITS]
    for size, limit, pad in candidates:
        lattice = Lattice(scene, size, limit, pad, cell_h)
        if total_width(lattice) <= FRAME_WIDTH - 0.2:  # the estimate is rough at the edges
            break
    return lattice


class TokenGrid(VGroup):
    """A bracketed ``rows × columns`` lattice with token row labels and optional key columns.

    ``squares[i][j]`` are the heat-map cells (no fill until :func:`heat_colors`), row ``i``
    sits at ``y = -i · cell_h`` before the grid is moved. Numbers are placed with
    :meth:`place` and are not part of the grid, so several matrices can take turns on it.
    """

    def __init__(
        self, lattice: Lattice, rows: Sequence[str], columns: int, cell_w: float, *,
        row_color: str = QUERY, column_tokens: Sequence[str] | None = None, column_color: str = KEY,
    ) -> None:
        super().__init__()
        # keep sizes, not the lattice: it refers to the scene, and mobjects get deep-copied
        self.size, self.cell_w, self.cell_h = lattice.size, cell_w, lattice.cell_h
        self.squares = [
            [
                Rectangle(width=cell_w - 0.05, height=self.cell_h - 0.05, stroke_width=0, fill_color=WEIGHT,
                          fill_opacity=0).move_to((j * cell_w, -i * self.cell_h, 0))
                for j in range(columns)
            ]
            for i in range(len(rows))
        ]
        self.cells = VGroup(*(sq for row in self.squares for sq in row))
        self.brackets = Brackets(self.cells, buff=0.06)
        self.row_labels = VGroup(
            *(token_text(t, limit=lattice.label_limit, size=lattice.size, color=row_color) for t in rows)
        )
        for i, label in enumerate(self.row_labels):
            label.next_to(self.brackets, LEFT, buff=LABEL_GAP).set_y(-i * self.cell_h)
        self.column_labels = VGroup()
        if column_tokens is not None:
            self._add_column_labels(column_tokens, column_color)
        self.add(self.cells, self.brackets, self.row_labels, self.column_labels)

    def _add_column_labels(self, tokens: Sequence[str], color: str) -> None:
        """Key labels over the columns; staggered on two lines when one line is too tight."""
        size = self.size
        one_line = all(text_width(shorten_token(t), size) <= self.cell_w - 0.1 for t in tokens)
        line_h = 0.36 * size / 26
        last = len(tokens) - 1
        for j, token in enumerate(tokens):
            # staggered labels may spread over two cells; the outer ones only inwards
            room = self.cell_w - 0.1
            if not one_line:
                room = 1.5 * self.cell_w - 0.2 if j in (0, last) else 2 * self.cell_w - 0.15
            limit = 10
            while limit > 2 and text_width(shorten_token(token, limit), size) > room:
                limit -= 1
            label = token_text(token, limit=limit, size=size, color=color)
            lift = 0 if one_line or j % 2 else line_h
            label.next_to(self.brackets, UP, buff=0.1).set_x(j * self.cell_w).shift(UP * lift)
            edge = self.squares[0][j]
            if not one_line and j == 0:
                label.align_to(edge, LEFT)
            elif not one_line and j == last:
                label.align_to(edge, RIGHT)
            self.column_labels.add(label)

    def cell_center(self, i: int, j: int) -> np.ndarray:
        return self.squares[i][j].get_center()

    def row_y(self, i: int) -> float:
        return float(self.squares[i][0].get_y())

    def place(self, entries: Sequence[Sequence[Text]]) -> VGroup:
        """Put numbers in the cells, right-aligned so decimal points line up."""
        half = max(e.width for row in entries for e in row) / 2
        for i, row in enumerate(entries):
            for j, entry in enumerate(row):
                entry.move_to(self.cell_center(i, j)).align_to(self.cell_center(i, j) + RIGHT * half, RIGHT)
        return VGroup(*(VGroup(*row) for row in entries))

    def numbers(self, scene: Any, source: str, field: str, color: str = INK) -> VGroup:
        """The recorded numbers of ``source.field``, placed in the cells (rows of a VGroup)."""
        rows, columns = len(self.squares), len(self.squares[0])
        size = self.size
        return self.place([[scene.number(source, field, i, j, color=color, size=size) for j in range(columns)]
                           for i in range(rows)])


def row_box(grid: TokenGrid, row: int, color: str = HIGHLIGHT) -> SurroundingRectangle:
    """An outline around the cells of row ``row``."""
    return SurroundingRectangle(VGroup(*grid.squares[row]), color=color, buff=0.04, stroke_width=3)


def opacity_of(weight: float, largest: float) -> float:
    """Fill opacity of a heat-map cell: in proportion to the weight, the largest one bright."""
    return 0.9 * max(weight, 0.0) / largest


def heat_colors(
    scene: Any, grid: TokenGrid, source: str, field: str = "weights", *, animate: bool = True
) -> tuple[VGroup, list[Any]]:
    """The weights as a heat map: the numbers (contrasting colour) and the fill animations.

    With ``animate=False`` the fills are set on the grid at once (for a grid that another
    grid transforms into) and no animations are returned.
    """
    values = np.asarray(getattr(scene.sources[source][0], field))
    rows, columns = values.shape
    largest = float(values.max())
    entries = [
        [scene.number(source, field, i, j, size=grid.size,
                      color=BACKGROUND if opacity_of(values[i, j], largest) > 0.5 else INK) for j in range(columns)]
        for i in range(rows)
    ]
    fills = []
    for i in range(rows):
        for j in range(columns):
            square = grid.squares[i][j].animate if animate else grid.squares[i][j]
            fill = square.set_fill(WEIGHT, opacity=opacity_of(values[i, j], largest))
            if animate:
                fills.append(fill)
    return grid.place(entries), fills


def row_sums(scene: Any, grid: TokenGrid, source: str, field: str = "weights") -> VGroup:
    """Each row's sum beside the grid, under a small "row sum" heading."""
    size = grid.size
    sums = VGroup(*(scene.number(source, field, i, reduce="sum", size=size, color=WEIGHT)
                    for i in range(len(grid.squares))))
    for i, total in enumerate(sums):
        total.next_to(grid.brackets, RIGHT, buff=0.3).set_y(grid.row_y(i))
    heading = text("row sum", size=20, color=MUTED).next_to(sums, UP, buff=0.15)
    heading.align_to(sums, LEFT)
    return VGroup(heading, sums)


def focus_row(grid: TokenGrid, entries: VGroup, values: np.ndarray, row: int, dim: float = 0.3) -> list[Any]:
    """Light row ``row`` of a heat map and dim the others (numbers, labels and fill)."""
    animations: list[Any] = []  # animation builders (mob.animate...)
    for i, numbers in enumerate(entries):
        lit = i == row
        animations.append(numbers.animate.set_opacity(1.0 if lit else dim))
        animations.append(grid.row_labels[i].animate.set_opacity(1.0 if lit else dim))
        animations.extend(
            square.animate.set_fill(opacity=opacity_of(values[i, j], values.max()) * (1.0 if lit else dim))
            for j, square in enumerate(grid.squares[i])
        )
    return animations


def vector_line(
    scene: Any, name: str, source: str, field: str, row: int, *, size: float, color: str = INK
) -> VGroup:
    """``z3 = (a, b, …)``: row ``row`` of a matrix field as a vector named ``name`` + its number.

    The name's number is the row's position; every number is recorded by the scene.
    """
    columns = np.shape(getattr(scene.sources[source][0], field))[1]
    parts: list[Text] = [scene.label(name + "{}", position(row), size=size, color=color),
                         text("= (", size=size, color=MUTED)]
    for m in range(columns):
        parts.append(scene.number(source, field, row, m, size=size, color=color))
        parts.append(text("," if m < columns - 1 else ")", size=size, color=MUTED))
    line = VGroup(*parts).arrange(RIGHT, buff=0.1)
    line[0].shift(LEFT * 0.08)
    for k, comma in enumerate(parts[3::2]):
        comma.align_to(parts[2], np.array([0, -1, 0]))
        VGroup(*parts[3 + 2 * k + 1:]).shift(RIGHT * 0.1)  # a space after each comma
    return line
