"""Multi-head latent attention (DeepSeek-V2's MLA): against plain loops, and the reasons it is built so.

The reference below is written from the paper's equations (DeepSeek-V2, arXiv 2405.04434, appendix C)
in Python floats and loops: tokens, heads and RoPE pairs one at a time, every cos and sin written
out; it calls nothing of ``attention_math``. Then the properties: the absorbed route (``W_UK`` moved
to the query) gives the same scores, and a decoder that keeps only the cache ``[c_KV | k_R]`` gives the
same output; RoPE put on the content keys could not be absorbed (the reason for the decoupled part);
the RoPE scores depend on the distance between positions only; with the RoPE part zero it is plain
multi-head attention with ``W_Q = W_DQ W_UQ``, ``W_K = W_DKV W_UK``, ``W_V = W_DKV W_UV``, scaled by
``√(d_h + d_R)``; the cache sizes of DeepSeek-V2; every error; the inputs untouched.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from scenario_errors import assert_scenario_error

from attention_math import (
    DEEPSEEK_V2,
    LatentCacheSizes,
    LatentTrace,
    latent_attention,
    latent_cache_sizes,
    latent_example,
    latent_weights,
    multi_head_attention,
    rope,
)

WEIGHTS = ("w_dq", "w_uq", "w_qr", "w_dkv", "w_uk", "w_uv", "w_kr", "w_o")
TOLERANCE = 1e-12

Matrix = list[list[float]]


@dataclasses.dataclass(frozen=True)
class Shapes:
    """One set of sizes for a test problem."""

    tokens: int
    d_model: int
    d_c_query: int
    d_c: int
    heads: int
    d_h: int
    d_rope: int
    d_out: int


SHAPES = {
    "two heads, causal": Shapes(tokens=5, d_model=6, d_c_query=4, d_c=3, heads=2, d_h=3, d_rope=4, d_out=6),
    "one head, one token": Shapes(tokens=1, d_model=3, d_c_query=2, d_c=2, heads=1, d_h=2, d_rope=2, d_out=3),
    "three heads of one": Shapes(tokens=4, d_model=2, d_c_query=3, d_c=1, heads=3, d_h=1, d_rope=2, d_out=5),
    "four heads, long": Shapes(tokens=7, d_model=5, d_c_query=6, d_c=5, heads=4, d_h=2, d_rope=6, d_out=4),
}


def problem(shapes: Shapes, seed: int) -> dict[str, Any]:
    """``X`` and the weights of ``shapes``, drawn from a seeded generator (standard normal, halved)."""
    rng = np.random.default_rng(seed)
    s = shapes
    sizes = {
        "embeddings": (s.tokens, s.d_model), "w_dq": (s.d_model, s.d_c_query), "w_uq": (s.d_c_query, s.heads * s.d_h),
        "w_qr": (s.d_c_query, s.heads * s.d_rope), "w_dkv": (s.d_model, s.d_c), "w_uk": (s.d_c, s.heads * s.d_h),
        "w_uv": (s.d_c, s.heads * s.d_h), "w_kr": (s.d_model, s.d_rope), "w_o": (s.heads * s.d_h, s.d_out),
    }
    return {name: 0.5 * rng.standard_normal(shape) for name, shape in sizes.items()}


def call(arrays: dict[str, Any], heads: int, **options: Any) -> LatentTrace:
    weights = {name: arrays[name] for name in WEIGHTS}
    return latent_attention(arrays["embeddings"], **weights, heads=heads, **options)


# -- the reference: loops over tokens, heads and pairs ------------------------------------------


def matmul(a: Matrix, b: Matrix) -> Matrix:
    return [[sum(a[r][m] * b[m][c] for m in range(len(b))) for c in range(len(b[0]))] for r in range(len(a))]


def columns(matrix: Matrix, start: int, stop: int) -> Matrix:
    return [row[start:stop] for row in matrix]


def dot(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


def turn(row: list[float], position: float, base: float) -> list[float]:
    """Pair ``(2j, 2j+1)`` turned by ``position·θ_j``, ``θ_j = base^(−2j/d)``."""
    d = len(row)
    out = list(row)
    for j in range(d // 2):
        angle = position * base ** (-2 * j / d)
        a, b = row[2 * j], row[2 * j + 1]
        out[2 * j] = a * math.cos(angle) - b * math.sin(angle)
        out[2 * j + 1] = a * math.sin(angle) + b * math.cos(angle)
    return out


def reference_head(
    c_q: Matrix, c_kv: Matrix, k_r: Matrix, w: dict[str, Matrix], i: int, d_h: int, d_r: int,
    positions: list[float], base: float, causal: bool,
) -> dict[str, Any]:
    """Head ``i``: its queries, keys, values, the two parts of the scores, the weights and ``o_i``."""
    q_c = matmul(c_q, columns(w["w_uq"], i * d_h, (i + 1) * d_h))
    q_r_raw = matmul(c_q, columns(w["w_qr"], i * d_r, (i + 1) * d_r))
    q_r = [turn(row, positions[t], base) for t, row in enumerate(q_r_raw)]
    k_c = matmul(c_kv, columns(w["w_uk"], i * d_h, (i + 1) * d_h))
    v = matmul(c_kv, columns(w["w_uv"], i * d_h, (i + 1) * d_h))
    n = len(c_q)
    content = [[dot(q_c[t], k_c[j]) for j in range(n)] for t in range(n)]
    turned = [[dot(q_r[t], k_r[j]) for j in range(n)] for t in range(n)]
    weights = []
    for t in range(n):
        seen = [(content[t][j] + turned[t][j]) / math.sqrt(d_h + d_r) for j in range(n) if not (causal and j > t)]
        top = max(seen)
        exps = [math.exp(s - top) for s in seen]
        weights.append([e / sum(exps) for e in exps] + [0.0] * (n - len(seen)))
    context = [[sum(weights[t][j] * v[j][c] for j in range(n)) for c in range(d_h)] for t in range(n)]
    return {"content_queries": q_c, "rope_queries": q_r, "content_keys": k_c, "values": v,
            "content_scores": content, "rope_scores": turned, "weights": weights, "context": context}


def reference(arrays: dict[str, Any], heads: int, positions: list[float], base: float, causal: bool) -> dict[str, Any]:
    """Every step of MLA in Python floats; per-head results stacked head by head."""
    x = arrays["embeddings"].tolist()
    w = {name: arrays[name].tolist() for name in WEIGHTS}
    d_h, d_r = len(w["w_uq"][0]) // heads, len(w["w_kr"][0])
    c_q, c_kv = matmul(x, w["w_dq"]), matmul(x, w["w_dkv"])
    k_r = [turn(row, positions[t], base) for t, row in enumerate(matmul(x, w["w_kr"]))]
    per_head = [reference_head(c_q, c_kv, k_r, w, i, d_h, d_r, positions, base, causal) for i in range(heads)]
    concat = [[value for head in per_head for value in head["context"][t]] for t in range(len(x))]
    found: dict[str, Any] = {name: [head[name] for head in per_head] for name in per_head[0]}
    found |= {"latent_queries": c_q, "latent": c_kv, "rope_keys": k_r, "concat": concat,
              "output": matmul(concat, w["w_o"]), "cache": [a + b for a, b in zip(c_kv, k_r, strict=True)]}
    return found


CASES = [
    ("two heads, causal", 0, None, 10000.0, True),
    ("one head, one token", 1, None, 10000.0, True),
    ("one head, one token", 2, [5.0], 10000.0, False),
    ("three heads of one", 3, [3.0, 0.0, 7.5, -2.0], 100.0, False),
    ("four heads, long", 4, None, 10000.0, True),
    ("four heads, long", 5, [10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0], 2.5, False),
]


@pytest.mark.parametrize(("name", "seed", "positions", "base", "causal"), CASES)
def test_latent_attention_equals_a_plain_loop(
    name: str, seed: int, positions: list[float] | None, base: float, causal: bool
) -> None:
    shapes = SHAPES[name]
    arrays = problem(shapes, seed)
    trace = call(arrays, shapes.heads, base=base, causal=causal, positions=positions)
    spots = [float(t) for t in range(shapes.tokens)] if positions is None else positions
    expected = reference(arrays, shapes.heads, spots, base, causal)
    for field, value in expected.items():
        got = getattr(trace, field)
        assert got.shape == np.shape(value), field
        np.testing.assert_allclose(got, value, rtol=0, atol=TOLERANCE, err_msg=field)
    np.testing.assert_allclose(trace.scores, trace.content_scores + trace.rope_scores, rtol=0, atol=0)
    seen = np.broadcast_to(~np.triu(np.ones((shapes.tokens,) * 2, dtype=bool), k=1) | (not causal), trace.scores.shape)
    assert np.array_equal(trace.scaled_scores[seen], (trace.scores / math.sqrt(shapes.d_h + shapes.d_rope))[seen])
    if causal:
        assert np.all(trace.scaled_scores[~seen] == -np.inf) and np.all(trace.weights[~seen] == 0.0)
    assert (trace.d_c, trace.d_c_query, trace.d_h, trace.d_rope, trace.n_heads, trace.n_tokens) == (
        shapes.d_c, shapes.d_c_query, shapes.d_h, shapes.d_rope, shapes.heads, shapes.tokens)
    assert trace.cache.shape == (shapes.tokens, shapes.d_c + shapes.d_rope) == (shapes.tokens, trace.cache_width)
    assert np.array_equal(trace.positions, spots) and trace.causal is causal and trace.base == base
    np.testing.assert_allclose(trace.weights.sum(axis=-1), 1.0, rtol=0, atol=1e-15)


def test_the_largest_disagreement_with_the_loop_is_at_rounding_level() -> None:
    worst = 0.0
    for name, seed, positions, base, causal in CASES:
        shapes = SHAPES[name]
        arrays = problem(shapes, seed)
        trace = call(arrays, shapes.heads, base=base, causal=causal, positions=positions)
        spots = [float(t) for t in range(shapes.tokens)] if positions is None else positions
        for field, value in reference(arrays, shapes.heads, spots, base, causal).items():
            worst = max(worst, float(np.max(np.abs(getattr(trace, field) - np.array(value)))))
    assert worst < 1e-14, worst


# -- absorption: the keys are never needed, the cache suffices -----------------------------------


@pytest.mark.parametrize(("name", "seed"), [(name, seed) for name, seed, *_ in CASES])
def test_absorbed_scores_equal_the_plain_ones(name: str, seed: int) -> None:
    shapes = SHAPES[name]
    arrays = problem(shapes, seed)
    trace = call(arrays, shapes.heads)
    d_h, d_c = shapes.d_h, shapes.d_c
    for i in range(shapes.heads):
        w_uk_i = arrays["w_uk"][:, i * d_h:(i + 1) * d_h]
        np.testing.assert_allclose(trace.absorbed_queries[i], trace.content_queries[i] @ w_uk_i.T, rtol=0, atol=1e-15)
        w_uv_i = arrays["w_uv"][:, i * d_h:(i + 1) * d_h]
        np.testing.assert_allclose(trace.latent_context[i] @ w_uv_i, trace.context[i], rtol=0, atol=TOLERANCE)
    np.testing.assert_allclose(trace.absorbed_content_scores, trace.content_scores, rtol=0, atol=TOLERANCE)
    np.testing.assert_allclose(trace.absorbed_scores, trace.scores, rtol=0, atol=TOLERANCE)
    assert np.array_equal(trace.cache[:, :d_c], trace.latent) and np.array_equal(trace.cache[:, d_c:], trace.rope_keys)
    assert trace.absorbed_queries.shape == (shapes.heads, shapes.tokens, d_c)


def decode_from_cache(arrays: dict[str, Any], cache: np.ndarray, t: int, heads: int, base: float) -> np.ndarray:
    """Token ``t``'s output from its own embedding and the cache of tokens ``0..t`` alone: no ``X`` of the
    other tokens, no key or value made; ``W_UK`` absorbed into the query and ``W_UV`` into ``W_O``."""
    x_t = arrays["embeddings"][t:t + 1]
    d_c = arrays["w_dkv"].shape[1]
    d_h, d_r = arrays["w_uq"].shape[1] // heads, arrays["w_kr"].shape[1]
    latent, rope_keys = cache[: t + 1, :d_c], cache[: t + 1, d_c:]
    c_q = x_t @ arrays["w_dq"]
    output = np.zeros(arrays["w_o"].shape[1])
    for i in range(heads):
        block = slice(i * d_h, (i + 1) * d_h)
        absorbed = c_q @ arrays["w_uq"][:, block] @ arrays["w_uk"][:, block].T  # 1 × d_c
        q_r = rope(c_q @ arrays["w_qr"][:, i * d_r:(i + 1) * d_r], [float(t)], base=base)
        scores = (absorbed @ latent.T + q_r @ rope_keys.T)[0] / math.sqrt(d_h + d_r)
        weights = np.exp(scores - scores.max())
        weights /= weights.sum()
        output += (weights @ latent) @ (arrays["w_uv"][:, block] @ arrays["w_o"][block, :])
    return output


@pytest.mark.parametrize(
    ("name", "seed"), [("two heads, causal", 0), ("four heads, long", 4), ("one head, one token", 1)]
)
def test_a_decoder_that_keeps_only_the_cache_gets_the_output(name: str, seed: int) -> None:
    shapes = SHAPES[name]
    arrays = problem(shapes, seed)
    trace = call(arrays, shapes.heads)
    for t in range(shapes.tokens):
        np.testing.assert_allclose(
            decode_from_cache(arrays, np.array(trace.cache), t, shapes.heads, trace.base), trace.output[t],
            rtol=0, atol=TOLERANCE, err_msg=f"token {t}",
        )
        # The cache of the first t + 1 tokens does not change when later tokens come.
        prefix = call({**arrays, "embeddings": arrays["embeddings"][: t + 1]}, shapes.heads)
        np.testing.assert_allclose(prefix.cache, trace.cache[: t + 1], rtol=0, atol=1e-15)
        np.testing.assert_allclose(prefix.output[t], trace.output[t], rtol=0, atol=TOLERANCE)


# -- why RoPE is decoupled ------------------------------------------------------------------------


def residual_over_latent(scores_row: np.ndarray, latent: np.ndarray) -> float:
    """How far ``scores_row[j]`` is from ``a·c_KV[j]`` for the best single vector ``a`` (least squares)."""
    a, *_ = np.linalg.lstsq(latent, scores_row, rcond=None)
    return float(np.max(np.abs(latent @ a - scores_row)))


def test_rope_on_the_content_keys_could_not_be_absorbed() -> None:
    # Six tokens, a latent of two numbers: each query's six content scores must be a·c_KV[j] for one a.
    shapes = Shapes(tokens=6, d_model=4, d_c_query=3, d_c=2, heads=1, d_h=2, d_rope=2, d_out=4)
    arrays = problem(shapes, 7)
    trace = call(arrays, 1)
    q_c, k_c, latent = trace.content_queries[0], trace.content_keys[0], trace.latent
    positions = np.arange(6.0)
    coupled = rope(q_c, positions) @ rope(k_c, positions).T  # RoPE on q_C and k_C, as in plain RoPE attention
    for t in range(6):
        # Without a turn on k_C: a = q_C W_UKᵀ, one vector per query, works for every key.
        assert residual_over_latent(trace.content_scores[0, t], latent) < 1e-13
        np.testing.assert_allclose(trace.absorbed_queries[0, t] @ latent.T, trace.content_scores[0, t], atol=1e-14)
        # The absorbed query turned as the query is (R_t q_C W_UKᵀ) misses the turned keys' scores...
        absorbed_turned = rope(q_c[t:t + 1], [float(t)]) @ arrays["w_uk"].T
        if t:
            assert np.max(np.abs(absorbed_turned @ latent.T - coupled[t])) > 1e-2
    # ... and no single vector per query does better: key j's turn sits between W_UK and the query.
    assert min(residual_over_latent(coupled[t], latent) for t in range(6)) > 1e-2
    # The decoupled part needs no absorbing: k_R is in the cache as it is.
    np.testing.assert_allclose(trace.rope_scores[0], trace.rope_queries[0] @ trace.cache[:, 2:].T, rtol=0, atol=0)


# -- relative positions ---------------------------------------------------------------------------


@pytest.mark.parametrize("shift", [13.0, 2.5, -4.0, 1000.0])
def test_shifting_every_position_leaves_the_scores(shift: float) -> None:
    shapes = SHAPES["four heads, long"]
    arrays = problem(shapes, 8)
    start = call(arrays, shapes.heads)
    moved = call(arrays, shapes.heads, positions=np.arange(7.0) + shift)
    # An angle of m·θ carries about m·eps of rounding into cos and sin.
    atol = 1e-13 * (1 + abs(shift))
    np.testing.assert_allclose(moved.rope_scores, start.rope_scores, rtol=0, atol=atol)
    assert np.array_equal(moved.content_scores, start.content_scores)
    np.testing.assert_allclose(moved.weights, start.weights, rtol=0, atol=atol)
    np.testing.assert_allclose(moved.output, start.output, rtol=0, atol=atol)
    assert np.array_equal(moved.cache[:, : shapes.d_c], start.cache[:, : shapes.d_c])
    assert np.max(np.abs(moved.rope_keys - start.rope_keys)) > 1e-3  # the keys themselves did turn
    # Position 0 turns nothing.
    assert np.array_equal(start.rope_keys[0], start.unrotated_rope_keys[0])
    assert np.array_equal(start.rope_queries[:, 0], start.unrotated_rope_queries[:, 0])


# -- with no RoPE part: multi-head attention -------------------------------------------------------


@pytest.mark.parametrize(("name", "seed", "causal"), [("two heads, causal", 9, True), ("three heads of one", 10, False),
                                                      ("one head, one token", 11, True)])
def test_with_the_rope_part_zero_it_is_multi_head_attention(name: str, seed: int, causal: bool) -> None:
    shapes = SHAPES[name]
    arrays = problem(shapes, seed)
    arrays["w_qr"] = np.zeros_like(arrays["w_qr"])
    arrays["w_kr"] = np.zeros_like(arrays["w_kr"])
    trace = call(arrays, shapes.heads, causal=causal)
    assert np.array_equal(trace.rope_scores, np.zeros_like(trace.rope_scores))
    d_h = shapes.d_h
    blocks = [slice(i * d_h, (i + 1) * d_h) for i in range(shapes.heads)]
    # multi_head_attention divides by √d_h; MLA by √(d_h + d_R): the queries carry the difference.
    factor = math.sqrt(d_h / (d_h + shapes.d_rope))
    plain = multi_head_attention(
        arrays["embeddings"],
        [factor * arrays["w_dq"] @ arrays["w_uq"][:, b] for b in blocks],
        [arrays["w_dkv"] @ arrays["w_uk"][:, b] for b in blocks],
        [arrays["w_dkv"] @ arrays["w_uv"][:, b] for b in blocks],
        arrays["w_o"],
        causal=causal,
    )
    for i, head in enumerate(plain.heads):
        np.testing.assert_allclose(trace.weights[i], head.weights, rtol=0, atol=TOLERANCE)
        np.testing.assert_allclose(trace.scores[i] * factor, head.scores, rtol=0, atol=TOLERANCE)
        np.testing.assert_allclose(trace.context[i], head.context, rtol=0, atol=TOLERANCE)
    np.testing.assert_allclose(trace.output, plain.output, rtol=0, atol=TOLERANCE)


# -- the cache per token and layer -----------------------------------------------------------------


def test_deepseek_v2_keeps_576_numbers_a_token_against_32768() -> None:
    assert (DEEPSEEK_V2.n_heads, DEEPSEEK_V2.d_head, DEEPSEEK_V2.d_c, DEEPSEEK_V2.d_rope) == (128, 128, 512, 64)
    assert (DEEPSEEK_V2.d_c_query, DEEPSEEK_V2.layers, DEEPSEEK_V2.d_model) == (1536, 60, 5120)
    assert DEEPSEEK_V2.d_c == 4 * DEEPSEEK_V2.d_head and 2 * DEEPSEEK_V2.d_rope == DEEPSEEK_V2.d_head
    assert "2405.04434" in DEEPSEEK_V2.source
    sizes = DEEPSEEK_V2.cache_sizes(n_kv_heads=8)
    assert (sizes.multi_head, sizes.grouped_query, sizes.multi_query, sizes.latent) == (32768, 2048, 256, 576)
    assert sizes.equivalent_groups == 2.25  # "equal to GQA with only 2.25 groups" (section 2.1.4)
    assert sizes.saving == 32768 / 576
    assert DEEPSEEK_V2.cache_sizes(128).grouped_query == 32768 and DEEPSEEK_V2.cache_sizes(1).grouped_query == 256


@pytest.mark.parametrize(("h", "d", "g", "c", "r"), [(8, 64, 2, 32, 16), (32, 128, 8, 512, 64), (1, 1, 1, 1, 1),
                                                     (71, 64, 1, 256, 32)])
def test_cache_sizes_follow_the_formulas(h: int, d: int, g: int, c: int, r: int) -> None:
    sizes = latent_cache_sizes(h, d, g, c, r)
    assert isinstance(sizes, LatentCacheSizes)
    assert (sizes.n_heads, sizes.d_head, sizes.n_kv_heads, sizes.d_c, sizes.d_rope) == (h, d, g, c, r)
    assert sizes.multi_head == 2 * h * d and sizes.grouped_query == 2 * g * d and sizes.multi_query == 2 * d
    assert sizes.latent == c + r and sizes.equivalent_groups == (c + r) / (2 * d)
    with pytest.raises(dataclasses.FrozenInstanceError):
        sizes.latent = 0  # type: ignore[misc]


def test_a_trace_knows_its_cache_width() -> None:
    shapes = SHAPES["two heads, causal"]
    trace = call(problem(shapes, 0), shapes.heads)
    sizes = latent_cache_sizes(shapes.heads, shapes.d_h, 1, shapes.d_c, shapes.d_rope)
    assert trace.cache_width == sizes.latent == trace.cache.shape[1]
    assert trace.multi_head_cache_width == sizes.multi_head
    assert trace.divisor == math.sqrt(shapes.d_h + shapes.d_rope)


# -- the example for the board --------------------------------------------------------------------


def test_the_example_is_small_one_decimal_and_repeatable() -> None:
    example = latent_example()
    again = latent_example(seed=0)
    other = latent_example(seed=1)
    shapes = {"embeddings": (4, 4), "w_dq": (4, 3), "w_uq": (3, 4), "w_qr": (3, 4), "w_dkv": (4, 2),
              "w_uk": (2, 4), "w_uv": (2, 4), "w_kr": (4, 2), "w_o": (4, 4)}
    for name, shape in shapes.items():
        matrix = getattr(example, name)
        assert matrix.shape == shape and not matrix.flags.writeable, name
        assert np.array_equal(matrix, getattr(again, name)), name
        assert np.array_equal(np.round(matrix * 10) / 10, matrix) and np.all(np.abs(matrix) <= 1.0), name
        assert not np.any(np.signbit(matrix) & (matrix == 0)), name  # no −0.0 to show
    assert not np.array_equal(example.embeddings, other.embeddings)
    assert example.heads == 2 and set(example.keywords()) == {*WEIGHTS, "heads"}
    trace = example.trace()
    assert trace.cache.shape == (4, 4) and trace.weights.shape == (2, 4, 4) and trace.output.shape == (4, 4)
    bigger = latent_example(seed=3, tokens=6, d_model=5, d_c=3, d_c_query=4, heads=3, d_h=2, d_rope=4)
    assert bigger.trace(causal=False, base=100.0).cache.shape == (6, 7)


# -- errors -------------------------------------------------------------------------------------


BASE = problem(SHAPES["two heads, causal"], 0)  # T 5, d_model 6, d_c' 4, d_c 3, 2 heads, d_h 3, d_R 4


def with_changed(**changes: Any) -> Callable[[], object]:
    arrays = {**BASE, **{k: v for k, v in changes.items() if k in BASE}}
    options = {k: v for k, v in changes.items() if k not in BASE}
    heads = options.pop("heads", 2)
    return lambda: call(arrays, heads, **options)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"embeddings": [1.0, 2.0]}, "embeddings: expected a non-empty 2-d matrix"),
        ({"embeddings": np.zeros((0, 6))}, "embeddings: expected a non-empty 2-d matrix"),
        ({"w_dq": np.ones((5, 4))}, "w_dq: expected 6 rows (d_model, the columns of embeddings), got 5"),
        ({"w_dkv": np.ones((7, 3))}, "w_dkv: expected 6 rows (d_model, the columns of embeddings), got 7"),
        ({"w_kr": np.ones((5, 4))}, "w_kr: expected 6 rows (d_model, the columns of embeddings), got 5"),
        ({"w_kr": np.ones((6, 3))}, "w_kr: expected an even number of columns (d_R; dimensions turn in pairs), got 3"),
        ({"w_uq": np.ones((4, 5))}, "w_uq: expected a number of columns the 2 heads divide (heads · d_h), got 5"),
        ({"w_uq": np.ones((3, 6))},
         "w_uq: expected 4 rows (d_c', the columns of w_dq)"
         " and 6 columns (heads · d_h), got 3 × 6"),
        ({"w_qr": np.ones((4, 6))},
         "w_qr: expected 4 rows (d_c', the columns of w_dq)"
         " and 8 columns (heads · d_R), got 4 × 6"),
        ({"w_uk": np.ones((3, 5))}, "w_uk: expected 3 rows (d_c) and 6 columns (heads · d_h), got 3 × 5"),
        ({"w_uk": np.ones((2, 6))}, "w_uk: expected 3 rows (d_c) and 6 columns (heads · d_h), got 2 × 6"),
        ({"w_uv": np.ones((3, 4))}, "w_uv: expected 3 rows (d_c) and 6 columns (heads · d_h), got 3 × 4"),
        ({"w_o": np.ones((5, 6))}, "w_o: expected 6 rows (heads · d_h), got 5"),
        ({"w_o": [[1.0, math.nan]] * 6}, "w_o: expected finite numbers, found NaN or infinity"),
        ({"w_uv": [["a"] * 6] * 3}, "w_uv: expected numbers"),
        ({"heads": 0}, "heads: expected a whole number of at least 1, got 0"),
        ({"heads": True}, "heads: expected a whole number of at least 1, got True"),
        ({"heads": 2.0}, "heads: expected a whole number of at least 1, got 2.0"),
        ({"heads": 4}, "w_uq: expected a number of columns the 4 heads divide (heads · d_h), got 6"),
        ({"heads": 3}, "w_qr: expected 4 rows (d_c', the columns of w_dq) and 12 columns (heads · d_R), got 4 × 8"),
        ({"positions": [0.0, 1.0]}, "positions: expected 5 numbers (one per token), got 2"),
        ({"positions": [[0.0] * 5]}, "positions: expected 5 numbers (one per token), got shape (1, 5)"),
        ({"positions": [[0.0], [1.0, 2.0]]}, "positions: expected 5 numbers (one per token), got a ragged list"),
        ({"positions": []}, "positions: expected 5 numbers (one per token), got 0"),
        ({"positions": 3.0}, "positions: expected 5 numbers (one per token), got shape ()"),
        ({"positions": ["a"] * 5}, "positions: expected numbers"),
        ({"positions": [0.0, 1.0, math.inf, 3.0, 4.0]}, "positions: expected finite numbers"),
        ({"base": 0.0}, "base: expected a positive finite number"),
        ({"base": -1.0}, "base: expected a positive finite number"),
        ({"base": math.nan}, "base: expected a positive finite number"),
        ({"embeddings": np.full((5, 6), 1e200)}, "embeddings: numbers too large"),
    ],
)
def test_every_error_names_its_argument(changes: dict[str, Any], message: str) -> None:
    got = assert_scenario_error(with_changed(**changes), message.split(":")[0])
    assert message in got, got


def test_an_overflow_in_the_turn_names_the_embeddings() -> None:
    eye = np.eye(2)
    big = np.array([[0.0, 1.0], [1.7e308, 0.0]])  # token 2's RoPE key (a, −a) turns past float64
    weights = {name: eye for name in WEIGHTS} | {"w_kr": np.array([[1.0, -1.0], [0.0, 1.0]])}
    assert_scenario_error(lambda: latent_attention(big, **weights, heads=1), "embeddings", "too large", "turned")


def test_overflow_in_the_output_names_w_o() -> None:
    arrays = {**BASE, "w_o": np.full((6, 6), 1e300), "embeddings": BASE["embeddings"] * 1e10}
    assert_scenario_error(lambda: call(arrays, 2), "w_o", "numbers too large")


@pytest.mark.parametrize(
    ("arguments", "field"),
    [((0, 128, 8, 512, 64), "n_heads"), ((128, 0, 8, 512, 64), "d_head"), ((128, 128, 3, 512, 64), "n_kv_heads"),
     ((128, 128, 8, 0, 64), "d_c"), ((128, 128, 8, 512, 1.5), "d_rope"), ((True, 128, 8, 512, 64), "n_heads"),
     ((128, 128, 256, 512, 64), "n_kv_heads")],
)
def test_cache_size_errors(arguments: tuple[Any, ...], field: str) -> None:
    assert_scenario_error(lambda: latent_cache_sizes(*arguments), field, "expected")


@pytest.mark.parametrize(
    ("options", "field"),
    [({"seed": -1}, "seed"), ({"seed": 1.5}, "seed"), ({"tokens": 0}, "tokens"), ({"d_model": False}, "d_model"),
     ({"heads": 0}, "heads"), ({"d_h": 2.0}, "d_h"), ({"d_rope": 3}, "d_rope"), ({"d_c": -1}, "d_c"),
     ({"d_c_query": 0}, "d_c_query")],
)
def test_example_errors(options: dict[str, Any], field: str) -> None:
    assert_scenario_error(lambda: latent_example(**options), field, "expected")


# -- frozen, and the inputs untouched -----------------------------------------------------------


def test_the_trace_is_frozen_and_the_inputs_untouched() -> None:
    arrays = {name: np.array(value) for name, value in problem(SHAPES["two heads, causal"], 12).items()}
    copies = {name: value.copy() for name, value in arrays.items()}
    positions = np.arange(5.0) + 3.0
    kept_positions = positions.copy()
    trace = call(arrays, 2, positions=positions)
    for name, value in arrays.items():
        assert np.array_equal(value, copies[name]) and value.flags.writeable, name
    assert np.array_equal(positions, kept_positions) and positions.flags.writeable
    for field in dataclasses.fields(trace):
        value = getattr(trace, field.name)
        if isinstance(value, np.ndarray):
            assert not value.flags.writeable and value.dtype == np.float64, field.name
            for given in (*arrays.values(), positions):
                assert not np.shares_memory(value, given), field.name
    with pytest.raises(dataclasses.FrozenInstanceError):
        trace.output = trace.output  # type: ignore[misc]
    with pytest.raises(ValueError, match="read-only"):
        trace.cache[0, 0] = 1.0
    assert np.array_equal(trace.embeddings, copies["embeddings"]) and np.array_equal(trace.w_o, copies["w_o"])


# -- the lecture's weights: drawn for any embeddings ----------------------------------------------------


def test_latent_weights_are_one_decimal_of_the_asked_shapes_and_the_same_for_a_seed() -> None:
    weights = latent_weights(5, seed=7, d_c=2, d_c_query=3, heads=2, d_h=2, d_rope=4)
    shapes = {"w_dq": (5, 3), "w_uq": (3, 4), "w_qr": (3, 8), "w_dkv": (5, 2), "w_uk": (2, 4), "w_uv": (2, 4),
              "w_kr": (5, 4), "w_o": (4, 5)}
    assert weights["heads"] == 2
    again = latent_weights(5, seed=7, d_c=2, d_c_query=3, heads=2, d_h=2, d_rope=4)
    for name, shape in shapes.items():
        matrix = weights[name]
        assert matrix.shape == shape, name
        assert np.array_equal(matrix, np.round(matrix, 1)) and np.all(np.abs(matrix) <= 1.0), name
        assert np.array_equal(matrix, again[name]), name
    other = latent_weights(5, seed=8, d_c=2, d_c_query=3, heads=2, d_h=2, d_rope=4)
    assert not all(np.array_equal(weights[name], other[name]) for name in shapes)


def test_latent_weights_take_any_embeddings_of_their_width() -> None:
    for tokens in (1, 2, 12):
        x = np.round(np.random.default_rng(tokens).uniform(-1, 1, (tokens, 3)), 1)
        trace = latent_attention(x, **latent_weights(3, seed=0))
        assert trace.cache.shape == (tokens, 4)
        assert np.allclose(trace.absorbed_scores, trace.scores, rtol=0, atol=TOLERANCE)


@pytest.mark.parametrize(("options", "field"), [({"d_model": 0}, "d_model"), ({"d_model": 3, "seed": -2}, "seed"),
                                                ({"d_model": 3, "d_rope": 1}, "d_rope"), ({"d_model": 3, "heads": 0},
                                                                                            "heads")])
def test_latent_weights_errors(options: dict[str, Any], field: str) -> None:
    assert_scenario_error(lambda: latent_weights(**options), field, "expected")
