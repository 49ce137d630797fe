"""Scene 2: projection into Q, K, V — X times three learned matrices, one entry worked by hand.

The board takes one of two layouts, whichever keeps every number at the font floor or above:

- in a row, as the formula reads: ``X · W = R``, the hand entry worked under ``W``;
- Falk's scheme, for wide matrices: ``W`` above the result and ``X`` to its left, so entry
  ``(i, c)`` of the result sits where row ``i`` of ``X`` and column ``c`` of ``W`` cross; the hand
  entry is worked above ``X``.

The scene ends on Q, K and V side by side, grown to fill the frame, with their shapes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple, cast

import numpy as np
from manim import (
    DOWN,
    LEFT,
    RIGHT,
    UP,
    FadeIn,
    FadeOut,
    LaggedStart,
    Line,
    MathTex,
    Rectangle,
    ReplacementTransform,
    Text,
    TransformFromCopy,
    VGroup,
    VMobject,
)

from scenes.base import ExplainerScene
from scenes.facts import Fact, size, value
from scenes.kit.grids import NumberGrid
from scenes.kit.layout import BOTTOM, SAFE_WIDTH, TOP, fit_scale
from scenes.kit.motion import fly_into
from scenes.kit.palette import EMBEDDING, HIGHLIGHT, KEY, MUTED, QUERY, VALUE
from scenes.kit.text import NUMBER_SIZE, text

__all__ = ["Projection"]


class _Role(NamedTuple):
    role: str
    weights: str  # trace field of W
    result: str  # trace field of X W
    name: str
    color: str
    size: str  # "d_k" or "d_v"


ROLES = (_Role("query", "w_query", "queries", "Q", QUERY, "d_k"), _Role("key", "w_key", "keys", "K", KEY, "d_k"),
         _Role("value", "w_value", "values", "V", VALUE, "d_v"))
SUMMARY_SPACINGS = (0.34, 0.26, 0.2)  # the summary's gaps between a row's numbers, widest first
MIN_SCALE = 20 / NUMBER_SIZE  # everything is drawn at 26 or more: scaled by this, it stays at 20
LINE = 0.46  # the pitch of the lines of the hand entry, at size 26
SIGN_SIZE = 34


@dataclass
class _Stage:
    """One role's weights W, its result X W, and their names and shapes."""

    w: NumberGrid
    w_tag: VGroup
    m: NumberGrid
    m_tag: VGroup

    @property
    def group(self) -> VGroup:
        return VGroup(self.w, self.w_tag, self.m, self.m_tag)


@dataclass
class _Working:
    """The hand entry: a line ``x × w = t`` per embedding dimension, a rule, ``sum = total``."""

    pairs: list[VGroup]
    signs: VGroup
    terms: list[Text]
    rule: Line
    sum_line: VGroup  # "sum" and its sign
    total: Text

    @property
    def group(self) -> VGroup:
        return VGroup(*self.pairs, self.signs, *self.terms, self.rule, self.sum_line, self.total)


@dataclass
class _Board:
    """X, the three stages, the signs between them (in a row) and the slot of the hand entry."""

    x: NumberGrid
    x_tag: VGroup
    stages: dict[str, _Stage]
    signs: VGroup
    slot: Rectangle  # invisible: where the shapes line and the hand entry go
    query: int
    scale: float = 1.0

    @property
    def group(self) -> VGroup:
        return VGroup(self.x, self.x_tag, self.signs, self.slot, *(s.group for s in self.stages.values()))


