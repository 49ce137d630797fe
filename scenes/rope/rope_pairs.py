"""Scene 2 of the rope lecture: RoPE turns a query pair by pair, each pair by position × θ_i.

The query of the lecture's token as its d_k numbers in a row, a column per dimension, grouped in the
paper's pairs (dimensions 2i and 2i+1, counted from 1 on screen). Under each pair its frequency θ_i
(fast first, slow last), then the angle m·θ_i at the token's position m (from 0, as the paper's m),
then the pair turned, (a cos φ − b sin φ, a sin φ + b cos φ). The last frame keeps the table, the rule
of a turn, and a note: keys turn the same way, values never, and the "rotate half" layout pairs
dimension i with i + d_k/2 instead, the same scores up to a fixed reordering of the dimensions.
"""

from __future__ import annotations

from collections.abc import Sequence

from manim import DOWN, LEFT, RIGHT, UP, Brace, FadeIn, LaggedStart, MathTex, Rectangle, VGroup, VMobject

from attention_math import rope_attention
from scenes.base import READING_PACE
from scenes.facts import TokenPart, position, value
from scenes.kit.heatmap import text_width
from scenes.kit.layout import BOTTOM, TOP
from scenes.kit.palette import INK, KEY, MUTED, QUERY
from scenes.kit.text import text
from scenes.rope.turning import Turning

__all__ = ["RopePairs"]

SIZE = 30  # the table's numbers and labels
COLUMN = 1.45  # the width of a dimension's column, while its numbers leave TIGHTEST between them
TIGHTEST = 0.2
COLUMN_GAP = 0.4  # between the widest numbers, in the columns made wider for them
PAIR_GAP = 0.45  # between two pairs
ROW = 0.7  # between the table's rows
LABELS = 3.0  # the row labels' column
ROWS = ("query", "theta", "angle", "turned")
QUANTITIES = {"query": "queries", "theta": "frequencies", "angle": "angles", "turned": "rotated_queries"}
"""The field of ``rope`` each row holds."""


