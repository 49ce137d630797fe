"""The kit's drawn close-up (scenes/kit/zoom.py): a view maps a plane to the screen and back, fits
its points, moves to another view as a Transform moves the arrows drawn in it, and its panel
redraws the grid and axes for every view between."""

from __future__ import annotations

import doctest

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from manim import Line

import scenes.kit.labels
import scenes.kit.zoom
from scenes.kit.zoom import PlanePanel, View, fit_view

finite = st.floats(-50.0, 50.0, allow_nan=False)
views = st.builds(lambda ox, oy, unit, tick: View((ox, oy), unit, tick, (ox - 3, ox + 3, oy - 2, oy + 2)),
                  st.floats(-5, 5), st.floats(-3, 3), st.floats(0.05, 20.0), st.sampled_from([0.1, 0.5, 1.0]))


@settings(max_examples=80, deadline=None)
@given(views, finite, finite)
def test_c2p_and_p2c_undo_each_other(view: View, x: float, y: float) -> None:
    point = view.c2p(x, y)
    assert point[2] == 0.0
    assert view.p2c(point) == pytest.approx((x, y), rel=1e-9, abs=1e-9)
    # one unit alike on both axes: a step of 1 in x or in y is ``unit`` long on screen
    assert np.linalg.norm(view.c2p(x + 1, y) - point) == pytest.approx(view.unit)
    assert np.linalg.norm(view.c2p(x, y + 1) - point) == pytest.approx(view.unit)


def test_a_view_of_rows_puts_each_item_on_its_own_row() -> None:
    view = View((1.0, 0.0), 2.0, 0.5, (0.0, 4.0, -1.0, 1.0), rows=(0.5, 0.0, -0.5))
    assert view.axis(2).c2p(0.25).tolist() == [1.5, -0.5, 0.0]
    assert view.axis(0).c2p(-0.5).tolist() == [0.0, 0.5, 0.0]
    assert view.p2c(view.axis(1).c2p(1.5)) == (1.5, 0.0)
    with pytest.raises(ValueError, match="view of rows"):
        view.c2p(1.0, 2.0)
    assert len(view.axis_boxes()) == 1  # only the line of 0


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.floats(-20, 20), st.floats(-20, 20)), min_size=1, max_size=8),
       st.floats(-6, 0), st.floats(0.5, 6), st.floats(-3, 0), st.floats(0.5, 3), st.booleans())
def test_a_fitted_view_holds_its_points_and_0_inside_its_box(points: list[tuple[float, float]], left: float,
                                                             width: float, bottom: float, height: float,
                                                             flush: bool) -> None:
    box = (left, left + width, bottom, bottom + height)
    values = np.array([*points, (0.0, 0.0)])
    view = fit_view(values, box, flush=flush)
    w_left, w_right, w_bottom, w_top = view.window
    eps = 1e-9 * max(1.0, abs(left) + width)
    assert box[0] - eps <= w_left and w_right <= box[1] + eps and box[2] - eps <= w_bottom and w_top <= box[3] + eps
    drawn = np.array([view.c2p(x, y) for x, y in values])
    assert np.all(drawn[:, 0] >= w_left - eps) and np.all(drawn[:, 0] <= w_right + eps)
    assert np.all(drawn[:, 1] >= w_bottom - eps) and np.all(drawn[:, 1] <= w_top + eps)
    # as large as the box allows: the window fills the box's width or its height
    assert min(box[1] - w_right + w_left - box[0], box[3] - w_top + w_bottom - box[2]) == pytest.approx(0, abs=1e-6)
    sides = sorted((w_right - w_left, w_top - w_bottom))
    assert sides[0] >= 0.5 * sides[1] - 1e-9  # never a strip
    if flush:
        assert w_left == pytest.approx(box[0])