class Projection(ExplainerScene):
    """X (n × d_in) times W_Q, W_K, W_V (d_in × d_k, d_k, d_v) gives Q, K, V, as worked by hand."""

    def construct(self) -> None:
        self.header("Projection into Q, K, V", "query", "key", "value")
        self._note_shown = False
        working = self._working()
        board, shapes = self._board(working)
        self._embeddings(board)
        self._first_weights(board, shapes)
        self._one_entry(board, working, shapes)
        self._rest_of_queries(board, working)
        last = self._keys_and_values(board)
        self._side_by_side(board, last)

    # -- the beats ------------------------------------------------------------------------------
    def _embeddings(self, board: _Board) -> None:
        said = f"X: one row per token, each embedded in {self.cite(size('d_in'))} dimensions — "
        said += f"{self.cite(size('n_tokens'))} × {self.cite(size('d_in'))}."
        self.beat(said, FadeIn(board.x, shift=RIGHT * 0.3), FadeIn(board.x_tag), wait=1.2)

    def _first_weights(self, board: _Board, shapes: VGroup | None) -> None:
        first = board.stages["query"]
        said = f"W_Q is {self.cite(size('d_in'))} × {self.cite(size('d_k'))}: "  # cited in the order said
        said += f"{self.cite(size('n_tokens'))} × {self.cite(size('d_in'))} · "
        said += f"{self.cite(size('d_in'))} × {self.cite(size('d_k'))} = "
        said += f"{self.cite(size('n_tokens'))} × {self.cite(size('d_k'))}."
        self.beat(said, FadeIn(VGroup(first.w, first.w_tag), shift=LEFT * 0.4), FadeIn(board.signs),
                  FadeIn(VGroup(first.m.brackets, first.m_tag)), *([FadeIn(shapes, shift=UP * 0.2)] if shapes else []),
                  wait=1.4)

    def _one_entry(self, board: _Board, working: _Working, shapes: VGroup | None) -> None:
        """The query's row of X meets the first column of W_Q; the products add up to one entry of Q."""
        q, token = self.scenario.query, self.scenario.query_token
        first = board.stages["query"]
        boxes = VGroup(board.x.row_box(q), first.w.column_box(0))
        self.play(*([FadeOut(shapes)] if shapes else []), FadeIn(boxes),
                  board.x.row_labels[q].animate.set_color(HIGHLIGHT),
                  *(TransformFromCopy(board.x.cells[q][m], pair[0]) for m, pair in enumerate(working.pairs)),
                  *(TransformFromCopy(first.w.cells[m][0], pair[2]) for m, pair in enumerate(working.pairs)),
                  FadeIn(VGroup(*(pair[1] for pair in working.pairs))), run_time=1.4)
        said = f"Row '{token}' of X meets the first column of W_Q: {self.cite(size('d_in'))} products, "
        said += "one per embedding dimension."
        note, rounded = self._rounding()  # after the caption's own numbers: it says them in this order
        self.beat(said + rounded,
                  *(fly_into(term, pair) for term, pair in zip(working.terms, working.pairs, strict=True)),
                  FadeIn(working.signs), *note, run_time=1.5, wait=1.0)
        said = (f"They add up to {self.fmt('trace', 'queries', q, 0)}, the first entry of the query of "
                f"{self.quote(q, 'query')}.")
        note, rounded = self._rounding()
        self.beat(said + rounded,
                  FadeIn(working.rule, working.sum_line), fly_into(working.total, *working.terms), *note,
                  run_time=1.2, wait=0.8)
        self.play(ReplacementTransform(working.total.copy(), first.m.cells[q][0]), run_time=0.9)
        self.boxes = boxes

    def _rest_of_queries(self, board: _Board, working: _Working) -> None:
        self.play(FadeOut(working.group, self.boxes), run_time=0.5)
        self.beat("Each query is its embedding times W_Q.",
                  self._fill(board.x, board.stages["query"], skip=(self.scenario.query, 0)), run_time=1.8, wait=0.8)

    def _keys_and_values(self, board: _Board) -> _Stage:
        previous = board.stages["query"]
        captions = {"key": "Keys the same way, with their own matrix W_K.",
                    "value": "Values with W_V: three learned matrices, three views of each token."}
        for role in ("key", "value"):
            stage = board.stages[role]
            self.play(FadeOut(previous.group, shift=UP * 0.3), FadeIn(VGroup(stage.w, stage.w_tag), shift=LEFT * 0.4),
                      FadeIn(VGroup(stage.m.brackets, stage.m_tag)), run_time=0.7)
            self.beat(captions[role], self._fill(board.x, stage), run_time=1.4, wait=0.8)
            previous = stage
        return previous

    def _side_by_side(self, board: _Board, last: _Stage) -> None:
        """Q, K and V side by side, grown to fill the frame: the scene's summary."""
        columns, statement = self._summary()
        d_k, d_v = self.scenario.d_k, self.scenario.d_v
        spaces = (f"query/key/value space is {self.cite(size('d_k'))}-d" if d_k == d_v else
                  f"query/key space is {self.cite(size('d_k'))}-d and the value space {self.cite(size('d_v'))}-d")
        self.beat(f"The {spaces}; the embeddings were {self.cite(size('d_in'))}-d.",
                  FadeOut(VGroup(board.x, board.x_tag, board.signs, last.w, last.w_tag)),
                  ReplacementTransform(VGroup(last.m, last.m_tag), columns[2]),
                  FadeIn(columns[0], shift=RIGHT * 0.3), FadeIn(columns[1], shift=RIGHT * 0.3),
                  *([FadeIn(statement, shift=DOWN * 0.2)] if statement else []), run_time=1.5, wait=2.0)

    def _rounding(self) -> tuple[list[Any], str]:
        """The rounding note and the caption's words, the first time a ≈ shows."""
        if self._note_shown or not self.rounding_shows:
            return [], ""
        self._note_shown = True
        return [FadeIn(self.rounding_note())], self.said_rounded()

    @staticmethod
    def _fill(x_grid: NumberGrid, stage: _Stage, skip: tuple[int, int] | None = None) -> LaggedStart:
        """Each row of X flows into the matching row of the result."""
        rows, columns = stage.m.shape
        targets = [(i, [stage.m.cells[i][j] for j in range(columns) if (i, j) != skip]) for i in range(rows)]
        return LaggedStart(*(TransformFromCopy(x_grid.row(i), VGroup(*cells)) for i, cells in targets if cells),
                           lag_ratio=min(0.15, 1.5 / rows))

    # -- what the board holds ------------------------------------------------------------------------
    def _entries(self, field: str, color: str) -> list[list[Text]]:
        """Every entry of a trace matrix, drawn and recorded."""
        rows, columns = np.asarray(getattr(self.trace, field)).shape
        return [[self.number("trace", field, i, j, color=color) for j in range(columns)] for i in range(rows)]

    def _tag(self, name: str, rows: Fact, columns: Fact, color: str) -> VGroup:
        """A matrix's name and shape (rows × columns), side by side, for beneath it."""
        shape = self.label("{} × {}", rows, columns, size=NUMBER_SIZE, color=MUTED)
        return VGroup(MathTex(name, color=color, font_size=38), shape).arrange(RIGHT, buff=0.25)

    def _shapes_line(self) -> VGroup:
        """n × d_in · d_in × d_k = n × d_k, in the colours of X and W_Q."""
        n, d_in, d_k = size("n_tokens"), size("d_in"), size("d_k")
        return VGroup(self.label("{} × {}", n, d_in, size=NUMBER_SIZE, color=EMBEDDING),
                      text("·", size=NUMBER_SIZE, color=MUTED),
                      self.label("{} × {}", d_in, d_k, size=NUMBER_SIZE, color=QUERY),
                      text("=", size=NUMBER_SIZE, color=MUTED),
                      self.label("{} × {}", n, d_k, size=NUMBER_SIZE, color=QUERY)).arrange(RIGHT, buff=0.2)

    def _working(self) -> _Working:
        """x_q[m] × W_Q[m, 0] = term, one line per dimension, then the terms' sum: q[0]."""
        q, d_in = self.scenario.query, self.scenario.d_in
        rows: list[list[VMobject]] = []
        for m in range(d_in):
            factors = [value("trace", "embeddings", q, m), value("trace", "w_query", m, 0)]
            sign = self.equals(value("step", "query_terms", m, 0), factors, "product")
            rows.append([self.number("trace", "embeddings", q, m, color=EMBEDDING),
                         text("×", size=NUMBER_SIZE, color=MUTED), self.factor("trace", "w_query", m, 0, color=QUERY),
                         text(sign, size=NUMBER_SIZE, color=MUTED),
                         self.number("step", "query_terms", m, 0, color=HIGHLIGHT)])
        terms = [value("step", "query_terms", m, 0) for m in range(d_in)]
        sign = self.equals(value("trace", "queries", q, 0), terms, "sum")
        total = self.number("trace", "queries", q, 0, color=HIGHLIGHT)
        sum_line = VGroup(text("sum", size=NUMBER_SIZE, color=MUTED), text(sign, size=NUMBER_SIZE, color=MUTED))
        columns = _columns([*rows, [rows[0][0], rows[0][1], rows[0][2], sum_line[1], total]])
        for k, row in enumerate(rows):
            _set_row(row, columns, -k * LINE)
        bottom = -(d_in - 1) * LINE - 0.3
        right, width = columns[4]
        rule = Line((right - width - 0.05, bottom, 0), (right + 0.05, bottom, 0), color=MUTED, stroke_width=2)
        _set_row([sum_line[1], total], columns, bottom - 0.3, which=(3, 4))
        sum_line[0].next_to(sum_line[1], LEFT, buff=0.2)
        pairs = [VGroup(*row[:3]) for row in rows]
        products = [cast(Text, row[4]) for row in rows]
        return _Working(pairs, VGroup(*(row[3] for row in rows)), products, rule, sum_line, total)

    # -- the layout ----------------------------------------------------------------------------------
    def _board(self, working: _Working) -> tuple[_Board, VGroup | None]:
        """Build X and the three stages, arrange them the roomier way, and scale them to the frame.

        In Falk's scheme the product of shapes is written above X (in a row, the names and shapes
        under the matrices read as that product); it is returned, or ``None``.
        """
        x = NumberGrid(self._entries("embeddings", EMBEDDING), row_labels=self.scenario.tokens, color=EMBEDDING,
                       label_size=NUMBER_SIZE)
        x_tag = self._tag("X", size("n_tokens"), size("d_in"), EMBEDDING)
        stages = {role.role: self._stage(role) for role in ROLES}
        # every row of X and of each result in its token's row (the results' rows level with X's labels)
        self.rows("token", x)
        for role, stage in stages.items():
            self.rows("query" if role == "query" else "key", dict(enumerate(x.row_labels)), stage.m)
        signs = VGroup(text("·", size=SIGN_SIZE, color=MUTED), text("=", size=SIGN_SIZE, color=MUTED))
        mark = len(self.shown)
        shapes = self._shapes_line()
        slot = Rectangle(width=max(working.group.width, shapes.width), height=working.group.height, stroke_width=0,
                         fill_opacity=0)
        board = _Board(x, x_tag, stages, signs, slot, self.scenario.query)
        fits = {layout: _arrange(board, layout) for layout in ("falk", "falk-side", "row")}
        falk = max(("falk", "falk-side"), key=fits.__getitem__)
        if fits["row"] >= min(MIN_SCALE, fits[falk]):
            del self.shown[mark:]  # the shapes line is not drawn: its numbers are never shown
            slot.stretch_to_fit_width(working.group.width)
            board.scale = _arrange(board, "row")
            drawn: VGroup | None = None
        else:
            board.scale, board.signs, drawn = _arrange(board, falk), VGroup(), shapes
        board.group.scale(board.scale).move_to((0, (TOP + BOTTOM) / 2, 0))
        working.group.scale(board.scale).move_to(slot)
        if drawn is not None:
            drawn.scale(board.scale).move_to(slot).align_to(slot, UP)
        return board, drawn

    def _stage(self, role: _Role) -> _Stage:
        """W and X W of one role, their cells one width so that W's columns sit over the result's."""
        weights, result = self._entries(role.weights, role.color), self._entries(role.result, role.color)
        width = max(e.width for rows in (weights, result) for row in rows for e in row)
        w_tag = self._tag(f"W_{role.name}", size("d_in"), size(role.size), role.color)
        m_tag = self._tag(role.name, size("n_tokens"), size(role.size), role.color)
        return _Stage(_grid(weights, role.color, width), w_tag, _grid(result, role.color, width), m_tag)

    def _summary(self) -> tuple[VGroup, Text | MathTex | None]:
        """Q, K and V next to each other, each with its name and shape beneath, rows aligned."""
        mark = len(self.shown)
        for h_buff in SUMMARY_SPACINGS:  # room between a row's numbers, as much as the width allows
            del self.shown[mark:]  # a narrower try records its numbers afresh
            group = self._summary_columns(h_buff)
            if fit_scale(group, most=1.8) >= 0.85:  # the numbers at 22 or more
                break
        mark = len(self.shown)
        made = self._statement().next_to(group, UP, buff=0.45)
        statement: Text | MathTex | None = made
        if fit_scale(VGroup(group, made), most=1.8) < MIN_SCALE:
            del self.shown[mark:]  # the statement is dropped: its numbers are never shown
            statement = None
        _grow(group, statement)
        labels = dict(enumerate(cast(NumberGrid, group[0][0]).row_labels))  # Q's labels name K's and V's rows too
        for column, kind in zip(group, ("query", "key", "key"), strict=True):
            self.rows(kind, labels, column[0])
        return group, statement

    def _summary_columns(self, h_buff: float) -> VGroup:
        columns = []
        for k, role in enumerate(ROLES):
            labels = self.scenario.tokens if k == 0 else None
            grid = NumberGrid(self._entries(role.result, role.color), row_labels=labels, color=role.color,
                              h_buff=h_buff, label_size=NUMBER_SIZE)
            if labels:
                grid.row_labels[self.scenario.query].set_color(HIGHLIGHT)
            tag = self._tag(role.name, size("n_tokens"), size(role.size), role.color)
            columns.append(VGroup(grid, tag.next_to(grid.brackets, DOWN, buff=0.2).set_x(grid.body.get_x())))
        return VGroup(*columns).arrange(RIGHT, buff=max(0.3, 1.3 * h_buff), aligned_edge=UP)

    def _statement(self) -> Text | MathTex:
        """Embeddings d_in-d → queries and keys d_k-d, values d_v-d."""
        if self.scenario.d_k == self.scenario.d_v:
            return self.label("embeddings {}-d  →  queries, keys and values {}-d", size("d_in"), size("d_k"),
                              size=NUMBER_SIZE, color=MUTED)
        return self.label("embeddings {}-d  →  queries and keys {}-d, values {}-d", size("d_in"), size("d_k"),
                          size("d_v"), size=NUMBER_SIZE, color=MUTED)


