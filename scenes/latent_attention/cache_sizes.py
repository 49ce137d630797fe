"""Scene 4 of the latent-attention lecture: the cache a token keeps in one layer, four ways, for DeepSeek-V2.

DeepSeek-V2's heads (128 of 128 numbers, a latent of 512, a RoPE key of 64, 60 layers; its config.json) cached as
multi-head attention would (``2·n_h·d_h``), grouped-query attention with :data:`~scenes.latent_attention.GQA_GROUPS`
key/value heads (``2·n_g·d_h``), multi-query attention (``2·d_h``) and MLA (``d_c + d_R``): DeepSeek-V2's table 1.
A row per way, its formula with the model's numbers, a bar and its size on one scale. The numbers are
``attention_math.latent_cache_sizes`` of ``attention_math.DEEPSEEK_V2`` (source ``deepseek``, whole numbers; its
saving at one decimal, ``deepseek_ratio``; the grouped-query heads as large, ``deepseek_groups``). The scenario is not
shown.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from manim import DOWN, LEFT, RIGHT, UP, FadeIn, GrowFromEdge, SurroundingRectangle, VGroup

from attention_math import DEEPSEEK_V2
from scenes.base import READING_PACE, ExplainerScene
from scenes.facts import Fact, TokenPart, value
from scenes.kit.bars import BarRows
from scenes.kit.layout import BOTTOM, HALF_WIDTH, TOP
from scenes.kit.palette import HIGHLIGHT, INK, KEY, MUTED
from scenes.kit.text import text
from scenes.latent_attention import GQA_GROUPS

__all__ = ["LatentCacheSizes"]

NAMES_RIGHT = -1.2  # the ways' names and formulas: left of this; the bars right of it
NUMBER_ROOM = 1.3  # beyond the longest bar: its number
TITLE_ROOM = 1.1  # over the rows: the model's configuration, the bars' unit
NOTE_ROOM = 0.7  # under the rows: the summary
WAYS = ("multi-head (MHA)", "grouped-query (GQA)", "multi-query (MQA)", "latent (MLA)")


@dataclass(frozen=True)
class _Counts:
    """DeepSeek-V2's sizes and its cache per token and layer four ways, as the scene shows them."""

    n_heads: int
    d_head: int
    n_kv_heads: int
    d_c: int
    d_rope: int
    layers: int
    key_and_value: int
    sizes: np.ndarray  # multi-head, grouped-query, multi-query, latent
    saving: float
    equivalent_groups: float


def _counts() -> _Counts:
    sizes = DEEPSEEK_V2.cache_sizes(n_kv_heads=GQA_GROUPS)
    return _Counts(n_heads=sizes.n_heads, d_head=sizes.d_head, n_kv_heads=sizes.n_kv_heads, d_c=sizes.d_c,
                   d_rope=sizes.d_rope, layers=DEEPSEEK_V2.layers, key_and_value=2,
                   sizes=np.array([sizes.multi_head, sizes.grouped_query, sizes.multi_query, sizes.latent]),
                   saving=sizes.saving, equivalent_groups=sizes.equivalent_groups)


FORMULAS: tuple[tuple[str, tuple[str, ...], str], ...] = (
    ("{} × {} heads × {}", ("key_and_value", "n_heads", "d_head"), "product"),
    ("{} × {} K/V heads × {}", ("key_and_value", "n_kv_heads", "d_head"), "product"),
    ("{} × {}", ("key_and_value", "d_head"), "product"),
    ("c_KV {} + k_R {}", ("d_c", "d_rope"), "sum"),
)
"""Each way's size as its row writes it: the template, the fields of its factors (or terms), how they combine."""


