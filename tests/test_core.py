"""attention_math's core: self_attention, softmax and query_step.

The trace is checked against an independent plain-Python implementation (lists, loops and
math.exp; no numpy matmul) on hypothesis-generated inputs, and for the properties attention
must have whatever the numbers: rows of weights sum to 1, the causal mask hides the future,
permuting tokens permutes the outputs, inputs are never touched and traces never change.
"""

from __future__ import annotations

import copy
import dataclasses
import math
import warnings
from collections.abc import Callable, Sequence
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scenario_errors import assert_scenario_error
from strategies import FAST, MODERATE

from attention_math import AttentionTrace, QueryStep, self_attention, softmax

TRACE_ARRAYS = (
    "embeddings", "w_query", "w_key", "w_value", "queries", "keys", "values",
    "scores", "scaled_scores", "weights", "context",
)
STEP_ARRAYS = (
    "embedding", "w_query", "query_terms", "query", "keys", "products", "scores", "scaled_scores", "exps",
    "weights", "values", "weighted_values", "context", "running_weights", "running_context",
)

# -- an independent implementation ---------------------------------------------------------

Matrix = list[list[float]]


def _matmul(a: Matrix, b: Matrix) -> Matrix:
    inner, columns = len(b), len(b[0])
    result = []
    for row in a:
        out = []
        for c in range(columns):
            total = 0.0
            for t in range(inner):
                total += row[t] * b[t][c]
            out.append(total)
        result.append(out)
    return result


def reference_attention(
    x: Matrix, w_query: Matrix, w_key: Matrix, w_value: Matrix, *, scaled: bool = True, causal: bool = False
) -> dict[str, Matrix]:
    """softmax(Q Kᵀ / √d_k) V with lists, loops and math.exp."""
    queries, keys, values = _matmul(x, w_query), _matmul(x, w_key), _matmul(x, w_value)
    n, d_k = len(x), len(w_key[0])
    divisor = math.sqrt(d_k) if scaled else 1.0
    scores: Matrix = []
    scaled_scores: Matrix = []
    weights: Matrix = []
    for i in range(n):
        row = []
        for j in range(n):
            total = 0.0
            for m in range(d_k):
                total += queries[i][m] * keys[j][m]
            row.append(total)
        scores.append(row)
        shown = [(-math.inf if causal and j > i else s / divisor) for j, s in enumerate(row)]
        scaled_scores.append(shown)
        peak = max(s for s in shown if s != -math.inf)
        exps = [0.0 if s == -math.inf else math.exp(s - peak) for s in shown]
        total_exp = sum(exps)
        weights.append([e / total_exp for e in exps])
    context = _matmul(weights, values)
    return {
        "queries": queries, "keys": keys, "values": values, "scores": scores,
        "scaled_scores": scaled_scores, "weights": weights, "context": context,
    }


def _magnitude(matrix: Matrix) -> float:
    return 1.0 + max(abs(v) for row in matrix for v in row if math.isfinite(v))


# -- strategies ----------------------------------------------------------------------------


@st.composite
def attention_inputs(draw: st.DrawFn, max_n: int = 8) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    n = draw(st.integers(1, max_n))
    d_in = draw(st.integers(1, 6))
    d_k = draw(st.integers(1, 4))
    d_v = draw(st.integers(1, 4))

    def matrix(rows: int, columns: int) -> np.ndarray:
        return draw(arrays(np.float64, (rows, columns), elements=MODERATE))

    return matrix(n, d_in), matrix(d_in, d_k), matrix(d_in, d_k), matrix(d_in, d_v)


# -- the trace against the reference -------------------------------------------------------


