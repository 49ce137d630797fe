"""Labels beside what they name, clear of everything else: one search, a few thin variants.

:class:`Obstacles` holds what labels keep off: boxes (texts, and boxes along arrows), segments
(lines, arrows, leader lines) and discs (dots, rings, tips), each with a margin of its kind.
:func:`place_label` is the one search: it tries boxes of the label's size around one or more
anchors (a point and the way off it to try first), nearer first, each way round from that
direction (``gaps`` × anchors × ``turns``), then, if asked, anywhere in the area up to a reach,
nearest first. A box must lie inside the area, keep off the obstacles, pass an optional
``accept`` test and, far from its point (``leader``), leave room for a leader line that crosses
nothing. The label is moved to the first such box, which joins the obstacles.

The variants change its defaults, as Manim's thin subclasses do:

- :func:`place_at_tip`: beside an arrow's tip (or any point), off along a direction, close in;
- :func:`place_near`: as near a point as is free, every way round, out to a reach;
- :func:`place_by_dot`: a point's label, with a leader line when it must sit further off;
- :func:`place_axis_name`: an axis's name by its tip, or beside it sliding back;
- :func:`name_arrow`: one of several arrows' names, nearer its own arrow than any other.

A label is measured once and moved only where it lands: measuring a text's box walks every
glyph, and moving and measuring it at each try cost more than the rest of a scene's build.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np
from manim import RIGHT, UP, Line, Mobject

__all__ = [
    "GAPS",
    "LEADER",
    "NAME_GAPS",
    "NAME_REACH",
    "TIP_GAPS",
    "TIP_TURNS",
    "TURNS",
    "Anchor",
    "Box",
    "Obstacles",
    "Placed",
    "box_of",
    "box_to_segment",
    "grown",
    "leader",
    "name_arrow",
    "place_at_tip",
    "place_axis_name",
    "place_by_dot",
    "place_label",
    "place_near",
    "shaft_boxes",
]

Box = tuple[float, float, float, float]
"""left, right, bottom, top"""

Anchor = tuple[np.ndarray, np.ndarray]
"""A point a label is placed around, and the direction off it tried first."""

TURNS = (0, 30, -30, 60, -60, 90, -90, 120, -120, 150, -150, 180)
"""Each way round from the preferred direction, nearest turns first (degrees)."""
GAPS = (0.04, 0.1, 0.18, 0.28, 0.4, 0.55, 0.72, 0.9)
"""How far a point's label may sit from it, tried in turn (its box's edge from the point's)."""
TIP_TURNS = (0, 30, -30, 60, -60, 90, -90, 135, -135, 180)
TIP_GAPS = (0.08, 0.25, 0.45)
"""Beside an arrow's tip: fewer, coarser turns, and close in."""
LEADER = 0.25
"""From this gap on, a point's label is far enough from it to want a leader line to it."""


def box_of(mob: Mobject) -> Box:
    return (mob.get_left()[0], mob.get_right()[0], mob.get_bottom()[1], mob.get_top()[1])


def grown(box: Box, pad: float) -> Box:
    """``box`` with ``pad`` more on every side.

    >>> grown((0.0, 1.0, 0.0, 0.5), 0.25)
    (-0.25, 1.25, -0.25, 0.75)
    """
    return (box[0] - pad, box[1] + pad, box[2] - pad, box[3] + pad)


def shaft_boxes(line: Line, spacing: float = 0.2, size: float = 0.05) -> list[Box]:
    """Small boxes along an arrow (or any straight line), so labels keep off it as off texts."""
    start, end = line.get_start(), line.get_end()
    count = max(2, int(np.linalg.norm(end - start) / spacing) + 1)
    points = [start + t * (end - start) for t in np.linspace(0, 1, count)]
    return [(p[0] - size, p[0] + size, p[1] - size, p[1] + size) for p in points]


