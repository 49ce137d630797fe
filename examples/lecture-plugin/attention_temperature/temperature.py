"""The temperature lecture's one scene: the query's weights at τ = 0.5, 1 and 2, a column of bars each.

Dividing the scaled scores by τ before the softmax keeps their order and changes how far apart they are:
τ = 0.5 doubles the gaps (the top key's weight grows), τ = 2 halves them (the weights flatten toward 1/n).
Every number is a fact of the source ``tempered`` (:func:`attention_temperature.tempering.temper`); each
column is a band of its temperature, each row a band of its key.
"""

from __future__ import annotations

from dataclasses import dataclass

from manim import DOWN, LEFT, RIGHT, UP, FadeIn, GrowFromEdge, LaggedStart, Rectangle, VGroup, VMobject

from attention_math import Scenario
from attention_temperature.tempering import Tempered, temper
from scenes.base import READING_PACE, ExplainerScene
from scenes.facts import TokenPart, position, query_number, value
from scenes.kit.bars import BarRows
from scenes.kit.baselines import row_baseline, stand
from scenes.kit.heatmap import text_height, widest
from scenes.kit.layout import BOTTOM, HALF_WIDTH, TOP
from scenes.kit.palette import HIGHLIGHT, INK, KEY, MUTED, WEIGHT
from scenes.kit.stills import StillFirst
from scenes.kit.text import SMALLEST_SIZE

__all__ = ["Temperature"]

SIZES = (32, 28, 26, 24, 22, SMALLEST_SIZE)  # type sizes tried for the rows, largest first
TITLE_BAND, NOTE_BAND = 0.6, 0.7  # the columns' titles over them; the summary under them
COLUMN_GAP, LABEL_GAP, NUMBER_GAP = 0.5, 0.3, 0.18
LABEL_LIMIT = 8  # characters kept of a token


@dataclass
class _Column:
    """One temperature: its title, its bars and the numbers beside them."""

    index: int  # of the temperature, from 0
    title: VMobject
    chart: BarRows
    numbers: VGroup


