"""Scene 4 of the inference lecture: the KV cache's memory in published models, per token and for a long context.

A row per model of ``attention_math.PUBLISHED_CONFIGS`` (multi-head, grouped-query, multi-query): its
name and kind, its cache per token written out as ``2 × layers × key/value heads × d_head × bytes``;
then two charts on their own scales, the KiB a token keeps and the GiB a context of
:data:`scenes.inference.CACHE_CONTEXT` tokens keeps. The numbers are ``attention_math.cache_memory``'s, one
source per model (``memory1`` … whole, ``memory1_gib`` … at 2 decimals). The scenario is not shown:
these are the published models' own sizes (each config's address in ``docs/math.md``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from manim import DOWN, LEFT, RIGHT, UP, FadeIn, GrowFromEdge, Mobject, Rectangle, VGroup

from attention_math import PUBLISHED_CONFIGS, cache_memory
from scenes.base import READING_PACE, ExplainerScene
from scenes.facts import TokenPart, value
from scenes.inference import CACHE_CONTEXT
from scenes.kit.bars import BarRows
from scenes.kit.layout import BOTTOM, HALF_WIDTH, TOP
from scenes.kit.palette import INK, KEY, MUTED, VALUE
from scenes.kit.text import text

__all__ = ["CacheMemory"]

NAMES_RIGHT = -0.9  # the models' names and factors: left of this; the charts right of it
CHART_GAP = 0.45
NUMBER_ROOM = 1.5  # beyond a chart's longest bar: its number and unit
FACTORS = ("key_and_value", "layers", "kv_heads", "d_head", "bytes_per_number")
"""The factors of a model's cache per token, as its row writes them (``2 × layers × K/V heads × d_head × bytes``)."""
TITLE_ROOM = 0.95  # over the rows: the charts' titles and where the figures come from
NOTE_ROOM = 0.55  # under the rows: the formula


@dataclass
class _Rows:
    names: VGroup  # per model: its name and kind
    factors: VGroup  # per model: 2 × layers × kv heads × d_head × bytes
    per_token: BarRows
    context: BarRows
    numbers: list[VGroup]  # per chart, a number per model
    titles: VGroup  # "per token", "n tokens", the formula


