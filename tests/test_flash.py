"""The online softmax and FlashAttention against plain loops, their invariants, and the memory traffic.

The references are written from the formulas in Python floats and ``math.exp`` (the row's
maximum subtracted first, so they stay exact where a naive ``exp`` overflows). Checked: equal
outputs for many shapes and tile sizes (tiles that do not divide ``n``, tiles of 1, tiles of ``n``
or more, one token, scores of 10⁴), the running ``m`` and ``ℓ`` after every tile against the keys
seen so far, the rescale factors ``exp(m_old − m_new) ≤ 1``, the tiles a causal mask skips, and
the slow-memory traffic against closed forms from Algorithms 0 and 1 of the paper.
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
from strategies import FAST, MODERATE

from attention_math import (
    FlashTrace,
    OnlineRowTrace,
    a100_traffic,
    flash_attention,
    memory_traffic,
    online_softmax_row,
    softmax,
)

# -- references ----------------------------------------------------------------------------------


def reference_weighted_sum(row: list[float], values: list[list[float]]) -> list[float]:
    """softmax(row) @ values with math.exp, the largest score subtracted first; -inf scores weigh 0."""
    top = max(row)
    exps = [0.0 if s == -math.inf else math.exp(s - top) for s in row]
    total = sum(exps)
    return [sum(e * v[c] for e, v in zip(exps, values, strict=True)) / total for c in range(len(values[0]))]


def reference_attention(
    q: list[list[float]], k: list[list[float]], v: list[list[float]], scaled: bool, causal: bool
) -> list[list[float]]:
    """softmax(Q Kᵀ / √d_k) V, row by row, in Python floats."""
    divisor = math.sqrt(len(q[0])) if scaled else 1.0
    out = []
    for i, query in enumerate(q):
        row = [
            -math.inf if causal and j > i else sum(a * b for a, b in zip(query, key, strict=True)) / divisor
            for j, key in enumerate(k)
        ]
        out.append(reference_weighted_sum(row, v))
    return out


@st.composite
def qkv(draw: st.DrawFn, max_n: int = 12) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    n, n_keys = draw(st.integers(1, max_n)), draw(st.integers(1, max_n))
    d_k, d_v = draw(st.integers(1, 4)), draw(st.integers(1, 3))

    def matrix(rows: int, columns: int) -> np.ndarray:
        return draw(arrays(np.float64, (rows, columns), elements=MODERATE))

    return matrix(n, d_k), matrix(n_keys, d_k), matrix(n_keys, d_v)


def _size(*matrices: np.ndarray) -> float:
    return 1.0 + max(float(np.max(np.abs(m))) for m in matrices)


# -- the online softmax of one row --------------------------------------------------------------


def _rows(most: int, past: int) -> st.SearchStrategy[tuple[np.ndarray, np.ndarray, int]]:
    """A row of 1 to ``most`` scores, its values (two columns) and a tile size up to ``past`` beyond the row."""
    return st.integers(1, most).flatmap(lambda n: st.tuples(
        arrays(np.float64, n, elements=st.floats(-30, 30)),
        arrays(np.float64, (n, 2), elements=MODERATE),
        st.integers(1, n + past),
    ))


@FAST
@given(_rows(20, 3))
def test_online_row_equals_the_softmax_weighted_sum(case: tuple[np.ndarray, np.ndarray, int]) -> None:
    row, values, block = case
    trace = online_softmax_row(row, values, block_size=block)
    np.testing.assert_allclose(trace.output, reference_weighted_sum(row.tolist(), values.tolist()),
                               rtol=0, atol=1e-12 * _size(values) * row.size)
    np.testing.assert_allclose(trace.weights, softmax(row), rtol=1e-12, atol=1e-15)
    # The tiles cover the keys in order, block by block, the last one holding what is left.
    assert [list(step.keys) for step in trace.steps] == [
        list(range(start, min(start + block, row.size))) for start in range(0, row.size, block)
    ]
    _assert_running_statistics(trace, row, values)


def _assert_running_statistics(trace: OnlineRowTrace, row: np.ndarray, values: np.ndarray) -> None:
    """After each tile: m is the largest score seen, ℓ and the output sum exp(s − m) over the keys seen."""
    for number, step in enumerate(trace.steps):
        seen = row[: step.keys.stop].tolist()
        assert step.max_after == max(seen)
        assert step.max_before == (trace.steps[number - 1].max_after if number else -math.inf)
        assert step.rescale <= 1.0
        if step.max_before == step.max_after:
            assert step.rescale == 1.0
        else:
            assert step.rescale == math.exp(step.max_before - step.max_after)
        exps = [math.exp(s - step.max_after) for s in seen]
        assert step.sum_after == pytest.approx(sum(exps), rel=1e-13)
        expected = [sum(e * v[c] for e, v in zip(exps, values.tolist(), strict=False)) for c in range(values.shape[1])]
        np.testing.assert_allclose(step.output_after, expected, rtol=0, atol=1e-13 * _size(values) * len(seen))
        np.testing.assert_allclose(step.exps, exps[step.keys.start :], rtol=1e-15)
    assert trace.max_score == float(np.max(row))
    assert trace.exp_sum == pytest.approx(sum(math.exp(s - float(np.max(row))) for s in row.tolist()), rel=1e-13)
    assert trace.steps[0].rescale == 0.0 and trace.steps[0].sum_before == 0.0


def test_a_tile_that_raises_the_maximum_rescales_what_came_before() -> None:
    trace = online_softmax_row([1.0, 0.0, 3.0, 2.0, 5.0, 4.0], np.eye(6), block_size=2)
    assert [step.max_after for step in trace.steps] == [1.0, 3.0, 5.0]
    assert [step.rescale for step in trace.steps] == [0.0, math.exp(-2.0), math.exp(-2.0)]
    # ℓ after the second tile: (e⁰ + e⁻¹)·e⁻² + e⁰ + e⁻¹, over the keys 1, 0, 3, 2 seen so far.
    assert trace.steps[1].sum_after == pytest.approx((1 + math.exp(-1)) * math.exp(-2) + 1 + math.exp(-1), rel=1e-15)
    np.testing.assert_allclose(trace.output, softmax([1.0, 0.0, 3.0, 2.0, 5.0, 4.0]), rtol=1e-14)
    falling = online_softmax_row([5.0, 4.0, 3.0], [[1.0], [2.0], [3.0]], block_size=1)
    assert [step.rescale for step in falling.steps] == [0.0, 1.0, 1.0]  # the maximum never rises again


def test_huge_scores_overflow_a_naive_exp_but_not_the_online_softmax() -> None:
    rng = np.random.default_rng(7)
    row = rng.normal(size=37) * 1e4
    values = rng.normal(size=(37, 3))
    with np.errstate(over="ignore", invalid="ignore"):
        naive = np.exp(row) / np.sum(np.exp(row))
    assert not np.all(np.isfinite(naive))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for block in (1, 5, 37, 100):
            trace = online_softmax_row(row, values, block_size=block)
            np.testing.assert_allclose(trace.output, reference_weighted_sum(row.tolist(), values.tolist()),
                                       rtol=0, atol=1e-12)
            assert all(0.0 <= step.rescale <= 1.0 for step in trace.steps)


def test_masked_keys_weigh_nothing_even_in_a_first_tile_of_only_masked_keys() -> None:
    row = [-math.inf, -math.inf, 2.0, -math.inf, 1.0]
    values = [[9.0], [9.0], [1.0], [9.0], [3.0]]
    trace = online_softmax_row(row, values, block_size=2)
    first = trace.steps[0]
    assert (first.max_after, first.rescale, first.sum_after) == (-math.inf, 1.0, 0.0)
    assert np.array_equal(first.exps, [0.0, 0.0])
    np.testing.assert_allclose(trace.output, reference_weighted_sum(row, values), rtol=1e-15)
    assert trace.weights[0] == 0.0 and trace.weights[3] == 0.0


def test_one_key() -> None:
    trace = online_softmax_row([3.5], [[2.0, -1.0]], block_size=4)
    assert len(trace.steps) == 1 and trace.exp_sum == 1.0
    assert np.array_equal(trace.output, [2.0, -1.0])


# -- FlashAttention against the plain formula --------------------------------------------------


@FAST
@given(qkv(), st.integers(1, 14), st.none() | st.integers(1, 14), st.booleans(), st.booleans())
def test_flash_attention_equals_the_plain_formula(
    inputs: tuple[np.ndarray, np.ndarray, np.ndarray], block: int, query_block: int | None, scaled: bool,
    causal: bool,
) -> None:
    q, k, v = inputs
    trace = flash_attention(q, k, v, block_size=block, query_block_size=query_block, scaled=scaled, causal=causal)
    expected = reference_attention(q.tolist(), k.tolist(), v.tolist(), scaled, causal)
    np.testing.assert_allclose(trace.output, expected, rtol=0, atol=1e-12 * _size(v) * k.shape[0])
    assert trace.output.shape == (q.shape[0], v.shape[1])
    _assert_tiles(trace, scaled, causal)


@pytest.mark.parametrize(
    ("n", "n_keys", "block", "query_block"),
    [(1, 1, 1, None), (1, 1, 8, None), (7, 7, 3, None), (7, 7, 1, None), (7, 7, 7, None), (7, 7, 50, None),
     (10, 10, 4, 3), (10, 10, 3, 4), (5, 9, 2, 5), (9, 5, 4, 2), (16, 16, 4, 4), (33, 33, 8, 16)],
)
@pytest.mark.parametrize("causal", [False, True])
def test_flash_attention_at_awkward_tile_sizes(n: int, n_keys: int, block: int, query_block: int | None,
                                               causal: bool) -> None:
    rng = np.random.default_rng(n * 100 + n_keys * 10 + block)
    q, k, v = rng.normal(size=(n, 3)), rng.normal(size=(n_keys, 3)), rng.normal(size=(n_keys, 2))
    trace = flash_attention(q, k, v, block_size=block, query_block_size=query_block, causal=causal)
    np.testing.assert_allclose(trace.output, reference_attention(q.tolist(), k.tolist(), v.tolist(), True, causal),
                               rtol=0, atol=1e-12 * _size(v))
    _assert_tiles(trace, True, causal)


def test_scores_of_ten_thousand_overflow_a_naive_exp_but_not_flash_attention() -> None:
    rng = np.random.default_rng(3)
    q, k, v = rng.normal(size=(9, 4)) * 100, rng.normal(size=(11, 4)) * 100, rng.normal(size=(11, 2))
    scores = q @ k.T / 2.0
    assert np.max(np.abs(scores)) > 1e4
    with np.errstate(over="ignore", invalid="ignore"):
        naive = (np.exp(scores) / np.sum(np.exp(scores), axis=1, keepdims=True)) @ v
    assert not np.all(np.isfinite(naive))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for block, query_block in ((1, 1), (3, 2), (4, 9), (11, 5), (20, 20)):
            for causal in (False, True):
                trace = flash_attention(q, k, v, block_size=block, query_block_size=query_block, causal=causal)
                expected = reference_attention(q.tolist(), k.tolist(), v.tolist(), True, causal)
                np.testing.assert_allclose(trace.output, expected, rtol=0, atol=1e-12)


def test_scores_further_apart_than_float64_holds() -> None:
    # 1e308 − (−1e308) overflows to inf: the low key's weight is exp(−inf) = 0, with no warning.
    q, k, v = [[1e154]], [[-1e154], [1e154], [0.5]], [[1.0], [2.0], [3.0]]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for block in (1, 2, 3):
            trace = flash_attention(q, k, v, block_size=block)
            assert np.array_equal(trace.output, [[2.0]])
        row = online_softmax_row([-1e308, 1e308, 0.0], v, block_size=1)
        assert np.array_equal(row.output, [2.0]) and row.steps[1].rescale == 0.0


def test_flash_attention_of_one_token_is_its_value() -> None:
    trace = flash_attention([[0.3, -2.0]], [[1.5, 4.0]], [[7.0, -8.0, 9.0]], block_size=1)
    assert np.array_equal(trace.output, [[7.0, -8.0, 9.0]])
    assert len(trace.tiles) == 1 and trace.exp_sum[0] == 1.0 and trace.grid_shape == (1, 1)


def _seen_so_far(trace: FlashTrace, scaled: bool, causal: bool) -> np.ndarray:
    """The full matrix of scaled scores, -inf where masked: the test's own, for checking tiles."""
    n, n_keys = trace.queries.shape[0], trace.keys.shape[0]
    divisor = math.sqrt(trace.d_k) if scaled else 1.0
    full = np.array(reference_scores(trace.queries.tolist(), trace.keys.tolist())) / divisor
    if causal:
        full[np.arange(n_keys)[None, :] > np.arange(n)[:, None]] = -np.inf
    return full


