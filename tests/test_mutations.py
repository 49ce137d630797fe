"""The mutation test: wrong numbers planted in the real scenes must fail the number checks.

Each planted fault is a small change to how a scene gets, formats, draws or says its numbers,
applied with ``monkeypatch`` to the real scene code while one scene is dry-run. The checks are the
ones every scene runs under (:func:`scene_helpers.number_problems`, and digits drawn outside the
recording path); each fault must make them fail, for every scenario below. A fault that changes
nothing on screen or in the captions would prove nothing, so each is first shown to change what
the scene shows or says.

The planted faults:

=====================  =========================================================================
wrong source           CausalMask registers the unmasked trace as its masked ("causal") source
doubled product        Projection's hand products x_i[m]·W_Q[m, 0] drawn twice as large
shifted total          ScaleAndSoftmax's running total of the weights misses each bar's own weight
typed number           ScaleAndSoftmax's "= √d_k =" label typed as text, outside the recording path
wrong precision        Scores formats the query's numbers with one decimal more than the scenario
wrong query row        Scores explains the token after the query (its q, products and scores)
stale caption          Scores' caption for the first key says the last key's score
another seed           WhyScale samples with seed 1 instead of the lecture's seed 0
plotted elsewhere      WhyScale records each spread of q·k/√d as plotted where q·k's is drawn
swapped heads          MultiHead registers head 2's trace as head 1's
flipped output         MultiHead's output row (concat × W_O) drawn with the wrong sign
swapped scores         Scores' summary puts k1's score beside k2's bar and k2's beside k1's
weights one row down   WeightedSum's table shows each row's weight in the row below (the last on top)
typed rule             GenerationOrder's rule "query i reads keys 1 … i" typed as text, outside the
                       recording path
masked as a number     MaskedScores' mask writes a large negative number (−10⁹) where a score is −∞
exps one key down      MaskedScores' exp(s − m) of each key in the line of the key below (the last on top)
route of another row   Renormalise's renormalised weights taken from the row above the one it follows
future weight kept     MaskedContext shows the keys after the query with their unmasked weights
unmasked chain         MaskedContext draws the masked plane's links where the unmasked chain runs
kept unscaled          AttentionDropout shows each kept weight as it was, not ×1/(1 − p)
another dropout seed   AttentionDropout draws with seed 1 instead of the lecture's 123
triangle one row down  TriangularMap puts each row's weights in the row below (the last on top)
first row unmasked     TriangularMap shows the first token's row without the mask
head 2 read as head 1  WhyHeads draws head 2's weights of the query as head 1's bars' numbers
stale head 1 scores    PerHead's table keeps head 1's scores in head 2's panel
unscaled per head      PerHead's ÷ √d_k column shows each head's scores multiplied by √d_k instead
blocks swapped         FusedProjection draws head 1's columns of the big W_Q and Q in head 2's block, and back
unmasked weights       CausalHeads registers head 1's weights without the mask as its masked ones
another head           RealWeights registers the next head's trace (of the same layer) as the model's
bias left out          RealProjection's q, k, v shown without their biases (x·W, not x·W + b)
q and k unturned       RealProjection shows a decoder's q and k before RoPE where it says turned
counted from 0         RealHeadPlace says the layer's number as the model's files count it (from 0)
unscaled scores        RealWeights writes q·k where it says q·k ÷ √32
another step's loss    TrainingSteps writes, by each step's point, the loss of the step after it
start shown as learned TrainingSteps shows the last step's attention rows as they were at step 0
the other it's row     TrainingSteps draws each "it"'s chart with the other "it"'s weights (true numbers, in
                       the other's chart)
W_K in W_Q's cells     LearnedWeights writes W_K's entries in W_Q's map (true numbers of the wrong matrix, in
                       the same rows and columns: its captions cite W_Q's, never shown)
learned one key down   LearnedPipeline shows each key's weight in the row of the key below (the last on top)
backwards unmoved      OrderBlind registers the sentence in order as its backwards attention
wrong θ                RopeScores turns with base 100 instead of RoFormer's 10000 (pair i's θ_i wrong for i > 0)
keys one position on   RopeScores turns each key by the angle of the position after its own (queries right)
θ of the other pair    RopePairs writes each pair's θ_i under the other pair (the last first)
key turned as query    ClockHands turns the key by the query's position m, not its own n (every clock: the angle
                       between the hands, the shares and the score of q and k unturned)
counts swapped         CacheSavings draws each step's multiplies with the cache at the end of the bar without,
                       and back
cache weights shifted  KVCacheSteps draws each step's weight of key j beside the cached row of key j + 1
                       (the last on top)
group heads swapped    GroupedHeads draws head 2's weights in head 1's column, and back
nothing shared         GroupedHeads takes every query head for its own key/value head (g = h)
K/V heads tiled        GroupedHeads of a decoder's layer (SmolLM2): query head h reads key/value head h mod 3
                       (numpy's tile) instead of h // 3 (repeat_kv's repeat): its weights and the output
next model's KiB       CacheMemory writes each model's KiB a token in the row above the next model's
KiB of 1000 bytes      CacheMemory counts the KiB a token in thousands of bytes
factor one tile late   OnlineSoftmax writes each tile's exp(m_old − m) in the row of the tile before (the first last)
tiles of three         OnlineSoftmax walks the row in tiles of 3 keys while the lecture's are FLASH_BLOCKS'
blocks of three        MemoryRoutes counts and draws blocks of 3 keys while the lecture's are FLASH_BLOCKS'
another head size      TiledTraffic counts the paper's traffic for a head of 128 instead of its 64
cache keys unturned    KVCacheSteps shows a decoder's cached keys as they were before RoPE turned them (the
                       weights and z as the model's: only the keys wrong)
weights under exp      ScaleAndSoftmax lays out its weights under exp(· − m), and its exps under "weight"
terms as values        WeightedSum lays out each row's terms w_j·v_j where its value goes, and back
scaled after softmax   PerHead lays out each head's weights under "÷ √d_k", and its scaled scores under "softmax"
KiB by the GiB bar     CacheMemory writes each model's KiB a token at the end of its GiB bar, and back
K and V caches swapped KVCacheSteps fills its K cache with the values and its V cache with the keys
scaled scores first    LearnedPipeline lays out its scaled scores under "q·k", and its scores under "÷ √d_k"
θ in the angle row     RopePairs writes each pair's θ_i in the row of the angles m·θ_i, and back
max and sum swapped    OnlineSoftmax lays its running sums out in the max column and its maxima in the sum column
legend ends swapped    CausalMask's legends put the scale's high end left of the bar, its low end right of it
rope legend ends       RopeScores' legends do the same (true numbers, each on the other end's side)
swapped
real legend ends       RealProjection's three colour scales (W_Q, W_K, W_V) do the same
swapped
dropout legend ends    AttentionDropout's legend after dropout draws its largest kept weight at the low end, 0 at
swapped                the high end
dropout under masked   AttentionDropout's row table fills its "masked" column with the dropout weights, and back
masked under no mask   CausalMask's row table fills its "no mask" column with the masked weights, and back
heads joined in        MultiHead joins the heads' z last head first (concat's slot c shows the other end's head)
reverse
masked heads joined    CausalHeads joins the masked heads' z last head first
in reverse
steps counted on       KVCacheSteps numbers its steps from 2 ("step 6" for the last of five tokens)
heads counted on       PerHead numbers its heads from 2 ("head 3" of two heads)
tiles counted on       OnlineSoftmax's captions number the tiles from 2
nouns' weights         TrainingSteps says the first "it"'s weight of 'dog' beside 'ball', and back (true numbers,
swapped                on screen: the caption ties them to the other noun)
backwards cited        OrderBlind's captions cite the backwards number at the forward index (a true number of the
forwards               backwards map, on screen, of another pair of tokens than the caption names)
typed into a score     Scores' last beat turns a number it drew into typed digits, Transform(recorded, typed)
typed into a cache     KVCacheSteps' last beat does the same to a number of its cache
weight
=====================  =========================================================================

The last twenty-three are true numbers with another meaning: in another quantity's column (the table's heads as
the scene registered them, ``scene.fields``), a joined row in another order (``scenes.kit.composite``), a
position past the last (``position(j, of=kind)`` checked to exist), a caption's number of another token than
its clause names (``scene.quote``), digits a Transform put on screen (``transformed_numbers``).

"Swapped scores", "θ of the other pair", "weights one row down", "exps one key down", "triangle one row
down", "head 2 read as head 1", "stale head 1 scores", "blocks swapped", "the other it's row" and "learned
one key down" draw only true numbers, each in another's place: the number checks hold every number to the
band (row, column, head's panel, pair) of the token, dimension, head or pair its fact names, as the scene
registered them.

The scene faults run with two or three of 2, 5 and 8 tokens at 3, 0 and 2 decimals (each scenario
by four faults or more), ScaleAndSoftmax's with 16 tokens at 4 decimals too; WhyScale's (it shows no
number of the scenario) with one; MultiHead's, FusedProjection's and CausalHeads' with the two-heads
preset; WhyHeads' and PerHead's with it or two tokens through two heads; the masked lecture's with a
query that has keys after it (its preset's "chased", 2 tokens asking about the first, 8 tokens about
the fifth), where the mask changes the query's row; the real-head scenes' each with one of two
all-MiniLM-L6-v2 heads (8 and 16 WordPieces); the rope lecture's with its preset (d_k 4: a slow pair
whose θ the base sets) and 2 tokens.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from manim import Transform
from number_checks import declared_checks
from scene_helpers import MODEL_SCENARIOS, Build, build_scene, load_scene_class, number_problems

from attention_math import Scenario, preset
from attention_math.rope import rope
from scenes.base import ExplainerScene
from scenes.facts import Fact
from scenes.kit.bars import BarRows
from scenes.kit.text import text

Plant = Callable[[pytest.MonkeyPatch], None]


def _wrong_source(monkeypatch: pytest.MonkeyPatch) -> None:
    add_source = ExplainerScene.add_source

    def planted(self: ExplainerScene, name: str, obj: Any, precision: int) -> None:
        add_source(self, name, self.scenario.trace() if name == "causal" else obj, precision)

    monkeypatch.setattr(ExplainerScene, "add_source", planted)


def _changed_value(field: str, change: Callable[[ExplainerScene, Fact, float], float]) -> Plant:
    def plant(monkeypatch: pytest.MonkeyPatch) -> None:
        value_of = ExplainerScene.value_of

        def planted(self: ExplainerScene, fact: Fact) -> float:
            number = value_of(self, fact)
            return change(self, fact, number) if fact.field == field else number

        monkeypatch.setattr(ExplainerScene, "value_of", planted)

    return plant


def _typed_number(monkeypatch: pytest.MonkeyPatch) -> None:
    label = ExplainerScene.label

    def planted(self: ExplainerScene, template: str, *parts: Any, **options: Any) -> Any:
        if "√" not in template:
            return label(self, template, *parts, **options)
        typed = template.format(*(self.text_for(part) for part in parts))  # drawn, never recorded
        return text(typed, size=options.get("size", 24), color=options.get("color", "#FFFFFF"))

    monkeypatch.setattr(ExplainerScene, "label", planted)


def _wrong_precision(monkeypatch: pytest.MonkeyPatch) -> None:
    add_source = ExplainerScene.add_source

    def planted(self: ExplainerScene, name: str, obj: Any, precision: int) -> None:
        add_source(self, name, obj, precision + 1 if name == "step" else precision)

    monkeypatch.setattr(ExplainerScene, "add_source", planted)


def _wrong_query_row(monkeypatch: pytest.MonkeyPatch) -> None:
    setup = ExplainerScene.setup

    def planted(self: ExplainerScene) -> None:
        setup(self)
        self.step = self.trace.query_step((self.scenario.query + 1) % self.scenario.n_tokens)
        self.add_source("step", self.step, self.scenario.precision)

    monkeypatch.setattr(ExplainerScene, "setup", planted)


def _stale_caption(monkeypatch: pytest.MonkeyPatch) -> None:
    fmt = ExplainerScene.fmt

    def planted(self: ExplainerScene, source: str, field: str, *index: int, reduce: str | None = None) -> str:
        if (source, field, index) == ("step", "scores", (0,)):
            index = (self.scenario.n_tokens - 1,)
        return fmt(self, source, field, *index, reduce=reduce)

    monkeypatch.setattr(ExplainerScene, "fmt", planted)


def _another_seed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(importlib.import_module("scenes.self_attention.why_scale"), "SEED", 1)


def _plotted_elsewhere(monkeypatch: pytest.MonkeyPatch) -> None:
    plot = ExplainerScene.plot

    def planted(self: ExplainerScene, mob: Any, axes: Any, *facts: Fact, anchor: str = "center") -> Any:
        moved = [Fact(f.source, "scaled_std", f.index, f.reduce) if f.field == "raw_std" else f for f in facts]
        return plot(self, mob, axes, *moved, anchor=anchor)

    monkeypatch.setattr(ExplainerScene, "plot", planted)


def _swapped_heads(monkeypatch: pytest.MonkeyPatch) -> None:
    add_source = ExplainerScene.add_source

    def planted(self: ExplainerScene, name: str, obj: Any, precision: int) -> None:
        add_source(self, name, self.scenario.heads[1].trace() if name == "head1" else obj, precision)

    monkeypatch.setattr(ExplainerScene, "add_source", planted)


def _swapped_scores(monkeypatch: pytest.MonkeyPatch) -> None:
    number_spot = BarRows.number_spot

    def planted(self: BarRows, row: int, number: Any, buff: float = 0.12) -> Any:
        return number_spot(self, {0: 1, 1: 0}.get(row, row), number, buff)  # k1's number at k2's bar, and back

    monkeypatch.setattr(BarRows, "number_spot", planted)


def _weights_one_row_down(monkeypatch: pytest.MonkeyPatch) -> None:
    number = ExplainerScene.number

    def planted(self: ExplainerScene, source: str, field: str, *index: int, **options: Any) -> Any:
        if (source, field) == ("step", "weights") and len(index) == 1:  # row j draws row j − 1's weight
            index = ((index[0] - 1) % self.scenario.n_tokens,)
        return number(self, source, field, *index, **options)

    monkeypatch.setattr(ExplainerScene, "number", planted)


def _typed_rule(monkeypatch: pytest.MonkeyPatch) -> None:
    label = ExplainerScene.label

    def planted(self: ExplainerScene, template: str, *parts: Any, **options: Any) -> Any:
        if "reads keys" not in template:
            return label(self, template, *parts, **options)
        typed = template.format(*(part.shown if hasattr(part, "shown") else self.text_for(part) for part in parts))
        return text(typed, size=options.get("size", 24), color=options.get("color", "#FFFFFF"))

    monkeypatch.setattr(ExplainerScene, "label", planted)


class _Replaced:
    """An attention_math result with one field replaced (the rest as they are)."""

    def __init__(self, wrapped: Any, field: str, replacement: np.ndarray) -> None:
        self._wrapped, self._field, self._replacement = wrapped, field, replacement

    def __getattr__(self, name: str) -> Any:
        return self._replacement if name == self._field else getattr(self._wrapped, name)


def _replaced_source(source: str, field: str, change: Callable[[np.ndarray], np.ndarray]) -> Plant:
    """The scene's source ``source`` registered with ``change(field)`` in place of its ``field``."""
    def plant(monkeypatch: pytest.MonkeyPatch) -> None:
        add_source = ExplainerScene.add_source

        def planted(self: ExplainerScene, name: str, obj: Any, precision: int) -> None:
            if name == source:
                obj = _Replaced(obj, field, change(np.asarray(getattr(obj, field))))
            add_source(self, name, obj, precision)

        monkeypatch.setattr(ExplainerScene, "add_source", planted)

    return plant


