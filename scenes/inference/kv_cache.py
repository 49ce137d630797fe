"""Scene 1 of the inference lecture: the sentence generated token by token, K and V kept in a cache.

Each step the decoder projects the new token alone: its query, one new row of K and one of V. The
rows of the earlier tokens are read from the cache (greyed: reused, not computed again). The new
query meets every cached key, its weights stand beside the rows they weigh, and its context vector
comes out: row t of masked attention. The numbers are those of ``attention_math.kv_cache_generation``,
one source per step (``generation1`` … ``generationN``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from manim import DOWN, LEFT, RIGHT, UP, AnimationGroup, FadeIn, FadeOut, MathTex, Succession, Text, VGroup, VMobject

from attention_math import Scenario, ScenarioError, kv_cache_generation
from scenes.base import READING_PACE, ExplainerScene
from scenes.facts import TokenPart, position, value
from scenes.kit.grids import NumberGrid
from scenes.kit.layout import BOTTOM, HALF_WIDTH, TOP
from scenes.kit.palette import CONTEXT, INK, KEY, MUTED, QUERY, VALUE, WEIGHT
from scenes.kit.text import NUMBER_SIZE, SMALLEST_SIZE, shorten_token, text

__all__ = ["KVCacheSteps"]

TITLE_ROOM = 0.55  # over the grids: their titles
GAP = 0.45  # between the grids
SPELLED = 3  # steps told one beat each at the start (the rest run on in one beat, then the last)
PANEL_SIZE = 26
MOST_PITCH = 0.95  # the rows' pitch, at most (a short sentence's rows spread over the height)


@dataclass
class _Board:
    keys: NumberGrid
    values: NumberGrid
    titles: VGroup
    anchors: VGroup  # one invisible mark per row, at the weight column's x
    scale: float
    weights: list[VGroup] = field(default_factory=list)  # step t's weights, one per cached row


class KVCacheSteps(ExplainerScene):
    """Generation token by token: K and V grow a row a step, only the new query is computed."""

    reading_pace = READING_PACE

    board: _Board  # the grids the beats fill (the geometry tests look at it)
    panel: VGroup  # the step's lines at the right (the last step's at the end)
    summary: VGroup  # the last frame's formula and note
    left: float  # where the panel starts, right of the grids
    panel_size: float  # the panel's type size

    @classmethod
    def check_scenario(cls, scenario: Scenario) -> Scenario:
        """Refused when the two caches and the weights do not fit left of the panel at the font floor."""
        measure = cls.__new__(cls)
        measure.scenario = scenario
        if NUMBER_SIZE * measure._fit() < SMALLEST_SIZE:
            raise ScenarioError(f"d_v: the key and value caches ({scenario.d_k} + {scenario.d_v} columns) do not fit "
                                "beside the step's panel at a legible size; use fewer dimensions or decimals")
        return scenario

    def construct(self) -> None:
        s, one = self.scenario, self.scenario.heads[0]  # several heads: the first head's, as every trace shows
        generation = kv_cache_generation(one.embeddings, one.w_query, one.w_key, one.w_value, scaled=s.scaled)
        for t in range(s.n_tokens):
            self.add_source(f"generation{t + 1}", generation.steps[t], s.precision)
        self.header("The KV cache", "query", "key", "value")
        self.board = self._board()
        self.left = self.board.values.get_right()[0] + 0.5  # where the panel starts
        # one size for every step's panel: as large as the widest step's lines allow in the room beside the grids
        self.panel_size = min(PANEL_SIZE, SMALLEST_SIZE * (HALF_WIDTH - self.left) / self._panel_least())
        self.panel = VGroup()
        self._first_steps()
        self._middle_steps()
        self._last_step()
        self._summary()

    # -- layout ---------------------------------------------------------------------------------------------
    def _widths(self) -> tuple[float, float, float, float]:
        """Token labels, K, the weights, V: their widths at the number size (for the fit)."""
        s = self.scenario
        digits = "−0." + "0" * s.precision if s.precision else "−00"
        number = text(digits, size=NUMBER_SIZE).width + 0.28
        label = max(text(token[:10], size=24).width for token in s.tokens) + 0.4
        return label, s.d_k * number + 0.3, number + GAP, s.d_v * number + 0.3

    def _panel_least(self) -> float:
        """The panel's width with its lines at the font floor: the widest of the query, the context, the reuse."""
        s = self.scenario
        digits = "−0." + "0" * s.precision if s.precision else "−00"
        lines = [f"q{s.n_tokens} = (" + ", ".join([digits] * max(s.d_k, s.d_v)) + ")",
                 f"reused: k, v of tokens 1 to {s.n_tokens}",
                 *(f"step {s.n_tokens}: {shorten_token(token, 10)}" for token in s.tokens)]
        return max(text(line, size=SMALLEST_SIZE).width for line in lines)

    def _fit(self) -> float:
        """The scale the grids are drawn at: the room left of the panel, the height between header and subtitles."""
        height = self.scenario.n_tokens * 0.42 + TITLE_ROOM
        room = 2 * HALF_WIDTH - self._panel_least() - 0.5
        return min(1.0, room / sum(self._widths()), (TOP - BOTTOM - 0.1) / height)

    def _row(self, t: int, field_name: str, width: int, color: str) -> list[Text]:
        return [self.number(f"generation{t + 1}", field_name, t, d, color=color) for d in range(width)]

    def _board(self) -> _Board:
        s = self.scenario
        pitch = min(MOST_PITCH, max(0.42, (TOP - BOTTOM - TITLE_ROOM - 0.2) / s.n_tokens))
        rows = [self._row(t, "keys", s.d_k, KEY) for t in range(s.n_tokens)]
        v_buff = pitch - max(mob.height for row in rows for mob in row)
        keys = NumberGrid(rows, row_labels=s.tokens, color=KEY, v_buff=v_buff)
        values = NumberGrid([self._row(t, "values", s.d_v, VALUE) for t in range(s.n_tokens)], color=VALUE,
                            v_buff=v_buff)
        values.next_to(keys, RIGHT, buff=self._widths()[2] + GAP)
        values.align_to(keys, UP)
        middle = (keys.get_right()[0] + values.get_left()[0]) / 2  # the weights' column, between the caches
        anchors = VGroup(*(VMobject().set_points_as_corners([(middle, keys.cells[t][0].get_y(), 0)] * 2)
                           for t in range(s.n_tokens)))
        titles = VGroup(text("K cache", size=26, color=KEY).next_to(keys.brackets, UP, buff=0.15),
                        text("weights", size=26, color=WEIGHT),
                        text("V cache", size=26, color=VALUE).next_to(values.brackets, UP, buff=0.15))
        titles[1].move_to((anchors.get_x(), titles[0].get_y(), 0))
        group = VGroup(keys, values, titles, anchors)
        scale = min(self._fit(), (2 * HALF_WIDTH - self._panel_least() - 0.5) / group.width)
        group.scale(scale).align_to((-HALF_WIDTH, 0, 0), LEFT).align_to((0, TOP, 0), UP)
        self.rows("key", dict(enumerate(keys.row_labels)), keys, values, anchors)
        self.columns("d_k", dict(enumerate(VGroup(*(keys.cells[0][d] for d in range(s.d_k))))), keys)
        self.columns("d_v", dict(enumerate(VGroup(*(values.cells[0][d] for d in range(s.d_v))))), values)
        # each number in its own quantity's column: the K cache's brackets, the weights' header, the V cache's brackets
        self.fields("column", {f"generation{t + 1}.{name}": anchor for t in range(s.n_tokens) for name, anchor in
                               (("keys", keys.brackets), ("weights", titles[1]), ("values", values.brackets))},
                    keys, values, anchors)
        for mob in (*keys.row_labels, *(c for grid in (keys, values) for row in grid.cells for c in row)):
            mob.set_opacity(0)  # each row shows at its step
        return _Board(keys, values, titles, anchors, scale)

    # -- one step -------------------------------------------------------------------------------------------
    def _weights(self, t: int) -> VGroup:
        """Step t's weights, each in the row of the key it weighs."""
        size = NUMBER_SIZE * self.board.scale
        column = VGroup(*(self.number(f"generation{t + 1}", "weights", j, color=WEIGHT, size=size)
                          for j in range(t + 1)))
        for j, mob in enumerate(column):
            mob.move_to(self.board.anchors[j])
        return column

    def _panel(self, t: int) -> VGroup:
        """The step's lines: which token, the query computed now, the new rows, the context that comes out."""
        s, source = self.scenario, f"generation{t + 1}"
        query = ", ".join("{}" for _ in range(s.d_k))
        context = ", ".join("{}" for _ in range(s.d_v))
        lines = VGroup(
            self.label("step {}: {}", position(t, "step"), TokenPart(s.tokens[t], 10), size=self.panel_size, color=INK),
            self.label("q{} = (" + query + ")", position(t, "query"),
                       *(value(source, "query", d) for d in range(s.d_k)), size=self.panel_size, color=QUERY),
            self.label("new: k{} and v{}", position(t, "key"), position(t, "key"), size=self.panel_size, color=MUTED),
            self._reused(t),
            self.label("z{} = (" + context + ")", position(t, "query"),
                       *(value(source, "context", d) for d in range(s.d_v)), size=self.panel_size, color=CONTEXT),
        ).arrange(DOWN, aligned_edge=LEFT, buff=0.3)
        if lines.width > HALF_WIDTH - self.left:
            lines.scale_to_fit_width(HALF_WIDTH - self.left)
        lines.align_to((self.left, 0, 0), LEFT).align_to((0, TOP - 0.2, 0), UP)
        return lines

    def _reused(self, t: int) -> VMobject:
        """What the step reads from the cache: nothing at the first step, token 1's rows, or tokens 1 to t − 1's."""
        if t == 0:
            return text("reused: none", size=self.panel_size, color=MUTED)
        if t == 1:
            return self.label("reused: k, v of token {}", position(0, "key"), size=self.panel_size, color=MUTED)
        return self.label("reused: k, v of tokens {} to {}", position(0, "key"), position(t - 1, "key"),
                          size=self.panel_size, color=MUTED)

    def _step(self, t: int) -> list[Any]:
        """The animations of step t: the new rows in, the old ones greyed, the weights and the panel anew."""
        board = self.board
        new = VGroup(board.keys.row_labels[t], *board.keys.cells[t], *board.values.cells[t])
        old = VGroup(*(c for j in range(t) for c in (*board.keys.cells[j], *board.values.cells[j])))
        weights, panel = self._weights(t), self._panel(t)
        animations: list[Any] = [new.animate.set_opacity(1), FadeIn(weights), FadeIn(panel)]
        if t:
            animations += [old.animate.set_opacity(0.45), FadeOut(board.weights[-1]), FadeOut(self.panel)]
        if t == 1:
            animations.append(board.keys.row_labels[0].animate.set_opacity(1))
        board.weights.append(weights)
        self.panel = panel
        return animations

    # -- the beats ------------------------------------------------------------------------------------------
    def _first_steps(self) -> None:
        s = self.scenario
        self.beat(f"Generating, step {self.cite(position(0, 'step'))} projects the first token: its query, its key and "
                  "its value. The key and value go into the cache.",
                  FadeIn(self.board.keys.brackets, self.board.values.brackets, self.board.titles), *self._step(0),
                  run_time=1.5, wait=1.5)
        for t in range(1, min(SPELLED, s.n_tokens - 1)):
            said = (f"Step {self.cite(position(t, 'step'))}: only {self.quote(t)} is projected, one new row of K and "
                    "of V. The earlier rows come from the cache, greyed: reused, not computed again.") if t == 1 else (
                f"Step {self.cite(position(t, 'step'))}: the new query meets all {self.cite(position(t, 'step'))} "
                "cached keys; its weights sit beside the rows they weigh, and give its context z.")
            self.beat(said, *self._step(t), run_time=1.5, wait=1.5)

    def _middle_steps(self) -> None:
        n = self.scenario.n_tokens
        first, last = SPELLED, n - 2
        if first > last:
            return
        if first == last:  # one step between those told and the last
            said = (f"Step {self.cite(position(first, 'step'))} goes the same way: one new row in each cache, one "
                    "query computed, the rest read.")
            self.beat(said, *self._step(first), run_time=1.5, wait=1.0)
            return
        steps = [AnimationGroup(*self._step(t), run_time=0.6) for t in range(first, last + 1)]
        said = (f"Steps {self.cite(position(first, 'step'))} to {self.cite(position(last, 'step'))} go the same "
                "way: each adds one row to each cache and computes one query.")
        self.beat(said, Succession(*steps), wait=0.6)

    def _last_step(self) -> None:
        s = self.scenario
        t = s.n_tokens - 1
        last = self.quote(t, "query")
        rows = self.cite(position(t, "step"))
        z = ", ".join(self.fmt(f"generation{t + 1}", "context", d) for d in range(s.d_v))
        self.beat(f"The last token, {last}, reads all {rows} rows of the cache; its "
                  f"context, ({z}), is row {self.cite(position(t, 'query'))} of masked attention.",
                  *self._step(t), run_time=1.5, wait=1.8)

    def _summary(self) -> None:
        formula = MathTex("z_t = \\mathrm{softmax}\\big(q_t K_{\\le t}^{\\top}/\\sqrt{d_k}\\big)\\, V_{\\le t}",
                          font_size=34, color=INK)
        note = VGroup(*(text(line, size=SMALLEST_SIZE + 2, color=MUTED) for line in (
            "per step: one query,", "one key, one value;", "the rest from the cache"))).arrange(
            DOWN, aligned_edge=LEFT, buff=0.12)
        summary = VGroup(formula, note).arrange(DOWN, aligned_edge=LEFT, buff=0.3)
        if formula.width > HALF_WIDTH - self.left:
            formula.scale_to_fit_width(HALF_WIDTH - self.left)
        summary.next_to(self.panel, DOWN, buff=0.6).align_to((self.left, 0, 0), LEFT)
        if summary.get_bottom()[1] < BOTTOM:
            summary.shift(UP * (BOTTOM - summary.get_bottom()[1]))
        self.summary = summary
        self.beat("With a cache, each step computes one query, one key and one value, and reads the rest: the same "
                  "context as masked attention over the whole sentence.",
                  FadeIn(summary, shift=UP * 0.1), run_time=1.2, wait=2.5)
