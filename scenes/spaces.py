"""Scene 2b: spaces — one token, three views: the embedding space, then W_Q, W_K, W_V carry every
point into the query, key and value spaces."""

from __future__ import annotations

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
from scenes.kit.layout import BOTTOM, HALF_WIDTH, TOP
from scenes.kit.palette import EMBEDDING, HIGHLIGHT, KEY, MUTED, QUERY, VALUE
from scenes.kit.space3d import LEADER, SpaceAxes, dot_box, leader, place_labels, span_of
from scenes.kit.text import drop_svg_paths, text, token_text
from scenes.kit.vectors import Box, box_of, shaft_boxes

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
"""How points are labelled: by token, by position (with a key of the tokens below), or only the
query (when even numbers crowd)."""

GAP = 0.2  # between panels
MARGIN = 0.2  # around the axes
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

    # -- layouts: every arrangement built once, labels placed off each other ------------------------
    def _layouts(self) -> _Layouts:
        """Every arrangement, labelled by token names if they all find a clear place, else by
        numbers with a key of the tokens, else only the query's points (and the screen says so)."""
        shown, plotted = len(self.shown), len(self.plotted)
        for mode in MODES:
            legend = self._key() if mode == "numbers" else self._only_query() if mode == "query" else None
            floor = BOTTOM if legend is None else legend.get_top()[1] + 0.25
            try:  # the row of four first: where labels crowd most
                row = self._row(("embedding", "query", "key", "value"), (1.25, 1.0, 1.0, 1.0), floor, mode)
                pair = self._row(("embedding", "query/key", "value"), (1.0, 1.0, 1.0), floor, mode)
                alone = self._panel("embedding", (-HALF_WIDTH, HALF_WIDTH, floor, TOP), mode, large=True)
            except _Crowded:
                del self.shown[shown:]  # this labelling is dropped: its numbers are never drawn
                del self.plotted[plotted:]
                continue
            return _Layouts(alone, row, pair, legend)
        raise AssertionError("the last labelling always fits")

    def _row(self, roles: Sequence[str], shares: Sequence[float], floor: float, mode: str) -> dict[str, _Panel]:
        """Panels side by side across the safe width, each ``share`` of a slot wide, centred in height."""
        unit = (2 * HALF_WIDTH - GAP * (len(roles) - 1)) / sum(shares)
        left, panels = -HALF_WIDTH, {}
        for role, share in zip(roles, shares, strict=True):
            panels[role] = self._panel(role, (left, left + share * unit, floor, TOP), mode)
            left += share * unit + GAP
        everything = VGroup(*(mob for panel in panels.values() for mob in panel.parts().values()))
        everything.shift(DOWN * (everything.get_bottom()[1] - floor) / 2)
        return panels

    def _only_query(self) -> VMobject:
        """What the screen says when only the query's points carry a label."""
        note = self.label("{} tokens: only '{}' is labelled", size("n_tokens"), TokenPart(self.scenario.query_token),
                          size=20, color=MUTED)
        return note.move_to((0, BOTTOM + note.height / 2, 0))

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
        return key.move_to((0, BOTTOM + key.height / 2, 0))

    # -- one panel -----------------------------------------------------------------------------------
    def _panel(self, role_name: str, box: Box, mode: str, *, large: bool = False) -> _Panel:
        """The space of ``role_name`` in ``box`` (left, right, bottom, top): title on top, then the axes."""
        role = ROLES[role_name]
        title = self._title(role_name, large=large).move_to(((box[0] + box[1]) / 2, 0, 0))
        title.align_to((0, box[3], 0), direction=np.array([0.0, 1.0, 0.0]))
        top = title.get_bottom()[1] - 0.15
        dims = min(getattr(self.scenario, role.size), role.most)
        width, height = box[1] - box[0] - 2 * MARGIN, top - box[2] - 2 * MARGIN
        if large:
            width = min(width, 1.6 * height)
        center = ((box[0] + box[1]) / 2, (top + box[2]) / 2, 0.0)
        axes = SpaceAxes(span_of(self._shared(role_name, dims)), width, height, center=center, color=AXIS)
        dim_labels = axes.label_axes([self.label("dim {}", position(m), size=20, color=AXIS) for m in range(dims)])
        sheet = axes.sheet(role.color, opacity=0.1)
        frame = VGroup(*([sheet] if sheet is not None else []), axes, dim_labels)
        panel = _Panel(axes, frame, title, Circle(radius=0.17, color=HIGHLIGHT, stroke_width=3))
        self._points(panel, role_name, dims)
        panel.ring.move_to(panel.dots["q" if "q" in panel.dots else str(self.scenario.query)])
        taken = [box_of(title), *(_grown(box_of(label), 0.1) for label in dim_labels), box_of(panel.ring)]
        taken += [dot_box(dot.get_center(), dot.radius + 0.02) for dot in panel.dots.values()]
        taken += [b for line in panel.arrows.values() for b in shaft_boxes(line, 0.15)]
        away = axes.c2p(*([0.0] * dims)) if role_name == "embedding" else self._centroid(panel)
        if not self._label_points(panel, role_name, mode, taken, away, (box[0], box[1], box[2], top + 0.1)):
            if mode != MODES[-1]:
                raise _Crowded(role_name)
        return panel

    def _label_points(self, panel: _Panel, role_name: str, mode: str, taken: list[Box], away: np.ndarray,
                      area: Box) -> bool:
        """Label the panel's points (the query first), each off the others; far ones get a leader line."""
        order = sorted(panel.dots, key=lambda k: (k not in ("q", str(self.scenario.query)), k != "q"))
        labels = {k: mob for k in order if (mob := self._point_label(role_name, k, mode)) is not None}
        gaps = place_labels(list(labels.values()), [panel.dots[k].get_center() for k in labels], away, taken, area)
        for (k, label), gap in zip(labels.items(), gaps, strict=True):
            if gap is not None and gap >= LEADER:
                dot = panel.dots[k]
                line = leader(label, dot.get_center(), dot.radius, MUTED)
                labels[k] = VGroup(label, line)  # furniture of the label, like the label's own place
        panel.labels = labels
        return all(gap is not None for gap in gaps)

    def _coordinates(self, role_name: str) -> np.ndarray:
        return np.asarray(getattr(self.trace, ROLES[role_name].field))

    def _shared(self, role_name: str, dims: int) -> np.ndarray:
        """The numbers a space's axes must hold: queries and keys share theirs (they are overlaid)."""
        if role_name in ("query", "key", "query/key"):
            return np.vstack([self._coordinates("query")[:, :dims], self._coordinates("key")[:, :dims]])
        return self._coordinates(role_name)[:, :dims]

    def _centroid(self, panel: _Panel) -> np.ndarray:
        return np.asarray(np.mean([dot.get_center() for dot in panel.dots.values()], axis=0), dtype=float)

    def _facts(self, role_name: str, key: str) -> list[Fact]:
        """The coordinates of point ``key`` of a space (as many as its axes draw)."""
        role = ROLES[role_name]
        dims = min(getattr(self.scenario, role.size), role.most)
        field_name, j = ("queries", self.scenario.query) if key == "q" else (role.field, int(key))
        return [value("trace", field_name, j, m) for m in range(dims)]

    def _points(self, panel: _Panel, role_name: str, dims: int) -> None:
        """A dot per token (an arrow from the origin in the embedding space), each plotted."""
        role, n, axes = ROLES[role_name], self.scenario.n_tokens, panel.axes
        radius = 0.07 if n <= 8 else 0.055
        keys = [str(j) for j in range(n)] + (["q"] if role_name == "query/key" else [])
        origin = axes.c2p(*([0.0] * dims))
        for key in keys:
            facts = self._facts(role_name, key)
            color = QUERY if key == "q" else role.color
            point = axes.c2p(*(self.value_of(fact) for fact in facts))
            panel.dots[key] = self.plot(Dot(point, radius=radius, color=color), axes, *facts)
            if role_name != "embedding":
                continue
            if np.linalg.norm(point - origin) > 0.2:
                shaft = Arrow(origin, point, buff=0, color=color, stroke_width=2.5, stroke_opacity=0.8, tip_length=0.13,
                              max_tip_length_to_length_ratio=0.35, max_stroke_width_to_length_ratio=12)
                panel.arrows[key] = self.plot(shaft, axes, *facts, anchor="end")
            if dims == 3:  # a faint drop to the floor shows the point's depth
                floor = axes.c2p(self.value_of(facts[0]), 0.0, self.value_of(facts[2]))
                if np.linalg.norm(point - floor) > 0.05:
                    drop = Line(point, floor, color=color, stroke_width=1.5, stroke_opacity=0.45)
                    panel.drops[key] = self.plot(drop, axes, *facts, anchor="start")

    def _point_label(self, role_name: str, key: str, mode: str) -> VMobject | None:
        q = self.scenario.query
        if key == "q":
            return self.label("q{}", query_number(), size=22, color=HIGHLIGHT)
        j = int(key)
        color = HIGHLIGHT if j == q and role_name != "query/key" else MUTED
        if mode == "names":
            return token_text(self.scenario.tokens[j], size=20, color=color)
        if mode == "numbers":
            return self.label("{}", position(j), size=20, color=color)
        return token_text(self.scenario.tokens[j], size=20, color=color) if j == q and color == HIGHLIGHT else None

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
            lines.append(self.label("dims {}–{} drawn", position(0), position(role.most - 1), size=20, color=MUTED))
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
            said += f"; dimensions {self.cite(position(0))}–{self.cite(position(2))} are drawn"
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
            said += f"; dimensions {self.cite(position(0))}–{self.cite(position(1))} are drawn"
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


def _grown(box: Box, by: float) -> Box:
    return (box[0] - by, box[1] + by, box[2] - by, box[3] + by)


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