class RopePairs(Turning):
    """The query of the lecture's token, pair by pair: θ_i, the angle m·θ_i, the pair turned."""

    reading_pace = READING_PACE

    table: dict[str, VGroup]  # each row of numbers (the geometry tests look at it)
    braces: VGroup  # a brace per pair, over its two columns
    columns_x: list[float]  # the centre of each dimension's column

    def construct(self) -> None:
        one = self.scenario.heads[0] if self.scenario.w_out is not None else self.scenario
        rope = rope_attention(one.embeddings, one.w_query, one.w_key, one.w_value, scaled=self.scenario.scaled)
        self.add_source("rope", rope, self.scenario.precision)
        self.add_source("rope_whole", rope, 0)  # positions are whole numbers
        self.header("RoPE turns a query pair by pair", "query", "key")
        self._layout()
        self._pairs()
        self._frequencies()
        self._angles()
        self._turned()
        self._note()

    # -- layout -------------------------------------------------------------------------------------------
    def _layout(self) -> None:
        """Columns (a gap between pairs), rows; the bands the numbers stand in."""
        d_k, q = self.scenario.d_k, self.scenario.query
        widest = max(text_width(self.text_for(value("rope", field, q, c)), SIZE)
                     for field in ("queries", "rotated_queries") for c in range(d_k))
        # 4 decimals of a large query need more than 1.45 (−1.8501 −0.0831 ran into each other)
        self.column = column = COLUMN if widest + TIGHTEST <= COLUMN else widest + COLUMN_GAP
        width = LABELS + d_k * column + (d_k // 2 - 1) * PAIR_GAP
        left = -width / 2 + LABELS
        self.columns_x = [left + (c + 0.5) * column + (c // 2) * PAIR_GAP for c in range(d_k)]
        top = TOP - 1.4
        self.rows_y = {name: top - k * ROW for k, name in enumerate(ROWS)}
        height = ROW * len(ROWS)
        middle = top - (len(ROWS) - 1) * ROW / 2

        def extent(x: float, w: float, y: float, h: float) -> Rectangle:
            return Rectangle(width=w, height=h, stroke_width=0, fill_opacity=0).move_to((x, y, 0))

        dims = {c: extent(x, column, middle, height) for c, x in enumerate(self.columns_x)}
        pairs = {i: extent((self.columns_x[2 * i] + self.columns_x[2 * i + 1]) / 2, 2 * column, middle, height)
                 for i in range(d_k // 2)}
        region = [*dims.values()]
        self.add(*region, *pairs.values())  # they draw nothing: the bands' marks, on screen for the checks
        self.columns("d_k", dims, *region)
        self.columns("pair", pairs, *region)
        query_rows = (self.rows_y["query"] + self.rows_y["turned"]) / 2
        rows = extent(0, 1.0, query_rows, self.rows_y["query"] - self.rows_y["turned"] + ROW * 0.9)
        self.add(rows)
        self.rows("query", {q: rows}, *region)
        # the angle row: its numbers, and the position m written in its label (left of the columns)
        row = extent(0, 13.0, self.rows_y["angle"], ROW * 0.9)
        self.add(row)
        self.rows("token", {q: row}, row)
        # each row holds its own quantity: the query, θ_i, the angles (and m, in their label), the turned query
        marks = {name: extent(0, width, y, ROW * 0.9) for name, y in self.rows_y.items()}
        self.fields("row", {**{f"rope.{field}": marks[name] for name, field in QUANTITIES.items()},
                            "rope_whole.positions": marks["angle"]}, *region)

    def _row(self, name: str, numbers: Sequence[VMobject], xs: Sequence[float]) -> VGroup:
        for number, x in zip(numbers, xs, strict=True):
            number.move_to((x, self.rows_y[name], 0))
        return VGroup(*numbers)

    def _label(self, content: VMobject, name: str) -> VMobject:
        return content.move_to((0, self.rows_y[name], 0)).align_to((self.columns_x[0] - self.column / 2 - 0.3, 0, 0),
                                                                     RIGHT)

    def _pair_xs(self) -> list[float]:
        return [(self.columns_x[2 * i] + self.columns_x[2 * i + 1]) / 2 for i in range(self.scenario.d_k // 2)]

    # -- the beats ---------------------------------------------------------------------------------------
    def _pairs(self) -> None:
        """The query's numbers, a column per dimension, a brace per pair."""
        q, d_k, token = self.scenario.query, self.scenario.d_k, self.scenario.query_token
        heads = VGroup(*(self.label("{}", position(c, "d_k"), size=SIZE - 4, color=MUTED).move_to(
            (x, self.rows_y["query"] + 0.55, 0)) for c, x in enumerate(self.columns_x)))
        dimension = text("dimension", size=SIZE - 6, color=MUTED).move_to((0, heads.get_y(), 0)).align_to(
            (self.columns_x[0] - self.column / 2 - 0.3, 0, 0), RIGHT)
        numbers = [self.number("rope", "queries", q, c, size=SIZE, color=QUERY) for c in range(d_k)]
        self.table = {"query": self._row("query", numbers, self.columns_x)}
        braces = VGroup()
        for i in range(d_k // 2):
            span = VGroup(heads[2 * i], heads[2 * i + 1])
            brace = Brace(span, UP, buff=0.1, color=MUTED)
            name = self.label("pair {}", position(i, "pair"), size=SIZE - 6, color=MUTED).next_to(brace, UP, buff=0.08)
            braces.add(VGroup(brace, name))
        self.braces = braces
        label = self._label(self.label("q of '{}'", TokenPart(token, 8), size=SIZE - 4, color=QUERY), "query")
        self.beat(f"RoPE works pair by pair: the numbers of the query of '{token}', in pairs of neighbouring "
                  "dimensions.",
                  FadeIn(heads, dimension, label),
                  LaggedStart(*(FadeIn(n, shift=DOWN * 0.1) for n in numbers), lag_ratio=0.1),
                  LaggedStart(*(FadeIn(b, shift=DOWN * 0.1) for b in braces), lag_ratio=0.3), run_time=2, wait=1.2)

    def _frequencies(self) -> None:
        """θ_i under each pair: one radian per position for the first, less and less after."""
        n_pairs = self.scenario.d_k // 2
        numbers = [self.number("rope", "frequencies", i, size=SIZE, color=INK) for i in range(n_pairs)]
        self.table["theta"] = self._row("theta", numbers, self._pair_xs())
        label = self._label(MathTex("\\theta_i", font_size=SIZE * 1.5, color=INK), "theta")
        first = self.fmt("rope", "frequencies", 0)
        if n_pairs > 1:
            said = (f"Each pair has its own speed θ_i, slower from pair to pair: {first} radian per position for the "
                    f"first pair, {self.fmt('rope', 'frequencies', n_pairs - 1)} for the last.")
        else:
            said = f"Each pair has its own speed θ_i; with one pair, {first} radian per position."
        self.beat(said, FadeIn(label), *(FadeIn(n, shift=DOWN * 0.1) for n in numbers), run_time=1.5, wait=1.8)

    def _angles(self) -> None:
        """The angle of each pair at the token's position m: m·θ_i."""
        q, n_pairs = self.scenario.query, self.scenario.d_k // 2
        numbers = [self.number("rope", "angles", q, i, size=SIZE, color=INK) for i in range(n_pairs)]
        self.table["angle"] = self._row("angle", numbers, self._pair_xs())
        label = self._label(self.label("m\\,\\theta_i,\\ m = {}", value("rope_whole", "positions", q),
                                       size=SIZE * 1.5, color=INK, tex=True), "angle")
        asking = self.quote(q, "query")
        m = self.cite(value("rope_whole", "positions", q))
        angles = " and ".join(self.fmt("rope", "angles", q, i) for i in range(n_pairs))
        self.beat(f"{asking} stands at position m = {m}, counted from zero: its pairs turn by m·θ_i, {angles} "
                  "radians.", FadeIn(label),
                  *(FadeIn(n, shift=DOWN * 0.1) for n in numbers), run_time=1.5, wait=1.8)

    def _turned(self) -> None:
        """Each pair turned by its angle; the rule of a turn beside the table."""
        q, d_k = self.scenario.query, self.scenario.d_k
        numbers = [self.number("rope", "rotated_queries", q, c, size=SIZE, color=QUERY) for c in range(d_k)]
        self.table["turned"] = self._row("turned", numbers, self.columns_x)
        label = self._label(text("turned", size=SIZE - 4, color=QUERY), "turned")
        self.rule = MathTex("(a, b) \\to (a\\cos\\varphi - b\\sin\\varphi,\\ a\\sin\\varphi + b\\cos\\varphi)",
                            font_size=38, color=INK)
        self.rule.move_to((0, self.rows_y["turned"] - 0.8, 0))
        self.beat("Each pair (a, b) turns by its angle φ: (a cos φ − b sin φ, a sin φ + b cos φ). Its length stays "
                  "the same.", FadeIn(label, self.rule), *(FadeIn(n, shift=DOWN * 0.1) for n in numbers),
                  run_time=1.8, wait=2.0)

    def _note(self) -> None:
        """Keys the same way, values never; the other layout."""
        lines = VGroup(
            text("keys turn the same way, each by its own position; values are not turned", size=22, color=KEY),
            text("“rotate half” (many implementations) pairs the first half of the dimensions with", size=22,
                 color=MUTED),
            text("the second: the same scores, up to a fixed reordering of the dimensions", size=22, color=MUTED),
        ).arrange(DOWN, buff=0.14, aligned_edge=LEFT)
        lines.next_to(self.rule, DOWN, buff=0.35).set_x(0)
        lines.shift(UP * max(0.0, BOTTOM + 0.05 - lines.get_bottom()[1]))
        self.notes = lines
        self.beat("Keys turn the same way, each by its own position; values never turn. Many implementations pair "
                  "the first half's dimensions with the second half's instead: the same scores, up to a fixed "
                  "reordering of the dimensions.",
                  LaggedStart(*(FadeIn(line, shift=UP * 0.1) for line in lines), lag_ratio=0.3), run_time=1.8,
                  wait=3.0)
