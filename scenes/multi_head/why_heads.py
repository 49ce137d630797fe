"""Lecture 8, scene 1: why several heads — one head's weights are one way of reading the sentence.

The query's row of weights in each head, side by side as bars over the same keys, on one scale for
every head (equal weights, equal bars): head 1 looks most at one token, head 2 at another (in the
two-heads preset, for "ball": "dog" and "chased"). What that buys: several relations read at once,
each carried on by its own head. Heads 1 to :data:`MAX_DRAWN` are drawn; a scenario with more says
on screen and in the captions how many it has and that the first four are drawn. A scenario with one
head is drawn as one reading, and says so.
"""

from __future__ import annotations

from dataclasses import dataclass

from manim import (
    DOWN,
    LEFT,
    RIGHT,
    UP,
    FadeIn,
    GrowFromEdge,
    LaggedStart,
    Rectangle,
    RoundedRectangle,
    VGroup,
    VMobject,
)

from attention_math import Scenario
from scenes.base import READING_PACE, ExplainerScene
from scenes.facts import TokenPart, position, query_number, size, value
from scenes.kit.bars import BarRows
from scenes.kit.baselines import row_baseline, stand
from scenes.kit.heatmap import text_height, text_width, widest
from scenes.kit.layout import BOTTOM, HALF_WIDTH, TOP
from scenes.kit.palette import DIM, HIGHLIGHT, INK, KEY, MUTED, WEIGHT
from scenes.kit.stills import StillFirst
from scenes.kit.text import SMALLEST_SIZE, shorten_token, text
from scenes.multi_head.looks import looks_most

__all__ = ["MAX_DRAWN", "WhyHeads"]

MAX_DRAWN = 4  # heads drawn side by side; a scenario with more says how many it has
SIZES = (28, 26, 24, 22, SMALLEST_SIZE)  # type sizes tried for the rows, largest first
LABEL_LIMITS = (10, 8, 6)  # characters kept of a token in the row labels, most first
BARS_MOST, BARS_LEAST = 3.2, 1.2  # the longest bar's length: at most, and at least (a few hundredths stay visible)
LABEL_GAP = 0.3  # between the row labels and the first head's bars
NUMBER_GAP = 0.24  # between a bar's end and its number (clear of the glow around the largest)
COLUMN_GAP = 0.55  # between two heads' columns
TITLE_BAND = 0.55  # the heads' titles over their columns
READING_BAND = 0.6  # under the columns: what each head reads ("→ dog")
PITCH_MOST = 0.9
BOARD_LEAST = 10.6  # the bars grow until the board is this wide (the last frame is a slide), where they can
ONE_HEAD_NOTE = 5.4  # the width of the note beside a single head (its widest line and a gap)


@dataclass(frozen=True)
class _Fit:
    """How the board is drawn: type size, label length, row pitch, the longest bar's length."""

    font: float
    limit: int
    pitch: float
    bars: float


@dataclass
class _Column:
    """One head: its title, its bars and their numbers, the glow on its largest weight, what it reads."""

    head: int  # from 0
    title: VMobject
    chart: BarRows
    numbers: VGroup
    tops: list[int]  # the keys whose weight shows the largest (several: a tie as shown)
    glow: VGroup
    reading: VMobject

    @property
    def source(self) -> str:
        return f"head{self.head + 1}"


