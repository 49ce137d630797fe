"""Scene 3: the query asks every key — first as geometry, then term by term, one score per key.

A score q_i · k_j is how far key j points along the query: its shadow on the query's line, times
|q_i|. The scene draws that first (the keys' order by score is visible before any number), then
the arithmetic, then the scores as bars with their numbers.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from manim import (
    DOWN,
    LEFT,
    RIGHT,
    UP,
    AnimationGroup,
    Arrow,
    Create,
    DashedLine,
    Dot,
    FadeIn,
    FadeOut,
    GrowArrow,
    GrowFromEdge,
    LaggedStart,
    Line,
    Mobject,
    MoveToTarget,
    NumberLine,
    ReplacementTransform,
    RoundedRectangle,
    Text,
    VGroup,
    VMobject,
    config,
)

from attention_math.alignment import alignment
from scenes.base import ExplainerScene
from scenes.facts import Fact, TokenPart, position, query_number, size, value
from scenes.kit.bars import BarRows
from scenes.kit.grids import Brackets, NumberGrid
from scenes.kit.labels import Box, Obstacles, box_of, place_at_tip, shaft_boxes
from scenes.kit.layout import BOTTOM, HALF_WIDTH, SAFE_WIDTH, TOP
from scenes.kit.motion import fly_into
from scenes.kit.palette import DIM, HIGHLIGHT, INK, KEY, MUTED, QUERY
from scenes.kit.text import SMALLEST_SIZE, text
from scenes.kit.vectors import QueryFrame, arrow

__all__ = ["Scores"]

PLANE_AREA: Box = (-6.5, -0.6, -3.05, 2.45)  # left, right, bottom, top
CHART_LEFT, CHART_RIGHT, CHART_TOP = 0.2, 6.65, 2.05
NOTE_RIGHT = CHART_LEFT - 0.25  # the plane's note (d_k > 2) ends left of the chart's labels
TITLE_Y = 2.55
MAX_BOARD_ROWS = 12  # more keys than this: the board shows a window of them, the chart every one
STACK_MOST = 9  # up to this many keys the chart sits under the plane, each bar under its key's foot
NARROW = 0.72  # a picture narrower than this share of the frame ends beside the board
LONG_QUERY = 4.0  # a query this many times longer than the keys is drawn shorter, broken, its length written
LABEL_PAD = 0.06  # labels keep this clear of arrows, lines and each other (the chart's title twice as clear)


@dataclass
class _Picture:
    """The query/key plane (or line) and the chart of scores beside it."""

    space: VGroup  # axes, the query's line, notes
    query_arrow: Arrow
    query_label: VMobject
    keys: list[VMobject]
    key_labels: VGroup
    drops: VGroup  # perpendiculars and their feet (empty when not drawn)
    chart: BarRows
    title: VMobject
    narrow: bool  # the picture leaves much of the width empty: the summary puts the board beside it
    taken: Obstacles  # where the plane's arrows, lines and labels are


@dataclass
class _Board:
    """K on the left, q_i above, a row of products and a score per key shown, the first worked out."""

    keys: NumberGrid
    keys_title: Text
    queries: NumberGrid
    queries_title: Text
    query: VGroup
    query_line: VGroup
    rows: list[int]  # the keys on the board, in order
    products: dict[int, VGroup]
    pluses: dict[int, VGroup]
    equals: dict[int, Text]
    scores: dict[int, Text]
    working: VGroup
    pairs: list[VGroup]
    key_box: RoundedRectangle | None = None


class Scores(ExplainerScene):
    """q_i against every key: shadows on the query's line, then products that collapse to scores."""

    def construct(self) -> None:
        self.add_source("alignment", alignment(self.step), self.scenario.precision)
        self.header("Scores: the query asks every key", "query", "key")
        picture = self._picture()
        self._geometry(picture)
        board = self._board()
        self.play(FadeOut(VGroup(picture.space, picture.query_arrow, picture.query_label, *picture.keys,
                                 picture.key_labels, picture.drops, picture.chart)), run_time=0.7)
        self._lift_query(board)
        self._first_key(board)
        self._other_keys(board)
        self._summary(picture, board)

    # -- the picture: plane and chart -------------------------------------------------------------
    def _picture(self) -> _Picture:
        """The plane (the query pointing right) and the chart of scores: stacked, so that each
        key's shadow falls straight into its bar, when they fit; else side by side."""
        d_k, n = self.scenario.d_k, self.scenario.n_tokens
        stacked = d_k == 2 and n <= STACK_MOST
        pitch = float(np.clip(3.0 / n, 0.4, 0.55)) if stacked else min(0.62, (CHART_TOP - BOTTOM - 0.05) / (n - 0.5))
        labels, room = self._chart_labels(pitch)
        label_width = max(label.width for label in labels)
        first_row = BOTTOM + 0.05 + pitch / 2 + (n - 1) * pitch  # the zero line ends above the subtitles
        area: Box = (-6.6 + label_width + 0.35, 6.6 - room, first_row + 0.75, 2.3) if stacked else PLANE_AREA
        space, at, note = self._space(area)
        shrink = self._query_shrink
        query_axes = space[0] if shrink == 1.0 else _Shrunk(space[0], shrink)
        query_arrow: Arrow = self.plot(arrow(at(0, 0), query_axes.c2p(*self._coordinates("step", "query")),
                                             color=QUERY, width=7),
                                       query_axes, *self._facts("step", "query"), anchor="end")
        query_arrow.set_z_index(1)  # over a key that points the same way
        query_label = self._query_label()
        marks = _break_marks(query_arrow) if shrink != 1.0 else VGroup()
        if len(marks):  # (an empty group would count as a point at the origin in the arrow's size)
            query_arrow.add(marks)  # the marks grow with the arrow
        keys = [self._key(space[0], at, j) for j in range(n)]
        drops = self._drops(space, at, keys) if d_k == 2 else VGroup()
        chart = self._stacked_chart(labels, pitch, space[0], first_row) if stacked else \
            self._side_chart(labels, pitch, room)
        for j, bar in enumerate(chart.bars):
            self.plot(bar, chart.axis(j), value("step", "scores", j), anchor=chart.end_side(j))
        self.rows("key", chart)  # each key's score beside its own bar
        # a slide spans the frame: a narrow picture gets the board's arithmetic beside it at the end
        narrow = stacked and VGroup(space, query_arrow, *keys, chart).width < NARROW * config.frame_width
        if stacked:
            drops.add(*self._guides(chart, drops))
        key_labels, taken = self._place_labels(area, query_arrow, query_label, keys,
                                               [*space[0].submobjects, *drops, *marks], note)
        title = self.label("scores for '{}'", TokenPart(self.scenario.query_token), size=26, color=INK)
        if not stacked:
            title.move_to(((CHART_LEFT + CHART_RIGHT) / 2, TITLE_Y, 0))
        elif not narrow:  # (a narrow picture's title is placed in the summary, over the board or the chart)
            self._head_chart(title, chart, taken)
        return _Picture(space, query_arrow, query_label, keys, key_labels, drops, chart, title, narrow, taken)

    @property
    def _query_shrink(self) -> float:
        """The query's drawn length over its length: 1, or less for a query far longer than its keys
        (see :func:`_shrink_for`; only where d_k = 2, since |q| counts every entry and the plane shows two)."""
        if self.scenario.d_k != 2:
            return 1.0
        return _shrink_for(self.step.query, np.vstack([self.step.keys, self.sources["alignment"][0].feet]))

    def _query_label(self) -> VMobject:
        """"q5 (ball)"; and, for a query drawn shorter than it is, its length under it."""
        token = TokenPart(self.scenario.query_token)
        if self._query_shrink == 1.0:
            return self.label("q{} ({})", query_number(), token, size=22, color=QUERY)
        return VGroup(self.label("q{} ({}), drawn shorter:", query_number(), token, size=22, color=QUERY),
                      self.label("|q{}| = {}", query_number(), value("alignment", "query_norm"), size=22,
                                 color=QUERY)).arrange(DOWN, aligned_edge=LEFT, buff=0.12)

    def _head_chart(self, title: VMobject, chart: BarRows, taken: Obstacles) -> None:
        """The chart's title just above its labels, where the plane leaves room (it names the
        bars beneath it), else in the top left corner."""
        for edge in (LEFT, RIGHT):
            title.next_to(chart.labels, UP, buff=0.3, aligned_edge=edge)
            if title.get_left()[0] >= -6.65 and taken.box_is_clear(box_of(title), margin=0.06):
                return
        title.next_to(chart.labels, UP, buff=0.3).set_x(-6.6 + title.width / 2)
        if not taken.box_is_clear(box_of(title), margin=0.06):
            title.move_to((-6.6 + title.width / 2, 2.6, 0))

    def _chart_labels(self, pitch: float) -> tuple[list[VMobject], float]:
        """One label per key ("k3 sat", the query's own in the highlight colour), and the room its score needs."""
        n = self.scenario.n_tokens
        font = float(np.clip(pitch * 42, SMALLEST_SIZE, 26))
        limit = 10 if n <= STACK_MOST else 8  # a long sentence's chart needs the room for its bars
        labels: list[VMobject] = [self.label("k{} {}", position(j), TokenPart(token, limit), size=font,
                                             color=HIGHLIGHT if j == self.scenario.query else KEY)
                                  for j, token in enumerate(self.scenario.tokens)]
        room = max(text(self.text_for(value("step", "scores", j)), size=font).width for j in range(n)) + 0.3
        return labels, room

    def _side_chart(self, labels: list[VMobject], pitch: float, room: float) -> BarRows:
        """The scores as bars right of the plane, one row per key."""
        n = self.scenario.n_tokens
        width = CHART_RIGHT - CHART_LEFT - max(label.width for label in labels) - 0.25 - room
        chart = BarRows(labels, [self.value_of(value("step", "scores", j)) for j in range(n)], width=width,
                        pitch=pitch, color=KEY)
        return chart.shift(RIGHT * (CHART_LEFT - chart.labels.get_left()[0]) + UP * (CHART_TOP - chart.row_y(0)))

    def _stacked_chart(self, labels: list[VMobject], pitch: float, frame: Mobject, first_row: float) -> BarRows:
        """The scores as bars under the plane, in its units: a bar ends right under its key's foot."""
        scores = [self.value_of(value("step", "scores", j)) for j in range(self.scenario.n_tokens)]
        norm = self.value_of(value("alignment", "query_norm"))
        unit = float(np.linalg.norm(frame.c2p(1, 0) - frame.c2p(0, 0))) / max(norm, 1e-9)  # per unit of score
        width = (max(0.0, *scores) - min(0.0, *scores)) * unit
        chart = BarRows(labels, scores, width=max(width, 1e-3), pitch=pitch, color=KEY)
        chart.shift(RIGHT * (frame.c2p(0, 0)[0] - chart.zero_line.get_x()) + UP * (first_row - chart.row_y(0)))
        # the labels just left of the bars (of the longest one pointing left), within the frame
        right = min(chart.zero_line.get_x(), *(bar.get_left()[0] for bar in chart.bars)) - 0.3
        chart.labels.shift(RIGHT * (max(right, -6.6 + chart.labels.width) - chart.labels.get_right()[0]))
        return chart

    def _guides(self, chart: BarRows, drops: VGroup) -> list[VMobject]:
        """From each key's foot, a faint line straight down to the end of its bar."""
        guides: list[VMobject] = []
        for j, drop in enumerate(drops):
            foot = drop[1].get_center()
            end = chart.axis(j).c2p(chart.values[j])
            guides.append(DashedLine(foot, end, color=KEY, stroke_width=1.5, stroke_opacity=0.35, dash_length=0.05))
        return guides

    def _key(self, axes: Mobject, at: Callable[..., np.ndarray], j: int) -> VMobject:
        """Key j as an arrow from the origin (a dot on the line when d_k = 1)."""
        facts, tip = self._facts("trace", "keys", j), at(*self._coordinates("trace", "keys", j))
        if self.scenario.d_k == 1:
            return self.plot(Dot(tip, radius=0.07, color=KEY), axes, *facts)
        return self.plot(arrow(at(0, 0), tip, color=KEY, width=4), axes, *facts, anchor="end")

    def _facts(self, source: str, field_name: str, *row: int) -> list[Fact]:
        """The plotted coordinates of a vector: its first two entries (one when d_k = 1)."""
        return [value(source, field_name, *row, m) for m in range(min(2, self.scenario.d_k))]

    def _coordinates(self, source: str, field_name: str, *row: int) -> list[float]:
        return [self.value_of(fact) for fact in self._facts(source, field_name, *row)]

    def _space(self, area: Box) -> tuple[VGroup, Callable[..., np.ndarray], Mobject | None]:
        """The query/key plane of dimensions 1 and 2 (a line when d_k = 1), the map to the screen, a note."""
        d_k, step = self.scenario.d_k, self.step
        if d_k == 1:
            values = np.concatenate([step.keys[:, 0], step.query[:1], [0.0]])
            low, high = float(values.min()), float(values.max())
            pad = 0.1 * max(high - low, 1e-3)
            line = _Line1d(NumberLine(x_range=[low - pad, high + pad, (high - low + 2 * pad) / 6],
                                      length=PLANE_AREA[1] - PLANE_AREA[0], color=MUTED, include_numbers=False))
            line.line.move_to(((PLANE_AREA[0] + PLANE_AREA[1]) / 2, -0.3, 0))
            note = self.label("dₖ = {}: queries and keys are numbers on a line", size("d_k"), size=20,
                              color=MUTED).next_to(line.line, DOWN, buff=1.2)
            return VGroup(line, note), line.c2p, note
        points = np.vstack([step.keys[:, :2], self.sources["alignment"][0].feet[:, :2],
                            step.query[None, :2] * self._query_shrink])
        plane_note = self._plane_note() if d_k > 2 else None
        area = (area[0], area[1], area[2], area[3] - (plane_note.height + 0.2 if plane_note is not None else 0.0))
        frame = QueryFrame(step.query, points, area)  # the query points right: shadows fall straight down
        if plane_note is not None:
            # over the plane's area (the frame's invisible unit line may reach far right), left of the chart
            plane_note.next_to(frame, UP, buff=0.15).set_x((area[0] + area[1]) / 2)
            plane_note.shift(RIGHT * (max(0.0, -6.6 - plane_note.get_left()[0])
                                      - max(0.0, plane_note.get_right()[0] - NOTE_RIGHT)))
            return VGroup(frame, plane_note), frame.c2p, plane_note
        return VGroup(frame), frame.c2p, None

    def _plane_note(self) -> VMobject:
        """"dimensions 1 and 2 of dₖ = 3 (the bars use all)": on one line where it fits left of the chart, else
        on two."""
        parts = (position(0, "d_k"), position(1, "d_k"), size("d_k"))
        note: VMobject = self.label("dimensions {} and {} of dₖ = {} (the bars use all)", *parts, size=20, color=MUTED)
        if note.width > NOTE_RIGHT + 6.6:
            note = VGroup(self.label("dimensions {} and {} of dₖ = {}", *parts, size=20, color=MUTED),
                          text("(the bars use all)", size=20, color=MUTED)).arrange(DOWN, buff=0.1, aligned_edge=LEFT)
        return note

    def _drops(self, space: VGroup, at: Callable[..., np.ndarray], keys: list[VMobject]) -> VGroup:
        """From each key's tip, a perpendicular to the query's line, and its foot."""
        plane = space[0]
        drops = VGroup()
        for j, key in enumerate(keys):
            foot_facts = [value("alignment", "feet", j, m) for m in range(2)]
            foot = self.plot(Dot(plane.c2p(*(self.value_of(f) for f in foot_facts)), radius=0.045, color=KEY),
                             plane, *foot_facts)
            drops.add(VGroup(DashedLine(key.get_end(), foot.get_center(), color=KEY, stroke_width=2,
                                        stroke_opacity=0.7, dash_length=0.06), foot))
        return drops

    def _place_labels(self, room: Box, query_arrow: VMobject, query_label: Mobject, keys: list[VMobject],
                      lines: list[VMobject], note: Mobject | None) -> tuple[VGroup, Obstacles]:
        """The query's label, then k1, k2, … wherever one fits, off every arrow, line and dot
        (the chart names every key); returns them and what is now taken."""
        area: Box = (max(room[0] - 0.25, -6.8), min(room[1] + 0.25, 6.8), room[2] - 0.2, min(room[3] + 0.3, 2.8))
        taken = Obstacles([b for mob in (query_arrow, *keys, *lines) for b in _boxes(mob)], box_pad=LABEL_PAD)
        if note is not None:
            taken.add_box(box_of(note))
        if self.scenario.d_k == 1:  # labels above or below the number line, never across it
            line = box_of(query_arrow)
            taken.add_box((-7.1, 7.1, line[2] - 0.08, line[3] + 0.08))
        origin = query_arrow.get_start()
        tip = query_arrow.get_end()
        direction = tip - origin if self.scenario.d_k > 1 else UP
        # among many keys the only clear place may be further off: the label's colour still names the arrow
        reaches = (0.08, 0.25, 0.45, 0.7, 1.0, 1.4, 1.9)
        if not place_at_tip(query_label, tip, direction, taken, area, gaps=reaches):
            query_label.next_to(tip, UP, buff=0.15)
            taken.add_box(box_of(query_label))
        labels = VGroup()
        for j in np.argsort([-k.get_length() for k in keys]):
            label = self.label("k{}", position(int(j)), size=SMALLEST_SIZE, color=KEY)
            tip = keys[j].get_end() if isinstance(keys[j], Arrow) else keys[j].get_center()
            if place_at_tip(label, tip, tip - origin if self.scenario.d_k > 1 else DOWN, taken, area):
                labels.add(label)
            else:
                self.shown = [s for s in self.shown if s.mobject is not label]  # never shown
        return labels, taken

    # -- the geometry beats -------------------------------------------------------------------------
    def _geometry(self, picture: _Picture) -> None:
        token, d_k = self.scenario.query_token, self.scenario.d_k
        self.beat(f"In the query/key space: q{self.cite(query_number())}, the query of '{token}', and every key.",
                  Create(picture.space, run_time=1.0), GrowArrow(picture.query_arrow), FadeIn(picture.query_label),
                  LaggedStart(*(GrowArrow(k) if isinstance(k, Arrow) else FadeIn(k) for k in picture.keys),
                              lag_ratio=0.06, run_time=1.5),
                  FadeIn(picture.key_labels), wait=1.0)
        chart = picture.chart
        grow = [FadeIn(chart.labels), Create(chart.zero_line),
                LaggedStart(*(GrowFromEdge(bar, LEFT if v >= 0 else RIGHT) for bar, v in zip(
                    chart.bars, chart.values, strict=True)), lag_ratio=0.05)]
        if d_k == 2:
            self.beat("A score measures how far each key points along the query: its shadow on the query's line, "
                      "times the query's length.",
                      LaggedStart(*(Create(drop) for drop in picture.drops), lag_ratio=0.05), *grow,
                      run_time=2.5, wait=2.0)
        else:
            self.beat("A score measures how far each key points along the query: the bars, in key order.",
                      *grow, run_time=2.0, wait=1.8)

    # -- the board, built once ---------------------------------------------------------------------
    def _board_rows(self) -> list[int]:
        """Every key, or a window of them: the first (worked out), the query's, their neighbours, the last."""
        n, q = self.scenario.n_tokens, self.scenario.query
        if n <= MAX_BOARD_ROWS:
            return list(range(n))
        wanted = {0, 1, q - 1, q, q + 1, n - 1}
        return sorted(j for j in wanted if 0 <= j < n)

    def _board(self) -> _Board:
        d_k, tokens, rows = self.scenario.d_k, self.scenario.tokens, self._board_rows()
        layout = _with_gaps(rows)  # rows, with None where keys are left out
        cells = [[self.number("trace", "keys", j, m, color=KEY) for m in range(d_k)] if j is not None
                 else [text("⋮", color=MUTED) for _ in range(d_k)] for j in layout]
        labels: list[str | VMobject] = [tokens[j] if j is not None else text("⋮", color=MUTED) for j in layout]
        keys = NumberGrid(cells, row_labels=labels, color=KEY, h_buff=0.22)
        queries = NumberGrid([[self.number("trace", "queries", j, m, color=QUERY) for m in range(d_k)]
                              if j is not None else [text("⋮", color=MUTED) for _ in range(d_k)] for j in layout],
                             color=QUERY, h_buff=0.22)
        board = self._board_parts(keys, queries, layout)
        self._fit_board(board)
        # each key's products and score in its row of K; each query in its row of Q (level with K's)
        named = {j: keys.row_labels[k] for k, j in enumerate(layout) if j is not None}
        self.rows("key", named, keys, *board.products.values(), *board.equals.values(), *board.scores.values())
        self.rows("query", named, queries)
        return board

    def _board_parts(self, keys: NumberGrid, queries: NumberGrid, layout: list[int | None]) -> _Board:
        d_k, tokens = self.scenario.d_k, self.scenario.tokens
        rows = [j for j in layout if j is not None]
        query = VGroup(*(self.number("step", "query", m, color=QUERY) for m in range(d_k)))
        # a negative product after a plus in parentheses: 0.52 + (−0.25)
        products = {j: VGroup(*((self.factor if m else self.number)("step", "products", j, m) for m in range(d_k)))
                    for j in rows}
        for j in rows:
            for m in range(d_k):  # each product flies out of its two factors
                self.equals(value("step", "products", j, m), [value("step", "query", m), value("trace", "keys", j, m)],
                            "product")
        scores = {j: self.number("step", "scores", j) for j in rows}
        equals = {j: text(self.equals(value("step", "scores", j), [value("step", "products", j, m)
                                                                  for m in range(d_k)]), color=MUTED) for j in rows}
        row_y = {j: keys.cells[k][0].get_y() for k, j in enumerate(layout) if j is not None}
        start = keys.brackets.get_right()[0] + 0.8
        cell = max(mob.width for mob in [*query, *(p for row in products.values() for p in row)])
        gap = 0.6 if d_k <= 3 else 0.45  # four products and their pluses must fit the width
        rights = [start + cell + m * (cell + gap) for m in range(d_k)]
        widest = max(s.width for s in scores.values())
        pluses = {}
        for j in rows:
            for m, product in enumerate(products[j]):
                product.move_to((rights[m], row_y[j], 0), aligned_edge=RIGHT)
            pluses[j] = VGroup(*(text("+", color=MUTED).move_to((r + gap / 2, row_y[j], 0)) for r in rights[:-1]))
            equals[j].move_to((rights[-1] + 0.4, row_y[j], 0))
            scores[j].move_to((rights[-1] + 0.75 + widest, row_y[j], 0), aligned_edge=RIGHT)
        queries.shift((start - 0.1 - queries.get_left()[0], keys.cells[0][0].get_y() - queries.cells[0][0].get_y(), 0))
        for m, entry in enumerate(query):
            entry.move_to((rights[m], keys.cells[0][0].get_y() + 1.3, 0), aligned_edge=RIGHT)
        brackets = Brackets(query, color=QUERY)
        label = self.label("q{} ({})", query_number(), TokenPart(tokens[self.scenario.query]), size=26, color=QUERY)
        working, pairs = self._working_line()
        return _Board(keys, text("K", size=30, color=KEY).next_to(keys.brackets, UP, buff=0.2), queries,
                      text("Q", size=30, color=QUERY).next_to(queries.brackets, UP, buff=0.2), query,
                      VGroup(label.next_to(brackets, LEFT, buff=0.3), brackets, query), rows, products, pluses,
                      equals, scores, working, pairs)

    def _fit_board(self, board: _Board) -> None:
        drawn = VGroup(board.keys, board.keys_title, board.queries, board.queries_title, board.query_line,
                       *board.products.values(), *board.pluses.values(), *board.equals.values(),
                       *board.scores.values())
        board.working.next_to(drawn, DOWN, buff=0.5).set_x(drawn.get_x())
        everything = VGroup(drawn, board.working)
        for top in (TOP - 0.2, TOP):  # clear of the rounding note under the heading, unless that shrinks it
            scale = min(1.25, SAFE_WIDTH / everything.width, (top - BOTTOM) / everything.height)
            if scale >= 1.0:
                break
        everything.scale(scale).move_to((0, (top + BOTTOM) / 2, 0))

    def _working_line(self) -> tuple[VGroup, list[VGroup]]:
        """q_i · k_1 = q_1×k_11 + q_2×k_12 = s_1, the first dot product on one line."""
        d_k = self.scenario.d_k
        # a negative factor after an operator goes in parentheses: 0.11×(−1.26) + (−1.07)×(−0.50)
        pairs = [VGroup((self.factor if m else self.number)("step", "query", m, color=QUERY), text("×", color=MUTED),
                        self.factor("trace", "keys", 0, m, color=KEY)).arrange(RIGHT, buff=0.08) for m in range(d_k)]
        parts: list[VMobject] = [self.label("q{} · k{} =", query_number(), position(0))]
        for m, pair in enumerate(pairs):
            parts += [pair] if m == 0 else [text("+", color=MUTED), pair]
        factors = [value(source, name, *index) for m in range(d_k)
                   for source, name, index in (("step", "query", (m,)), ("trace", "keys", (0, m)))]
        sign = self.equals(value("step", "scores", 0), factors, "dot")
        line = VGroup(*parts, text(sign, color=MUTED), self.number("step", "scores", 0)).arrange(RIGHT, buff=0.2)
        return line, pairs

    # -- the arithmetic beats ----------------------------------------------------------------------
    def _lift_query(self, board: _Board) -> None:
        i, queries = self.scenario.query, board.queries
        q_row = next(k for k, j in enumerate(_with_gaps(board.rows)) if j == i)
        self.play(FadeIn(board.keys, board.keys_title, queries, board.queries_title), run_time=0.6)
        others = VGroup(*(queries.row(k) for k in range(len(queries.cells)) if k != q_row))
        self.play(others.animate.set_opacity(DIM), queries.brackets.animate.set_stroke(opacity=DIM), run_time=0.5)
        self.beat(
            f"q{self.cite(query_number())}, the query of '{self.scenario.query_token}', lifts out of Q; "
            "the keys K stay.",
            *(ReplacementTransform(q.copy(), entry) for q, entry in zip(queries.row(q_row), board.query, strict=True)),
            FadeIn(board.query_line[0], board.query_line[1]), run_time=1.5, wait=1.2,
        )
        self.play(FadeOut(queries, board.queries_title), run_time=0.5)

    def _first_key(self, board: _Board) -> None:
        d_k, working, pairs = self.scenario.d_k, board.working, board.pairs
        board.key_box = board.keys.row_box(0, color=KEY)
        self.play(
            FadeIn(board.key_box),
            *(ReplacementTransform(board.query[m].copy(), pair[0]) for m, pair in enumerate(pairs)),
            *(ReplacementTransform(board.keys.cells[0][m].copy(), pair[2]) for m, pair in enumerate(pairs)),
            FadeIn(VGroup(working[0], *(pair[1] for pair in pairs), *working[2:-2:2])), run_time=1.6,
        )
        self.play(*(fly_into(board.products[0][m], pair) for m, pair in enumerate(pairs)), FadeIn(board.pluses[0]),
                  run_time=1.1)
        note = [FadeIn(self.rounding_note())] if self.rounding_shows else []
        said = f"q{self.cite(query_number())} · k{self.cite(position(0))} = "  # cited in the order said
        said += " + ".join(f"{(self.fmt_factor if m else self.fmt)('step', 'query', m)}×"
                           f"{self.fmt_factor('trace', 'keys', 0, m)}" for m in range(d_k))
        said += f" {working[-2].text} {self.fmt('step', 'scores', 0)}."
        self.beat(said + self.said_rounded(), fly_into(board.scores[0], board.products[0], board.pluses[0]),
                  FadeIn(board.equals[0], working[-2], working[-1]), *note,
                  VGroup(board.products[0], board.pluses[0]).animate.set_opacity(DIM), run_time=1.2, wait=2.0)

    def _other_keys(self, board: _Board) -> None:
        d_k, others = self.scenario.d_k, board.rows[1:]
        if not others:
            self.play(FadeOut(board.working, *_present(board.key_box)), run_time=0.5)
            return
        self.play(
            FadeOut(board.working, *_present(board.key_box)),
            LaggedStart(*(AnimationGroup(
                *(fly_into(board.products[j][m], board.query[m], board.keys.cells[k][m]) for m in range(d_k)),
                FadeIn(board.pluses[j])) for k, j in _board_positions(board) if j in others), lag_ratio=0.2),
            run_time=min(2.5, 0.8 + 0.25 * len(others)),
        )
        left_out = len(board.rows) < self.scenario.n_tokens
        self.beat(
            "The same for every other key: one score each." + (" The chart holds them all." if left_out else ""),
            LaggedStart(*(fly_into(board.scores[j], board.products[j], board.pluses[j]) for j in others),
                        lag_ratio=0.15),
            FadeIn(VGroup(*(board.equals[j] for j in others))),
            VGroup(*(VGroup(board.products[j], board.pluses[j]) for j in others)).animate.set_opacity(DIM),
            run_time=min(2.5, 1.0 + 0.15 * len(others)), wait=1.2,
        )

    # -- the summary: the picture again, with every score at its bar ----------------------------------
    def _summary(self, picture: _Picture, board: _Board) -> None:
        n, chart = self.scenario.n_tokens, picture.chart
        seen = VGroup(picture.space, picture.query_arrow, picture.query_label, *picture.keys, picture.key_labels,
                      picture.drops, chart)
        font = chart.font
        numbers = [self.number("step", "scores", j, size=font) for j in range(n)]
        for j, number in enumerate(numbers):
            chart.number_spot(j, number)
        kept = self._board_beside(picture, board, VGroup(seen, *numbers)) if picture.narrow else None
        if picture.narrow and kept is None:  # no room for the board at a legible size: the chart's names span the width
            chart.labels.shift(RIGHT * (-6.6 - chart.labels.get_left()[0]))
            self._head_chart(picture.title, chart, picture.taken)
        landed = [ReplacementTransform(board.scores[j] if kept is None else board.scores[j].copy(), numbers[j])
                  for j in board.rows]
        rest = [FadeIn(numbers[j]) for j in range(n) if j not in board.rows]
        best = picture.chart.bars[self.sources["alignment"][0].order[0]]
        gone = [board.keys_title, board.query_line, *board.products.values(), *board.pluses.values(),
                *board.equals.values()]
        self.play(FadeOut(board.keys, *gone) if kept is None else MoveToTarget(kept), FadeIn(seen), *landed, *rest,
                  run_time=1.4)
        self.beat(
            f"Higher score, better match between what '{self.scenario.query_token}' asks and what each token offers.",
            FadeIn(picture.title, shift=DOWN * 0.2), best.animate.set_fill(KEY, opacity=1.0).set_stroke(INK, 3),
            run_time=1.2, wait=2.5,
        )

    def _board_beside(self, picture: _Picture, board: _Board, seen: VGroup) -> VGroup | None:
        """The picture (``seen``) moved to the right edge and the board (K, q_i, every product and score, all at
        full ink) made to fit left of it, under the chart's title; returns the board, its target set, or None
        where any of its texts would be drawn below the font floor (the picture then stays)."""
        shift = HALF_WIDTH - 0.1 - seen.get_right()[0]
        right, left = seen.get_left()[0] + shift - 0.6, -6.6
        worked = [*board.products.values(), *board.pluses.values(), *board.equals.values(), *board.scores.values()]
        drawn = VGroup(board.keys, board.keys_title, board.query_line, *worked)
        target = drawn.generate_target()
        # packed: the products closer to K than while they were worked out, q_i's entries still over them
        gap = min(product.get_left()[0] for product in board.products.values()) - board.keys.get_right()[0]
        target[2:].shift(LEFT * max(0.0, gap - 0.45))
        for part in target[3:]:  # the worked rows (products, pluses, signs, scores), dimmed while worked out
            part.set_opacity(1.0)
        top = TOP - 0.15 - picture.title.height - 0.35
        scale = min(1.25, (right - left) / target.width, (top - BOTTOM - 0.1) / target.height)
        texts = [m for m in target.get_family() if isinstance(m, Text) and m.text.strip()]
        if any(m.height * scale < text(m.text, size=SMALLEST_SIZE).height - 1e-6 for m in texts):
            return None
        seen.shift(RIGHT * shift)
        target.scale(scale).move_to(((right + left) / 2, (top + BOTTOM) / 2, 0))
        picture.title.next_to(target, UP, buff=0.35).set_x(target.get_x())
        return drawn