def _other_head(scene_source: str, drawn_source: str, field: str) -> Plant:
    """The scene's numbers of ``scene_source.field`` drawn (and recorded) from ``drawn_source`` instead."""
    def plant(monkeypatch: pytest.MonkeyPatch) -> None:
        number = ExplainerScene.number

        def planted(self: ExplainerScene, source: str, field_name: str, *index: int, **options: Any) -> Any:
            if (source, field_name) == (scene_source, field):
                source = drawn_source
            return number(self, source, field_name, *index, **options)

        monkeypatch.setattr(ExplainerScene, "number", planted)

    return plant


def _exps_one_key_down(monkeypatch: pytest.MonkeyPatch) -> None:
    number = ExplainerScene.number

    def planted(self: ExplainerScene, source: str, field: str, *index: int, **options: Any) -> Any:
        if (source, field) == ("causal_step", "exps"):  # key j's line draws key j − 1's exp
            index = ((index[0] - 1) % self.scenario.n_tokens,)
        return number(self, source, field, *index, **options)

    monkeypatch.setattr(ExplainerScene, "number", planted)


def _blocks_swapped(monkeypatch: pytest.MonkeyPatch) -> None:
    number = ExplainerScene.number

    def planted(self: ExplainerScene, source: str, field: str, *index: int, **options: Any) -> Any:
        if (source, field) in (("fused", "w_query_big"), ("fused", "queries_big")):  # column c shows c ± d_k
            d_k = self.scenario.d_k
            column = index[-1] + d_k if index[-1] < d_k else index[-1] - d_k if index[-1] < 2 * d_k else index[-1]
            index = (*index[:-1], column)
        return number(self, source, field, *index, **options)

    monkeypatch.setattr(ExplainerScene, "number", planted)


