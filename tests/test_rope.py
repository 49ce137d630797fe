"""RoPE: the turn against plain loops of 2 × 2 rotation matrices, and the properties RoFormer proves.

The reference turns each pair with an explicit matrix ``[[cos φ, −sin φ], [sin φ, cos φ]]`` and
``θ_i = base^(−2(i−1)/d)`` for ``i = 1 … d/2`` as the paper numbers them, in Python floats.
The properties: lengths kept; ``(R_m q)·(R_n k)`` depends on ``m − n`` only (every position
shifted by the same amount gives the same scores) and equals ``q·(R_(n−m) k)``; position 0 turns
nothing; ``d = 2`` is multiplication by ``e^(i m)``; the two layouts agree up to a stated
reordering of the dimensions; without positions attention is permutation-equivariant, and with
positions that move with their tokens it still is, but not when the tokens move and the
positions stay.
"""

from __future__ import annotations

import cmath
import dataclasses
import math
from collections.abc import Callable

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scenario_errors import assert_scenario_error
from strategies import FAST, MODERATE

from attention_math import (
    ROPE_LAYOUTS,
    RopeTrace,
    rope,
    rope_angles,
    rope_attention,
    rope_frequencies,
    rope_pair_dimensions,
    self_attention,
)

BASES = st.sampled_from([10000.0, 100.0, 2.5, 1.0, 0.5])

# -- the reference: explicit rotation matrices, pair by pair ------------------------------------


