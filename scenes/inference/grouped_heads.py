"""Scene 3 of the inference lecture: query heads that share keys and values (grouped-query attention).

Top left, the ``h`` query heads; under them the ``g`` key/value heads, each named with the query heads
it serves, a line from every query head to its own, the query heads of a group in their key/value
head's colour. The cache keeps only the key/value heads. Right, one group's weights for the query
token, a column per head over the very same keys: each head still attends its own way. Bottom left,
the output: the heads' z joined times ``W_O``, the same ``n × d_out`` as multi-head attention's.

The numbers are those of ``attention_math.grouped_query_attention`` over the scenario's heads, whose
shared ``W_K`` and ``W_V`` :func:`attention_math.shared_key_value_heads` finds (``head1`` … the drawn
heads of the first group, ``grouped`` its output, ``grouped_whole`` its counts). A scenario whose heads
share nothing is multi-head attention (``g = h``), and says so; one head has no ``W_O`` and its output
is its z.

A decoder's head (``--model smollm2``) shows its layer: SmolLM2's 9 query heads on 3 key/value heads
(:func:`attention_math.smollm.layer_heads`), the table the group of the chosen head (``head4`` … named
by the heads' own numbers, the chosen one marked), each head's causal weights of the keys up to the
query, and the output's first entries of 576.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from manim import DOWN, LEFT, RIGHT, UP, Create, FadeIn, Line, RoundedRectangle, SurroundingRectangle, VGroup

from attention_math import GroupedQueryTrace, Scenario, ScenarioError, grouped_query_attention, shared_key_value_heads
from attention_math.smollm import layer_heads
from scenes.base import READING_PACE, ExplainerScene
from scenes.facts import TokenPart, position, size, value
from scenes.kit.layout import BOTTOM, HALF_WIDTH, TOP
from scenes.kit.palette import CONTEXT, EMBEDDING, HIGHLIGHT, INK, KEY, MUTED, VALUE, WEIGHT
from scenes.kit.text import NUMBER_SIZE, SMALLEST_SIZE, text

__all__ = ["MAX_HEADS", "GroupedHeads", "grouped_trace"]

MAX_HEADS = 16  # query heads drawn side by side, each a box with its number
MAX_COLUMNS = 4  # heads of the first group whose weights the table shows
GROUP_COLOURS = (KEY, EMBEDDING, VALUE, HIGHLIGHT)  # a key/value head's colour, its query heads' too (and its name)
DIAGRAM_RIGHT = 0.2  # the heads' diagram and the output: left of this; the weights' table right of it
TABLE_LEFT = 0.9
CHIP_HEIGHT = 0.62
FIRST_ENTRIES = 4  # of a decoder's output row (576 entries): the first few, then "…"


def grouped_trace(scenario: Scenario) -> GroupedQueryTrace:
    """Grouped-query attention over the scenario's heads: their own ``W_Q``, the shared ``W_K`` and ``W_V``
    once per group; one head (no ``W_O``) keeps its z as the output (``W_O = I``). A decoder's head: every
    head of its layer, causal (:func:`attention_math.smollm.layer_heads`)."""
    if _decoder(scenario):
        assert scenario.model is not None
        return layer_heads(scenario.model.sentence, layer=scenario.model.layer - 1).grouped
    heads = scenario.heads
    w_query, w_key, w_value = (np.stack([getattr(head, name) for head in heads]) for name in
                               ("w_query", "w_key", "w_value"))
    group = len(heads) // shared_key_value_heads(w_key, w_value)
    w_out = scenario.w_out if scenario.w_out is not None else np.eye(scenario.d_v)
    return grouped_query_attention(scenario.embeddings, w_query, w_key[::group], w_value[::group], w_out,
                                   scaled=scenario.scaled)


def _decoder(scenario: Scenario) -> bool:
    """A decoder's head (SmolLM2): the scene shows its whole layer."""
    return scenario.model is not None and scenario.model.causal


@dataclass
class _Diagram:
    queries: VGroup  # a box per query head
    kv: VGroup  # a box per key/value head
    links: VGroup  # query head → its key/value head
    titles: VGroup  # "h query heads", "g key/value heads", what the cache keeps


