"""Lecture 8, scene 2: each head's own pipeline — head 1 in full, then head 2 in short.

Head 1's own W_Q, W_K and W_V beside the X every head shares; then lecture 6's pipeline for the query
in one table with a row per key: q = x W_Q over the keys k_j = x_j W_K, each key's score q·k_j,
÷ √d_k, the softmax's weights, then V = X W_V in the keys' place and the weighted sum z. Head 2 takes
the same steps with its own numbers, faster (the viewer has seen them once), and the scene ends on the
two heads' z side by side, ready to be joined (the lecture's last scene joins them and multiplies by
W_O). Each head's steps stand in its own panel. A scenario with one head ends on its z, which is then
the output; one with more than two heads says that heads 3 to h take the same steps.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from manim import (
    DOWN,
    LEFT,
    RIGHT,
    UP,
    Animation,
    FadeIn,
    FadeOut,
    FadeTransform,
    LaggedStart,
    MathTex,
    Rectangle,
    ReplacementTransform,
    RoundedRectangle,
    SurroundingRectangle,
    VGroup,
    VMobject,
)

from attention_math import Scenario, ScenarioError
from scenes.base import READING_PACE, ExplainerScene
from scenes.facts import TokenPart, position, query_number, size, value
from scenes.kit.baselines import row_baseline, stand
from scenes.kit.fades import fade_in, fade_out
from scenes.kit.grids import Brackets, NumberGrid
from scenes.kit.heatmap import text_height, text_width, vector_line, vector_width, widest
from scenes.kit.layout import BOTTOM, HALF_WIDTH, TOP
from scenes.kit.motion import fly_into
from scenes.kit.palette import CONTEXT, DIM, EMBEDDING, HIGHLIGHT, INK, KEY, MUTED, QUERY, VALUE, WEIGHT
from scenes.kit.stills import StillFirst
from scenes.kit.text import SMALLEST_SIZE, drop_svg_paths, shorten_token, text
from scenes.multi_head.looks import looks_most

__all__ = ["PerHead"]

SIZES = (30, 28, 26, 24, 22, SMALLEST_SIZE)  # type sizes tried for the table, largest first
LABEL_LIMITS = (10, 8, 6)  # characters kept of a token in the row labels, most first
SHOWN_HEADS = 2  # head 1 in full, head 2 in short; the others are said to take the same steps
HEAD_BAND = 0.62  # from a panel's top to q's row: the head's title and the columns' headers
Q_GAP = 0.12  # between q's row and the keys'
Z_GAP = 0.2  # between the table and the boxes of z under it
Z_PAD, Z_APART = 0.4, 0.4  # around a box's content; between two boxes
ARRANGEMENTS = (("under", "line"), ("beside", "tall"), ("beside", "column"), ("under", "tall"))
"""Where the boxes of z go and how each writes z, in the order tried: under the table side by side, each on one
line ("head 1: z5 = (…)"); beside it one above the other, the name over z; the same with z as a column; under it,
the name over z."""
PITCH_MOST = 0.95
CELL_GAP = 0.22  # between the numbers of one vector (at type size 26)
GAP_LEAST, GAP_MOST = 0.4, 1.1  # between the table's columns
TABLE_WIDTH = 10.4  # the table's columns spread to at least this width where they can
NOTE_ROOM = 0.15  # under the heading's note (more heads than two)
PANEL_PAD = 0.22  # between a panel's frame and what it holds
X_GAP = 0.7  # between X and the head's matrices
FIELDS = ("scores", "scaled_scores", "weights")
WEIGHTS = ("w_query", "w_key", "w_value")
SHAPES_NOTE = "(numbers: in the walkthrough)"
SHAPES_WIDTH = 3.4  # the matrices by their shapes, at the smallest type
COLOURS = {"scores": INK, "scaled_scores": INK, "weights": WEIGHT}


@dataclass(frozen=True)
class _Widths:
    """What the table's parts take at one type size: the row labels, a cell of q, K or V, their slot, each
    column (its numbers or its header), the widest box of z, X, and the head's matrices side by side."""

    limit: int
    labels: float
    cell: float
    slot: float
    columns: dict[str, float]
    z: dict[str, float]  # the widest box of z by its shape: "line", "tall", "column"
    x: float
    matrices: float  # side by side
    stacked: float  # one above another, each name left of it

    def table(self, gap: float) -> float:
        """The panel's width around the table with gaps ``gap`` between its columns."""
        return self.labels + self.slot + sum(self.columns.values()) + 4 * gap + 2 * PANEL_PAD

    def least(self) -> float:
        """The narrowest panel: the table at the least gaps, or the matrices' shapes (X by its shape too)."""
        return max(self.table(GAP_LEAST), self.labels + GAP_LEAST + SHAPES_WIDTH + 2 * PANEL_PAD)

    def with_matrices(self, beside_x: bool) -> float:
        """The narrowest panel that shows the matrices' numbers, beside X or in its place."""
        return self.labels + GAP_LEAST + (self.x + X_GAP if beside_x else 0.0) + self.matrices + 2 * PANEL_PAD