def reference_scores(q: list[list[float]], k: list[list[float]]) -> list[list[float]]:
    return [[sum(a * b for a, b in zip(query, key, strict=True)) for key in k] for query in q]


def _assert_tiles(trace: FlashTrace, scaled: bool, causal: bool) -> None:
    """Every tile's m, ℓ and O against the keys its queries have seen so far (key blocks in order)."""
    full = _seen_so_far(trace, scaled, causal)
    n, n_keys = full.shape
    t_r, t_c = trace.grid_shape
    assert (t_r, t_c) == (math.ceil(n / trace.query_block_size), math.ceil(n_keys / trace.block_size))
    # Visited: every tile holding a score the mask leaves, key blocks in the outer loop.
    expected_order = [
        (i, j) for j in range(t_c) for i in range(t_r)
        if np.any(np.isfinite(full[i * trace.query_block_size : (i + 1) * trace.query_block_size,
                                   j * trace.block_size : (j + 1) * trace.block_size]))
    ]
    assert [(tile.block_row, tile.block_column) for tile in trace.tiles] == expected_order
    for tile in trace.tiles:
        rows, columns = tile.query_block, tile.key_block
        first_row, first_key = tile.block_row * trace.query_block_size, tile.block_column * trace.block_size
        assert rows == range(first_row, min(first_row + trace.query_block_size, n))
        assert columns == range(first_key, min(first_key + trace.block_size, n_keys))
        block = full[rows.start : rows.stop, columns.start : columns.stop]
        atol = 1e-12 * _size(block[np.isfinite(block)])
        np.testing.assert_allclose(tile.scores, block, rtol=1e-12, atol=atol)
        seen = full[rows.start : rows.stop, : columns.stop]
        m = np.max(seen, axis=1)
        np.testing.assert_allclose(tile.max_after, m, rtol=1e-12, atol=1e-12)
        assert np.all(tile.rescale <= 1.0) and np.all(tile.tile_rescale <= 1.0)
        assert np.all(np.maximum(tile.rescale, tile.tile_rescale) == 1.0)  # one of the two maxima is the new one
        assert np.array_equal(tile.rescale, np.exp(tile.max_before - tile.max_after))
        with np.errstate(invalid="ignore"):
            exps = np.exp(seen - m[:, None])
        np.testing.assert_allclose(tile.sum_after, np.sum(exps, axis=1), rtol=1e-12)
        partial = (exps / np.sum(exps, axis=1, keepdims=True)) @ trace.values[: columns.stop]
        np.testing.assert_allclose(tile.output_after, partial, rtol=0, atol=1e-12 * _size(trace.values) * n_keys)
    np.testing.assert_allclose(trace.max_score, np.max(full, axis=1), rtol=1e-12, atol=1e-12)
    with np.errstate(invalid="ignore"):
        final = np.sum(np.exp(full - np.max(full, axis=1, keepdims=True)), axis=1)
    np.testing.assert_allclose(trace.exp_sum, final, rtol=1e-12)


