"""The lectures' scenes in order, and which numbers of the trace each one shows.

No manim here: the bundle command reads this to decide which clips a changed scenario
invalidates, and it should start quickly. ``tests/test_scene_plan.py`` builds every scene and
checks that it reads nothing outside what :data:`SHOWS` declares.
"""

from __future__ import annotations

from typing import Any

from attention_math import DEFAULT_PRESET

__all__ = [
    "ALL_HEADS",
    "CACHE_CONTEXT",
    "DEFAULT_LECTURE",
    "FLASH_BLOCKS",
    "FLASH_LECTURE",
    "INFERENCE_LECTURE",
    "INPUTS",
    "LEARNED_LECTURE",
    "LEARNED_TRAINING",
    "LECTURE",
    "LECTURES",
    "LECTURE_PRESETS",
    "MASKED_DROPOUT",
    "MASKED_LECTURE",
    "MODEL_LECTURE",
    "MULTI_HEAD_LECTURE",
    "OWN_PRESET",
    "REAL_HEAD_LECTURE",
    "RENDER_COST",
    "ROPE_LECTURE",
    "SHOWS",
    "STRUCTURE",
    "depends_on",
    "learned_keyframes",
    "lecture_of",
    "scene_view",
]

LECTURE: tuple[tuple[str, str], ...] = (
    ("scenes.self_attention.raw_dot_products", "RawDotProducts"),
    ("scenes.self_attention.projection", "Projection"),
    ("scenes.self_attention.spaces", "Spaces"),
    ("scenes.self_attention.scores", "Scores"),
    ("scenes.self_attention.softmax", "ScaleAndSoftmax"),
    ("scenes.self_attention.why_scale", "WhyScale"),
    ("scenes.self_attention.weighted_sum", "WeightedSum"),
    ("scenes.self_attention.matrix_form", "MatrixForm"),
    ("scenes.self_attention.causal_mask", "CausalMask"),
)
"""``(module, class)`` of every scene of the default lecture, self-attention, in order."""

MASKED_LECTURE: tuple[tuple[str, str], ...] = (
    ("scenes.masked.generation_order", "GenerationOrder"),
    ("scenes.masked.masked_scores", "MaskedScores"),
    ("scenes.masked.renormalise", "Renormalise"),
    ("scenes.masked.masked_context", "MaskedContext"),
    ("scenes.masked.dropout", "AttentionDropout"),
    ("scenes.masked.triangular_map", "TriangularMap"),
)
"""Lecture 7, masked (causal) self-attention: why a decoder may not read ahead, the mask, the other route,
the context from the past only, dropout on the weights, the triangular map."""

MULTI_HEAD_LECTURE: tuple[tuple[str, str], ...] = (
    ("scenes.multi_head.why_heads", "WhyHeads"),
    ("scenes.multi_head.per_head", "PerHead"),
    ("scenes.multi_head.fused_projection", "FusedProjection"),
    ("scenes.multi_head.causal_heads", "CausalHeads"),
    ("scenes.multi_head.multi_head", "MultiHead"),
)
"""Lecture 8, multi-head attention: why several heads, each head's pipeline, the heads as one big
projection cut in blocks, every head masked, then the heads side by side joined by W_O."""

REAL_HEAD_LECTURE: tuple[tuple[str, str], ...] = (
    ("scenes.real_head.place", "RealHeadPlace"),
    ("scenes.real_head.projection", "RealProjection"),
    ("scenes.real_head.weights", "RealWeights"),
)
"""A real model's head (all-MiniLM-L6-v2, ``render --model minilm``): its tokens and place, its Q, K, V
with their biases, and what it looks at in the user's sentence."""

MODEL_LECTURE = "real-head"
"""The lecture of a scenario with ``model`` (``render --model``): its scenes are the only ones that draw one."""

LEARNED_LECTURE: tuple[tuple[str, str], ...] = (
    ("scenes.learned.training_steps", "TrainingSteps"),
    ("scenes.learned.learned_weights", "LearnedWeights"),
    ("scenes.learned.learned_pipeline", "LearnedPipeline"),
)
"""Where W comes from, "Learned, not given": the loss falling as each "it" moves onto its noun, W_Q and W_K
changing over the steps, then the learned matrices through the lecture-6 pipeline."""

ROPE_LECTURE: tuple[tuple[str, str], ...] = (
    ("scenes.rope.order_blind", "OrderBlind"),
    ("scenes.rope.rope_pairs", "RopePairs"),
    ("scenes.rope.rope_clock", "ClockHands"),
    ("scenes.rope.rope_scores", "RopeScores"),
)
"""Lecture 10, rotary position embeddings (RoPE): attention without positions cannot tell the order of its
tokens; RoPE turns queries and keys by their positions (each pair a clock hand: a shift of every position keeps the
scores), and the scores change."""

