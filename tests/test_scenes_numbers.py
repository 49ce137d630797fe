"""Every number a scene draws or says is attention_math's number, formatted as the lecture formats it.

Each scene of the lecture is dry-run (once per session, shared with the layout tests) with several
scenarios. For every recorded fact the test derives the number itself from the scenario and
attention_math (``tests/number_checks.py``; never from an object the scene made), formats it
independently of the scenes' formatter, and checks the recorded text and precision, the text the
mobject really carries (every number of a label, in order), that the mobject was on screen, and
that each caption says exactly the numbers it cites, each on screen in its beat. A digit on
screen that no fact accounts for fails. At the end of every play each number whose fact names a
token, key or dimension stands in that thing's row or column (the bands the scene registered,
``scenes.facts.Bands``), not another's; a scene that shows such numbers registers bands that hold
them. :data:`KEY_NUMBERS` lists what each scene must show at least. The last tests prove the
checker fails on deliberately wrong scenes; the mutation test (``test_mutations.py``) plants
faults in the real scenes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import numpy as np
import pytest
from manim import FadeIn, LaggedStart, Transform, VGroup
from number_checks import (
    BELONGS,
    GENERATION_STEPS,
    SCALING_BELONGS,
    WITHOUT_QUANTITY,
    band_of,
    belongs_to,
    canonical,
    derive_all,
    expected_for,
    expected_text,
    lecture_checks,
    masked_row,
    smol_cache_rows,
)
from scene_helpers import (
    NUMBER_SCENARIOS,
    SCENARIOS,
    SCENES,
    Build,
    build_scene,
    built,
    every_index,
    number_problems,
    scenarios_of,
    shown_keys,
)

from attention_math import Scenario, preset, scaling_spread
from scenes import flash_attention, learned
from scenes.base import ExplainerScene, Shown
from scenes.facts import Fact, known_kinds, position, query_number, size, value
from scenes.kit.bars import BarRows
from scenes.kit.heatmap import HeatGrid
from scenes.kit.text import text
from scenes.multi_head.causal_heads import changed_row

Index = tuple[int, ...]
Requirement = tuple[str, str, Callable[[Scenario], Iterable[Index]]]


def every(*shape: Callable[[Scenario], int]) -> Callable[[Scenario], Iterable[Index]]:
    """Every index of a field whose shape is given by functions of the scenario."""
    return lambda s: every_index(tuple(size(s) for size in shape))


def n(s: Scenario) -> int:
    return s.n_tokens


def d_in(s: Scenario) -> int:
    return s.d_in


def d_k(s: Scenario) -> int:
    return s.d_k


def d_v(s: Scenario) -> int:
    return s.d_v


# RawDotProducts always shows the raw-dot-product preset: "it" (row 0) against dog (1) and ball (2).
IT_AGAINST_DOG_AND_BALL: Callable[[Scenario], Iterable[Index]] = lambda s: [(0, 1), (0, 2)]  # noqa: E731

_GRID_NUMBERS = [True]  # set by the test for the build it checks
_X_NUMBERS = [True]  # PerHead writes X's numbers (else its shape, "X: 16 × 6"): set by the test too


def numbers_in_cells(s: Scenario) -> bool:
    """Does the scene's token grid carry its numbers (it says "colours only" when it does not)?"""
    return _GRID_NUMBERS[0]

# MatrixForm, CausalMask: every cell of the token grid while it carries numbers, else the query's row.
GRID: Callable[[Scenario], Iterable[Index]] = lambda s: (  # noqa: E731
    every_index((s.n_tokens, s.n_tokens)) if numbers_in_cells(s) else [(s.query, j) for j in range(s.n_tokens)]
)

# The rope lecture's twin maps: every cell while the grids carry numbers (colours only: none, the scales' ends).
CELLS: Callable[[Scenario], Iterable[Index]] = lambda s: (  # noqa: E731
    every_index((s.n_tokens, s.n_tokens)) if numbers_in_cells(s) else []
)
ENDS: Callable[[Scenario], Iterable[Index]] = lambda s: [(0,), (1,)]  # noqa: E731

# CausalMask: the keys after each query, hidden by the mask.
ABOVE_DIAGONAL: Callable[[Scenario], Iterable[Index]] = lambda s: [  # noqa: E731
    (i, j) for i in range(s.n_tokens) for j in range(i + 1, s.n_tokens)
]

# The masked lecture: the query's row of a token grid, its z (every component), the links of its past's chain
# (the dimensions value space shows: 1 and 2).
QUERY_ROW: Callable[[Scenario], Iterable[Index]] = lambda s: [(s.query, j) for j in range(s.n_tokens)]  # noqa: E731
QUERY_Z: Callable[[Scenario], Iterable[Index]] = lambda s: [  # noqa: E731
    (s.query, c) for c in range(s.d_v if s.model is None else 2)  # a real model's z: its first 2 of 64, then "…"
]
PAST_CHAIN: Callable[[Scenario], Iterable[Index]] = lambda s: [  # noqa: E731
    (j, c) for j in range(s.query + 1) for c in range(min(2, s.d_v))
]

# WhyScale shows the sampler (seed 0), whatever the scenario: the clouds of d = 2, 32 and 512, every
# spread, both rows of weights at d = 512.
SPREAD = scaling_spread(seed=0)
CLOUDS: Callable[[Scenario], Iterable[Index]] = lambda s: [  # noqa: E731
    (SPREAD.dims.index(d), k) for d in (2, 32, 512) for k in range(SPREAD.kept_products.shape[1])
]
SIZES: Callable[[Scenario], Iterable[Index]] = lambda s: every_index((len(SPREAD.dims),))  # noqa: E731
ROW: Callable[[Scenario], Iterable[Index]] = lambda s: every_index((len(SPREAD.row_scores),))  # noqa: E731


# The learned lecture's training scenes show the run of scenes.learned.LEARNED_TRAINING, whatever the scenario: at each
# keyframe, the loss, the step, both "it"s' rows, every entry of W_Q and W_K.