@FAST
@given(attention_inputs(), st.booleans(), st.booleans())
def test_trace_matches_plain_python(inputs: Sequence[np.ndarray], scaled: bool, causal: bool) -> None:
    x, wq, wk, wv = inputs
    n, d_in = x.shape
    d_k, d_v = wk.shape[1], wv.shape[1]
    trace = self_attention(x, wq, wk, wv, scaled=scaled, causal=causal)
    expected = reference_attention(x.tolist(), wq.tolist(), wk.tolist(), wv.tolist(), scaled=scaled, causal=causal)

    shapes = {
        "embeddings": (n, d_in), "w_query": (d_in, d_k), "w_key": (d_in, d_k), "w_value": (d_in, d_v),
        "queries": (n, d_k), "keys": (n, d_k), "values": (n, d_v), "scores": (n, n),
        "scaled_scores": (n, n), "weights": (n, n), "context": (n, d_v),
    }
    for name, shape in shapes.items():
        array = getattr(trace, name)
        assert array.shape == shape, name
        assert array.dtype == np.float64, name
    assert trace.n_tokens == n
    assert trace.d_k == d_k
    assert (trace.scaled, trace.causal) == (scaled, causal)
    assert trace.sqrt_d_k == (math.sqrt(d_k) if scaled else 1.0)
    for name, given_matrix in (("embeddings", x), ("w_query", wq), ("w_key", wk), ("w_value", wv)):
        assert np.array_equal(getattr(trace, name), given_matrix), name

    # Tolerances follow the size of what was summed, so large scores do not make them flaky.
    eps = 1e-12
    input_size = _magnitude(x.tolist()) * max(_magnitude(wq.tolist()), _magnitude(wk.tolist()), _magnitude(wv.tolist()))
    score_size = _magnitude(expected["scores"])
    tolerances = {
        "queries": eps * d_in * input_size,
        "keys": eps * d_in * input_size,
        "values": eps * d_in * input_size,
        "scores": eps * d_k * score_size * d_in,
        "scaled_scores": eps * d_k * score_size * d_in,
        "weights": eps * d_k * score_size * d_in * 4,
        "context": eps * d_k * score_size * d_in * 4 * n * _magnitude(expected["values"]),
    }
    for name, atol in tolerances.items():
        np.testing.assert_allclose(getattr(trace, name), np.array(expected[name]), rtol=1e-9, atol=atol, err_msg=name)

    np.testing.assert_allclose(trace.weights.sum(axis=1), np.ones(n), rtol=0, atol=1e-12)
    assert np.all(trace.weights >= 0)


@FAST
@given(attention_inputs())
def test_causal_mask_hides_every_later_key(inputs: Sequence[np.ndarray]) -> None:
    trace = self_attention(*inputs, causal=True)
    n = trace.n_tokens
    for i in range(n):
        for j in range(n):
            if j > i:
                assert trace.weights[i, j] == 0.0
                assert trace.scaled_scores[i, j] == -np.inf
            else:
                assert np.isfinite(trace.scaled_scores[i, j])
    # The first token can only attend to itself; the last row is the unmasked one.
    assert trace.weights[0, 0] == 1.0
    assert trace.context[0] == pytest.approx(trace.values[0], rel=1e-12, abs=1e-12)
    unmasked = self_attention(*inputs)
    np.testing.assert_allclose(trace.weights[-1], unmasked.weights[-1], rtol=0, atol=1e-15)
    assert np.array_equal(trace.scores, unmasked.scores)  # the mask never touches the raw scores


@FAST
@given(attention_inputs().flatmap(lambda xs: st.tuples(st.just(xs), st.permutations(range(xs[0].shape[0])))))
def test_permuting_tokens_permutes_scores_weights_and_context(case: tuple[Sequence[np.ndarray], list[int]]) -> None:
    (x, wq, wk, wv), order = case
    perm = np.array(order, dtype=int)
    trace = self_attention(x, wq, wk, wv)
    moved = self_attention(x[perm], wq, wk, wv)
    atol = 1e-10 * _magnitude(trace.scores.tolist()) * _magnitude(trace.values.tolist())
    np.testing.assert_allclose(moved.scores, trace.scores[perm][:, perm], rtol=1e-12, atol=atol)
    np.testing.assert_allclose(moved.weights, trace.weights[perm][:, perm], rtol=1e-9, atol=atol)
    np.testing.assert_allclose(moved.context, trace.context[perm], rtol=1e-9, atol=atol)


