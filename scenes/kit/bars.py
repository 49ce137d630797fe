"""Horizontal bars, one row per token: a label, a bar from a zero line, a number at its end.

Rows stack down the frame, so 2 to 16 tokens fit with their names written out (a column of
bars would need the names side by side). A bar's length is its value times the chart's unit;
:meth:`BarRows.axis` maps a value to the point where the bar of row ``j`` ends, so a test can
check every bar against its number. Its rows are bands for the numbers beside them
(:meth:`BarRows.row_anchors`; ``scene.rows("key", chart)``): a number placed with
:meth:`BarRows.number_spot` joins the chart's region, so the tests see it stands in its own row.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from manim import RIGHT, Dot, Group, Line, Mobject, Rectangle, Text, VGroup, VMobject

from scenes.kit.palette import MUTED

__all__ = ["BarRows"]


class _RowAxis:
    """``c2p(value)``: where the bar of one row ends for ``value``, wherever the chart now is."""

    def __init__(self, chart: BarRows, row: int) -> None:
        self.chart, self.row = chart, row

    def c2p(self, number: float, *_: float) -> np.ndarray:
        zero, unit = self.chart.zero_line.get_x(), self.chart.unit_line.get_length()
        return np.array([zero + number * unit, self.chart.row_y(self.row), 0.0])


class BarRows(VGroup):
    """``labels[j]`` left of the bars; ``bars[j]`` from the zero line, ``values[j]`` long.

    Parameters
    ----------
    labels
        One label per row (token labels, made by the scene).
    values
        The bars' numbers (from the trace); negative ones go left of the zero line.
    width
        The width of the bars' area, from the most negative to the largest value.
    pitch
        The distance between rows.
    color
        The bars' fill.
    thickness
        A bar's height, as a share of ``pitch``.
    """

    def __init__(
        self, labels: Sequence[VMobject] | None, values: Sequence[float], *, width: float, pitch: float,
        color: str, thickness: float = 0.62, gap: float = 0.25,
    ) -> None:
        super().__init__()
        numbers = np.asarray(values, dtype=float)
        low, high = min(0.0, float(numbers.min())), max(0.0, float(numbers.max()))
        unit = width / (high - low) if high > low else 1.0
        if labels is None:  # rows named elsewhere (a table beside the bars): invisible anchors
            labels = [Dot(radius=0.0, fill_opacity=0.0, stroke_opacity=0.0) for _ in numbers]
            gap = 0.0
        label_right = max(label.width for label in labels)
        zero_x = label_right + gap - low * unit
        self.labels = VGroup(*labels)
        self.bars = VGroup()
        for j, (label, number) in enumerate(zip(labels, numbers, strict=True)):
            y = -j * pitch
            label.move_to((label_right - label.width / 2, y, 0.0))
            length = max(abs(number) * unit, 0.01)
            bar = Rectangle(width=length, height=pitch * thickness, stroke_width=0, fill_color=color, fill_opacity=0.8)
            self.bars.add(bar.move_to((zero_x + np.sign(number) * length / 2 if number else zero_x, y, 0.0)))
        top, bottom = pitch / 2, -(len(labels) - 0.5) * pitch
        self.zero_line = Line((zero_x, top, 0.0), (zero_x, bottom, 0.0), color=MUTED, stroke_width=2)
        self.unit_line = Line((zero_x, top, 0.0), (zero_x + unit, top, 0.0), stroke_opacity=0.0)  # keeps the scale
        self.values = numbers
        # the labels' size, for the numbers beside them
        self.font = float(getattr(labels[0], "font_size", 24)) if isinstance(labels[0], Text) else 24.0
        self.add(self.labels, self.zero_line, self.unit_line, self.bars)
        self.placed = Group()  # the numbers put beside the bars (not drawn as part of the chart)

    def row_anchors(self) -> dict[int, Mobject]:
        """Row ``j``'s label and bar: the band its number stands in (see :class:`scenes.facts.Bands`)."""
        return {j: VGroup(label, bar) for j, (label, bar) in enumerate(zip(self.labels, self.bars, strict=True))}

    def column_anchors(self) -> dict[int, Mobject]:
        raise ValueError("a chart of bar rows has rows, not columns")

    def band_region(self) -> tuple[Mobject, ...]:
        """What its rows reach across: the chart and the numbers placed beside it."""
        return (self, self.placed)

    def row_y(self, row: int) -> float:
        return float(self.labels[row].get_y())

    def axis(self, row: int) -> Any:
        """An object whose ``c2p(value)`` is where row ``row``'s bar ends for ``value``."""
        return _RowAxis(self, row)

    def end_side(self, row: int) -> str:
        """The anchor of the bar's far end: ``"right"`` for a positive value, ``"left"`` for a negative one."""
        return "left" if self.values[row] < 0 else "right"

    def number_spot(self, row: int, number: Mobject, buff: float = 0.12) -> Mobject:
        """Put ``number`` beyond the end of row ``row``'s bar (a negative bar's number sits right of
        the zero line, away from the labels); returns it."""
        bar = self.bars[row]
        self.placed.add(number)
        if self.values[row] < 0:
            spot = np.array([self.zero_line.get_x(), self.row_y(row), 0.0])
            return number.move_to(spot + RIGHT * (number.width / 2 + buff))
        return number.next_to(bar, RIGHT, buff=buff)
