"""Scene 2 of the inference lecture: what the cache saves, the multiplies of every step with and without it.

A bar per step, the token it generates beside it: on the left the multiplies the step does with the
cache (its own query, key and value, then one score and one weighted value per cached row), on the
right those it does without one (every earlier key and value projected again). Both on one scale:
the left bars grow by a little each step, the right ones by a token's whole projection. The counts
are ``attention_math.kv_cache_generation``'s, as it did the products (one source per step,
``cost1`` … ``costN``, and ``cost`` for the totals).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from manim import DOWN, LEFT, RIGHT, UP, FadeIn, GrowFromEdge, LaggedStart, MathTex, Text, VGroup

from attention_math import Scenario, kv_cache_generation
from scenes.base import READING_PACE, ExplainerScene
from scenes.facts import TokenPart, position, value
from scenes.kit.bars import BarRows
from scenes.kit.layout import BOTTOM, HALF_WIDTH, TOP
from scenes.kit.palette import HIGHLIGHT, INK, KEY, MUTED
from scenes.kit.text import SMALLEST_SIZE, text

__all__ = ["CacheSavings"]

TITLE_ROOM = 0.7  # over the charts: their titles
FOOT = 1.1  # under the charts: the totals and the formula
LABEL_ROOM = 1.9  # the tokens' column, at most
GAP = 0.5
FIELDS = ("multiplies_with_cache", "multiplies_without_cache")  # the charts' quantities, left to right


@dataclass
class _Charts:
    labels: VGroup
    cached: BarRows  # with the cache
    again: BarRows  # without: every key and value projected again
    titles: VGroup
    numbers: list[list[Text]]  # per chart, per step


class CacheSavings(ExplainerScene):
    """The multiplies per step with and without the cache, as bars on one scale."""

    draws_decoder = True  # a decoder's head: the multiplies its shapes (576 → 64) count, step by step

    reading_pace = READING_PACE

    charts: _Charts
    summary: VGroup

    @classmethod
    def check_scenario(cls, scenario: Scenario) -> Scenario:
        """Any scenario the scenes draw: the rows' pitch and the numbers' size follow the tokens."""
        return scenario

    def construct(self) -> None:
        s, one = self.scenario, self.scenario.heads[0]  # several heads: the first head's, as every trace shows
        generation = kv_cache_generation(one.embeddings, one.w_query, one.w_key, one.w_value, scaled=s.scaled)
        for t in range(s.n_tokens):
            self.add_source(f"cost{t + 1}", generation.steps[t], 0)  # counts: whole numbers
        self.add_source("cost", generation, 0)
        self.header("What the cache saves", "key", "value")
        self.charts = self._charts()
        self._first_step()
        self._every_step()
        self._totals()

    # -- layout ---------------------------------------------------------------------------------------------
    def _size(self) -> float:
        return max(SMALLEST_SIZE, min(26.0, 60 / max(self.scenario.n_tokens, 1) + 14))

    def _counts(self, field: str) -> list[float]:
        return [self.value_of(value(f"cost{t + 1}", field)) for t in range(self.scenario.n_tokens)]

    def _charts(self) -> _Charts:
        s, size = self.scenario, self._size()
        pitch = min(0.7, (TOP - BOTTOM - TITLE_ROOM - FOOT) / s.n_tokens)
        labels = VGroup(*(self.label("{} {}", position(t, "step"), TokenPart(s.tokens[t], 8), size=size, color=MUTED)
                          for t in range(s.n_tokens)))
        for t, label in enumerate(labels):
            label.move_to((0, -t * pitch, 0)).align_to((0, 0, 0), RIGHT)
        labels.move_to((-HALF_WIDTH + labels.width / 2, TOP - TITLE_ROOM - pitch / 2 - (s.n_tokens - 1) * pitch / 2, 0))
        number = text("0" * len(str(int(max(self._counts("multiplies_without_cache"))))), size=size).width
        room = 2 * HALF_WIDTH - labels.width - 2 * (number + 0.3) - 2 * GAP
        largest = max(self._counts("multiplies_without_cache"))
        unit = room / (largest + max(self._counts("multiplies_with_cache")))
        charts = []
        left = labels.get_right()[0] + GAP
        for field, color in zip(FIELDS, (KEY, HIGHLIGHT), strict=True):
            counts = self._counts(field)
            chart = BarRows(None, counts, width=max(counts) * unit, pitch=pitch, color=color,
                            thickness=min(0.62, 0.4 / pitch))
            chart.shift(RIGHT * (left - chart.zero_line.get_x()) + UP * (labels[0].get_y() - chart.row_y(0)))
            charts.append(chart)
            left += max(counts) * unit + number + 0.3 + GAP
        numbers = [[self.number(f"cost{t + 1}", field, size=size, color=INK) for t in range(s.n_tokens)]
                   for field in FIELDS]
        for chart, row, field in zip(charts, numbers, FIELDS, strict=True):
            for t, mob in enumerate(row):
                chart.number_spot(t, mob)
                self.plot(chart.bars[t], chart.axis(t), value(f"cost{t + 1}", field), anchor="right")
            self.rows("query", dict(enumerate(labels)), labels, chart, chart.placed)
        # each count stands by its own chart: with the cache (0) or without one (1)
        self.columns("route", {k: VGroup(chart.zero_line, chart.bars) for k, chart in enumerate(charts)},
                     *charts, *(chart.placed for chart in charts))
        # and is a count of its own chart's quantity (no other quantity's number stands among them)
        self.fields("column", {f"cost{t + 1}.{field}": VGroup(chart.zero_line, chart.bars) for t in range(s.n_tokens)
                               for chart, field in zip(charts, FIELDS, strict=True)},
                    *charts, *(chart.placed for chart in charts))
        titles = VGroup(text("with the cache", size=26, color=KEY), text("without a cache", size=26, color=HIGHLIGHT))
        for title, chart in zip(titles, charts, strict=True):
            title.next_to((chart.zero_line.get_x(), TOP, 0), RIGHT, buff=0).shift(DOWN * 0.2)
        return _Charts(labels, charts[0], charts[1], titles, numbers)

    # -- the beats ------------------------------------------------------------------------------------------
    def _grow(self, t: int) -> list[Any]:
        c = self.charts
        return [FadeIn(c.labels[t]), GrowFromEdge(c.cached.bars[t], LEFT), GrowFromEdge(c.again.bars[t], LEFT),
                FadeIn(c.numbers[0][t]), FadeIn(c.numbers[1][t])]

    def _first_step(self) -> None:
        c = self.charts
        self.beat(f"Count the multiplies of each step. Step {self.cite(position(0, 'step'))} has nothing cached yet: "
                  f"{self.fmt('cost1', 'multiplies_with_cache')} either way.",
                  FadeIn(c.titles, c.cached.zero_line, c.again.zero_line), *self._grow(0), run_time=1.5, wait=1.5)

    def _every_step(self) -> None:
        n = self.scenario.n_tokens
        if n < 2:
            return
        last = f"cost{n}"
        said = (f"With the cache, step {self.cite(position(n - 1, 'step'))} does "
                f"{self.fmt(last, 'multiplies_with_cache')}; "
                f"without it, {self.fmt(last, 'multiplies_without_cache')}: every earlier key and value is "
                "projected again.")
        self.beat(said, LaggedStart(*(anim for t in range(1, n) for anim in self._grow(t)), lag_ratio=0.04),
                  run_time=2.5, wait=1.5)

    def _totals(self) -> None:
        total = VGroup(
            self.label("in all: {} with the cache", value("cost", "total_multiplies_with_cache"), size=26, color=KEY),
            self.label("{} without", value("cost", "total_multiplies_without_cache"), size=26, color=HIGHLIGHT),
        ).arrange(RIGHT, buff=0.5)
        formula = MathTex("\\text{saved per step} = \\text{earlier tokens} \\times d_{in}\\,(d_k + d_v)", font_size=32,
                          color=INK)
        summary = VGroup(total, formula).arrange(DOWN, buff=0.25)
        if summary.width > 2 * HALF_WIDTH:
            summary.scale_to_fit_width(2 * HALF_WIDTH)
        summary.move_to((0, BOTTOM + summary.height / 2 + 0.1, 0))
        self.summary = summary
        self.beat(f"In all, {self.fmt('cost', 'total_multiplies_with_cache')} multiplies with the cache against "
                  f"{self.fmt('cost', 'total_multiplies_without_cache')} without: the saving grows with every "
                  "token, by the earlier tokens' keys and values.",
                  FadeIn(summary, shift=UP * 0.1), run_time=1.2, wait=2.5)