def _future_weight_kept(scene: ExplainerScene, fact: Fact, number: float) -> float:
    """A masked weight of a key after its query, shown as it was without the mask."""
    if fact.source == "causal" and len(fact.index) == 2 and fact.index[1] > fact.index[0]:
        return float(scene.trace.weights[fact.index])
    return number


def _unmasked_chain(monkeypatch: pytest.MonkeyPatch) -> None:
    value_of = ExplainerScene.value_of

    def planted(self: ExplainerScene, fact: Fact) -> float:
        if fact.source == "causal_query_step" and fact.field == "running_context":
            return value_of(self, Fact("step", fact.field, fact.index, fact.reduce))
        return value_of(self, fact)

    monkeypatch.setattr(ExplainerScene, "value_of", planted)


def _kept_unscaled(scene: ExplainerScene, fact: Fact, number: float) -> float:
    """A kept weight after dropout, shown as it was before (not ×1/(1 − p))."""
    if fact.source == "dropout" and len(fact.index) == 2:
        obj, _ = scene.sources["dropout"]
        return float(obj.before[fact.index]) if obj.kept[fact.index] else number
    return number


def _another_dropout_seed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(importlib.import_module("scenes.masked.dropout"), "SEED", 1)


def _triangle_one_row_down(monkeypatch: pytest.MonkeyPatch) -> None:
    number = ExplainerScene.number

    def planted(self: ExplainerScene, source: str, field: str, *index: int, **options: Any) -> Any:
        if (source, field) == ("causal", "weights") and len(index) == 2:  # row i draws row i − 1's weight
            index = ((index[0] - 1) % self.scenario.n_tokens, index[1])
        return number(self, source, field, *index, **options)

    monkeypatch.setattr(ExplainerScene, "number", planted)


def _first_row_unmasked(scene: ExplainerScene, fact: Fact, number: float) -> float:
    if fact.source == "causal" and fact.index[:1] == (0,):
        return float(scene.trace.weights[fact.index])
    return number


def _unmasked_weights(monkeypatch: pytest.MonkeyPatch) -> None:
    add_source = ExplainerScene.add_source

    def planted(self: ExplainerScene, name: str, obj: Any, precision: int) -> None:
        add_source(self, name, self.scenario.heads[0].trace() if name == "causal_head1" else obj, precision)

    monkeypatch.setattr(ExplainerScene, "add_source", planted)


def _another_head(monkeypatch: pytest.MonkeyPatch) -> None:
    add_source = ExplainerScene.add_source

    def planted(self: ExplainerScene, name: str, obj: Any, precision: int) -> None:
        model = self.scenario.model
        if name == "model" and model is not None:  # the next head of the same layer: real numbers, another head's
            chosen = self.scenario.model_head()
            obj = dataclasses.replace(model, head=(chosen.head + 1) % chosen.n_heads + 1).head_of_model().trace
        add_source(self, name, obj, precision)

    monkeypatch.setattr(ExplainerScene, "add_source", planted)


def _unturned(monkeypatch: pytest.MonkeyPatch) -> None:
    add_source = ExplainerScene.add_source

    def planted(self: ExplainerScene, name: str, obj: Any, precision: int) -> None:
        if name == "model" and hasattr(obj, "unrotated_queries"):  # a decoder's q and k shown before RoPE as after
            obj = dataclasses.replace(obj, queries=obj.unrotated_queries, keys=obj.unrotated_keys)
        add_source(self, name, obj, precision)

    monkeypatch.setattr(ExplainerScene, "add_source", planted)


def _backwards_unmoved(monkeypatch: pytest.MonkeyPatch) -> None:
    add_source = ExplainerScene.add_source

    def planted(self: ExplainerScene, name: str, obj: Any, precision: int) -> None:
        add_source(self, name, self.trace if name == "backwards" else obj, precision)

    monkeypatch.setattr(ExplainerScene, "add_source", planted)


def _without_bias(scene: ExplainerScene, fact: Fact, number: float) -> float:
    biases = {"queries": "bias_query", "keys": "bias_key", "values": "bias_value"}
    if fact.source != "model" or fact.field not in biases:
        return number
    return number - float(getattr(scene.scenario.model_head(), biases[fact.field])[fact.index[-1]])


def _bias_left_out(monkeypatch: pytest.MonkeyPatch) -> None:
    value_of = ExplainerScene.value_of
    monkeypatch.setattr(ExplainerScene, "value_of", lambda self, fact: _without_bias(self, fact, value_of(self, fact)))


REAL_HEAD = "scenes.real_head"


def _another_steps_loss(scene: ExplainerScene, fact: Fact, number: float) -> float:
    """The loss of the step after the fact's (the first step's after the last)."""
    losses = scene.sources[fact.source][0].step_losses
    return float(losses[(fact.index[0] + 1) % len(losses)])


def _start_shown_as_learned(scene: ExplainerScene, fact: Fact, number: float) -> float:
    run = scene.sources[fact.source][0]
    return float(run.rows[(0, *fact.index[1:])]) if fact.index[0] == run.steps else number


def _the_other_its_row(monkeypatch: pytest.MonkeyPatch) -> None:
    number = ExplainerScene.number

    def planted(self: ExplainerScene, source: str, field: str, *index: int, **options: Any) -> Any:
        if (source, field) == ("training", "rows"):  # chart m draws (and records) the other "it"'s weights
            index = (index[0], 1 - index[1], index[2])
        return number(self, source, field, *index, **options)

    monkeypatch.setattr(ExplainerScene, "number", planted)


def _cache_weights_shifted(monkeypatch: pytest.MonkeyPatch) -> None:
    number = ExplainerScene.number

    def planted(self: ExplainerScene, source: str, field: str, *index: int, **options: Any) -> Any:
        if source.startswith("generation") and field == "weights":  # key j's place shows key j − 1's weight
            steps = int(source.removeprefix("generation"))
            index = ((index[0] - 1) % steps,)
        return number(self, source, field, *index, **options)

    monkeypatch.setattr(ExplainerScene, "number", planted)


def _wrong_theta(monkeypatch: pytest.MonkeyPatch) -> None:
    module = importlib.import_module("scenes.rope.rope_scores")
    monkeypatch.setattr(module.RopeScores, "rope_base", lambda self: 100.0)


