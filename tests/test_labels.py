"""The kit's one label placer (scenes/kit/labels.py): it finds a free place, keeps inside its area,
off boxes, segments and discs, passes the caller's test, says so when nothing is free, and runs
leader lines clear of what they must not cross.

Labels here are plain rectangles: the placer sees only a label's box.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from manim import DOWN, LEFT, ORIGIN, RIGHT, UP, Arrow, Line, Rectangle

from scenes.kit.labels import (
    LEADER,
    Box,
    Obstacles,
    box_of,
    box_to_segment,
    grown,
    name_arrow,
    place_at_tip,
    place_axis_name,
    place_by_dot,
    place_label,
    place_near,
    shaft_boxes,
)

AREA: Box = (-4.0, 4.0, -3.0, 3.0)


def _label(width: float = 0.6, height: float = 0.3) -> Rectangle:
    return Rectangle(width=width, height=height).move_to((5.0, 5.0, 0.0))  # far off: placing must move it


def _gap(a: Box, b: Box) -> float:
    """How far apart two boxes are (negative: they overlap)."""
    return max(a[0] - b[1], b[0] - a[1], a[2] - b[3], b[2] - a[3])


def _near(a: Box, b: Box, tol: float = 1e-9) -> bool:
    return all(abs(x - y) <= tol for x, y in zip(a, b, strict=True))


def _crosses(p: np.ndarray, q: np.ndarray, a: np.ndarray, b: np.ndarray) -> bool:
    """Do segments p–q and a–b cross (a plain orientation test, written apart from the kit's)?"""
    def side(o: np.ndarray, s: np.ndarray, t: np.ndarray) -> float:
        return float((s[0] - o[0]) * (t[1] - o[1]) - (s[1] - o[1]) * (t[0] - o[0]))
    return side(p, q, a) * side(p, q, b) < 0 and side(a, b, p) * side(a, b, q) < 0


def _enters(p: np.ndarray, q: np.ndarray, box: Box) -> bool:
    """Does segment p–q pass through ``box`` (sampled finely)?"""
    for t in np.linspace(0.0, 1.0, 2001):
        x, y = p[:2] + t * (q[:2] - p[:2])
        if box[0] <= x <= box[1] and box[2] <= y <= box[3]:
            return True
    return False


# -- the search ---------------------------------------------------------------------------------


def test_a_free_label_goes_just_beyond_the_point_along_its_direction() -> None:
    label, obstacles = _label(), Obstacles()
    placed = place_label(label, [(ORIGIN, RIGHT)], obstacles, AREA, gaps=(0.1,))
    assert placed is not None and placed.leader is None
    assert _near(placed.box, (0.1, 0.7, -0.15, 0.15))  # its left edge 0.1 right of the point, centred on it
    assert _near(box_of(label), placed.box, 1e-6)  # the label moved there
    assert obstacles.boxes == [placed.box]  # and its box is taken now


def test_the_label_turns_away_from_a_box_in_its_way_and_keeps_its_pad() -> None:
    label = _label()
    obstacles = Obstacles([(0.0, 1.0, -0.3, 0.3)], box_pad=0.06)
    placed = place_label(label, [(ORIGIN + LEFT * 0.1, RIGHT)], obstacles, AREA)
    assert placed is not None
    assert _gap(placed.box, (0.0, 1.0, -0.3, 0.3)) >= 0.06 - 1e-9
    assert placed.box[3] <= -0.36 + 1e-9 or placed.box[2] >= 0.36 - 1e-9 or placed.box[1] <= -0.06 + 1e-9


def test_the_label_stays_inside_its_area() -> None:
    label = _label()
    area: Box = (-2.0, 0.5, -2.0, 2.0)  # no room to the right of the point
    placed = place_label(label, [(ORIGIN, RIGHT)], Obstacles(), area)
    assert placed is not None
    left, right, bottom, top = placed.box
    assert area[0] <= left and right <= area[1] and area[2] <= bottom and top <= area[3]
    assert right <= 0.5


def test_the_label_keeps_off_a_segment_and_a_disc() -> None:
    obstacles = Obstacles()
    obstacles.add_segment(np.array([0.3, -2.0, 0.0]), np.array([0.3, 2.0, 0.0]))  # a wall right of the point
    obstacles.add_disc(np.array([0.0, 0.6, 0.0]), 0.2)  # and a dot above it
    placed = place_label(_label(), [(ORIGIN, RIGHT)], obstacles, AREA)
    assert placed is not None
    left, right, bottom, top = placed.box
    assert right <= 0.3 - Obstacles.LINE_PAD + 1e-9 or left >= 0.3 + Obstacles.LINE_PAD - 1e-9
    dx = max(left - 0.0, 0.0 - right, 0.0)
    dy = max(bottom - 0.6, 0.6 - top, 0.0)
    assert math.hypot(dx, dy) >= 0.2 + Obstacles.DISC_PAD - 1e-9


def test_a_place_must_pass_the_callers_test() -> None:
    def left_of_the_point(box: Box) -> bool:
        return box[1] < 0.0

    placed = place_label(_label(), [(ORIGIN, RIGHT)], Obstacles(), AREA, accept=left_of_the_point)
    assert placed is not None and placed.box[1] < 0.0


def test_with_nothing_free_the_label_is_not_moved_and_nothing_is_taken() -> None:
    label = _label()
    before = box_of(label)
    obstacles = Obstacles([(-5.0, 5.0, -5.0, 5.0)])  # everything taken
    assert place_label(label, [(ORIGIN, RIGHT)], obstacles, AREA, anywhere=math.inf) is None
    assert not place_at_tip(label, ORIGIN, RIGHT, obstacles, AREA)
    assert not place_near(label, ORIGIN, obstacles, AREA)
    assert place_by_dot(label, ORIGIN, RIGHT, obstacles, AREA, reach=math.inf) is None
    assert box_of(label) == before
    assert len(obstacles.boxes) == 1 and not obstacles.segments
    tiny: Box = (-0.2, 0.2, -0.2, 0.2)  # an area smaller than the label
    assert place_label(label, [(ORIGIN, RIGHT)], Obstacles(), tiny, anywhere=math.inf) is None


def test_nearer_gaps_come_before_better_turns_and_anchors_in_their_order() -> None:
    # the first anchor's preferred side is blocked at the first gap; the second anchor is free there
    obstacles = Obstacles([(0.0, 2.0, -1.0, 1.0)], box_pad=0.06)
    anchors = [(np.array([-0.1, 0.0, 0.0]), RIGHT), (np.array([-3.0, 0.0, 0.0]), RIGHT)]
    placed = place_label(_label(), anchors, obstacles, AREA, gaps=(0.1, 0.5), turns=(0,))
    assert placed is not None and _near(placed.box, (-2.9, -2.3, -0.15, 0.15))


def test_margin_keeps_further_off_and_room_grows_the_placed_box() -> None:
    obstacles = Obstacles([(0.0, 1.0, -0.3, 0.3)], box_pad=0.06)
    placed = place_label(_label(), [(np.array([-0.1, -1.0, 0.0]), UP)], obstacles, AREA, margin=0.3, room=0.2)
    assert placed is not None
    assert _gap(placed.box, (0.0, 1.0, -0.3, 0.3)) >= 0.36 - 1e-9
    assert _near(obstacles.boxes[-1], grown(placed.box, 0.2))


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.floats(-3.5, 3.5), st.floats(-2.5, 2.5), st.floats(0.05, 1.0), st.floats(0.05, 1.0)),
                max_size=12),
       st.floats(-3.0, 3.0), st.floats(-2.0, 2.0), st.floats(-math.pi, math.pi))