@dataclass(frozen=True)
class _Layout:
    """Where the table stands: type size, rows, columns (their right edges), and where z goes."""

    font: float
    limit: int
    pitch: float
    place: str  # the boxes of z "under" the table side by side, or "beside" it one above the other
    shape: str  # each box's z on one "line" after its name, "tall" under it, or a "column" of numbers
    left: float  # the panel's left edge
    right: float  # and its right edge
    label_right: float  # the row labels' right edge
    cell: float  # a cell of q, K or V
    vector_left: float  # where the cells of q, K and V start
    columns: dict[str, float]  # the right edge of the scores, scaled scores and weights
    ys: list[float]  # the keys' rows
    y_query: float
    y_head: float
    bottom: float  # the panel's bottom

    @property
    def beside(self) -> bool:
        return self.place == "beside"


@dataclass
class _Board:
    """What every head shares: the row labels (q's above the keys'), X, the columns' headers."""

    labels: VGroup
    query: VMobject
    x_grid: VGroup  # a row of numbers per token (or X's shape, where they do not fit)
    headers: dict[str, VMobject]  # "X", "K", "V" and the three fields'
    rows: Rectangle  # the keys' rows' reach across the table (a mark that draws nothing)
    x_shown: bool = True  # is X on screen?
    labels_dim: bool = False  # have the tokens' labels stepped back (the matrices' rows are not tokens)?


@dataclass
class _Head:
    """One head's drawing: its panel, matrices, the table's numbers for it, its z."""

    head: int  # from 0
    panel: VMobject
    title: VMobject
    matrices: VMobject  # W_Q, W_K, W_V (or their shapes)
    query: VGroup  # q's numbers
    keys: VGroup  # a row of numbers per key
    values: VGroup
    columns: dict[str, VGroup]  # scores, scaled scores, weights: a number per key
    tops: list[int]
    outline: VGroup
    z: VGroup = field(default_factory=VGroup)  # its box: frame, name, z = (…)

    @property
    def source(self) -> str:
        return f"head{self.head + 1}"


