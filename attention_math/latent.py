"""Multi-head latent attention (MLA): DeepSeek-V2 caches one small latent per token, not every head's K and V.

DeepSeek-V2 (arXiv 2405.04434), section 2.1 and appendix C ("Full Formulas of MLA"), in the row
convention of this package (one row per token, ``x W``). Each token ``x`` is compressed twice:

- the query latent ``c_Q = x W_DQ`` (``d_c'`` numbers); head ``i``'s content query is
  ``q_C,i = c_Q W_UQ,i`` (``d_h``) and its RoPE query ``q_R,i = RoPE(c_Q W_QR,i)`` (``d_R``);
- the key/value latent ``c_KV = x W_DKV`` (``d_c`` numbers); head ``i``'s content key and value
  are ``k_C,i = c_KV W_UK,i`` and ``v_i = c_KV W_UV,i`` (``d_h`` each). The RoPE key
  ``k_R = RoPE(x W_KR)`` (``d_R``) is one for all the heads.

``W_·,i`` is head ``i``'s block of ``d_h`` (or ``d_R``) neighbouring columns. Head ``i`` scores
``(q_C,i·k_C,i + q_R,i·k_R) / √(d_h + d_R)``, takes the softmax over the keys (the causal mask
hides the later ones) and sums its values; the heads' outputs side by side times ``W_O`` are the
output. RoPE turns adjacent pairs ``(2j, 2j+1)`` by ``position·θ_j``, ``θ_j = base^(−2j/d_R)``,
positions from 0, as :func:`~attention_math.rope` does.

Why the cache holds ``[c_KV | k_R]`` and nothing else (``d_c + d_R`` numbers a token and layer):
``q_C,i·k_C,i = q_C,i·(c_KV W_UK,i) = (q_C,i W_UK,iᵀ)·c_KV``, so ``W_UK`` moves to the query's side
(it is "absorbed") and the keys are never made; likewise ``W_UV`` moves into ``W_O``. RoPE cannot
sit on ``k_C``: the turn of key ``j`` would stand between ``W_UK`` and the query, a different matrix
for every distance, and nothing could be absorbed. So the position goes into a few extra
dimensions of their own (the decoupled RoPE, section 2.1.3), whose key ``k_R`` is cached as it is.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from ._core import FloatArray, as_array, as_matrix, owned, softmax
from ._errors import ScenarioError
from .rope import rope, rope_frequencies

__all__ = [
    "DEEPSEEK_V2",
    "LatentCacheSizes",
    "LatentConfig",
    "LatentExample",
    "LatentTrace",
    "latent_attention",
    "latent_cache_sizes",
    "latent_example",
    "latent_weights",
]

_WEIGHTS = ("w_dq", "w_uq", "w_qr", "w_dkv", "w_uk", "w_uv", "w_kr", "w_o")
"""The keyword arguments of :func:`latent_attention` that are matrices, in the order of the equations."""


@dataclass(frozen=True, eq=False)
class LatentTrace:
    """Every intermediate of multi-head latent attention, as read-only float64 arrays.

    ``T`` tokens, ``H`` heads; sizes as in DeepSeek-V2 (arXiv 2405.04434), section 2.1.

    Attributes
    ----------
    embeddings
        ``X``, ``T × d_model``.
    w_dq, w_uq, w_qr, w_dkv, w_uk, w_uv, w_kr, w_o
        The weights as given (copies): ``W_DQ`` (``d_model × d_c'``), ``W_UQ`` (``d_c' × H·d_h``),
        ``W_QR`` (``d_c' × H·d_R``), ``W_DKV`` (``d_model × d_c``), ``W_UK`` and ``W_UV``
        (``d_c × H·d_h``), ``W_KR`` (``d_model × d_R``), ``W_O`` (``H·d_h × d_out``).
    positions
        The position of each token, ``T`` (``0, 1, …`` unless given).
    latent_queries
        ``c_Q = X W_DQ``, ``T × d_c'``.
    latent
        ``c_KV = X W_DKV``, ``T × d_c``: the compressed keys and values.
    content_queries, content_keys, values
        ``q_C,i = c_Q W_UQ,i``, ``k_C,i = c_KV W_UK,i``, ``v_i = c_KV W_UV,i``: ``H × T × d_h``.
    unrotated_rope_queries, rope_queries
        ``c_Q W_QR,i`` before and after RoPE, ``H × T × d_R``.
    unrotated_rope_keys, rope_keys
        ``X W_KR`` before and after RoPE, ``T × d_R``: one key for every head.
    content_scores, rope_scores
        ``q_C,i·k_C,j`` and ``q_R,i·k_R,j``, ``H × T × T`` (unscaled; row ``t`` is query ``t``).
    scores
        ``content_scores + rope_scores``.
    scaled_scores
        ``scores / √(d_h + d_R)``; ``-inf`` above the diagonal when causal.
    weights
        The softmax of each row of ``scaled_scores``, ``H × T × T``; exactly 0 where masked.
    context
        ``o_i = weights_i @ v_i``, ``H × T × d_h``.
    concat
        The heads' ``o`` side by side, ``T × H·d_h``.
    output
        ``concat @ W_O``, ``T × d_out``.
    cache
        ``[c_KV | k_R]``, ``T × (d_c + d_R)``: all a decoder keeps of a token, in each layer.
    absorbed_queries
        ``q_C,i W_UK,iᵀ``, ``H × T × d_c``: the content query moved into the latent's space.
    absorbed_content_scores
        ``absorbed_queries_i @ c_KVᵀ``, ``H × T × T``: equal to ``content_scores`` (to rounding).
    absorbed_scores
        ``absorbed_queries_i @ cache[:, :d_c]ᵀ + rope_queries_i @ cache[:, d_c:]ᵀ``: the scores from
        the cache alone, no key made; equal to ``scores`` (to rounding).
    latent_context
        ``weights_i @ c_KV``, ``H × T × d_c``: the absorbed route's context;
        ``latent_context_i W_UV,i`` is ``context_i`` (to rounding).
    d_c, d_c_query, d_h, d_rope, n_heads
        ``d_c``, ``d_c'``, ``d_h``, ``d_R`` and ``H``.
    base, causal
        RoPE's base and whether the causal mask was applied.
    """

    embeddings: FloatArray
    w_dq: FloatArray
    w_uq: FloatArray
    w_qr: FloatArray
    w_dkv: FloatArray
    w_uk: FloatArray
    w_uv: FloatArray
    w_kr: FloatArray
    w_o: FloatArray
    positions: FloatArray
    latent_queries: FloatArray
    latent: FloatArray
    content_queries: FloatArray
    unrotated_rope_queries: FloatArray
    rope_queries: FloatArray
    content_keys: FloatArray
    unrotated_rope_keys: FloatArray
    rope_keys: FloatArray
    values: FloatArray
    content_scores: FloatArray
    rope_scores: FloatArray
    scores: FloatArray
    scaled_scores: FloatArray
    weights: FloatArray
    context: FloatArray
    concat: FloatArray
    output: FloatArray
    cache: FloatArray
    absorbed_queries: FloatArray
    absorbed_content_scores: FloatArray
    absorbed_scores: FloatArray
    latent_context: FloatArray
    d_c: int
    d_c_query: int
    d_h: int
    d_rope: int
    n_heads: int
    base: float
    causal: bool

    @property
    def n_tokens(self) -> int:
        """The number of tokens ``T``."""
        return int(self.embeddings.shape[0])

    @property
    def divisor(self) -> float:
        """``√(d_h + d_R)``: a query and a key have ``d_h + d_R`` numbers between them."""
        return math.sqrt(self.d_h + self.d_rope)

    @property
    def cache_width(self) -> int:
        """``d_c + d_R``: the numbers a token keeps in the cache of one layer."""
        return self.d_c + self.d_rope

    @property
    def multi_head_cache_width(self) -> int:
        """``2·H·d_h``: what multi-head attention of the same heads would keep (every key and value)."""
        return 2 * self.n_heads * self.d_h


def latent_attention(
    embeddings: npt.ArrayLike,
    *,
    w_dq: npt.ArrayLike,
    w_uq: npt.ArrayLike,
    w_qr: npt.ArrayLike,
    w_dkv: npt.ArrayLike,
    w_uk: npt.ArrayLike,
    w_uv: npt.ArrayLike,
    w_kr: npt.ArrayLike,
    w_o: npt.ArrayLike,
    heads: int,
    base: float = 10000.0,
    causal: bool = True,
    positions: npt.ArrayLike | None = None,
) -> LatentTrace:
    """Multi-head latent attention (DeepSeek-V2, arXiv 2405.04434, section 2.1 and appendix C).

    Parameters
    ----------
    embeddings
        ``X``, ``T × d_model``, one row per token.
    w_dq, w_uq, w_qr
        ``W_DQ`` (``d_model × d_c'``), ``W_UQ`` (``d_c' × heads·d_h``), ``W_QR`` (``d_c' × heads·d_R``).
    w_dkv, w_uk, w_uv, w_kr, w_o
        ``W_DKV`` (``d_model × d_c``), ``W_UK`` and ``W_UV`` (``d_c × heads·d_h``), ``W_KR`` (``d_model
        × d_R``, ``d_R`` even: the one RoPE key of all the heads), ``W_O`` (``heads·d_h × d_out``).
    heads
        ``H``, at least 1; head ``i`` has the columns ``i·d_h … (i+1)·d_h − 1`` (``i·d_R …`` of ``W_QR``).
    base, causal, positions
        RoPE's base; mask the later keys (a decoder); a position per token (``0, 1, …`` if omitted).

    Returns
    -------
    LatentTrace
        Every step, as read-only float64 copies; the inputs are not touched. A ``ScenarioError`` names
        the argument of a wrong shape (``w_uk: expected 2 rows (d_c) and 4 columns (heads · d_h), got
        2 × 5``), an odd ``d_R``, heads that do not divide ``W_UQ``'s columns, a position per token
        missing, a base that is not positive, or numbers that overflow.

    Examples
    --------
    >>> trace = latent_example().trace()
    >>> trace.n_heads, trace.d_c, trace.d_rope, trace.cache.shape, trace.weights.shape
    (2, 2, 2, (4, 4), (2, 4, 4))
    >>> trace.weights[0, 2].round(2)  # head 0, token 3: nothing after it
    array([0.03, 0.68, 0.3 , 0.  ])
    >>> bool(np.allclose(trace.absorbed_scores, trace.scores, rtol=0, atol=1e-12))
    True
    >>> latent_attention(np.eye(2), **latent_example().keywords())
    Traceback (most recent call last):
    ...
    attention_math._errors.ScenarioError: w_dq: expected 2 rows (d_model, the columns of embeddings), got 4
    """
    given = dict(zip(_WEIGHTS, (w_dq, w_uq, w_qr, w_dkv, w_uk, w_uv, w_kr, w_o), strict=True))
    x, w, h = _checked_inputs(embeddings, given, heads)
    spots = _checked_positions(positions, x.shape[0])
    rope_frequencies(w["w_kr"].shape[1], base)  # a ScenarioError naming base
    return _trace(x, w, h, spots, float(base), bool(causal))


def _checked_inputs(
    embeddings: npt.ArrayLike, given: dict[str, Any], heads: Any
) -> tuple[FloatArray, dict[str, FloatArray], int]:
    """``X`` and the weights as float64 copies, each checked, and their shapes against each other."""
    x = as_matrix("embeddings", embeddings)
    w = {name: as_matrix(name, given[name]) for name in _WEIGHTS}
    if isinstance(heads, (bool, np.bool_)) or not isinstance(heads, numbers.Integral) or int(heads) < 1:
        raise ScenarioError(f"heads: expected a whole number of at least 1, got {heads!r}")
    h, d_model = int(heads), x.shape[1]
    for name in ("w_dq", "w_dkv", "w_kr"):
        _rows(name, w[name], d_model, "d_model, the columns of embeddings")
    d_c_query, d_c, d_rope = w["w_dq"].shape[1], w["w_dkv"].shape[1], w["w_kr"].shape[1]
    if d_rope % 2:
        raise ScenarioError(f"w_kr: expected an even number of columns (d_R; dimensions turn in pairs), got {d_rope}")
    if w["w_uq"].shape[1] % h:
        raise ScenarioError(
            f"w_uq: expected a number of columns the {h} heads divide (heads · d_h), got {w['w_uq'].shape[1]}"
        )
    d_h = w["w_uq"].shape[1] // h
    _shape("w_uq", w["w_uq"], (d_c_query, "d_c', the columns of w_dq"), (h * d_h, "heads · d_h"))
    _shape("w_qr", w["w_qr"], (d_c_query, "d_c', the columns of w_dq"), (h * d_rope, "heads · d_R"))
    for name in ("w_uk", "w_uv"):
        _shape(name, w[name], (d_c, "d_c"), (h * d_h, "heads · d_h"))
    _rows("w_o", w["w_o"], h * d_h, "heads · d_h")
    return x, w, h


def _rows(name: str, matrix: FloatArray, rows: int, what: str) -> None:
    if matrix.shape[0] != rows:
        raise ScenarioError(f"{name}: expected {rows} rows ({what}), got {matrix.shape[0]}")


def _shape(name: str, matrix: FloatArray, rows: tuple[int, str], columns: tuple[int, str]) -> None:
    if matrix.shape != (rows[0], columns[0]):
        raise ScenarioError(
            f"{name}: expected {rows[0]} rows ({rows[1]}) and {columns[0]} columns ({columns[1]}), "
            f"got {matrix.shape[0]} × {matrix.shape[1]}"
        )


def _checked_positions(positions: npt.ArrayLike | None, n: int) -> FloatArray:
    """``positions`` as ``n`` finite float64 numbers; ``0 … n − 1`` when ``None``."""
    if positions is None:
        return np.arange(n, dtype=np.float64)
    try:
        shape: tuple[int, ...] | None = np.shape(positions)
    except ValueError:  # a ragged list
        shape = None
    if shape is None or len(shape) != 1 or shape[0] != n:
        got = "a ragged list" if shape is None else shape[0] if len(shape) == 1 else f"shape {shape}"
        raise ScenarioError(f"positions: expected {n} numbers (one per token), got {got}")
    return as_array("positions", positions, 1)


def _heads(matrix: FloatArray, h: int) -> FloatArray:
    """``T × h·d`` → ``h × T × d``: head ``i``'s block of ``d`` neighbouring columns as matrix ``i``."""
    t, width = matrix.shape
    split: FloatArray = matrix.reshape(t, h, width // h).transpose(1, 0, 2)
    return split


def _trace(
    x: FloatArray, w: dict[str, FloatArray], h: int, spots: FloatArray, base: float, causal: bool
) -> LatentTrace:
    """The trace of checked inputs: projections, both kinds of score, the softmax and the absorbed route."""
    d_c, d_rope = w["w_dkv"].shape[1], w["w_kr"].shape[1]
    with np.errstate(over="ignore", invalid="ignore"):
        c_q, c_kv, k_r_raw = x @ w["w_dq"], x @ w["w_dkv"], x @ w["w_kr"]
        q_c, q_r_raw = _heads(c_q @ w["w_uq"], h), _heads(c_q @ w["w_qr"], h)
        k_c, v = _heads(c_kv @ w["w_uk"], h), _heads(c_kv @ w["w_uv"], h)
    _finite("embeddings", c_q, c_kv, k_r_raw, q_c, q_r_raw, k_c, v)
    q_r = np.stack([_turned(q_r_raw[i], spots, base) for i in range(h)])
    k_r = _turned(k_r_raw, spots, base)
    with np.errstate(over="ignore", invalid="ignore"):
        content, turned = q_c @ k_c.transpose(0, 2, 1), q_r @ k_r.T
        scores = content + turned
        scaled = scores / math.sqrt(q_c.shape[2] + d_rope)
    _finite("embeddings", content, turned, scores)
    if causal:
        scaled[:, np.triu(np.ones(scores.shape[1:], dtype=bool), k=1)] = -np.inf
    weights = softmax(scaled, axis=-1)
    context = weights @ v
    concat = context.transpose(1, 0, 2).reshape(x.shape[0], -1)
    with np.errstate(over="ignore", invalid="ignore"):
        output = concat @ w["w_o"]
    _finite("w_o", output)
    cache = np.hstack([c_kv, k_r])
    absorbed = _absorbed(q_c, q_r, w["w_uk"], cache, d_c)
    return LatentTrace(
        embeddings=owned(x), **{name: owned(w[name]) for name in _WEIGHTS}, positions=owned(spots),
        latent_queries=owned(c_q), latent=owned(c_kv), content_queries=owned(q_c),
        unrotated_rope_queries=owned(q_r_raw), rope_queries=owned(q_r), content_keys=owned(k_c),
        unrotated_rope_keys=owned(k_r_raw), rope_keys=k_r, values=owned(v), content_scores=owned(content),
        rope_scores=owned(turned), scores=owned(scores), scaled_scores=owned(scaled), weights=owned(weights),
        context=owned(context), concat=owned(concat), output=owned(output), cache=owned(cache), **absorbed,
        latent_context=owned(weights @ c_kv), d_c=d_c, d_c_query=int(c_q.shape[1]), d_h=int(q_c.shape[2]),
        d_rope=d_rope, n_heads=h, base=base, causal=causal,
    )


def _turned(matrix: FloatArray, spots: FloatArray, base: float) -> FloatArray:
    """:func:`~attention_math.rope` of one matrix; an overflow named for the embeddings, not ``rope``'s ``x``."""
    try:
        return rope(matrix, spots, base=base)
    except ScenarioError as error:
        if not str(error).startswith("x:"):
            raise
        raise ScenarioError(f"embeddings: {str(error).removeprefix('x: ')}") from None


def _absorbed(q_c: FloatArray, q_r: FloatArray, w_uk: FloatArray, cache: FloatArray, d_c: int) -> dict[str, Any]:
    """The scores the absorbed way, reading nothing but the queries, ``W_UK`` and the cache."""
    h, d_h = q_c.shape[0], q_c.shape[2]
    w_uk_heads = w_uk.reshape(d_c, h, d_h).transpose(1, 0, 2)  # h × d_c × d_h: W_UK,i
    with np.errstate(over="ignore", invalid="ignore"):
        queries = q_c @ w_uk_heads.transpose(0, 2, 1)  # q_C,i W_UK,iᵀ
        content = queries @ cache[:, :d_c].T
        scores = content + q_r @ cache[:, d_c:].T
    _finite("embeddings", queries, scores)
    return {"absorbed_queries": owned(queries), "absorbed_content_scores": owned(content),
            "absorbed_scores": owned(scores)}


def _finite(name: str, *arrays: FloatArray) -> None:
    if not all(np.all(np.isfinite(array)) for array in arrays):
        raise ScenarioError(f"{name}: numbers too large, the attention overflows float64 (keep them far below 1e100)")


# -- the cache, per token and layer ---------------------------------------------------------------


@dataclass(frozen=True)
class LatentConfig:
    """The attention shape of a model with multi-head latent attention.

    Attributes
    ----------
    name
        The model.
    layers, d_model
        Its layers and hidden size.
    n_heads, d_head
        ``n_h`` and ``d_h``: heads, and the numbers of a head's content query, key and value.
    d_c, d_c_query, d_rope
        ``d_c`` (the key/value latent), ``d_c'`` (the query latent) and ``d_R`` (a head's RoPE part).
    source
        Where the numbers come from.
    """

    name: str
    layers: int
    d_model: int
    n_heads: int
    d_head: int
    d_c: int
    d_c_query: int
    d_rope: int
    source: str

    def cache_sizes(self, n_kv_heads: int) -> LatentCacheSizes:
        """:func:`latent_cache_sizes` of this model's heads, against grouped-query attention of ``n_kv_heads``."""
        return latent_cache_sizes(self.n_heads, self.d_head, n_kv_heads, self.d_c, self.d_rope)


DEEPSEEK_V2 = LatentConfig(
    name="DeepSeek-V2", layers=60, d_model=5120, n_heads=128, d_head=128, d_c=512, d_c_query=1536, d_rope=64,
    source="DeepSeek-V2 (arXiv 2405.04434), section 2.1 and appendix; "
    "https://huggingface.co/deepseek-ai/DeepSeek-V2/blob/main/config.json",
)
"""DeepSeek-V2: 60 layers of 128 heads, ``d_h = 128``, ``d_c = 512`` (``4 d_h``), ``d_c' = 1536``, ``d_R = 64``
(``d_h / 2``); hidden size 5120. DeepSeek-V2 (arXiv 2405.04434), section 2.1 and appendix; its ``config.json``
says the same (``kv_lora_rank`` 512, ``q_lora_rank`` 1536, ``qk_nope_head_dim`` 128, ``qk_rope_head_dim`` 64)."""


@dataclass(frozen=True)
class LatentCacheSizes:
    """The numbers one token keeps in the cache of one layer, four ways (DeepSeek-V2, section 2.1.4, table 1).

    Attributes
    ----------
    n_heads, d_head, n_kv_heads, d_c, d_rope
        ``n_h``, ``d_h``, ``n_g`` (grouped-query attention's key/value heads), ``d_c`` and ``d_R``.
    multi_head
        ``2·n_h·d_h``: a key and a value of every head.
    grouped_query
        ``2·n_g·d_h``: a key and a value of every key/value head.
    multi_query
        ``2·d_h``: one key and one value for all the heads.
    latent
        ``d_c + d_R``: multi-head latent attention's ``[c_KV | k_R]``.
    """

    n_heads: int
    d_head: int
    n_kv_heads: int
    d_c: int
    d_rope: int
    multi_head: int
    grouped_query: int
    multi_query: int
    latent: int

    @property
    def equivalent_groups(self) -> float:
        """The key/value heads of grouped-query attention that keep as much: ``(d_c + d_R) / (2·d_h)``."""
        return self.latent / (2 * self.d_head)

    @property
    def saving(self) -> float:
        """``multi_head / latent``: how many times smaller the latent cache is than multi-head attention's."""
        return self.multi_head / self.latent


def latent_cache_sizes(n_heads: int, d_head: int, n_kv_heads: int, d_c: int, d_rope: int) -> LatentCacheSizes:
    """The cache per token and layer (in numbers) of MHA, GQA, MQA and MLA with these sizes.

    Parameters
    ----------
    n_heads, d_head
        ``n_h`` query heads of ``d_h`` numbers each.
    n_kv_heads
        ``n_g``, the key/value heads of the grouped-query attention to compare with; it divides ``n_h``.
    d_c, d_rope
        The latent's ``d_c`` and the RoPE key's ``d_R``.

    Returns
    -------
    LatentCacheSizes
        The four sizes. A ``ScenarioError`` names an argument that is not a whole number of at least 1,
        or an ``n_kv_heads`` that does not divide ``n_heads``.

    Examples
    --------
    DeepSeek-V2 (arXiv 2405.04434, section 2.1.4): 576 numbers a token and layer against 32,768 for
    multi-head attention, as much as grouped-query attention with 2.25 groups:

    >>> sizes = DEEPSEEK_V2.cache_sizes(n_kv_heads=8)
    >>> sizes.multi_head, sizes.grouped_query, sizes.multi_query, sizes.latent
    (32768, 2048, 256, 576)
    >>> sizes.equivalent_groups, round(sizes.saving, 1)
    (2.25, 56.9)
    >>> latent_cache_sizes(8, 64, 3, 32, 16)
    Traceback (most recent call last):
    ...
    attention_math._errors.ScenarioError: n_kv_heads: expected a divisor of the 8 query heads, got 3
    """
    given = {"n_heads": n_heads, "d_head": d_head, "n_kv_heads": n_kv_heads, "d_c": d_c, "d_rope": d_rope}
    for name, value in given.items():
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral) or int(value) < 1:
            raise ScenarioError(f"{name}: expected a whole number of at least 1, got {value!r}")
    h, d, g, c, r = (int(value) for value in given.values())
    if h % g:
        raise ScenarioError(f"n_kv_heads: expected a divisor of the {h} query heads, got {g}")
    return LatentCacheSizes(
        n_heads=h, d_head=d, n_kv_heads=g, d_c=c, d_rope=r,
        multi_head=2 * h * d, grouped_query=2 * g * d, multi_query=2 * d, latent=c + r,
    )


# -- a small example to show on the board ---------------------------------------------------------


@dataclass(frozen=True, eq=False)
class LatentExample:
    """Small matrices of one-decimal numbers for :func:`latent_attention`, to work through by hand.

    Attributes
    ----------
    embeddings
        ``X``, ``tokens × d_model``.
    w_dq, w_uq, w_qr, w_dkv, w_uk, w_uv, w_kr, w_o
        As :func:`latent_attention` takes them; ``W_O`` maps the heads back to ``d_model``.
    heads
        ``H``.
    """

    embeddings: FloatArray
    w_dq: FloatArray
    w_uq: FloatArray
    w_qr: FloatArray
    w_dkv: FloatArray
    w_uk: FloatArray
    w_uv: FloatArray
    w_kr: FloatArray
    w_o: FloatArray
    heads: int

    def keywords(self) -> dict[str, Any]:
        """The keyword arguments of :func:`latent_attention`: the weights and ``heads`` (not ``X``)."""
        return {**{name: getattr(self, name) for name in _WEIGHTS}, "heads": self.heads}

    def trace(self, *, base: float = 10000.0, causal: bool = True) -> LatentTrace:
        """``latent_attention`` of these matrices."""
        return latent_attention(self.embeddings, **self.keywords(), base=base, causal=causal)


def latent_example(
    seed: int = 0, tokens: int = 4, d_model: int = 4, d_c: int = 2, d_c_query: int = 3, heads: int = 2,
    d_h: int = 2, d_rope: int = 2,
) -> LatentExample:
    """Matrices of numbers between −1 and 1 with one decimal, the same for the same arguments.

    Each matrix is drawn in turn from ``numpy.random.default_rng(seed)``, uniform in ``[−1, 1)``, and
    rounded to one decimal (``X``, then the weights in the order of :func:`latent_attention`).

    Raises
    ------
    ScenarioError
        Naming a seed that is not a whole number of at least 0, a size that is not a whole number of
        at least 1, or an odd ``d_rope``.

    Examples
    --------
    >>> example = latent_example()
    >>> example.embeddings
    array([[ 0.3, -0.5, -0.9, -1. ],
           [ 0.6,  0.8,  0.2,  0.5],
           [ 0.1,  0.9,  0.6, -1. ],
           [ 0.7, -0.9,  0.5, -0.6]])
    >>> example.w_dkv.shape, example.w_uk.shape, example.w_kr.shape, example.w_o.shape
    ((4, 2), (2, 4), (4, 2), (4, 4))
    """
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, numbers.Integral) or int(seed) < 0:
        raise ScenarioError(f"seed: expected a whole number of at least 0, got {seed!r}")
    sizes = {"tokens": tokens, "d_model": d_model, "d_c": d_c, "d_c_query": d_c_query, "heads": heads,
             "d_h": d_h, "d_rope": d_rope}
    for name, value in sizes.items():
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral) or int(value) < 1:
            raise ScenarioError(f"{name}: expected a whole number of at least 1, got {value!r}")
    if d_rope % 2:
        raise ScenarioError(f"d_rope: expected an even number (dimensions turn in pairs), got {d_rope}")
    rng = np.random.default_rng(seed)
    shapes = {
        "embeddings": (tokens, d_model), "w_dq": (d_model, d_c_query), "w_uq": (d_c_query, heads * d_h),
        "w_qr": (d_c_query, heads * d_rope), "w_dkv": (d_model, d_c), "w_uk": (d_c, heads * d_h),
        "w_uv": (d_c, heads * d_h), "w_kr": (d_model, d_rope), "w_o": (heads * d_h, d_model),
    }
    # + 0.0 turns a rounded −0.0 into 0.0
    drawn = {name: owned(np.round(rng.uniform(-1.0, 1.0, size=shape), 1) + 0.0) for name, shape in shapes.items()}
    return LatentExample(**drawn, heads=int(heads))