# -- layout helpers ------------------------------------------------------------------------------------


def _grid(entries: list[list[Text]], color: str, width: float) -> NumberGrid:
    """A grid whose cells are all ``width`` wide plus padding, so every W and result share columns."""
    widest = max(e.width for row in entries for e in row)
    return NumberGrid(entries, color=color, h_buff=0.28 + width - widest, label_size=NUMBER_SIZE)


def _arrange(board: _Board, layout: str) -> float:
    """Place the board at size 26 in ``layout``; the scale that fits it to the frame.

    ``"row"``: X · W = R; ``"falk"``: W above R, the hand entry above X; ``"falk-side"``: the
    same with the hand entry beside R, level with the query's row.
    """
    x = board.x
    x.move_to((0, 0, 0), aligned_edge=UP + LEFT)
    board.x_tag.next_to(x.brackets, DOWN, buff=0.2).set_x(x.body.get_x())
    for stage in board.stages.values():
        stage.m.next_to(x.brackets, RIGHT, buff=0.6).align_to(x.brackets, UP)
        stage.m_tag.next_to(stage.m.brackets, DOWN, buff=0.2).set_x(stage.m.body.get_x()).align_to(board.x_tag, UP)
    stages = list(board.stages.values())
    if layout == "row":
        _arrange_row(board, stages)
    else:
        _arrange_falk(board, stages, side=layout == "falk-side")
    parts = [x, board.x_tag, board.slot, *(s.group for s in stages)] + ([board.signs] if layout == "row" else [])
    return fit_scale(VGroup(*parts), most=1.3, width=SAFE_WIDTH, height=TOP - BOTTOM)