class PerHead(StillFirst, ExplainerScene):
    """Head 1's W_Q, W_K, W_V and its whole pipeline for the query; head 2's, shorter; their z side by side."""

    reading_pace = READING_PACE

    layout: _Layout  # what the beats draw on (the geometry tests look at them)
    board: _Board
    drawn: list[_Head]

    @classmethod
    def check_scenario(cls, scenario: Scenario) -> Scenario:
        """Any number of heads (heads 1 and 2 drawn, the others said); refused only when the table and the heads'
        z do not fit the frame legibly (16 tokens of wide numbers, d_k and d_v 4)."""
        measure = cls.__new__(cls)  # measures only: no scene is set up
        measure.scenario, measure.trace = scenario, scenario.trace()
        measure.sources = {f"head{k + 1}": (head.trace(), scenario.precision)
                           for k, head in enumerate(scenario.heads[:SHOWN_HEADS])}
        measure.sources["trace"] = (measure.trace, scenario.precision)
        if measure._choice() is None:
            raise ScenarioError(measure._too_wide())
        return scenario

    def construct(self) -> None:
        heads = self.scenario.heads[:SHOWN_HEADS]
        for k, head in enumerate(heads):
            self.add_source(f"head{k + 1}", head.trace(), self.scenario.precision)
        self.header("Each head's own pipeline")
        layout = self.layout = self._layout()
        board = self.board = self._board(layout)
        drawn = self.drawn = [self._head(k, layout) for k in range(len(heads))]
        self._register(board, drawn)
        self._full(board, drawn[0])
        if len(drawn) > 1:
            self._short(board, drawn[0], drawn[1])
        self._side_by_side(drawn)

    # -- layout from the data ------------------------------------------------------------------------
    def _texts(self, field_name: str, rows: range | list[int], columns: range) -> list[str]:
        return [self.text_for(value(f"head{k + 1}", field_name, i, m)) for k in range(len(self._heads()))
                for i in rows for m in columns]

    def _heads(self) -> list[str]:
        return [name for name in self.sources if name.startswith("head")]

    def _widths(self, font: float, limit: int) -> _Widths:
        """What the table's parts take at type size ``font``, token labels cut to ``limit`` characters."""
        n, q, d_k, d_v = self.scenario.n_tokens, self.scenario.query, self.scenario.d_k, self.scenario.d_v
        tokens = self.scenario.tokens
        labels = max(max(text_width(f"{n} " + shorten_token(t, limit), font) for t in tokens),
                     text_width(f"q{q + 1}", font), text_width("head 2", max(font, 24.0)) - 0.3)
        vectors = (self._texts("queries", [q], range(d_k)) + self._texts("keys", range(n), range(d_k))
                   + self._texts("values", range(n), range(d_v)))
        cell = widest(vectors, font) + CELL_GAP * font / 26
        slot = max(max(d_k, d_v) * cell, text_width("K = X W_K", font))
        columns = {f: max(widest(self._texts(f, [q], range(n)), font), text_width(self._header_text(f), font) - 0.2)
                   for f in FIELDS}
        z = {shape: max(self._box_width(k, font, shape) for k in range(len(self._heads())))
             for shape in ("line", "tall", "column")}
        x = self.scenario.d_in * self._x_cell(font)
        matrices = self._matrix_widths(font)
        return _Widths(limit, labels, cell, slot, columns, z, x, sum(matrices) + 0.8, max(matrices) + 1.0)

    def _header_text(self, field_name: str) -> str:
        """A column's header as written (measured before it is made)."""
        if field_name == "scores":
            return f"q{self.scenario.query + 1} · k"
        if field_name == "scaled_scores":
            return f"÷ √{self.scenario.d_k}" if self.trace.scaled else "unscaled"
        return "softmax"

    def _ceiling(self) -> float:
        """The panel's highest top: under the header, and under the note that heads 3 to h take the same steps."""
        return TOP - (NOTE_ROOM if self.scenario.n_heads > SHOWN_HEADS else 0.0)

    def _pitch(self, place: str, shape: str, font: float) -> float:
        """The rows' pitch with the boxes of z ``place``d (under the table: as tall as their ``shape``)."""
        rows = self.scenario.n_tokens + 1  # q's row, then a row per key
        room = self._ceiling() - BOTTOM - HEAD_BAND - Q_GAP - PANEL_PAD
        if place == "under":
            room -= Z_GAP + self._box_height(shape, font)
        return min(PITCH_MOST, room / rows)

    @staticmethod
    def _box_height(shape: str, font: float, d_v: int = 1) -> float:
        """A box of z's height: its lines (``d_v`` numbers in a column) and its padding."""
        lines = {"line": 1, "tall": 2, "column": 1 + d_v}[shape]
        return lines * text_height(font) + (lines - 1) * 0.12 + 0.3

    def _layout(self) -> _Layout:
        """The table's layout (:meth:`_choice`; :meth:`check_scenario` refused a scenario that has none)."""
        choice = self._choice()
        if choice is None:
            raise ScenarioError(self._too_wide())
        return self._place(*choice)

    def _choice(self) -> tuple[float, _Widths, str, str] | None:
        """The largest type (and longest labels) at which the table fits with a line of air between its rows and
        the boxes of z fit (:data:`ARRANGEMENTS`, in order; under the table first while its rows stay roomy);
        first with room for the matrices' numbers, then with their shapes only. ``None``: nothing fits."""
        for numbers in (True, False):
            for font in SIZES:
                for limit in LABEL_LIMITS:
                    widths = self._widths(font, limit)
                    fits = [(place, shape) for place, shape in ARRANGEMENTS
                            if self._fits(widths, font, place, shape, numbers=numbers)]
                    roomy = [(place, shape) for place, shape in fits
                             if place == "beside" or self._pitch(place, shape, font) >= text_height(font) + 0.12]
                    if fits:
                        return (font, widths, *(roomy or fits)[0])
        return None

    def _fits(self, widths: _Widths, font: float, place: str, shape: str, *, numbers: bool) -> bool:
        """Do the table's rows keep a line of air and the panel and the boxes of z fit the frame?"""
        pitch = self._pitch(place, shape, font)
        if pitch < text_height(font) + (0.05 if place == "under" else 0.03):
            return False
        panel = self._panel_least(widths, font, pitch, numbers=numbers)
        count = min(SHOWN_HEADS, self.scenario.n_heads)
        if place == "under":
            return panel <= 2 * HALF_WIDTH and count * widths.z[shape] + (count - 1) * Z_APART <= 2 * HALF_WIDTH
        tall = count * self._box_height(shape, font, self.scenario.d_v) + (count - 1) * Z_APART
        return panel + 0.35 + widths.z[shape] <= 2 * HALF_WIDTH and tall <= (self.scenario.n_tokens + 1) * pitch

    def _too_wide(self) -> str:
        s = self.scenario
        return (f"precision: PerHead's table of {s.n_tokens} tokens (d_k {s.d_k}, d_v {s.d_v}) and the heads' z do not "
                f"fit the frame at {s.precision} decimals (use fewer decimals or tokens, or a smaller d_k or d_v)")

    def _panel_least(self, widths: _Widths, font: float, pitch: float, *, numbers: bool) -> float:
        """The narrowest panel with rows of ``pitch``; with ``numbers``, one that also shows the matrices' numbers
        (side by side, or one above another where the rows are tall enough)."""
        if not numbers:
            return widths.least()
        rows, tall = (self.scenario.n_tokens + 1) * pitch, self._matrices_tall(font)
        side = widths.with_matrices(False) if tall <= rows else float("inf")
        stacked = widths.labels + GAP_LEAST + widths.stacked + 2 * PANEL_PAD if 3 * tall + 0.5 <= rows \
            else float("inf")
        return max(widths.least(), min(side, stacked))

    def _matrices_tall(self, font: float) -> float:
        """The height of W_Q, W_K or W_V with its brackets (its name over it not counted)."""
        return self.scenario.d_in * max(text_height(font) + 0.16, 0.42) + 0.1

    def _place(self, font: float, widths: _Widths, place: str, shape: str) -> _Layout:
        """Columns spread to fill their room (the matrices beside X where the frame has room for them), rows from
        the top; everything centred in what is left."""
        pitch, beside = self._pitch(place, shape, font), place == "beside"
        aside = widths.z[shape] + 0.35 if beside else 0.0
        room = 2 * HALF_WIDTH - aside
        width = max(widths.table(GAP_LEAST), widths.least(), min(room, TABLE_WIDTH))
        for beside_x in (True, False):  # widened for the matrices' numbers, where they fit the frame
            if widths.with_matrices(beside_x) <= room:
                width = max(width, widths.with_matrices(beside_x))
                break
        gap = min(GAP_MOST, max(GAP_LEAST, (width - widths.table(0.0)) / 4))
        left = -(width + aside) / 2
        label_right = left + PANEL_PAD + widths.labels
        x = label_right + gap + widths.slot
        rights = {}
        for f in FIELDS:
            x += gap + widths.columns[f]
            rights[f] = x
        n = self.scenario.n_tokens
        block = HEAD_BAND + Q_GAP + (n + 1) * pitch + PANEL_PAD + (0.0 if beside else Z_GAP
                                                                 + self._box_height(shape, font))
        top = self._ceiling() - max(0.0, (self._ceiling() - BOTTOM - block) / 2)
        y_query = top - HEAD_BAND - pitch / 2
        ys = [y_query - Q_GAP - (j + 1) * pitch for j in range(n)]
        return _Layout(font, widths.limit, pitch, place, shape, left, left + width, label_right, widths.cell,
                       label_right + gap, rights, ys, y_query, top - HEAD_BAND / 2, ys[-1] - pitch / 2 - PANEL_PAD / 2)

    # -- what every head shares: the row labels, X, the columns' headers -------------------------------
    def _numbers(self, source: str, field_name: str, rows: list[int], columns: int, *, left: float, cell: float,
                 ys: list[float], font: float, color: str) -> VGroup:
        """Rows of ``source.field``'s numbers, right-aligned in cells of width ``cell`` from ``left``, row
        ``rows[i]`` at ``ys[i]`` (a VGroup per row)."""
        made = VGroup()
        for i, y in zip(rows, ys, strict=True):
            row = VGroup(*(self.number(source, field_name, i, m, size=font, color=color) for m in range(columns)))
            for m, number in enumerate(row):
                number.align_to((left + (m + 1) * cell - CELL_GAP * font / 26 / 2, 0, 0), RIGHT)
                stand(number, row_baseline(y, font))
            made.add(row)
        return made

    def _column(self, source: str, field_name: str, layout: _Layout) -> VGroup:
        """The query's row of ``field_name`` as a column, a number per key, right-aligned at its column's edge."""
        q, right = self.scenario.query, layout.columns[field_name]
        return VGroup(*(stand(self.number(source, field_name, q, j, size=layout.font, color=COLOURS[field_name])
                              .align_to((right, 0, 0), RIGHT), row_baseline(y, layout.font))
                        for j, y in enumerate(layout.ys)))

    def _board(self, layout: _Layout) -> _Board:
        """The labels (a row per key, q's above), X in the vectors' place, and the headers every head shares."""
        font, n = layout.font, self.scenario.n_tokens
        q = self.scenario.query
        labels = VGroup(*(self.label("{} {}", position(j), TokenPart(t, layout.limit), size=font,
                                     color=HIGHLIGHT if j == q else KEY) for j, t in enumerate(self.scenario.tokens)))
        for label, y in zip(labels, layout.ys, strict=True):
            stand(label.align_to((layout.label_right, 0, 0), RIGHT), row_baseline(y, font))
        query = self.label("q{}", query_number(), size=font, color=QUERY)
        stand(query.align_to((layout.label_right, 0, 0), RIGHT), row_baseline(layout.y_query, font))
        x_grid = self._x(layout)
        headers: dict[str, VMobject] = {"X": self._tex("X", EMBEDDING, font), "K": self._tex("K = X W_K", KEY, font),
                   "V": self._tex("V = X W_V", VALUE, font)}
        line = row_baseline(layout.y_head, font)  # the headers' baseline
        stand(headers["X"].set_x(x_grid.get_x()), line)
        if not isinstance(x_grid[0], VGroup):  # X by its shape, which names it
            headers["X"] = VGroup()
        slot = layout.vector_left + max(self.scenario.d_k, self.scenario.d_v) * layout.cell / 2
        for name in "KV":
            stand(headers[name].set_x(slot), line)
        headers.update(self._field_headers(layout))
        rows = Rectangle(width=layout.right - layout.label_right, height=n * layout.pitch, stroke_width=0,
                         fill_opacity=0).move_to(((layout.label_right + layout.right) / 2,
                                                  (layout.ys[0] + layout.ys[-1]) / 2, 0))
        return _Board(labels, query, x_grid, headers, rows)

    def _x(self, layout: _Layout) -> VGroup:
        """X: its numbers in the tokens' rows where they fit the panel, else its shape (its numbers are in the
        walkthrough)."""
        font, n, d_in = layout.font, self.scenario.n_tokens, self.scenario.d_in
        cell = self._x_cell(font)
        if d_in * cell <= layout.right - PANEL_PAD - layout.vector_left:
            return self._numbers("trace", "embeddings", list(range(n)), d_in, left=layout.vector_left, cell=cell,
                                 ys=layout.ys, font=font, color=EMBEDDING)
        shape = VGroup(self.label("X: {} × {}", size("n_tokens"), size("d_in"), size=font, color=EMBEDDING),
                       text("the same for every head", size=SMALLEST_SIZE, color=MUTED),
                       text(SHAPES_NOTE, size=SMALLEST_SIZE, color=MUTED)).arrange(DOWN, buff=0.15, aligned_edge=LEFT)
        return shape.move_to((layout.vector_left + shape.width / 2, (layout.ys[0] + layout.ys[-1]) / 2, 0))

    def _tex(self, content: str, color: str, font: float) -> MathTex:
        """Our own formula (never a token) over a column: ``K = X W_K``."""
        # W_{Q} as MultiHead writes it: one TeX file for both scenes (each distinct formula is a latex run)
        tex = content.replace("W_Q", "W_{Q}").replace("W_K", "W_{K}").replace("W_V", "W_{V}")
        return drop_svg_paths(MathTex(tex, font_size=font + 6, color=color))

    def _field_headers(self, layout: _Layout) -> dict[str, VMobject]:
        """Over the scores, scaled scores and weights: q5 · k, ÷ √d_k (or "unscaled"), softmax."""
        font = layout.font
        made: dict[str, VMobject] = {
            "scores": self.label("q{} · k", query_number(), size=font, color=MUTED),
            "scaled_scores": self.label("÷ √{}", size("d_k"), size=font, color=MUTED) if self.trace.scaled
            else text("unscaled", size=font, color=MUTED),
            "weights": text("softmax", size=font, color=WEIGHT),
        }
        for f, header in made.items():
            stand(header.align_to((layout.columns[f], 0, 0), RIGHT), row_baseline(layout.y_head, font))
        return made

    # -- one head's drawing ---------------------------------------------------------------------------
    def _head(self, k: int, layout: _Layout) -> _Head:
        """Head ``k``'s panel (its frame and title), matrices, numbers of the table and box of z."""
        source, q, n, font = f"head{k + 1}", self.scenario.query, self.scenario.n_tokens, layout.font
        top = layout.y_head + HEAD_BAND / 2
        panel = RoundedRectangle(width=layout.right - layout.left, height=top - layout.bottom, corner_radius=0.12,
                                 stroke_color=MUTED, stroke_width=2, stroke_opacity=0.7)
        panel.move_to(((layout.left + layout.right) / 2, (top + layout.bottom) / 2, 0))
        title = self.label("head {}", position(k, "head"), size=max(font, 24.0), color=INK)
        stand(title.set_x(layout.left + PANEL_PAD + title.width / 2), row_baseline(layout.y_head, font))
        left, cell, rows = layout.vector_left, layout.cell, list(range(n))
        query = VGroup(*self._numbers(source, "queries", [q], self.scenario.d_k, left=left, cell=cell,
                                      ys=[layout.y_query], font=font, color=QUERY)[0])
        keys = self._numbers(source, "keys", rows, self.scenario.d_k, left=left, cell=cell, ys=layout.ys, font=font,
                             color=KEY)
        values = self._numbers(source, "values", rows, self.scenario.d_v, left=left, cell=cell, ys=layout.ys,
                               font=font, color=VALUE)
        columns = {f: self._column(source, f, layout) for f in FIELDS}
        shown = [self.text_for(value(source, "weights", q, j)) for j in range(n)]
        weights = [self.value_of(value(source, "weights", q, j)) for j in range(n)]
        best = max(range(n), key=lambda j: weights[j])
        tops = [j for j in range(n) if shown[j] == shown[best]]
        outline = VGroup(*(SurroundingRectangle(columns["weights"][j], color=WEIGHT, buff=0.06, stroke_width=3)
                           for j in tops))
        drawn = _Head(k, panel, title, self._matrices(k, layout), query, keys, values, columns, tops, outline)
        drawn.z = self._z_box(drawn, layout)
        return drawn

    def _z_box(self, head: _Head, layout: _Layout) -> VGroup:
        """"head k:  z5 = (…)" in a frame (its name over z, or z as a column, as the layout says): under the table
        (head 1 left, head 2 right), or beside it, one above the other."""
        font, count, q = layout.font, min(SHOWN_HEADS, self.scenario.n_heads), self.scenario.query
        name = self.label("head {}:", position(head.head, "head"), size=font, color=MUTED)
        if layout.shape == "column":
            numbers = VGroup(*(self.number(head.source, "context", q, m, size=font, color=CONTEXT)
                               for m in range(self.scenario.d_v))).arrange(DOWN, buff=0.12, aligned_edge=RIGHT)
            z: VMobject = VGroup(self.label("z{} =", query_number(), size=font, color=CONTEXT),
                                 VGroup(Brackets(numbers, buff=0.08, serif=0.08), numbers)).arrange(RIGHT, buff=0.15)
        else:
            z = vector_line(self, "z", head.source, "context", q, size=font, color=CONTEXT)
        content = VGroup(name, z).arrange(RIGHT, buff=0.25) if layout.shape == "line" else \
            VGroup(name, z).arrange(DOWN, buff=0.12, aligned_edge=LEFT)
        frame = RoundedRectangle(width=content.width + Z_PAD, height=content.height + 0.3, corner_radius=0.1,
                                 stroke_color=CONTEXT, stroke_width=2).move_to(content)
        box = VGroup(frame, content)
        widths = [self._box_width(k, font, layout.shape) for k in range(count)]
        if layout.beside:
            x = layout.right + 0.35 + frame.width / 2  # the boxes' left edges in line
            y = (layout.ys[0] + layout.ys[-1]) / 2 + (count - 1 - 2 * head.head) * (frame.height + Z_APART) / 2
        else:
            total = sum(widths) + Z_APART * (count - 1)
            x = -total / 2 + sum(widths[:head.head]) + Z_APART * head.head + widths[head.head] / 2
            y = layout.bottom - Z_GAP - self._box_height(layout.shape, font) / 2
        return box.move_to((x, y, 0))

    def _box_width(self, k: int, font: float, shape: str) -> float:
        """The width of head ``k``'s box of z in ``shape`` (measured, nothing made)."""
        source, q = f"head{k + 1}", self.scenario.query
        name = text_width(f"head {k + 1}:", font)
        if shape == "column":
            numbers = widest([self.text_for(value(source, "context", q, m)) for m in range(self.scenario.d_v)], font)
            z = text_width(f"z{q + 1} =", font) + 0.15 + numbers + 0.3
        else:
            z = vector_width(self, "z", source, "context", q, font)
        return (name + 0.25 + z if shape == "line" else max(name, z)) + Z_PAD

    def _x_cell(self, font: float) -> float:
        n, d_in = self.scenario.n_tokens, self.scenario.d_in
        texts = [self.text_for(value("trace", "embeddings", i, m)) for i in range(n) for m in range(d_in)]
        return widest(texts, font) + CELL_GAP * font / 26

    def _matrices(self, k: int, layout: _Layout) -> VGroup:
        """Head ``k``'s W_Q, W_K, W_V side by side (names over them): beside X where they fit, else in X's place;
        else one above another (names left of them); else by their shapes, their numbers left to the walkthrough.
        ``matrices.beside_x`` says whether X stays beside them."""
        source, font = f"head{k + 1}", layout.font
        right, top, bottom = layout.right - PANEL_PAD, layout.y_query + layout.pitch / 2, layout.bottom + PANEL_PAD
        after_x = self.board.x_grid.get_right()[0] + X_GAP
        widths, tall = self._matrix_widths(font), self._matrices_tall(font)
        start = layout.label_right + GAP_LEAST  # in X's place, they may reach into the gap before the vectors' slot
        room = right - start
        block: VGroup
        if sum(widths) + 0.8 <= room + 1e-6 and tall <= top - bottom:  # the panel may be just that wide
            block = self._matrix_grids(source, font, beside=True)
        elif max(widths) + 1.0 <= room and 3 * tall + 0.5 <= top - bottom:
            block = self._matrix_grids(source, font, beside=False)
        else:
            block = self._shapes(layout)
        beside_x = block.width <= right - after_x
        left = after_x if beside_x else start
        ceiling = top + 0.3  # the names may reach up to the headers' line
        middle = min((ceiling + bottom) / 2, ceiling - block.height / 2)  # in the middle of the rows' room
        block.shift(RIGHT * (left - block.get_left()[0]) + UP * (middle - block.get_center()[1]))
        block.beside_x = beside_x  # type: ignore[attr-defined]
        return block

    def _matrix_grids(self, source: str, font: float, *, beside: bool) -> VGroup:
        """W_Q, W_K, W_V with their names, side by side or one above another."""
        grids = [VGroup(self._tex(f"W_{name}", colour, font), self.grid(source, f, color=colour, size=font,
                                                                         h_buff=0.22))
                 for name, f, colour in zip("QKV", WEIGHTS, (QUERY, KEY, VALUE), strict=True)]
        for name, grid in grids:
            name.next_to(grid, UP if beside else LEFT, buff=0.12 if beside else 0.2)
        return VGroup(*grids).arrange(RIGHT if beside else DOWN, buff=0.4 if beside else 0.25,
                                      aligned_edge=UP if beside else RIGHT)

    def _matrix_widths(self, font: float) -> list[float]:
        """The width of each of W_Q, W_K, W_V with its brackets, its cells as wide as any shown head's widest number."""
        counts = (self.scenario.d_k, self.scenario.d_k, self.scenario.d_v)
        texts = [self.text_for(value(head, f, i, m)) for head in self._heads() for f, count in zip(WEIGHTS, counts,
                 strict=True) for i in range(self.scenario.d_in) for m in range(count)]
        cell = widest(texts, font) + 0.22
        return [count * cell + 0.3 for count in counts]

    def _shapes(self, layout: _Layout) -> VGroup:
        """The matrices by their shapes, where their numbers do not fit."""
        return VGroup(
            self.label("W_Q, W_K: {} × {}", size("d_in"), size("d_k"), size=SMALLEST_SIZE, color=INK),
            self.label("W_V: {} × {}", size("d_in"), size("d_v"), size=SMALLEST_SIZE, color=INK),
            text(SHAPES_NOTE, size=SMALLEST_SIZE, color=MUTED),
        ).arrange(DOWN, buff=0.15, aligned_edge=LEFT)

    def _register(self, board: _Board, drawn: list[_Head]) -> None:
        """Where numbers stand: X's in their tokens' rows, the table's in their keys' rows, every head's in its
        own panel, and each z in its own head's box."""
        self.rows("token", dict(enumerate(board.labels)), board.x_grid)
        self.rows("key", dict(enumerate(board.labels)), board.rows)
        self.columns("head", {h.head: h.panel for h in drawn}, *(h.panel for h in drawn))
        self._register_fields(board, drawn)
        boxes = self.rows if drawn[0].z.get_y() != drawn[-1].z.get_y() else self.columns  # one above another, or not
        boxes("head", {h.head: h.z[0] for h in drawn}, *(h.z[0] for h in drawn))

    def _register_fields(self, board: _Board, drawn: list[_Head]) -> None:
        """Each number of the table under the header of its own quantity (the headers every head shares, placed by
        the columns' places): X, K and V (q under either) in the vectors' slot, then the scores, the scaled scores
        and the weights. A header counts while it is on screen: the matrices, where the columns will stand, are no
        column's."""
        headers = board.headers
        anchors: dict[str, VMobject] = {"trace.embeddings": headers["X"]}
        for head in drawn:
            anchors |= {f"{head.source}.keys": headers["K"], f"{head.source}.values": headers["V"],
                        f"{head.source}.queries": VGroup(headers["K"], headers["V"]),
                        **{f"{head.source}.{f}": headers[f] for f in FIELDS}}
        self.fields("column", anchors, board.rows, *(head.query for head in drawn))

    # -- the beats ---------------------------------------------------------------------------------
    def _looks(self, head: _Head) -> str:
        return looks_most(self, head.source, head.tops)

    def _full(self, board: _Board, head: _Head) -> None:
        """Head 1: X, its matrices, q and K, the scores, ÷ √d_k, the weights, V and z: a beat each."""
        q = query_number()
        self.beat("Every head reads the same X: a row per token, its embedding.",
                  fade_in(head.panel, head.title, board.labels, board.headers["X"], board.x_grid), run_time=1.4,
                  wait=1.0)
        self.beat(f"Head {self.cite(position(head.head, 'head'))} has its own W_Q, W_K and W_V.",
                  *self._matrices_in(board, head), run_time=1.4, wait=1.4)
        self.beat(f"It projects X: the query q{self.cite(q)} = x{self.cite(q)} W_Q, and a key k_j = x_j W_K for "
                  "every token.", *self._projected(board, head), run_time=1.8, wait=1.0)
        self.beat(f"Each key's score is q{self.cite(q)} · k_j.", *self._column_in(board, head, "scores"),
                  run_time=1.4, wait=1.0)
        said = (f"Divided by √{self.cite(size('d_k'))}, the key size, to keep the scores from growing with it."
                if self.trace.scaled else "This head is unscaled: the scores pass on as they are.")
        self.beat(said, *self._column_in(board, head, "scaled_scores"), run_time=1.4, wait=1.0)
        self.beat(f"The softmax turns them into weights: head {self.cite(position(head.head, 'head'))} looks most at "
                  f"{self._looks(head)}.", *self._column_in(board, head, "weights"),
                  FadeIn(head.outline), run_time=1.4, wait=1.4)
        self._mixed(board, head, f"Its values V = X W_V, weighted and added up, give the z{self.cite(q)} of head "
                                 f"{self.cite(position(head.head, 'head'))} for "
                                 f"{self.quote(self.scenario.query, 'query')}.")

    def _matrices_in(self, board: _Board, head: _Head) -> list[Animation]:
        """The head's matrices arrive beside X (X stays, or comes back, beside them), or in X's place."""
        beside_x = bool(getattr(head.matrices, "beside_x", False))
        x = VGroup(board.x_grid, board.headers["X"])
        # the matrices' rows are the embedding's dimensions, not the tokens: the tokens' labels step back
        moves: list[Animation] = [FadeIn(head.matrices, shift=LEFT * 0.2)]
        if board.labels_dim == beside_x:  # only a change is animated: an animated label is redrawn every frame
            moves.append(board.labels.animate.set_opacity(1.0 if beside_x else DIM).build())
            board.labels_dim = not beside_x
        if beside_x and not board.x_shown:
            moves.append(fade_in(x))
        elif not beside_x and board.x_shown:
            moves.append(fade_out(x))
        board.x_shown = beside_x
        return moves

    def _projected(self, board: _Board, head: _Head) -> list[Animation]:
        """X and the matrices make way for q (out of W_Q) and the keys (out of W_K)."""
        grids = [part for part in head.matrices if isinstance(part, VGroup) and len(part) == 2
                 and isinstance(part[1], NumberGrid)]
        out: list[Animation] = [board.labels.animate.set_opacity(1.0).build()] if board.labels_dim else []
        board.labels_dim = False
        if board.x_shown:
            out.append(fade_out(board.x_grid, board.headers["X"]))
            board.x_shown = False
        if grids:  # q and K come out of W_Q and W_K: their numbers turn into them (no copy drawn besides)
            rest = [part for part in head.matrices if part not in grids[:2]] + [grids[0][0], grids[1][0]]
            out += [fade_out(*rest), FadeTransform(grids[0][1], head.query), FadeTransform(grids[1][1], head.keys)]
        else:
            out += [FadeOut(head.matrices), FadeIn(head.query, shift=RIGHT * 0.2), FadeIn(head.keys, shift=RIGHT * 0.2)]
        return [*out, fade_in(board.query, board.headers["K"])]

    def _column_in(self, board: _Board, head: _Head, field_name: str) -> list[Animation]:
        """A column of the table arrives, row by row, under its header."""
        return [FadeIn(board.headers[field_name], shift=DOWN * 0.1),
                LaggedStart(*(FadeIn(number, shift=RIGHT * 0.15) for number in head.columns[field_name]),
                            lag_ratio=0.4 / max(1, self.scenario.n_tokens) * 4)]

    def _mixed(self, board: _Board, head: _Head, said: str) -> None:
        """The keys make way for the values; the weights and values fly into the head's box of z."""
        self.beat(said, fade_out(head.keys, board.headers["K"]), fade_in(head.values, board.headers["V"]),
                  fly_into(head.z, *head.columns["weights"], *head.values), run_time=1.6, wait=1.8)

    def _short(self, board: _Board, before: _Head, head: _Head) -> None:
        """Head 2, the viewer having seen the steps once: its matrices, then its whole table, then its z."""
        gone = VGroup(before.query, before.values, *before.columns.values(), before.outline, board.query,
                      board.headers["V"], *(board.headers[f] for f in FIELDS))
        self.beat(f"Head {self.cite(position(head.head, 'head'))} takes the same steps with its own W_Q, W_K and W_V.",
                  fade_out(gone), ReplacementTransform(before.panel, head.panel),
                  ReplacementTransform(before.title, head.title), *self._matrices_in(board, head), run_time=1.5,
                  wait=1.2)
        table = [*self._projected(board, head)]
        for f in FIELDS:
            table += self._column_in(board, head, f)
        self.beat(f"Its own query, keys, scores and weights: head {self.cite(position(head.head, 'head'))} looks "
                  f"most at {self._looks(head)}.", *table, FadeIn(head.outline), run_time=1.6, wait=2.2)
        self._mixed(board, head, f"Its own values give its own z{self.cite(query_number())}.")

    def _side_by_side(self, drawn: list[_Head]) -> None:
        """The heads' z side by side (more heads: said to take the same steps); one head: its z is the output."""
        q = self.cite(query_number())
        lit = [head.z[0].animate.set_stroke(width=4) for head in drawn]
        if len(drawn) == 1:
            self.beat(f"With one head, z{q} is the output: there is nothing to join.", *lit, run_time=1.0, wait=2.0)
            return
        said = f"Two heads, two z{q} side by side, ready to be joined."
        extra: list[Animation] = []
        if self.scenario.n_heads > SHOWN_HEADS:
            said += (f" Heads {self.cite(position(SHOWN_HEADS, 'head'))} to {self.cite(size('n_heads'))} take the "
                     "same steps, each with its own matrices.")
            note = self.label("heads {}–{}: the same steps, with their own matrices", position(SHOWN_HEADS, "head"),
                              size("n_heads"), size=SMALLEST_SIZE, color=MUTED)
            note.next_to(self.heading, DOWN, buff=0.1, aligned_edge=LEFT)
            note.is_furniture = True  # type: ignore[union-attr]
            extra.append(FadeIn(note))
        self.beat(said, *lit, *extra, run_time=1.2, wait=2.2)