def latent_weights(
    d_model: int, *, seed: int = 0, d_c: int = 2, d_c_query: int = 2, heads: int = 2, d_h: int = 2, d_rope: int = 2,
) -> dict[str, Any]:
    """One-decimal weights of :func:`latent_attention` for any embeddings of ``d_model`` columns, from a seed.

    The weights of :func:`latent_example` with one token and these sizes (its ``X`` is drawn first and left
    out): the same seed and sizes give the same weights, whatever the sentence, so a lecture can show MLA
    on any scenario's embeddings.

    Parameters
    ----------
    d_model
        The columns of the embeddings the weights will take.
    seed, d_c, d_c_query, heads, d_h, d_rope
        The generator's seed and the sizes ``d_c``, ``d_c'``, ``H``, ``d_h`` and ``d_R`` (even).

    Returns
    -------
    dict
        The keyword arguments of :func:`latent_attention`: the eight weights and ``heads``. A ``ScenarioError``
        names a seed or a size out of range, as :func:`latent_example` does.

    Examples
    --------
    >>> weights = latent_weights(3, seed=0)
    >>> weights["w_dkv"].shape, weights["w_uk"].shape, weights["w_kr"].shape, weights["heads"]
    ((3, 2), (2, 4), (3, 2), 2)
    >>> trace = latent_attention(np.eye(3), **weights)
    >>> trace.cache.shape, trace.cache_width, trace.multi_head_cache_width
    ((3, 4), 4, 8)
    >>> latent_weights(0)
    Traceback (most recent call last):
    ...
    attention_math._errors.ScenarioError: d_model: expected a whole number of at least 1, got 0
    """
    drawn = latent_example(seed, tokens=1, d_model=d_model, d_c=d_c, d_c_query=d_c_query, heads=heads, d_h=d_h,
                           d_rope=d_rope)
    return drawn.keywords()
