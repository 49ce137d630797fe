"""Scene 1 of the inference lecture: the sentence generated token by token, K and V kept in a cache.

Each step the decoder projects the new token alone: its query, one new row of K and one of V. The
rows of the earlier tokens are read from the cache (greyed: reused, not computed again). The new
query meets every cached key, its weights stand beside the rows they weigh, and its context vector
comes out: row t of masked attention. The numbers are those of ``attention_math.kv_cache_generation``,
one source per step (``generation1`` … ``generationN``).

A decoder's head (``--model smollm2``) tells the same story on the model's own run
(:func:`attention_math.smollm.cached_generation`): the prompt goes through at once (its rows fill the
cache in one beat), then the model writes, and each token it wrote goes through alone; each row of 64
numbers shows its first :data:`SHOWN_ENTRIES`, then "…"; the panel says the token the model writes
next, and the last frame the text it wrote.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from manim import DOWN, LEFT, RIGHT, UP, AnimationGroup, FadeIn, FadeOut, MathTex, Succession, Text, VGroup, VMobject

from attention_math import Scenario, ScenarioError, format_number, kv_cache_generation
from scenes.base import READING_PACE, ExplainerScene
from scenes.facts import TokenPart, position, size, value
from scenes.inference import new_tokens
from scenes.kit.grids import NumberGrid
from scenes.kit.layout import BOTTOM, HALF_WIDTH, TOP
from scenes.kit.palette import CONTEXT, INK, KEY, MUTED, QUERY, VALUE, WEIGHT
from scenes.kit.text import LABEL_SIZE, NUMBER_SIZE, SMALLEST_SIZE, shorten_token, text, token_text

__all__ = ["SHOWN_ENTRIES", "KVCacheSteps"]

TITLE_ROOM = 0.55  # over the grids: their titles
GAP = 0.45  # between the grids
SPELLED = 3  # steps told one beat each at the start (the rest run on in one beat, then the last)
PANEL_SIZE = 26
MOST_PITCH = 0.95  # the rows' pitch, at most (a short sentence's rows spread over the height)
ROW_LABEL_CHARS = 8  # a real run's row labels, at most (a made-up scenario's: 10)
SHOWN_ENTRIES = 2  # of a real head's 64 numbers a row (k, v, q, z): the first ones, then "…" (1 where 2 do not fit)

@dataclass(frozen=True)
class _Story:
    """What the scene tells: the cache's rows, the steps' numbers, the entries of a row shown."""

    tokens: tuple[str, ...]  # the row of each step, as written on screen
    steps: tuple[Any, ...]  # each step's numbers (query, keys, values, weights, context)
    d_k: int  # entries of a key (and of q) shown
    d_v: int  # entries of a value (and of z) shown
    cut: bool  # rows shown as their first entries, then "…" (a real head's 64)
    prefill: int  # rows of the first beat: 1 token, or a real model's whole prompt
    written: tuple[str | None, ...] = ()  # a real model: the token it writes after each step
    text: str = ""  # a real model: all it wrote

    @property
    def n(self) -> int:
        return len(self.tokens)


def _story(scenario: Scenario) -> _Story:
    """The made-up scenario's generation, of its first head (as every trace shows); or the model's own run."""
    model = scenario.model
    if model is None:
        one = scenario.heads[0]
        run = kv_cache_generation(one.embeddings, one.w_query, one.w_key, one.w_value, scaled=scenario.scaled)
        return _Story(scenario.tokens, run.steps, scenario.d_k, scenario.d_v, cut=False, prefill=1)
    from attention_math.smollm import cached_generation, display_token

    found = cached_generation(model.sentence, layer=model.layer - 1, head=model.head - 1,
                              max_new_tokens=new_tokens(scenario.n_tokens))
    return _Story(tuple(display_token(token) for token in found.tokens), found.steps, SHOWN_ENTRIES, SHOWN_ENTRIES,
                  cut=True, prefill=found.prompt_length,
                  written=tuple(None if step.written is None else display_token(step.written) for step in found.steps),
                  text="".join(display_token(token) if not token.strip() else token
                               for token in found.generation.new_tokens))


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
    draws_decoder = True  # a decoder's head (--model smollm2): its own run, the prompt at once, then what it writes

    story: _Story
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
        measure.story = measure._fitted(_story(scenario))
        if NUMBER_SIZE * measure._fit() < SMALLEST_SIZE:
            if scenario.model is not None:
                raise ScenarioError(f"sentence: the cache's {measure.story.n} rows and their numbers do not fit at "
                                    "a legible size; use a shorter sentence, or another layer or head")
            raise ScenarioError(f"d_v: the key and value caches ({scenario.d_k} + {scenario.d_v} columns) do not fit "
                                "beside the step's panel at a legible size; use fewer dimensions or decimals")
        return scenario

    def construct(self) -> None:
        s = self.scenario
        self.story = self._fitted(_story(s))
        for t, step in enumerate(self.story.steps):
            self.add_source(f"generation{t + 1}", step, s.precision)
        if s.model is None:
            self.header("The KV cache", "query", "key", "value")
        else:  # a real model's: which head, and the width of a row (its first entries shown)
            self.header("The KV cache, layer {}, head {}: rows of {}", "query", "key", "value",
                        parts=(position(s.model.layer - 1, "layer"), position(s.model.head - 1, "head"), size("d_k")))
        self.board = self._board()
        self.left = self.board.values.get_right()[0] + 0.5  # where the panel starts
        # one size for every step's panel: as large as the widest step's lines allow in the room beside the grids
        self.panel_size = min(PANEL_SIZE, SMALLEST_SIZE * (HALF_WIDTH - self.left) / self._panel_least())
        self.panel = VGroup()
        if self.story.prefill > 1:
            self._prefill()
        self._first_steps()
        self._middle_steps()
        self._last_step()
        self._summary()

    def _fitted(self, story: _Story) -> _Story:
        """The story as it fits: a real run's rows with their first entry only where two do not fit at the font
        floor (long tokens, numbers in the tens)."""
        self.story = story
        if story.cut and NUMBER_SIZE * self._fit() < SMALLEST_SIZE:
            return replace(story, d_k=1, d_v=1)
        return story

    # -- layout ---------------------------------------------------------------------------------------------
    def _digits(self) -> str:
        """The widest number a row or the panel shows: a made-up scenario's precision's widest form; a real head's
        own widest (its numbers reach tens)."""
        s, story = self.scenario, self.story
        if not story.cut:
            return "−0." + "0" * s.precision if s.precision else "−00"
        shown = [float(v) for step in story.steps for v in (*step.keys[-1, :story.d_k], *step.values[-1, :story.d_v],
                                                             *step.weights, *step.query[:story.d_k],
                                                             *step.context[:story.d_v])]
        return max((format_number(v, s.precision) for v in shown), key=len)

    def _widths(self) -> tuple[float, float, float, float]:
        """Token labels, K, the weights, V: their widths at the number size (for the fit)."""
        story = self.story
        number = text(self._digits(), size=NUMBER_SIZE).width + 0.28
        label = max(text(self._shown_token(token), size=self._label_size()).width for token in story.tokens) + 0.4
        more = number if story.cut else 0.0  # the "…" after a row's first entries
        return label, story.d_k * number + more + 0.3, number + GAP, story.d_v * number + more + 0.3

    def _shown_token(self, token: str) -> str:
        """A row's label as drawn: a made-up scenario's up to 10 characters; a real run's up to 8 (its 17 rows need
        the room beside the panel)."""
        return shorten_token(token, ROW_LABEL_CHARS) if self.story.cut else token[:10]

    def _label_size(self) -> float:
        """The rows' token labels: a made-up scenario's at the grids' label size; a real run's as large as the
        numbers (its 17 rows draw them at the font floor)."""
        return NUMBER_SIZE if self.story.cut else LABEL_SIZE

    def _panel_least(self) -> float:
        """The panel's width with its lines at the font floor: the widest of the query, the context, the reuse."""
        story, digits = self.story, self._digits()
        more = ", …" if story.cut else ""
        lines = [("q" if story.cut else f"q{story.n}") + " = (" + ", ".join([digits] * max(story.d_k, story.d_v))
                 + more + ")",
                 f"reused: rows 1 to {story.n}" if story.cut else f"reused: k, v of tokens 1 to {story.n}",
                 f"new: rows 1 to {story.prefill}"]
        if story.cut:  # a real run's lines name its tokens: the widest token after each line's words (Pango once each)
            named = [text(words, size=SMALLEST_SIZE).width + max(
                (text(shorten_token(token, 10), size=SMALLEST_SIZE).width for token in tokens if token is not None),
                default=0.0)
                for words, tokens in ((f"step {story.n}: ", story.tokens), ("writes next: ", story.written))]
            return max(*named, *(text(line, size=SMALLEST_SIZE).width for line in lines))
        lines += [f"step {story.n}: {shorten_token(token, 10)}" for token in story.tokens]
        return max(text(line, size=SMALLEST_SIZE).width for line in lines)

    def _fit(self) -> float:
        """The scale the grids are drawn at: the room left of the panel, the height between header and subtitles."""
        height = self.story.n * 0.42 + TITLE_ROOM
        room = 2 * HALF_WIDTH - self._panel_least() - 0.5
        return min(1.0, room / sum(self._widths()), (TOP - BOTTOM - 0.1) / height)

    def _row(self, t: int, field_name: str, width: int, color: str) -> list[Text]:
        numbers = [self.number(f"generation{t + 1}", field_name, t, d, color=color) for d in range(width)]
        return [*numbers, text("…", size=NUMBER_SIZE, color=color)] if self.story.cut else numbers

    def _board(self) -> _Board:
        story = self.story
        pitch = min(MOST_PITCH, max(0.42, (TOP - BOTTOM - TITLE_ROOM - 0.2) / story.n))
        rows = [self._row(t, "keys", story.d_k, KEY) for t in range(story.n)]
        v_buff = pitch - max(mob.height for row in rows for mob in row)
        labels = ([token_text(token, limit=ROW_LABEL_CHARS, size=self._label_size()) for token in story.tokens]
                  if story.cut else story.tokens)
        keys = NumberGrid(rows, row_labels=labels, color=KEY, v_buff=v_buff, label_size=self._label_size())
        values = NumberGrid([self._row(t, "values", story.d_v, VALUE) for t in range(story.n)], color=VALUE,
                            v_buff=v_buff)
        values.next_to(keys, RIGHT, buff=self._widths()[2] + GAP)
        values.align_to(keys, UP)
        middle = (keys.get_right()[0] + values.get_left()[0]) / 2  # the weights' column, between the caches
        anchors = VGroup(*(VMobject().set_points_as_corners([(middle, keys.cells[t][0].get_y(), 0)] * 2)
                           for t in range(story.n)))
        titles = VGroup(text("K cache", size=26, color=KEY).next_to(keys.brackets, UP, buff=0.15),
                        text("weights", size=26, color=WEIGHT),
                        text("V cache", size=26, color=VALUE).next_to(values.brackets, UP, buff=0.15))
        titles[1].move_to((anchors.get_x(), titles[0].get_y(), 0))
        group = VGroup(keys, values, titles, anchors)
        scale = min(self._fit(), (2 * HALF_WIDTH - self._panel_least() - 0.5) / group.width)
        group.scale(scale).align_to((-HALF_WIDTH, 0, 0), LEFT).align_to((0, TOP, 0), UP)
        self._place_bands(keys, values, titles, anchors)
        for mob in (*keys.row_labels, *(c for grid in (keys, values) for row in grid.cells for c in row)):
            mob.set_opacity(0)  # each row shows at its step
        return _Board(keys, values, titles, anchors, scale)

    def _place_bands(self, keys: NumberGrid, values: NumberGrid, titles: VGroup, anchors: VGroup) -> None:
        """Where each number belongs: its key's row, its dimension's column, its quantity's grid."""
        story = self.story
        self.rows("key", dict(enumerate(keys.row_labels)), keys, values, anchors)
        self.columns("d_k", dict(enumerate(VGroup(*(keys.cells[0][d] for d in range(story.d_k))))), keys)
        self.columns("d_v", dict(enumerate(VGroup(*(values.cells[0][d] for d in range(story.d_v))))), values)
        # each number in its own quantity's column: the K cache's brackets, the weights' header, the V cache's brackets
        self.fields("column", {f"generation{t + 1}.{name}": anchor for t in range(story.n) for name, anchor in
                               (("keys", keys.brackets), ("weights", titles[1]), ("values", values.brackets))},
                    keys, values, anchors)

    # -- one step -------------------------------------------------------------------------------------------
    def _weights(self, t: int) -> VGroup:
        """Step t's weights, each in the row of the key it weighs."""
        size = NUMBER_SIZE * self.board.scale
        column = VGroup(*(self.number(f"generation{t + 1}", "weights", j, color=WEIGHT, size=size)
                          for j in range(t + 1)))
        for j, mob in enumerate(column):
            mob.move_to(self.board.anchors[j])
        return column

    def _vector(self, name: str, t: int, field_name: str, width: int, color: str) -> VMobject:
        """``q3 = (…)`` or ``z3 = (…)``: a step's query or context, its first entries (then "…" for a real head)."""
        numbers = [value(f"generation{t + 1}", field_name, d) for d in range(width)]
        if self.story.cut:  # a real run's: the step is named above, the row goes on
            return self.label(name + " = (" + ", ".join("{}" for _ in range(width)) + ", …)", *numbers,
                              size=self.panel_size, color=color)
        return self.label(name + "{} = (" + ", ".join("{}" for _ in range(width)) + ")", position(t, "step"),
                          *numbers, size=self.panel_size, color=color)

    def _panel(self, t: int) -> VGroup:
        """The step's lines: which token, the query computed now, the new rows, the context that comes out (and the
        token a real model writes next)."""
        story = self.story
        lines = VGroup(
            self.label("step {}: {}", position(t, "step"), TokenPart(story.tokens[t], 10), size=self.panel_size,
                       color=INK),
            self._vector("q", t, "query", story.d_k, QUERY),
            self._new_rows(t),
            self._reused(t),
            self._vector("z", t, "context", story.d_v, CONTEXT),
        )
        if story.written:
            lines.add(self._writes(t))
        lines.arrange(DOWN, aligned_edge=LEFT, buff=0.3)
        if lines.width > HALF_WIDTH - self.left:
            lines.scale_to_fit_width(HALF_WIDTH - self.left)
        lines.align_to((self.left, 0, 0), LEFT).align_to((0, TOP - 0.2, 0), UP)
        return lines

    def _new_rows(self, t: int) -> VMobject:
        """The rows this step computes: its own; in a real model's first pass, every prompt token's."""
        if t + 1 == self.story.prefill and t:
            return self.label("new: rows {} to {}", position(0, "step"), position(t, "step"), size=self.panel_size,
                              color=MUTED)
        return self.label("new: k{} and v{}", position(t, "step"), position(t, "step"), size=self.panel_size,
                          color=MUTED)

    def _reused(self, t: int) -> VMobject:
        """What the step reads from the cache: nothing at the first step (or pass), token 1's rows, or tokens 1 to
        t − 1's."""
        if t + 1 <= self.story.prefill:
            return text("reused: none", size=self.panel_size, color=MUTED)
        if t == 1:
            return self.label("reused: k, v of token {}", position(0, "step"), size=self.panel_size, color=MUTED)
        many = "reused: rows {} to {}" if self.story.cut else "reused: k, v of tokens {} to {}"  # a real run's: shorter
        return self.label(many, position(0, "step"), position(t - 1, "step"), size=self.panel_size, color=MUTED)

    def _writes(self, t: int) -> VMobject:
        """The token a real model writes after step t (the next row), or that it ends there."""
        written = self.story.written[t]
        if written is None:
            return text("then it stops", size=self.panel_size, color=INK)
        return self.label("writes next: {}", TokenPart(written, 10), size=self.panel_size, color=INK)

    def _step(self, t: int) -> list[Any]:
        """The animations of step t: the new rows in, the old ones greyed, the weights and the panel anew."""
        board, first = self.board, 0 if t + 1 == self.story.prefill else t  # a first pass brings every prompt row
        new = VGroup(*(board.keys.row_labels[j] for j in range(first, t + 1)),
                     *(c for j in range(first, t + 1) for c in (*board.keys.cells[j], *board.values.cells[j])))
        old = VGroup(*(c for j in range(first) for c in (*board.keys.cells[j], *board.values.cells[j])))
        weights, panel = self._weights(t), self._panel(t)
        animations: list[Any] = [new.animate.set_opacity(1), FadeIn(weights), FadeIn(panel)]
        if board.weights:
            animations += [old.animate.set_opacity(0.45), FadeOut(board.weights[-1]), FadeOut(self.panel)]
        if t == 1 and self.story.prefill == 1:
            animations.append(board.keys.row_labels[0].animate.set_opacity(1))
        board.weights.append(weights)
        self.panel = panel
        return animations

    # -- the beats ------------------------------------------------------------------------------------------
    def _opening(self) -> list[Any]:
        """The first beat's animations: the empty caches' brackets and titles, then the first step (or pass)."""
        board = self.board
        return [FadeIn(board.keys.brackets, board.values.brackets, board.titles), *self._step(self.story.prefill - 1)]

    def _prefill(self) -> None:
        """A real model's first pass: the whole prompt at once, every row of the cache, the last token's query."""
        story, model = self.story, self.scenario.model
        assert model is not None
        last = story.prefill - 1
        self.beat(f"The prompt's {self.cite(position(last, 'step'))} tokens go through the model at once. Layer "
                  f"{self.cite(position(model.layer - 1, 'layer'))} keeps each one's key and value, "
                  f"{self.cite(size('d_k'))} numbers each, {'the first two' if story.d_k == 2 else 'the first'} shown. "
                  f"{self.quote(last, tokens=story.tokens)} weighs them all, and the model "
                  f"{'ends its text there' if story.written[last] is None else 'writes its next token'}.",
                  *self._opening(), run_time=1.5, wait=1.8)

    def _first_steps(self) -> None:
        story = self.story
        if story.prefill == 1:
            self.beat(f"Generating, step {self.cite(position(0, 'step'))} projects the first token: its query, its "
                      "key and its value. The key and value go into the cache.", *self._opening(), run_time=1.5,
                      wait=1.5)
        for t in range(story.prefill, min(story.prefill + SPELLED - 1, story.n - 1)):
            self.beat(self._step_said(t), *self._step(t), run_time=1.5, wait=1.5)

    def _step_said(self, t: int) -> str:
        """The caption of a step told on its own: the first after the opening, or the next."""
        step = self.cite(position(t, "step"))
        if t > self.story.prefill:
            return (f"Step {step}: the new query meets all {self.cite(position(t, 'step'))} cached keys; its weights "
                    "sit beside the rows they weigh, and give its context z.")
        if self.story.prefill == 1:
            return (f"Step {step}: only {self.quote(t, tokens=self.story.tokens)} is projected, one new row of K and "
                    "of V. The earlier rows come from the cache, greyed: reused, not computed again.")
        return (f"Step {step}: only {self.quote(t, tokens=self.story.tokens)}, the token the model just wrote, goes "
                "through: one new row of K and of V. The earlier rows come from the cache, greyed: not computed "
                "again.")

    def _middle_steps(self) -> None:
        story = self.story
        first, last = story.prefill + SPELLED - 1, story.n - 2
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
        story = self.story
        t = story.n - 1
        if t < story.prefill:  # a real model that wrote one token only (or none): its first pass was the last
            return
        last = self.quote(t, "query", tokens=story.tokens)
        rows = self.cite(position(t, "step"))
        z = ", ".join(self.fmt(f"generation{t + 1}", "context", d) for d in range(story.d_v))
        if not story.cut:
            said = (f"The last token, {last}, reads all {rows} rows of the cache; its context, ({z}), is row "
                    f"{self.cite(position(t, 'step'))} of masked attention.")
        else:
            said = (f"The last token read, {last}, reads all {rows} rows of the cache; its z, ({z}, …), is row "
                    f"{self.cite(position(t, 'step'))} of this head's masked attention over the whole text.")
        self.beat(said, *self._step(t), run_time=1.5, wait=1.8)

    def _summary(self) -> None:
        formula = MathTex("z_t = \\mathrm{softmax}\\big(q_t K_{\\le t}^{\\top}/\\sqrt{d_k}\\big)\\, V_{\\le t}",
                          font_size=34, color=INK)
        note = VGroup(*(text(line, size=SMALLEST_SIZE + 2, color=MUTED) for line in (
            "per step: one query,", "one key, one value;", "the rest from the cache"))).arrange(
            DOWN, aligned_edge=LEFT, buff=0.12)
        if self.story.cut:
            self._summary_of_run(formula, note)
            return
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

    def _summary_of_run(self, formula: MathTex, note: VGroup) -> None:
        """A real model's last frame: in the panel's place, the formula, the note and the text the model wrote."""
        room = HALF_WIDTH - self.left
        if formula.width > room:
            formula.scale_to_fit_width(room)
        summary = VGroup(formula, note, self._written()).arrange(DOWN, aligned_edge=LEFT, buff=0.45)
        summary.align_to((self.left, 0, 0), LEFT).align_to((0, TOP - 0.2, 0), UP)
        self.summary = summary
        self.beat("With a cache, each token the model writes computes one query, one key and one value, and reads "
                  "the rest: the same z as masked attention over the whole text.",
                  FadeOut(self.panel), FadeIn(summary, shift=UP * 0.1), run_time=1.2, wait=2.5)

    def _written(self) -> VMobject:
        """What a real model wrote, under the note: its own greedy continuation, cut short where it would not fit."""
        room, story = HALF_WIDTH - self.left, self.story
        limit = next(limit for limit in range(24, 3, -1)
                     if text(shorten_token(story.text, limit), size=LABEL_SIZE).width <= room or limit == 4)
        words = VGroup(self.label("after '{}',", TokenPart(story.tokens[story.prefill - 1], 10), size=SMALLEST_SIZE,
                                  color=MUTED),
                       text("the model wrote:", size=SMALLEST_SIZE, color=MUTED),
                       self.label("{}", TokenPart(story.text, limit), size=LABEL_SIZE, color=INK) if story.text else
                       text("nothing: its text ends", size=LABEL_SIZE, color=INK))
        return words.arrange(DOWN, aligned_edge=LEFT, buff=0.1)