INFERENCE_LECTURE: tuple[tuple[str, str], ...] = (
    ("scenes.inference.kv_cache", "KVCacheSteps"),
    ("scenes.inference.cache_savings", "CacheSavings"),
    ("scenes.inference.grouped_heads", "GroupedHeads"),
    ("scenes.inference.cache_memory", "CacheMemory"),
)
"""Lecture 9, inference: the sentence generated token by token with a KV cache, the multiplies it saves, query
heads sharing key/value heads, and the cache's memory in published models."""

FLASH_LECTURE: tuple[tuple[str, str], ...] = (
    ("scenes.flash_attention.memory_routes", "MemoryRoutes"),
    ("scenes.flash_attention.online_softmax", "OnlineSoftmax"),
    ("scenes.flash_attention.tiled_traffic", "TiledTraffic"),
)
"""Lecture 11, FlashAttention: the n × n matrix written to slow memory or never stored; one query's row walked in
tiles with the online softmax; the whole matrix in blocks, and the slow-memory traffic of both routes counted."""

DEFAULT_LECTURE = "self-attention"
LECTURES: dict[str, tuple[tuple[str, str], ...]] = {
    DEFAULT_LECTURE: LECTURE, "masked": MASKED_LECTURE, "multi-head": MULTI_HEAD_LECTURE,
    MODEL_LECTURE: REAL_HEAD_LECTURE, "learned": LEARNED_LECTURE, "rope": ROPE_LECTURE,
    "inference": INFERENCE_LECTURE, "flash-attention": FLASH_LECTURE,
}
"""Each lecture by name (``attention-explainer render --lecture NAME``), its scenes in order."""

LECTURE_PRESETS: dict[str, str] = {
    DEFAULT_LECTURE: DEFAULT_PRESET, "masked": "masked-dog", "multi-head": "two-heads",
    MODEL_LECTURE: DEFAULT_PRESET,  # never shown: its scenes ask for --model (a preset has no model)
    "learned": "learned", "rope": "rope-dog", "inference": "grouped-dog", "flash-attention": DEFAULT_PRESET,
}
"""The preset a lecture shows when no scenario is chosen."""

MASKED_DROPOUT: tuple[float, int] = (0.5, 123)
"""The masked lecture's dropout on the attention weights, ``(p, seed)``:
``attention_math.attention_dropout(weights, p, seed=seed)``. p = 0.5 and seed 123 as in Raschka's
chapter 3 (whose ``torch.manual_seed(123)`` draws other numbers: this is numpy's
``default_rng(123)``). The lecture's dropout scene and its handout (the CSV, the notebook's replay)
both read it here, so they drop the same weights."""

CACHE_CONTEXT = 4096
"""The long context the inference lecture's memory scene counts the cache for: Llama 2's context length
(``max_position_embeddings`` in its config.json). Its scene and its number checks both read it here."""

FLASH_BLOCKS: tuple[int, int] = (2, 2)
"""The flash-attention lecture's tiles, ``(B_c, B_r)``: keys per tile and queries per block
(``attention_math.online_softmax_row(..., block_size=B_c)``, ``flash_attention(..., block_size=B_c,
query_block_size=B_r)``, ``memory_traffic(n, d, block_size=B_c, query_block_size=B_r)``). 2 does not divide
lecture 6's 5 tokens, so the last tile is shorter; its scenes, number proof, handout and notebook read it here."""

LEARNED_TRAINING: tuple[int, int, float] = (0, 60, 1.0)
"""The learned lecture's training run, ``(seed, steps, learning_rate)``:
``attention_math.train_attention(seed, steps=steps, learning_rate=learning_rate)``, whose learned weights are the
``learned`` preset. Its training scenes, their number proof and its handout read it here (the scenes as they build,
so a test may change it)."""



def learned_keyframes(steps: int) -> tuple[int, ...]:
    """The steps the learned lecture's training scenes stop at: the start, a twelfth, a third, the end.

    >>> learned_keyframes(60), learned_keyframes(3)
    ((0, 5, 20, 60), (0, 1, 3))
    """
    return tuple(sorted({0, round(steps / 12), round(steps / 3), steps}))


INPUTS = frozenset({"embeddings", "w_query", "w_key", "w_value"})
"""The scenario's numbers; everything else in a trace is computed from them."""

