"""Scene 2b: spaces — one token, three views: the embedding space, then W_Q, W_K, W_V carry every
point into the query, key and value spaces."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from manim import (
    DOWN,
    LEFT,
    RIGHT,
    Animation,
    Arrow,
    Circle,
    Create,
    Dot,
    FadeIn,
    FadeOut,
    GrowArrow,
    LaggedStart,
    Line,
    MathTex,
    Mobject,
    ReplacementTransform,
    TransformFromCopy,
    VGroup,
    VMobject,
)

from scenes.base import ExplainerScene
from scenes.facts import Fact, TokenPart, position, query_number, size, value
from scenes.kit.labels import Box, Obstacles, Placed, box_of, leader, place_axis_name, place_by_dot
from scenes.kit.layout import BOTTOM, HALF_WIDTH, TOP
from scenes.kit.palette import EMBEDDING, HIGHLIGHT, KEY, MUTED, QUERY, VALUE
from scenes.kit.space3d import SpaceAxes, drawn_size, fit_spans, plane_size, span_of
from scenes.kit.text import drop_svg_paths, text, token_text

__all__ = ["Spaces"]


@dataclass(frozen=True)
class _Role:
    """One space: the trace field of its points, its colour, its size and the matrix that makes it."""

    name: str  # as the panel's title says it
    field: str
    color: str
    size: str  # "d_in", "d_k" or "d_v"
    matrix: str  # TeX of the weights that map the embeddings here, parts split by spaces ("" for the embeddings)
    most: int  # dimensions drawn at most


ROLES = {
    "embedding": _Role("embedding space", "embeddings", EMBEDDING, "d_in", "", 3),
    "query": _Role("query space", "queries", QUERY, "d_k", "W_Q", 2),
    "key": _Role("key space", "keys", KEY, "d_k", "W_K", 2),
    "value": _Role("value space", "values", VALUE, "d_v", "W_V", 2),
    "query/key": _Role("query/key space", "keys", KEY, "d_k", "W_Q ,\\ W_K", 2),
}
MODES = ("names", "numbers", "query")
"""How points are labelled: by token, by position (with a key of the tokens below; a few may be
left out where they find no clear place), or only the query (when even numbers crowd). The query's
point is labelled by its token in every labelling."""

MOST_NUMBERED = 10
"""More points than this, each with a number and many with a leader line, make a soup: only the
query is labelled."""

GAP = 0.2  # between panels
MARGIN = 0.2  # around a drawing
AROUND_3D = 0.35  # around a 3-d drawing or a line, for the labels beside it
FLOOR_3D = (0.25, 0.25, 0.5)
"""How far (of the widest span) a 3-d view's axes reach at least on their positive sides, room for
their names; the depth axis, drawn at half length, twice as far."""
LOWEST = 2.7  # a plane no lower than this, room allowing: its labels keep their size when it is small
ATTEMPTS = ((0.3, 0.0, 0.1), (0.3, 0.4, 0.2), (0.45, 0.4, 0.3), (0.6, 0.4, 0.3))
"""Room round a space's points, more at each attempt until its labels fit: a plane's points this far
in from its axes' ends, its axes this far in from the top and bottom of its sheet (strips for a
long label); a 3-d view's axes reaching this far (of the widest span) past its points."""
REACH = 1.0  # how far from its point a label may go, on a leader line (the query's: anywhere in its space)
LINE_HEIGHT = 1.2  # the room a line (a 1-d space) takes in a row, for its labels
RING = 0.17  # the query's ring
AXIS = "#7A828E"  # axes and their names, a step darker than the points' labels


@dataclass
class _Panel:
    """One space on screen: its axes, title, points (dots, labels, arrows) and the query's ring."""

    axes: SpaceAxes
    frame: VGroup  # axes, dimension labels, the sheet
    title: VGroup
    ring: Circle
    dots: dict[str, Dot] = field(default_factory=dict)  # by token number, "q" for the query among keys
    labels: dict[str, VMobject] = field(default_factory=dict)  # a label, with its leader line when far
    arrows: dict[str, Arrow] = field(default_factory=dict)  # from the origin, in the embedding space
    drops: dict[str, Line] = field(default_factory=dict)  # to the floor, in a 3-d view

    def parts(self) -> dict[str, VMobject]:
        """Every part by a name another layout of the same space shares."""
        named: dict[str, VMobject] = {"frame": self.frame, "title": self.title, "ring": self.ring}
        groups: tuple[tuple[str, dict[str, Dot] | dict[str, VMobject] | dict[str, Arrow] | dict[str, Line]], ...] = (
            ("dot", self.dots), ("label", self.labels), ("arrow", self.arrows), ("drop", self.drops))
        for kind, group in groups:
            named.update({f"{kind} {key}": mob for key, mob in group.items()})
        return named