@dataclass
class _Table:
    title: VGroup
    heads: VGroup  # the column titles
    tokens: VGroup  # a row label per key
    numbers: list[VGroup]  # per drawn head, a weight per key
    tops: VGroup  # a box round each head's largest weight
    chosen: VGroup  # a decoder's: a box round the chosen head's column (empty otherwise)
    note: VGroup  # a decoder's, when keys come after the query: they are masked (empty otherwise)


class GroupedHeads(ExplainerScene):
    """Query heads in groups that share one key/value head; one group's weights; the output's shape."""

    draws_decoder = True  # a decoder's head (--model smollm2): its layer's 9 query heads on 3 key/value heads
    reading_pace = READING_PACE

    trace: Any
    grouped: GroupedQueryTrace
    decoder: bool  # a decoder's layer (SmolLM2): its chosen head's group, causal
    chosen: int | None  # the decoder scenario's head (0-based); None for made-up heads
    drawn: tuple[int, ...]  # the query heads whose weights the table shows (0-based)
    keys: range  # the keys the table shows: every one, or a decoder's up to the query
    diagram: _Diagram
    table: _Table
    output: VGroup
    summary: VGroup

    @classmethod
    def check_scenario(cls, scenario: Scenario) -> Scenario:
        """Refused with more query heads than fit side by side in the diagram."""
        if scenario.n_heads > MAX_HEADS:
            raise ScenarioError(f"heads: the grouped-heads scene draws 1 to {MAX_HEADS} query heads, this scenario "
                                f"has {scenario.n_heads}")
        return scenario

    def construct(self) -> None:
        s = self.scenario
        self.grouped = grouped_trace(s)
        self.decoder = _decoder(s)
        self.chosen = s.model.head - 1 if self.decoder and s.model is not None else None
        if self.chosen is not None:  # the chosen head's group, every key up to the query (the later ones masked)
            self.drawn = self.grouped.groups[self.grouped.kv_head_of(self.chosen)]
            self.keys = range(s.query + 1)
        else:  # the first group's heads
            self.drawn = tuple(range(min(self.grouped.group_size, MAX_COLUMNS)))
            self.keys = range(s.n_tokens)
        for i in self.drawn:
            self.add_source(f"head{i + 1}", self.grouped.heads[i], s.precision)
        self.add_source("grouped", self.grouped, s.precision)
        self.add_source("grouped_whole", self.grouped, 0)  # counts and sizes: whole numbers
        self.header("Heads sharing keys and values", "key", "value")
        self.diagram = self._diagram()
        self.table = self._table()
        self.output = self._output()
        self._heads()
        self._cache()
        self._weights()
        self._output_beat()
        self._summary()

    # -- layout ---------------------------------------------------------------------------------------------
    def _colour(self, kv_head: int) -> str:
        return GROUP_COLOURS[kv_head % len(GROUP_COLOURS)]

    def _chip(self, label: Any, width: float, colour: str, below: Any = None) -> VGroup:
        box = RoundedRectangle(corner_radius=0.08, width=width, height=CHIP_HEIGHT + (0.3 if below else 0),
                               stroke_color=colour, stroke_width=3, fill_color=colour, fill_opacity=0.18)
        words = VGroup(label, below) if below is not None else VGroup(label)
        words.arrange(DOWN, buff=0.06)
        if words.width > width - 0.1:
            words.scale_to_fit_width(width - 0.1)
        return VGroup(box, words.move_to(box))

    def _diagram(self) -> _Diagram:
        h, g, size_ = self.grouped.n_heads, self.grouped.n_kv_heads, self.grouped.group_size
        room = DIAGRAM_RIGHT + HALF_WIDTH
        width = min(1.45, room / h - 0.12)
        queries = VGroup(*(self._chip(self.label("head {}" if h <= 4 else "{}", position(i, "head"), size=22,
                                                 color=INK), width, self._colour(i // size_)) for i in range(h)))
        queries.arrange(RIGHT, buff=(room - h * width) / max(h - 1, 1) if h > 1 else 0)
        queries.move_to((-HALF_WIDTH + queries.width / 2, TOP - 0.76, 0))
        kv = VGroup()
        for j, group in enumerate(self.grouped.groups):
            named = self.label("K/V {}" if g <= 4 else "{}", position(j, "kv_head"), size=22, color=INK)
            serves = None
            if g <= 4 and size_ > 1:
                serves = self.label("heads {}–{}", position(group[0], "head"), position(group[-1], "head"),
                                    size=SMALLEST_SIZE, color=MUTED)
            chip = self._chip(named, min(1.9, room / g - 0.15), self._colour(j), serves)
            chip.move_to((float(np.mean([queries[i].get_x() for i in group])), TOP - 2.1, 0))
            kv.add(chip)
        links = VGroup(*(Line(queries[i].get_bottom(), kv[i // size_].get_top(), color=self._colour(i // size_),
                              stroke_width=3, buff=0.04) for i in range(h)))
        plural = "s" if g > 1 else ""
        template, parts = "{} query head" + ("s" if h > 1 else ""), [value("grouped_whole", "n_heads")]
        if self.decoder and self.scenario.model is not None:  # a decoder's: its layer
            template, parts = template + " of layer {}", [*parts, position(self.scenario.model.layer - 1, "layer")]
        titles = VGroup(
            self.label(template, *parts, size=22, color=MUTED),
            self.label("{} key/value head" + plural, value("grouped_whole", "n_kv_heads"), size=22, color=MUTED),
            self.label(f"cached per token and layer: {{}} key{plural}, {{}} value{plural}",
                       value("grouped_whole", "n_kv_heads"), value("grouped_whole", "n_kv_heads"), size=22,
                       color=KEY),
        )
        titles[0].next_to(queries, UP, buff=0.12).align_to((-HALF_WIDTH, 0, 0), LEFT)
        titles[1].next_to(kv, DOWN, buff=0.15).align_to((-HALF_WIDTH, 0, 0), LEFT)
        titles[2].next_to(titles[1], DOWN, buff=0.12).align_to((-HALF_WIDTH, 0, 0), LEFT)
        return _Diagram(queries, kv, links, titles)

    def _table(self) -> _Table:
        s, q, keys, drawn = self.scenario, self.scenario.query, self.keys, self.drawn
        kv = self.grouped.kv_head_of(drawn[0])
        title = VGroup(self.label("weights of '{}', group {}" if self.chosen is None else
                                  "weights of '{}', the group of K/V {}", TokenPart(s.tokens[q], 8),
                                  position(kv, "kv_head"), size=24, color=WEIGHT))
        title.move_to((TABLE_LEFT + title.width / 2, TOP - 0.2, 0))
        if title.get_right()[0] > HALF_WIDTH:
            title.scale_to_fit_width(HALF_WIDTH - TABLE_LEFT).align_to((TABLE_LEFT, 0, 0), LEFT)
        masked = len(keys) < s.n_tokens  # a decoder's query before the last token: a row to say the rest is masked
        pitch = min(0.6, (title.get_bottom()[1] - 0.55 - BOTTOM) / (len(keys) + masked))
        number_size = max(float(SMALLEST_SIZE), min(float(NUMBER_SIZE), pitch * 62))
        first = title.get_bottom()[1] - 0.55 - pitch / 2  # row 1's middle, under the column titles
        tokens = VGroup(*(self.label("{}", TokenPart(s.tokens[j], 8), size=number_size, color=MUTED) for j in keys))
        for j, label in zip(keys, tokens, strict=True):
            label.move_to((TABLE_LEFT + label.width / 2, first - j * pitch, 0))
        heads = VGroup(*(self.label("head {}", position(i, "head"), size=22 if len(drawn) <= 2 else SMALLEST_SIZE,
                                    color=self._colour(kv)) for i in drawn))
        widest = max(text(self.text_for(value(f"head{drawn[0] + 1}", "weights", q, j)), size=number_size).width
                     for j in keys)
        column = min((HALF_WIDTH - TABLE_LEFT - tokens.width - 0.45) / len(drawn), 1.6)
        column = max(column, max(heads[0].width, widest) + 0.2)  # never touching: the tokens' column gives way
        left = HALF_WIDTH - len(drawn) * column
        start = min(TABLE_LEFT, left - 0.3 - tokens.width)
        for label in tokens:
            label.align_to((start, 0, 0), LEFT)
        numbers, tops, chosen = [], VGroup(), VGroup()
        for k, (i, head) in enumerate(zip(drawn, heads, strict=True)):
            x = left + (k + 0.5) * column
            head.move_to((x, title.get_bottom()[1] - 0.3, 0))
            weights = VGroup(*(self.number(f"head{i + 1}", "weights", q, j, color=WEIGHT, size=number_size)
                               .move_to((x, first - j * pitch, 0)) for j in keys))
            numbers.append(weights)
            top = self.grouped.heads[i].query_step(q).top_key
            tops.add(SurroundingRectangle(weights[top], color=HIGHLIGHT, buff=0.05, stroke_width=3))
            if i == self.chosen:
                chosen.add(SurroundingRectangle(VGroup(head, weights), color=INK, buff=0.12, stroke_width=2,
                                                corner_radius=0.08))
        self.rows("key", dict(zip(keys, tokens, strict=True)), tokens, *numbers)
        self.columns("head", dict(zip(drawn, heads, strict=True)), heads, *numbers)
        note = VGroup()
        if masked:
            note.add(text("the later keys: masked", size=min(number_size, 22.0), color=MUTED))
            note.next_to((start, first - len(keys) * pitch, 0), RIGHT, buff=0)
        return _Table(title, heads, tokens, numbers, tops, chosen, note)

    def _output(self) -> VGroup:
        """Under the cache's line: the output's shape (as multi-head attention's), and the query's row of it."""
        s, q = self.scenario, self.scenario.query
        same = "" if self.decoder else ", as multi-head's"  # a decoder's 576 columns: no room (its caption says so)
        shape = (self.label("output = joined z × W_O: {} × {}" + same, size("n_tokens"),
                            value("grouped_whole", "d_out"), size=24, color=CONTEXT) if self.grouped.n_heads > 1 else
                 self.label("one head, no W_O: the output is z, {} × {}", size("n_tokens"),
                            value("grouped_whole", "d_out"), size=24, color=CONTEXT))
        columns = range(min(self.grouped.d_out, FIRST_ENTRIES) if self.decoder else self.grouped.d_out)
        more = ", …" if len(columns) < self.grouped.d_out else ""  # a decoder's 576: the first few
        row = self.label("'{}': (" + ", ".join("{}" for _ in columns) + more + ")", TokenPart(s.tokens[q], 8),
                         *(value("grouped", "output", q, c) for c in columns), size=24, color=CONTEXT)
        output = VGroup(shape, row).arrange(DOWN, aligned_edge=LEFT, buff=0.14)
        if output.width > DIAGRAM_RIGHT + HALF_WIDTH:
            output.scale_to_fit_width(DIAGRAM_RIGHT + HALF_WIDTH)
        output.next_to(self.diagram.titles[2], DOWN, buff=0.4).align_to((-HALF_WIDTH, 0, 0), LEFT)
        return output

    # -- the beats ------------------------------------------------------------------------------------------
    def _heads(self) -> None:
        d, h, g = self.diagram, self.grouped.n_heads, self.grouped.n_kv_heads
        heads, kv = self.fmt("grouped_whole", "n_heads"), self.fmt("grouped_whole", "n_kv_heads")
        if 1 < g < h:
            said = (f"Grouped-query attention: {heads} query heads, only {kv} key/value heads. The query heads of a "
                    "group share one, drawn in its colour and named in it.")
        elif g == 1 < h:
            said = f"Multi-query attention: all {heads} query heads share {kv} key/value head."
        elif h > 1:
            said = (f"Here each of the {heads} query heads has its own key/value head, {kv} in all: nothing "
                    "shared, this is multi-head attention.")
        else:
            said = f"{heads} head: one query head and {kv} key/value head, nothing to share."
        self.beat(said, FadeIn(d.queries, d.titles[0]), FadeIn(d.kv, d.titles[1]), Create(d.links), run_time=1.5,
                  wait=1.5)

    def _cache(self) -> None:
        g, h = self.grouped.n_kv_heads, self.grouped.n_heads
        plural = "s" if g > 1 else ""
        kv = self.fmt("grouped_whole", "n_kv_heads")
        said = (f"The cache keeps only the key/value heads: {kv} key{plural} and "
                f"{self.fmt('grouped_whole', 'n_kv_heads')} value{plural} per token and layer, not "
                f"{self.fmt('grouped_whole', 'n_heads')}." if g < h else
                f"The cache keeps every key/value head: {kv} key{plural} and "
                f"{self.fmt('grouped_whole', 'n_kv_heads')} value{plural} per token and layer.")
        self.beat(said, FadeIn(self.diagram.titles[2]), *(chip[0].animate.set_fill(opacity=0.45)
                                                           for chip in self.diagram.kv), run_time=1.2, wait=1.2)

    def _weights(self) -> None:
        t, q, drawn = self.table, self.scenario.query, self.drawn
        tops = [self.grouped.heads[i].query_step(q).top_key for i in drawn]
        first = self.cite(position(drawn[0], "head"))
        heads = f"Heads {first} to {self.cite(position(drawn[-1], 'head'))}" if len(drawn) > 1 else f"Head {first}"
        if self.chosen is not None:
            heads += f" share K/V {self.cite(position(self.grouped.kv_head_of(self.chosen), 'kv_head'))}:"
        asking = self.quote(q, "query")  # said before each head's weight, so named first
        each = ", ".join(f"head {self.cite(position(i, 'head'))}{', the chosen one,' if i == self.chosen else ''} "
                         f"most to {self.quote(top, 'key')} ({self.fmt(f'head{i + 1}', 'weights', q, top)})"
                         for i, top in zip(drawn, tops, strict=True))
        if self.chosen is not None:
            masked = ", the later keys masked" if len(self.keys) < self.scenario.n_tokens else ""
            said = f"{heads} the very same turned keys, each head its own turned query. For {asking}{masked}: {each}."
        elif len(drawn) > 1:
            said = f"{heads} read the very same keys, each with its own query. For {asking}: {each}."
        else:
            said = f"{heads} is alone in its group. For {asking}: {each}."
        self.beat(said, FadeIn(t.title, t.heads, t.tokens, t.note), *(FadeIn(column) for column in t.numbers),
                  Create(t.tops), *([Create(t.chosen)] if t.chosen else []), run_time=1.5, wait=2.0)

    def _output_beat(self) -> None:
        n, d_out = self.cite(size("n_tokens")), self.fmt("grouped_whole", "d_out")
        if self.decoder:
            said = (f"Their z are joined and multiplied by the layer's W_O, as in multi-head attention: the output is "
                    f"{n} × {d_out}, what the layer adds to each token's hidden state.")
        elif self.grouped.n_heads > 1:
            said = (f"Their z are joined and multiplied by W_O as in multi-head attention: the output is {n} × "
                    f"{d_out}, the same shape.")
        else:
            said = f"One head has no W_O: its output is its z, {n} × {d_out}."
        self.beat(said, FadeIn(self.output, shift=UP * 0.1), run_time=1.2, wait=1.5)

    def _summary(self) -> None:
        g, h = self.grouped.n_kv_heads, self.grouped.n_heads
        lines = VGroup(text("g = h: multi-head  ·  g < h: grouped-query", size=22, color=INK),
                       text("one K/V head: multi-query", size=22, color=INK))
        if g < h:
            lines.add(self.label("a cache {} times smaller than multi-head's", value("grouped_whole", "group_size"),
                                 size=22, color=KEY))
        lines.arrange(DOWN, aligned_edge=LEFT, buff=0.1)
        lines.next_to(self.output, DOWN, buff=0.4).align_to((-HALF_WIDTH, 0, 0), LEFT)
        self.summary = lines
        if g < h:
            said = (f"Sharing keys and values makes the cache {self.fmt('grouped_whole', 'group_size')} times "
                    "smaller, and the heads of a group still attend each their own way.")
        else:
            said = ("Nothing shared keeps the largest cache; grouped-query attention shares each key/value head "
                    "among several query heads.")
        self.beat(said, FadeIn(lines, shift=UP * 0.1), run_time=1.0, wait=2.5)
