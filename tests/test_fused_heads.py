"""Multi-head attention with one big matrix per role: the same numbers as head by head.

fused_multi_head is checked field by field against multi_head_attention (the per-head route)
and against plain Python that builds the big matrices, splits the products and joins the heads by
index arithmetic (lists and loops, no reshape), on hypothesis inputs and awkward shapes: one token,
one head, d_k ≠ d_v, d_in = 1, causal or not.
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scenario_errors import assert_scenario_error
from strategies import FAST

from attention_math import FusedHeadsTrace, fused_multi_head, multi_head_attention

Arrays = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def assert_close(actual: Any, desired: Any, name: str = "") -> None:
    """Equal to 1e-12 (relative or absolute): the two routes round differently, nothing more."""
    np.testing.assert_allclose(actual, desired, rtol=1e-12, atol=1e-12, err_msg=name)


def plain_fused(x: list[list[float]], wq: list, wk: list, wv: list, wo: list, causal: bool, scaled: bool) -> dict:  # type: ignore[type-arg]
    """The efficient form with lists: heads side by side, one product, split and joined by index."""
    h, d_in, n = len(wq), len(x[0]), len(x)
    d_k, d_v = len(wq[0][0]), len(wv[0][0])

    def big(stack: list, d: int) -> list[list[float]]:  # type: ignore[type-arg]
        return [[stack[c // d][m][c % d] for c in range(h * d)] for m in range(d_in)]

    def times(a: list[list[float]], b: list[list[float]]) -> list[list[float]]:
        return [[sum(a[i][t] * b[t][j] for t in range(len(b))) for j in range(len(b[0]))] for i in range(len(a))]

    bigs = {"w_query_big": big(wq, d_k), "w_key_big": big(wk, d_k), "w_value_big": big(wv, d_v)}
    q, k, v = (times(x, bigs[name]) for name in ("w_query_big", "w_key_big", "w_value_big"))
    # head i, token t, column c of the split is column i·d + c of token t's row of the product
    split = {name: [[[rows[t][i * d + c] for c in range(d)] for t in range(n)] for i in range(h)]
             for name, rows, d in (("queries_split", q, d_k), ("keys_split", k, d_k), ("values_split", v, d_v))}
    divisor = math.sqrt(d_k) if scaled else 1.0
    weights, context = [], []
    for i in range(h):
        qs, ks, vs = split["queries_split"][i], split["keys_split"][i], split["values_split"][i]
        head_weights = []
        for t in range(n):
            seen = range(t + 1) if causal else range(n)
            scores = [sum(a * b for a, b in zip(qs[t], ks[j], strict=True)) / divisor for j in seen]
            exps = [math.exp(s - max(scores)) for s in scores]
            head_weights.append([exps[j] / sum(exps) if j in seen else 0.0 for j in range(n)])
        weights.append(head_weights)
        context.append(times(head_weights, vs))
    concat = [[context[c // d_v][t][c % d_v] for c in range(h * d_v)] for t in range(n)]
    return {**bigs, "queries_big": q, "keys_big": k, "values_big": v, **split, "weights": weights,
            "context": context, "concat": concat, "output": times(concat, wo)}


@st.composite
def problems(draw: st.DrawFn) -> Arrays:
    n, d_in, h = draw(st.integers(1, 5)), draw(st.integers(1, 4)), draw(st.integers(1, 4))
    d_k, d_v, d_out = draw(st.integers(1, 3)), draw(st.integers(1, 3)), draw(st.integers(1, 3))
    number = st.floats(-3, 3, allow_nan=False)

    def array(*shape: int) -> np.ndarray:
        return draw(arrays(np.float64, shape, elements=number))

    return (array(n, d_in), array(h, d_in, d_k), array(h, d_in, d_k), array(h, d_in, d_v), array(h * d_v, d_out))


def random_problem(n: int, d_in: int, h: int, d_k: int, d_v: int, d_out: int, seed: int = 0) -> Arrays:
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((n, d_in)), rng.standard_normal((h, d_in, d_k)), rng.standard_normal((h, d_in, d_k)),
            rng.standard_normal((h, d_in, d_v)), rng.standard_normal((h * d_v, d_out)))


def assert_same_as_per_head(problem: Arrays, causal: bool, scaled: bool) -> FusedHeadsTrace:
    """Every field of the fused trace against the per-head trace of multi_head_attention."""
    fused = fused_multi_head(*problem, causal=causal, scaled=scaled)
    per_head = multi_head_attention(*problem, causal=causal, scaled=scaled)
    for name, head_name in (("queries_split", "queries"), ("keys_split", "keys"), ("values_split", "values"),
                            ("scores", "scores"), ("scaled_scores", "scaled_scores"), ("weights", "weights"),
                            ("context", "context")):
        stacked = np.stack([getattr(head, head_name) for head in per_head.heads])
        assert_close(getattr(fused, name), stacked, name)
    assert_close(fused.concat, per_head.concat)
    assert_close(fused.output, per_head.output)
    assert np.array_equal(fused.w_out, per_head.w_out)
    for i, head in enumerate(per_head.heads):
        for big, small in (("w_query_big", "w_query"), ("w_key_big", "w_key")):
            assert np.array_equal(getattr(fused, big)[:, fused.head_columns(i)], getattr(head, small)), big
        assert np.array_equal(fused.w_value_big[:, fused.value_columns(i)], head.w_value)
        for big, small in (("queries_big", "queries"), ("keys_big", "keys")):
            assert_close(getattr(fused, big)[:, fused.head_columns(i)], getattr(head, small))
        assert_close(fused.values_big[:, fused.value_columns(i)], head.values)
    assert (fused.n_heads, fused.d_k, fused.d_v, fused.n_tokens) == (
        per_head.n_heads, per_head.heads[0].d_k, per_head.heads[0].values.shape[1], per_head.heads[0].n_tokens)
    assert (fused.causal, fused.scaled, fused.sqrt_d_k) == (causal, scaled, per_head.heads[0].sqrt_d_k)
    return fused


@FAST
@given(problems(), st.booleans(), st.booleans())
def test_every_field_equals_the_per_head_route(problem: Arrays, causal: bool, scaled: bool) -> None:
    assert_same_as_per_head(problem, causal, scaled)


@FAST
@given(problems(), st.booleans(), st.booleans())
def test_the_fused_route_equals_a_plain_loop(problem: Arrays, causal: bool, scaled: bool) -> None:
    trace = fused_multi_head(*problem, causal=causal, scaled=scaled)
    expected = plain_fused(*(a.tolist() for a in problem), causal=causal, scaled=scaled)  # type: ignore[misc]
    for name, value in expected.items():
        np.testing.assert_allclose(getattr(trace, name), value, rtol=1e-9, atol=1e-9, err_msg=name)


@pytest.mark.parametrize("causal", [False, True], ids=["all keys", "causal"])
@pytest.mark.parametrize(
    "shape",
    [
        pytest.param((1, 3, 2, 2, 3, 2), id="one token"),
        pytest.param((4, 3, 1, 2, 2, 3), id="one head"),
        pytest.param((5, 6, 3, 2, 4, 5), id="d_k < d_v"),
        pytest.param((5, 6, 3, 4, 1, 2), id="d_k > d_v"),
        pytest.param((3, 1, 4, 1, 1, 1), id="d_in = 1, d = 1"),
        pytest.param((7, 8, 8, 1, 3, 4), id="many heads of one column"),
        pytest.param((12, 5, 3, 7, 2, 6), id="d_k larger than d_in"),
        pytest.param((1, 1, 1, 1, 1, 1), id="one of everything"),
    ],
)
def test_awkward_shapes(shape: tuple[int, int, int, int, int, int], causal: bool) -> None:
    n, d_in, h, d_k, d_v, d_out = shape
    problem = random_problem(*shape, seed=sum(shape))
    for scaled in (True, False):
        trace = assert_same_as_per_head(problem, causal, scaled)
    assert trace.w_query_big.shape == (d_in, h * d_k) and trace.w_value_big.shape == (d_in, h * d_v)
    assert trace.queries_big.shape == (n, h * d_k) and trace.values_big.shape == (n, h * d_v)
    assert trace.queries_split.shape == (h, n, d_k) and trace.values_split.shape == (h, n, d_v)
    assert trace.scores.shape == trace.weights.shape == (h, n, n)
    assert trace.context.shape == (h, n, d_v) and trace.concat.shape == (n, h * d_v)
    assert trace.output.shape == (n, d_out)
    if causal:
        assert np.all(trace.weights[:, np.triu(np.ones((n, n), dtype=bool), k=1)] == 0.0)
        assert np.all(trace.scaled_scores[:, np.triu(np.ones((n, n), dtype=bool), k=1)] == -np.inf)
    np.testing.assert_allclose(trace.weights.sum(axis=2), 1.0, rtol=0, atol=1e-12)


@FAST
@given(problems())
def test_each_split_head_is_x_times_its_own_matrix(problem: Arrays) -> None:
    x, wq, wk, wv, _ = problem
    trace = fused_multi_head(*problem)
    for i in range(wq.shape[0]):
        assert_close(trace.queries_split[i], x @ wq[i])
        assert_close(trace.keys_split[i], x @ wk[i])
        assert_close(trace.values_split[i], x @ wv[i])
        # the reshape is a relabelling: the split holds the big product's own numbers
        assert np.array_equal(trace.queries_split[i], trace.queries_big[:, trace.head_columns(i)])
        assert np.array_equal(trace.values_split[i], trace.values_big[:, trace.value_columns(i)])
        assert np.array_equal(trace.concat[:, trace.value_columns(i)], trace.context[i])
    assert np.array_equal(trace.output, trace.concat @ trace.w_out)


def test_the_big_matrix_holds_the_heads_side_by_side() -> None:
    wq = np.arange(2 * 3 * 2, dtype=float).reshape(2, 3, 2)  # head 0: 0..5, head 1: 6..11
    wv = np.arange(2 * 3 * 1, dtype=float).reshape(2, 3, 1)
    trace = fused_multi_head(np.ones((2, 3)), wq, wq, wv, np.ones((2, 1)))
    assert trace.w_query_big.tolist() == [[0, 1, 6, 7], [2, 3, 8, 9], [4, 5, 10, 11]]
    assert trace.w_value_big.tolist() == [[0, 3], [1, 4], [2, 5]]
    assert (trace.head_columns(0), trace.head_columns(1), trace.head_columns(-1)) == (
        slice(0, 2), slice(2, 4), slice(2, 4))
    assert (trace.value_columns(0), trace.value_columns(1)) == (slice(0, 1), slice(1, 2))


@pytest.mark.parametrize("head", [2, -3, True, 1.0, "0", None])
def test_a_head_out_of_range_names_the_argument(head: object) -> None:
    trace = fused_multi_head(*random_problem(3, 2, 2, 2, 1, 1))
    for columns in (trace.head_columns, trace.value_columns):
        assert_scenario_error(lambda: columns(head), "head", "from 0 to 1", repr(head))  # type: ignore[arg-type]  # noqa: B023


def test_the_trace_is_frozen_and_the_inputs_untouched() -> None:
    given_ = random_problem(4, 3, 2, 2, 3, 2)
    before = [a.copy() for a in given_]
    trace = fused_multi_head(*given_, causal=True)
    for array, kept in zip(given_, before, strict=True):
        assert np.array_equal(array, kept) and array.flags.writeable
    arrays_ = [getattr(trace, f.name) for f in dataclasses.fields(FusedHeadsTrace) if f.type == "FloatArray"]
    assert len(arrays_) == 20
    for array in arrays_:
        assert array.dtype == np.float64 and not array.flags.writeable
        assert not any(np.shares_memory(array, a) for a in given_)
    for i, array in enumerate(arrays_):  # no two fields are views of one another
        assert not any(np.shares_memory(array, other) for other in arrays_[i + 1 :])
    with pytest.raises(dataclasses.FrozenInstanceError):
        trace.output = trace.concat  # type: ignore[misc]
    lists = fused_multi_head(*(a.tolist() for a in given_), causal=True)
    assert np.array_equal(lists.output, trace.output)


def test_one_head_one_token_is_its_value_times_w_out() -> None:
    trace = fused_multi_head([[2.0]], [[[1.0]]], [[[1.0]]], [[[3.0, -1.0]]], [[1.0], [2.0]], causal=True)
    assert trace.weights.tolist() == [[[1.0]]] and trace.concat.tolist() == [[6.0, -2.0]]
    assert trace.output.tolist() == [[2.0]]


def test_large_but_safe_numbers_work_without_warnings() -> None:
    x, wq, wk, wv, wo = random_problem(5, 4, 3, 2, 2, 2, seed=7)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert_same_as_per_head((x * 1e40, wq * 1e40, wk * 1e40, wv, wo), causal=True, scaled=True)


# -- errors -------------------------------------------------------------------------------------


X, WQ, WK, WV, WO = (a.tolist() for a in random_problem(3, 3, 2, 2, 3, 2, seed=1))


@pytest.mark.parametrize(
    ("changes", "field", "words"),
    [
        pytest.param({"w_query": WQ[0]}, "w_query", ("3-d",), id="a matrix for a stack"),
        pytest.param({"w_key": WK[:1]}, "w_key", ("2 heads", "got 1"), id="fewer heads"),
        pytest.param({"w_value": [*WV, WV[0]]}, "w_value", ("2 heads", "got 3"), id="more heads"),
        pytest.param({"w_query": [m[:2] for m in WQ]}, "w_query", ("3 rows per head",), id="rows"),
        pytest.param({"w_key": [[[*r, 0.0] for r in m] for m in WK]}, "w_key", ("2 columns", "d_k"), id="d_k"),
        pytest.param({"w_out": WO[:5]}, "w_out", ("6 rows", "2 × 3"), id="w_out rows"),
        pytest.param({"w_value": [[[math.nan] * 3] * 3] * 2}, "w_value", ("finite",), id="NaN"),
        pytest.param({"embeddings": [[]]}, "embeddings", ("non-empty",), id="empty"),
        pytest.param({"embeddings": [[1e307] * 3] * 3, "w_value": [[[100.0] * 3] * 3] * 2}, "embeddings",
                     ("too large", "values"), id="values overflow"),
        pytest.param({"embeddings": [[1e170] * 3] * 3, "w_value": [[[0.0] * 3] * 3] * 2}, "embeddings",
                     ("too large", "scores overflow"), id="scores overflow"),
        pytest.param({"embeddings": [[1.0], [-1.0]], "w_query": [[[1e308]]], "w_key": [[[1.0]]],
                      "w_value": [[[1.0]]], "w_out": [[1.0]]}, "embeddings", ("too large", "differ"),
                     id="scores too far apart"),
        pytest.param({"w_out": [[1e308, 1e308]] * 6, "w_value": [[[1e3] * 3] * 3] * 2}, "w_out", ("too large",),
                     id="output overflows"),
    ],
)
def test_bad_input_names_the_field_as_the_per_head_route_does(
    changes: dict[str, object], field: str, words: tuple[str, ...]
) -> None:
    given_ = {"embeddings": X, "w_query": WQ, "w_key": WK, "w_value": WV, "w_out": WO, **changes}
    message = assert_scenario_error(lambda: fused_multi_head(**given_), field, *words)
    assert message == assert_scenario_error(lambda: multi_head_attention(**given_), field)
