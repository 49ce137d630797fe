"""Number grids: a matrix of numbers in square brackets, with token rows and outlines.

The numbers are made (and recorded) by the scene; a grid only places them, right-aligned so
decimal points line up, with cell widths from the widest entry.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from manim import LEFT, RIGHT, UP, Mobject, RoundedRectangle, Text, VGroup, VMobject

from scenes.kit.palette import HIGHLIGHT, INK, MUTED
from scenes.kit.text import LABEL_SIZE, token_text

__all__ = ["Brackets", "NumberGrid", "outline", "right_aligned"]


class Brackets(VGroup):
    """Square brackets around a block, drawn as lines (no TeX)."""

    def __init__(self, block: VMobject, *, color: str = MUTED, buff: float = 0.12, serif: float = 0.12) -> None:
        top, bottom = block.get_top()[1] + buff, block.get_bottom()[1] - buff
        left, right = block.get_left()[0] - buff, block.get_right()[0] + buff

        def bracket(x: float, direction: int) -> VMobject:
            points = [
                [x + direction * serif, top, 0],
                [x, top, 0],
                [x, bottom, 0],
                [x + direction * serif, bottom, 0],
            ]
            return VMobject(stroke_color=color, stroke_width=2.5).set_points_as_corners(np.array(points, dtype=float))

        super().__init__(bracket(left, 1), bracket(right, -1))


def right_aligned(entries: Sequence[Sequence[VMobject]], centre: Callable[[int, int], np.ndarray]) -> None:
    """Put ``entries[i][j]`` in the cell whose centre is ``centre(i, j)``, every entry's right edge half the
    widest entry's width right of its centre, so decimal points line up."""
    half = max(e.width for row in entries for e in row) / 2
    for i, row in enumerate(entries):
        for j, entry in enumerate(row):
            middle = centre(i, j)
            entry.move_to(middle).align_to(middle + RIGHT * half, RIGHT)


class NumberGrid(VGroup):
    """A matrix of numbers in brackets, with optional token row labels and column labels.

    ``cells[i][j]`` are the number mobjects; ``row_labels`` and ``column_labels`` the labels.
    Cell widths come from the widest entry, so every scenario lays out the same way.
    """

    def __init__(
        self,
        entries: Sequence[Sequence[Text]],  # a row of '⋮' marks rows left out
        *,
        row_labels: Sequence[str | VMobject] | None = None,
        column_labels: Sequence[Text] | None = None,
        color: str = INK,
        label_color: str = MUTED,
        h_buff: float = 0.28,
        v_buff: float = 0.16,
        label_size: float = LABEL_SIZE,
    ) -> None:
        super().__init__()
        rows = len(entries)
        columns = len(entries[0]) if rows else 0
        cell_w = max(e.width for row in entries for e in row) + h_buff
        cell_h = max(max(e.height for row in entries for e in row) + v_buff, 0.42)
        self.cells: list[list[Text]] = []
        body = VGroup()
        for i, row in enumerate(entries):
            for j, entry in enumerate(row):
                entry.set_color(color)
                entry.move_to(np.array([j * cell_w, -i * cell_h, 0.0]))
                # right-align numbers so decimal points line up
                entry.align_to(np.array([j * cell_w + cell_w / 2 - h_buff / 2, 0.0, 0.0]), RIGHT)
                body.add(entry)
            self.cells.append(list(row))
        self.cell_width, self.cell_height = cell_w, cell_h
        self.body = body
        self.brackets = Brackets(body, color=label_color)
        self.add(body, self.brackets)
        self.row_labels = VGroup()
        for i, token in enumerate(row_labels or ()):
            mob = token if isinstance(token, VMobject) else token_text(token, size=label_size, color=label_color)
            mob.next_to(self.brackets, LEFT, buff=0.2).set_y(-i * cell_h)
            self.row_labels.add(mob)
        self.column_labels = VGroup()
        for j, mob in enumerate(column_labels or ()):
            mob.next_to(self.brackets, UP, buff=0.12).set_x(j * cell_w)
            self.column_labels.add(mob)
        self.add(self.row_labels, self.column_labels)
        self.shape = (rows, columns)

    def row_anchors(self) -> dict[int, Mobject]:
        """Row ``i``'s label: the band of its numbers (see :class:`scenes.facts.Bands`). A grid without
        row labels has no anchor of its own: the scene passes those its rows line up with."""
        if not len(self.row_labels):
            raise ValueError("this grid has no row labels: pass the anchors its rows line up with")
        return dict(enumerate(self.row_labels))

    def column_anchors(self) -> dict[int, Mobject]:
        """Column ``j``'s label (as :meth:`row_anchors`)."""
        if not len(self.column_labels):
            raise ValueError("this grid has no column labels: pass the anchors its columns line up with")
        return dict(enumerate(self.column_labels))

    def band_region(self) -> tuple[Mobject, ...]:
        return (self,)

    def row(self, i: int) -> VGroup:
        """The numbers of row ``i``."""
        return VGroup(*self.cells[i])

    def column(self, j: int) -> VGroup:
        """The numbers of column ``j``."""
        return VGroup(*(row[j] for row in self.cells))

    def row_box(self, i: int, *, color: str = HIGHLIGHT) -> RoundedRectangle:
        """A band of colour behind row ``i``'s numbers, between the brackets."""
        return self._band(self.row(i), color)

    def column_box(self, j: int, *, color: str = HIGHLIGHT) -> RoundedRectangle:
        """A band of colour behind column ``j``'s numbers, between the brackets."""
        return self._band(self.column(j), color)

    def _band(self, numbers: VGroup, color: str) -> RoundedRectangle:
        """Behind ``numbers``, as wide and tall as their cells (an outline would cross the
        brackets, which sit close to the numbers, or the next row's numbers)."""
        left, right = self.brackets[0].get_right()[0] + 0.04, self.brackets[1].get_left()[0] - 0.04
        top, bottom = self.brackets.get_top()[1] - 0.04, self.brackets.get_bottom()[1] + 0.04
        rows = {round(mob.get_y(), 3) for mob in numbers}
        width = right - left if len(rows) == 1 and len(numbers) > 1 else self.cell_width - 0.04
        height = self.cell_height - 0.04 if len(rows) == 1 else top - bottom
        centre = numbers.get_center()
        centre[0] = min(max(centre[0], left + width / 2), right - width / 2)
        centre[1] = min(max(centre[1], bottom + height / 2), top - height / 2)
        band = RoundedRectangle(width=min(width, right - left), height=min(height, top - bottom), corner_radius=0.06,
                                stroke_width=0, fill_color=color, fill_opacity=0.28)
        band.set_z_index(-1)  # behind the numbers
        return band.move_to(centre)


def outline(mob: VMobject, *, color: str = HIGHLIGHT, buff: float = 0.08, width: float = 3) -> RoundedRectangle:
    """A rounded rectangle around ``mob``."""
    box = RoundedRectangle(
        width=mob.width + 2 * buff, height=mob.height + 2 * buff, corner_radius=0.08,
        stroke_color=color, stroke_width=width,
    )
    return box.move_to(mob)