def _keyframes() -> tuple[int, ...]:
    return learned.learned_keyframes(learned.LEARNED_TRAINING[1])


KEYFRAMES: Callable[[Scenario], Iterable[Index]] = lambda s: [(t,) for t in _keyframes()]  # noqa: E731
KEYFRAME_ROWS: Callable[[Scenario], Iterable[Index]] = lambda s: [  # noqa: E731
    (t, m, j) for t in _keyframes() for m in range(2) for j in range(4)
]
KEYFRAME_WEIGHTS: Callable[[Scenario], Iterable[Index]] = lambda s: [  # noqa: E731
    (t, a, c) for t in _keyframes() for a in range(4) for c in range(2)
]
KEYS: Callable[[Scenario], Iterable[Index]] = lambda s: [(j,) for j in range(s.n_tokens)]  # noqa: E731


def head_row(k: int) -> Callable[[Scenario], Iterable[Index]]:
    """Head ``k``'s weight of the key the query attends to most (none if the scenario has fewer heads)."""
    def indexes(s: Scenario) -> Iterable[Index]:
        if k >= s.n_heads:
            return []
        weights = s.heads[k].trace().weights[s.query]
        return [(s.query, int(np.argmax(weights)))]
    return indexes


def head_context(k: int) -> Callable[[Scenario], Iterable[Index]]:
    """Head ``k``'s z for the query."""
    return lambda s: [(s.query, m) for m in range(s.d_v)] if k < s.n_heads else []


def head_query_row(k: int) -> Callable[[Scenario], Iterable[Index]]:
    """Head ``k``'s whole row of the query (none if the scenario has fewer heads)."""
    return lambda s: [(s.query, j) for j in range(s.n_tokens)] if k < s.n_heads else []


def head_every(k: int, *shape: Callable[[Scenario], int]) -> Callable[[Scenario], Iterable[Index]]:
    """Every index of one of head ``k``'s fields (none if the scenario has fewer heads)."""
    return lambda s: every_index(tuple(size(s) for size in shape)) if k < s.n_heads else []


def joined(field: str, columns: Callable[[Scenario], int]) -> Callable[[Scenario], Iterable[Index]]:
    """The query's row of a multi-head field (nothing for one head)."""
    return lambda s: [(s.query, c) for c in range(columns(s))] if s.n_heads > 1 else []


def chosen_head(s: Scenario) -> int:
    """The head FusedProjection shows equal to its Q computed alone: the last one drawn (of four at most)."""
    return min(s.n_heads, 4) - 1


def equal_row(k: int) -> Callable[[Scenario], Iterable[Index]]:
    """The query's row of head ``k``'s Q, where ``k`` is the head shown equal (nothing for another head)."""
    return lambda s: [(s.query, c) for c in range(s.d_k)] if chosen_head(s) == k else []


def changed(columns: Callable[[Scenario], int], heads: Callable[[Scenario], bool]) -> Callable[[Scenario],
                                                                                             Iterable[Index]]:
    """CausalHeads: the row of the token whose rows the mask changes (where ``heads`` says the field is shown)."""
    return lambda s: [(changed_row(s), c) for c in range(columns(s))] if heads(s) else []


def _table_pairs(s: Scenario) -> tuple[int, ...]:
    """The pairs the rope table draws: every pair of a made-up d_k (1 or 2), a real head's first two and last."""
    pairs = s.d_k // 2
    return tuple(range(pairs)) if pairs <= 2 else (0, 1, pairs - 1)


def _clock_pairs(s: Scenario) -> tuple[int, ...]:
    """The pairs the clock draws: every pair of a made-up d_k (1 or 2), a real head's first and last."""
    pairs = s.d_k // 2
    return tuple(range(pairs)) if pairs <= 2 else (0, pairs - 1)


def _decoder(s: Scenario) -> bool:
    """Is the scenario a decoder's head (SmolLM2: causal, RoPE, no bias)?"""
    return s.model is not None and s.model.causal


def _unless_decoder(indexes: Callable[[Scenario], Iterable[Index]],
                    source: str) -> Callable[[Scenario], Iterable[Index]]:
    """The rope lecture's attention without positions: ``trace`` (and ``extremes``) of a made-up scenario,
    ``positionless`` of a decoder's head (whose trace RoPE turned); the other's indexes, none."""
    plain = source.startswith("positionless")
    return lambda s: indexes(s) if plain == _decoder(s) else []


def _cache_entries(s: Scenario, name: str) -> int:
    """The entries of a cache row (or of q, z) the cache scene must show: all of a made-up scenario's; a decoder's
    head's first of 64 (its first two where they fit)."""
    if _decoder(s):
        return 1
    return s.d_k if name in ("keys", "query") else s.d_v


def _step_told(s: Scenario, t: int) -> bool:
    """Does the cache scene tell step t (its query, weights and z)? Every step of a made-up scenario; of a decoder's
    run, the prompt's last token (its whole prompt goes through at once) and each written token read back."""
    return t < smol_cache_rows(s) and (not _decoder(s) or t >= s.n_tokens - 1)


def _grouped_columns(s: Scenario) -> range:
    """The heads the grouped-heads table must show (0-based): head 1 of made-up heads; a decoder's, the three query
    heads of its layer that share the chosen head's key/value head (SmolLM2: head h reads h // 3)."""
    if not _decoder(s):
        return range(1)
    assert s.model is not None
    first = (s.model.head - 1) // 3 * 3
    return range(first, first + 3)


def _grouped_keys(s: Scenario) -> range:
    """The keys whose weights it must show: every one; a decoder's, those up to the query (the later ones masked)."""
    return range(s.query + 1) if _decoder(s) else range(s.n_tokens)