def box_to_segment(box: Box, start: np.ndarray, end: np.ndarray) -> float:
    """How far a box is from a segment (0 where they meet), sampled every 0.03 along it.

    >>> box_to_segment((1.0, 2.0, 1.0, 2.0), np.array([0.0, 0.0]), np.array([3.0, 0.0]))
    1.0
    """
    count = max(8, int(np.linalg.norm(end[:2] - start[:2]) / 0.03) + 2)
    points = start[:2] + np.linspace(0.0, 1.0, count)[:, None] * (end[:2] - start[:2])
    dx = np.maximum(np.maximum(box[0] - points[:, 0], points[:, 0] - box[1]), 0.0)
    dy = np.maximum(np.maximum(box[2] - points[:, 1], points[:, 1] - box[3]), 0.0)
    return float(np.min(np.hypot(dx, dy)))


def leader(ends: tuple[np.ndarray, np.ndarray], color: str, opacity: float = 0.6) -> Line:
    """A thin line from a dot to its far label (ends from :attr:`Placed.leader`)."""
    return Line(ends[0], ends[1], color=color, stroke_width=1.5, stroke_opacity=opacity)


# -- what labels keep off ----------------------------------------------------------------------


def _segments_enter_boxes(starts: np.ndarray, ends: np.ndarray, lows: np.ndarray, highs: np.ndarray) -> np.ndarray:
    """Which segments enter which boxes (Liang–Barsky clipping), broadcast over the leading axes;
    the last axis holds x and y."""
    d = ends - starts
    flat = np.abs(d) < 1e-12
    with np.errstate(divide="ignore", invalid="ignore"):
        a, b = (lows - starts) / d, (highs - starts) / d
    within = (starts >= lows) & (starts <= highs)
    enter = np.where(flat, np.where(within, -np.inf, np.inf), np.minimum(a, b))
    leave = np.where(flat, np.where(within, np.inf, -np.inf), np.maximum(a, b))
    result: np.ndarray = np.maximum(enter.max(axis=-1), 0.0) <= np.minimum(leave.min(axis=-1), 1.0)
    return result