class _KeysOneOn:
    """A RoPE trace whose keys were turned one position too far: the scores, scaled scores and weights of that."""

    def __init__(self, trace: Any) -> None:
        self._trace = trace
        n = trace.n_tokens
        queries = rope(trace.queries, np.arange(n), base=trace.base)
        keys = rope(trace.keys, np.arange(n) + 1, base=trace.base)
        self.scores = queries @ keys.T
        self.scaled_scores = self.scores / trace.sqrt_d_k
        exps = np.exp(self.scaled_scores - self.scaled_scores.max(axis=1, keepdims=True))
        self.weights = exps / exps.sum(axis=1, keepdims=True)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._trace, name)


def _keys_one_on(monkeypatch: pytest.MonkeyPatch) -> None:
    module = importlib.import_module("scenes.rope.rope_scores")
    real = module.rope_attention
    monkeypatch.setattr(module, "rope_attention", lambda *args, **options: _KeysOneOn(real(*args, **options)))


def _key_turned_as_query(monkeypatch: pytest.MonkeyPatch) -> None:
    module = importlib.import_module("scenes.rope.rope_clock")
    real = module.rope_clock

    def planted(query: Any, key: Any, query_position: float, key_position: float, **options: Any) -> Any:
        return real(query, key, query_position, query_position, **options)

    monkeypatch.setattr(module, "rope_clock", planted)