KEY_NUMBERS: dict[str, list[Requirement]] = {
    # scene: [(source, field, indexes that must all be on screen at some point)]
    "RawDotProducts": [
        ("raw", "scores", IT_AGAINST_DOG_AND_BALL),  # the tie
        ("projected", "scores", IT_AGAINST_DOG_AND_BALL),  # broken by W_K
    ],
    "Projection": [
        ("trace", "queries", every(n, d_k)),
        ("trace", "keys", every(n, d_k)),
        ("trace", "values", every(n, d_v)),
        ("step", "query_terms", lambda s: [(m, 0) for m in range(s.d_in)]),  # one entry of q_i by hand
    ],
    "Spaces": [  # the shapes of the maps, said on screen: 3-d → 2-d (the positions are checked as plotted)
        ("scenario", "d_in", lambda s: [()]),
        ("scenario", "d_k", lambda s: [()]),
        ("scenario", "d_v", lambda s: [()]),
    ],
    "Scores": [
        ("step", "scores", every(n)),  # every score, at its bar
        ("step", "products", lambda s: [(0, m) for m in range(s.d_k)]),  # the first key worked out
        ("alignment", "feet", lambda s: every_index((s.n_tokens, 2)) if s.d_k == 2 else []),  # the shadows
    ],
    "ScaleAndSoftmax": [("step", "weights", every(n)), ("step", "exps", every(n)), ("step", "exp_sum", lambda s: [()])],
    "WhyScale": [
        ("scaling", "kept_products", CLOUDS),  # every dot of the three clouds, where its number says
        ("scaling", "raw_std", SIZES),  # the spread of q·k at every d
        ("scaling", "scaled_std", SIZES),  # and of q·k / √d
        ("scaling", "unscaled_weights", ROW),
        ("scaling", "scaled_weights", ROW),
        ("scaling_whole", "row_scores", ROW),
        ("scaling_tenths", "row_scaled_scores", ROW),
    ],
    "WeightedSum": [("step", "context", every(d_v)), ("step", "weights", every(n))],
    "MatrixForm": [("trace", "weights", GRID), ("trace", "context", every(n, d_v))],
    "CausalMask": [
        ("causal", "scaled_scores", lambda s: ABOVE_DIAGONAL(s) if numbers_in_cells(s) else [(0, 1)]),  # −∞
        ("causal", "weights", lambda s: every_index((s.n_tokens,) * 2) if numbers_in_cells(s) else []),
        ("causal", "weights", lambda s: [(s.n_tokens - 1, j) for j in range(s.n_tokens)]),  # the row kept
    ],
    # the masked lecture, following the row masked_row(s) (the query's, unless the query is the last token)
    "GenerationOrder": [("position", "", every(n))],  # every token numbered, in the order it is written
    "MaskedScores": [
        ("causal", "scaled_scores", lambda s: ABOVE_DIAGONAL(s) if numbers_in_cells(s) else [(0, 1)]),  # −∞
        ("causal", "weights", lambda s: every_index((s.n_tokens,) * 2) if numbers_in_cells(s) else []),
        ("causal_step", "exps", every(n)),  # exp(−∞) = 0 for the keys after the row's token
        ("causal_step", "exp_sum", lambda s: [()]),
        ("causal", "weights", lambda s: [(masked_row(s), j) for j in range(s.n_tokens)]),  # its softmax
    ],
    "Renormalise": [
        *((("renormalised", stage, lambda s: [(masked_row(s), j) for j in range(s.n_tokens)]))
          for stage in ("full", "zeroed", "weights")),
        ("renormalised", "row_sums", lambda s: [(masked_row(s),)]),  # what is left of the row
        ("causal", "weights", lambda s: [(masked_row(s), j) for j in range(s.n_tokens)]),  # the same weights
    ],
    # the masked lecture (scenes 4 to 6)
    "MaskedContext": [
        ("step", "weights", every(n)),  # the query's weights without the mask
        ("causal", "weights", QUERY_ROW),  # and with it
        ("trace", "context", QUERY_Z),  # z without the mask
        ("causal", "context", QUERY_Z),  # and with it
        ("causal_query_step", "running_context", PAST_CHAIN),  # the past's arrows, tip to tail, as numbered
        ("renormalised", "row_sums", lambda s: [(s.query,)]),  # what the past had of the weight: the divisor
    ],
    "AttentionDropout": [
        ("causal", "weights", QUERY_ROW),  # the query's row before dropout
        ("dropout", "weights", QUERY_ROW),  # and after
        ("dropout", "row_sums", every(n)),  # every row's sum after dropout
        ("dropout_rate", "p", lambda s: [()]),
        ("dropout_rate", "scale", lambda s: [()]),  # 1 / (1 − p)
        ("dropout_seed", "seed", lambda s: [()]),
    ],
    "TriangularMap": [
        ("causal", "weights", GRID),  # every row (the query's, when colours only)
        ("causal", "weights", lambda s: [(0, 0)] if s.query else [(s.n_tokens - 1, j) for j in range(s.n_tokens)]),
    ],
    "TrainingSteps": [("training", "step_losses", KEYFRAMES), ("training_whole", "step_numbers", KEYFRAMES),
                      ("training", "rows", KEYFRAME_ROWS)],
    "LearnedWeights": [("training", "step_losses", KEYFRAMES), ("training", "w_query", KEYFRAME_WEIGHTS),
                       ("training", "w_key", KEYFRAME_WEIGHTS)],
    "LearnedPipeline": [("step", field, KEYS) for field in ("scores", "scaled_scores", "weights")],
    "WhyHeads": [(f"head{k + 1}", "weights", head_query_row(k)) for k in range(4)],  # each drawn head's row
    "PerHead": [
        ("trace", "embeddings", lambda s: every(n, d_in)(s) if _X_NUMBERS[0] else []),  # X, the same for every head
        *(item for k in range(2) for item in (  # head 1's pipeline and head 2's: q, K, V, the row, z
            (f"head{k + 1}", "queries", lambda s, k=k: [(s.query, m) for m in range(s.d_k)] if k < s.n_heads else []),
            (f"head{k + 1}", "keys", head_every(k, n, d_k)),
            (f"head{k + 1}", "values", head_every(k, n, d_v)),
            *((f"head{k + 1}", field, head_query_row(k)) for field in ("scores", "scaled_scores", "weights")),
            (f"head{k + 1}", "context", head_context(k)),
        )),
    ],
    "MultiHead": [
        *((f"head{k + 1}", "weights", head_row(k)) for k in range(4)),  # where each head looks most
        *((f"head{k + 1}", "context", head_context(k)) for k in range(4)),  # each head's z
        ("multi", "concat", joined("concat", lambda s: min(s.n_heads, 4) * s.d_v)),  # the drawn heads' z joined
        ("multi", "output", joined("output", lambda s: 0 if s.w_out is None else s.w_out.shape[1])),  # × W_O
    ],
    "FusedProjection": [  # the equal head's query row, from the stack and computed alone (also in colours only)
        ("fused", "queries_split", lambda s: [(chosen_head(s), s.query, c) for c in range(s.d_k)]),
        *((f"head{k + 1}", "queries", equal_row(k)) for k in range(4)),
    ],
    "CausalHeads": [  # each drawn head's masked z of the changed token; joined, times W_O; and without the mask
        *((f"causal_head{k + 1}", "context", changed(d_v, lambda s, k=k: k < min(s.n_heads, 4)))
          for k in range(4)),
        ("multi_causal", "concat", changed(lambda s: min(s.n_heads, 4) * s.d_v, lambda s: s.n_heads > 1)),
        ("multi_causal", "output", changed(d_in, lambda s: s.n_heads > 1)),  # W_O back to d_model
        ("multi", "output", changed(d_in, lambda s: s.n_heads > 1)),
        ("head1", "context", changed(d_v, lambda s: s.n_heads == 1)),  # one head: z without the mask
    ],
    # a real model's head: its place and sizes; x's slice and its always-1 input, q, k, v and the biases' slices;
    # the query's scores and weights over every token
    # (a decoder, SmolLM2: no bias; its key/value head, shared; q and k before and after RoPE)
    "RealHeadPlace": [
        *(("place", name, lambda s: [()]) for name in
          ("layer_number", "n_layers", "head_number", "n_heads", "d_model", "d_head")),
        *(("place", name, lambda s: [()] if _decoder(s) else []) for name in ("kv_head_number", "n_kv_heads")),
    ],
    "RealProjection": [
        ("model", "embeddings", lambda s: [(s.query, m) for m in (*range(6), *(() if _decoder(s) else (384,)))]),
        *(("model", field, lambda s: [(s.query, m) for m in range(6)]) for field in ("queries", "keys", "values")),
        *(("model", field, lambda s: [(s.query, m) for m in range(6)] if _decoder(s) else [])
          for field in ("unrotated_queries", "unrotated_keys")),
        *(("bias", field, lambda s: [] if _decoder(s) else [(m,) for m in range(6)])
          for field in ("bias_query", "bias_key", "bias_value")),
        ("place", "bias_row", lambda s: [] if _decoder(s) else [()]),
        ("place", "kv_head_number", lambda s: [()] if _decoder(s) else []),
    ],
    "RealWeights": [("model", field, lambda s: [(s.query, j) for j in range(s.n_tokens)])
                    for field in ("scaled_scores", "weights")],
    # in order and backwards, their scores and weights (and the weights' scale, colours only or not)
    "OrderBlind": [*((source, field, _unless_decoder(CELLS, source)) for source in ("trace", "positionless")
                     for field in ("scaled_scores", "weights")),
                   *(("backwards", field, CELLS) for field in ("scaled_scores", "weights")),
                   ("extremes", "weights", _unless_decoder(ENDS, "extremes")),
                   ("positionless_extremes", "weights", _unless_decoder(ENDS, "positionless_extremes")),
                   ("backwards_extremes", "weights", ENDS)],
    # the query's pairs: its numbers, each pair's θ_i and angle, the pair turned; its position m
    # (a real head's: its first two pairs and its last)
    "RopePairs": [("rope", "queries", lambda s: [(s.query, c) for i in _table_pairs(s) for c in (2 * i, 2 * i + 1)]),
                  ("rope", "frequencies", lambda s: [(i,) for i in _table_pairs(s)]),
                  ("rope", "angles", lambda s: [(s.query, i) for i in _table_pairs(s)]),
                  ("rope", "rotated_queries",
                   lambda s: [(s.query, c) for i in _table_pairs(s) for c in (2 * i, 2 * i + 1)]),
                  ("rope_whole", "positions", lambda s: [(s.query,)])],
    # without positions and with RoPE, their scores and weights (and the weights' scale)
    # (a real head's 32 pairs: its fastest and slowest drawn)
    "ClockHands": [*((source, field, lambda s: [(i,) for i in _clock_pairs(s)])
                     for source in ("clock", "shifted") for field in ("query_turns", "key_turns", "angles_between",
                                                                      "contributions")),
                   ("clock", "frequencies", lambda s: [(i,) for i in _clock_pairs(s)]),
                   *((source, "score", lambda s: [()]) for source in ("clock", "shifted", "half", "reordered"))],
    "RopeScores": [*((source, field, _unless_decoder(CELLS, source)) for source in ("trace", "positionless")
                     for field in ("scaled_scores", "weights")),
                   *(("rope", field, CELLS) for field in ("scaled_scores", "weights")),
                   ("extremes", "weights", _unless_decoder(ENDS, "extremes")),
                   ("positionless_extremes", "weights", _unless_decoder(ENDS, "positionless_extremes")),
                   ("rope_extremes", "weights", ENDS)],
    "KVCacheSteps": [  # every step's new key and value rows, its weights over the cache, its query and context
        *((f"generation{t + 1}", name, lambda s, t=t, name=name: [
            (t, c) for c in range(_cache_entries(s, name))] if t < smol_cache_rows(s) else [])
          for t in range(GENERATION_STEPS) for name in ("keys", "values")),
        *((f"generation{t + 1}", "weights", lambda s, t=t: [(j,) for j in range(t + 1)] if _step_told(s, t) else [])
          for t in range(GENERATION_STEPS)),
        *((f"generation{t + 1}", name, lambda s, t=t, name=name: [
            (c,) for c in range(_cache_entries(s, name))] if _step_told(s, t) else [])
          for t in range(GENERATION_STEPS) for name in ("query", "context")),
    ],
    "CacheSavings": [  # every step's multiplies, with the cache and without
        *((f"cost{t + 1}", name, lambda s, t=t: [()] if t < s.n_tokens else [])
          for t in range(16) for name in ("multiplies_with_cache", "multiplies_without_cache")),
    ],
    "GroupedHeads": [  # head 1's weights for the query, the key/value heads, the output's shape and the query's row;
        # a decoder's: every head of the chosen head's group, the keys up to the query, the output's first 4 of 576
        *((f"head{k + 1}", "weights", lambda s, k=k: [(s.query, j) for j in _grouped_keys(s)]
           if k in _grouped_columns(s) else []) for k in range(9)),
        ("grouped_whole", "n_heads", lambda s: [()]),
        ("grouped_whole", "n_kv_heads", lambda s: [()]),
        ("grouped_whole", "d_out", lambda s: [()]),
        ("grouped", "output", lambda s: [(s.query, c) for c in range(
            4 if _decoder(s) else s.w_out.shape[1] if s.w_out is not None else s.d_v)]),
    ],
    "CacheMemory": [  # every published model's factors, its KiB a token and GiB for the long context
        *((f"memory{k + 1}", name, (lambda s, k=k: [()] if k < 4 or _decoder(s) else []))  # a decoder's model: 5th
          for k in range(5)
          for name in ("key_and_value", "layers", "kv_heads", "d_head", "bytes_per_number", "kib_per_token")),
        *((f"memory{k + 1}_gib", "gib_context", (lambda s, k=k: [()] if k < 4 or _decoder(s) else []))
          for k in range(5)),
    ],
    "MemoryRoutes": [("traffic", "block_size", lambda s: [()]), ("traffic", "query_block_size", lambda s: [()])],
    "OnlineSoftmax": [  # every key's score and exp, every tile's m, factor, ℓ and output, o / ℓ and softmax·V
        ("online", "scores", every(n)), ("online", "tile_exps", every(n)),
        *(("online", name, lambda s: every_index((-(-s.n_tokens // flash_attention.FLASH_BLOCKS[0]),)))
          for name in ("maxima", "rescales", "sums")),
        ("online", "outputs", lambda s: every_index((-(-s.n_tokens // flash_attention.FLASH_BLOCKS[0]), s.d_v))),
        ("online", "output", every(d_v)), ("step", "context", every(d_v)),
    ],
    "TiledTraffic": [(source, name, lambda s: [()]) for source in ("traffic", "a100") for name in (
        "standard_reads", "standard_writes", "standard_accesses", "flash_reads", "flash_writes", "flash_accesses",
        "standard_formula", "n", "d", "sram")],
}
KEY_NUMBERS.update({scene: list(required) for checks in lecture_checks() for scene, required in
                    checks.key_numbers.items()})  # the lectures that declare their proof in their folders
"""What each scene must show at least (step.x[j] and trace.x[query, j] count as the same number)."""

COLOURS_ONLY = "colours only"
"""What a token grid says when its cells show colours, not numbers (then its rows are told apart)."""

CASES = [
    pytest.param(scene, scenario, id=f"{scene[1]}-{scenario}")
    for scene in SCENES for scenario in scenarios_of(scene[1], NUMBER_SCENARIOS)
]


@pytest.mark.parametrize(("scene", "scenario"), CASES)
def test_every_shown_and_said_number_is_attention_maths(scene_builds, scene: tuple[str, str], scenario: str) -> None:
    build = built(scene_builds, scene, scenario)
    assert build.shown, f"{build.label}: records no numbers at all"
    assert build.beats, f"{build.label}: has no beats"
    problems = number_problems(build)
    assert not problems, f"{build.label}: {len(problems)} wrong number(s):\n  " + "\n  ".join(problems)


@pytest.mark.parametrize(("scene", "scenario"), CASES)
def test_scene_shows_its_key_numbers(scene_builds, scene: tuple[str, str], scenario: str) -> None:
    assert scene[1] in KEY_NUMBERS, f"no KEY_NUMBERS entry for {scene[1]}: say what it must show"
    build = built(scene_builds, scene, scenario)
    query = build.scenario.query
    shown = shown_keys(build)
    _GRID_NUMBERS[0] = COLOURS_ONLY not in build.texts
    _X_NUMBERS[0] = not any(text.startswith("X: ") for text in build.texts)
    missing = []
    for source, field, indexes in KEY_NUMBERS[scene[1]]:
        for index in indexes(build.scenario):
            key = canonical(Fact(source, field, tuple(index)), query)
            if key not in shown and (*key[:3], "magnitude") not in shown:  # a term after its own sign
                missing.append(f"{source}.{field}{list(index)}")
    assert not missing, f"{build.label}: never shows {len(missing)} key number(s): {', '.join(missing)}"


@pytest.mark.parametrize(("scene", "scenario"), CASES)
def test_every_digit_on_screen_is_a_recorded_fact(scene_builds, scene: tuple[str, str], scenario: str) -> None:
    """A digit drawn outside the recording path escapes every check above: integers count too."""
    build = built(scene_builds, scene, scenario)
    problems = sorted({problem for play in build.plays for problem in play.unrecorded})
    assert not problems, f"{build.label}:\n  " + "\n  ".join(problems)


@pytest.mark.parametrize(("scene", "scenario"), CASES)
def test_numbers_of_tokens_and_dimensions_stand_in_registered_bands(scene_builds, scene: tuple[str, str],
                                                                    scenario: str) -> None:
    """A scene that shows numbers of tokens, keys or dimensions registers the rows and columns it lays them
    out by (``scene.rows``, ``scene.columns``; the kit's grids and bars give theirs), so that every one is
    held to its own (:func:`scene_helpers.number_problems` says where one stands in another's)."""
    build = built(scene_builds, scene, scenario)
    derived = derive_all(build.scenario)
    # a number of an indexed thing (a quantity alone asks for no table; a thing's own number "k3" is a label, the
    # anchor of its band rather than a number held by one)
    indexed = [s.fact for s, seen in zip(build.shown, build.on_screen, strict=True)
               if seen and s.fact.source not in WITHOUT_QUANTITY
               and any(kind != "field" for kind, _ in belongs_to(s.fact, build.scenario.query, derived))]
    if indexed:
        assert sum(play.placed for play in build.plays) > 0, (
            f"{build.label}: shows {len(indexed)} numbers of tokens, keys or dimensions (such as "
            f"{', '.join(map(str, indexed[:3]))}) but registers no rows or columns that hold any of them")


# -- the checker itself ---------------------------------------------------------------------------


def test_expected_text_formats_independently() -> None:
    assert expected_text(0.125, 2) == "0.12"  # half to even, as the exact binary value says
    assert expected_text(2.675, 2) == "2.67"  # 2.675 is 2.67499999... in binary
    assert expected_text(-0.004, 2) == "0.00"  # never "−0.00"
    assert expected_text(-1.5, 1) == "−1.5"  # U+2212
    assert expected_text(-1.5, 0) == "−2"
    assert expected_text(3.0, 3) == "3.000"
    assert expected_text(float("-inf"), 2) == "−∞"
    assert expected_text(1e-7, 6) == "0.000000"


class _Numbers(ExplainerScene):
    """Draws q·k scores and says the first; ``mistake`` says which lie to tell."""

    mistake = "none"

    def construct(self) -> None:
        precision = self.scenario.precision
        row = VGroup(*(self.number("step", "scores", j) for j in range(self.scenario.n_tokens)))
        name = self.label("q{} · k{}", query_number(), position(0))
        self.add(VGroup(name, row).arrange())
        said = f"q{self.cite(query_number())} · k{self.cite(position(0))} = {self.fmt('step', 'scores', 0)}"
        mistake = self.mistake
        if mistake == "recorded text":
            self.shown[0] = Shown(value("step", "scores", 0), "9.99", precision, mobject=self.shown[0].mobject)
        elif mistake == "drawn text":
            liar = text("9.99").move_to(row[0])
            row.remove(row[0])
            self.add(liar)
            self.shown[0] = Shown(value("step", "scores", 0), self.shown[0].text, precision, mobject=liar)
        elif mistake == "precision":
            self.add_source("step", self.step, precision + 1)  # one decimal more than the scenario's
            self.add(self.number("step", "scores", 1).next_to(row, direction=[0, -1, 0]))
        elif mistake == "never shown":
            self.number("step", "weights", 0)
        elif mistake == "unrecorded":
            self.add(text("0.42").to_edge([0, -1, 0]))
        elif mistake == "typed integer":
            self.add(text("= √7 =").to_edge([0, -1, 0]))
        elif mistake == "bad index":
            self.shown.append(Shown(value("step", "scores", 99), "0.00", precision, mobject=row[0]))
        elif mistake == "unknown source":
            self.add_source("mine", self.trace, precision)
            self.add(self.number("mine", "scores", 0, 0).to_edge([0, -1, 0]))
        elif mistake == "transformed into":
            # row[0] takes the look of the weight; the recorded weight mobject is never drawn
            self.play(Transform(row[0], self.number("step", "weights", 0).move_to(row[0])))
        elif mistake == "typed caption":
            said += " (about 3)"
        elif mistake == "caption not on screen":
            said += f", then {self.fmt('step', 'weights', 0)}"
        elif mistake == "none":
            # honest: a number shown only during a play (gone at its end) was on screen
            flash = self.number("step", "weights", 0).to_edge([0, -1, 0])
            self.play(LaggedStart(FadeIn(flash, remover=True), row.animate.shift([0, -0.1, 0])))
        self.beat(said, row.animate.shift([0, 0.1, 0]))


def _mistake(name: str, tmp_path) -> Build:
    cls = type(f"Mistake{name.title().replace(' ', '')}", (_Numbers,), {"mistake": name, "__module__": __name__})
    build = build_scene(cls, preset("dog-chased-ball"), tmp_path)
    assert build.error is None, build.error
    return build


def test_checker_passes_an_honest_scene(tmp_path) -> None:
    build = _mistake("none", tmp_path)
    assert number_problems(build) == []
    assert not any(play.unrecorded for play in build.plays)


@pytest.mark.parametrize(
    ("mistake", "message"),
    [
        ("recorded text", "recorded text '9.99', attention_math says"),
        ("drawn text", "'9.99' shows numbers ['9.99']"),
        ("precision", "recorded precision 3, expected 2"),
        ("never shown", "recorded, but its mobject was never on screen"),
        ("bad index", "cannot derive it from attention_math"),
        ("unknown source", "unknown source 'mine'"),
        ("transformed into", "step.weights[0]"),
        ("typed caption", "says numbers ['5', '1', '2.89', '3'], its facts say ['5', '1', '2.89']"),
        ("caption not on screen", "says 0.17 (step.weights[0]), which is not on screen in this beat"),
    ],
)
def test_checker_catches_a_wrong_number(mistake: str, message: str, tmp_path) -> None:
    problems = number_problems(_mistake(mistake, tmp_path))
    assert any(message in problem for problem in problems), problems


class _Meanings(ExplainerScene):
    """A table of two quantities under their heads (the keys' scores, their weights), a row per key; a caption
    naming two keys with their weights. ``mistake`` keeps every number true and gives one the wrong meaning."""

    mistake = "none"

    def construct(self) -> None:
        n, mistake = self.scenario.n_tokens, self.mistake
        keys = VGroup(*(self.label("k{}", position(j, "key"), size=22) for j in range(n))).arrange([0, -1, 0])
        heads = VGroup(text("score", size=22), text("weight", size=22))
        columns = [("step", "scores"), ("step", "weights")]
        if mistake == "columns swapped":  # the numbers laid out in the other order, the heads as they were
            columns.reverse()
        cells = [[self.number(source, field, j, size=22).move_to([1.5 * (k + 1), keys[j].get_y(), 0])
                  for j in range(n)] for k, (source, field) in enumerate(columns)]
        for k, head in enumerate(heads):
            head.move_to([1.5 * (k + 1), keys.get_top()[1] + 0.4, 0])
        numbers = [c for column in cells for c in column]
        self.rows("key", dict(enumerate(keys)), *numbers)
        self.fields("column", {"trace.scores": heads[0], "trace.weights": heads[1]}, *numbers)
        extra: list[object] = []
        if mistake == "step out of range":
            extra.append(FadeIn(self.label("step {}", position(n, "step"), size=22).to_edge([0, -1, 0])))
        self.add(keys, heads, *numbers)
        if mistake == "typed through a transform":
            self.play(Transform(cells[1][0], text("0.99", size=22).move_to(cells[1][0])))
        a, b = (1, 0) if mistake == "caption swapped" else (0, 1)  # the weights said beside the other key
        said = (f"{self.quote(0, 'key')} gets {self.fmt('step', 'weights', a)} and {self.quote(1, 'key')} "
                f"{self.fmt('step', 'weights', b)}.")
        self.beat(said, *extra)


@pytest.mark.parametrize(
    ("mistake", "message"),
    [
        ("columns swapped", "step.weights[0] ... stands in the column of the quantity trace.scores"),
        ("caption swapped", "says step.weights[1] (key 2) of 'The', which is key 1"),
        ("step out of range", "step 6 does not exist: the scenario has 5"),
        ("typed through a transform", "a number drawn through a Transform into it, not in scene.shown"),
    ],
)
def test_checker_catches_a_true_number_with_another_meaning(mistake: str, message: str, tmp_path) -> None:
    """A true number in another quantity's column, a caption tying a true number to the other token, a position
    past the last, digits typed into a recorded number by a Transform: each fails the number checks."""
    cls = type(f"Meaning{mistake.title().replace(' ', '')}", (_Meanings,), {"mistake": mistake, "__module__": __name__})
    honest = type("MeaningNone", (_Meanings,), {"__module__": __name__})
    scenario = preset("dog-chased-ball")
    clean = build_scene(honest, scenario, tmp_path)
    assert clean.error is None and number_problems(clean) == [], number_problems(clean)
    assert sum(play.placed for play in clean.plays) > 0
    build = build_scene(cls, scenario, tmp_path)
    assert build.error is None, build.error
    problems = number_problems(build) + [p for play in build.plays for p in play.unrecorded]
    head, _, tail = message.partition(" ... ")
    assert any(head in problem and tail in problem for problem in problems), problems


@pytest.mark.parametrize(("mistake", "shown"), [("unrecorded", "'0.42'"), ("typed integer", "'= √7 ='")])
def test_checker_catches_a_digit_drawn_outside_the_recording_path(mistake: str, shown: str, tmp_path) -> None:
    build = _mistake(mistake, tmp_path)
    found = [problem for play in build.plays for problem in play.unrecorded]
    assert found and shown in found[0], found


EXACT = [
    pytest.param(scene, scenario, id=f"{scene[1]}-{scenario}")
    for scene in SCENES if scene[1] == "Projection"
    for scenario in scenarios_of(scene[1], NUMBER_SCENARIOS) if not SCENARIOS[scenario]().rounded
]


@pytest.mark.parametrize(("scene", "scenario"), EXACT)
def test_at_its_inputs_precision_the_projection_adds_up_exactly(scene_builds, scene, scenario) -> None:
    """Shown with as many decimals as its inputs' products have, every x·w term and every sum of
    them is exact: a student who redoes the projection with the shown numbers gets the shown ones."""
    build = built(scene_builds, scene, scenario)
    assert build.relations, f"{build.label}: shows no arithmetic"
    inexact = [relation for relation in build.relations if relation.sign != "="]
    assert not inexact, f"{build.label}: {inexact}"


# -- every number in its place: the checker ------------------------------------------------------------


def test_every_kind_a_field_names_is_one_a_scene_can_register() -> None:
    named = {kind for kinds in (*BELONGS.values(), *SCALING_BELONGS.values()) for kind in kinds} | {"head"}
    assert named <= set(known_kinds("band")), named - set(known_kinds("band"))


def test_belongs_to_reads_the_thing_from_the_fact_alone() -> None:
    scenario = preset("two-heads")
    derived = derive_all(scenario)
    q = scenario.query
    weights = ("field", "trace.weights")  # a number's quantity: the column of a table it may stand in
    assert belongs_to(value("step", "weights", 2), q, derived) == [weights, ("query", q), ("key", 2)]
    assert belongs_to(value("step", "context", 1), q, derived) == [("field", "trace.context"), ("query", q), ("d_v", 1)]
    assert belongs_to(value("trace", "values", 3, 0), q, derived) == [("field", "trace.values"), ("key", 3), ("d_v", 0)]
    assert belongs_to(value("step", "weighted_values", 0, 1), q, derived)[1:] == [("key", 0), ("d_v", 1)]
    assert belongs_to(value("head2", "weights", 0, 1), q, derived) == [
        ("field", "head2.weights"), ("head", 1), ("query", 0), ("key", 1)]
    assert belongs_to(value("trace", "weights", 1, reduce="sum"), q, derived) == [weights, ("query", 1)]
    assert belongs_to(value("scaling", "raw_std", -1), q, derived)[1:] == [
        ("size", len(scaling_spread(seed=0).dims) - 1)]
    # the heads' z joined: column c is head c // d_v's; the sentence backwards: row i is token n − 1 − i's
    two = preset("two-heads")
    assert belongs_to(value("multi", "concat", 1, 3), two.query, derive_all(two))[1:] == [
        ("query", 1), ("concat", 3), ("head", 3 // two.d_v)]
    n = scenario.n_tokens
    assert belongs_to(value("backwards", "weights", 0, 1), q, derived)[1:] == [("query", n - 1), ("key", n - 2)]
    # a position stands in its own thing's band; a generation step is the query of the token it writes
    assert belongs_to(position(3), q, derived) == [("token", 3)]
    assert belongs_to(position(3, "key"), q, derived) == [("key", 3)]
    assert belongs_to(position(1, "step"), q, derived) == [("query", 1)]
    assert belongs_to(query_number(), q, derived) == [("query", q)]
    for unplaced in (size("d_k"), position(0, "layer")):
        assert belongs_to(unplaced, q, derived) == [], unplaced
    assert belongs_to(value("extremes", "weights", 1), q, derived)[1:] == [("end", 1)]  # a legend's high end
    for whole in (value("step", "exp_sum"), value("saturation", "weights", 0, 1)):
        assert belongs_to(whole, q, derived) == [("field", f"{canonical(whole, q)[0]}.{whole.field}")], whole


def test_a_position_names_a_thing_the_scenario_has() -> None:
    """"step 6" of a 5-token sentence, "head 3" of two heads, "pair 2" of d_k 2: each fails to derive."""
    scenario, derived = preset("dog-chased-ball"), derive_all(preset("dog-chased-ball"))
    assert expected_for(position(4, "step"), scenario, derived) == ("5", None)
    for wrong, message in ((position(5, "step"), "step 6 does not exist: the scenario has 5"),
                           (position(1, "head"), "head 2 does not exist: the scenario has 1"),
                           (position(1, "pair"), "pair 2 does not exist: the scenario has 1"),
                           (position(3, "d_k"), "d_k 4 does not exist: the scenario has 2")):
        with pytest.raises(ValueError, match=message):
            expected_for(wrong, scenario, derived)


def test_a_band_holds_what_stands_in_it_else_the_nearest() -> None:
    bands = [(0, 0.9, 1.1), (1, 0.4, 0.6), (2, -0.1, 0.1)]
    assert band_of(1.0, bands) == 0
    assert band_of(0.72, bands) == 1  # between two bands: the nearer middle
    assert band_of(0.78, bands) == 0
    assert band_of(1.5, bands) is None  # outside them all: not placed by them
    assert band_of(-0.12, bands) == 2  # a hair outside the last


class _Places(ExplainerScene):
    """Key j's score beside its bar, the weights in a token × token grid; ``mistake`` puts some elsewhere."""

    mistake = "none"

    def construct(self) -> None:
        n, mistake = self.scenario.n_tokens, self.mistake
        labels = [self.label("k{}", position(j), size=22) for j in range(n)]
        chart = BarRows(labels, [self.value_of(value("step", "scores", j)) for j in range(n)], width=3, pitch=0.4,
                        color="#888888").to_edge([-1, 0, 0])
        self.rows("key", chart)
        swap = {0: 1, 1: 0} if mistake == "swapped bars" else {}
        numbers = [self.number("step", "scores", j, size=22) for j in range(n)]
        for j, number in enumerate(numbers):
            chart.number_spot(swap.get(j, j), number)
        grid = HeatGrid(n, n, cell_w=0.7, cell_h=0.4, size=20).to_edge([1, 0, 0])
        self.rows("query", grid)
        self.columns("key", grid)
        cells = [[self.number("trace", "weights", i, j, size=20) for j in range(n)] for i in range(n)]
        if mistake == "grid one row down":
            cells = [cells[(i - 1) % n] for i in range(n)]
        elif mistake == "grid transposed":
            cells = [[cells[j][i] for j in range(n)] for i in range(n)]
        grid.place(cells)
        far = self.number("step", "weights", 0, size=22).to_edge([0, -1, 0])  # under everything: no band holds it
        self.beat("Scores and weights.", FadeIn(chart, *numbers, grid.brackets, *grid.cells, *(c for row in cells
                                                                                                for c in row), far))


def _places(name: str, tmp_path) -> Build:
    cls = type(f"Places{name.title().replace(' ', '')}", (_Places,), {"mistake": name, "__module__": __name__})
    build = build_scene(cls, preset("dog-chased-ball"), tmp_path)
    assert build.error is None, build.error
    return build


def test_place_checker_passes_numbers_in_their_own_bands(tmp_path) -> None:
    build = _places("none", tmp_path)
    assert number_problems(build) == []
    assert sum(play.placed for play in build.plays) > 0


@pytest.mark.parametrize(
    ("mistake", "message"),
    [
        ("swapped bars", "step.scores[0] '{}' stands in the row of key 2, not in its own (key 1)"),
        ("grid one row down", "trace.weights[0, 0] '{}' stands in the row of query 2, not in its own (query 1)"),
        ("grid transposed", "trace.weights[0, 1] '{}' stands in the column of key 1, not in its own (key 2)"),
    ],
)
def test_place_checker_catches_a_true_number_in_another_place(mistake: str, message: str, tmp_path) -> None:
    build = _places(mistake, tmp_path)
    fact = {"swapped bars": value("step", "scores", 0), "grid one row down": value("trace", "weights", 0, 0),
            "grid transposed": value("trace", "weights", 0, 1)}[mistake]
    shown = next(item.text for item in build.shown if item.fact == fact)
    problems = number_problems(build)
    assert any(message.format(shown) in problem for problem in problems), problems