STRUCTURE = ("tokens", "query", "precision", "scaled", "d_in", "d_k", "d_v")
"""What shapes every scene's layout and captions: a change re-renders every scene."""

OWN_PRESET = frozenset({"RawDotProducts", "WhyScale", "TrainingSteps", "LearnedWeights", "CacheMemory"})
"""Scenes that show nothing of the scenario, whatever it is: their own preset, or (WhyScale) the
seeded sampler of :func:`attention_math.scaling_spread`, or (the learned lecture's training scenes) the
training run of :data:`LEARNED_TRAINING`, or (CacheMemory) published models' configurations."""

ALL_HEADS = frozenset({"WhyHeads", "PerHead", "FusedProjection", "CausalHeads", "MultiHead", "GroupedHeads"})
"""Scenes that show every head of a multi-head scenario and its ``W_O`` (the others show head 1):
their view holds each head's numbers and ``W_O``."""

SHOWS: dict[str, frozenset[str]] = {
    "RawDotProducts": frozenset(),
    "Projection": INPUTS | {"queries", "keys", "values"},
    "Spaces": frozenset({"embeddings", "queries", "keys", "values"}),
    "Scores": frozenset({"queries", "keys", "scores"}),
    "ScaleAndSoftmax": frozenset({"scores", "scaled_scores", "weights"}),
    "WhyScale": frozenset(),
    "WeightedSum": frozenset({"weights", "values", "context"}),
    "MatrixForm": frozenset({"scores", "scaled_scores", "weights", "values", "context"}),
    # the causal trace is computed afresh from the inputs
    "CausalMask": INPUTS | {"scaled_scores", "weights", "context"},
    # every head, from its inputs (each head's, and W_O: see ALL_HEADS)
    "WhyHeads": INPUTS,
    "PerHead": INPUTS,
    "MultiHead": INPUTS,
    # the masked lecture: the sentence and its order only; then the causal trace, computed afresh from the
    # inputs, beside the unmasked scaled scores (and the other route, renormalised_weights, from those)
    "GenerationOrder": frozenset(),
    "MaskedScores": INPUTS | {"scaled_scores"},
    "Renormalise": INPUTS | {"scaled_scores"},
    # the masked lecture: the masked trace (and dropout on it) computed afresh from the inputs; the context
    # scene also shows the unmasked query step and masks the unmasked scaled scores after the softmax
    "MaskedContext": INPUTS | {"scaled_scores", "weights", "values", "context"},
    "AttentionDropout": INPUTS,
    "TriangularMap": INPUTS,
    # every head's matrices side by side, from the inputs (see ALL_HEADS)
    "FusedProjection": INPUTS,
    # every head masked and not, joined times W_O, from the inputs (see ALL_HEADS)
    "CausalHeads": INPUTS,
    # the learned lecture: the training run (not the scenario), then the scenario's query through the pipeline
    "TrainingSteps": frozenset(),
    "LearnedWeights": frozenset(),
    "LearnedPipeline": frozenset({"scores", "scaled_scores", "weights"}),
    # the rope lecture: the sentence backwards (and with RoPE) computed afresh from the inputs, beside the trace
    "OrderBlind": INPUTS | {"scaled_scores", "weights"},
    "RopeScores": INPUTS | {"scaled_scores", "weights"},
    "RopePairs": INPUTS,
    "ClockHands": INPUTS,
    # the inference lecture: generation with a KV cache, computed afresh from the inputs (head 1's)
    "KVCacheSteps": INPUTS,
    "CacheSavings": INPUTS,
    # every head's own W_Q, the shared W_K and W_V, and W_O (see ALL_HEADS); then published models, not the scenario
    "GroupedHeads": INPUTS,
    "CacheMemory": frozenset(),
    # the flash-attention lecture: the sizes alone (the memory picture, the counts); the query's row of scaled
    # scores walked in tiles over the values, ending on its context
    "MemoryRoutes": frozenset(),
    "OnlineSoftmax": frozenset({"scaled_scores", "values", "context"}),
    "TiledTraffic": frozenset(),
}
# a real model's head: every number from the scenario's model head (Scenario.model_head), so from its inputs; the
# model, sentence, layer and head themselves are in every view (scene_view)
SHOWS.update(dict.fromkeys(("RealHeadPlace", "RealProjection", "RealWeights"), INPUTS))
"""The trace fields (``AttentionTrace`` attribute names) each scene draws or computes from."""