class LatentCacheSizes(ExplainerScene):
    """DeepSeek-V2's cache per token and layer as multi-head, grouped-query, multi-query and latent attention."""

    reading_pace = READING_PACE

    chart: BarRows
    names: VGroup  # per way: its name
    formulas: VGroup  # per way: its formula
    numbers: VGroup  # per way: its size, beyond its bar
    title: VGroup
    note: VGroup

    def construct(self) -> None:
        counts = _counts()
        self.add_source("deepseek", counts, 0)
        self.add_source("deepseek_ratio", counts, 1)
        self.add_source("deepseek_groups", counts, 2)
        self.header("The cache, four ways", "key", "value")
        self._layout()
        self._config()
        self._multi_head()
        self._shared()
        self._latent()
        self._summary()

    # -- layout -------------------------------------------------------------------------------------------------
    def _size(self, m: int) -> Fact:
        return value("deepseek", "sizes", m)

    def _layout(self) -> None:
        pitch = (TOP - BOTTOM - TITLE_ROOM - NOTE_ROOM) / len(WAYS)
        first = TOP - TITLE_ROOM - pitch / 2
        self.names, self.formulas = VGroup(), VGroup()
        for m, (name, (template, fields, _)) in enumerate(zip(WAYS, FORMULAS, strict=True)):
            label = text(name, size=28, color=HIGHLIGHT if m == 3 else INK)
            formula = self.label(template, *(value("deepseek", field) for field in fields), size=26, color=KEY)
            row = VGroup(label, formula).arrange(DOWN, aligned_edge=LEFT, buff=0.12)
            row.move_to((-HALF_WIDTH + row.width / 2, first - m * pitch, 0))
            self.names.add(label)
            self.formulas.add(formula)
        room = HALF_WIDTH - NAMES_RIGHT - NUMBER_ROOM - 0.4
        values = [self.value_of(self._size(m)) for m in range(len(WAYS))]
        self.chart = BarRows(None, values, width=room, pitch=pitch, color=KEY, thickness=0.45)
        zero = self.chart.zero_line.get_x()
        self.chart.shift(RIGHT * (NAMES_RIGHT + 0.4 - zero) + UP * (first - self.chart.row_y(0)))
        self.numbers = VGroup()
        for m in range(len(WAYS)):
            number = self.number("deepseek", "sizes", m, size=26, color=HIGHLIGHT if m == 3 else INK)
            self.chart.number_spot(m, number)
            self.plot(self.chart.bars[m], self.chart.axis(m), self._size(m), anchor="right")
            self.numbers.add(number)
        self.rows("mla", {m: VGroup(self.names[m], self.formulas[m]) for m in range(len(WAYS))}, self.names,
                  self.formulas, self.chart, self.chart.placed)
        self.title = VGroup(self._title())
        self.note = VGroup(self.label("{} × less than multi-head · as much as grouped-query with {} K/V heads",
                                      value("deepseek_ratio", "saving"), value("deepseek_groups", "equivalent_groups"),
                                      size=26, color=HIGHLIGHT))
        if self.note.width > 2 * HALF_WIDTH - 0.4:
            self.note.scale_to_fit_width(2 * HALF_WIDTH - 0.4)
        self.note.move_to((0, BOTTOM + NOTE_ROOM / 2, 0))
        self.mla_box = SurroundingRectangle(VGroup(self.names[3], self.formulas[3]), color=HIGHLIGHT, buff=0.1)

    def _title(self) -> VGroup:
        """The model's configuration, over the rows."""
        fields = ("n_heads", "d_head", "d_c", "d_rope", "layers")
        title = self.label("{}: {} heads of {} · latent {} · RoPE key {} · {} layers (config.json)",
                           TokenPart(DEEPSEEK_V2.name, 20), *(value("deepseek", field) for field in fields), size=26,
                           color=MUTED)
        if title.width > 2 * HALF_WIDTH:
            title.scale_to_fit_width(2 * HALF_WIDTH)
        title.move_to((0, TOP - 0.15, 0))
        unit = text("numbers a token, in one layer", size=24, color=MUTED)
        unit.next_to((self.chart.zero_line.get_x(), self.chart.zero_line.get_top()[1], 0), UP, buff=0.1,
                     aligned_edge=LEFT)
        return VGroup(title, unit)

    def _row(self, m: int) -> list[object]:
        return [FadeIn(self.names[m], self.formulas[m]), GrowFromEdge(self.chart.bars[m], LEFT),
                FadeIn(self.numbers[m])]

    def _relation(self, m: int) -> str:
        """``=`` or ``≈`` between way ``m``'s shown factors and its shown size (recorded)."""
        _, fields, op = FORMULAS[m]
        return self.equals(self._size(m), [value("deepseek", field) for field in fields], op=op)

    # -- the beats ------------------------------------------------------------------------------------------------
    def _config(self) -> None:
        heads, d_head, d_c, d_rope, layers = (self.fmt("deepseek", field)
                                              for field in ("n_heads", "d_head", "d_c", "d_rope", "layers"))
        self.beat(f"DeepSeek's MLA model has {heads} heads of {d_head} numbers, a latent of {d_c} and a RoPE key of "
                  f"{d_rope}, in each of {layers} layers. Count what a token keeps in one layer.",
                  FadeIn(self.title, self.chart.zero_line), run_time=1.0)

    def _multi_head(self) -> None:
        sign = self._relation(0)
        two, heads, d_head = (self.fmt("deepseek", field) for field in ("key_and_value", "n_heads", "d_head"))
        size = self.fmt("deepseek", "sizes", 0)
        self.beat(f"Multi-head attention keeps a key and a value for every head: {two} × {heads} × {d_head} {sign} "
                  f"{size} numbers.", *self._row(0), run_time=1.5)

    def _shared(self) -> None:
        self._relation(1)
        self._relation(2)
        groups, grouped, single = (self.fmt("deepseek", "n_kv_heads"), self.fmt("deepseek", "sizes", 1),
                                   self.fmt("deepseek", "sizes", 2))
        self.beat(f"Grouped-query attention with {groups} key/value heads keeps {grouped}; multi-query, one "
                  f"key/value head, {single}.", *self._row(1), *self._row(2), run_time=1.5)

    def _latent(self) -> None:
        sign = self._relation(3)
        d_c, d_rope = self.fmt("deepseek", "d_c"), self.fmt("deepseek", "d_rope")
        size = self.fmt("deepseek", "sizes", 3)
        self.beat(f"MLA keeps the latent and the RoPE key: {d_c} + {d_rope} {sign} {size} numbers.", *self._row(3),
                  FadeIn(self.mla_box), run_time=1.5)

    def _summary(self) -> None:
        saving, groups = self.fmt("deepseek_ratio", "saving"), self.fmt("deepseek_groups", "equivalent_groups")
        self.beat(f"That is {saving} times less than multi-head attention, as little as grouped-query attention with "
                  f"{groups} key/value heads, while every head keeps keys of its own.", FadeIn(self.note), wait=2.0)
