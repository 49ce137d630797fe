"""Lecture 7's arithmetic: the causal mask, the renormalising route and dropout on the weights.

Each function is checked against plain Python written from the lecture's formulas (lists, loops,
math.exp, and the generator's draw replayed by hand), on hypothesis inputs and awkward ones: one
token, scores far larger than exp can take, a future that outscores the past by more than float64
holds. The renormalising route must give the masked softmax of self_attention(…, causal=True).
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from collections.abc import Callable

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scenario_errors import assert_scenario_error
from strategies import FAST

from attention_math import (
    DropoutTrace,
    RenormalisedWeights,
    attention_dropout,
    causal_mask,
    masked_scores,
    renormalised_weights,
    self_attention,
    softmax,
)

Matrix = list[list[float]]


# -- plain Python from the lecture's formulas ---------------------------------------------------


def plain_masked_softmax(scores: Matrix) -> Matrix:
    """Row i: softmax over keys 0..i only, 0 for the later keys."""
    rows = []
    for i, row in enumerate(scores):
        top = max(row[: i + 1])
        exps = [math.exp(s - top) for s in row[: i + 1]]
        total = sum(exps)
        rows.append([e / total for e in exps] + [0.0] * (len(row) - i - 1))
    return rows


def plain_route(scores: Matrix) -> dict[str, list[float] | Matrix]:
    """Raschka's other route: softmax the whole row, zero the future, divide by the new row sum."""
    full, zeroed, sums, weights = [], [], [], []
    for i, row in enumerate(scores):
        top = max(row)
        exps = [math.exp(s - top) for s in row]
        total = sum(exps)
        full.append([e / total for e in exps])
        zeroed.append([w if j <= i else 0.0 for j, w in enumerate(full[-1])])
        sums.append(sum(zeroed[-1]))
        weights.append([w / sums[-1] for w in zeroed[-1]])
    return {"full": full, "zeroed": zeroed, "row_sums": sums, "weights": weights}


def square(elements: st.SearchStrategy[float], max_n: int = 8) -> st.SearchStrategy[np.ndarray]:
    return st.integers(1, max_n).flatmap(lambda n: arrays(np.float64, (n, n), elements=elements))


MODERATE = st.floats(-30, 30, allow_nan=False)
ANY_FINITE = st.floats(-1e300, 1e300, allow_nan=False, allow_infinity=False)


# -- causal_mask and masked_scores --------------------------------------------------------------


@pytest.mark.parametrize("n", [1, 2, 3, 7, 16])
def test_the_mask_hides_exactly_the_keys_after_each_query(n: int) -> None:
    mask = causal_mask(n)
    assert mask.dtype == np.bool_ and mask.shape == (n, n) and not mask.flags.writeable
    assert mask.tolist() == [[j > i for j in range(n)] for i in range(n)]
    assert int(mask.sum()) == n * (n - 1) // 2  # the strict upper triangle


@pytest.mark.parametrize("n", [0, -1, 2.0, True, "3", None])
def test_the_mask_needs_a_whole_number_of_tokens(n: object) -> None:
    assert_scenario_error(lambda: causal_mask(n), "n", "at least 1", repr(n))  # type: ignore[arg-type]


@FAST
@given(square(ANY_FINITE))
def test_masked_scores_set_the_future_to_minus_infinity(scores: np.ndarray) -> None:
    before = scores.copy()
    masked = masked_scores(scores)
    n = scores.shape[0]
    expected = [[-math.inf if j > i else float(scores[i, j]) for j in range(n)] for i in range(n)]
    assert masked.tolist() == expected
    assert np.array_equal(scores, before) and scores.flags.writeable
    assert not masked.flags.writeable and not np.shares_memory(masked, scores)


def test_masked_scores_of_one_token_keep_it() -> None:
    assert masked_scores([[7.5]]).tolist() == [[7.5]]
    assert softmax(masked_scores([[7.5]])).tolist() == [[1.0]]


@pytest.mark.parametrize("call", [masked_scores, renormalised_weights], ids=["masked_scores", "renormalised"])
@pytest.mark.parametrize(
    ("scores", "words"),
    [
        pytest.param([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], ("square", "(2, 3)"), id="not square"),
        pytest.param([1.0, 2.0], ("2-d",), id="a row"),
        pytest.param([[]], ("non-empty",), id="empty"),
        pytest.param([[0.0, math.nan], [1.0, 2.0]], ("finite",), id="NaN"),
        pytest.param([[0.0, -math.inf], [1.0, 2.0]], ("finite",), id="already masked"),
        pytest.param([["a", "b"], ["c", "d"]], ("numbers",), id="text"),
    ],
)
def test_bad_scores_name_the_argument(call: Callable[[object], object], scores: object, words: tuple[str, ...]) -> None:
    assert_scenario_error(lambda: call(scores), "scaled_scores", *words)