def test_wherever_a_label_lands_it_is_inside_and_clear(boxes: list[tuple[float, float, float, float]], x: float,
                                                         y: float, angle: float) -> None:
    taken = [(bx, bx + w, by, by + h) for bx, by, w, h in boxes]
    obstacles = Obstacles(taken, box_pad=0.06)
    label = _label()
    point = np.array([x, y, 0.0])
    placed = place_label(label, [(point, np.array([math.cos(angle), math.sin(angle), 0.0]))], obstacles, AREA,
                         anywhere=2.0)
    if placed is None:
        return
    left, right, bottom, top = placed.box
    assert AREA[0] <= left and right <= AREA[1] and AREA[2] <= bottom and top <= AREA[3]
    assert all(_gap(placed.box, box) >= 0.06 - 1e-9 for box in taken)
    assert _near(box_of(label), placed.box, 1e-6)


# -- leader lines -------------------------------------------------------------------------------


def _boxed_in(obstacles: Obstacles) -> None:
    """Boxes right, above, left and below the origin, close in: a label must go further off, past
    one of the four corners between them."""
    for x, y in ((0.5, 0.0), (0.0, 0.5), (-0.5, 0.0), (0.0, -0.5)):
        obstacles.add_box((x - 0.18, x + 0.18, y - 0.18, y + 0.18))