def _arrange_falk(board: _Board, stages: list[_Stage], *, side: bool) -> None:
    """Falk's scheme: each W above its result, columns over columns, W's name to its left."""
    x, slot = board.x, board.slot
    for stage in stages:
        stage.w.next_to(stage.m.brackets, UP, buff=0.35)
        stage.w.shift(LEFT * (stage.w.body.get_left()[0] - stage.m.body.get_left()[0]))
        stage.w_tag.arrange(DOWN, buff=0.12).next_to(stage.w.brackets, LEFT, buff=0.3)
    if side:
        right = max(stage.m.get_right()[0] for stage in stages) + 0.7
        row_y = x.cells[board.query][0].get_y()
        top = min(x.brackets.get_top()[1], max(row_y + slot.height / 2, x.brackets.get_bottom()[1] + slot.height))
        slot.move_to((right, top, 0), aligned_edge=UP + LEFT)
    else:
        widest = max(stage.w_tag.width for stage in stages)
        right = min(stage.w.brackets.get_left()[0] for stage in stages) - widest - 0.6
        slot.move_to((min(right, x.brackets.get_right()[0]), x.get_top()[1] + 0.35, 0), aligned_edge=DOWN + RIGHT)


def _arrange_row(board: _Board, stages: list[_Stage]) -> None:
    """X · W = R: W at the top of the middle column, the slot of the hand entry under W's tag."""
    x, slot = board.x, board.slot
    middle = max(slot.width, *(max(s.w.width, s.w_tag.width) for s in stages))
    left = x.brackets.get_right()[0] + 0.8
    top = x.brackets.get_top()[1]
    for stage in stages:
        stage.w.move_to((left + middle / 2, 0, 0)).align_to(x.brackets, UP)
        stage.w_tag.arrange(RIGHT, buff=0.25).next_to(stage.w.brackets, DOWN, buff=0.2).set_x(left + middle / 2)
        stage.m.shift(RIGHT * (left + middle + 0.8 - stage.m.get_left()[0]))
        stage.m_tag.set_x(stage.m.body.get_x())
    w_bottom = min(stage.w_tag.get_bottom()[1] for stage in stages)
    slot.move_to((left + middle / 2, w_bottom - 0.35, 0), aligned_edge=UP)
    y = (top + stages[0].w.brackets.get_bottom()[1]) / 2
    board.signs[0].move_to((left - 0.4, y, 0))
    board.signs[1].move_to((left + middle + 0.4, y, 0))


