"""A plane drawn, not filmed, at any scale: close-ups in which text and lines keep their size.

A :class:`View` says where a plane (value space, one pair's plane of RoPE, …) is drawn: 0 at
``origin``, one unit of the plane ``unit`` long, a grid every ``tick`` inside ``window``.
:func:`fit_view` gives the largest view that holds some points (and 0) in a box, one unit alike
on both axes; :class:`PlanePanel` draws a view's grid and axes, and :meth:`PlanePanel.zoom`
moves it from one view to another, redrawing the grid at each frame (the old grid fading as
the new one comes). A close-up is a play between two views: the panel zooms while each arrow
goes to its place in the new view (a ``ReplacementTransform`` to the arrow drawn there).
Nothing is scaled, so text keeps its size, lines their width, and nothing grows into the
subtitles' band, as it would under a camera's zoom.

``view.c2p(x, y)`` maps the plane's numbers to the screen, so a scene records what it drew with
``self.plot(mob, view, *facts)`` and the tests map it back. A view of ``rows`` draws
one-dimensional values (d_v = 1), one row per item: ``view.axis(j)`` maps row j's number.

Examples
--------
In a scene (value space beside a table, then closer in on small arrows)::

    view = fit_view(points, box)               # points: the rows the plane must hold
    panel = PlanePanel(view)
    v = self.plot(arrow(view.c2p(0, 0), view.c2p(x, y)), view, *facts, anchor="end")
    self.beat("…", Create(panel), GrowArrow(v))
    close = fit_view(small_points, box)
    w = self.plot(arrow(close.c2p(0, 0), close.c2p(x2, y2)), close, *facts2, anchor="end")
    self.beat("Closer in: …", panel.zoom(close), ReplacementTransform(v, w))
    panel.draw(close)

Labels keep off a view's axes and arrows through :mod:`scenes.kit.labels`:
``Obstacles([*view.axis_boxes(), *shaft_boxes(v)])``, then ``name_arrow`` or ``place_at_tip``.

For the next lectures: RoPE's per-pair planes are a view each (:func:`fit_view` of the pair's
q and k at every position shown, into one box per pair), the arrows turning within it;
masked attention's context is value space as in lecture 6's weighted sum (a close-up on the
few weighted values a middle token's past holds).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
from manim import LEFT, RIGHT, Line, Mobject, UpdateFromAlphaFunc, VGroup

from scenes.kit.labels import Box
from scenes.kit.palette import MUTED
from scenes.kit.vectors import nice_span

__all__ = ["ASPECT", "PlanePanel", "RowAxis", "View", "fit_view"]

ASPECT = 0.5
"""A fitted plane's shorter side is at least this much of its longer (the points' spread may be flat)."""


@dataclass(frozen=True)
class View:
    """A plane on screen: 0 at ``origin``, one unit ``unit`` long, a grid every ``tick`` inside
    ``window`` (left, right, bottom, top). With ``rows`` (one-dimensional values) each item has a
    row of its own (``rows[j]``: the y of row j) and only the first coordinate moves along it.

    >>> view = View((1.0, -1.0), 2.0, 0.5, (-1.0, 3.0, -3.0, 1.0))
    >>> view.c2p(0.5, 1.0).tolist()
    [2.0, 1.0, 0.0]
    >>> view.p2c(view.c2p(0.5, 1.0))
    (0.5, 1.0)
    """

    origin: tuple[float, float]
    unit: float
    tick: float
    window: Box
    rows: tuple[float, ...] = ()

    def point(self, v: Sequence[float] | np.ndarray, j: int = 0) -> np.ndarray:
        """The screen point of ``v`` (of item j's row, in a view of rows)."""
        x = self.origin[0] + self.unit * float(v[0])
        y = self.rows[j] if self.rows else self.origin[1] + self.unit * float(v[1])
        return np.array([x, y, 0.0])

    def c2p(self, *coordinates: float) -> np.ndarray:
        """The screen point of the plane's ``(x, y)`` (a view of rows: use :meth:`axis`)."""
        if self.rows or len(coordinates) != 2:
            raise ValueError(f"a plane's c2p takes (x, y); got {len(coordinates)} coordinates"
                             + (" in a view of rows (use view.axis(j).c2p(x))" if self.rows else ""))
        return self.point(coordinates)

    def p2c(self, point: Sequence[float] | np.ndarray) -> tuple[float, float]:
        """The plane's ``(x, y)`` at a screen point (a view of rows: y is 0)."""
        x = (float(point[0]) - self.origin[0]) / self.unit
        return (x, 0.0) if self.rows else (x, (float(point[1]) - self.origin[1]) / self.unit)

    def axis(self, j: int) -> RowAxis:
        """What maps item j's coordinates to the screen: its row's in a view of rows, else the plane's."""
        return RowAxis(self, j)

    def toward(self, other: View, t: float) -> View:
        """The view a fraction ``t`` of the way to ``other``: every point moves on a straight line, as a
        Transform moves an arrow, so grid and arrows stay together (the tick stays this view's)."""

        def mix(a: Iterable[float], b: Iterable[float]) -> tuple[float, ...]:
            return tuple((1 - t) * x + t * y for x, y in zip(a, b, strict=True))

        origin = mix(self.origin, other.origin)
        window = mix(self.window, other.window)
        return View((origin[0], origin[1]), (1 - t) * self.unit + t * other.unit, self.tick,
                    (window[0], window[1], window[2], window[3]), mix(self.rows, other.rows))

    def axis_boxes(self, half: float = 0.02) -> list[Box]:
        """Thin boxes along the axes (a view of rows: the line of 0), for labels to keep off."""
        left, right, bottom, top = self.window
        ox, oy = self.origin
        boxes = [(ox - half, ox + half, bottom, top)]
        if not self.rows:
            boxes.append((left, right, oy - half, oy + half))
        return boxes


@dataclass(frozen=True)
class RowAxis:
    """Item ``row``'s coordinates to the screen (``c2p``), for :meth:`ExplainerScene.plot`."""

    view: View
    row: int

    def c2p(self, *coordinates: float) -> np.ndarray:
        return self.view.point(coordinates, self.row)


def fit_view(points: np.ndarray, box: Box, rows: int = 0, *, flush: bool = False, aspect: float = ASPECT,
             ticks: int = 6) -> View:
    """The largest view holding ``points`` (rows of x, y; and 0, with a margin) in ``box``, one unit
    alike on both axes, in the box's middle (``flush``: at its left); a side at least ``aspect``
    of the other; a grid of about ``ticks`` nice steps. ``rows``: one-dimensional values, that
    many rows spread over the box's height (only x is read).

    >>> view = fit_view(np.array([[1.0, 0.5], [-0.5, 1.0]]), (0.0, 4.0, 0.0, 2.0))
    >>> [round(edge, 3) for edge in view.window]  # the box's height; as wide as the points need
    [0.5, 3.5, 0.0, 2.0]
    >>> view.c2p(1.0, 0.5).round(3).tolist()
    [3.25, 1.0, 0.0]
    """
    left, right, bottom, top = box
    x_tick, x0, x1 = nice_span(points[:, 0], ticks)
    if rows:
        unit = (right - left) / (x1 - x0)
        gap = (top - bottom) / rows
        ys = tuple(top - gap * (j + 0.5) for j in range(rows))
        return View((left - unit * x0, 0.0), unit, x_tick, box, ys)
    y_tick, y0, y1 = nice_span(points[:, 1], ticks)
    x0, x1 = _widened(x0, x1, aspect * (y1 - y0))  # no side of the plane collapses to a strip
    y0, y1 = _widened(y0, y1, aspect * (x1 - x0))
    unit = min((right - left) / (x1 - x0), (top - bottom) / (y1 - y0))
    ox = left - unit * x0 if flush else (left + right) / 2 - unit * (x0 + x1) / 2
    oy = (bottom + top) / 2 - unit * (y0 + y1) / 2
    return View((ox, oy), unit, max(x_tick, y_tick), (ox + unit * x0, ox + unit * x1, oy + unit * y0, oy + unit * y1))


def _widened(low: float, high: float, least: float) -> tuple[float, float]:
    """The range ``low``..``high`` grown about its middle to at least ``least`` long."""
    grow = max(0.0, least - (high - low)) / 2
    return low - grow, high + grow


def _multiples(origin: float, step: float, low: float, high: float) -> list[float]:
    first, last = math.ceil((low - origin) / step - 1e-9), math.floor((high - origin) / step + 1e-9)
    return [origin + k * step for k in range(first, last + 1) if k != 0]


_Stroke = tuple[tuple[float, float, float], tuple[float, float, float], float, float]
"""A line of the panel: start, end, stroke width, stroke opacity."""


def _grid(view: View, tick: float, opacity: float) -> list[_Stroke]:
    """Faint lines at the multiples of ``tick`` inside the view's window (denser than 0.3 apart: fading)."""
    left, right, bottom, top = view.window
    step = view.unit * tick
    opacity *= float(np.clip((step - 0.15) / 0.3, 0.0, 1.0))
    if opacity <= 0.01:
        return []
    lines = [((x, bottom, 0.0), (x, top, 0.0), 1.0, 0.18 * opacity)
             for x in _multiples(view.origin[0], step, left, right)]
    if not view.rows:
        lines += [((left, y, 0.0), (right, y, 0.0), 1.0, 0.18 * opacity)
                  for y in _multiples(view.origin[1], step, bottom, top)]
    return lines


def _axes(view: View) -> list[_Stroke]:
    """The axes through 0 (a view of rows: the line of 0 through every row)."""
    left, right, bottom, top = view.window
    ox, oy = view.origin
    axes = [((ox, bottom, 0.0), (ox, top, 0.0), 2.0, 1.0)]
    if not view.rows:
        axes.append(((left, oy, 0.0), (right, oy, 0.0), 2.0, 1.0))
    return axes


class PlanePanel(VGroup):
    """A view's grid and axes, redrawn (not scaled) for each view: lines keep their width.

    Parameters
    ----------
    view
        The view drawn first (``None``: nothing yet; :meth:`draw` one).
    color
        Of the grid and the axes.
    """

    def __init__(self, view: View | None = None, *, color: str = MUTED) -> None:
        super().__init__()
        self.line_color = color
        self.view = view
        if view is not None:
            self.draw(view)

    def draw(self, view: View, ticks: Sequence[tuple[float, float]] = ()) -> PlanePanel:
        """Draw the plane as seen through ``view``: a faint grid for each (tick, opacity) of ``ticks``
        (by default the view's own), then the axes.

        The panel keeps its lines and moves them (hiding the ones not needed): a play draws the lines
        its mobjects had when it began, so a line taken out during a play would stay on screen. Lines
        are described, not made, for each frame of a close-up (making a Line costs more than moving one)."""
        lines = [line for tick, opacity in (ticks or [(view.tick, 1.0)]) for line in _grid(view, tick, opacity)]
        lines += _axes(view)
        while len(self.submobjects) < len(lines):
            self.add(Line(LEFT, RIGHT))
        for k, line in enumerate(self.submobjects):
            if k < len(lines):
                start, end, width, opacity = lines[k]
                cast(Line, line).put_start_and_end_on(np.array(start), np.array(end))
                line.set_stroke(self.line_color, width=width, opacity=opacity)
            else:
                line.set_stroke(opacity=0.0)
        self.view = view
        return self

    def zoom(self, end: View, start: View | None = None, **options: Any) -> UpdateFromAlphaFunc:
        """The panel moving from ``start`` (by default the view drawn last) to ``end`` (the close-up,
        the pull-back): every point on a straight line, the old grid fading as the new one comes.
        ``options``: the animation's (``rate_func``, ``run_time``)."""
        begin = start if start is not None else self.view
        if begin is None:
            raise ValueError("start: a panel that drew no view yet needs the view to zoom from")
        return _Zoom(self, begin, end, **options)


class _Zoom(UpdateFromAlphaFunc):
    """A panel's move between two views; it ends on ``end`` whatever its rate function's last value
    (a smooth one may stop a hair short of 1), so the panel knows where it is."""

    def __init__(self, panel: PlanePanel, begin: View, end: View, **options: Any) -> None:
        def update(mob: Mobject, t: float) -> None:
            cast(PlanePanel, mob).draw(begin.toward(end, t), [(begin.tick, 1.0 - t), (end.tick, t)])

        super().__init__(panel, cast(Any, update), **options)
        self.end_view = end

    def finish(self) -> None:
        super().finish()
        cast(PlanePanel, self.mobject).draw(self.end_view)  # the same lines as the move's at 1