def _point_to_segments(point: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """The distance from each point to each segment (broadcast: one point to many segments, or
    many points to one segment)."""
    d = ends - starts
    t = np.clip(np.sum((point - starts) * d, axis=-1) / np.maximum(np.sum(d * d, axis=-1), 1e-18), 0.0, 1.0)
    result: np.ndarray = np.linalg.norm(starts + t[..., None] * d - point, axis=-1)
    return result


def _cross(u: np.ndarray, v: np.ndarray) -> np.ndarray:
    result: np.ndarray = u[..., 0] * v[..., 1] - u[..., 1] * v[..., 0]
    return result


def _segment_distance(p: np.ndarray, q: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The distance between segments p–q and a–b (0 where they cross), broadcast."""
    crossing = (_cross(q - p, a - p) * _cross(q - p, b - p) < 0) & (_cross(b - a, p - a) * _cross(b - a, q - a) < 0)
    near = np.minimum.reduce([_point_to_segments(p, a, b), _point_to_segments(q, a, b),
                              _point_to_segments(a, p, q), _point_to_segments(b, p, q)])
    result: np.ndarray = np.where(crossing, 0.0, near)
    return result


class Obstacles:
    """What labels keep off: boxes (texts), segments (lines, arrows, leader lines) and discs (dots,
    rings), each with a margin of its kind. A leader line keeps off all but lines and arrows (it
    may cross an axis, never another leader line).

    Parameters
    ----------
    boxes
        Boxes to start with (say, :func:`shaft_boxes` along arrows, for a picture that keeps
        labels off its arrows as off texts).
    box_pad
        How far a label keeps from a box (more for a box added with ``room``).
    """

    BOX_PAD, LINE_PAD, DISC_PAD = 0.1, 0.06, 0.05
    NEAREST = 0.06

    def __init__(self, boxes: Iterable[Box] = (), *, box_pad: float = BOX_PAD) -> None:
        self.box_pad = box_pad
        self.boxes: list[Box] = []
        self.segments: list[tuple[float, float, float, float]] = []
        self.leaders: list[tuple[float, float, float, float]] = []
        self.discs: list[tuple[float, float, float]] = []
        self.dots: list[int] = []  # the discs that are labelled points
        for box in boxes:
            self.add_box(box)

    def add_box(self, box: Box, *, room: float = 0.0) -> None:
        """A text's box (``room``: labels keep that much further from it)."""
        self.boxes.append(tuple(float(v) for v in (grown(box, room) if room else box)))  # type: ignore[arg-type]

    def add_segment(self, start: np.ndarray, end: np.ndarray, *, leader: bool = False) -> None:
        """A straight line (``leader``: a leader line, which other leader lines keep off)."""
        segment = (float(start[0]), float(start[1]), float(end[0]), float(end[1]))
        self.segments.append(segment)
        if leader:
            self.leaders.append(segment)

    def add_line(self, line: Line) -> None:
        """A straight line or an arrow (its tip as a disc too)."""
        self.add_segment(line.get_start(), line.get_end())
        if line.has_tip():
            tip = line.get_tip()
            self.add_disc(tip.get_center(), max(tip.width, tip.height) / 2)

    def add_disc(self, centre: np.ndarray, radius: float, *, dot: bool = False) -> int:
        """A dot (a labelled point: ``dot``), a ring or a tip; returns its number, for
        :func:`place_label`'s ``own`` (the discs a leader line may start on)."""
        self.discs.append((float(centre[0]), float(centre[1]), float(radius)))
        if dot:
            self.dots.append(len(self.discs) - 1)
        return len(self.discs) - 1

    def add_all(self, mobs: Iterable[Mobject]) -> None:
        """Texts by their boxes, lines and arrows by their segments."""
        for mob in mobs:
            if isinstance(mob, Line):
                self.add_line(mob)
            else:
                self.add_box(box_of(mob))

    def box_is_clear(self, box: Box, *, margin: float = 0.0) -> bool:
        """Does ``box`` keep off every obstacle (``margin`` further than their margins)?"""
        return bool(self.clear(np.array([box], dtype=float), margin=margin)[0])

    def clear(self, boxes: np.ndarray, *, margin: float = 0.0) -> np.ndarray:
        """Which of ``boxes`` (rows of left, right, bottom, top) keep off every obstacle
        (``margin`` further than their margins)."""
        left, right, bottom, top = (boxes[:, k, None] for k in range(4))
        ok = np.ones(len(boxes), dtype=bool)
        if self.boxes:
            b, pad = np.array(self.boxes), self.box_pad + margin
            ok &= ~np.any((left < b[:, 1] + pad) & (b[:, 0] < right + pad) & (bottom < b[:, 3] + pad)
                          & (b[:, 2] < top + pad), axis=1)
        if self.discs:
            d = np.array(self.discs)
            dx = np.maximum(np.maximum(left - d[:, 0], d[:, 0] - right), 0.0)
            dy = np.maximum(np.maximum(bottom - d[:, 1], d[:, 1] - top), 0.0)
            ok &= ~np.any(dx**2 + dy**2 < (d[:, 2] + self.DISC_PAD + margin) ** 2, axis=1)
        if self.segments:
            s, pad = np.array(self.segments), self.LINE_PAD + margin
            lows = np.stack([boxes[:, 0], boxes[:, 2]], axis=1)[:, None, :] - pad
            highs = np.stack([boxes[:, 1], boxes[:, 3]], axis=1)[:, None, :] + pad
            ok &= ~np.any(_segments_enter_boxes(s[None, :, :2], s[None, :, 2:], lows, highs), axis=1)
        return ok

    def unmistaken(self, boxes: np.ndarray, gaps: np.ndarray, points: np.ndarray) -> np.ndarray:
        """Which label boxes (each ``gaps`` from the dot at its row of ``points``) keep further from
        every other dot than from their own (by ``NEAREST`` at least), or a clear :data:`LEADER`
        from them: a label is read as naming the dot beside it. Dots on the same spot share their
        labels' places."""
        if not self.dots:
            return np.ones(len(boxes), dtype=bool)
        d = np.array(self.discs)[self.dots]
        same = np.hypot(d[:, 0] - points[:, 0, None], d[:, 1] - points[:, 1, None]) <= 0.08
        dx = np.maximum(np.maximum(boxes[:, 0, None] - d[:, 0], d[:, 0] - boxes[:, 1, None]), 0.0)
        dy = np.maximum(np.maximum(boxes[:, 2, None] - d[:, 1], d[:, 1] - boxes[:, 3, None]), 0.0)
        away = np.hypot(dx, dy) - d[:, 2]
        result: np.ndarray = np.all(same | (away >= np.minimum(gaps + self.NEAREST, LEADER)[:, None]), axis=1)
        return result

    def segment_is_clear(self, start: np.ndarray, end: np.ndarray, skip: Sequence[int] = ()) -> bool:
        """May a leader line run here: does it keep off every box, disc (but those numbered in
        ``skip``) and leader line?"""
        return bool(self.leaders_clear(np.array([start[:2]], dtype=float), np.array([end[:2]], dtype=float), skip)[0])

    def leaders_clear(self, starts: np.ndarray, ends: np.ndarray, skip: Sequence[int] = (), *,
                      strict: bool = False) -> np.ndarray:
        """Which of the segments ``starts[k]``–``ends[k]`` (rows of x, y) may be leader lines: keep
        off every box, disc (but those numbered in ``skip``) and leader line (``strict``: and
        every line and arrow too)."""
        p, q = starts[:, None, :], ends[:, None, :]
        ok = np.ones(len(starts), dtype=bool)
        if self.boxes:
            b, pad = np.array(self.boxes), 0.03
            lows, highs = b[None, :, [0, 2]] - pad, b[None, :, [1, 3]] + pad
            ok &= ~np.any(_segments_enter_boxes(p, q, lows, highs), axis=1)
        kept = [disc for k, disc in enumerate(self.discs) if k not in skip]
        if kept:
            d = np.array(kept)
            ok &= ~np.any(_point_to_segments(d[None, :, :2], p, q) < d[:, 2] + 0.02, axis=1)
        lines = self.segments if strict else self.leaders
        if lines:
            s = np.array(lines)
            ok &= ~np.any(_segment_distance(p, q, s[None, :, :2], s[None, :, 2:]) < 0.03, axis=1)
        return ok


# -- the search --------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Placed:
    """Where a label went: its box, its gap from its point's edge and the ends of its leader line, if any."""

    box: Box
    gap: float
    leader: tuple[np.ndarray, np.ndarray] | None


@dataclass(frozen=True, eq=False)
class _Spots:
    """Boxes to try, in order: each with its gap from its point, and the points they name (each
    row's; ``None``: the boxes name no point, so want no leader line and need not be told from
    other dots)."""

    boxes: np.ndarray
    gaps: np.ndarray
    points: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.boxes)

    def part(self, start: int, stop: int) -> _Spots:
        return _Spots(self.boxes[start:stop], self.gaps[start:stop],
                      None if self.points is None else self.points[start:stop])


def _spot(point: np.ndarray, width: float, height: float, u: np.ndarray, gap: float) -> Box:
    """The box of a ``width`` × ``height`` label whose edge, not its centre, is ``gap`` from
    ``point`` along ``u``."""
    reach = min(width / 2 / max(abs(u[0]), 1e-6), height / 2 / max(abs(u[1]), 1e-6))
    x, y = point[0] + (reach + gap) * u[0], point[1] + (reach + gap) * u[1]
    return (x - width / 2, x + width / 2, y - height / 2, y + height / 2)


def _angle(direction: np.ndarray) -> float:
    """The direction's angle; straight up for no direction."""
    return math.atan2(direction[1], direction[0]) if np.linalg.norm(direction[:2]) > 1e-6 else math.pi / 2


def _radial(anchors: Sequence[Anchor], width: float, height: float, radius: float, gaps: Sequence[float],
            turns: Sequence[float]) -> _Spots:
    """Boxes around the anchors: each gap (nearer first), each anchor, each turn from its direction."""
    boxes, spot_gaps, points = [], [], []
    angles = [_angle(direction) for _, direction in anchors]
    for gap in gaps:
        for (point, _), angle in zip(anchors, angles, strict=True):
            for turn in turns:
                u = np.array([math.cos(angle + math.radians(turn)), math.sin(angle + math.radians(turn)), 0.0])
                boxes.append(_spot(point, width, height, u, radius + gap))
                spot_gaps.append(gap)
                points.append(point[:2])
    return _Spots(np.array(boxes, dtype=float).reshape(-1, 4), np.array(spot_gaps, dtype=float),
                  np.array(points, dtype=float).reshape(-1, 2))


def _anywhere(point: np.ndarray, width: float, height: float, area: Box, radius: float, reach: float,
              step: float = 0.08) -> _Spots:
    """Every box of the size in ``area`` on a grid, at most ``reach`` from the point's edge, nearest
    first."""
    xs, ys = np.meshgrid(np.arange(area[0], area[1] - width + 1e-9, step),
                         np.arange(area[2], area[3] - height + 1e-9, step))
    boxes = np.stack([xs.ravel(), xs.ravel() + width, ys.ravel(), ys.ravel() + height], axis=1)
    dx = np.maximum(np.maximum(boxes[:, 0] - point[0], point[0] - boxes[:, 1]), 0.0)
    dy = np.maximum(np.maximum(boxes[:, 2] - point[1], point[1] - boxes[:, 3]), 0.0)
    gaps = np.hypot(dx, dy) - radius
    order = np.array([k for k in np.argsort(gaps, kind="stable").tolist() if 0 < gaps[k] <= reach], dtype=int)
    points = np.tile(np.asarray(point[:2], dtype=float), (len(order), 1))
    return _Spots(boxes[order].reshape(-1, 4), gaps[order], points)


def _leader_ends(boxes: np.ndarray, points: np.ndarray, radius: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Leader lines from the edge (``radius``) around each point to just short of its box (rows of
    left, right, bottom, top): to its nearest point, then to points along the edges that face
    the point. Returns starts and ends (box, choice, x y) and which choices exist."""
    left, right, bottom, top = (boxes[:, k, None] for k in range(4))
    x, y = points[:, 0, None], points[:, 1, None]
    fractions = np.array([0.5, 0.15, 0.85])[None, :]
    across = np.where(y < bottom, bottom, top) + 0 * fractions  # the bottom or top edge, where it faces
    beside = np.where(x < left, left, right) + 0 * fractions
    xs = np.concatenate([np.clip(x, left, right), left + fractions * (right - left), beside], axis=1)
    ys = np.concatenate([np.clip(y, bottom, top), across, bottom + fractions * (top - bottom)], axis=1)
    exists = np.concatenate([np.ones_like(left, dtype=bool), ((y < bottom) | (y > top)) + 0 * fractions > 0,
                             ((x < left) | (x > right)) + 0 * fractions > 0], axis=1)
    targets = np.stack([xs, ys], axis=-1)
    along = targets - points[:, None, :]
    u = along / np.maximum(np.linalg.norm(along, axis=-1, keepdims=True), 1e-9)
    return points[:, None, :] + u * radius, targets - u * 0.04, exists


@dataclass(frozen=True)
class _Rules:
    """What a place must pass beyond lying inside the area, clear of the obstacles."""

    radius: float = 0.0  # of the point's dot: leader lines start on its edge
    accept: Callable[[Box], bool] | None = None
    leader: float | None = None  # from this gap on, a leader line must run clear to the place
    own: Sequence[int] = ()  # the discs a leader line may start on or cross (the point's dot, its ring)
    margin: float = 0.0  # kept further off every obstacle
    room: float = 0.0  # the placed label's box joins the obstacles grown by this


def _first_clear(label: Mobject, measured: Box, spots: _Spots, obstacles: Obstacles, area: Box, rules: _Rules, *,
                 strict: bool) -> Placed | None:
    """Put ``label`` (whose box is ``measured``) on the first of ``spots`` inside ``area``, clear of
    ``obstacles``, accepted and, if far from its point, with a clear leader line (``strict``:
    crossing no line or arrow either)."""
    for start in range(0, len(spots), 400):  # a few hundred at a time: the first are often free
        part = spots.part(start, start + 400)
        boxes, gaps = part.boxes, part.gaps
        ok = (area[0] <= boxes[:, 0]) & (boxes[:, 1] <= area[1]) & (area[2] <= boxes[:, 2]) & (boxes[:, 3] <= area[3])
        ok &= obstacles.clear(boxes, margin=rules.margin)
        if part.points is not None:
            ok &= obstacles.unmistaken(boxes, gaps, part.points)
        fit = np.flatnonzero(ok)
        for chunk in (fit[k:k + 40] for k in range(0, len(fit), 40)):  # leader lines are tried 40 at a time
            placed = _first_led(label, measured, part, chunk, obstacles, rules, strict=strict)
            if placed is not None:
                return placed
    return None


def _first_led(label: Mobject, measured: Box, spots: _Spots, chunk: np.ndarray, obstacles: Obstacles,
               rules: _Rules, *, strict: bool) -> Placed | None:
    """The first of the ``chunk`` of ``spots`` (each clear) that is accepted and near its point or
    with a clear leader line to it; the label moves there."""
    led = rules.leader is not None and spots.points is not None and len(chunk) > 0
    if led:
        assert spots.points is not None
        starts, ends, exists = _leader_ends(spots.boxes[chunk], spots.points[chunk], rules.radius + 0.02)
        clear = exists & obstacles.leaders_clear(starts.reshape(-1, 2), ends.reshape(-1, 2), rules.own,
                                                 strict=strict).reshape(exists.shape)
    for n, k in enumerate(chunk.tolist()):
        far = led and spots.gaps[k] >= (rules.leader or 0.0)
        if far and not clear[n].any():
            continue
        box: Box = tuple(spots.boxes[k].tolist())
        if rules.accept is not None and not rules.accept(box):
            continue
        line = None
        if far:
            choice = int(np.argmax(clear[n]))
            line = (np.array([*starts[n, choice], 0.0]), np.array([*ends[n, choice], 0.0]))
            obstacles.add_segment(*line, leader=True)
        _put(label, measured, box, obstacles, rules.room)
        return Placed(box, float(spots.gaps[k]), line)
    return None


def _put(label: Mobject, measured: Box, box: Box, obstacles: Obstacles, room: float = 0.0) -> None:
    """Move ``label`` (whose box is ``measured``) onto ``box``, which joins the obstacles."""
    label.shift(np.array([(box[0] + box[1] - measured[0] - measured[1]) / 2,
                          (box[2] + box[3] - measured[2] - measured[3]) / 2, 0.0]))
    obstacles.add_box(box, room=room)


def place_label(
    label: Mobject, anchors: Sequence[Anchor], obstacles: Obstacles, area: Box, *,
    gaps: Sequence[float] = GAPS, turns: Sequence[float] = TURNS, radius: float = 0.0, anywhere: float = 0.0,
    accept: Callable[[Box], bool] | None = None, leader: float | None = None, own: Sequence[int] = (),
    margin: float = 0.0, room: float = 0.0,
) -> Placed | None:
    """Move ``label`` to the first free place around ``anchors``; the one search the variants share.

    Parameters
    ----------
    anchors
        Points with the direction off each tried first. Places are tried at each of ``gaps``
        (nearer first; a box's edge, not its centre, that far from its point's edge), at each
        anchor in turn, each of ``turns`` (degrees) from its direction.
    radius
        Of the point's dot: gaps count from its edge.
    anywhere
        Then, if no place was free, anywhere in ``area`` on a grid up to this far from the first
        anchor's point, nearest first (0: not at all; ``math.inf``: the whole area).
    accept
        A further test each place's box must pass (say, that it is nearer its own arrow than any other).
    leader
        From this gap on, a place needs a leader line from the point that crosses no box, disc
        or other leader line (the discs numbered ``own`` aside), preferably no line or arrow
        either: each kind of place is tried with the stricter rule first (``None``: no leader lines).
    margin
        How much further than their margins this label keeps off every obstacle.
    room
        The placed label's box joins the obstacles grown by this (labels keep more clear of it).

    Returns
    -------
    Placed | None
        Its box, gap and leader line (which joins the obstacles too); ``None`` if no place was
        free: the label is not moved and nothing joins the obstacles.
    """
    measured = box_of(label)
    width, height = measured[1] - measured[0], measured[3] - measured[2]
    rules = _Rules(radius, accept, leader, own, margin, room)
    stages: list[Callable[[], _Spots]] = [lambda: _radial(anchors, width, height, radius, gaps, turns)]
    if anywhere > 0:
        point = np.asarray(anchors[0][0], dtype=float)
        stages.append(lambda: _anywhere(point, width, height, area, radius, anywhere))
    for stage in stages:
        spots = stage()
        for strict in (True, False) if leader is not None else (False,):
            placed = _first_clear(label, measured, spots, obstacles, area, rules, strict=strict)
            if placed is not None:
                return placed
    return None


# -- the variants --------------------------------------------------------------------------------


def place_at_tip(label: Mobject, tip: np.ndarray, direction: np.ndarray, obstacles: Obstacles, area: Box, *,
                 gaps: Sequence[float] = TIP_GAPS, accept: Callable[[Box], bool] | None = None,
                 margin: float = 0.0, room: float = 0.0) -> bool:
    """Put ``label`` just beyond ``tip`` along ``direction``, turning away from what is taken
    (:data:`TIP_GAPS` × :data:`TIP_TURNS`); False (not moved) where no place is free."""
    return place_label(label, [(tip, direction)], obstacles, area, gaps=gaps, turns=TIP_TURNS, accept=accept,
                       margin=margin, room=room) is not None


def place_near(label: Mobject, point: np.ndarray, obstacles: Obstacles, area: Box, *, reach: float = 4.0,
               margin: float = 0.0, room: float = 0.0) -> bool:
    """Put ``label`` as near ``point`` as is free: rings 0.12 apart out to ``reach``, every 15°
    from the right; False (not moved) where nothing is free."""
    gaps = tuple(float(gap) for gap in np.arange(0.08, reach, 0.12))
    return place_label(label, [(point, RIGHT)], obstacles, area, gaps=gaps, turns=tuple(range(0, 360, 15)),
                       margin=margin, room=room) is not None


def place_by_dot(label: Mobject, point: np.ndarray, direction: np.ndarray, obstacles: Obstacles, area: Box, *,
                 radius: float = 0.0, gaps: Sequence[float] = GAPS, own: Sequence[int] = (),
                 reach: float = 0.0) -> Placed | None:
    """A point's label beside its dot (of ``radius``), preferably along ``direction`` (up and to
    the right for none), then anywhere in ``area`` up to ``reach`` from it; from :data:`LEADER`
    on with a leader line that crosses nothing (the discs numbered ``own``, the point's dot and
    ring, aside), and the label nearer its own dot than any other. ``None`` (not moved) if nowhere.

    The point's dot should be in ``obstacles`` as a ``dot`` disc, so other labels keep off it.
    """
    p = np.asarray(point, dtype=float)
    if np.linalg.norm(direction[:2]) <= 1e-6:
        direction = UP + RIGHT
    return place_label(label, [(p, direction)], obstacles, area, gaps=gaps, radius=radius, anywhere=reach,
                       leader=LEADER, own=own)


def place_axis_name(label: Mobject, axis: Line, obstacles: Obstacles, area: Box, *, beyond_first: bool = True) -> bool:
    """Put an axis's name just beyond its tip (``beyond_first``; else after the places beside
    it), or beside the axis near the tip (below or to the right first), sliding back along the
    axis as far as a quarter of its length, then a little off it, then further ahead of the tip,
    then back along the axis as far as its middle; False (not moved) where no place is clear."""
    start, tip = np.asarray(axis.get_start(), dtype=float), np.asarray(axis.get_end(), dtype=float)
    length = float(np.linalg.norm(tip - start))
    u = (tip - start) / max(length, 1e-9)
    normal = np.array([u[1], -u[0], 0.0])  # to the right of the axis: below a horizontal one
    measured = box_of(label)
    width, height = measured[1] - measured[0], measured[3] - measured[2]
    along = min(width / 2 / max(abs(u[0]), 1e-6), height / 2 / max(abs(u[1]), 1e-6))
    beyond = [_spot(tip, width, height, u, 0.1)]
    spots = list(beyond) if beyond_first else []
    for off in (0.07, 0.16):
        for slide in np.arange(along + 0.035, along + length / 4, 0.06).tolist():  # clear of an edge at the tip
            spots += [_spot(tip - slide * u, width, height, side * normal, off) for side in (1.0, -1.0)]
    spots += [] if beyond_first else beyond
    ahead = [turn for turn in TURNS if abs(turn) <= 60]  # round the tip, never back beside the other axes
    spots += _radial([(tip, u)], width, height, 0.05, (0.1, 0.2, 0.3, 0.45), ahead).boxes.tolist()
    for slide in np.arange(along + length / 4, along + length / 2, 0.06).tolist():  # as far as its middle
        spots += [_spot(tip - slide * u, width, height, side * normal, 0.07) for side in (1.0, -1.0)]
    tried = _Spots(np.array(spots, dtype=float).reshape(-1, 4), np.zeros(len(spots)))
    return _first_clear(label, measured, tried, obstacles, area, _Rules(), strict=False) is not None


NAME_GAPS = (0.08, 0.25, 0.45, 0.65)
NAME_REACH = 0.75


def name_arrow(label: Mobject, j: int, arrows: Sequence[tuple[np.ndarray, np.ndarray]], anchors: Sequence[Anchor],
               obstacles: Obstacles, area: Box, *, must: bool = False, reach: float = NAME_REACH,
               room: float = 0.0) -> bool:
    """Name arrow ``j`` of ``arrows`` (tail, tip): at the first free place around ``anchors`` (say
    off its tip, or beside its middle) at most ``reach`` from it and nearer it than any other
    arrow. A name that ``must`` be shown takes, failing that, a free place within ``reach`` (an
    arrow that lies along a longer one has no place nearer it), then the nearest free place,
    then its arrow's side, clear or not. Returns whether it was placed (its box joins the
    obstacles, grown by ``room``)."""
    tail, tip = arrows[j]
    others = [arrow for k, arrow in enumerate(arrows) if k != j]

    def near(box: Box) -> bool:
        return box_to_segment(box, tail, tip) <= reach

    def its_own(box: Box) -> bool:
        own = box_to_segment(box, tail, tip)
        return own <= reach and all(own < box_to_segment(box, *other) for other in others)

    for accept in (its_own, near) if must else (its_own,):
        if place_label(label, anchors, obstacles, area, gaps=NAME_GAPS, turns=TIP_TURNS, accept=accept,
                       room=room) is not None:
            return True
    if must and not place_near(label, (tail + tip) / 2, obstacles, area, room=room):
        label.next_to((tail + tip) / 2, anchors[0][1], buff=0.1)
        obstacles.add_box(box_of(label), room=room)
    return must

