"""Scene 3 of the masked lecture: the other route — softmax the whole row, zero the future, divide by what is left.

The row the lecture follows as bars, a line per key: the softmax over every key, the later keys
included (the row sums to 1); the later keys' weights set to 0 (what is left sums to less); each
weight divided by that sum (the bars stretch, the row sums to 1 again). Beside them the masked softmax
of the last scene, equal number for number, and why: the full softmax's sum cancels in the division.
"""

from __future__ import annotations

from dataclasses import dataclass

from manim import (
    DOWN,
    LEFT,
    RIGHT,
    UP,
    Animation,
    FadeIn,
    FadeTransform,
    GrowFromEdge,
    LaggedStart,
    MathTex,
    Mobject,
    Rectangle,
    ReplacementTransform,
    VGroup,
    VMobject,
)

from attention_math import renormalised_weights
from scenes.base import READING_PACE, ExplainerScene
from scenes.facts import TokenPart, position, value
from scenes.kit.bars import BarRows
from scenes.kit.heatmap import text_height, text_width, widest
from scenes.kit.layout import BOTTOM, HALF_WIDTH, TOP
from scenes.kit.palette import DIM, INK, KEY, MUTED, QUERY, WEIGHT
from scenes.kit.text import SMALLEST_SIZE, drop_svg_paths, shorten_token, text

__all__ = ["Renormalise"]

STAGES = ("full", "zeroed", "weights")  # the route's three rows of renormalised_weights, in order
SIZES = (28, 26, 24, 22, SMALLEST_SIZE)
BARS_MOST, BARS_WIDE, BARS_LEAST = 5.0, 3.6, 2.4  # the bars' width (the longest bar of the route)
GAP = 0.4  # between the parts of a line: label, bars, number, "=", the masked weight
HEADS_ABOVE, SUM_BELOW = 0.6, 0.6  # from the first row up to the heads, from the last down to the Σ
NOTE_BAND = 0.45  # under the header: the rounding note
PITCH_MOST = 1.6  # between two rows, at most (a few rows spread out)
ROWS_ROOM = TOP - BOTTOM - NOTE_BAND - HEADS_ABOVE - SUM_BELOW - 0.4  # from the first row to the last
FORMULA_SIZES = (40, 34)  # the formula's type: large where the bars keep room


@dataclass
class _Chart:
    """The followed row's bars at each stage of the route, their numbers, the heads over them and the Σ under."""

    charts: dict[str, BarRows]  # one per stage, one scale: each stage's bars end where its numbers say
    numbers: dict[str, VGroup]
    size: float
    pitch: float
    total_y: float  # where the Σ line stands, under the last row
    heads_y: float  # where the heads stand, over the first row
    equals_x: float  # the column of "=" before the masked weights