def test_each_row_of_flash_attention_is_the_online_softmax_of_that_row() -> None:
    rng = np.random.default_rng(11)
    q, k, v = rng.normal(size=(7, 3)) * 3, rng.normal(size=(10, 3)) * 3, rng.normal(size=(10, 2))
    trace = flash_attention(q, k, v, block_size=4, query_block_size=3)
    for r in range(7):
        row = online_softmax_row(q[r] @ k.T / math.sqrt(3), v, block_size=4)
        np.testing.assert_allclose(trace.output[r], row.output, rtol=0, atol=1e-13)
        tiles = [tile for tile in trace.tiles if r in tile.query_block]
        assert len(tiles) == len(row.steps) == 3
        for tile, step in zip(tiles, row.steps, strict=True):
            at = r - tile.query_block.start
            assert tile.max_after[at] == pytest.approx(step.max_after, rel=1e-14)
            assert tile.sum_after[at] == pytest.approx(step.sum_after, rel=1e-13)
            # Algorithm 1 keeps O divided by ℓ; the online softmax keeps the sum undivided.
            np.testing.assert_allclose(tile.output_after[at] * tile.sum_after[at], step.output_after, rtol=1e-12)


# -- memory traffic ------------------------------------------------------------------------------


@FAST
@given(qkv(max_n=16), st.integers(1, 18), st.integers(1, 18))
def test_traffic_of_a_run_against_the_closed_form(
    inputs: tuple[np.ndarray, np.ndarray, np.ndarray], block: int, query_block: int
) -> None:
    q, k, v = inputs
    (n, d_k), (n_keys, d_v) = q.shape, v.shape
    trace = flash_attention(q, k, v, block_size=block, query_block_size=query_block)
    passes = math.ceil(n_keys / block)  # T_c: each pass over the key blocks reads all of Q, O, ℓ and m
    assert trace.reads == n_keys * (d_k + d_v) + passes * n * (d_k + d_v + 2)
    assert trace.writes == n * (d_v + 2) * (1 + passes)
    causal = flash_attention(q, k, v, block_size=block, query_block_size=query_block, causal=True)
    # A tile is loaded only if the mask leaves it a score: count those tiles by brute force.
    visited = [(i, j) for i in range(math.ceil(n / query_block)) for j in range(passes)
               if any(c <= r for r in range(i * query_block, min((i + 1) * query_block, n))
                      for c in range(j * block, min((j + 1) * block, n_keys)))]
    rows_read = sum(min(query_block, n - i * query_block) for i, _ in visited)
    columns = {j for _, j in visited}
    keys_read = sum(min(block, n_keys - j * block) for j in columns)
    assert causal.reads == keys_read * (d_k + d_v) + rows_read * (d_k + d_v + 2)
    assert causal.writes == n * (d_v + 2) + rows_read * (d_v + 2)
    assert len(causal.tiles) == len(visited)