class WhyHeads(StillFirst, ExplainerScene):
    """The query's weights in each head as bars over the keys: each head reads the sentence its own way."""

    reading_pace = READING_PACE

    board: list[_Column]  # what the beats draw on, a column per head (the geometry tests look at it)
    labels: VGroup  # the keys' labels

    @classmethod
    def check_scenario(cls, scenario: Scenario) -> Scenario:
        """Any number of heads: the first :data:`MAX_DRAWN` are drawn and the screen says how many there are."""
        return scenario

    def construct(self) -> None:
        self.drawn = [head.trace() for head in self.scenario.heads[:MAX_DRAWN]]
        for k, trace in enumerate(self.drawn):
            self.add_source(f"head{k + 1}", trace, self.scenario.precision)
        self.header("Why several heads")
        fit = self._fit()
        labels = self._labels(fit)
        columns = self.board = [self._column(k, fit, labels) for k in range(len(self.drawn))]
        self.labels = labels
        self._place(labels, columns, fit)
        self._one_reading(labels, columns[0])
        if len(columns) > 1:
            self._other_readings(columns)
        self._several_relations(columns)

    # -- layout from the data ----------------------------------------------------------------------
    def _weight_texts(self) -> list[str]:
        q, n = self.scenario.query, self.scenario.n_tokens
        return [self.text_for(value(f"head{k + 1}", "weights", q, j)) for k in range(len(self.drawn)) for j in range(n)]

    def _label_width(self, limit: int, font: float) -> float:
        n = self.scenario.n_tokens
        return max(text_width(f"{n} " + shorten_token(t, limit), font) for t in self.scenario.tokens)

    def _fit(self) -> _Fit:
        """The largest type at which the rows fit the height with a line of air between them (at the smallest
        type, the pitch there is) and every head's column leaves its bars room; the bars as long as fills the
        board to :data:`BOARD_LEAST`, at most."""
        n, heads = self.scenario.n_tokens, len(self.drawn)
        numbers = widest(self._weight_texts(), 26)
        beside = ONE_HEAD_NOTE if heads == 1 else 0.0
        pitch = min(PITCH_MOST, (TOP - BOTTOM - TITLE_BAND - READING_BAND) / n)
        fit = _Fit(SMALLEST_SIZE, LABEL_LIMITS[-1], pitch, BARS_LEAST)
        for font in SIZES:
            if pitch < text_height(font) + 0.1 and font != SIZES[-1]:
                continue
            for limit in LABEL_LIMITS:
                fixed = (beside + self._label_width(limit, font) + LABEL_GAP  # all but the bars
                         + heads * (NUMBER_GAP + numbers * font / 26) + (heads - 1) * COLUMN_GAP)
                room = (2 * HALF_WIDTH - fixed) / heads
                bars = min(room, max(BARS_MOST * (1.4 if heads == 1 else 1.0), (BOARD_LEAST - fixed) / heads))
                if bars >= BARS_LEAST:
                    return _Fit(font, limit, pitch, bars)
                fit = _Fit(font, limit, pitch, max(bars, 0.6))
        return fit

    def _labels(self, fit: _Fit) -> VGroup:
        """One label per key, "j token", the query's in its own colour."""
        q = self.scenario.query
        return VGroup(*(self.label("{} {}", position(j), TokenPart(t, fit.limit), size=fit.font,
                                   color=HIGHLIGHT if j == q else KEY) for j, t in enumerate(self.scenario.tokens)))

    def _column(self, k: int, fit: _Fit, labels: VGroup) -> _Column:
        """Head ``k``'s bars on the scale every head shares: its largest weight is as long as its share of
        the largest weight of all heads."""
        source, q, n = f"head{k + 1}", self.scenario.query, self.scenario.n_tokens
        weights = [self.value_of(value(source, "weights", q, j)) for j in range(n)]
        largest = max(self.value_of(value(f"head{m + 1}", "weights", q, j)) for m in range(len(self.drawn))
                      for j in range(n))
        chart = BarRows(None, weights, width=fit.bars * max(weights) / largest, pitch=fit.pitch, color=WEIGHT,
                        thickness=min(0.62, 0.5 / fit.pitch))
        numbers = VGroup(*(self.number(source, "weights", q, j, size=fit.font, color=WEIGHT) for j in range(n)))
        title = self.label("head {}", position(k, "head"), size=max(fit.font, 24.0), color=INK)
        shown = [self.text_for(value(source, "weights", q, j)) for j in range(n)]
        best = max(range(n), key=lambda j: weights[j])
        tops = [j for j in range(n) if shown[j] == shown[best]]
        reading = self.label("→ " + ", ".join("{}" for _ in tops),
                             *(TokenPart(self.scenario.tokens[j], fit.limit) for j in tops),
                             size=fit.font, color=INK)
        return _Column(k, title, chart, numbers, tops, VGroup(), reading)

    def _place(self, labels: VGroup, columns: list[_Column], fit: _Fit) -> None:
        """Labels left, a column per head right of them, centred in the frame; bands and plotted bars registered."""
        n = self.scenario.n_tokens
        number_w = max(m.width for c in columns for m in c.numbers)
        column_w = fit.bars + NUMBER_GAP + number_w
        label_w = max(m.width for m in labels)
        beside = ONE_HEAD_NOTE if len(columns) == 1 else 0.0
        width = label_w + LABEL_GAP + len(columns) * column_w + (len(columns) - 1) * COLUMN_GAP + beside
        left = -width / 2
        block = TITLE_BAND + n * fit.pitch + READING_BAND
        top = TOP - max(0.0, (TOP - BOTTOM - block) / 2)
        ys = [top - TITLE_BAND - (j + 0.5) * fit.pitch for j in range(n)]
        for label, y in zip(labels, ys, strict=True):  # on the baseline of the numbers beside its bars
            stand(label.set_x(left + label_w - label.width / 2), row_baseline(y, fit.font))
        extents = {}
        for c in columns:
            x = left + label_w + LABEL_GAP + c.head * (column_w + COLUMN_GAP)
            c.chart.shift(RIGHT * (x - c.chart.zero_line.get_x()) + UP * (ys[0] - c.chart.row_y(0)))
            for j, number in enumerate(c.numbers):
                c.chart.number_spot(j, number, buff=NUMBER_GAP)
                self.plot(c.chart.bars[j], c.chart.axis(j), value(c.source, "weights", self.scenario.query, j),
                          anchor=c.chart.end_side(j))
            c.title.move_to((x + c.title.width / 2, top - TITLE_BAND / 2, 0))
            c.reading.move_to((x + c.reading.width / 2, 0, 0)).align_to((0, ys[-1] - fit.pitch / 2 - 0.15, 0), UP)
            c.glow = self._glow(c)
            self.rows("key", c.chart)  # each number beside its key's bar
            extents[c.head] = Rectangle(width=column_w, height=block, stroke_width=0, fill_opacity=0).move_to(
                (x + column_w / 2, top - block / 2, 0))
        # each head's numbers in its own column (the columns' extents draw nothing: the set is on screen by its titles)
        self.columns("head", extents, *extents.values(), *(c.title for c in columns))
        self.board_right = left + width  # where a single head's note starts (beside = its width)

    @staticmethod
    def _glow(column: _Column) -> VGroup:
        """Outlines around the bars of the largest weight (every bar that shows it: a tie as shown)."""
        return VGroup(*(
            RoundedRectangle(width=bar.width + pad, height=bar.height + pad, corner_radius=0.06, stroke_color=INK,
                             stroke_width=width, stroke_opacity=opacity).move_to(bar)
            for bar in (column.chart.bars[j] for j in column.tops)
            for pad, width, opacity in ((0.08, 3, 0.9), (0.16, 7, 0.25))
        ))

    # -- the beats ---------------------------------------------------------------------------------
    def _looks(self, column: _Column) -> str:
        return looks_most(self, column.source, column.tops)

    def _heading_note(self) -> VMobject:
        """Under the heading: whose weights these are, and (more than :data:`MAX_DRAWN` heads) which are drawn."""
        parts: list[object] = [TokenPart(self.scenario.query_token), query_number()]
        content = "the weights of '{}' (query {}) in each head"
        if self.scenario.n_heads > MAX_DRAWN:
            content += "; heads {}–{} of {} drawn"
            parts += [position(0), position(MAX_DRAWN - 1), size("n_heads")]
        note = self.label(content, *parts, size=SMALLEST_SIZE, color=MUTED)  # type: ignore[arg-type]
        note.next_to(self.heading, DOWN, buff=0.1, aligned_edge=LEFT)
        note.is_furniture = True  # type: ignore[union-attr]
        return note

    def _one_reading(self, labels: VGroup, column: _Column) -> None:
        """Head 1's row: its bars grow over the keys, then its largest weight glows."""
        chart = column.chart
        self.beat(f"One head's weights are one way of reading the sentence: here, the weights of head "
                  f"{self.cite(position(0, 'head'))} for {self.quote(self.scenario.query, 'query')}.",
                  FadeIn(self._heading_note(), labels, column.title, chart.zero_line),
                  LaggedStart(*(GrowFromEdge(bar, LEFT) for bar in chart.bars), lag_ratio=0.08),
                  FadeIn(column.numbers), run_time=1.8, wait=1.0)
        self.beat(f"Head {self.cite(position(0, 'head'))} looks most at {self._looks(column)}.", FadeIn(column.glow),
                  run_time=1.0, wait=1.2)

    def _show(self, column: _Column) -> list[object]:
        chart = column.chart
        return [FadeIn(column.title, chart.zero_line), *(GrowFromEdge(bar, LEFT) for bar in chart.bars),
                FadeIn(column.numbers), FadeIn(column.glow)]

    def _other_readings(self, columns: list[_Column]) -> None:
        """Head 2 beside head 1, then the other drawn heads at once; more than :data:`MAX_DRAWN` said."""
        first, second = columns[0], columns[1]
        agrees = [self.scenario.tokens[j] for j in second.tops] == [self.scenario.tokens[j] for j in first.tops]
        said = (f"Head {self.cite(position(1, 'head'))}, with its own W_Q and W_K, "
                + (f"weighs the tokens its own way, yet it too looks most at {self._looks(second)}." if agrees
                   else f"reads it another way: it looks most at {self._looks(second)}."))
        self.beat(said, *self._show(second), run_time=1.8, wait=1.4)
        rest = columns[2:]
        if not rest:
            return
        parts = []
        for k, column in enumerate(rest):  # "Head 3 looks most at 'lazy' (0.28), head 4 at 'fox' (0.21)."
            head = self.cite(position(column.head))
            parts.append(f"Head {head} looks most at {self._looks(column)}" if k == 0
                         else f"head {head} at {self._looks(column)}")
        said = ", ".join(parts) + "."
        if self.scenario.n_heads > MAX_DRAWN:
            said += (f" This scenario has {self.cite(size('n_heads'))} heads; the first "
                     f"{self.cite(position(MAX_DRAWN - 1))} are drawn.")
        animations = [a for c in rest for a in self._show(c)]
        self.beat(said, *animations, run_time=1.8, wait=1.4)

    def _several_relations(self, columns: list[_Column]) -> None:
        """What several heads buy: each head's reading written under its column, the other bars dimmed."""
        others = [(column, j) for column in columns for j in range(self.scenario.n_tokens) if j not in column.tops]
        dim = [*(column.chart.bars[j].animate.set_fill(opacity=DIM) for column, j in others),
               *(column.numbers[j].animate.set_opacity(0.55) for column, j in others)]
        readings = [FadeIn(column.reading, shift=UP * 0.1) for column in columns]
        if len(columns) == 1:
            note = self._one_head_note()
            self.beat("This scenario has one head: one reading of the sentence. Several heads would read several "
                      "relations at once, each its own way.", *readings, FadeIn(note, shift=LEFT * 0.2), *dim,
                      run_time=1.5, wait=2.0)
            return
        tops = {tuple(self.scenario.tokens[j] for j in column.tops) for column in columns}
        said = ("So the heads read several relations at once, each into its own z; the layer joins them at the end."
                if len(tops) > 1 else
                "Here the heads agree on the top token, not on the rest: each still passes on its own mix of the "
                "tokens, and the layer joins them at the end.")
        self.beat(said, *readings, *dim, run_time=1.5, wait=2.2)

    def _one_head_note(self) -> VGroup:
        """Beside a single head: what one head is, and what several would be."""
        lines = VGroup(
            text("One head:", size=26, color=INK),
            text("one reading of the sentence.", size=24, color=INK),
            text("Several heads read it", size=22, color=MUTED),
            text("in several ways at once.", size=22, color=MUTED),
        ).arrange(DOWN, buff=0.22, aligned_edge=LEFT)
        return lines.move_to((self.board_right - ONE_HEAD_NOTE + 0.4 + lines.width / 2, (TOP + BOTTOM) / 2, 0))