def _theta_of_the_other_pair(monkeypatch: pytest.MonkeyPatch) -> None:
    number = ExplainerScene.number

    def planted(self: ExplainerScene, source: str, field: str, *index: int, **options: Any) -> Any:
        if (source, field) == ("rope", "frequencies"):  # pair i draws pair (pairs − 1 − i)'s θ
            index = (self.scenario.d_k // 2 - 1 - index[0],)
        return number(self, source, field, *index, **options)

    monkeypatch.setattr(ExplainerScene, "number", planted)


def _factor_one_tile_late(monkeypatch: pytest.MonkeyPatch) -> None:
    number = ExplainerScene.number

    def planted(self: ExplainerScene, source: str, field: str, *index: int, **options: Any) -> Any:
        if source == "online" and field == "rescales":  # tile t's row shows tile t + 1's factor
            tiles = len(self.sources["online"][0].steps)
            index = ((index[0] + 1) % tiles,)
        return number(self, source, field, *index, **options)

    monkeypatch.setattr(ExplainerScene, "number", planted)


def _tiles_of_three(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(importlib.import_module("scenes.flash_attention.online_softmax"), "FLASH_BLOCKS", (3, 2))


def _blocks_of_three(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(importlib.import_module("scenes.flash_attention.memory_routes"), "FLASH_BLOCKS", (3, 2))


def _another_head_size(monkeypatch: pytest.MonkeyPatch) -> None:
    module = importlib.import_module("scenes.flash_attention.tiled_traffic")
    monkeypatch.setattr(module, "a100_traffic", functools.partial(module.a100_traffic, d=128))


def _counts_swapped(monkeypatch: pytest.MonkeyPatch) -> None:
    number = ExplainerScene.number
    other = {"multiplies_with_cache": "multiplies_without_cache", "multiplies_without_cache": "multiplies_with_cache"}

    def planted(self: ExplainerScene, source: str, field: str, *index: int, **options: Any) -> Any:
        if source.startswith("cost") and field in other:
            field = other[field]
        return number(self, source, field, *index, **options)

    monkeypatch.setattr(ExplainerScene, "number", planted)


def _group_heads_swapped(monkeypatch: pytest.MonkeyPatch) -> None:
    number = ExplainerScene.number
    other = {"head1": "head2", "head2": "head1"}

    def planted(self: ExplainerScene, source: str, field: str, *index: int, **options: Any) -> Any:
        if type(self).__name__ == "GroupedHeads" and field == "weights":
            source = other.get(source, source)
        return number(self, source, field, *index, **options)

    monkeypatch.setattr(ExplainerScene, "number", planted)


def _nothing_shared(monkeypatch: pytest.MonkeyPatch) -> None:
    module = importlib.import_module("scenes.inference.grouped_heads")
    monkeypatch.setattr(module, "shared_key_value_heads", lambda w_key, w_value: len(w_key))


def _kv_heads_tiled(monkeypatch: pytest.MonkeyPatch) -> None:
    from attention_math import GroupedQueryTrace, softmax

    module = importlib.import_module("scenes.inference.grouped_heads")
    real = module.layer_heads

    def planted(sentence: str, *, layer: int) -> Any:
        found = real(sentence, layer=layer)
        heads = found.grouped.heads
        wrong = []
        for h, trace in enumerate(heads):
            shared = heads[h % 3 * 3]  # the first query head of key/value head h mod 3: its turned keys, its values
            scaled = np.where(np.tril(np.ones(trace.scores.shape, dtype=bool)), trace.queries @ shared.keys.T / 8,
                              -np.inf)
            weights = softmax(scaled)
            wrong.append(dataclasses.replace(trace, keys=shared.keys, values=shared.values, scaled_scores=scaled,
                                             scores=trace.queries @ shared.keys.T, weights=weights,
                                             context=weights @ shared.values))
        concat = np.concatenate([trace.context for trace in wrong], axis=1)
        grouped = GroupedQueryTrace(tuple(wrong), concat, found.grouped.w_out, concat @ found.grouped.w_out,
                                    n_kv_heads=3)
        return dataclasses.replace(found, grouped=grouped)

    monkeypatch.setattr(module, "layer_heads", planted)


def _next_models_kib(monkeypatch: pytest.MonkeyPatch) -> None:
    module = importlib.import_module("scenes.inference.cache_memory")
    real = module.value

    def planted(source: str, field: str, *index: int, **options: Any) -> Any:
        if field == "kib_per_token" and source.startswith("memory"):  # model k's row shows model k + 1's (the last 1's)
            k = int(source.removeprefix("memory"))
            source = f"memory{k % 4 + 1}"
        return real(source, field, *index, **options)

    monkeypatch.setattr(module, "value", planted)


def _kib_of_1000_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    module = importlib.import_module("scenes.inference.cache_memory")
    real = module.cache_memory

    def planted(config: Any, tokens: int) -> Any:
        memory = real(config, tokens)
        return dataclasses.replace(memory, kib_per_token=memory.bytes_per_token / 1000)

    monkeypatch.setattr(module, "cache_memory", planted)


def _key_in_query_cells(monkeypatch: pytest.MonkeyPatch) -> None:
    number = ExplainerScene.number

    def planted(self: ExplainerScene, source: str, field: str, *index: int, **options: Any) -> Any:
        return number(self, source, "w_key" if (source, field) == ("training", "w_query") else field, *index,
                      **options)

    monkeypatch.setattr(ExplainerScene, "number", planted)


# -- true numbers with another meaning: another quantity's column, a joined row out of order, a position past the
# last, a caption that ties a number to the other token, digits typed in through a Transform ------------------


def _legend_ends_swapped(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every legend puts its high end left of the bar and its low end right of it (true numbers, swapped)."""
    heatmap = importlib.import_module("scenes.kit.heatmap")
    ends = heatmap.Legend.ends

    def planted(self: Any, low: Any, high: Any) -> tuple[Any, Any]:
        high_placed, low_placed = ends(self, high, low)
        return low_placed, high_placed

    monkeypatch.setattr(heatmap.Legend, "ends", planted)


def _dropout_legend_ends_swapped(monkeypatch: pytest.MonkeyPatch) -> None:
    """AttentionDropout's legend after dropout is drawn with its largest kept weight at the low end and 0 at the high
    end (true numbers, each on the other's side; its first legend, before dropout, is right)."""
    dropout = importlib.import_module("scenes.masked.dropout")
    ends_legend = dropout.ends_legend

    def planted(scene: Any, low: Any, high: Any, hue: str, **options: Any) -> Any:
        return ends_legend(scene, high, low, hue, **options)

    monkeypatch.setattr(dropout, "ends_legend", planted)


def _max_and_sum_swapped(monkeypatch: pytest.MonkeyPatch) -> None:
    """OnlineSoftmax lays out its running sums in the max column, and its maxima in the sum column."""
    cls = importlib.import_module("scenes.flash_attention.online_softmax").OnlineSoftmax
    place = cls._place

    def planted(self: Any, table: Any) -> None:
        table.maxima, table.sums = table.sums, table.maxima
        place(self, table)

    monkeypatch.setattr(cls, "_place", planted)


def _columns_swapped(module: str) -> Plant:
    """A two-column table (``key_column``) of ``module``'s scene fills its columns in the other order, the heads
    as they were."""
    def plant(monkeypatch: pytest.MonkeyPatch) -> None:
        scene_module = importlib.import_module(module)
        key_column = scene_module.key_column

        def planted(scene: Any, grid: Any, columns: Any, **options: Any) -> Any:
            return key_column(scene, grid, list(columns)[::-1], **options)

        monkeypatch.setattr(scene_module, "key_column", planted)

    return plant


def _softmax_columns_swapped(monkeypatch: pytest.MonkeyPatch) -> None:
    """ScaleAndSoftmax lays out its weights in the exp(· − m) column, and its exps in the weight column."""
    cls = importlib.import_module("scenes.self_attention.softmax").ScaleAndSoftmax
    place = cls._place

    def planted(self: Any, labels: Any, columns: dict[str, Any], *rest: Any) -> Any:
        columns = {**columns, "exps": columns["weights"], "weights": columns["exps"]}
        return place(self, labels, columns, *rest)

    monkeypatch.setattr(cls, "_place", planted)


def _terms_as_values(monkeypatch: pytest.MonkeyPatch) -> None:
    """WeightedSum lays out each row's terms w_j·v_j where its value v_j goes, and the value where the terms go."""
    cls = importlib.import_module("scenes.self_attention.weighted_sum").WeightedSum
    lay_out = cls._lay_out

    def planted(self: Any, table: Any) -> None:
        for row in table.rows:
            row.submobjects[3], row.submobjects[5] = row.submobjects[5], row.submobjects[3]
        lay_out(self, table)

    monkeypatch.setattr(cls, "_lay_out", planted)


def _scaled_after_softmax(monkeypatch: pytest.MonkeyPatch) -> None:
    """PerHead lays out each head's weights under "÷ √d_k", and its scaled scores under "softmax"."""
    cls = importlib.import_module("scenes.multi_head.per_head").PerHead
    column = cls._column

    def planted(self: Any, source: str, field: str, layout: Any) -> Any:
        rights = layout.columns
        swapped = {**rights, "scaled_scores": rights["weights"], "weights": rights["scaled_scores"]}
        return column(self, source, field, dataclasses.replace(layout, columns=swapped))

    monkeypatch.setattr(cls, "_column", planted)


def _kib_by_the_gib_bar(monkeypatch: pytest.MonkeyPatch) -> None:
    """CacheMemory writes each model's KiB a token at the end of its GiB bar, and its GiB at the end of its KiB bar."""
    cls = importlib.import_module("scenes.inference.cache_memory").CacheMemory
    rows = cls._rows

    def planted(self: Any) -> Any:
        made = rows(self)
        for kib, gib in zip(*made.numbers, strict=True):
            there = gib.get_center()
            gib.move_to(kib.get_center())
            kib.move_to(there)
        return made

    monkeypatch.setattr(cls, "_rows", planted)


def _caches_swapped(monkeypatch: pytest.MonkeyPatch) -> None:
    """KVCacheSteps fills its K cache with the values and its V cache with the keys (d_k = d_v: the same shapes)."""
    cls = importlib.import_module("scenes.inference.kv_cache").KVCacheSteps
    row = cls._row

    def planted(self: Any, t: int, field: str, width: int, color: str) -> Any:
        return row(self, t, {"keys": "values", "values": "keys"}.get(field, field), width, color)

    monkeypatch.setattr(cls, "_row", planted)


def _cache_keys_unturned(monkeypatch: pytest.MonkeyPatch) -> None:
    """KVCacheSteps shows a decoder's cached keys before RoPE: each row turned back by its own position."""
    module = importlib.import_module("scenes.inference.kv_cache")
    story = module._story

    def planted(scenario: Any) -> Any:
        told = story(scenario)
        steps = tuple(dataclasses.replace(step, keys=rope(step.keys, -np.arange(len(step.keys)), base=100000.0))
                      for step in told.steps)
        return dataclasses.replace(told, steps=steps)

    monkeypatch.setattr(module, "_story", planted)


def _scaled_scores_first(monkeypatch: pytest.MonkeyPatch) -> None:
    """LearnedPipeline lays out its scaled scores under "q·k", and its scores under "÷ √d_k"."""
    cls = importlib.import_module("scenes.learned.learned_pipeline").LearnedPipeline
    column = cls._column

    def planted(self: Any, field: str, head: Any, left: float, color: str) -> Any:
        return column(self, {"scores": "scaled_scores", "scaled_scores": "scores"}.get(field, field), head, left, color)

    monkeypatch.setattr(cls, "_column", planted)


def _theta_in_the_angle_row(monkeypatch: pytest.MonkeyPatch) -> None:
    """RopePairs writes each pair's θ_i in the row of the angles m·θ_i, and the angles in θ_i's row."""
    cls = importlib.import_module("scenes.rope.rope_pairs").RopePairs
    row = cls._row

    def planted(self: Any, name: str, numbers: Any, xs: Any) -> Any:
        return row(self, {"theta": "angle", "angle": "theta"}.get(name, name), numbers, xs)

    monkeypatch.setattr(cls, "_row", planted)


def _joined_in_reverse(source: str) -> Plant:
    """The heads' z joined last head first: slot c of concat shows the column of the head at the other end."""
    def plant(monkeypatch: pytest.MonkeyPatch) -> None:
        number = ExplainerScene.number

        def planted(self: ExplainerScene, name: str, field: str, *index: int, **options: Any) -> Any:
            if (name, field) == (source, "concat"):
                d_v, heads = self.scenario.d_v, self.scenario.n_heads
                row, c = index
                index = (row, (heads - 1 - c // d_v) * d_v + c % d_v)
            return number(self, name, field, *index, **options)

        monkeypatch.setattr(ExplainerScene, "number", planted)

    return plant


def _counted_on(module: str, kind: str) -> Plant:
    """``module``'s scene numbers each thing of ``kind`` one on ("step 2" for the first step): the last is past
    the end of the sentence, or of the heads."""
    def plant(monkeypatch: pytest.MonkeyPatch) -> None:
        scene_module = importlib.import_module(module)
        position = scene_module.position

        def planted(j: int, of: str = "token") -> Fact:
            return position(j + 1 if of == kind else j, of)

        monkeypatch.setattr(scene_module, "position", planted)

    return plant


def _caption_swapped(source: str, swap: Callable[[ExplainerScene, tuple[int, ...]], tuple[int, ...]]) -> Plant:
    """A caption says a number of ``source`` at another index (``swap``) than the one its words name: a true number,
    on screen, tied to the wrong token."""
    def plant(monkeypatch: pytest.MonkeyPatch) -> None:
        fmt = ExplainerScene.fmt

        def planted(self: ExplainerScene, name: str, field: str, *index: int, reduce: str | None = None) -> str:
            if name == source and field in ("rows", "scaled_scores", "weights"):
                index = swap(self, index)
            return fmt(self, name, field, *index, reduce=reduce)

        monkeypatch.setattr(ExplainerScene, "fmt", planted)

    return plant


def _nouns_swapped(scene: ExplainerScene, index: tuple[int, ...]) -> tuple[int, ...]:
    dog, ball = scene.run.referents  # type: ignore[attr-defined]
    step, referrer, key = index
    return step, referrer, {dog: ball, ball: dog}.get(key, key)


def _forward_index(scene: ExplainerScene, index: tuple[int, ...]) -> tuple[int, ...]:
    n = scene.scenario.n_tokens
    return tuple(n - 1 - i for i in index)  # the backwards number cited where the forward one stands


def _typed_through_transform(monkeypatch: pytest.MonkeyPatch) -> None:
    """The scene's last beat turns a number it drew into typed digits (one unit more in the last decimal) with
    ``Transform(recorded, typed)``: the recorded mobject keeps its text, the screen shows the typed one."""
    beat = ExplainerScene.beat

    def planted(self: ExplainerScene, caption: str, *animations: Any, **options: Any) -> None:
        present = {id(m) for top in self.mobjects for m in top.get_family()}
        numbers = [s for s in self.shown if id(s.mobject) in present and _NUMERAL.fullmatch(s.text)]
        if numbers and not getattr(self, "typed_in", False):
            self.typed_in = True  # type: ignore[attr-defined]
            target, places = numbers[-1], numbers[-1].precision or 0
            typed = f"{float(target.text.replace('−', '-')) + 10.0 ** -places:.{places}f}".replace("-", "−")
            animations = (*animations, Transform(target.mobject, text(typed, size=24).move_to(target.mobject)))
        beat(self, caption, *animations, **options)

    monkeypatch.setattr(ExplainerScene, "beat", planted)


_NUMERAL = re.compile(r"[−-]?\d+(\.\d+)?")


FAULTS: dict[str, tuple[tuple[str, str], Plant]] = {
    "wrong source": (("scenes.self_attention.causal_mask", "CausalMask"), _wrong_source),
    "doubled product": (
        ("scenes.self_attention.projection", "Projection"), _changed_value("query_terms", lambda s, f, v: 2 * v),
    ),
    "shifted total": (
        ("scenes.self_attention.softmax", "ScaleAndSoftmax"),
        _changed_value("running_weights", lambda s, f, v: v - float(s.step.weights[f.index])),
    ),
    "typed number": (("scenes.self_attention.softmax", "ScaleAndSoftmax"), _typed_number),
    "wrong precision": (("scenes.self_attention.scores", "Scores"), _wrong_precision),
    "wrong query row": (("scenes.self_attention.scores", "Scores"), _wrong_query_row),
    "stale caption": (("scenes.self_attention.scores", "Scores"), _stale_caption),
    "another seed": (("scenes.self_attention.why_scale", "WhyScale"), _another_seed),
    "plotted elsewhere": (("scenes.self_attention.why_scale", "WhyScale"), _plotted_elsewhere),
    "swapped heads": (("scenes.multi_head.multi_head", "MultiHead"), _swapped_heads),
    "flipped output": (("scenes.multi_head.multi_head", "MultiHead"), _changed_value("output", lambda s, f, v: -v)),
    "swapped scores": (("scenes.self_attention.scores", "Scores"), _swapped_scores),
    "weights one row down": (("scenes.self_attention.weighted_sum", "WeightedSum"), _weights_one_row_down),
    "typed rule": (("scenes.masked.generation_order", "GenerationOrder"), _typed_rule),
    "masked as a number": (
        ("scenes.masked.masked_scores", "MaskedScores"),
        _replaced_source("causal", "scaled_scores", lambda m: np.where(np.isinf(m), -1e9, m)),
    ),
    "exps one key down": (("scenes.masked.masked_scores", "MaskedScores"), _exps_one_key_down),
    "route of another row": (
        ("scenes.masked.renormalise", "Renormalise"),
        _replaced_source("renormalised", "weights", lambda m: np.roll(m, 1, axis=0)),
    ),
    "future weight kept": (("scenes.masked.masked_context", "MaskedContext"),
                           _changed_value("weights", _future_weight_kept)),
    "unmasked chain": (("scenes.masked.masked_context", "MaskedContext"), _unmasked_chain),
    "kept unscaled": (("scenes.masked.dropout", "AttentionDropout"), _changed_value("weights", _kept_unscaled)),
    "another dropout seed": (("scenes.masked.dropout", "AttentionDropout"), _another_dropout_seed),
    "triangle one row down": (("scenes.masked.triangular_map", "TriangularMap"), _triangle_one_row_down),
    "first row unmasked": (("scenes.masked.triangular_map", "TriangularMap"),
                           _changed_value("weights", _first_row_unmasked)),
    "head 2 read as head 1": (("scenes.multi_head.why_heads", "WhyHeads"), _other_head("head1", "head2", "weights")),
    "stale head 1 scores": (("scenes.multi_head.per_head", "PerHead"), _other_head("head2", "head1", "scores")),
    "unscaled per head": (
        ("scenes.multi_head.per_head", "PerHead"),
        _changed_value("scaled_scores", lambda s, f, v: v * float(s.sources[f.source][0].sqrt_d_k)),
    ),
    "blocks swapped": (("scenes.multi_head.fused_projection", "FusedProjection"), _blocks_swapped),
    "unmasked weights": (("scenes.multi_head.causal_heads", "CausalHeads"), _unmasked_weights),
    "another head": ((f"{REAL_HEAD}.weights", "RealWeights"), _another_head),
    "bias left out": ((f"{REAL_HEAD}.projection", "RealProjection"), _bias_left_out),
    "q and k unturned": ((f"{REAL_HEAD}.projection", "RealProjection"), _unturned),
    "counted from 0": ((f"{REAL_HEAD}.place", "RealHeadPlace"), _changed_value("layer_number", lambda s, f, v: v - 1)),
    "unscaled scores": (
        (f"{REAL_HEAD}.weights", "RealWeights"),
        _changed_value("scaled_scores", lambda s, f, v: float(s.scenario.model_head().trace.scores[f.index])),
    ),
    "another step's loss": (("scenes.learned.training_steps", "TrainingSteps"),
                            _changed_value("step_losses", _another_steps_loss)),
    "start shown as learned": (("scenes.learned.training_steps", "TrainingSteps"),
                               _changed_value("rows", _start_shown_as_learned)),
    "the other it's row": (("scenes.learned.training_steps", "TrainingSteps"), _the_other_its_row),
    "W_K in W_Q's cells": (("scenes.learned.learned_weights", "LearnedWeights"), _key_in_query_cells),
    "learned one key down": (("scenes.learned.learned_pipeline", "LearnedPipeline"), _weights_one_row_down),
    "backwards unmoved": (("scenes.rope.order_blind", "OrderBlind"), _backwards_unmoved),
    "wrong θ": (("scenes.rope.rope_scores", "RopeScores"), _wrong_theta),
    "keys one position on": (("scenes.rope.rope_scores", "RopeScores"), _keys_one_on),
    "θ of the other pair": (("scenes.rope.rope_pairs", "RopePairs"), _theta_of_the_other_pair),
    "key turned as query": (("scenes.rope.rope_clock", "ClockHands"), _key_turned_as_query),
    "cache weights shifted": (("scenes.inference.kv_cache", "KVCacheSteps"), _cache_weights_shifted),
    "counts swapped": (("scenes.inference.cache_savings", "CacheSavings"), _counts_swapped),
    "group heads swapped": (("scenes.inference.grouped_heads", "GroupedHeads"), _group_heads_swapped),
    "nothing shared": (("scenes.inference.grouped_heads", "GroupedHeads"), _nothing_shared),
    "K/V heads tiled": (("scenes.inference.grouped_heads", "GroupedHeads"), _kv_heads_tiled),
    "next model's KiB": (("scenes.inference.cache_memory", "CacheMemory"), _next_models_kib),
    "KiB of 1000 bytes": (("scenes.inference.cache_memory", "CacheMemory"), _kib_of_1000_bytes),
    "factor one tile late": (("scenes.flash_attention.online_softmax", "OnlineSoftmax"), _factor_one_tile_late),
    "tiles of three": (("scenes.flash_attention.online_softmax", "OnlineSoftmax"), _tiles_of_three),
    "blocks of three": (("scenes.flash_attention.memory_routes", "MemoryRoutes"), _blocks_of_three),
    "another head size": (("scenes.flash_attention.tiled_traffic", "TiledTraffic"), _another_head_size),
    # true numbers with another meaning
    "max and sum swapped": (("scenes.flash_attention.online_softmax", "OnlineSoftmax"), _max_and_sum_swapped),
    "legend ends swapped": (("scenes.self_attention.causal_mask", "CausalMask"), _legend_ends_swapped),
    "rope legend ends swapped": (("scenes.rope.rope_scores", "RopeScores"), _legend_ends_swapped),
    "real legend ends swapped": (("scenes.real_head.projection", "RealProjection"), _legend_ends_swapped),
    "dropout legend ends swapped": (("scenes.masked.dropout", "AttentionDropout"), _dropout_legend_ends_swapped),
    "dropout under masked": (("scenes.masked.dropout", "AttentionDropout"), _columns_swapped("scenes.masked.dropout")),
    "weights under exp": (("scenes.self_attention.softmax", "ScaleAndSoftmax"), _softmax_columns_swapped),
    "terms as values": (("scenes.self_attention.weighted_sum", "WeightedSum"), _terms_as_values),
    "scaled after softmax": (("scenes.multi_head.per_head", "PerHead"), _scaled_after_softmax),
    "KiB by the GiB bar": (("scenes.inference.cache_memory", "CacheMemory"), _kib_by_the_gib_bar),
    "K and V caches swapped": (("scenes.inference.kv_cache", "KVCacheSteps"), _caches_swapped),
    "scaled scores first": (("scenes.learned.learned_pipeline", "LearnedPipeline"), _scaled_scores_first),
    "θ in the angle row": (("scenes.rope.rope_pairs", "RopePairs"), _theta_in_the_angle_row),
    "masked under no mask": (("scenes.self_attention.causal_mask", "CausalMask"),
                             _columns_swapped("scenes.self_attention.causal_mask")),
    "heads joined in reverse": (("scenes.multi_head.multi_head", "MultiHead"), _joined_in_reverse("multi")),
    "masked heads joined in reverse": (("scenes.multi_head.causal_heads", "CausalHeads"),
                                       _joined_in_reverse("multi_causal")),
    "steps counted on": (("scenes.inference.kv_cache", "KVCacheSteps"),
                         _counted_on("scenes.inference.kv_cache", "step")),
    "heads counted on": (("scenes.multi_head.per_head", "PerHead"), _counted_on("scenes.multi_head.per_head", "head")),
    "tiles counted on": (("scenes.flash_attention.online_softmax", "OnlineSoftmax"),
                         _counted_on("scenes.flash_attention.online_softmax", "tile")),
    "nouns' weights swapped": (("scenes.learned.training_steps", "TrainingSteps"),
                               _caption_swapped("training", _nouns_swapped)),
    "backwards cited forwards": (("scenes.rope.order_blind", "OrderBlind"),
                                 _caption_swapped("backwards", _forward_index)),
    "typed into a score": (("scenes.self_attention.scores", "Scores"), _typed_through_transform),
    "typed into a cache weight": (("scenes.inference.kv_cache", "KVCacheSteps"), _typed_through_transform),
    "cache keys unturned": (("scenes.inference.kv_cache", "KVCacheSteps"), _cache_keys_unturned),
}


def _integers() -> Scenario:
    """5 tokens, 0 decimals: whole-number embeddings and weights, as a lecturer picks for 0 decimals."""
    rng = np.random.default_rng(5)
    draw = lambda rows, columns: rng.integers(-2, 3, size=(rows, columns)).astype(float)  # noqa: E731
    return Scenario("whole numbers", ["The", "dog", "chased", "the", "ball"], draw(5, 3), draw(3, 2), draw(3, 2),
                    draw(3, 2), precision=0)


SCENARIOS: dict[str, Callable[[], Scenario]] = {
    "2-tokens-3-decimals": lambda: Scenario.from_sentence("attention works", seed=11, precision=3),
    "5-tokens-0-decimals": _integers,
    "8-tokens-2-decimals": lambda: Scenario.from_sentence("a cat sat on the mat and purred", seed=7, query=5),
}
ONE_HEAD = ("2-tokens-3-decimals", "5-tokens-0-decimals", "8-tokens-2-decimals")
SCENARIOS["two-heads"] = lambda: preset("two-heads")
SCENARIOS["grouped-dog"] = lambda: preset("grouped-dog")  # the inference lecture's
SCENARIOS["masked-dog"] = lambda: preset("masked-dog")  # the masked lecture's: a middle token asks
SCENARIOS["2-tokens-first"] = lambda: Scenario.from_sentence("attention works", seed=11, precision=3, query=1)
SCENARIOS["2-tokens-two-heads"] = lambda: Scenario.from_sentence("Hello world", seed=4, heads=2)
SCENARIOS.update(MODEL_SCENARIOS)
SCENARIOS["learned"] = lambda: preset("learned")
SCENARIOS["rope-dog"] = lambda: preset("rope-dog")  # the rope lecture's: d_k 4, a fast pair and a slow one

FAULT_SCENARIOS: dict[str, tuple[str, ...]] = {
    # one or two of the three each (every one by four faults or more), to stay within CI's time (a 16-token
    # ScaleAndSoftmax build costs as much as five small ones: its layout and numbers are proven by the scene tests)
    "wrong precision": ("2-tokens-3-decimals", "5-tokens-0-decimals"),
    "wrong source": ("2-tokens-3-decimals", "8-tokens-2-decimals"),
    "doubled product": ("5-tokens-0-decimals", "8-tokens-2-decimals"),
    "shifted total": ("2-tokens-3-decimals", "5-tokens-0-decimals"),
    "typed number": ("2-tokens-3-decimals", "5-tokens-0-decimals"),
    "wrong query row": ("2-tokens-3-decimals", "8-tokens-2-decimals"),
    "stale caption": ("5-tokens-0-decimals", "8-tokens-2-decimals"),
    "another seed": ("5-tokens-0-decimals",),
    "plotted elsewhere": ("5-tokens-0-decimals",),
    "swapped heads": ("two-heads",),
    "flipped output": ("two-heads",),
    "swapped scores": ("5-tokens-0-decimals", "8-tokens-2-decimals"),
    "weights one row down": ("2-tokens-3-decimals", "8-tokens-2-decimals"),
    "typed rule": ("5-tokens-0-decimals",),
    "masked as a number": ("2-tokens-3-decimals", "8-tokens-2-decimals"),
    "exps one key down": ("8-tokens-2-decimals",),
    "route of another row": ("2-tokens-3-decimals", "8-tokens-2-decimals"),
    # the masked lecture: a query with keys after it (the mask changes its row), 2, 5 and 8 tokens
    "future weight kept": ("2-tokens-first", "8-tokens-2-decimals"),
    "unmasked chain": ("masked-dog",),
    "kept unscaled": ("2-tokens-3-decimals", "masked-dog"),
    "another dropout seed": ("masked-dog",),
    "triangle one row down": ("masked-dog", "8-tokens-2-decimals"),
    "first row unmasked": ("2-tokens-first", "masked-dog"),
    "head 2 read as head 1": ("two-heads", "2-tokens-two-heads"),
    "stale head 1 scores": ("two-heads",),
    "unscaled per head": ("2-tokens-two-heads",),
    "blocks swapped": ("two-heads",),
    "unmasked weights": ("two-heads",),
    # one real head each (a real-head build is a few seconds): 8 and 16 WordPieces, each by two faults
    "another head": ("minilm-sixteen", "smollm2-six"),
    "bias left out": ("minilm-eight",),
    "q and k unturned": ("smollm2-six",),  # a decoder's (SmolLM2's): its q and k before RoPE, shown as turned
    "counted from 0": ("minilm-eight", "smollm2-sixteen"),
    "unscaled scores": ("minilm-sixteen", "smollm2-six"),
    # the learned lecture's training scenes show the training run, whatever the scenario: one
    "another step's loss": ("learned",),
    "start shown as learned": ("learned",),
    "the other it's row": ("learned",),
    "W_K in W_Q's cells": ("learned",),
    "learned one key down": ("learned", "2-tokens-3-decimals"),
    "backwards unmoved": ("2-tokens-3-decimals", "rope-dog"),
    "wrong θ": ("rope-dog",),  # with d_k 2 there is one pair, θ_0 = 1 whatever the base
    "keys one position on": ("2-tokens-3-decimals", "rope-dog"),
    "θ of the other pair": ("rope-dog",),  # two pairs (with one, the other pair is itself)
    "key turned as query": ("rope-dog",),
    "cache weights shifted": ("grouped-dog", "8-tokens-2-decimals", "smollm2-six"),  # and a decoder's own run
    "counts swapped": ("grouped-dog", "2-tokens-3-decimals"),
    "group heads swapped": ("grouped-dog",),  # two query heads per key/value head
    "nothing shared": ("grouped-dog",),
    "K/V heads tiled": ("smollm2-six", "smollm2-sixteen"),  # a decoder's layer: the chosen head's group 2, group 3
    "next model's KiB": ("grouped-dog",),  # it shows published models, whatever the scenario
    "KiB of 1000 bytes": ("grouped-dog",),
    # the flash-attention lecture: 5 and 8 tokens (several tiles); its other scenes show sizes and counts, one each
    "factor one tile late": ("5-tokens-0-decimals",),
    "tiles of three": ("5-tokens-0-decimals",),
    "blocks of three": ("5-tokens-0-decimals",),
    "another head size": ("2-tokens-3-decimals",),
    # true numbers with another meaning, in lectures 6 to 11 and the learned one
    "max and sum swapped": ("5-tokens-0-decimals", "8-tokens-2-decimals"),
    "legend ends swapped": ("5-tokens-0-decimals",),
    "rope legend ends swapped": ("rope-dog",),
    "real legend ends swapped": ("minilm-eight",),
    "dropout legend ends swapped": ("masked-dog",),
    "dropout under masked": ("masked-dog", "2-tokens-first"),
    "weights under exp": ("2-tokens-3-decimals", "5-tokens-0-decimals"),
    "terms as values": ("5-tokens-0-decimals", "8-tokens-2-decimals"),
    "scaled after softmax": ("two-heads", "2-tokens-two-heads"),
    "KiB by the GiB bar": ("grouped-dog",),
    "K and V caches swapped": ("grouped-dog", "8-tokens-2-decimals"),  # d_k = d_v
    "scaled scores first": ("learned", "2-tokens-3-decimals"),
    "θ in the angle row": ("rope-dog", "2-tokens-3-decimals"),
    "masked under no mask": ("8-tokens-2-decimals",),
    "heads joined in reverse": ("two-heads",),
    "masked heads joined in reverse": ("two-heads",),
    "steps counted on": ("grouped-dog", "2-tokens-3-decimals"),
    "heads counted on": ("two-heads",),
    "tiles counted on": ("5-tokens-0-decimals",),
    "nouns' weights swapped": ("learned",),
    "backwards cited forwards": ("rope-dog", "2-tokens-3-decimals"),
    "typed into a score": ("5-tokens-0-decimals", "8-tokens-2-decimals"),
    "typed into a cache weight": ("grouped-dog",),
    "cache keys unturned": ("smollm2-six", "smollm2-sixteen"),  # a decoder's run: the prompt's 6 and 16 tokens
}
"""The scenarios a fault is tried with, where not every one-head scenario (:data:`ONE_HEAD`)."""

def _declared_faults() -> tuple[dict[str, tuple[tuple[str, str], Plant]], dict[str, tuple[str, ...]]]:
    """The faults the lectures plant in their own scenes (``LectureChecks.faults``), and the scenarios each is
    tried with (their scenarios join :data:`SCENARIOS`); a name planted twice is refused."""
    faults: dict[str, tuple[tuple[str, str], Plant]] = {}
    tried: dict[str, tuple[str, ...]] = {}
    for item, checks in declared_checks():
        for fault in checks.faults:
            if fault.name in FAULTS or fault.name in faults:
                raise ValueError(f"lecture {item.name!r}: fault {fault.name!r} is planted already")
            module = {name: module for module, name in item.scenes}[fault.scene]
            faults[fault.name], tried[fault.name] = ((module, fault.scene), fault.plant), fault.scenarios
            SCENARIOS.update({name: checks.scenarios[name] for name in fault.scenarios})
    return faults, tried


_DECLARED, _DECLARED_SCENARIOS = _declared_faults()
FAULTS.update(_DECLARED)
FAULT_SCENARIOS.update(_DECLARED_SCENARIOS)

POSITION_FAULTS = frozenset({"plotted elsewhere", "unmasked chain"})
"""Faults that only the position checks see: built with the layout checks (the others without)."""


class _Builds:
    """One dry run per (scene, scenario, fault), kept for the session."""

    def __init__(self, root: Path) -> None:
        self.root, self.done = root, {}

    def get(self, scene: tuple[str, str], scenario: str, fault: str | None = None) -> Build:
        key = (scene, scenario, fault)
        if key not in self.done:
            with pytest.MonkeyPatch.context() as monkeypatch:
                if fault is not None:
                    FAULTS[fault][1](monkeypatch)
                cls = load_scene_class(*scene)
                self.done[key] = build_scene(cls, SCENARIOS[scenario](), self.root, f"{scene[1]} [{scenario}]",
                                             layout=fault in POSITION_FAULTS)
        return self.done[key]


@pytest.fixture(scope="module")
def builds(tmp_path_factory: pytest.TempPathFactory) -> _Builds:
    return _Builds(tmp_path_factory.mktemp("mutations"))


def _problems(build: Build) -> list[str]:
    assert build.error is None, build.error
    return number_problems(build) + [problem for play in build.plays for problem in (*play.unrecorded, *play.misplaced)]


def _what_it_shows(build: Build) -> tuple[list[str], list[str], list[Fact], list[tuple[float, ...]]]:
    """Every text the scene recorded, every caption and what each caption cites, where each number and each
    plotted point (an arrow, a dot) ends."""
    drawn = [item.text for item in build.shown] + [str(getattr(i.mobject, "text", "")) for i in build.shown]
    drawn += build.transformed  # what a Transform drew a mobject as
    ends = [tuple(np.round(i.mobject.get_center(), 2)) for i in build.shown if i.mobject is not None]
    ends += [tuple(np.round(item.mobject.get_center(), 2)) for item in build.plotted]
    said = [item.fact for beat in build.beats for item in beat.said]
    return drawn, [beat.caption for beat in build.beats], said, ends


CASES = [
    # one worker of `pytest -n` per scene: it builds each clean scene once
    pytest.param(fault, scenario, id=f"{fault}-{scenario}", marks=pytest.mark.xdist_group(f"faults-{scene[1]}"))
    for fault, (scene, _) in FAULTS.items() for scenario in FAULT_SCENARIOS.get(fault, ONE_HEAD)
]


@pytest.mark.parametrize(("fault", "scenario"), CASES)
def test_a_planted_fault_fails_the_number_checks(builds: _Builds, fault: str, scenario: str) -> None:
    scene = FAULTS[fault][0]
    clean = builds.get(scene, scenario)
    assert _problems(clean) == [], "the scene must pass the checks before a fault is planted"
    planted = builds.get(scene, scenario, fault)
    assert planted.error is None, planted.error
    if fault not in ("typed number", "typed rule", "plotted elsewhere"):  # the same look: only the record differs
        assert _what_it_shows(planted) != _what_it_shows(clean), f"{fault} changed nothing the viewer sees"
    assert _problems(planted), f"{fault} in {scene[1]} [{scenario}] passed the number checks"