@pytest.mark.parametrize(("n", "d", "block", "query_block"), [(1, 1, 1, None), (8, 2, 4, None), (13, 5, 4, 3),
                                                              (64, 16, 7, 16), (100, 8, 200, None)])
@pytest.mark.parametrize("causal", [False, True])
def test_memory_traffic_counts_what_a_run_counts(n: int, d: int, block: int, query_block: int | None,
                                                 causal: bool) -> None:
    rng = np.random.default_rng(n)
    q, k, v = (rng.normal(size=(n, d)) for _ in range(3))
    trace = flash_attention(q, k, v, block_size=block, query_block_size=query_block, causal=causal)
    traffic = memory_traffic(n, d, block_size=block, query_block_size=query_block, causal=causal)
    assert (traffic.flash_reads, traffic.flash_writes) == (trace.reads, trace.writes)
    # Algorithm 0: Q, K read, S written (line 1); S read, P written (line 2); P, V read, O written (line 3).
    assert traffic.standard_reads == 3 * n * d + 2 * n * n
    assert traffic.standard_writes == 2 * n * n + n * d
    assert traffic.standard_accesses == 4 * traffic.standard_formula == 4 * (n * d + n * n)
    assert traffic.sram == 4 * d * block
    assert traffic.flash_formula == n * n * d * d / (4 * d * block)