def _boxes(mob: Mobject) -> list[Box]:
    """Where a drawn thing is, for labels to keep off: boxes along a line, a dot's box; a
    group's parts each (an invisible line, such as a frame's unit, takes no room)."""
    if isinstance(mob, Line) and not isinstance(mob, DashedLine):
        return shaft_boxes(mob) if mob.get_stroke_opacity() > 0 else []
    if isinstance(mob, DashedLine):
        return shaft_boxes(mob)
    if mob.submobjects and not isinstance(mob, Dot):
        return [b for sub in mob.submobjects for b in _boxes(sub)]
    return [box_of(mob)]


def _present(mob: VMobject | None) -> list[VMobject]:
    return [] if mob is None else [mob]


def _with_gaps(rows: list[int]) -> list[int | None]:
    """The board's rows with ``None`` (a row of "⋮") wherever keys are left out."""
    layout: list[int | None] = []
    for k, j in enumerate(rows):
        if k and j != rows[k - 1] + 1:
            layout.append(None)
        layout.append(j)
    return layout


def _board_positions(board: _Board) -> list[tuple[int, int]]:
    """(row of the grid, key) for every key on the board."""
    return [(k, j) for k, j in enumerate(_with_gaps(board.rows)) if j is not None]


def _shrink_for(query: np.ndarray, others: np.ndarray) -> float:
    """1, or the factor that draws a query much longer than the keys (and their shadows) a little past the
    furthest shadow: at full length the keys would shrink to a few pixels (softmax-saturation: |q| = 710, keys
    of length 1). The direction, all the shadows need, stays exact."""
    length, reach = float(np.linalg.norm(query)), float(np.max(np.linalg.norm(others, axis=1), initial=0.0))
    if reach == 0.0 or length <= LONG_QUERY * reach:
        return 1.0
    along = float(np.max(others @ (query / length), initial=0.0))
    return max(1.6 * along, 0.6 * reach) / length