RENDER_COST: dict[str, dict[str, float]] = {
    # -ql: drawing and making texts weigh most
    "l": {
        "RawDotProducts": 1.7,
        "Projection": 1.7,
        "Spaces": 0.8,
        "Scores": 1.0,
        "ScaleAndSoftmax": 1.1,
        "WhyScale": 0.7,
        "WeightedSum": 0.9,
        "MatrixForm": 2.4,
        "CausalMask": 1.6,
        "WhyHeads": 0.4,  # measured with MultiHead and Scores (1.13 here), one render at a time
        "PerHead": 1.7,
        "MultiHead": 1.1,
        "GenerationOrder": 0.7,
        "MaskedScores": 1.2,
        "Renormalise": 0.7,
        # the masked lecture's, from one cold -ql render each here (user time, against Scores' in the same run)
        "MaskedContext": 0.6,
        "AttentionDropout": 0.8,
        "TriangularMap": 0.65,
        "FusedProjection": 1.2,
        "CausalHeads": 1.2,
        # a real model's head: one cold bundle against lecture 6's in the same minutes, on a busy machine (18.6,
        # 38.9 and 20.6 s against Scores' 43.3 s); the head is read back, not computed, in each
        "RealHeadPlace": 0.45,
        "RealProjection": 0.9,
        "RealWeights": 0.5,
        # the learned lecture's: one cold -ql render each here, one at a time (6.3, 15.6 and 4.7 s), against the
        # mean of two Scores renders in the same hour (10.0 and 17.0 s: a busy machine)
        "TrainingSteps": 0.47,
        "LearnedWeights": 1.16,
        "LearnedPipeline": 0.35,
        # the rope lecture's, from one cold -ql bundle (render_s against Scores' from a bundle of its own, one
        # render at a time, on a quiet machine: 9.0, 6.6 and 17.7 s against 12.0 s)
        "OrderBlind": 0.75,
        "RopePairs": 0.55,
        "RopeScores": 1.45,
        "ClockHands": 0.6,
        # the inference lecture's: one cold -ql render each, one at a time, against Scores' just before (13.2 and
        # 5.1 s against 15.8 s of wall time, on a shared machine)
        "KVCacheSteps": 0.85,
        "CacheSavings": 0.35,
        # one -ql beat_frames render each here, against KVCacheSteps' (12 and 9 s of user time, a busy machine)
        "GroupedHeads": 0.45,
        "CacheMemory": 0.35,
        # the flash-attention lecture's (estimated from their clips' length until measured)
        "MemoryRoutes": 0.6,
        "OnlineSoftmax": 1.0,
        "TiledTraffic": 0.7,
    },
    # -qh (and -qm, -qp, -qk): encoding weighs most, so the length of the clip counts more (the mean of three
    # cold bundles, two renders at a time; a scene's share moves by a tenth from one bundle to the next)
    "h": {
        "RawDotProducts": 0.95,
        "Projection": 1.0,
        "Spaces": 0.65,
        "Scores": 1.0,
        "ScaleAndSoftmax": 0.77,
        "WhyScale": 0.95,
        "WeightedSum": 1.25,
        "MatrixForm": 1.33,
        "CausalMask": 0.89,
        "WhyHeads": 0.5,  # from their clips' length beside MultiHead's and Scores' (not measured at -qh)
        "PerHead": 1.3,
        "MultiHead": 0.7,
        "GenerationOrder": 1.04,
        "MaskedScores": 0.9,
        "Renormalise": 0.72,
        # the masked lecture's by the length of their clips against Scores' (16, 16 and 14 s against 28 s)
        "MaskedContext": 0.6,
        "AttentionDropout": 0.6,
        "TriangularMap": 0.55,
        "FusedProjection": 0.8,
        "CausalHeads": 0.8,
        # a real model's head (one cold bundle each, on a busy machine: a rough share)
        "RealHeadPlace": 0.21,
        "RealProjection": 0.76,
        "RealWeights": 0.38,
        # the learned lecture's by the length of their clips against Scores' (20, 19 and 14 s against 28 s; not
        # measured at -qh), LearnedWeights' a little more for its many numbers changing at once
        "TrainingSteps": 0.7,
        "LearnedWeights": 0.8,
        "LearnedPipeline": 0.5,
        # the rope lecture's by their clips' length against Scores' (14, 18 and 16 s against 28 s; not measured at -qh)
        "OrderBlind": 0.5,
        "RopePairs": 0.65,
        "RopeScores": 0.6,
        "ClockHands": 0.6,
        # the inference lecture's by the length of their clips against Scores' (17.2 and 10.7 s against 27.8 s)
        "KVCacheSteps": 0.6,
        "CacheSavings": 0.4,
        # by their clips' length against Scores' (about 19 and 17 s against 27.8 s; not measured at -qh)
        "GroupedHeads": 0.55,
        "CacheMemory": 0.45,
        # the flash-attention lecture's (estimated from their clips' length until measured)
        "MemoryRoutes": 0.6,
        "OnlineSoftmax": 0.9,
        "TiledTraffic": 0.7,
    },
}
"""Each scene's render time relative to Scores, by quality (measured here, cold, with the
bundle's runner): when it has no times of its own from an earlier render, the bundle orders its
renders by these so that no core idles at the end while one long scene renders on
(``attention_explainer.schedule``)."""

