"""Matrices whose columns come in blocks, one block per head: the heads' matrices side by side.

A :class:`BlockMatrix` is a ``rows × (blocks · width)`` lattice of cells in brackets. The cells of
one row and one block form a *piece*, tinted in the block's colour (a head's colour,
:data:`HEAD_COLORS`), so that the matrix can be shown cut along its blocks (each token's row into
its heads' pieces: a reshape) and its pieces regrouped (one head's pieces into a matrix of their
own: a transpose). Numbers, when the cells carry them, are made and recorded by the scene and put
in with :meth:`BlockMatrix.place`; without them the pieces show their colour only.

Its rows and blocks are bands for the numbers in it (:meth:`BlockMatrix.row_anchors`: a row's
pieces; :meth:`BlockMatrix.column_anchors`: a block's pieces, the band of a head;
:meth:`BlockMatrix.cell_columns`: one mark per column of cells, which draws nothing).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from manim import DOWN, LEFT, RIGHT, Mobject, Rectangle, VGroup, VMobject

from scenes.kit.grids import Brackets, right_aligned

__all__ = ["COLOUR_TINT", "HEAD_COLORS", "NUMBER_TINT", "BlockMatrix", "head_color"]

HEAD_COLORS = ("#0072B2", "#D55E00", "#F0E442", "#009E73")
"""One colour per head, for up to four heads drawn (Okabe–Ito blue, vermillion, yellow, bluish green), always
with the head's number written beside it. Not the embeddings' reddish purple: X stands beside the heads' blocks.
Head 5 takes head 1's again (never drawn side by side)."""

NUMBER_TINT = 0.22  # the fill of a piece behind numbers: the numbers keep their role's colour and read on it
COLOUR_TINT = 0.6  # the fill of a piece without numbers: its colour is all it shows


def head_color(head: int) -> str:
    """The colour of head ``head`` (from 0)."""
    return HEAD_COLORS[head % len(HEAD_COLORS)]