def _grow(group: VGroup, statement: VMobject | None) -> None:
    """Scale the summary to fill the safe area, spreading it when growing would leave it narrow."""
    whole = VGroup(group, statement) if statement is not None else group
    scale = fit_scale(whole, most=1.8, width=SAFE_WIDTH, height=TOP - BOTTOM)
    whole.scale(scale)
    wide = 0.78 * SAFE_WIDTH
    if group.width < wide and len(group) > 1:
        gap = (wide - sum(column.width for column in group)) / (len(group) - 1)
        group.arrange(RIGHT, buff=gap, aligned_edge=UP)
    if statement is not None:
        statement.next_to(group, UP, buff=max(0.45 * scale, 3.0 - group.height - statement.height))
    whole.move_to((0, (TOP + BOTTOM) / 2, 0))


def _columns(rows: list[list[VMobject]]) -> list[tuple[float, float]]:
    """(right edge, width) of each column of a little table of numbers and signs, a gap between."""
    widths = [max(row[c].width for row in rows) for c in range(len(rows[0]))]
    columns, x = [], 0.0
    for width in widths:
        x += width + 0.18
        columns.append((x, width))
    return columns


def _set_row(row: list[Any], columns: list[tuple[float, float]], y: float, which: tuple[int, ...] = ()) -> None:
    """Numbers (the even columns) right-aligned in their column, signs (the odd ones) centred."""
    for mob, c in zip(row, which or range(len(row)), strict=True):
        right, width = columns[c]
        x = right - width / 2 if c % 2 else right - mob.width / 2
        mob.move_to((x, y, 0))