_STEP = {
    "index": set(),
    "embedding": {"embeddings"},
    "w_query": {"w_query"},
    "query_terms": {"embeddings", "w_query"},
    "running_weights": {"weights"},
    "running_context": {"weights", "values", "context"},
    "top_key": {"weights"},
    "d_k": set(),
    "sqrt_d_k": set(),
    "query": {"queries"},
    "keys": {"keys"},
    "products": {"queries", "keys"},
    "scores": {"scores"},
    "scaled_scores": {"scaled_scores"},
    "max_score": {"scaled_scores"},
    "exps": {"scaled_scores"},
    "exp_sum": {"scaled_scores"},
    "weights": {"weights"},
    "values": {"values"},
    "weighted_values": {"weights", "values"},
    "context": {"context"},
}
_TRACE_STRUCTURE = {"d_k", "scaled", "causal", "n_tokens", "sqrt_d_k"}
_ALL_TRACE = frozenset(INPUTS | {"queries", "keys", "values", "scores", "scaled_scores", "weights", "context"})


def depends_on(source: str, name: str) -> frozenset[str]:
    """The trace fields that ``source.name`` is computed from.

    ``source`` is ``"scenario"``, ``"trace"`` or ``"step"`` (a query step); ``name`` an
    attribute or method of it. Layout structure (tokens, sizes, the query) depends on nothing
    here: it is always part of a scene's view.

    >>> sorted(depends_on("step", "weighted_values"))
    ['values', 'weights']
    >>> sorted(depends_on("scenario", "w_key"))
    ['w_key']
    """
    if source == "step":
        return frozenset(_STEP[name]) if name in _STEP else _ALL_TRACE
    if source == "trace":
        if name in _TRACE_STRUCTURE:
            return frozenset()
        return frozenset({name}) if name in _ALL_TRACE else _ALL_TRACE  # query_step(...) and such
    if source == "scenario":
        if name in STRUCTURE or name in {"n_tokens", "n_heads", "query_token", "title"}:
            return frozenset()
        return frozenset({name}) if name in INPUTS else frozenset(INPUTS)  # trace(), query_step()
    raise ValueError(f"unknown source {source!r}")


def scene_view(name: str, scenario: Any) -> dict[str, Any] | None:
    """Everything scene ``name`` shows of ``scenario``, as plain data (``None``: nothing).

    Two scenarios with equal views give the same clip, so the bundle keeps the clip it has.
    """
    if name in OWN_PRESET:
        return None
    trace = scenario.trace()
    view: dict[str, Any] = {key: _plain(getattr(scenario, key)) for key in STRUCTURE}
    view.update(_fields(name, trace))
    if scenario.model is not None:  # a real model's head: which model, sentence, layer and head
        view["model"] = scenario.model.to_dict()
    if name in ALL_HEADS:
        view["heads"] = [_fields(name, head.trace()) for head in scenario.heads]
        view["w_out"] = None if scenario.w_out is None else _floats(scenario.w_out)
    return view


def _fields(name: str, trace: Any) -> dict[str, Any]:
    """The trace fields scene ``name`` shows, every float as its repr (equal views: bit-equal numbers)."""
    return {field: _floats(getattr(trace, field)) for field in sorted(SHOWS[name])}


def _floats(matrix: Any) -> list[list[str]]:
    return [[repr(float(x)) for x in row] for row in matrix.tolist()]


def lecture_of(name: str) -> str:
    """The lecture scene ``name`` belongs to.

    >>> lecture_of("Scores"), lecture_of("MultiHead")
    ('self-attention', 'multi-head')
    """
    for lecture, scenes in LECTURES.items():
        if any(scene == name for _, scene in scenes):
            return lecture
    raise KeyError(f"{name} is not a scene of any lecture")


def _plain(value: Any) -> Any:
    if isinstance(value, tuple):
        return list(value)
    return value