class BlockMatrix(VGroup):
    """``rows × (blocks · width)`` cells in brackets, a tinted piece per row and block.

    ``pieces[i][k]`` is row ``i``'s piece of block ``k`` (``width`` cells); row ``i`` sits at
    ``y = -i · cell_h`` and column ``c`` at ``x = c · cell_w`` before the matrix is moved. ``colors``
    gives each block's tint (``tint`` its opacity; 0 draws no tint). ``row_labels`` are put left of
    the rows by :meth:`label_rows`.
    """

    def __init__(self, rows: int, blocks: int, width: int, *, cell_w: float, cell_h: float,
                 colors: Sequence[str], tint: float = NUMBER_TINT, gap: float = 0.05) -> None:
        super().__init__()
        self.rows, self.blocks, self.width_in_cells = rows, blocks, width
        self.cell_w, self.cell_h, self.gap = cell_w, cell_h, gap
        self.pieces = [
            [Rectangle(width=width * cell_w - gap, height=cell_h - gap, stroke_width=0,
                       fill_color=colors[k], fill_opacity=tint).move_to(((k * width + (width - 1) / 2) * cell_w,
                                                                          -i * cell_h, 0))
             for k in range(blocks)]
            for i in range(rows)
        ]
        self.tiles = VGroup(*(piece for row in self.pieces for piece in row))
        self.brackets = Brackets(self.tiles, buff=0.06, serif=min(0.12, cell_w / 3))
        self.entries: list[list[VMobject]] = []
        self.numbers = VGroup()
        self.row_labels = VGroup()
        self.add(self.tiles, self.brackets, self.numbers, self.row_labels)

    # -- where things are ------------------------------------------------------------------------
    def cell_center(self, i: int, column: int) -> np.ndarray:
        """The centre of cell ``(i, column)``, wherever its piece now is."""
        k, c = divmod(column, self.width_in_cells)
        piece = self.pieces[i][k]
        return piece.get_center() + RIGHT * (c - (self.width_in_cells - 1) / 2) * self.cell_w

    def row(self, i: int) -> VGroup:
        """The pieces of row ``i``."""
        return VGroup(*self.pieces[i])

    def block(self, k: int) -> VGroup:
        """The pieces of block ``k`` (a head's columns)."""
        return VGroup(*(row[k] for row in self.pieces))

    def piece(self, i: int, k: int) -> VGroup:
        """Row ``i``'s piece of block ``k`` with its numbers (what moves as one in a reshape)."""
        numbers = self.entries[i][k * self.width_in_cells:(k + 1) * self.width_in_cells] if self.entries else []
        return VGroup(self.pieces[i][k], *numbers)

    def cut_block(self, k: int) -> VGroup:
        """Block ``k``'s pieces with their numbers and its columns' marks (:meth:`cell_columns`): what moves
        as one when the blocks come apart."""
        width = self.width_in_cells
        marks = [self._columns[c] for c in range(k * width, (k + 1) * width)] if hasattr(self, "_columns") else []
        return VGroup(*(self.piece(i, k) for i in range(self.rows)), *marks)

    def row_anchors(self) -> dict[int, Mobject]:
        """Row ``i``'s pieces: the band of its numbers (see :class:`scenes.facts.Bands`)."""
        return {i: self.row(i) for i in range(self.rows)}

    def column_anchors(self) -> dict[int, Mobject]:
        """Block ``k``'s pieces: the band of a head's numbers."""
        return {k: self.block(k) for k in range(self.blocks)}

    def band_region(self) -> tuple[Mobject, ...]:
        return (self.tiles, self.brackets)

    def cell_columns(self) -> dict[int, Mobject]:
        """One mark per column of cells (it draws nothing and moves with the matrix): column ``c``'s band."""
        if not hasattr(self, "_columns"):
            height = self.rows * self.cell_h - self.gap
            marks = {c: Rectangle(width=self.cell_w - self.gap, height=height, stroke_width=0, fill_opacity=0)
                     .move_to((self.cell_center(0, c)[0], (self.pieces[0][0].get_y() + self.pieces[-1][0].get_y()) / 2,
                               0)) for c in range(self.blocks * self.width_in_cells)}
            self._columns = marks
            self.add(VGroup(*marks.values()))
        return dict(self._columns)

    # -- what it holds ---------------------------------------------------------------------------
    def place(self, entries: Sequence[Sequence[VMobject]]) -> VGroup:
        """Put numbers in the cells, right-aligned so decimal points line up; returns them (rows of a VGroup)."""
        right_aligned(entries, self.cell_center)
        self.entries = [list(row) for row in entries]
        self.numbers.submobjects = [VGroup(*row) for row in entries]
        return self.numbers

    def label_rows(self, labels: Sequence[VMobject], buff: float = 0.15) -> None:
        """Put labels the scene made left of the rows, right-aligned."""
        self.row_labels.submobjects = []
        for i, label in enumerate(labels):
            label.next_to(self.brackets, LEFT, buff=buff).set_y(self.pieces[i][0].get_y())
            self.row_labels.add(label)

    # -- cutting it --------------------------------------------------------------------------------
    def cut_shifts(self, apart: float, down: float = 0.0) -> list[list[np.ndarray]]:
        """How far each piece moves when the blocks open ``apart`` from each other and the rows ``down``:
        piece ``(i, k)`` by ``k · apart`` right and ``i · down`` down (the first stays)."""
        return [[RIGHT * k * apart + DOWN * i * down for k in range(self.blocks)] for i in range(self.rows)]

    def brackets_after(self, shifts: list[list[np.ndarray]]) -> Brackets:
        """The brackets around the pieces once each has moved by ``shifts``."""
        moved = VGroup(*(self.pieces[i][k].copy().shift(shifts[i][k])
                         for i in range(self.rows) for k in range(self.blocks)))
        return Brackets(moved, buff=0.06, serif=min(0.12, self.cell_w / 3))

    def row_box_after(self, i: int, shifts: list[list[np.ndarray]], color: str, buff: float = 0.05) -> Rectangle:
        """An outline around row ``i``'s pieces once moved by ``shifts``."""
        moved = VGroup(*(self.pieces[i][k].copy().shift(shifts[i][k]) for k in range(self.blocks)))
        box = Rectangle(width=moved.width + 2 * buff, height=moved.height + 2 * buff, stroke_color=color,
                        stroke_width=3, fill_opacity=0)
        return box.move_to(moved)

    def block_box(self, k: int, color: str, buff: float = 0.05) -> Rectangle:
        """An outline around block ``k``'s pieces."""
        block = self.block(k)
        box = Rectangle(width=block.width + 2 * buff, height=block.height + 2 * buff, stroke_color=color,
                        stroke_width=3, fill_opacity=0)
        return box.move_to(block)

    def top_of_block(self, k: int) -> np.ndarray:
        """The middle of the top edge of block ``k`` (for a head's label above it)."""
        return self.block(k).get_top()
