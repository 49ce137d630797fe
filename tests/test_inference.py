"""Lecture 9, inference: generation with a KV cache, its multiplies and its size, and grouped-query attention.

Each function is checked against loops written from the formulas (not by calling it), and
against the full causal and multi-head attention it must agree with.
"""

from __future__ import annotations

import dataclasses
import itertools
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scenario_errors import assert_scenario_error
from strategies import FAST

from attention_math import (
    PUBLISHED_CONFIGS,
    GroupedQueryTrace,
    KVCacheTrace,
    MultiHeadTrace,
    Scenario,
    cache_memory,
    grouped_query_attention,
    kv_cache_bytes,
    kv_cache_generation,
    multi_head_attention,
    preset,
    self_attention,
    shared_key_value_heads,
)

NUMBER = st.floats(-3, 3, allow_nan=False).map(lambda v: round(v, 2))


def draw_array(draw: st.DrawFn, *shape: int) -> list:  # type: ignore[type-arg]
    if len(shape) == 1:
        return draw(st.lists(NUMBER, min_size=shape[0], max_size=shape[0]))
    return [draw_array(draw, *shape[1:]) for _ in range(shape[0])]


# -- the KV cache ---------------------------------------------------------------------------------


def plain_causal_row(
    x: list[list[float]], wq: list[list[float]], wk: list[list[float]], wv: list[list[float]], t: int, scaled: bool
) -> tuple[list[float], list[float]]:
    """Token ``t``'s causal weights (over tokens 0..t) and context, as loops over Python floats."""

    def project(row: list[float], w: list[list[float]]) -> list[float]:
        return [sum(row[m] * w[m][c] for m in range(len(w))) for c in range(len(w[0]))]

    q = project(x[t], wq)
    keys = [project(x[j], wk) for j in range(t + 1)]
    values = [project(x[j], wv) for j in range(t + 1)]
    divisor = math.sqrt(len(wk[0])) if scaled else 1.0
    scores = [sum(a * b for a, b in zip(q, k, strict=True)) / divisor for k in keys]
    exps = [math.exp(s - max(scores)) for s in scores]
    weights = [e / sum(exps) for e in exps]
    return weights, [sum(w * v[c] for w, v in zip(weights, values, strict=True)) for c in range(len(wv[0]))]


def multiplies(d_in: int, d_k: int, d_v: int, seen: int) -> tuple[int, int]:
    """With and without a cache, for a step whose cache holds ``seen`` tokens afterwards."""
    attend = seen * d_k + seen * d_v  # K q and weights @ V
    return d_in * (2 * d_k + d_v) + attend, seen * d_in * (d_k + d_v) + d_in * d_k + attend


@st.composite
def cache_problems(draw: st.DrawFn) -> tuple[list, ...]:  # type: ignore[type-arg]
    n, d_in = draw(st.integers(1, 6)), draw(st.integers(1, 4))
    d_k, d_v = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    return tuple(draw_array(draw, *shape) for shape in ((n, d_in), (d_in, d_k), (d_in, d_k), (d_in, d_v)))