def test_a_fitted_view_of_rows_spreads_them_over_the_box() -> None:
    view = fit_view(np.array([[-1.0], [2.0], [0.0]]), (0.0, 6.0, -2.0, 2.0), rows=4)
    assert view.rows == pytest.approx((1.5, 0.5, -0.5, -1.5))
    assert 0.0 <= view.axis(0).c2p(-1.0)[0] < view.axis(1).c2p(2.0)[0] <= 6.0


def test_a_view_moves_to_another_as_the_arrows_drawn_in_them_do() -> None:
    start = View((0.0, 0.0), 1.0, 0.5, (-2.0, 2.0, -1.0, 1.0))
    end = View((1.0, -1.0), 3.0, 0.1, (-3.0, 5.0, -3.0, 2.0))
    assert start.toward(end, 0.0) == start
    whole = start.toward(end, 1.0)
    assert (whole.origin, whole.unit, whole.window) == (end.origin, end.unit, end.window)
    for t in (0.25, 0.5, 0.8):  # every point on a straight line between its two places
        between = start.toward(end, t)
        for x, y in ((0.0, 0.0), (1.0, 0.5), (-2.0, 0.3)):
            assert between.c2p(x, y) == pytest.approx((1 - t) * start.c2p(x, y) + t * end.c2p(x, y))


def _lines(panel: PlanePanel) -> list[tuple[tuple[float, ...], tuple[float, ...], float]]:
    """The lines the panel shows: start, end, opacity (the hidden ones left out)."""
    return [(tuple(np.round(line.get_start(), 9)), tuple(np.round(line.get_end(), 9)),
             round(line.get_stroke_opacity(), 9))
            for line in panel.submobjects if isinstance(line, Line) and line.get_stroke_opacity() > 0]


def test_the_panel_draws_the_axes_through_0_and_a_grid_at_the_tick() -> None:
    view = View((0.5, -0.5), 1.0, 0.5, (-1.0, 2.0, -2.0, 1.0))
    lines = _lines(PlanePanel(view))
    axes = [line for line in lines if line[2] == 1.0]
    assert sorted(axes) == sorted([((0.5, -2.0, 0.0), (0.5, 1.0, 0.0), 1.0),
                                   ((-1.0, -0.5, 0.0), (2.0, -0.5, 0.0), 1.0)])
    xs = sorted(start[0] for start, end, _ in lines if start[0] == end[0] and start[0] != 0.5)
    assert xs == pytest.approx([-1.0, -0.5, 0.0, 1.0, 1.5, 2.0])  # every half unit but the axis
    dense = View((0.0, 0.0), 0.1, 0.5, (-1.0, 1.0, -1.0, 1.0))  # grid lines 0.05 apart: faded out
    assert len(_lines(PlanePanel(dense))) == 2


def test_the_panel_zooms_from_one_view_to_the_other_and_knows_where_it_ended() -> None:
    start = View((0.0, 0.0), 1.0, 0.5, (-2.0, 2.0, -1.0, 1.0))
    end = View((1.0, -1.0), 3.0, 0.1, (-3.0, 5.0, -3.0, 2.0))
    panel = PlanePanel(start)
    move = panel.zoom(end)
    move.begin()
    move.interpolate(0.0)
    assert _lines(panel) == _lines(PlanePanel(start))
    move.interpolate(0.5)
    halfway = _lines(panel)
    assert halfway != _lines(PlanePanel(start)) and halfway != _lines(PlanePanel(end))
    move.interpolate(1.0)
    assert _lines(panel) == _lines(PlanePanel(end))
    move.finish()
    assert _lines(panel) == _lines(PlanePanel(end)) and panel.view == end
    other = PlanePanel(start)
    short = other.zoom(end, rate_func=lambda t: 0.999 * t)  # a rate that never reaches 1
    short.begin()
    short.finish()
    assert other.view == end and _lines(other) == _lines(PlanePanel(end))
    with pytest.raises(ValueError, match="start"):
        PlanePanel().zoom(end)


def test_the_docstring_examples_run() -> None:
    for module in (scenes.kit.zoom, scenes.kit.labels):
        result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
        assert result.attempted > 0 and result.failed == 0, module.__name__