def test_block_sizes_from_the_sram_follow_algorithm_1_line_1() -> None:
    for sram, d in ((51200, 64), (51200, 128), (1000, 3), (7, 2), (16, 4)):
        traffic = memory_traffic(256, d, sram=sram)
        assert traffic.block_size == math.ceil(sram / (4 * d))
        assert traffic.query_block_size == min(math.ceil(sram / (4 * d)), d)
        assert traffic.sram == sram
        assert traffic.flash_formula == 256**2 * d**2 / sram


def test_flash_traffic_grows_like_n_squared_d_squared_over_m() -> None:
    # Theorem 2: Θ(n²·d²/M) for d ≤ M ≤ n·d. Each of the T_c ≈ 4·n·d/M passes reads Q and O and
    # writes O back (3·n·d numbers): about 12·n²·d²/M, plus terms of lower order.
    ratios = [
        memory_traffic(n, d, sram=sram).flash_accesses / memory_traffic(n, d, sram=sram).flash_formula
        for n in (1024, 2048, 4096, 8192, 16384) for d in (32, 64, 128) for sram in (25600, 51200, 102400)
        if d <= sram <= n * d
    ]
    assert len(ratios) == 41
    assert 12 < min(ratios) and max(ratios) < 18
    assert 12 < memory_traffic(16384, 128, sram=25600).flash_accesses / (16384**2 * 128**2 / 25600) < 12.2
    # Doubling n about quadruples the traffic: twice the passes (B_c = 256 divides n) over twice the
    # queries; the terms linear in n (K and V read once, O, ℓ, m initialised) only double.
    small, large = memory_traffic(4096, 64, sram=65536), memory_traffic(8192, 64, sram=65536)
    assert 3.8 < large.flash_accesses / small.flash_accesses < 4.0
    assert 3.9 < large.standard_accesses / small.standard_accesses < 4.0