class _Shrunk:
    """Axes that draw a vector ``factor`` times its length on ``plane`` (the query, when drawn shorter)."""

    def __init__(self, plane: Any, factor: float) -> None:  # a QueryFrame (space[0], typed as a VMobject)
        self.plane, self.factor = plane, factor

    def c2p(self, x: float, y: float = 0.0, *_: float) -> np.ndarray:
        return np.asarray(self.plane.c2p(x * self.factor, y * self.factor))


def _break_marks(shaft: Arrow) -> VGroup:
    """Two slanted strokes across the shaft, past the furthest shadow (at most 1/1.6 of the drawn length) and
    short of the tip: the arrow is longer than drawn."""
    start, end = shaft.get_start(), shaft.get_end()
    along = (end - start) / max(float(np.linalg.norm(end - start)), 1e-9)
    across = np.array([-along[1], along[0], 0.0])
    slant = 0.16 * (across + 0.5 * along)
    middle = start + 0.81 * (end - start)
    return VGroup(*(Line(middle + k * along - slant, middle + k * along + slant, color=QUERY, stroke_width=3)
                    for k in (-0.06, 0.06)))


class _Line1d(VGroup):
    """A number line as a one-dimensional space: ``c2p(x, *_)`` is the point of ``x``."""

    def __init__(self, line: NumberLine) -> None:
        super().__init__(line)
        self.line = line

    def c2p(self, x: float, *_: float) -> np.ndarray:
        return np.asarray(self.line.n2p(x))