class Renormalise(ExplainerScene):
    """Softmax over every key, zero the future, divide by the new sum: the masked weights, number for number."""

    draws_decoder = True  # a decoder's head (--model smollm2): its own scores and weights

    reading_pace = READING_PACE

    chart: _Chart  # what the beats draw on (the geometry tests look at it)

    def construct(self) -> None:
        self.add_source("renormalised", renormalised_weights(self.trace.scaled_scores), self.scenario.precision)
        self.add_source("causal", self.scenario.trace(causal=True), self.scenario.precision)
        self.header("The other route: mask after the softmax", "query", "key", "scale", "softmax")
        chart = self.chart = self._chart()
        total = self._full(chart)
        total = self._zero_the_future(chart, total)
        total = self._what_is_left(chart, total)
        self._divide(chart, total)
        self._same_weights(chart)
        self._why(chart)

    # -- layout ---------------------------------------------------------------------------------
    def _row_texts(self, source: str, name: str) -> list[str]:
        r = self.earlier_query
        return [self.text_for(value(source, name, r, j)) for j in range(self.scenario.n_tokens)]

    def _size(self) -> tuple[float, float]:
        """The type and the distance between rows: the largest type whose rows fit the height."""
        n = self.scenario.n_tokens
        # the heads and the Σ clear the zero line, which reaches half a row beyond the first and the last
        pitch = min(PITCH_MOST, ROWS_ROOM / max(n - 1, 1), (ROWS_ROOM + HEADS_ABOVE + SUM_BELOW - 0.6) / n)
        return next((float(size) for size in SIZES if pitch >= text_height(size) + 0.1), float(SMALLEST_SIZE)), pitch

    def _label_texts(self) -> list[str]:
        return [f"k{j + 1} {shorten_token(token, 8)}" for j, token in enumerate(self.scenario.tokens)]

    def _chart(self) -> _Chart:
        """The bars of every stage on one scale, the widest number after them, "=", the masked weight."""
        n, r = self.scenario.n_tokens, self.earlier_query
        size, pitch = self._size()
        numbers = [t for stage in STAGES for t in self._row_texts("renormalised", stage)]
        number_w = widest(numbers + self._row_texts("causal", "weights"), size)
        labels_w = widest(self._label_texts(), size)
        fixed = labels_w + 0.25 + GAP + number_w + GAP + text_width("=", size) + GAP + number_w
        for formula_size in FORMULA_SIZES:  # the largest formula that leaves the bars room
            self.why = self._why_block(size, formula_size)
            room = self.why.width + 2 * GAP
            if 2 * HALF_WIDTH - fixed - room >= BARS_WIDE:
                break
        bars_w = max(BARS_LEAST, min(BARS_MOST, 2 * HALF_WIDTH - fixed - room))
        values = {stage: [self.value_of(value("renormalised", stage, r, j)) for j in range(n)] for stage in STAGES}
        longest = max(max(values["full"]), max(values["weights"]))
        labels = VGroup(*(self.label("k{} {}", position(j), TokenPart(token, 8), size=size,
                                     color=QUERY if j == r else KEY) for j, token in enumerate(self.scenario.tokens)))
        left = -HALF_WIDTH + max(0.0, (2 * HALF_WIDTH - fixed - bars_w - room) / 2)
        above, below = max(HEADS_ABOVE, pitch / 2 + 0.3), max(SUM_BELOW, pitch / 2 + 0.3)
        block = above + (n - 1) * pitch + below + 0.4  # and half a line of text at either end
        top = (TOP - NOTE_BAND + BOTTOM + block) / 2 - above - 0.2
        charts: dict[str, BarRows] = {}
        texts: dict[str, VGroup] = {}
        for stage in STAGES:
            # one unit for every stage (a chart's width is its longest bar's share of the longest of all); the
            # first names the rows, the others line up with it
            chart = BarRows(list(labels) if stage == "full" else None, values[stage],
                            width=bars_w * max(values[stage]) / longest, pitch=pitch, color=WEIGHT,
                            thickness=min(0.62, 0.5 / pitch))
            if stage == "full":
                chart.shift(RIGHT * (left - chart.get_left()[0]) + UP * (top - chart.row_y(0)))
            else:
                first = charts["full"]
                chart.shift(RIGHT * (first.zero_line.get_x() - chart.zero_line.get_x())
                            + UP * (first.row_y(0) - chart.row_y(0)))
            charts[stage] = chart
            texts[stage] = VGroup(*(self.number("renormalised", stage, r, j, size=size, color=WEIGHT)
                                    for j in range(n)))
            for j, number in enumerate(texts[stage]):
                chart.number_spot(j, number)
            for j, bar in enumerate(chart.bars):
                self.plot(bar, chart.axis(j), value("renormalised", stage, r, j), anchor="right")
            self.rows("key", chart)  # each number in its key's row
        equals_x = charts["full"].zero_line.get_x() + bars_w + GAP + number_w + GAP
        self._register_fields(charts, (charts["full"].zero_line.get_x(), equals_x - GAP),
                              (equals_x, equals_x + text_width("=", size) + GAP + number_w))
        bottom = top - (n - 1) * pitch
        return _Chart(charts, texts, size, pitch, bottom - below, top + above, equals_x)

    def _register_fields(self, charts: dict[str, BarRows], route: tuple[float, float],
                         masked: tuple[float, float]) -> None:
        """Each number in its own column, as laid out (marks that draw nothing): the route's (the bars' numbers, a
        stage at a time, and the Σ under them), then the masked softmax's after the "="."""
        marks = [Rectangle(width=right - left, height=0.1, stroke_width=0, fill_opacity=0).move_to(
            ((left + right) / 2, 0, 0)) for left, right in (route, masked)]
        anchors: dict[str, Mobject] = {f"renormalised.{name}": marks[0] for name in (*STAGES, "row_sums")}
        self.fields("column", {**anchors, "causal.weights": marks[1]}, *charts.values(),
                    *(chart.placed for chart in charts.values()))

    def _head(self, chart: _Chart, mob: VMobject) -> VMobject:
        return mob.move_to((0, chart.heads_y, 0)).align_to(chart.charts["full"].zero_line, LEFT)

    def _total(self, chart: _Chart, stage: str) -> VGroup:
        """Σ = the sum of the row at ``stage``, under the bars (the row sums of what is left at "zeroed")."""
        n, r = self.scenario.n_tokens, self.earlier_query
        result = value("renormalised", "row_sums", r) if stage == "zeroed" else \
            value("renormalised", stage, r, reduce="sum")
        sign = self.equals(result, [value("renormalised", stage, r, j) for j in range(n)])
        number = self.number(result.source, result.field, *result.index, reduce=result.reduce, size=chart.size,
                             color=WEIGHT)
        line = VGroup(text(f"Σ {sign}", size=chart.size, color=MUTED), number).arrange(RIGHT, buff=0.14)
        return line.move_to((0, chart.total_y, 0)).align_to(chart.charts["full"].zero_line, LEFT)

    # -- the beats ------------------------------------------------------------------------------
    def _full(self, chart: _Chart) -> VGroup:
        bars, r = chart.charts["full"], self.earlier_query
        head = self._head(chart, text("softmax over every key", size=chart.size, color=MUTED))
        self.route_head = head
        total = self._total(chart, "full")
        self.beat(
            f"Another route to the same weights: first the softmax of the whole row of '{self.scenario.tokens[r]}', "
            "later keys included." + self.said_rounded(),
            FadeIn(bars.labels, bars.zero_line, head), LaggedStart(*(GrowFromEdge(b, LEFT) for b in bars.bars),
                                                                    lag_ratio=0.08),
            LaggedStart(*(FadeIn(t) for t in chart.numbers["full"]), lag_ratio=0.08), FadeIn(total),
            *self._rounding(), run_time=2.0, wait=1.2,
        )
        return total

    def _future(self) -> range:
        return range(self.earlier_query + 1, self.scenario.n_tokens)

    def _zero_the_future(self, chart: _Chart, total: VGroup) -> VGroup:
        """The later keys' weights become 0; their rows dim."""
        full, zeroed = chart.charts["full"], chart.charts["zeroed"]
        token = self.scenario.tokens[self.earlier_query]
        head = self._head(chart, text(f"keys after '{shorten_token(token, 10)}' set to zero", size=chart.size,
                                      color=MUTED))
        future, n = self._future(), self.scenario.n_tokens
        # the past keeps its weights (the same numbers, now the zeroed row's); the future's become 0
        kept = [ReplacementTransform(chart.numbers["full"][j], chart.numbers["zeroed"][j]) for j in range(future[0])]
        self.beat(
            f"Then the keys after {self.quote(self.earlier_query, 'query')} get weight "
            f"{self.fmt('renormalised', 'zeroed', self.earlier_query, future[0])}.",
            FadeTransform(self.route_head, head),
            *(ReplacementTransform(full.bars[j], zeroed.bars[j]) for j in range(n)), *kept,
            *(FadeTransform(chart.numbers["full"][j], chart.numbers["zeroed"][j]) for j in future),
            *(full.labels[j].animate.set_opacity(DIM) for j in future), run_time=1.6, wait=1.0,
        )
        self.route_head = head
        return total

    def _what_is_left(self, chart: _Chart, total: VGroup) -> VGroup:
        """The row's sum is now what the past kept of it."""
        r = self.earlier_query
        left = self._total(chart, "zeroed")
        self.beat(f"What is left adds up to {self.fmt('renormalised', 'row_sums', r)}, no longer one."
                  + self.said_rounded(), FadeTransform(total, left), *self._rounding(), run_time=1.2, wait=1.2)
        return left

    def _divide(self, chart: _Chart, total: VGroup) -> None:
        """Each weight divided by that sum: the bars of the past stretch, the row sums to one again."""
        r = self.earlier_query
        zeroed, weights = chart.charts["zeroed"], chart.charts["weights"]
        head = self._head(chart, self.label("each ÷ {}", value("renormalised", "row_sums", r), size=chart.size,
                                            color=MUTED))
        again = self._total(chart, "weights")
        old_bars, old_numbers = zeroed.bars, chart.numbers["zeroed"]
        self.beat(
            f"Divide each by {self.fmt('renormalised', 'row_sums', r)}: the row adds up to one again."
            + self.said_rounded(),
            FadeTransform(self.route_head, head),
            *(ReplacementTransform(old, new) for old, new in zip(old_bars, weights.bars, strict=True)),
            *(FadeTransform(old, new) for old, new in zip(old_numbers, chart.numbers["weights"], strict=True)),
            FadeTransform(total, again), *self._rounding(), run_time=1.8, wait=1.2,
        )
        self.route_head = head

    def _same_weights(self, chart: _Chart) -> None:
        """The masked softmax's weights beside them: equal, number for number."""
        n, r, size = self.scenario.n_tokens, self.earlier_query, chart.size
        bars = chart.charts["weights"]
        signs, masked = VGroup(), VGroup()
        for j in range(n):
            sign = self.equals(value("causal", "weights", r, j), [value("renormalised", "weights", r, j)])
            y = bars.row_y(j)
            signs.add(text(sign, size=size, color=MUTED).move_to((chart.equals_x, y, 0)))
            number = self.number("causal", "weights", r, j, size=size, color=WEIGHT)
            masked.add(number.next_to(signs[-1], RIGHT, buff=GAP).set_y(y))
        masked_head = text("masked softmax", size=size, color=WEIGHT)
        masked_head.move_to((0, chart.heads_y, 0)).align_to(masked, LEFT)
        if masked_head.get_left()[0] < self.route_head.get_right()[0] + 0.3:
            masked_head.align_to(masked, RIGHT)
        self.rows("key", dict(enumerate(chart.charts["full"].labels)), bars, signs, masked)
        self.masked = VGroup(masked_head, signs, masked)
        self.beat(
            "The masked softmax of the last scene gives the same weights, number for number.",
            FadeIn(masked_head), LaggedStart(*(FadeIn(VGroup(s, m), shift=LEFT * 0.2) for s, m in zip(
                signs, masked, strict=True)), lag_ratio=0.08), run_time=1.6, wait=1.5,
        )

    @staticmethod
    def _why_block(size: float, formula_size: float) -> VGroup:
        """exp(s_j)/Σ_all ÷ Σ_past/Σ_all = exp(s_j)/Σ_past, and in words: the full sum cancels."""
        formula = drop_svg_paths(MathTex(
            r"{e^{s_j} / \Sigma_{\mathrm{all}} \over \Sigma_{\mathrm{past}} / \Sigma_{\mathrm{all}}}",
            r"=", r"{e^{s_j} \over \Sigma_{\mathrm{past}}}", font_size=formula_size, color=INK))
        words = text("the full sum cancels", size=max(min(size - 2, 24.0), SMALLEST_SIZE), color=MUTED)
        return VGroup(formula, words).arrange(DOWN, buff=0.3)

    def _why(self, chart: _Chart) -> None:
        """Why the routes agree: the full softmax's sum divides the weight and what is left alike."""
        block = self.why
        x = min((self.masked.get_right()[0] + HALF_WIDTH) / 2, HALF_WIDTH - block.width / 2)
        block.move_to((x, (TOP + BOTTOM) / 2, 0))
        self.beat("Why: the full softmax's sum divides the weight and what is left alike, so it cancels.",
                  FadeIn(block, shift=UP * 0.2), run_time=1.5, wait=2.0)

    def _rounding(self) -> list[Animation]:
        """The rounding note, the first time a ``≈`` is written."""
        if not self.rounding_shows or getattr(self, "_noted", False):
            return []
        self._noted = True
        return [FadeIn(self.rounding_note())]