def test_the_papers_sizes() -> None:
    traffic = a100_traffic()
    # 100 KB of fp16 numbers; B_c = ⌈51200 / 256⌉ = 200, B_r = min(200, 64); T_c = ⌈1024 / 200⌉ = 6 passes.
    assert (traffic.n, traffic.d, traffic.sram) == (1024, 64, 51200)
    assert (traffic.block_size, traffic.query_block_size) == (200, 64)
    assert traffic.flash_reads == 1024 * 128 + 6 * 1024 * 130
    assert traffic.flash_writes == 7 * 1024 * 66
    assert traffic.standard_accesses == 4 * (1024 * 64 + 1024**2)
    assert traffic.ratio == pytest.approx(4456448 / 1402880)
    rng = np.random.default_rng(0)
    q, k, v = (rng.normal(size=(1024, 64)) for _ in range(3))
    trace = flash_attention(q, k, v, block_size=200, query_block_size=64)
    assert (trace.reads, trace.writes) == (traffic.flash_reads, traffic.flash_writes)
    assert trace.grid_shape == (16, 6)
    np.testing.assert_allclose(trace.output, softmax(q @ k.T / 8.0) @ v, rtol=0, atol=1e-12)
    assert a100_traffic(sram_kb=192, bytes_per_number=4).sram == 192 * 1024 // 4


# -- frozen, read-only, the inputs untouched ----------------------------------------------------


def test_inputs_are_not_mutated_and_the_traces_are_frozen() -> None:
    rng = np.random.default_rng(5)
    q, k, v, row = rng.normal(size=(5, 2)), rng.normal(size=(6, 2)), rng.normal(size=(6, 3)), rng.normal(size=6)
    given_arrays = [q, k, v, row]
    copies = [a.copy() for a in given_arrays]
    trace = flash_attention(q, k, v, block_size=4, query_block_size=2, causal=True)
    online = online_softmax_row(row, v, block_size=4)
    for array, copy in zip(given_arrays, copies, strict=True):
        assert np.array_equal(array, copy) and array.flags.writeable
    objects = [trace, online, *trace.tiles, *online.steps, memory_traffic(5, 2, block_size=2)]
    for item in objects:
        fields = dataclasses.fields(item)  # type: ignore[arg-type]
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(item, fields[0].name, None)
        for field in fields:
            value = getattr(item, field.name)
            if isinstance(value, np.ndarray):
                assert not value.flags.writeable, field.name
                assert value.dtype == np.float64, field.name
                assert not any(np.shares_memory(value, a) for a in given_arrays), field.name


# -- errors --------------------------------------------------------------------------------------


Q = [[1.0, 0.0], [0.0, 1.0]]