def test_a_far_label_gets_a_leader_line_that_crosses_no_other_leader_and_no_box() -> None:
    obstacles = Obstacles()
    dot = obstacles.add_disc(ORIGIN, 0.07, dot=True)
    _boxed_in(obstacles)
    other = (np.array([0.3, 0.3, 0.0]), np.array([1.5, 1.5, 0.0]))  # another label's leader, up and right
    obstacles.add_segment(*other, leader=True)
    placed = place_by_dot(_label(), ORIGIN, RIGHT, obstacles, AREA, radius=0.07, own=[dot], reach=3.0)
    assert placed is not None and placed.gap >= LEADER and placed.leader is not None
    start, end = placed.leader
    assert not _crosses(start, end, *other)
    assert not any(_enters(start, end, box) for box in obstacles.boxes[:4])
    assert np.linalg.norm(start[:2]) == pytest.approx(0.07 + 0.02)  # it starts on the dot's edge
    assert 0.0 < _gap((end[0], end[0], end[1], end[1]), placed.box) <= 0.05  # and ends just short of the label
    assert obstacles.leaders[-1] == (start[0], start[1], end[0], end[1])  # the next leader keeps off it


def test_a_leader_line_crosses_no_line_where_a_place_allows_else_it_may() -> None:
    wall = (np.array([0.1, -0.2, 0.0]), np.array([0.5, 0.2, 0.0]))  # a line across the corner right of the dot
    for blocked in (False, True):
        obstacles = Obstacles()
        dot = obstacles.add_disc(ORIGIN, 0.07, dot=True)
        _boxed_in(obstacles)
        obstacles.add_segment(*wall)
        if blocked:  # the other corners closed: only the corner across the line is left
            for x, y in ((0.45, 0.45), (-0.45, 0.45), (-0.45, -0.45)):
                obstacles.add_box((x - 0.2, x + 0.2, y - 0.2, y + 0.2))
        placed = place_by_dot(_label(), ORIGIN, RIGHT + DOWN * 0.2, obstacles, AREA, radius=0.07, own=[dot],
                              reach=3.0)
        assert placed is not None and placed.leader is not None
        assert _crosses(*placed.leader, *wall) == blocked


def test_a_label_is_never_nearer_another_dot_than_its_own() -> None:
    for other_x, free in ((0.94, False), (1.05, True)):
        obstacles = Obstacles()
        obstacles.add_disc(ORIGIN, 0.07, dot=True)
        obstacles.add_disc(np.array([other_x, 0.0, 0.0]), 0.07, dot=True)
        placed = place_label(_label(), [(ORIGIN, RIGHT)], obstacles, AREA, gaps=(0.1,), turns=(0,), radius=0.07)
        assert (placed is not None) == free, other_x