@FAST
@given(
    arrays(np.float64, st.integers(1, 8), elements=st.floats(-100, 100, allow_nan=False)),
    st.floats(-100, 100, allow_nan=False),
)
def test_softmax_ignores_a_constant_added_to_the_row(row: np.ndarray, constant: float) -> None:
    weights = softmax(row)
    np.testing.assert_allclose(softmax(row + constant), weights, rtol=1e-9, atol=1e-12)
    assert weights.sum() == pytest.approx(1.0, abs=1e-12)
    assert np.all(weights >= 0)
    # The largest score gets the largest weight.
    assert weights[int(np.argmax(row))] == weights.max()


@FAST
@given(arrays(np.float64, st.tuples(st.integers(1, 5), st.integers(1, 5)), elements=st.floats(-50, 50)))
def test_softmax_axis_zero_is_the_transpose_of_axis_minus_one(matrix: np.ndarray) -> None:
    np.testing.assert_allclose(softmax(matrix, axis=0), softmax(matrix.T).T, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(softmax(matrix, axis=0).sum(axis=0), np.ones(matrix.shape[1]), atol=1e-12)


# -- scaling -------------------------------------------------------------------------------


@FAST
@given(attention_inputs())
def test_unscaled_is_the_softmax_of_the_raw_scores(inputs: Sequence[np.ndarray]) -> None:
    unscaled = self_attention(*inputs, scaled=False)
    scaled = self_attention(*inputs)
    assert not unscaled.scaled and unscaled.sqrt_d_k == 1.0
    assert np.array_equal(unscaled.scaled_scores, unscaled.scores)
    np.testing.assert_allclose(unscaled.weights, softmax(unscaled.scores), rtol=0, atol=1e-15)
    assert np.array_equal(scaled.scores, unscaled.scores)
    np.testing.assert_allclose(scaled.scaled_scores, scaled.scores / math.sqrt(scaled.d_k), rtol=1e-15, atol=0)
    np.testing.assert_allclose(scaled.weights, softmax(scaled.scores / math.sqrt(scaled.d_k)), rtol=0, atol=1e-15)


@FAST
@given(attention_inputs().map(lambda xs: (xs[0], xs[1][:, :1], xs[2][:, :1], xs[3])))
def test_with_d_k_one_scaling_changes_nothing(inputs: Sequence[np.ndarray]) -> None:
    scaled = self_attention(*inputs, scaled=True)
    unscaled = self_attention(*inputs, scaled=False)
    assert scaled.d_k == 1 and scaled.sqrt_d_k == 1.0
    for name in TRACE_ARRAYS:
        assert np.array_equal(getattr(scaled, name), getattr(unscaled, name)), name


def test_scaling_divides_by_the_square_root_of_d_k() -> None:
    # d_k = 4: one query (1, 1, 1, 1) against keys (1, 1, 1, 1) and 0, scores 4 and 0.
    x = [[1.0, 0.0], [0.0, 1.0]]
    w_query = [[1.0, 1.0, 1.0, 1.0], [0.0, 0.0, 0.0, 0.0]]
    w_key = [[1.0, 1.0, 1.0, 1.0], [0.0, 0.0, 0.0, 0.0]]
    w_value = [[1.0], [0.0]]
    scaled = self_attention(x, w_query, w_key, w_value)
    unscaled = self_attention(x, w_query, w_key, w_value, scaled=False)
    assert scaled.scores[0].tolist() == [4.0, 0.0]
    assert scaled.scaled_scores[0].tolist() == [2.0, 0.0]
    assert unscaled.scaled_scores[0].tolist() == [4.0, 0.0]
    assert scaled.weights[0] == pytest.approx([math.exp(2) / (math.exp(2) + 1), 1 / (math.exp(2) + 1)])
    assert unscaled.weights[0] == pytest.approx([math.exp(4) / (math.exp(4) + 1), 1 / (math.exp(4) + 1)])


# -- inputs and traces never change -----------------------------------------------------------


@FAST
@given(attention_inputs(), st.booleans())
def test_inputs_are_never_mutated_nor_shared(inputs: Sequence[np.ndarray], causal: bool) -> None:
    arrays_in = [np.array(m) for m in inputs]
    before = [m.copy() for m in arrays_in]
    lists_in = [m.tolist() for m in inputs]
    lists_before = copy.deepcopy(lists_in)

    trace = self_attention(*arrays_in, causal=causal)
    from_lists = self_attention(*lists_in, causal=causal)

    for given_matrix, kept in zip(arrays_in, before, strict=True):
        assert np.array_equal(given_matrix, kept)
        assert given_matrix.flags.writeable
    assert lists_in == lists_before
    for name in TRACE_ARRAYS:
        assert np.array_equal(getattr(trace, name), getattr(from_lists, name)), name
        for given_matrix in arrays_in:
            assert not np.shares_memory(getattr(trace, name), given_matrix), name
    # Changing the inputs afterwards does not reach the trace.
    weights = trace.weights.copy()
    for given_matrix in arrays_in:
        given_matrix += 1.0
    assert np.array_equal(trace.embeddings, before[0])
    assert np.array_equal(trace.weights, weights)


def test_trace_and_step_arrays_are_read_only() -> None:
    x = [[1.0, 0.0], [0.0, 1.0], [0.5, 0.5]]
    w = [[1.0, 2.0], [3.0, 4.0]]
    for trace in (self_attention(x, w, w, w), self_attention(x, w, w, w, causal=True)):
        for name in TRACE_ARRAYS:
            array = getattr(trace, name)
            assert not array.flags.writeable, name
            with pytest.raises(ValueError, match="read-only"):
                array[0, 0] = 42.0
        step = trace.query_step(1)
        for name in STEP_ARRAYS:
            array = getattr(step, name)
            assert not array.flags.writeable, name
            with pytest.raises(ValueError, match="read-only"):
                array[...] = 42.0
        with pytest.raises(dataclasses.FrozenInstanceError):
            trace.weights = np.zeros((3, 3))  # type: ignore[misc]
        with pytest.raises(dataclasses.FrozenInstanceError):
            step.context = np.zeros(2)  # type: ignore[misc]
    assert isinstance(trace, AttentionTrace) and isinstance(step, QueryStep)


def test_self_attention_accepts_numbers_of_any_real_type() -> None:
    exact = self_attention([[1, 0], [0, 1]], [[1], [0]], [[1], [1]], [[1], [2]])
    fractions = self_attention(
        [[Fraction(1), Fraction(0)], [Fraction(0), Fraction(1)]], [[1], [0]], [[1], [1]], [[1], [2]]
    )
    float32 = self_attention(np.eye(2, dtype=np.float32), [[1], [0]], [[1], [1]], [[1], [2]])
    for trace in (fractions, float32):
        for name in TRACE_ARRAYS:
            assert np.array_equal(getattr(trace, name), getattr(exact, name)), name
            assert getattr(trace, name).dtype == np.float64
    assert exact.weights.tolist() == [[0.5, 0.5], [0.5, 0.5]]


# -- softmax -------------------------------------------------------------------------------


def _quietly(call: Callable[[], np.ndarray]) -> np.ndarray:
    """Run ``call`` with every warning turned into an error."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return call()


def test_softmax_of_the_lecture_rows() -> None:
    assert softmax([5.0, 6.0]).round(2).tolist() == [0.27, 0.73]
    assert _quietly(lambda: softmax([500.0, 505.0])).round(3).tolist() == [0.007, 0.993]
    assert softmax([500.0, 505.0]) == pytest.approx(softmax([0.0, 5.0]), abs=1e-15)


def test_softmax_does_not_overflow_on_huge_scores() -> None:
    assert _quietly(lambda: softmax([1e6, 0.0])).tolist() == [1.0, 0.0]
    assert _quietly(lambda: softmax([1e6, 1e6])).tolist() == [0.5, 0.5]
    assert _quietly(lambda: softmax([-1e6, -1e6 + 1])) == pytest.approx(softmax([0.0, 1.0]))
    assert _quietly(lambda: softmax([1e308, 1.5e308])).tolist() == [0.0, 1.0]


def test_softmax_of_scores_further_apart_than_float64_holds() -> None:
    # 1.7e308 - (-1.7e308) overflows; the weights are still exactly (1, 0), without a warning.
    assert _quietly(lambda: softmax([1.7e308, -1.7e308])).tolist() == [1.0, 0.0]


def test_softmax_gives_masked_entries_weight_exactly_zero() -> None:
    weights = _quietly(lambda: softmax([[0.0, -np.inf, 1.0], [-np.inf, 3.0, -np.inf]]))
    assert weights[0, 1] == 0.0
    assert weights[0] == pytest.approx([1 / (1 + math.e), 0.0, math.e / (1 + math.e)], rel=1e-15)
    assert weights[1].tolist() == [0.0, 1.0, 0.0]


def test_softmax_rejects_nan_inf_and_all_masked_rows() -> None:
    assert_scenario_error(lambda: softmax([1.0, np.nan]), "scores", "NaN")
    assert_scenario_error(lambda: softmax([[0.0, 1.0], [np.nan, 0.0]]), "scores", "NaN")
    assert_scenario_error(lambda: softmax([1.0, np.inf]), "scores", "+inf")
    assert_scenario_error(lambda: softmax([[0.0, 1.0], [-np.inf, -np.inf]]), "scores", "-inf")


def test_softmax_does_not_change_its_input() -> None:
    scores = np.array([[1.0, 2.0], [3.0, -np.inf]])
    kept = scores.copy()
    weights = softmax(scores)
    assert np.array_equal(scores, kept)
    assert not np.shares_memory(weights, scores)


# -- query_step --------------------------------------------------------------------------------


@FAST
@given(attention_inputs(), st.booleans(), st.booleans())
def test_query_step_agrees_with_the_trace(inputs: Sequence[np.ndarray], scaled: bool, causal: bool) -> None:
    trace = self_attention(*inputs, scaled=scaled, causal=causal)
    n = trace.n_tokens
    size = _magnitude(trace.scores.tolist())
    for i in range(n):
        step = trace.query_step(i)
        assert step.index == i
        assert np.array_equal(step.query, trace.queries[i])
        assert np.array_equal(step.keys, trace.keys)
        assert np.array_equal(step.values, trace.values)
        assert step.products.shape == (n, trace.d_k)
        np.testing.assert_allclose(step.products.sum(axis=1), trace.scores[i], rtol=1e-9, atol=1e-12 * size)
        np.testing.assert_allclose(step.products.sum(axis=1), step.scores, rtol=1e-9, atol=1e-12 * size)
        assert np.array_equal(step.scores, trace.scores[i])
        assert step.d_k == trace.d_k
        assert step.sqrt_d_k == trace.sqrt_d_k
        visible = np.isfinite(step.scaled_scores)
        assert np.array_equal(step.scaled_scores[visible], (step.scores / step.sqrt_d_k)[visible])
        assert step.max_score == np.max(step.scaled_scores)
        assert step.exps.max() == 1.0
        assert step.exp_sum == pytest.approx(float(step.exps.sum()), rel=1e-15)
        np.testing.assert_allclose(step.exps / step.exp_sum, trace.weights[i], rtol=1e-12, atol=1e-15)
        assert np.array_equal(step.weights, trace.weights[i])
        if causal:
            assert np.all(step.exps[i + 1:] == 0.0)
        np.testing.assert_allclose(
            step.weighted_values, trace.weights[i][:, None] * trace.values, rtol=1e-15, atol=0
        )
        np.testing.assert_allclose(
            step.weighted_values.sum(axis=0), trace.context[i],
            rtol=1e-9, atol=1e-12 * _magnitude(trace.values.tolist()) * n,
        )
        assert np.array_equal(step.context, trace.context[i])
        _check_running_sums_and_query_terms(trace, step)
    # Negative indices count from the end, like a list.
    assert trace.query_step(-1).index == n - 1


def _check_running_sums_and_query_terms(trace: AttentionTrace, step: QueryStep) -> None:
    """The fields a scene draws instead of computing: checked with plain Python sums."""
    i, n = step.index, trace.n_tokens
    assert np.array_equal(step.embedding, trace.embeddings[i])
    assert np.array_equal(step.w_query, trace.w_query)
    d_in, d_k = trace.w_query.shape
    for m in range(d_in):
        for c in range(d_k):
            assert step.query_terms[m, c] == trace.embeddings[i, m] * trace.w_query[m, c]
    size = _magnitude(trace.queries.tolist()) + _magnitude(trace.embeddings.tolist()) * _magnitude(
        trace.w_query.tolist()
    )
    np.testing.assert_allclose(step.query_terms.sum(axis=0), trace.queries[i], rtol=1e-9, atol=1e-12 * size * d_in)
    total = 0.0
    for j in range(n):
        total += float(step.weights[j])
        assert step.running_weights[j] == pytest.approx(total, rel=1e-12, abs=1e-15)
    assert step.running_weights[-1] == pytest.approx(1.0, abs=1e-12)
    assert step.running_context.shape == step.weighted_values.shape
    assert np.array_equal(step.running_context[-1], step.context)
    for j in range(n - 1):
        expected = [sum(float(step.weighted_values[t, c]) for t in range(j + 1)) for c in range(step.context.size)]
        np.testing.assert_allclose(step.running_context[j], expected, rtol=1e-9, atol=1e-12 * _magnitude(
            trace.values.tolist()) * n)
    largest = max(step.weights.tolist())
    assert step.top_key == step.weights.tolist().index(largest)


def test_top_key_is_the_first_of_equal_weights() -> None:
    # Three equal tokens: every weight is 1/3, the first one wins.
    same = [[1.0, 2.0]] * 3
    step = self_attention(same, [[1.0], [0.0]], [[1.0], [0.0]], [[1.0], [1.0]]).query_step(2)
    assert step.weights.tolist() == [step.weights[0]] * 3
    assert step.top_key == 0
    assert self_attention([[0.0], [1.0], [2.0]], [[1.0]], [[1.0]], [[1.0]]).query_step(1).top_key == 2


def test_query_terms_of_the_default_preset_add_up_to_q5() -> None:
    from attention_math import preset

    step = preset("dog-chased-ball").trace().query_step(4)
    # x5 = (0.7, 0.6, 0.9), W_Q column 1 = (0.7, 0.1, 0.2): 0.49 + 0.06 + 0.18 = 0.73
    np.testing.assert_allclose(step.query_terms[:, 0], [0.49, 0.06, 0.18], rtol=1e-12)
    np.testing.assert_allclose(step.query_terms.sum(axis=0), step.query, rtol=1e-12)


def test_query_step_rejects_an_index_out_of_range() -> None:
    trace = self_attention([[1.0], [2.0], [3.0]], [[1.0]], [[1.0]], [[1.0]])
    for bad in (3, 10, -4, True, 1.0, "1", None):
        assert_scenario_error(lambda bad=bad: trace.query_step(bad), "query", "0 to 2")  # type: ignore[misc]


# -- invalid input -----------------------------------------------------------------------------

X2 = [[1.0, 0.0], [0.0, 1.0]]
W2 = [[1.0, 2.0], [3.0, 4.0]]


@pytest.mark.parametrize(
    ("arguments", "field", "words"),
    [
        pytest.param((X2, [[1.0, 2.0]], W2, W2), "w_query", ("2 rows",), id="w_query rows != d_in"),
        pytest.param((X2, W2, [[1.0], [2.0], [3.0]], W2), "w_key", ("2 rows",), id="w_key rows != d_in"),
        pytest.param((X2, W2, W2, [[1.0, 2.0, 3.0]]), "w_value", ("2 rows",), id="w_value rows != d_in"),
        pytest.param((X2, W2, [[1.0], [2.0]], W2), "w_key", ("2 columns", "w_query"), id="w_key cols != w_query"),
        pytest.param(([[1.0, 0.0], [1.0]], W2, W2, W2), "embeddings", (), id="ragged"),
        pytest.param((X2, [[1.0, np.nan], [0.0, 1.0]], W2, W2), "w_query", ("finite",), id="nan"),
        pytest.param((X2, W2, W2, [[np.inf, 0.0], [0.0, 1.0]]), "w_value", ("finite",), id="inf"),
        pytest.param((X2, W2, [[-np.inf, 0.0], [0.0, 1.0]], W2), "w_key", ("finite",), id="-inf"),
        pytest.param(([], W2, W2, W2), "embeddings", ("non-empty",), id="empty"),
        pytest.param(([[]], W2, W2, W2), "embeddings", ("non-empty",), id="empty row"),
        pytest.param(([1.0, 2.0], W2, W2, W2), "embeddings", ("2-d",), id="1-d"),
        pytest.param((np.ones((2, 2, 1)), W2, W2, W2), "embeddings", ("2-d",), id="3-d"),
        pytest.param(([["a", "b"], ["c", "d"]], W2, W2, W2), "embeddings", (), id="strings"),
        pytest.param(([["0.5", "1"], ["0", "1"]], W2, W2, W2), "embeddings", (), id="numeric strings"),
        pytest.param((X2, [[True, False], [False, True]], W2, W2), "w_query", (), id="booleans"),
        pytest.param((X2, W2, W2, [[1.0, None], [0.0, 1.0]]), "w_value", (), id="None"),
        pytest.param((X2, W2, W2, [[1j, 0.0], [0.0, 1.0]]), "w_value", (), id="complex"),
        pytest.param(([[10**400, 0], [0, 1]], W2, W2, W2), "embeddings", ("finite",), id="int beyond float64"),
    ],
)
def test_self_attention_rejects_invalid_matrices(
    arguments: tuple[object, ...], field: str, words: tuple[str, ...]
) -> None:
    assert_scenario_error(lambda: self_attention(*arguments), field, *words)


@pytest.mark.parametrize(
    "arguments",
    [
        pytest.param(([[1e308, 1e308]], [[1.0], [1.0]], [[1.0], [1.0]], [[1.0], [1.0]]), id="scores overflow"),
        pytest.param(([[1e200]], [[1e200]], [[1.0]], [[1.0]]), id="queries overflow"),
        pytest.param(([[1e160]], [[1.0]], [[1.0]], [[1.0]]), id="score products overflow"),
        pytest.param(([[1e308, 1e308]], [[0.0], [0.0]], [[0.0], [0.0]], [[1.0], [1.0]]), id="values overflow"),
        pytest.param(([[1.0], [-1.0]], [[1e308]], [[1.0]], [[1.0]]), id="score spread overflows"),
    ],
)
def test_overflow_is_a_scenario_error_not_a_warning(arguments: tuple[object, ...]) -> None:
    assert_scenario_error(lambda: self_attention(*arguments), "embeddings", "too large")


def test_large_but_safe_numbers_work_without_warnings() -> None:
    trace = _quietly(lambda: self_attention([[1e100], [-1e100]], [[1e100]], [[1.0]], [[1e100]]))
    assert trace.weights.tolist() == [[1.0, 0.0], [0.0, 1.0]]
    assert trace.context.tolist() == [[1e200], [-1e200]]
    step = _quietly(lambda: trace.query_step(0))
    assert step.exps.tolist() == [1.0, 0.0]