def check_steps(
    trace: KVCacheTrace, x: np.ndarray, wq: np.ndarray, wk: np.ndarray, wv: np.ndarray, scaled: bool
) -> None:
    """Every step against full causal attention, the projections and the closed-form counts."""
    full = self_attention(x, wq, wk, wv, causal=True, scaled=scaled)
    keys, values = x @ wk, x @ wv
    (n, d_in), d_k, d_v = x.shape, wk.shape[1], wv.shape[1]
    assert trace.n_tokens == len(trace.steps) == n
    for t, step in enumerate(trace.steps):
        assert step.index == t
        assert step.keys.shape == (t + 1, d_k) and step.values.shape == (t + 1, d_v)
        np.testing.assert_allclose(step.keys, keys[: t + 1], rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(step.values, values[: t + 1], rtol=1e-12, atol=1e-12)
        assert np.array_equal(step.keys[t], step.new_key) and np.array_equal(step.values[t], step.new_value)
        if t:  # the cache grows by one row: the rows before are the previous step's
            assert np.array_equal(step.keys[:t], trace.steps[t - 1].keys)
            assert np.array_equal(step.values[:t], trace.steps[t - 1].values)
        np.testing.assert_allclose(step.query, x[t] @ wq, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(step.weights, full.weights[t, : t + 1], rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(step.context, full.context[t], rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(step.context_without_cache, full.context[t], rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(step.scaled_scores, full.scaled_scores[t, : t + 1], rtol=1e-12, atol=1e-12)
        assert (step.multiplies_with_cache, step.multiplies_without_cache) == multiplies(d_in, d_k, d_v, t + 1)


@FAST
@given(cache_problems(), st.booleans())
def test_every_cache_step_is_its_row_of_full_causal_attention(problem: tuple[list, ...], scaled: bool) -> None:  # type: ignore[type-arg]
    x, wq, wk, wv = problem
    trace = kv_cache_generation(x, wq, wk, wv, scaled=scaled)
    arrays = [np.array(a, dtype=float) for a in problem]
    check_steps(trace, arrays[0], arrays[1], arrays[2], arrays[3], scaled)
    for t, step in enumerate(trace.steps):
        weights, context = plain_causal_row(x, wq, wk, wv, t, scaled)
        np.testing.assert_allclose(step.weights, weights, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(step.context, context, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize(
    ("n", "d_in", "d_k", "d_v", "scale"),
    [
        pytest.param(1, 3, 2, 2, 1.0, id="one token"),
        pytest.param(1, 1, 1, 1, 1.0, id="all ones"),
        pytest.param(7, 5, 3, 2, 1.0, id="sizes that do not divide"),
        pytest.param(12, 4, 4, 6, 1.0, id="d_v above d_k"),
        pytest.param(6, 3, 2, 3, 30.0, id="huge scores"),
    ],
)
def test_cache_steps_on_chosen_shapes(n: int, d_in: int, d_k: int, d_v: int, scale: float) -> None:
    rng = np.random.default_rng(n * 100 + d_in)
    x = rng.normal(size=(n, d_in)) * scale
    wq, wk, wv = rng.normal(size=(d_in, d_k)) * scale, rng.normal(size=(d_in, d_k)), rng.normal(size=(d_in, d_v))
    for scaled in (True, False):
        check_steps(kv_cache_generation(x, wq, wk, wv, scaled=scaled), x, wq, wk, wv, scaled)


@pytest.mark.parametrize(("n", "d_in", "d_k", "d_v"), [(1, 2, 2, 2), (5, 3, 2, 4), (9, 7, 5, 3), (16, 8, 4, 4)])
def test_the_multiplies_add_up_to_the_closed_forms(n: int, d_in: int, d_k: int, d_v: int) -> None:
    rng = np.random.default_rng(7)
    shapes = ((n, d_in), (d_in, d_k), (d_in, d_k), (d_in, d_v))
    trace = kv_cache_generation(*(rng.normal(size=shape) for shape in shapes))
    with_cache = [step.multiplies_with_cache for step in trace.steps]
    without_cache = [step.multiplies_without_cache for step in trace.steps]
    triangle = n * (n + 1) // 2  # 1 + 2 + … + n tokens seen
    assert trace.total_multiplies_with_cache == sum(with_cache) == n * d_in * (2 * d_k + d_v) + triangle * (d_k + d_v)
    assert trace.total_multiplies_without_cache == sum(without_cache) == (
        triangle * d_in * (d_k + d_v) + n * d_in * d_k + triangle * (d_k + d_v)
    )
    # the cache saves exactly the earlier tokens' keys and values projected again
    for t in range(n):
        assert without_cache[t] - with_cache[t] == t * d_in * (d_k + d_v)
    # with the cache a step's work grows by d_k + d_v a token; without it by d_in·(d_k + d_v) more
    assert all(b - a == d_k + d_v for a, b in itertools.pairwise(with_cache))
    assert all(b - a == (d_in + 1) * (d_k + d_v) for a, b in itertools.pairwise(without_cache))


def test_the_cache_trace_is_frozen_and_the_inputs_untouched() -> None:
    rng = np.random.default_rng(3)
    arrays = [rng.normal(size=shape) for shape in ((4, 3), (3, 2), (3, 2), (3, 3))]
    copies = [a.copy() for a in arrays]
    trace = kv_cache_generation(*arrays)
    for array, copy in zip(arrays, copies, strict=True):
        assert np.array_equal(array, copy) and array.flags.writeable
    with pytest.raises(dataclasses.FrozenInstanceError):
        trace.steps = ()  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        trace.steps[0].context = trace.steps[0].query  # type: ignore[misc]
    first = trace.steps[0]
    fields = [f.name for f in dataclasses.fields(first) if isinstance(getattr(first, f.name), np.ndarray)]
    assert len(fields) == 11
    for step in trace.steps:
        for name in fields:
            array = getattr(step, name)
            assert not array.flags.writeable and array.dtype == np.float64, name
            assert not any(np.shares_memory(array, given) for given in arrays), name
    # each step keeps its own cache: a later step's rows are a new array, not a view of one growing buffer
    assert not np.shares_memory(trace.steps[1].keys, trace.steps[2].keys)
    assert trace.keys is trace.steps[-1].keys and trace.values is trace.steps[-1].values
    assert trace.full.causal and not trace.full.weights.flags.writeable


@pytest.mark.parametrize(
    ("changes", "field", "words"),
    [
        pytest.param({"w_key": [[0.1, 0.2, 0.3]] * 3}, "w_key", ("2 columns", "d_k"), id="d_k"),
        pytest.param({"w_query": [[0.1, 0.2]] * 2}, "w_query", ("3 rows",), id="rows"),
        pytest.param({"w_value": [[math.inf] * 2] * 3}, "w_value", ("finite",), id="infinity"),
        pytest.param({"embeddings": [1.0, 2.0, 3.0]}, "embeddings", ("2-d",), id="a vector"),
        pytest.param({"embeddings": [[1e200] * 3] * 2}, "embeddings", ("too large",), id="overflow"),
    ],
)
def test_bad_cache_input_names_the_field(changes: dict[str, object], field: str, words: tuple[str, ...]) -> None:
    given_: dict[str, object] = {"embeddings": [[0.1, 0.2, 0.3], [0.4, 0.5, 0.6]], "w_query": [[0.1, 0.2]] * 3,
                                 "w_key": [[0.3, 0.4]] * 3, "w_value": [[0.5, 0.6]] * 3, **changes}
    assert_scenario_error(lambda: kv_cache_generation(**given_), field, *words)  # type: ignore[arg-type]


# -- the size of the cache ------------------------------------------------------------------------


def test_kv_cache_bytes_against_hand_computed_figures() -> None:
    assert kv_cache_bytes(32, 32, 128) == 2 * 32 * 32 * 128 * 2 == 512 * 1024
    assert kv_cache_bytes(32, 8, 128) == 128 * 1024
    assert kv_cache_bytes(32, 1, 128) == 16 * 1024
    assert kv_cache_bytes(32, 32, 128, bytes_per_number=4) == 1024 * 1024
    assert kv_cache_bytes(32, 32, 128, tokens=4096) == 2 * 2**30  # 2 GiB for a 4096-token context
    assert kv_cache_bytes(1, 1, 1, 1, 0) == 0
    assert kv_cache_bytes(np.int64(2), 3, 5, 7, 11) == 2 * 2 * 3 * 5 * 7 * 11  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("arguments", "field"),
    [
        pytest.param((0, 32, 128), "layers", id="no layers"),
        pytest.param((32, -1, 128), "kv_heads", id="negative"),
        pytest.param((32, 8, 128.0), "d_head", id="a float"),
        pytest.param((32, 8, 128, True), "bytes_per_number", id="a boolean"),
        pytest.param((32, 8, 128, 2, -5), "tokens", id="negative tokens"),
        pytest.param((32, "8", 128), "kv_heads", id="text"),
    ],
)
def test_bad_cache_size_arguments_name_the_field(arguments: tuple[object, ...], field: str) -> None:
    assert_scenario_error(lambda: kv_cache_bytes(*arguments), field, "whole number")  # type: ignore[arg-type]


# (name, hidden_size, the cache per token in bytes, worked out by hand: 2 × layers × kv heads × d_head × 2 B)
PUBLISHED = {
    "meta-llama/Llama-2-7b-hf": (4096, "multi-head", 2 * 32 * 32 * 128 * 2),  # 512 KiB
    "meta-llama/Llama-2-70b-hf": (8192, "grouped-query", 2 * 80 * 8 * 128 * 2),  # 320 KiB
    "mistralai/Mistral-7B-v0.1": (4096, "grouped-query", 2 * 32 * 8 * 128 * 2),  # 128 KiB
    "tiiuae/falcon-7b": (4544, "multi-query", 2 * 32 * 1 * 64 * 2),  # 8 KiB
}


def test_published_configs() -> None:
    assert [config.name for config in PUBLISHED_CONFIGS] == list(PUBLISHED)
    assert {config.attention for config in PUBLISHED_CONFIGS} == {"multi-head", "grouped-query", "multi-query"}
    for config in PUBLISHED_CONFIGS:
        hidden, kind, per_token = PUBLISHED[config.name]
        assert config.d_head * config.query_heads == hidden, config.name
        assert config.attention == kind and config.cache_bytes() == per_token, config.name
        assert config.cache_bytes(1000) == 1000 * per_token
        assert config.query_heads % config.kv_heads == 0 and config.group_size == config.query_heads // config.kv_heads
        assert config.multi_head_cache_bytes() == per_token * config.group_size
        assert config.source == f"https://huggingface.co/{config.name}/blob/main/config.json"
        assert config.bytes_per_number == {"float16": 2, "bfloat16": 2}[config.dtype]
    with pytest.raises(dataclasses.FrozenInstanceError):
        PUBLISHED_CONFIGS[0].layers = 1  # type: ignore[misc]


# -- grouped-query attention ----------------------------------------------------------------------


def repeated_kv_attention(
    x: np.ndarray, wq: np.ndarray, wk: np.ndarray, wv: np.ndarray, wo: np.ndarray, causal: bool, scaled: bool
) -> tuple[np.ndarray, list[np.ndarray]]:
    """GQA as Hugging Face's repeat_kv does it: project g keys and values, repeat each h/g times,
    then attend head by head in plain loops. The output and each query head's weights."""
    h, g, n = wq.shape[0], wk.shape[0], x.shape[0]
    keys = [x @ wk[j] for j in range(g) for _ in range(h // g)]
    values = [x @ wv[j] for j in range(g) for _ in range(h // g)]
    divisor = math.sqrt(wk.shape[2]) if scaled else 1.0
    concat, all_weights = [], []
    for i in range(h):
        q = x @ wq[i]
        weights = np.zeros((n, n))
        for r in range(n):
            seen = r + 1 if causal else n
            scores = [float(q[r] @ keys[i][c]) / divisor for c in range(seen)]
            exps = [math.exp(s - max(scores)) for s in scores]
            weights[r, :seen] = [e / sum(exps) for e in exps]
        all_weights.append(weights)
        concat.append(weights @ values[i])
    return np.concatenate(concat, axis=1) @ wo, all_weights


@st.composite
def gqa_problems(draw: st.DrawFn) -> tuple[np.ndarray, ...]:
    g, size = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    h, n, d_in = g * size, draw(st.integers(1, 5)), draw(st.integers(1, 4))
    d_k, d_v, d_out = draw(st.integers(1, 3)), draw(st.integers(1, 3)), draw(st.integers(1, 3))
    shapes = ((n, d_in), (h, d_in, d_k), (g, d_in, d_k), (g, d_in, d_v), (h * d_v, d_out))
    return tuple(np.array(draw_array(draw, *shape), dtype=float) for shape in shapes)


@FAST
@given(gqa_problems(), st.booleans(), st.booleans())
def test_grouped_query_attention_equals_the_repeated_kv_loop(
    problem: tuple[np.ndarray, ...], causal: bool, scaled: bool
) -> None:
    x, wq, wk, wv, wo = problem
    trace = grouped_query_attention(x, wq, wk, wv, wo, causal=causal, scaled=scaled)
    output, weights = repeated_kv_attention(x, wq, wk, wv, wo, causal, scaled)
    np.testing.assert_allclose(trace.output, output, rtol=1e-9, atol=1e-9)
    h, g = wq.shape[0], wk.shape[0]
    assert (trace.n_heads, trace.n_kv_heads, trace.group_size) == (h, g, h // g)
    assert trace.concat.shape == (x.shape[0], h * wv.shape[2])
    for i, head in enumerate(trace.heads):
        np.testing.assert_allclose(head.weights, weights[i], rtol=1e-9, atol=1e-12)
        j = trace.kv_head_of(i)
        assert j == i // (h // g) and i in trace.groups[j]
        # the heads of a group share their key/value head: the same K and V as its first head
        first = trace.heads[trace.groups[j][0]]
        assert np.array_equal(head.keys, first.keys) and np.array_equal(head.values, first.values)
    assert sorted(i for group in trace.groups for i in group) == list(range(h))


@FAST
@given(gqa_problems(), st.booleans())
def test_one_kv_head_per_query_head_is_multi_head_attention_exactly(
    problem: tuple[np.ndarray, ...], causal: bool
) -> None:
    x, wq, wk, wv, wo = problem
    h, d_v = wq.shape[0], wv.shape[2]
    # give every query head its own key/value head: g = h
    wk, wv = np.repeat(wk, h // wk.shape[0], axis=0), np.repeat(wv, h // wv.shape[0], axis=0)
    trace = grouped_query_attention(x, wq, wk, wv, wo[: h * d_v], causal=causal)
    multi = multi_head_attention(x, wq, wk, wv, wo[: h * d_v], causal=causal)
    assert trace.n_kv_heads == trace.n_heads and trace.groups == tuple((i,) for i in range(h))
    assert np.array_equal(trace.output, multi.output) and np.array_equal(trace.concat, multi.concat)
    for ours, theirs in zip(trace.heads, multi.heads, strict=True):
        assert np.array_equal(ours.weights, theirs.weights) and np.array_equal(ours.keys, theirs.keys)


@pytest.mark.parametrize("g", [2, 3])
def test_query_head_i_uses_kv_head_i_over_the_group_size(g: int) -> None:
    rng = np.random.default_rng(g)
    x, wq = rng.normal(size=(4, 3)), rng.normal(size=(6, 3, 2))
    wk, wv = rng.normal(size=(g, 3, 2)), rng.normal(size=(g, 3, 2))
    trace = grouped_query_attention(x, wq, wk, wv, np.eye(12))
    size = 6 // g  # consecutive query heads share a key/value head, as in repeat_kv (not i % g)
    assert [trace.kv_head_of(i) for i in range(6)] == [i // size for i in range(6)]
    for i, head in enumerate(trace.heads):
        np.testing.assert_allclose(head.keys, x @ wk[i // size], rtol=1e-12)
        np.testing.assert_allclose(head.values, x @ wv[i // size], rtol=1e-12)
        np.testing.assert_allclose(head.queries, x @ wq[i], rtol=1e-12)


@pytest.mark.parametrize("causal", [False, True])
def test_one_kv_head_is_multi_query_attention(causal: bool) -> None:
    rng = np.random.default_rng(11)
    h, n, d_in, d_k, d_v = 5, 6, 4, 3, 2
    x, wq = rng.normal(size=(n, d_in)), rng.normal(size=(h, d_in, d_k))
    wk, wv, wo = rng.normal(size=(1, d_in, d_k)), rng.normal(size=(1, d_in, d_v)), rng.normal(size=(h * d_v, 3))
    trace = grouped_query_attention(x, wq, wk, wv, wo, causal=causal)
    assert trace.groups == (tuple(range(h)),) and {trace.kv_head_of(i) for i in range(h)} == {0}
    # every head is a self-attention with the one shared W_K and W_V
    for i, head in enumerate(trace.heads):
        alone = self_attention(x, wq[i], wk[0], wv[0], causal=causal)
        assert np.array_equal(head.context, alone.context)
        np.testing.assert_allclose(head.keys, x @ wk[0], rtol=1e-12)
    np.testing.assert_allclose(trace.output, repeated_kv_attention(x, wq, wk, wv, wo, causal, True)[0], rtol=1e-10)
    if causal:
        assert np.all(np.triu(trace.heads[2].weights, k=1) == 0)


def test_the_grouped_trace_is_frozen_and_the_inputs_untouched() -> None:
    rng = np.random.default_rng(5)
    arrays = [rng.normal(size=shape) for shape in ((3, 2), (4, 2, 2), (2, 2, 2), (2, 2, 1), (4, 2))]
    copies = [a.copy() for a in arrays]
    trace = grouped_query_attention(*arrays)
    assert isinstance(trace, GroupedQueryTrace) and isinstance(trace, MultiHeadTrace)
    for array, copy in zip(arrays, copies, strict=True):
        assert np.array_equal(array, copy) and array.flags.writeable
    with pytest.raises(dataclasses.FrozenInstanceError):
        trace.n_kv_heads = 4  # type: ignore[misc]
    for array in (trace.concat, trace.w_out, trace.output, *(head.keys for head in trace.heads)):
        assert not array.flags.writeable
        assert not any(np.shares_memory(array, given) for given in arrays)
    for bad in (4, -1, True, 1.0):
        assert_scenario_error(lambda bad=bad: trace.kv_head_of(bad), "query_head", "0 to 3")  # type: ignore[misc]


X = [[0.2, 0.7, 0.8], [0.2, 0.9, 0.6]]
WQ = [[[0.7, 0.8], [0.1, 0.7], [0.2, 0.8]]] * 4
WK = [[[0.8, 0.6], [0.0, 0.9], [0.7, 0.8]]] * 2
WV = [[[0.1], [0.3], [0.5]]] * 2
WO = [[0.1], [0.2], [0.3], [0.4]]


@pytest.mark.parametrize(
    ("changes", "field", "words"),
    [
        pytest.param({"w_key": WK * 3, "w_value": WV * 3}, "w_key", ("divide the 4 query heads", "got 6"),
                     id="g does not divide h"),
        pytest.param({"w_key": WK[:1] * 3, "w_value": WV[:1] * 3}, "w_key", ("got 3",), id="three of four"),
        pytest.param({"w_value": WV[:1]}, "w_value", ("2 key/value heads like w_key", "got 1"), id="g differs"),
        pytest.param({"w_key": [[[0.8, 0.6, 0.1]] * 3] * 2}, "w_key", ("2 columns", "d_k"), id="d_k"),
        pytest.param({"w_value": [[[0.1]] * 2] * 2}, "w_value", ("3 rows per head",), id="rows"),
        pytest.param({"w_query": WQ[0]}, "w_query", ("3-d",), id="a matrix for a stack"),
        pytest.param({"w_out": WO[:2]}, "w_out", ("4 rows", "4 × 1"), id="w_out rows"),
        pytest.param({"w_key": [[[math.nan] * 2] * 3] * 2}, "w_key", ("finite",), id="NaN"),
        pytest.param({"embeddings": [[1e200] * 3] * 2}, "embeddings", ("too large",), id="overflow"),
    ],
)
def test_bad_grouped_input_names_the_field(changes: dict[str, object], field: str, words: tuple[str, ...]) -> None:
    given_ = {"embeddings": X, "w_query": WQ, "w_key": WK, "w_value": WV, "w_out": WO, **changes}
    assert_scenario_error(lambda: grouped_query_attention(**given_), field, *words)  # type: ignore[arg-type]


# -- the cache's memory of the published configurations -------------------------------------------


def plain_cache_memory(layers: int, kv_heads: int, d_head: int, bytes_per_number: int, tokens: int) -> int:
    """The cache in bytes counted vector by vector: each token's key and value, per layer and key/value head,
    ``d_head`` numbers of ``bytes_per_number`` bytes each."""
    total = 0
    for _token, _layer, _kind, _head in itertools.product(range(tokens), range(layers), ("key", "value"),
                                                          range(kv_heads)):
        total += d_head * bytes_per_number
    return total


def test_cache_memory_against_a_plain_count() -> None:
    for config, context in itertools.product(PUBLISHED_CONFIGS, (1, 3, 4096)):
        memory = cache_memory(config, context)
        shape = (config.layers, config.kv_heads, config.d_head, config.bytes_per_number)
        per_token = plain_cache_memory(*shape, 1)
        assert memory.bytes_per_token == per_token and memory.kib_per_token * 1024 == per_token, config.name
        assert memory.context_bytes == per_token * context and memory.gib_context * 2**30 == per_token * context
        assert (memory.key_and_value, memory.layers, memory.kv_heads, memory.d_head, memory.bytes_per_number) == (
            2, *shape)
        assert memory.multi_head_kib_per_token * 1024 == plain_cache_memory(
            config.layers, config.query_heads, config.d_head, config.bytes_per_number, 1)
        assert memory.config is config and memory.context_tokens == context
        if context < 10:  # a short context counted whole (4096 tokens × 80 layers × … is a long loop)
            assert memory.context_bytes == plain_cache_memory(*shape, context)


def test_cache_memory_of_each_kind_as_published() -> None:
    memories = [cache_memory(config, 4096) for config in PUBLISHED_CONFIGS]
    kib = {memory.config.attention: memory.kib_per_token for memory in memories if memory is not memories[1]}
    assert kib == {"multi-head": 512.0, "grouped-query": 128.0, "multi-query": 8.0}
    assert cache_memory(PUBLISHED_CONFIGS[1], 4096).gib_context == 1.25  # 320 KiB × 4096
    with pytest.raises(dataclasses.FrozenInstanceError):
        cache_memory(PUBLISHED_CONFIGS[0], 1).layers = 1  # type: ignore[misc]


@pytest.mark.parametrize(
    ("config", "context", "field"),
    [
        pytest.param("Llama-2-7b", 4096, "config", id="a name"),
        pytest.param(None, 4096, "config", id="nothing"),
        pytest.param(PUBLISHED_CONFIGS[0], 0, "context_tokens", id="no tokens"),
        pytest.param(PUBLISHED_CONFIGS[0], 1.5, "context_tokens", id="a fraction"),
        pytest.param(PUBLISHED_CONFIGS[0], True, "context_tokens", id="a boolean"),
    ],
)
def test_bad_cache_memory_arguments_name_the_field(config: object, context: object, field: str) -> None:
    assert_scenario_error(lambda: cache_memory(config, context), field, "expected")  # type: ignore[arg-type]


# -- which heads share keys and values ----------------------------------------------------------


def plain_shared_heads(wk: np.ndarray, wv: np.ndarray) -> int:
    """The fewest groups of neighbouring heads within which every W_K and W_V is the same, by trying each."""
    h = len(wk)
    for g in range(1, h + 1):
        if h % g:
            continue
        groups = [list(range(j * (h // g), (j + 1) * (h // g))) for j in range(g)]
        if all((wk[i] == wk[group[0]]).all() and (wv[i] == wv[group[0]]).all() for group in groups for i in group):
            return g
    raise AssertionError("g = h always works")


@st.composite
def shared_stacks(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray, int]:
    """h heads' W_K and W_V shared in g groups (each group's own drawn once), and sometimes one head changed."""
    h = draw(st.sampled_from([1, 2, 3, 4, 6, 8, 12]))
    g = draw(st.sampled_from([d for d in range(1, h + 1) if h % d == 0]))
    d_in, d_k = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    own_k = np.array(draw_array(draw, g, d_in, d_k))
    own_v = np.array(draw_array(draw, g, d_in, d_k))
    wk, wv = np.repeat(own_k, h // g, axis=0), np.repeat(own_v, h // g, axis=0)
    if draw(st.booleans()) and h > 1:  # one head's value matrix changed by a hair: g no longer holds
        i = draw(st.integers(0, h - 1))
        wv[i, 0, 0] = np.nextafter(wv[i, 0, 0], np.inf)
        g = h
    return wk, wv, g


@FAST
@given(shared_stacks())
def test_shared_key_value_heads_against_trying_every_grouping(problem: tuple[np.ndarray, np.ndarray, int]) -> None:
    wk, wv, g = problem
    found = shared_key_value_heads(wk, wv)
    assert found == plain_shared_heads(wk, wv)
    assert found <= g and len(wk) % found == 0
    size = len(wk) // found
    trace = grouped_query_attention(np.ones((2, wk.shape[1])), np.ones((len(wk), wk.shape[1], wk.shape[2])),
                                    wk[::size], wv[::size], np.eye(len(wk) * wv.shape[2]))
    assert trace.n_kv_heads == found and trace.d_out == len(wk) * wv.shape[2]


def test_the_grouped_preset_has_two_key_value_heads() -> None:
    scenario = preset("grouped-dog")
    assert shared_key_value_heads(scenario.w_key, scenario.w_value) == 2
    # its queries differ, so W_Q never counts: a scenario drawn from a sentence shares nothing
    assert shared_key_value_heads(scenario.w_key, scenario.w_key) == 2
    drawn = Scenario.from_sentence("the cat sat on the mat", seed=1, heads=3)
    assert shared_key_value_heads(drawn.w_key, drawn.w_value) == 3
    one = np.ones((4, 2, 2))
    assert shared_key_value_heads(one, one) == 1  # multi-query
    assert_scenario_error(lambda: shared_key_value_heads(one, one[:3]), "w_value", "4 heads")
    assert_scenario_error(lambda: shared_key_value_heads(one[0], one[0]), "w_key", "3")