def paper_pairs(d: int, layout: str) -> list[tuple[int, int]]:
    """The dimensions pair ``i`` turns: ``(2i, 2i+1)`` in RoFormer, ``(i, i + d/2)`` in "rotate half"."""
    if layout == "pairs":
        return [(2 * i, 2 * i + 1) for i in range(d // 2)]
    return [(i, i + d // 2) for i in range(d // 2)]


def reference_rope(x: list[list[float]], positions: list[float], base: float, layout: str) -> list[list[float]]:
    """Each row turned pair by pair with ``[[cos, −sin], [sin, cos]]`` of angle ``m·θ_i``."""
    d = len(x[0])
    out = []
    for row, m in zip(x, positions, strict=True):
        turned = list(row)
        for i, (a, b) in enumerate(paper_pairs(d, layout), start=1):
            theta = base ** (-2 * (i - 1) / d)
            angle = m * theta
            rotation = [[math.cos(angle), -math.sin(angle)], [math.sin(angle), math.cos(angle)]]
            pair = [row[a], row[b]]
            turned[a] = rotation[0][0] * pair[0] + rotation[0][1] * pair[1]
            turned[b] = rotation[1][0] * pair[0] + rotation[1][1] * pair[1]
        out.append(turned)
    return out


def reference_rope_attention(
    x: list[list[float]], wq: list[list[float]], wk: list[list[float]], wv: list[list[float]],
    positions: list[float], base: float, layout: str, causal: bool, scaled: bool,
) -> dict[str, list[list[float]]]:
    """softmax((R q)(R k)ᵀ / √d_k) V in Python floats and loops."""

    def matmul(a: list[list[float]], b: list[list[float]]) -> list[list[float]]:
        return [[sum(a[r][t] * b[t][c] for t in range(len(b))) for c in range(len(b[0]))] for r in range(len(a))]

    q = reference_rope(matmul(x, wq), positions, base, layout)
    k = reference_rope(matmul(x, wk), positions, base, layout)
    v = matmul(x, wv)
    divisor = math.sqrt(len(wq[0])) if scaled else 1.0
    scores, weights = [], []
    for i in range(len(x)):
        row = [sum(a * b for a, b in zip(q[i], k[j], strict=True)) for j in range(len(x))]
        scores.append(row)
        seen = [row[j] / divisor for j in range(len(x)) if not (causal and j > i)]
        top = max(seen)
        exps = [math.exp(s - top) for s in seen] + [0.0] * (len(x) - len(seen))
        weights.append([e / sum(exps) for e in exps])
    return {"rotated_queries": q, "rotated_keys": k, "scores": scores, "weights": weights,
            "context": matmul(weights, v)}


@st.composite
def turnable(draw: st.DrawFn, max_n: int = 6) -> tuple[np.ndarray, list[float]]:
    """A matrix of ``n`` rows of even width and a position per row (whole or fractional, some negative)."""
    n, d = draw(st.integers(1, max_n)), 2 * draw(st.integers(1, 5))
    x = draw(arrays(np.float64, (n, d), elements=MODERATE))
    whole = st.integers(-50, 2000).map(float)
    positions = draw(st.lists(whole | st.floats(-100.0, 100.0), min_size=n, max_size=n))
    return x, positions


@st.composite
def rope_problems(draw: st.DrawFn) -> tuple[np.ndarray, ...]:
    n, d_in, d_k, d_v = draw(st.integers(1, 6)), draw(st.integers(1, 4)), 2 * draw(st.integers(1, 3)), draw(
        st.integers(1, 3)
    )

    def matrix(rows: int, columns: int) -> np.ndarray:
        return draw(arrays(np.float64, (rows, columns), elements=MODERATE))

    return matrix(n, d_in), matrix(d_in, d_k), matrix(d_in, d_k), matrix(d_in, d_v)


def _size(*matrices: np.ndarray) -> float:
    return 1.0 + max(float(np.max(np.abs(m))) for m in matrices)


# -- against the reference ----------------------------------------------------------------------


@FAST
@given(turnable(), BASES, st.sampled_from(ROPE_LAYOUTS))
def test_rope_equals_explicit_rotation_matrices(case: tuple[np.ndarray, list[float]], base: float, layout: str) -> None:
    x, positions = case
    turned = rope(x, positions, base=base, layout=layout)
    expected = reference_rope(x.tolist(), positions, base, layout)
    # An angle of 2000 radians carries ~2000·eps of rounding into cos and sin.
    np.testing.assert_allclose(turned, expected, rtol=0, atol=1e-12 * _size(x) * (1 + max(map(abs, positions))))
    assert turned.dtype == np.float64 and turned.shape == x.shape and not turned.flags.writeable


@FAST
@given(rope_problems(), st.data(), BASES, st.sampled_from(ROPE_LAYOUTS), st.booleans(), st.booleans())
def test_rope_attention_equals_a_plain_loop(
    problem: tuple[np.ndarray, ...], data: st.DataObject, base: float, layout: str, causal: bool, scaled: bool
) -> None:
    x, wq, wk, wv = problem
    n = x.shape[0]
    positions = data.draw(st.none() | st.lists(st.integers(-20, 300).map(float), min_size=n, max_size=n))
    trace = rope_attention(x, wq, wk, wv, positions=positions, base=base, layout=layout, causal=causal, scaled=scaled)
    spots = [float(m) for m in range(n)] if positions is None else positions
    expected = reference_rope_attention(
        x.tolist(), wq.tolist(), wk.tolist(), wv.tolist(), spots, base, layout, causal, scaled
    )
    # Tolerances follow what was summed: an angle m·θ carries about m·eps of rounding.
    turn = 1e-13 * (1 + max(map(abs, spots))) * x.shape[1]
    q_size, k_size = _size(trace.queries), _size(trace.keys)
    score = turn * wq.shape[1] * q_size * k_size
    for name, atol in (("rotated_queries", turn * q_size), ("rotated_keys", turn * k_size), ("scores", score),
                       ("weights", 4 * score), ("context", 4 * score * n * _size(trace.values))):
        np.testing.assert_allclose(getattr(trace, name), expected[name], rtol=0, atol=atol, err_msg=name)
    plain = self_attention(x, wq, wk, wv, causal=causal, scaled=scaled)
    for name in ("queries", "keys", "values"):
        assert np.array_equal(getattr(trace, name), getattr(plain, name)), name
        assert np.array_equal(getattr(trace.plain, name), getattr(plain, name)), name
    assert np.array_equal(trace.plain.weights, plain.weights)
    assert np.array_equal(trace.positions, spots)
    np.testing.assert_allclose(trace.angles, np.array(spots)[:, None] * trace.frequencies[None, :], rtol=1e-15)
    if causal:
        assert np.all(trace.weights[np.triu_indices(n, 1)] == 0.0)
        assert np.all(trace.scaled_scores[np.triu_indices(n, 1)] == -np.inf)
    seen = np.tril_indices(n)
    np.testing.assert_allclose(trace.scaled_scores[seen], (trace.scores / trace.sqrt_d_k)[seen])


def test_frequencies_and_angles_follow_the_paper() -> None:
    for d, base in ((2, 10000.0), (8, 10000.0), (64, 10000.0), (6, 3.0)):
        theta = rope_frequencies(d, base)
        assert theta.shape == (d // 2,) and not theta.flags.writeable
        np.testing.assert_allclose(theta, [base ** (-2 * (i - 1) / d) for i in range(1, d // 2 + 1)], rtol=1e-15)
        assert theta[0] == 1.0
    assert np.all(np.diff(rope_frequencies(64)) < 0)  # fast pairs first, slow ones last
    np.testing.assert_allclose(rope_frequencies(128)[-1], 10000.0 ** (-126 / 128), rtol=1e-15)
    angles = rope_angles(6, [0, 2, 5], base=100.0)
    assert angles.shape == (3, 3) and not angles.flags.writeable
    np.testing.assert_allclose(angles, [[0, 0, 0], [2, 2 / 100 ** (1 / 3), 2 / 100 ** (2 / 3)],
                                        [5, 5 / 100 ** (1 / 3), 5 / 100 ** (2 / 3)]], rtol=1e-15)


# -- the properties -----------------------------------------------------------------------------


@FAST
@given(turnable(), BASES, st.sampled_from(ROPE_LAYOUTS))
def test_every_row_keeps_its_length(case: tuple[np.ndarray, list[float]], base: float, layout: str) -> None:
    x, positions = case
    turned = rope(x, positions, base=base, layout=layout)
    np.testing.assert_allclose(np.linalg.norm(turned, axis=1), np.linalg.norm(x, axis=1), rtol=1e-13, atol=1e-13)
    # Each pair keeps its own length too: a turn within its plane.
    for a, b in paper_pairs(x.shape[1], layout):
        np.testing.assert_allclose(np.hypot(turned[:, a], turned[:, b]), np.hypot(x[:, a], x[:, b]),
                                   atol=1e-13 * _size(x))


@FAST
@given(rope_problems(), st.data(), st.sampled_from(ROPE_LAYOUTS), BASES)
def test_scores_depend_on_the_distance_between_positions_only(
    problem: tuple[np.ndarray, ...], data: st.DataObject, layout: str, base: float
) -> None:
    x, wq, wk, wv = problem
    n = x.shape[0]
    positions = np.array(data.draw(st.lists(st.integers(0, 20), min_size=n, max_size=n)), dtype=float)
    shift = data.draw(st.integers(-50, 50) | st.floats(-50.0, 50.0))
    here = rope_attention(x, wq, wk, wv, positions=positions, layout=layout, base=base)
    there = rope_attention(x, wq, wk, wv, positions=positions + shift, layout=layout, base=base)
    lengths = np.linalg.norm(here.queries, axis=1)[:, None] * np.linalg.norm(here.keys, axis=1)[None, :]
    largest = 1 + float(np.max(lengths))
    np.testing.assert_allclose(there.scores, here.scores, rtol=0, atol=1e-12 * largest)
    np.testing.assert_allclose(there.context, here.context, rtol=0, atol=1e-10 * _size(here.values) * largest)
    # RoFormer's equation (16): (R_m q)·(R_n k) = q·(R_(n−m) k).
    for i in range(n):
        moved_keys = rope(here.keys, positions - positions[i], base=base, layout=layout)
        np.testing.assert_allclose(here.scores[i], moved_keys @ here.queries[i], rtol=0,
                                   atol=1e-12 * largest)


def test_a_shift_of_a_million_positions_keeps_the_scores() -> None:
    rng = np.random.default_rng(4)
    x, wq, wk, wv = rng.normal(size=(5, 4)), rng.normal(size=(4, 8)), rng.normal(size=(4, 8)), rng.normal(size=(4, 3))
    near = rope_attention(x, wq, wk, wv, positions=[0, 1, 2, 3, 4])
    for far in (1e6, 1e9):
        distant = rope_attention(x, wq, wk, wv, positions=[far, far + 1, far + 2, far + 3, far + 4])
        # Rounding of m·θ grows with m: about far·eps radians.
        np.testing.assert_allclose(distant.scores, near.scores, rtol=0, atol=far * 1e-14 * np.max(np.abs(near.scores)))
        np.testing.assert_allclose(np.linalg.norm(distant.rotated_queries, axis=1),
                                   np.linalg.norm(near.queries, axis=1), rtol=1e-14)
        assert not np.allclose(distant.rotated_queries, near.rotated_queries)  # the rows did turn


def test_position_zero_turns_nothing() -> None:
    x = np.array([[0.3, -1.2, 2.5, 0.7, -0.1, 4.0]])
    for layout in ROPE_LAYOUTS:
        assert np.array_equal(rope(x, [0.0], layout=layout), x)
    trace = rope_attention([[1.0, 2.0], [3.0, 4.0]], np.eye(2), np.eye(2), np.eye(2), positions=[0, 0])
    assert np.array_equal(trace.scores, trace.plain.scores)
    assert np.array_equal(trace.weights, trace.plain.weights)


@FAST
@given(st.complex_numbers(max_magnitude=10.0), st.floats(-1e3, 1e3), BASES)
def test_one_pair_is_multiplication_by_a_unit_complex_number(z: complex, m: float, base: float) -> None:
    # d = 2: θ_0 = 1 whatever the base, so position m turns (a, b) by m radians: (a + ib)·e^(im).
    turned = rope([[z.real, z.imag]], [m], base=base)
    expected = z * cmath.exp(1j * m)
    atol = 1e-12 * (1 + abs(z)) * (1 + abs(m))
    np.testing.assert_allclose(turned[0], [expected.real, expected.imag], rtol=0, atol=atol)


@FAST
@given(turnable(), BASES)
def test_the_two_layouts_agree_up_to_a_reordering_of_dimensions(
    case: tuple[np.ndarray, list[float]], base: float
) -> None:
    x, positions = case
    d = x.shape[1]
    # 0, d/2, 1, d/2 + 1, …: the half layout's pairs, each put side by side.
    order = [dim for i in range(d // 2) for dim in (i, i + d // 2)]
    assert rope_pair_dimensions(d, "half").ravel().tolist() == order
    assert rope_pair_dimensions(d, "pairs").ravel().tolist() == list(range(d))
    half = rope(x, positions, base=base, layout="half")
    pairs = rope(x[:, order], positions, base=base, layout="pairs")
    assert np.array_equal(half[:, order], pairs)


@FAST
@given(rope_problems(), BASES)
def test_the_two_layouts_give_the_same_scores_with_reordered_weights(
    problem: tuple[np.ndarray, ...], base: float
) -> None:
    x, wq, wk, wv = problem
    d = wq.shape[1]
    order = [dim for i in range(d // 2) for dim in (i, i + d // 2)]
    half = rope_attention(x, wq, wk, wv, layout="half", base=base)
    pairs = rope_attention(x, wq[:, order], wk[:, order], wv, layout="pairs", base=base)
    np.testing.assert_allclose(half.scores, pairs.scores, rtol=1e-13, atol=1e-13 * _size(half.scores))
    np.testing.assert_allclose(half.rotated_queries[:, order], pairs.rotated_queries, rtol=1e-13, atol=1e-13)


def test_the_layouts_differ_without_the_reordering() -> None:
    x = np.array([[1.0, 2.0, 3.0, 4.0]])
    assert not np.allclose(rope(x, [1.0], layout="half"), rope(x, [1.0], layout="pairs"))


@FAST
@given(rope_problems().flatmap(lambda p: st.tuples(st.just(p), st.permutations(range(p[0].shape[0])))))
def test_shuffled_tokens_shuffle_the_scores_when_positions_move_with_them(
    case: tuple[tuple[np.ndarray, ...], list[int]],
) -> None:
    (x, wq, wk, wv), order = case
    perm = np.array(order, dtype=int)
    positions = np.arange(x.shape[0], dtype=float) * 3.0
    trace = rope_attention(x, wq, wk, wv, positions=positions)
    moved = rope_attention(x[perm], wq, wk, wv, positions=positions[perm])
    atol = 1e-12 * _size(trace.scores)
    # Without positions: permutation-equivariant; with positions carried along: still.
    np.testing.assert_allclose(moved.plain.scores, trace.plain.scores[perm][:, perm], rtol=1e-13, atol=atol)
    np.testing.assert_allclose(moved.scores, trace.scores[perm][:, perm], rtol=1e-12, atol=atol)
    np.testing.assert_allclose(moved.context, trace.context[perm], rtol=1e-9, atol=1e-9 * _size(trace.values))


def test_shuffled_tokens_in_the_same_slots_change_the_scores() -> None:
    # "dog bites man" and "man bites dog": the same three embeddings, in other slots.
    x = np.array([[1.0, 0.2], [0.1, 0.9], [0.7, -0.5]])
    wq, wk, wv = np.array([[1.0, 0.3], [0.2, 1.0]]), np.array([[0.8, -0.1], [0.4, 0.9]]), np.eye(2)
    perm = np.array([2, 1, 0])
    trace, moved = rope_attention(x, wq, wk, wv), rope_attention(x[perm], wq, wk, wv)
    np.testing.assert_allclose(moved.plain.scores, trace.plain.scores[perm][:, perm], rtol=1e-14)
    assert not np.allclose(moved.scores, trace.scores[perm][:, perm], rtol=1e-3)


# -- the trace: frozen, read-only, the inputs untouched ------------------------------------------


def test_inputs_are_not_mutated_and_the_trace_is_frozen() -> None:
    x, wq = np.array([[0.1, 0.2], [0.3, 0.4], [0.5, 0.6]]), np.array([[0.5, 0.1], [0.2, 0.9]])
    positions = np.array([3.0, 1.0, 4.0])
    given_arrays = [x, wq, positions]
    copies = [a.copy() for a in given_arrays]
    trace = rope_attention(x, wq, wq, wq, positions=positions)
    turned = rope(x, positions)
    for array, copy in zip(given_arrays, copies, strict=True):
        assert np.array_equal(array, copy) and array.flags.writeable
    assert isinstance(trace, RopeTrace)
    with pytest.raises(dataclasses.FrozenInstanceError):
        trace.scores = trace.weights  # type: ignore[misc]
    for field in dataclasses.fields(trace):
        value = getattr(trace, field.name)
        if isinstance(value, np.ndarray):
            assert not value.flags.writeable, field.name
            assert value.dtype == np.float64, field.name
            assert not any(np.shares_memory(value, a) for a in given_arrays), field.name
    assert not turned.flags.writeable and not any(np.shares_memory(turned, a) for a in given_arrays)
    assert not rope_pair_dimensions(4).flags.writeable
    assert (trace.n_tokens, trace.d_k, trace.base, trace.layout) == (3, 2, 10000.0, "pairs")


# -- errors --------------------------------------------------------------------------------------


X3 = [[0.1, 0.2, 0.3], [0.4, 0.5, 0.6]]
X4 = [[0.1, 0.2, 0.3, 0.4], [0.5, 0.6, 0.7, 0.8]]


@pytest.mark.parametrize(
    ("call", "field", "words"),
    [
        (lambda: rope(X3, [0, 1]), "x", ("even", "got 3")),
        (lambda: rope(X4, [0]), "positions", ("2 positions", "got 1")),
        (lambda: rope(X4, [0, 1, 2]), "positions", ("2 positions",)),
        (lambda: rope(X4, [[0, 1]]), "positions", ("flat",)),
        (lambda: rope(X4, [0, [1, 2]]), "positions", ("flat",)),  # type: ignore[arg-type]
        (lambda: rope(X4, [0, float("nan")]), "positions", ("finite",)),
        (lambda: rope(X4, [True, False]), "positions", ("numbers",)),
        (lambda: rope(X4, [0, 1], layout="rotate-half"), "layout", ("'pairs' or 'half'", "rotate-half")),
        (lambda: rope(X4, [0, 1], base=0.0), "base", ("positive",)),
        (lambda: rope(X4, [0, 1], base=-10.0), "base", ("positive",)),
        (lambda: rope(X4, [0, 1], base=float("inf")), "base", ("finite",)),
        (lambda: rope(X4, [0, 1], base=True), "base", ("positive",)),
        (lambda: rope(X4, [1e300, 1.0], base=1e-300), "positions", ("too large",)),
        (lambda: rope([[1.5e308, 1.5e308]], [0.7]), "x", ("too large",)),
        (lambda: rope([[0.1, "a"]], [0]), "x", ("numbers",)),  # type: ignore[arg-type]
        (lambda: rope_frequencies(0), "d", ("even",)),
        (lambda: rope_frequencies(5), "d", ("even", "got 5")),
        (lambda: rope_frequencies(4.0), "d", ("even",)),  # type: ignore[arg-type]
        (lambda: rope_angles(4, []), "positions", ("non-empty",)),
        (lambda: rope_pair_dimensions(4, "PAIRS"), "layout", ("'pairs' or 'half'",)),
        (lambda: rope_attention(X3, np.eye(3), np.eye(3), np.eye(3)), "w_query", ("even", "got 3")),
        (lambda: rope_attention(X4, np.eye(4), np.eye(4), np.eye(4), positions=[1]), "positions",
         ("one per token",)),
        (lambda: rope_attention(X4, np.eye(4), np.eye(4)[:, :2], np.eye(4)), "w_key", ("columns",)),
        (lambda: rope_attention(X4, np.eye(4), np.eye(4), np.eye(4), layout="x"), "layout", ()),
        # q ⟂ k: every unturned score is 0; turned one position apart, |q||k| sin 1 overflows.
        (lambda: rope_attention([[1e155, 0.0], [1e155, 0.0]], [[1.0, 0.0], [0.0, 1.0]], [[0.0, 1.0], [1.0, 0.0]],
                                [[1.0], [1.0]], scaled=False),
         "embeddings", ("too large",)),
    ],
)
def test_errors_name_the_argument(call: Callable[[], object], field: str, words: tuple[str, ...]) -> None:
    assert_scenario_error(call, field, *words)