def test_a_point_with_no_direction_takes_its_label_up_and_to_the_right() -> None:
    placed = place_by_dot(_label(), ORIGIN, ORIGIN, Obstacles(), AREA, gaps=(0.1,))
    assert placed is not None
    x, y = (placed.box[0] + placed.box[1]) / 2, (placed.box[2] + placed.box[3]) / 2
    assert x > 0 and y == pytest.approx(x)


# -- the variants -------------------------------------------------------------------------------


def test_place_near_takes_the_nearest_free_ring() -> None:
    obstacles = Obstacles([(-0.6, 0.6, -0.6, 0.6)], box_pad=0.06)  # the point is covered
    label = _label()
    assert place_near(label, ORIGIN, obstacles, AREA)
    box = box_of(label)
    assert _gap(box, (-0.6, 0.6, -0.6, 0.6)) >= 0.06 - 1e-6
    assert _gap(box, (0.0, 0.0, 0.0, 0.0)) < 0.66 + 0.12 + 1e-6  # within one ring of the first free one


def test_an_axis_name_goes_beyond_its_tip_else_beside_it() -> None:
    axis = Arrow(LEFT * 2, RIGHT * 2, buff=0)
    label, obstacles = _label(), Obstacles()
    obstacles.add_line(axis)
    assert place_axis_name(label, axis, obstacles, AREA)
    assert box_of(label)[0] == pytest.approx(2.1) and box_of(label)[2] == pytest.approx(-0.15)
    blocked = Obstacles([(2.02, 3.5, -1.0, 1.0)])  # nothing beyond the tip
    blocked.add_line(axis)
    label = _label()
    assert place_axis_name(label, axis, blocked, AREA)
    assert box_of(label)[3] < 0 and box_of(label)[1] < 2.0  # below the axis, back from the tip


def test_an_arrows_name_sits_nearer_it_than_any_other_arrow() -> None:
    arrows = [(ORIGIN, RIGHT * 2), (ORIGIN, np.array([2.0, 0.6, 0.0]))]
    obstacles = Obstacles([b for tail, tip in arrows for b in shaft_boxes(Line(tail, tip))], box_pad=0.06)
    label = _label(0.5, 0.25)
    assert name_arrow(label, 1, arrows, [(arrows[1][1], arrows[1][1])], obstacles, AREA)
    own, other = box_to_segment(box_of(label), *arrows[1]), box_to_segment(box_of(label), *arrows[0])
    assert own <= 0.75 and own < other


def test_an_arrow_along_a_longer_one_is_named_only_if_it_must_be() -> None:
    arrows = [(ORIGIN, RIGHT * 2), (ORIGIN, RIGHT)]  # every place is as near the long arrow as the short
    label = _label(0.5, 0.25)
    before = box_of(label)
    assert not name_arrow(label, 1, arrows, [(RIGHT, UP)], Obstacles(), AREA)
    assert box_of(label) == before
    obstacles = Obstacles()
    assert name_arrow(label, 1, arrows, [(RIGHT, UP)], obstacles, AREA, must=True, room=0.1)
    assert box_to_segment(box_of(label), *arrows[1]) <= 0.75
    assert _near(obstacles.boxes[-1], grown(box_of(label), 0.1), 1e-6)


def test_shaft_boxes_run_along_a_line_end_to_end() -> None:
    boxes = shaft_boxes(Line(LEFT, RIGHT + DOWN), spacing=0.2, size=0.05)
    centres = np.array([((b[0] + b[1]) / 2, (b[2] + b[3]) / 2) for b in boxes])
    assert centres[0] == pytest.approx([-1.0, 0.0]) and centres[-1] == pytest.approx([1.0, -1.0])
    steps = np.linalg.norm(np.diff(centres, axis=0), axis=1)
    assert np.allclose(steps, steps[0]) and 0.2 <= steps[0] < 0.25  # evenly, about ``spacing`` apart
