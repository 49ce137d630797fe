"""RoPE's clock (``attention_math.rope_clock``): one query and one key, pair by pair, against plain loops.

The reference writes each pair's arrow, its turn ``m·θ_i`` (``θ_i = base^(−2(i−1)/d)``, the paper's
``i`` from 1), the turned arrow by ``[[cos, −sin], [sin, cos]]``, the hands by ``math.atan2`` and the
share of the score as ``|q_i| |k_i| cos(angle between)`` in Python floats; the score is checked against
``rope_attention``'s. The properties: a shift of both positions keeps every angle between, every share and
the score (to 1e-12 of the lengths); the "half" layout of ``q`` and ``k`` is the paper's pairs of ``q`` and ``k``
reordered by ``rope_pair_dimensions(d, "half").ravel()``.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from strategies import FAST, MODERATE

from attention_math import ROPE_LAYOUTS, RopeClock, ScenarioError, rope_attention, rope_clock, rope_pair_dimensions

BASES = st.sampled_from([10000.0, 100.0, 2.5, 1.0])


def paper_pairs(d: int, layout: str) -> list[tuple[int, int]]:
    if layout == "pairs":
        return [(2 * i, 2 * i + 1) for i in range(d // 2)]
    return [(i, i + d // 2) for i in range(d // 2)]


def reference_clock(
    q: list[float], k: list[float], m: float, n: float, base: float, layout: str
) -> dict[str, list[float]]:
    """Pair by pair in Python floats: turns, turned arrows, hands, the angle between, the share."""
    d = len(q)
    out: dict[str, list[float]] = {name: [] for name in ("theta", "q_turn", "k_turn", "q_hand", "k_hand", "between",
                                                         "share", "q_x", "q_y", "k_x", "k_y")}
    for i, (a, b) in enumerate(paper_pairs(d, layout), start=1):
        theta = base ** (-2 * (i - 1) / d)
        turned = []
        for vector, position in ((q, m), (k, n)):
            phi = position * theta
            turned.append((math.cos(phi) * vector[a] - math.sin(phi) * vector[b],
                           math.sin(phi) * vector[a] + math.cos(phi) * vector[b]))
        (qx, qy), (kx, ky) = turned
        q_hand, k_hand = math.atan2(qy, qx), math.atan2(ky, kx)
        between = math.atan2(math.sin(k_hand - q_hand), math.cos(k_hand - q_hand))
        share = math.hypot(q[a], q[b]) * math.hypot(k[a], k[b]) * math.cos(between)
        for name, value in zip(out, (theta, m * theta, n * theta, q_hand, k_hand, between, share, qx, qy, kx, ky),
                               strict=True):
            out[name].append(value)
    return out


@st.composite
def clocks(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray, float, float]:
    d = 2 * draw(st.integers(1, 5))
    q, k = (draw(arrays(np.float64, (d,), elements=MODERATE)) for _ in range(2))
    m, n = (draw(st.integers(-30, 3000).map(float) | st.floats(-100.0, 100.0)) for _ in range(2))
    return q, k, m, n


def _scale(q: np.ndarray, k: np.ndarray) -> float:
    return 1.0 + float(np.linalg.norm(q) * np.linalg.norm(k))


@FAST
@given(clocks(), BASES, st.sampled_from(ROPE_LAYOUTS))
def test_the_clock_equals_a_plain_loop(case: tuple[np.ndarray, np.ndarray, float, float], base: float,
                                       layout: str) -> None:
    q, k, m, n = case
    clock = rope_clock(q, k, m, n, base=base, layout=layout)
    ref = reference_clock(q.tolist(), k.tolist(), m, n, base, layout)
    np.testing.assert_allclose(clock.frequencies, ref["theta"], rtol=1e-14)
    np.testing.assert_allclose(clock.query_turns, ref["q_turn"], rtol=1e-14, atol=1e-300)
    np.testing.assert_allclose(clock.key_turns, ref["k_turn"], rtol=1e-14, atol=1e-300)
    atol = 1e-12 * (1 + max(abs(m), abs(n))) * _scale(q, k)
    np.testing.assert_allclose(clock.turned_query_pairs, np.array([ref["q_x"], ref["q_y"]]).T, atol=atol)
    np.testing.assert_allclose(clock.turned_key_pairs, np.array([ref["k_x"], ref["k_y"]]).T, atol=atol)
    np.testing.assert_allclose(clock.contributions, ref["share"], atol=atol)
    assert math.isclose(clock.score, sum(ref["share"]), abs_tol=atol * len(q))
    # hands and the angle between, where both arrows have a direction (atan2 of a near-zero arrow is noise)
    dims = paper_pairs(len(q), layout)
    for i, (a, b) in enumerate(dims):
        if math.hypot(q[a], q[b]) > 1e-6 and math.hypot(k[a], k[b]) > 1e-6:
            gap = clock.angles_between[i] - ref["between"][i]
            assert abs(math.remainder(gap, 2 * math.pi)) < 1e-9 * (1 + max(abs(m), abs(n)))
            assert -math.pi <= clock.angles_between[i] <= math.pi
    np.testing.assert_array_equal(clock.query_pairs, q[rope_pair_dimensions(len(q), layout)])


@FAST
@given(clocks(), st.integers(-50, 500) | st.floats(-50.0, 50.0), st.sampled_from(ROPE_LAYOUTS))
def test_a_shift_of_both_positions_keeps_the_angles_shares_and_score(
    case: tuple[np.ndarray, np.ndarray, float, float], shift: float, layout: str
) -> None:
    q, k, m, n = case
    m, n = m % 40, n % 40  # rounding of m·θ grows with m
    here, there = rope_clock(q, k, m, n, layout=layout), rope_clock(q, k, m + shift, n + shift, layout=layout)
    assert abs(there.score - here.score) <= 1e-12 * _scale(q, k)
    np.testing.assert_allclose(there.contributions, here.contributions, rtol=0, atol=1e-12 * _scale(q, k))
    # the angle between, where both arrows have a direction (a zero arrow's is atan2's noise)
    lengths = np.linalg.norm(here.query_pairs, axis=1) * np.linalg.norm(here.key_pairs, axis=1)
    seen = lengths > 1e-6
    np.testing.assert_allclose(np.cos(there.angles_between - here.angles_between)[seen], 1.0, rtol=0, atol=1e-9)


def test_the_score_is_the_rope_attention_score_of_the_two_tokens() -> None:
    rng = np.random.default_rng(10)
    x, wq, wk, wv = rng.normal(size=(7, 3)), rng.normal(size=(3, 4)), rng.normal(size=(3, 4)), rng.normal(size=(3, 2))
    trace = rope_attention(x, wq, wk, wv)
    for layout in ROPE_LAYOUTS:
        trace = rope_attention(x, wq, wk, wv, layout=layout)
        for m, n in ((4, 3), (0, 6), (6, 6), (2, 5)):
            clock = rope_clock(trace.queries[m], trace.keys[n], m, n, layout=layout)
            assert abs(clock.score - trace.scores[m, n]) < 1e-12
            shifted = rope_attention(x, wq, wk, wv, layout=layout, positions=np.arange(7) + 11.0)
            assert abs(shifted.scores[m, n] - clock.score) < 1e-12


def test_the_half_layout_is_the_paper_pairs_of_reordered_dimensions() -> None:
    rng = np.random.default_rng(3)
    for d in (2, 4, 6, 8):
        q, k = rng.normal(size=d), rng.normal(size=d)
        order = rope_pair_dimensions(d, "half").ravel()
        half = rope_clock(q, k, 5, 2, layout="half")
        paired = rope_clock(q[order], k[order], 5, 2)
        assert abs(half.score - paired.score) < 1e-12
        np.testing.assert_allclose(half.contributions, paired.contributions, atol=1e-12)
        if d > 2:  # without the reordering the two layouts turn other pairs
            assert abs(rope_clock(q, k, 5, 2).score - half.score) > 1e-6


def test_one_pair_and_the_slowest_pair() -> None:
    clock = rope_clock([3.0, 4.0], [0.0, 2.0], 1.0, 0.0)
    assert clock.frequencies.tolist() == [1.0]
    assert math.isclose(clock.contributions[0], 5.0 * 2.0 * math.cos(math.pi / 2 - math.atan2(4, 3) - 1.0))
    slow = rope_clock(np.ones(4), np.ones(4), 1e6, 0.0)
    assert math.isclose(slow.query_turns[1], 1e6 * 0.01)


def test_the_clock_is_frozen_and_leaves_its_inputs_alone() -> None:
    q, k = np.array([1.0, 2.0, 3.0, 4.0]), np.array([0.5, -1.0, 2.0, 0.0])
    q_before, k_before = q.copy(), k.copy()
    clock = rope_clock(q, k, 3, 1)
    assert np.array_equal(q, q_before) and np.array_equal(k, k_before)
    for field in dataclasses.fields(RopeClock):
        value = getattr(clock, field.name)
        if isinstance(value, np.ndarray):
            assert not value.flags.writeable and value.dtype == np.float64, field.name
            assert not np.shares_memory(value, q) and not np.shares_memory(value, k), field.name
    with pytest.raises(dataclasses.FrozenInstanceError):
        clock.score = 0.0  # type: ignore[misc]


@pytest.mark.parametrize(
    ("call", "field"),
    [
        (lambda: rope_clock([1.0, 2.0, 3.0], [1.0, 2.0, 3.0], 0, 1), "query"),
        (lambda: rope_clock([1.0, 2.0], [1.0, 2.0, 3.0, 4.0], 0, 1), "key"),
        (lambda: rope_clock([[1.0, 2.0]], [1.0, 2.0], 0, 1), "query"),
        (lambda: rope_clock([1.0, 2.0], [1.0, 2.0], float("nan"), 1), "query_position"),
        (lambda: rope_clock([1.0, 2.0], [1.0, 2.0], 0, True), "key_position"),
        (lambda: rope_clock([1.0, 2.0], [1.0, 2.0], 0, 1, layout="rotate"), "layout"),
        (lambda: rope_clock([1.0, 2.0], [1.0, 2.0], 0, 1, base=-1.0), "base"),
    ],
)
def test_errors_name_the_argument(call: object, field: str) -> None:
    with pytest.raises(ScenarioError) as info:
        call()  # type: ignore[operator]
    assert str(info.value).startswith(f"{field}:") and "\n" not in str(info.value)