@dataclass
class _Marks:
    """What a panel's labels keep off, and which discs are whose (a leader line starts on them)."""

    obstacles: Obstacles
    discs: dict[str, int]  # a dot's disc, by the dot's key
    ring: int
    plots: list[tuple[VMobject, list[Fact], str]]  # recorded once the panel is kept: mobject, coordinates, anchor


class _Crowded(Exception):
    """A panel's labels found no clear places: try the next labelling."""


@dataclass
class _Layouts:
    """The scene's three arrangements, built before the first beat."""

    alone: _Panel  # the embedding space, large
    row: dict[str, _Panel]  # embedding, query, key, value side by side
    pair: dict[str, _Panel]  # embedding, query/key, value
    key: VMobject | None  # "1 The · 2 dog · …" when points carry numbers, a note when only the query does


class Spaces(ExplainerScene):
    """The embedding space in 3-d; W_Q, W_K, W_V carry its points into three planes; Q and K overlaid."""

    def construct(self) -> None:
        self.header("Spaces: one token, three views", "query", "key", "value")
        layouts = self._layouts()
        self._embedding_space(layouts)
        self._query_space(layouts)
        self._key_and_value_spaces(layouts)
        self._one_token(layouts)
        self._compared(layouts)

    # -- layouts: every arrangement built once, labels placed off everything ------------------------
    def _layouts(self) -> _Layouts:
        """Every arrangement, labelled by token names if they all find a clear place, else by
        numbers with a key of the tokens (the query by name; up to :data:`MOST_NUMBERED` tokens),
        else only the query's points (and the screen says so)."""
        shown, plotted = len(self.shown), len(self.plotted)
        for mode in MODES:
            if mode == "numbers" and self.scenario.n_tokens > MOST_NUMBERED:
                continue
            legend = self._key() if mode == "numbers" else self._only_query() if mode == "query" else None
            floor = BOTTOM + 0.05 if legend is None else legend.get_top()[1] + 0.25
            try:  # the row of four first: where labels crowd most
                row = self._row(("embedding", "query", "key", "value"), (1.25, 1.0, 1.0, 1.0), floor, mode)
                pair = self._row(("embedding", "query/key", "value"), (1.0, 1.0, 1.0), floor, mode)
                alone = self._row(("embedding",), (1.0,), floor, mode, large=True)["embedding"]
            except _Crowded:
                del self.shown[shown:]  # this labelling is dropped: its numbers are never drawn
                del self.plotted[plotted:]
                continue
            return _Layouts(alone, row, pair, legend)
        raise AssertionError("the last labelling always fits")

    def _row(self, roles: Sequence[str], shares: Sequence[float], floor: float, mode: str, *,
             large: bool = False) -> dict[str, _Panel]:
        """Panels side by side across the safe width, each ``share`` of a slot wide: titles on
        top, the drawings centred on one line below them, the whole centred in height."""
        unit = (2 * HALF_WIDTH - GAP * (len(roles) - 1)) / sum(shares)
        slots, left = [], -HALF_WIDTH
        for share in shares:
            slots.append((left, left + share * unit))
            left += share * unit + GAP
        titles = [self._title(role, large=large).move_to(((a + b) / 2, 0, 0)) for role, (a, b) in zip(roles, slots,
                                                                                                     strict=True)]
        for title in titles:
            title.align_to((0, TOP, 0), direction=np.array([0.0, 1.0, 0.0]))
        top = min(title.get_bottom()[1] for title in titles) - 0.15
        sizes = [self._size(role, b - a, top - floor, large=large) for role, (a, b) in zip(roles, slots, strict=True)]
        band = max(LINE_HEIGHT if h == 0 else h for _, h in sizes)
        drop = max(0.0, (top - floor - 2 * MARGIN - band) / 2)
        middle = top - drop - MARGIN - band / 2
        panels = {}
        for role, (a, b), title, size_ in zip(roles, slots, titles, sizes, strict=True):
            title.shift(DOWN * drop)
            panels[role] = self._panel(role, (a, b, floor, top - drop), title, ((a + b) / 2, middle), size_, mode)
        return panels

    def _size(self, role_name: str, width: float, height: float, *, large: bool) -> tuple[float, float]:
        """The size of a space's drawing in a slot of ``width`` × ``height``."""
        dims = self._dims(role_name)
        values = self._shared(role_name, dims)
        if dims == 3:
            width, height = width - 2 * AROUND_3D, height - 2 * AROUND_3D
            return drawn_size(span_of(values, floor=FLOOR_3D), min(width, 1.6 * height) if large else width, height)
        if dims == 1:
            return width - 2 * AROUND_3D, 0.0
        return plane_size(values, width - 2 * MARGIN, height - 2 * MARGIN, ATTEMPTS[0][0],
                          keep_origin=role_name == "embedding", low=LOWEST)

    def _only_query(self) -> VMobject:
        """What the screen says when only the query's points carry a label."""
        note = self.label("{} tokens: only '{}' is labelled", size("n_tokens"), TokenPart(self.scenario.query_token),
                          size=20, color=MUTED)
        return note.move_to((0, BOTTOM + 0.05 + note.height / 2, 0))

    def _key(self) -> VGroup:
        """The tokens by number, in rows along the bottom, the query's in the highlight colour."""
        entries = [self.label("{} {}", position(j), TokenPart(token), size=20,
                              color=HIGHLIGHT if j == self.scenario.query else MUTED)
                   for j, token in enumerate(self.scenario.tokens)]
        widest = max(entry.width for entry in entries) + 0.35
        columns = max(1, min(len(entries), int(2 * HALF_WIDTH // widest)))
        rows = -(-len(entries) // columns)
        columns = -(-len(entries) // rows)  # as many columns as the rows need, evenly filled
        for k, entry in enumerate(entries):
            entry.move_to(((k % columns - columns / 2) * widest, -(k // columns) * 0.34, 0), aligned_edge=LEFT)
        key = VGroup(*entries)
        return key.move_to((0, BOTTOM + 0.05 + key.height / 2, 0))

    # -- one panel -----------------------------------------------------------------------------------
    def _panel(self, role_name: str, slot: Box, title: VGroup, centre: tuple[float, float],
               size_: tuple[float, float], mode: str) -> _Panel:
        """The space of ``role_name`` drawn ``size_`` large at ``centre``, its title above, in
        ``slot`` (left, right, bottom, top): a plane's points as far in from its edges as the
        names of its axes and the labels of its points need. An axis name that finds no clear
        place in any attempt is left out."""
        dims = self._dims(role_name)
        names = [self.label("dim {}", position(m, ROLES[role_name].size), size=20, color=AXIS) for m in range(dims)]
        shown = len(self.shown)
        tries = [(attempt, names_first) for attempt in ATTEMPTS for names_first in (False, True)]
        fallback = None
        for attempt, names_first in tries:
            del self.shown[shown:]  # the labels of a layout let go
            panel, marks, area = self._drawing(role_name, slot, title, centre, size_, attempt)
            try:
                placed = self._label_points(panel, role_name, mode, marks, area, names, names_first=names_first)
            except _Crowded:
                continue
            if len(placed) == dims:
                break
            fallback = (attempt, names_first)
        else:
            if fallback is None:
                raise _Crowded(role_name)
            del self.shown[shown:]
            panel, marks, area = self._drawing(role_name, slot, title, centre, size_, fallback[0])
            placed = self._label_points(panel, role_name, mode, marks, area, names, names_first=fallback[1])
            self.shown[:] = [item for item in self.shown if item.mobject in placed or item.mobject not in names]
        panel.frame = VGroup(*panel.frame, *placed)
        for mob, facts, anchor in marks.plots:
            self.plot(mob, panel.axes, *facts, anchor=anchor)
        return panel

    def _drawing(self, role_name: str, slot: Box, title: VGroup, centre: tuple[float, float],
                 size_: tuple[float, float], attempt: tuple[float, float, float]) -> tuple[_Panel, _Marks, Box]:
        """A space's axes, sheet, points and ring (not yet plotted), what labels keep off, and
        where they may go: inside a plane, or the slot around a 3-d view or a line. Each
        ``attempt`` leaves more room round the points (for the labels of the last one)."""
        role, dims = ROLES[role_name], self._dims(role_name)
        values = self._shared(role_name, dims)
        inset, strip, reach = attempt
        strip = strip if dims == 2 else 0.0
        width, height = size_[0], size_[1] - 2 * strip
        embedding = role_name == "embedding"
        spans = (span_of(values, floor=FLOOR_3D, reach=reach) if dims == 3 else
                 fit_spans(values, width, height, inset, keep_origin=embedding))
        axes = SpaceAxes(spans, width, height, center=(*centre, 0.0), color=AXIS)
        sheet = axes.sheet(role.color, opacity=0.1, beyond=strip)
        panel = _Panel(axes, VGroup(*([sheet] if sheet is not None else []), axes), title,
                       Circle(radius=RING, color=HIGHLIGHT, stroke_width=3))
        marks = self._points(panel, role_name, dims)
        marks.obstacles.add_box(box_of(title))
        area = box_of(sheet) if sheet is not None and dims == 2 else slot
        return panel, marks, (area[0] + 0.03, area[1] - 0.03, area[2] + 0.03, area[3] - 0.03)

    def _name_axes(self, axes: SpaceAxes, names: Sequence[VMobject], obstacles: Obstacles, area: Box, *,
                   beyond_first: bool = True) -> list[VMobject]:
        """Each axis's name by its tip, clear of everything: those that found a place."""
        return [name for line, name in zip(axes.lines, names, strict=True)
                if place_axis_name(name, line, obstacles, area, beyond_first=beyond_first)]  # type: ignore[arg-type]

    def _label_points(self, panel: _Panel, role_name: str, mode: str, marks: _Marks, area: Box,
                      names: Sequence[VMobject], *, names_first: bool) -> list[VMobject]:
        """Label the panel's points, the query first, then the axes (or the axes first), then the
        others, each clear of everything, away from the origin (the embeddings) or the middle of
        the points; a far one gets a leader line. A label with no clear place is left out (or the
        labelling is too crowded: _Crowded). Returns the axes' names that found clear places."""
        q = str(self.scenario.query)
        first = "q" if "q" in panel.dots else q
        order = sorted(panel.dots, key=lambda k: (k != first, k not in ("q", q)))
        missing, named = [], []
        if names_first:  # beside the axes first: the strips beyond their tips are the query's label's
            named = self._name_axes(panel.axes, names, marks.obstacles, area, beyond_first=False)
        for k in order:
            label = self._point_label(role_name, k, mode)
            placed = None if label is None else self._label_one(panel, role_name, k, label, marks, area)
            if k == first and placed is None:
                raise _Crowded(role_name)
            if k == first and not names_first:
                named = self._name_axes(panel.axes, names, marks.obstacles, area)
            if label is None:
                continue
            if placed is None:
                if mode == "names":
                    raise _Crowded(role_name)
                self.shown[:] = [item for item in self.shown if item.mobject is not label]  # never drawn
                missing.append(k)
                continue
            panel.labels[k] = label if placed.leader is None else VGroup(label, leader(placed.leader, MUTED))
        if len(missing) * 4 > len(order):
            raise _Crowded(role_name)
        return named

    def _label_one(self, panel: _Panel, role_name: str, key: str, label: VMobject, marks: _Marks,
                   area: Box) -> Placed | None:
        """Place one point's label (the query's anywhere it fits, the others within :data:`REACH`);
        a point inside the query's ring has its leader line start on the ring."""
        away = panel.axes.c2p(*([0.0] * panel.axes.dims)) if role_name == "embedding" else self._centroid(panel)
        point, ring = panel.dots[key].get_center(), panel.ring.get_center()
        off = float(np.linalg.norm(point - ring))
        inside = off < RING + 0.02
        radius = RING + 0.02 + off if inside else panel.dots[key].radius + 0.02
        own = [marks.discs[key], marks.ring] if inside else [marks.discs[key]]
        first = key == "q" or (key == str(self.scenario.query) and "q" not in panel.dots)
        return place_by_dot(label, point, point - away, marks.obstacles, area, radius=radius, own=own,
                           reach=math.inf if first else REACH)

    def _coordinates(self, role_name: str) -> np.ndarray:
        return np.asarray(getattr(self.trace, ROLES[role_name].field))

    def _dims(self, role_name: str) -> int:
        role = ROLES[role_name]
        return min(int(getattr(self.scenario, role.size)), role.most)

    def _shared(self, role_name: str, dims: int) -> np.ndarray:
        """The numbers a space's axes must hold: the query and key spaces side by side share theirs
        (the keys and the query are overlaid later), which hold the keys and the query."""
        if role_name in ("query", "key"):
            return np.vstack([self._coordinates("query")[:, :dims], self._coordinates("key")[:, :dims]])
        if role_name == "query/key":
            query = self._coordinates("query")[self.scenario.query, :dims]
            return np.vstack([self._coordinates("key")[:, :dims], query[None, :]])
        return self._coordinates(role_name)[:, :dims]

    def _centroid(self, panel: _Panel) -> np.ndarray:
        return np.asarray(np.mean([dot.get_center() for dot in panel.dots.values()], axis=0), dtype=float)

    def _facts(self, role_name: str, key: str) -> list[Fact]:
        """The coordinates of point ``key`` of a space (as many as its axes draw)."""
        role = ROLES[role_name]
        field_name, j = ("queries", self.scenario.query) if key == "q" else (role.field, int(key))
        return [value("trace", field_name, j, m) for m in range(self._dims(role_name))]

    def _points(self, panel: _Panel, role_name: str, dims: int) -> _Marks:
        """A dot per token (an arrow from the origin in the embedding space), the query's ring, and
        what labels keep off; the plots to record if the panel is kept."""
        role, n, axes = ROLES[role_name], self.scenario.n_tokens, panel.axes
        radius = 0.07 if n <= 8 else 0.055
        keys = [str(j) for j in range(n)] + (["q"] if role_name == "query/key" else [])
        marks = _Marks(Obstacles(), {}, -1, [])
        marks.obstacles.add_all(axes.lines)
        origin = axes.c2p(*([0.0] * dims))
        for key in keys:
            facts = self._facts(role_name, key)
            color = QUERY if key == "q" else role.color
            point = axes.c2p(*(self.value_of(fact) for fact in facts))
            panel.dots[key] = Dot(point, radius=radius, color=color)
            marks.plots.append((panel.dots[key], facts, "center"))
            marks.discs[key] = marks.obstacles.add_disc(point, radius, dot=True)
            if role_name == "embedding":
                self._arrow_and_drop(panel, key, facts, origin, marks)
        panel.ring.move_to(panel.dots["q" if "q" in panel.dots else str(self.scenario.query)])
        marks.ring = marks.obstacles.add_disc(panel.ring.get_center(), RING + 0.03)
        return marks

    def _arrow_and_drop(self, panel: _Panel, key: str, facts: list[Fact], origin: np.ndarray, marks: _Marks) -> None:
        """An embedding's arrow from the origin and, in a 3-d view, its faint drop to the floor."""
        point, color, axes = panel.dots[key].get_center(), ROLES["embedding"].color, panel.axes
        if np.linalg.norm(point - origin) > 0.2:
            shaft = Arrow(origin, point, buff=0, color=color, stroke_width=2.5, stroke_opacity=0.8, tip_length=0.13,
                          max_tip_length_to_length_ratio=0.35, max_stroke_width_to_length_ratio=12)
            panel.arrows[key] = shaft
            marks.plots.append((shaft, facts, "end"))
            marks.obstacles.add_line(shaft)
        if axes.dims == 3:  # a faint drop to the floor shows the point's depth
            floor = axes.c2p(self.value_of(facts[0]), 0.0, self.value_of(facts[2]))
            if np.linalg.norm(point - floor) > 0.05:
                drop = Line(point, floor, color=color, stroke_width=1.5, stroke_opacity=0.45)
                panel.drops[key] = drop
                marks.plots.append((drop, facts, "start"))
                marks.obstacles.add_line(drop)

    def _point_label(self, role_name: str, key: str, mode: str) -> VMobject | None:
        """A point's label: the query's by its token (in the highlight colour), "q5" for the query
        among the keys, the others by token, by number or not at all."""
        q = self.scenario.query
        if key == "q":
            return self.label("q{}", query_number(), size=22, color=HIGHLIGHT)
        j = int(key)
        if j == q and role_name != "query/key":
            return token_text(self.scenario.tokens[j], size=20, color=HIGHLIGHT)
        if mode == "names":
            return token_text(self.scenario.tokens[j], size=20, color=MUTED)
        if mode == "numbers":
            return self.label("{}", position(j), size=20, color=MUTED)
        return None

    def _title(self, role_name: str, *, large: bool = False) -> VGroup:
        """The space's name, the map that makes it (W_Q: 3-d → 2-d) and what is drawn of it."""
        role = ROLES[role_name]
        colors = {"t2c": {"query": QUERY, "key": KEY}} if role_name == "query/key" else {}  # whose points are whose
        lines: list[VMobject] = [text(role.name, size=28 if large else 24, color=role.color, **colors)]
        d = getattr(self.scenario, role.size)
        if role.matrix:
            shape = self.label(": {}-d → {}-d", size("d_in"), size(role.size), size=22, color=MUTED)
            matrix = drop_svg_paths(MathTex(*role.matrix.split(" "), font_size=30, color=role.color))
            if role_name == "query/key":
                matrix[0].set_color(QUERY)
            lines.append(VGroup(matrix, shape).arrange(RIGHT, buff=0.06, aligned_edge=DOWN))
        else:
            lines.append(self.label("{}-d", size("d_in"), size=24 if large else 22, color=MUTED))
        if d > role.most:
            lines.append(self.label("dims {}–{} drawn", position(0, role.size), position(role.most - 1, role.size),
                                    size=20, color=MUTED))
        elif d == 1:
            lines.append(text("a line, not a plane", size=20, color=MUTED))
        return VGroup(*lines).arrange(DOWN, buff=0.1)

    # -- the beats -----------------------------------------------------------------------------------
    def _embedding_space(self, layouts: _Layouts) -> None:
        panel = layouts.alone
        keys = sorted(panel.dots, key=int)
        self.play(Create(panel.frame), FadeIn(panel.title), run_time=1.0)
        said = f"Each token is a point in the {self.cite(size('d_in'))}-d embedding space"  # cited in the order said
        if self.scenario.d_in > 3:
            said += f"; dimensions {self.cite(position(0, 'd_in'))}–{self.cite(position(2, 'd_in'))} are drawn"
        self.beat(said + ".",
                  LaggedStart(*(self._arrive(panel, k) for k in keys), lag_ratio=min(0.3, 2.0 / len(keys))),
                  *([FadeIn(layouts.key)] if layouts.key is not None else []),
                  run_time=2.0, wait=1.2)

    def _arrive(self, panel: _Panel, key: str) -> Animation:
        parts: list[Animation] = []
        if key in panel.arrows:
            parts.append(GrowArrow(panel.arrows[key]))
        if key in panel.drops:
            parts.append(Create(panel.drops[key]))
        parts.append(FadeIn(panel.dots[key], scale=0.5))
        if key in panel.labels:
            parts.append(FadeIn(panel.labels[key]))
        return LaggedStart(*parts, lag_ratio=0.3)

    def _query_space(self, layouts: _Layouts) -> None:
        embedding, query = layouts.row["embedding"], layouts.row["query"]
        self.play(*_morph(self, layouts.alone, embedding), run_time=1.0)
        self.play(FadeIn(query.frame), FadeIn(query.title), run_time=0.7)
        d_k = self.scenario.d_k
        said = f"W_Q maps each embedding to its query: {self.cite(size('d_in'))}-d → {self.cite(size('d_k'))}-d"
        if d_k > 2:
            said += f"; dimensions {self.cite(position(0, 'd_k'))}–{self.cite(position(1, 'd_k'))} are drawn"
        elif d_k == 1:
            said += ", a point on a line"
        self.beat(said + ".", *self._travel(embedding, query), run_time=2.0, wait=1.0)

    def _travel(self, source: _Panel, target: _Panel) -> list[Animation]:
        """Each point flies from the embedding space to its image; then its label appears."""
        keys = sorted(target.dots, key=int)
        lag = min(0.25, 1.5 / len(keys))
        return [LaggedStart(*(TransformFromCopy(source.dots[k], target.dots[k]) for k in keys), lag_ratio=lag),
                LaggedStart(*(FadeIn(target.labels[k]) for k in keys if k in target.labels), lag_ratio=lag)]

    def _key_and_value_spaces(self, layouts: _Layouts) -> None:
        embedding, key, value_ = (layouts.row[r] for r in ("embedding", "key", "value"))
        self.play(*(FadeIn(mob) for panel in (key, value_) for mob in (panel.frame, panel.title)), run_time=0.7)
        self.beat("W_K and W_V carry the same points into the key space and the value space.",
                  *self._travel(embedding, key), *self._travel(embedding, value_), run_time=2.2, wait=0.8)

    def _one_token(self, layouts: _Layouts) -> None:
        rings = [panel.ring for panel in layouts.row.values()]
        self.beat(f"One token, '{self.scenario.query_token}', three views: what it asks, what it offers, "
                  "what it passes on.", LaggedStart(*(Create(ring) for ring in rings), lag_ratio=0.2),
                  run_time=1.5, wait=1.8)

    def _compared(self, layouts: _Layouts) -> None:
        row, pair = layouts.row, layouts.pair
        query, key, both = row["query"], row["key"], pair["query/key"]
        i = str(self.scenario.query)
        moves: list[Animation] = [*_morph(self, row["embedding"], pair["embedding"]),
                                  *_morph(self, row["value"], pair["value"])]
        moves += [_move(self, key.frame, both.frame), _move(self, key.title, both.title),
                  FadeOut(query.frame, target_position=both.frame), FadeOut(query.title, target_position=both.title)]
        moves += [_move(self, key.dots[k], both.dots[k]) for k in key.dots]
        moves += [_move(self, key.labels[k], both.labels[k]) for k in key.labels if k in both.labels]
        moves += [FadeOut(key.labels[k]) for k in key.labels if k not in both.labels]
        moves += [FadeIn(both.labels[k]) for k in both.labels if k not in key.labels and k != "q"]
        moves += [_move(self, query.dots[i], both.dots["q"]), _move(self, query.ring, both.ring), FadeOut(key.ring)]
        moves += [_move(self, query.labels[i], both.labels["q"]) if i in query.labels else FadeIn(both.labels["q"])]
        others = [mob for k, dot in query.dots.items() if k != i for mob in (dot, query.labels.get(k)) if mob]
        moves += [FadeOut(_stand_in(self, mob)) for mob in others]
        self.beat("Queries and keys live in one space, so they can be compared.", *moves, run_time=2.0, wait=2.5)


def _stand_in(scene: ExplainerScene, mob: Mobject) -> Mobject:
    """A copy of ``mob`` in its place on screen, to move instead of it.

    A plotted mobject stays where its numbers put it; its new self in another layout is plotted
    on that layout's axes.
    """
    copy = mob.copy()
    scene.remove(mob)
    scene.add(copy)
    return copy


def _move(scene: ExplainerScene, old: Mobject, new: Mobject) -> Animation:
    """``old`` (on screen) becomes ``new``, which is left on screen in its place."""
    return ReplacementTransform(_stand_in(scene, old), new)


def _morph(scene: ExplainerScene, before: _Panel, after: _Panel) -> list[Animation]:
    """The same space in another place and size: every part on screen moves to its new self."""
    drawn = {id(mob) for mob in scene.get_mobject_family_members()}
    old = {name: mob for name, mob in before.parts().items() if id(mob) in drawn}
    new = after.parts()
    moves: list[Animation] = [_move(scene, old[name], new[name]) for name in old if name in new]
    moves += [FadeOut(old[name]) for name in old if name not in new]
    moves += [FadeIn(new[name]) for name in new if name not in before.parts()]
    return moves