# -- the renormalising route --------------------------------------------------------------------


@FAST
@given(square(MODERATE))
def test_the_route_equals_its_plain_loop(scores: np.ndarray) -> None:
    route = renormalised_weights(scores)
    expected = plain_route(scores.tolist())
    for name, value in expected.items():
        np.testing.assert_allclose(getattr(route, name), value, rtol=1e-12, atol=1e-15, err_msg=name)
    assert np.array_equal(route.scaled_scores, scores)


@FAST
@given(square(MODERATE))
def test_the_route_is_the_masked_softmax(scores: np.ndarray) -> None:
    route = renormalised_weights(scores)
    np.testing.assert_allclose(route.weights, plain_masked_softmax(scores.tolist()), rtol=0, atol=1e-12)
    np.testing.assert_allclose(route.weights, softmax(masked_scores(scores)), rtol=0, atol=1e-12)
    # the division is the one in the attributes, number for number
    assert np.array_equal(route.weights, route.zeroed / route.row_sums[:, np.newaxis])
    assert np.all(route.weights[causal_mask(len(scores))] == 0.0)
    np.testing.assert_allclose(route.weights.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    np.testing.assert_allclose(route.full.sum(axis=1), 1.0, rtol=0, atol=1e-12)


@st.composite
def attention_inputs(draw: st.DrawFn, size: float) -> tuple[np.ndarray, ...]:
    n, d_in, d_k, d_v = draw(st.integers(1, 7)), draw(st.integers(1, 5)), draw(st.integers(1, 4)), draw(
        st.integers(1, 3))
    number = st.floats(-size, size, allow_nan=False)
    return tuple(draw(arrays(np.float64, shape, elements=number))
                 for shape in ((n, d_in), (d_in, d_k), (d_in, d_k), (d_in, d_v)))


@FAST
@given(st.sampled_from([3.0, 30.0, 3e4]).flatmap(attention_inputs), st.booleans())
def test_the_route_gives_causal_self_attention_s_weights(inputs: tuple[np.ndarray, ...], scaled: bool) -> None:
    """Scores up to about 10¹⁹: exp overflows long before, and the future often buries the past."""
    unmasked = self_attention(*inputs, scaled=scaled)
    causal = self_attention(*inputs, scaled=scaled, causal=True)
    route = renormalised_weights(unmasked.scaled_scores)
    np.testing.assert_allclose(route.weights, causal.weights, rtol=0, atol=1e-12)
    np.testing.assert_allclose(route.full, unmasked.weights, rtol=0, atol=1e-12)
    assert np.all(route.weights[causal_mask(unmasked.n_tokens)] == 0.0)


@FAST
@given(st.sampled_from([3.0, 30.0, 3e4]).flatmap(attention_inputs), st.booleans())
def test_the_masked_scores_are_causal_self_attention_s(inputs: tuple[np.ndarray, ...], scaled: bool) -> None:
    """The masked lecture draws causal self-attention's scaled scores as the mask's −∞: the same numbers,
    bit for bit, as masked_scores of the unmasked ones."""
    unmasked = self_attention(*inputs, scaled=scaled)
    causal = self_attention(*inputs, scaled=scaled, causal=True)
    assert np.array_equal(masked_scores(unmasked.scaled_scores), causal.scaled_scores)


@pytest.mark.parametrize("scale", [1e3, 1e6, 1e100, 1e300])
@pytest.mark.parametrize("n", [1, 2, 5, 12])
def test_huge_scores_keep_the_masked_softmax(scale: float, n: int) -> None:
    scores = np.random.default_rng(n).standard_normal((n, n)) * scale
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        route = renormalised_weights(scores)
    np.testing.assert_allclose(route.weights, plain_masked_softmax(scores.tolist()), rtol=0, atol=1e-12)
    assert np.all(np.isfinite(route.weights)) and np.all(np.isfinite(route.row_sums))
    np.testing.assert_allclose(route.weights.sum(axis=1), 1.0, rtol=0, atol=1e-12)


def test_a_future_that_buries_the_past_still_leaves_the_past_its_weights() -> None:
    # Key 2 outscores key 1 by 1000: the full softmax gives key 1 exp(-1000), 0 in float64.
    route = renormalised_weights([[0.0, 1000.0], [0.0, 0.0]])
    assert route.full[0].tolist() == [0.0, 1.0] and route.row_sums[0] == 0.0  # shown as float64 has it
    assert route.weights.tolist() == [[1.0, 0.0], [0.5, 0.5]]
    # the past's share a normal number however small: still the division itself
    close = renormalised_weights([[0.0, 700.0], [0.0, 0.0]])
    assert 0.0 < close.row_sums[0] < 1e-300
    assert close.weights[0].tolist() == [1.0, 0.0]
    assert np.array_equal(close.weights, close.zeroed / close.row_sums[:, None])


@pytest.mark.parametrize("score", [0.0, -7.0, 1e308, -1e308])
def test_one_token_attends_to_itself(score: float) -> None:
    route = renormalised_weights([[score]])
    for name in ("full", "zeroed", "weights"):
        assert getattr(route, name).tolist() == [[1.0]], name
    assert route.row_sums.tolist() == [1.0]
    assert self_attention([[1.0]], [[1.0]], [[1.0]], [[2.0]], causal=True).weights.tolist() == [[1.0]]


def test_the_route_s_numbers_by_hand() -> None:
    """Two tokens: row 1 keeps e/(1+e) of its full softmax, then divides it back up to 1."""
    route = renormalised_weights([[1.0, 2.0], [3.0, 4.0]])
    share = 1 / (1 + math.e)
    np.testing.assert_allclose(route.full, [[share, 1 - share]] * 2, rtol=1e-15)
    np.testing.assert_allclose(route.row_sums, [share, 1.0], rtol=1e-15)
    np.testing.assert_allclose(route.weights, [[1.0, 0.0], [share, 1 - share]], rtol=1e-15)


def test_the_route_does_not_touch_its_input_and_is_frozen() -> None:
    scores = np.random.default_rng(3).standard_normal((4, 4))
    before = scores.copy()
    route = renormalised_weights(scores)
    assert np.array_equal(scores, before) and scores.flags.writeable
    for field in dataclasses.fields(RenormalisedWeights):
        array = getattr(route, field.name)
        assert array.dtype == np.float64 and not array.flags.writeable, field.name
        assert not np.shares_memory(array, scores), field.name
    with pytest.raises(dataclasses.FrozenInstanceError):
        route.weights = route.full  # type: ignore[misc]
    assert renormalised_weights(scores.tolist()).weights.tolist() == route.weights.tolist()


# -- dropout ------------------------------------------------------------------------------------


def plain_dropout(weights: np.ndarray, p: float, seed: int) -> tuple[list[bool], list[float]]:
    """The documented draw, replayed one uniform number per weight in row-major order."""
    draws = np.random.default_rng(seed).random(weights.size).tolist()
    kept = [u >= p for u in draws]
    flat = weights.ravel().tolist()
    return kept, [w * (1 / (1 - p)) if keep else 0.0 for w, keep in zip(flat, kept, strict=True)]


@st.composite
def dropout_inputs(draw: st.DrawFn) -> tuple[np.ndarray, float, int]:
    shape = draw(st.sampled_from([(1, 1), (2, 2), (3, 3), (5, 5), (2, 4, 4), (1, 3)]))
    weights = draw(arrays(np.float64, shape, elements=st.floats(0, 1)))
    return weights, draw(st.floats(0, 0.99)), draw(st.integers(0, 2**63 - 1))


@FAST
@given(dropout_inputs())
def test_dropout_replays_the_documented_draw(case: tuple[np.ndarray, float, int]) -> None:
    weights, p, seed = case
    before = weights.copy()
    drop = attention_dropout(weights, p, seed=seed)
    kept, values = plain_dropout(weights, p, seed)
    assert drop.kept.ravel().tolist() == kept and drop.kept.shape == weights.shape
    np.testing.assert_allclose(drop.weights.ravel(), values, rtol=1e-15, atol=0)
    assert np.all(drop.weights[~drop.kept] == 0.0) and not np.any(np.signbit(drop.weights[~drop.kept]))
    assert (drop.p, drop.seed, drop.scale) == (p, seed, 1 / (1 - p))
    np.testing.assert_allclose(drop.row_sums, drop.weights.sum(axis=-1), rtol=1e-15)
    assert np.array_equal(drop.before, weights) and np.array_equal(weights, before)
    for array in (drop.before, drop.kept, drop.weights, drop.row_sums):
        assert not array.flags.writeable and not np.shares_memory(array, weights)
    again = attention_dropout(weights, p, seed=seed)
    assert np.array_equal(again.kept, drop.kept) and np.array_equal(again.weights, drop.weights)


def test_dropout_of_causal_weights_by_hand() -> None:
    weights = self_attention(np.eye(3), np.eye(3), np.eye(3), np.eye(3), causal=True).weights
    drop = attention_dropout(weights, 0.5, seed=1)
    kept = np.random.default_rng(1).random((3, 3)) >= 0.5
    assert np.array_equal(drop.kept, kept) and drop.scale == 2.0
    assert np.array_equal(drop.weights, np.where(kept, 2 * weights, 0.0))
    assert not np.allclose(drop.row_sums, 1.0)  # on purpose: the rows no longer sum to 1
    assert np.all(drop.weights[causal_mask(3)] == 0.0)  # masked weights stay 0


def test_no_dropout_gives_the_weights_back_unchanged() -> None:
    weights = np.random.default_rng(5).random((6, 6))
    drop = attention_dropout(weights, 0, seed=9)
    assert drop.kept.all() and drop.scale == 1.0 and drop.p == 0.0
    assert np.array_equal(drop.weights, weights) and np.array_equal(drop.row_sums, weights.sum(axis=1))


def test_dropout_drops_about_p_and_keeps_the_expected_weights() -> None:
    weights = np.full((200, 200), 1 / 200)
    for p in (0.1, 0.5, 0.9):
        drop = attention_dropout(weights, p, seed=0)
        assert abs(1 - drop.kept.mean() - p) < 0.01, p
        # each weight w is w/(1 - p) or 0: variance w²·p/(1 - p), so a row of 200 spreads by √(p / (200 (1 - p)))
        spread = math.sqrt(p / (200 * (1 - p)))
        assert drop.row_sums.std() == pytest.approx(spread, rel=0.15), p
        assert abs(drop.row_sums.mean() - 1.0) < 4 * spread / math.sqrt(200), p  # 1 on average, not row by row
    small = np.array([[1.0, 0.0, 0.0], [0.3, 0.7, 0.0], [0.2, 0.3, 0.5]])
    mean = np.mean([attention_dropout(small, 0.4, seed=s).weights for s in range(4000)], axis=0)
    np.testing.assert_allclose(mean, small, atol=0.04)


def test_other_seeds_drop_other_weights() -> None:
    weights = np.full((8, 8), 0.125)
    kept = {attention_dropout(weights, 0.5, seed=s).kept.tobytes() for s in range(10)}
    assert len(kept) == 10


def test_dropout_of_several_heads_draws_over_the_whole_stack() -> None:
    stack = np.random.default_rng(2).random((3, 4, 4))
    drop = attention_dropout(stack, 0.25, seed=11)
    assert drop.kept.shape == (3, 4, 4) and drop.row_sums.shape == (3, 4)
    assert np.array_equal(drop.kept, np.random.default_rng(11).random((3, 4, 4)) >= 0.25)
    assert isinstance(drop, DropoutTrace)
    with pytest.raises(dataclasses.FrozenInstanceError):
        drop.p = 0.0  # type: ignore[misc]


@pytest.mark.parametrize(
    ("arguments", "field", "words"),
    [
        pytest.param({"p": 1.0}, "p", ("from 0 up to (not including) 1", "1.0"), id="p = 1"),
        pytest.param({"p": -0.1}, "p", ("-0.1",), id="negative p"),
        pytest.param({"p": math.nan}, "p", ("nan",), id="NaN p"),
        pytest.param({"p": True}, "p", ("True",), id="boolean p"),
        pytest.param({"p": "0.5"}, "p", ("'0.5'",), id="text p"),
        pytest.param({"seed": -1}, "seed", ("whole number", "-1"), id="negative seed"),
        pytest.param({"seed": 1.5}, "seed", ("1.5",), id="fractional seed"),
        pytest.param({"seed": 2**63}, "seed", ("2**63 - 1",), id="seed too large"),
        pytest.param({"seed": False}, "seed", ("False",), id="boolean seed"),
        pytest.param({"weights": [0.5, 0.5]}, "weights", ("2-d",), id="a row"),
        pytest.param({"weights": [[0.5, math.inf]]}, "weights", ("finite",), id="infinite weight"),
        pytest.param({"weights": [[0.5, 0.5], [1.0]]}, "weights", (), id="ragged"),
        pytest.param({"weights": np.ones((1, 2, 2, 2))}, "weights", ("2-d",), id="4-d"),
    ],
)
def test_bad_dropout_arguments_name_the_argument(
    arguments: dict[str, object], field: str, words: tuple[str, ...]
) -> None:
    given_: dict[str, object] = {"weights": [[1.0, 0.0], [0.5, 0.5]], "p": 0.5, "seed": 0, **arguments}
    assert_scenario_error(lambda: attention_dropout(**given_), field, *words)  # type: ignore[arg-type]


def test_the_seed_is_keyword_only() -> None:
    with pytest.raises(TypeError):
        attention_dropout([[1.0]], 0.5, 3)  # type: ignore[call-arg]