class CacheMemory(ExplainerScene):
    """The cache per token and for a long context, as bars, for multi-head, grouped-query and multi-query models."""

    reading_pace = READING_PACE

    chart: _Rows  # the rows and bars (the geometry tests look at it)
    note: VGroup

    def construct(self) -> None:
        for k, config in enumerate(PUBLISHED_CONFIGS):
            memory = cache_memory(config, CACHE_CONTEXT)
            self.add_source(f"memory{k + 1}", memory, 0)  # bytes, heads, KiB: whole numbers
            self.add_source(f"memory{k + 1}_gib", memory, 2)
        self.header("The cache's memory", "key", "value")
        self.chart = self._rows()
        self.note = VGroup(text("sources: each model's config.json", size=22, color=MUTED))
        self.note.move_to((-HALF_WIDTH + self.note.width / 2, TOP - 0.25, 0))
        self._formula()
        self._multi_head()
        self._grouped()
        self._multi_query()
        self._long_context()
        self._summary()

    # -- layout ---------------------------------------------------------------------------------------------
    def _values(self, field: str) -> list[float]:
        suffix = "_gib" if field == "gib_context" else ""
        return [self.value_of(value(f"memory{k + 1}{suffix}", field)) for k in range(len(PUBLISHED_CONFIGS))]

    def _name(self, k: int) -> VGroup:
        config = PUBLISHED_CONFIGS[k]
        name = self.label("{}", TokenPart(config.name.split("/")[-1], 20), size=24, color=INK)
        kind = text(config.attention, size=22, color=MUTED)
        factors = self.label("{} × {} × {} × {} × {} bytes", *(value(f"memory{k + 1}", field) for field in FACTORS),
                             size=22, color=KEY)
        return VGroup(VGroup(name, kind).arrange(RIGHT, buff=0.25, aligned_edge=DOWN), factors)

    def _rows(self) -> _Rows:
        count = len(PUBLISHED_CONFIGS)
        pitch = (TOP - BOTTOM - TITLE_ROOM - NOTE_ROOM) / count
        labels = [self._name(k) for k in range(count)]
        names, factors = VGroup(*(label[0] for label in labels)), VGroup(*(label[1] for label in labels))
        first = TOP - TITLE_ROOM - pitch / 2
        for k, label in enumerate(labels):
            label.arrange(DOWN, aligned_edge=LEFT, buff=0.1)
            if label.width > NAMES_RIGHT + HALF_WIDTH:
                label.scale_to_fit_width(NAMES_RIGHT + HALF_WIDTH)
            label.move_to((-HALF_WIDTH + label.width / 2, first - k * pitch, 0))
        room = (HALF_WIDTH - NAMES_RIGHT - 2 * NUMBER_ROOM - 2 * CHART_GAP) / 2
        charts, numbers, left = [], [], NAMES_RIGHT + CHART_GAP
        spans = [(-HALF_WIDTH, NAMES_RIGHT)]  # the columns as laid out: the factors, then each chart and its numbers
        for field, unit, color in (("kib_per_token", "{} KiB", KEY), ("gib_context", "{} GiB", VALUE)):
            chart = BarRows(None, self._values(field), width=room, pitch=pitch, color=color, thickness=0.45)
            chart.shift(RIGHT * (left - chart.zero_line.get_x()) + UP * (first - chart.row_y(0)))
            source = "_gib" if field == "gib_context" else ""
            column = VGroup()
            for k in range(count):
                number = self.label(unit, value(f"memory{k + 1}{source}", field), size=24, color=INK)
                chart.number_spot(k, number)
                self.plot(chart.bars[k], chart.axis(k), value(f"memory{k + 1}{source}", field), anchor="right")
                column.add(number)
            self.rows("config", dict(enumerate(VGroup(*(VGroup(n, f) for n, f in zip(names, factors, strict=True))))),
                      names, factors, chart, chart.placed)
            charts.append(chart)
            numbers.append(column)
            spans.append((left, left + room + NUMBER_ROOM))
            left += room + NUMBER_ROOM + CHART_GAP
        self._register_fields(spans, names, factors, charts)
        titles = VGroup(
            text("per token", size=26, color=KEY),
            self.label("for {} tokens", value("memory1", "context_tokens"), size=26, color=VALUE),
            self.label("cache per token = {} × layers × K/V heads × d_head × bytes", value("memory1", "key_and_value"),
                       size=24, color=INK),
        )
        for title, chart in zip(titles[:2], charts, strict=True):
            title.next_to((chart.zero_line.get_x(), TOP - 0.25, 0), RIGHT, buff=0)
        titles[2].move_to((0, BOTTOM + 0.25, 0))  # under the rows, across the frame
        return _Rows(names, factors, charts[0], charts[1], numbers, titles)

    def _register_fields(self, spans: list[tuple[float, float]], names: VGroup, factors: VGroup,
                         charts: list[BarRows]) -> None:
        """Each model's numbers in their own column, as laid out (marks that draw nothing): the factors under the
        names, its KiB a token by the first chart, its GiB for the long context by the second."""
        marks = [Rectangle(width=right - left, height=0.1, stroke_width=0, fill_opacity=0).move_to(
            ((left + right) / 2, TOP - TITLE_ROOM / 2, 0)) for left, right in spans]
        anchors: dict[str, Mobject] = {}
        for k in range(len(PUBLISHED_CONFIGS)):
            anchors |= {f"memory{k + 1}.{field}": marks[0] for field in FACTORS}
            anchors |= {f"memory{k + 1}.kib_per_token": marks[1], f"memory{k + 1}_gib.gib_context": marks[2]}
        self.fields("column", anchors, names, factors, *charts, *(chart.placed for chart in charts))

    # -- the beats ------------------------------------------------------------------------------------------
    def _row(self, k: int, *, context: bool = False) -> list[Any]:
        r = self.chart
        if context:
            return [GrowFromEdge(r.context.bars[k], LEFT), FadeIn(r.numbers[1][k])]
        return [FadeIn(r.names[k], r.factors[k]), GrowFromEdge(r.per_token.bars[k], LEFT), FadeIn(r.numbers[0][k])]

    def _formula(self) -> None:
        r = self.chart
        two = self.fmt("memory1", "key_and_value")
        self.beat(f"Each token keeps a key and a value, {two}, in every layer for every key/value head: d_head "
                  "numbers each, at so many bytes a number. Here are published models.",
                  FadeIn(r.titles[2], r.titles[0], r.per_token.zero_line, self.note), run_time=1.2, wait=1.5)

    def _multi_head(self) -> None:
        heads, layers, kib = (self.fmt("memory1", field) for field in ("kv_heads", "layers", "kib_per_token"))
        self.beat(f"A multi-head model keeps all {heads} key/value heads in each of its {layers} layers: {kib} KiB "
                  "per token.", *self._row(0), run_time=1.5, wait=1.5)

    def _grouped(self) -> None:
        heads, big, small = (self.fmt("memory2", "kv_heads"), self.fmt("memory2", "kib_per_token"),
                             self.fmt("memory3", "kib_per_token"))
        self.beat(f"Grouped-query models keep {heads} key/value heads: {big} KiB per token over the larger model's "
                  f"many layers, {small} KiB for the smaller.", *self._row(1), *self._row(2), run_time=1.5, wait=1.8)

    def _multi_query(self) -> None:
        kib = self.fmt("memory4", "kib_per_token")
        self.beat(f"Multi-query attention keeps a single key/value head, of fewer dimensions: {kib} KiB per token.",
                  *self._row(3), run_time=1.5, wait=1.5)

    def _long_context(self) -> None:
        r = self.chart
        tokens = self.fmt("memory1", "context_tokens")
        most, least = self.fmt("memory1_gib", "gib_context"), self.fmt("memory4_gib", "gib_context")
        self.beat(f"Over a context of {tokens} tokens that is {most} GiB for the multi-head model and {least} GiB "
                  "with multi-query, for one sequence.", FadeIn(r.titles[1], r.context.zero_line),
                  *(anim for k in range(len(PUBLISHED_CONFIGS)) for anim in self._row(k, context=True)),
                  run_time=2.0, wait=1.8)

    def _summary(self) -> None:
        self.beat("The cache grows with every token; fewer key/value heads shrink it by the same factor, which is "
                  "why grouped-query attention spread.", wait=3.0)