class Temperature(StillFirst, ExplainerScene):
    """softmax(s / τ) for three temperatures, side by side over the same keys."""

    reading_pace = READING_PACE

    @classmethod
    def check_scenario(cls, scenario: Scenario) -> Scenario:
        """Any scenario of 2 to 16 tokens (its first head's weights, for several heads)."""
        return scenario

    def construct(self) -> None:
        self.tempered: Tempered = temper(self.scenario)
        self.add_source("tempered", self.tempered, self.scenario.precision)
        self.add_source("taus", self.tempered, 1)
        self.header("Softmax temperature")
        font, pitch = self._fit()
        self.labels = self._labels(font)
        bars = self._bars_width(font)
        self.board = [self._column(t, font, pitch, bars) for t in range(len(self.tempered.temperatures))]
        self._place(font, pitch, bars)
        self._plain()
        self._sharper_and_flatter()
        self._summary()

    # -- layout from the data --------------------------------------------------------------------------
    def _fit(self) -> tuple[float, float]:
        """The largest type whose rows fit the height with air between them."""
        n = self.scenario.n_tokens
        pitch = min(0.95, (TOP - BOTTOM - TITLE_BAND - NOTE_BAND) / n)
        font = next((size for size in SIZES if text_height(size) + 0.12 <= pitch), SIZES[-1])
        return float(font), pitch

    def _labels(self, font: float) -> VGroup:
        q = self.scenario.query
        return VGroup(*(self.label("{} {}", position(j, "key"), TokenPart(t, LABEL_LIMIT), size=font,
                                   color=HIGHLIGHT if j == q else KEY) for j, t in enumerate(self.scenario.tokens)))

    def _bars_width(self, font: float) -> float:
        numbers = widest([self.text_for(value("tempered", "weights", 0, j)) for j in range(self.scenario.n_tokens)],
                         font)
        room = 2 * HALF_WIDTH - max(m.width for m in self.labels) - LABEL_GAP
        return (room - 3 * (NUMBER_GAP + numbers) - 2 * COLUMN_GAP) / 3

    def _column(self, t: int, font: float, pitch: float, bars: float) -> _Column:
        """Temperature ``t``'s bars, on the scale all three share: the largest weight of all is ``bars`` long."""
        n = self.scenario.n_tokens
        weights = [self.value_of(value("tempered", "weights", t, j)) for j in range(n)]
        largest = float(self.tempered.weights.max())
        chart = BarRows(None, weights, width=bars * max(weights) / largest, pitch=pitch, color=WEIGHT,
                        thickness=min(0.62, 0.5 / pitch))
        numbers = VGroup(*(self.number("tempered", "weights", t, j, size=font, color=WEIGHT) for j in range(n)))
        title = self.label("τ = {}", value("taus", "temperatures", t), size=max(font, 26.0), color=INK)
        return _Column(t, title, chart, numbers)

    def _place(self, font: float, pitch: float, bars: float) -> None:
        """Labels left, a column per temperature right of them; bands and plotted bars registered."""
        n = self.scenario.n_tokens
        label_w = max(m.width for m in self.labels)
        column_w = bars + NUMBER_GAP + max(m.width for c in self.board for m in c.numbers)
        left = -(label_w + LABEL_GAP + 3 * column_w + 2 * COLUMN_GAP) / 2
        top = TOP - max(0.0, (TOP - BOTTOM - TITLE_BAND - n * pitch - NOTE_BAND) / 2)
        ys = [top - TITLE_BAND - (j + 0.5) * pitch for j in range(n)]
        for label, y in zip(self.labels, ys, strict=True):
            stand(label.set_x(left + label_w - label.width / 2), row_baseline(y, font))
        extents = {}
        for c in self.board:
            x = left + label_w + LABEL_GAP + c.index * (column_w + COLUMN_GAP)
            c.chart.shift(RIGHT * (x - c.chart.zero_line.get_x()) + UP * (ys[0] - c.chart.row_y(0)))
            for j, number in enumerate(c.numbers):
                c.chart.number_spot(j, number, buff=NUMBER_GAP)
                self.plot(c.chart.bars[j], c.chart.axis(j), value("tempered", "weights", c.index, j), anchor="right")
            c.title.move_to((x + c.title.width / 2, top - TITLE_BAND / 2, 0))
            self.rows("key", c.chart)  # each number beside its key's bar
            tall = n * pitch + TITLE_BAND
            extents[c.index] = Rectangle(width=column_w, height=tall, stroke_width=0, fill_opacity=0).move_to(
                (x + column_w / 2, top - tall / 2, 0))
        self.columns("temperature", extents, *extents.values(), *(c.title for c in self.board))
        self.note_y = ys[-1] - pitch / 2 - NOTE_BAND / 2

    # -- the beats -------------------------------------------------------------------------------------
    def _show(self, column: _Column) -> list[object]:
        return [FadeIn(column.title, column.chart.zero_line),
                LaggedStart(*(GrowFromEdge(bar, LEFT) for bar in column.chart.bars), lag_ratio=0.06),
                FadeIn(column.numbers)]

    def _top(self, t: int) -> str:
        """The top key and its weight at temperature ``t``, as a caption says them."""
        top = self.tempered.top
        return f"{self.quote(top, 'key')} takes {self.fmt('tempered', 'weights', t, top)}"

    def _plain(self) -> None:
        """τ = 1: lecture 6's weights."""
        note = self.label("the weights of '{}' (query {}): softmax(s / τ), s = q·k / √d_k",
                          TokenPart(self.scenario.query_token), query_number(), size=SMALLEST_SIZE, color=MUTED)
        note.next_to(self.heading, DOWN, buff=0.1, aligned_edge=LEFT)
        note.is_furniture = True  # type: ignore[union-attr]
        self.beat(f"At τ = {self.fmt('taus', 'temperatures', 1)} the softmax is plain attention's: the weights of "
                  f"{self.quote(self.scenario.query, 'query')}, and {self._top(1)}.",
                  FadeIn(note, self.labels), *self._show(self.board[1]), run_time=1.8, wait=1.0)

    def _sharper_and_flatter(self) -> None:
        """τ = 0.5, then τ = 2."""
        self.beat(f"Divide by τ = {self.fmt('taus', 'temperatures', 0)}: every gap between scores doubles, so "
                  f"{self._top(0)}. Sharper.", *self._show(self.board[0]), run_time=1.8, wait=1.0)
        self.beat(f"Divide by τ = {self.fmt('taus', 'temperatures', 2)}: the gaps halve, so {self._top(2)}. "
                  "Flatter, toward the same weight for every key.", *self._show(self.board[2]), run_time=1.8,
                  wait=1.0)

    def _summary(self) -> None:
        """The slide: what τ does, under the three columns."""
        one = value("taus", "temperatures", 1)
        summary = self.label("τ < {} sharper · τ = {} plain · τ > {} flatter · the keys keep their order",
                             one, one, one, size=26, color=INK)
        summary.move_to((0, self.note_y, 0))
        one = self.fmt("taus", "temperatures", 1)
        self.beat(f"The keys keep their order: τ only sets how sure the query is. Below {one} sharper, above "
                  f"{self.fmt('taus', 'temperatures', 1)} flatter.", FadeIn(summary), run_time=1.0, wait=1.5)