@pytest.mark.parametrize(
    ("call", "field", "words"),
    [
        (lambda: flash_attention(Q, Q, Q, block_size=0), "block_size", ("at least 1", "got 0")),
        (lambda: flash_attention(Q, Q, Q, block_size=True), "block_size", ("whole number",)),
        (lambda: flash_attention(Q, Q, Q, block_size=2.0), "block_size", ("whole number",)),  # type: ignore[arg-type]
        (lambda: flash_attention(Q, Q, Q, block_size=1, query_block_size=-1), "query_block_size", ("at least 1",)),
        (lambda: flash_attention(Q, [[1.0], [2.0]], Q, block_size=1), "keys", ("2 columns",)),
        (lambda: flash_attention(Q, Q, [[1.0]], block_size=1), "values", ("2 rows",)),
        (lambda: flash_attention([[float("nan"), 0.0]], Q, Q, block_size=1), "queries", ("finite",)),
        (lambda: flash_attention([], Q, Q, block_size=1), "queries", ("non-empty",)),
        (lambda: flash_attention([[1e200, 0.0]], [[1e200, 0.0]], [[1.0]], block_size=1), "queries", ("too large",)),
        (lambda: flash_attention([[0.0, 0.0]], Q, [[1.5e308], [1.5e308]], block_size=2), "values", ("too large",)),
        (lambda: online_softmax_row([1.0, 2.0], [[1.0]], block_size=1), "values", ("2 rows",)),
        (lambda: online_softmax_row([[1.0, 2.0]], Q, block_size=1), "scores_row", ("flat",)),
        (lambda: online_softmax_row([], Q, block_size=1), "scores_row", ("non-empty",)),
        (lambda: online_softmax_row([1.0, float("nan")], Q, block_size=1), "scores_row", ("NaN",)),
        (lambda: online_softmax_row([1.0, math.inf], Q, block_size=1), "scores_row", ("+inf",)),
        (lambda: online_softmax_row([-math.inf, -math.inf], Q, block_size=1), "scores_row", ("-inf",)),
        (lambda: online_softmax_row(["a", "b"], Q, block_size=1), "scores_row", ("real numbers",)),
        (lambda: online_softmax_row([1.0, 2.0], Q, block_size=0), "block_size", ("at least 1",)),
        (lambda: online_softmax_row([1.0, 1.0], [[1.5e308], [1.5e308]], block_size=2), "values", ("too large",)),
        (lambda: memory_traffic(8, 2), "sram", ("either",)),
        (lambda: memory_traffic(8, 2, sram=100, block_size=4), "sram", ("not both",)),
        (lambda: memory_traffic(8, 2, sram=100, query_block_size=4), "query_block_size", ("line 1",)),
        (lambda: memory_traffic(0, 2, block_size=4), "n", ("at least 1",)),
        (lambda: memory_traffic(8, 0, block_size=4), "d", ("at least 1",)),
        (lambda: memory_traffic(8, 2, sram=0), "sram", ("at least 1",)),
        (lambda: a100_traffic(bytes_per_number=0), "bytes_per_number", ("at least 1",)),
    ],
)
def test_errors_name_the_argument(call: Callable[[], object], field: str, words: tuple[str, ...]) -> None:
    assert_scenario_error(call, field, *words)


# -- the walk as arrays (what the lecture's table shows) -------------------------------------------


@FAST
@given(_rows(16, 2))
def test_the_walks_arrays_against_a_plain_loop(case: tuple[np.ndarray, np.ndarray, int]) -> None:
    """tile_exps, tile_sums, maxima, rescales, sums and outputs, from Milakov & Gimelshein's recurrence in floats."""
    row, values, block = case
    trace = online_softmax_row(row, values, block_size=block)
    m, total, out = -math.inf, 0.0, [0.0, 0.0]
    exps_seen: list[float] = []
    maxima, rescales, sums, outputs, tile_sums = [], [], [], [], []
    for start in range(0, row.size, block):
        tile = row[start : start + block].tolist()
        new = max(m, *tile)
        factor = 0.0 if m == -math.inf else math.exp(m - new)
        exps = [math.exp(s - new) for s in tile]
        total = factor * total + sum(exps)
        out = [factor * o + sum(e * v[c] for e, v in zip(exps, values[start : start + block].tolist(), strict=True))
               for c, o in enumerate(out)]
        m = new
        exps_seen += exps
        maxima.append(m), rescales.append(factor), sums.append(total), outputs.append(out), tile_sums.append(sum(exps))
    assert trace.maxima.tolist() == maxima
    np.testing.assert_allclose(trace.rescales, rescales, rtol=1e-15)
    np.testing.assert_allclose(trace.tile_exps, exps_seen, rtol=1e-15)
    np.testing.assert_allclose(trace.tile_sums, tile_sums, rtol=1e-14)
    np.testing.assert_allclose(trace.sums, sums, rtol=1e-13)
    np.testing.assert_allclose(trace.outputs, outputs, rtol=0, atol=1e-12 * _size(values) * row.size)
    assert trace.outputs.shape == (len(trace.steps), 2) and not trace.outputs.flags.writeable


def test_the_walks_arrays_for_one_tile_of_one_key() -> None:
    trace = online_softmax_row([-2.0], [[4.0, 5.0, 6.0]], block_size=3)
    assert trace.tile_exps.tolist() == [1.0] and trace.maxima.tolist() == [-2.0] and trace.rescales.tolist() == [0.0]
    assert trace.sums.tolist() == [1.0] and trace.outputs.tolist() == [[4.0, 5.0, 6.0]]
