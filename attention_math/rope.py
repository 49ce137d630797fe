"""Rotary position embeddings (RoPE): queries and keys turned by an angle that grows with position.

Without positions, self-attention is permutation-equivariant: shuffle the tokens and the
scores shuffle with them, the same numbers. RoFormer (Su et al. 2021, arXiv 2104.09864,
section 3.4.2) splits ``q`` and ``k`` (dimension ``d``, even) into ``d/2`` pairs of dimensions and
turns pair ``i`` of the token at position ``m`` by the angle ``m·θ_i``, ``θ_i = base^(−2i/d)``
(``base`` 10000; ``i`` counts from 0 here, from 1 in the paper). A rotation keeps lengths, and
``(R_m q)·(R_n k) = q·(R_(n−m) k)``: the score depends on ``m − n`` only.

Two layouts pair the dimensions: ``"pairs"`` turns dimensions ``(2i, 2i+1)`` as the paper
writes it; ``"half"`` turns ``(i, i + d/2)``, the "rotate half" of many implementations
(GPT-NeoX, Hugging Face's LLaMA). They give the same scores up to a fixed reordering of the
dimensions: ``order = rope_pair_dimensions(d, "half").ravel()`` (``0, d/2, 1, d/2+1, …``) puts
the half layout's pairs side by side, and ``rope(x[:, order], p) == rope(x, p, layout="half")[:, order]``.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from ._core import (
    AttentionTrace,
    FloatArray,
    as_array,
    as_matrix,
    checked_attention,
    checked_matrices,
    owned,
    softmax,
)
from ._errors import ScenarioError

__all__ = [
    "ROPE_LAYOUTS",
    "RopeClock",
    "RopeTrace",
    "rope",
    "rope_angles",
    "rope_attention",
    "rope_clock",
    "rope_frequencies",
    "rope_pair_dimensions",
]

ROPE_LAYOUTS: tuple[str, ...] = ("pairs", "half")
"""``"pairs"``: dimensions ``(2i, 2i+1)`` turn together (RoFormer); ``"half"``: ``(i, i + d/2)``."""

IntArray = npt.NDArray[np.intp]


def rope_frequencies(d: int, base: float = 10000.0) -> FloatArray:
    """The angle per position of each pair: ``θ_i = base^(−2i/d)`` for ``i = 0 … d/2 − 1``.

    Pair 0 turns by one radian per position (the fast hand of the clock); the last pair turns
    by about ``1/base`` of that (the slow hand).

    Parameters
    ----------
    d
        The dimension of ``q`` and ``k``: an even whole number, at least 2.
    base
        A positive number; 10000 in RoFormer.

    Returns
    -------
    numpy.ndarray
        ``d/2`` read-only float64 frequencies, from 1 down.

    Examples
    --------
    >>> rope_frequencies(8)
    array([1.   , 0.1  , 0.01 , 0.001])
    >>> rope_frequencies(4, base=100.0)
    array([1. , 0.1])
    >>> rope_frequencies(3)
    Traceback (most recent call last):
    ...
    attention_math._errors.ScenarioError: d: expected an even whole number ≥ 2 (dimensions turn in pairs), got 3
    """
    half = _checked_dimension("d", d) // 2
    return owned(_checked_base(base) ** (-2.0 * np.arange(half) / (2 * half)))


def rope_angles(d: int, positions: npt.ArrayLike, *, base: float = 10000.0) -> FloatArray:
    """The angle of every pair at every position: ``angles[m, i] = positions[m]·θ_i``, in radians.

    Parameters
    ----------
    d
        The dimension of ``q`` and ``k`` (even).
    positions
        One position per token, a 1-d list of finite numbers (usually ``0, 1, 2, …``).
    base
        As in :func:`rope_frequencies`.

    Returns
    -------
    numpy.ndarray
        ``n × d/2`` read-only float64 angles, not reduced modulo ``2π`` (a clock hand's turn
        count is part of the picture).

    Examples
    --------
    >>> rope_angles(4, [0, 1, 3], base=100.0)
    array([[0. , 0. ],
           [1. , 0.1],
           [3. , 0.3]])
    """
    theta = rope_frequencies(d, base)
    return _angles(_checked_positions(positions, None), theta)


def rope_pair_dimensions(d: int, layout: str = "pairs") -> IntArray:
    """The two dimensions of each pair: row ``i`` holds the dimensions pair ``i`` turns.

    ``"pairs"``: ``(2i, 2i+1)``; ``"half"``: ``(i, i + d/2)``. Within a row the first
    dimension is the plane's horizontal axis: a pair ``(a, b)`` turns to
    ``(a cos φ − b sin φ, a sin φ + b cos φ)``.

    Examples
    --------
    >>> rope_pair_dimensions(6)
    array([[0, 1],
           [2, 3],
           [4, 5]])
    >>> rope_pair_dimensions(6, "half")
    array([[0, 3],
           [1, 4],
           [2, 5]])
    >>> rope_pair_dimensions(6, "half").ravel()  # the reordering that turns "half" into "pairs"
    array([0, 3, 1, 4, 2, 5])
    """
    half = _checked_dimension("d", d) // 2
    first = np.arange(half) * 2 if _checked_layout(layout) == "pairs" else np.arange(half)
    second = first + 1 if layout == "pairs" else first + half
    dims: IntArray = np.stack([first, second], axis=1)
    dims.setflags(write=False)
    return dims


def rope(x: npt.ArrayLike, positions: npt.ArrayLike, *, base: float = 10000.0, layout: str = "pairs") -> FloatArray:
    """Turn each row ``x[m]`` by its position: pair ``i`` by the angle ``positions[m]·θ_i``.

    Parameters
    ----------
    x
        ``n × d`` (``d`` even), one row per token: the queries or the keys.
    positions
        ``n`` finite numbers, the position of each row.
    base
        As in :func:`rope_frequencies`.
    layout
        ``"pairs"`` or ``"half"`` (see :func:`rope_pair_dimensions`).

    Returns
    -------
    numpy.ndarray
        The turned rows, ``n × d``, a read-only float64 copy; every row keeps its length.

    Raises
    ------
    ScenarioError
        Naming ``x``, ``positions``, ``base`` or ``layout``: an odd ``d``, a position per row
        missing, an unknown layout or a base that is not positive.

    Examples
    --------
    A quarter turn (angle π/2) takes ``(1, 0)`` to ``(0, 1)``; position 0 leaves a row alone.

    >>> rope([[1.0, 0.0], [1.0, 0.0]], [math.pi / 2, 0.0]).round(12)
    array([[0., 1.],
           [1., 0.]])
    >>> rope([[1.0, 2.0, 3.0, 4.0]], [1.0], base=1.0).round(3)  # both pairs turn by 1 radian
    array([[-1.143,  1.922, -1.745,  4.686]])
    >>> rope([[1.0, 2.0, 3.0, 4.0]], [1.0], base=1.0, layout="half").round(3)
    array([[-1.984, -2.285,  2.462,  3.844]])
    >>> rope([[1.0, 2.0]], [0.0, 1.0])
    Traceback (most recent call last):
    ...
    attention_math._errors.ScenarioError: positions: expected 1 position (one per row of x), got 2
    """
    matrix = as_matrix("x", x)
    d = _checked_dimension("x", matrix.shape[1], columns=True)
    angles = _angles(_checked_positions(positions, matrix.shape[0]), rope_frequencies(d, base))
    return owned(_rotated("x", matrix, angles, rope_pair_dimensions(d, layout)))


@dataclass(frozen=True, eq=False)
class RopeClock:
    """One query and one key as RoPE turns them, pair by pair: the hands of a clock.

    Pair ``i`` of a vector is an arrow in a plane of its own (its first dimension the horizontal
    axis); at position ``m`` it turns by ``m·θ_i``. The pair's share of the score is the dot
    product of the two turned arrows, ``|q_i| |k_i| cos(angle between them)``, and the shares add
    up to the score ``(R_m q)·(R_n k)``. Shift ``m`` and ``n`` by the same amount and both hands
    turn alike: the angle between them, every share and the score stay.

    Attributes
    ----------
    query, key
        The two vectors before any turn, ``d`` numbers each.
    query_position, key_position
        ``m`` and ``n``.
    frequencies
        ``θ_i`` for each of the ``d/2`` pairs.
    query_turns, key_turns
        ``m·θ_i`` and ``n·θ_i``, in radians, not reduced modulo ``2π``.
    query_pairs, key_pairs
        Each pair's arrow before the turn, ``d/2 × 2`` (its two dimensions as
        :func:`rope_pair_dimensions` lists them).
    turned_query_pairs, turned_key_pairs
        The same arrows turned, ``d/2 × 2``.
    query_hands, key_hands
        The direction of each turned arrow, radians in ``(−π, π]``.
    angles_between
        The key's hand less the query's, in ``[−π, π]`` (either end for opposite hands).
    contributions
        Each pair's share of the score: the dot product of its two turned arrows.
    score
        ``(R_m q)·(R_n k)``, the sum of the shares.
    base, layout
        As in :func:`rope`.
    """

    query: FloatArray
    key: FloatArray
    query_position: float
    key_position: float
    frequencies: FloatArray
    query_turns: FloatArray
    key_turns: FloatArray
    query_pairs: FloatArray
    key_pairs: FloatArray
    turned_query_pairs: FloatArray
    turned_key_pairs: FloatArray
    query_hands: FloatArray
    key_hands: FloatArray
    angles_between: FloatArray
    contributions: FloatArray
    score: float
    base: float
    layout: str


def rope_clock(
    query: npt.ArrayLike,
    key: npt.ArrayLike,
    query_position: float,
    key_position: float,
    *,
    base: float = 10000.0,
    layout: str = "pairs",
) -> RopeClock:
    """A query at position ``m`` and a key at position ``n``, turned pair by pair (see :class:`RopeClock`).

    Parameters
    ----------
    query, key
        Two vectors of one even length ``d``.
    query_position, key_position
        ``m`` and ``n``: finite numbers.
    base, layout
        As in :func:`rope`.

    Returns
    -------
    RopeClock
        Every angle, arrow and share of the score, as read-only float64 arrays.

    Examples
    --------
    The key one position before the query: the fast pair's hands stand 1 radian apart, the slow
    pair's 0.01; five positions further on, the same angles and the same score.

    >>> clock = rope_clock([1.0, 0.0, 1.0, 0.0], [1.0, 0.0, 1.0, 0.0], 4, 3)
    >>> clock.frequencies, clock.query_turns, clock.key_turns
    (array([1.  , 0.01]), array([4.  , 0.04]), array([3.  , 0.03]))
    >>> clock.angles_between.round(12), clock.contributions.round(4), round(clock.score, 4)
    (array([-1.  , -0.01]), array([0.5403, 1.    ]), 1.5403)
    >>> later = rope_clock([1.0, 0.0, 1.0, 0.0], [1.0, 0.0, 1.0, 0.0], 9, 8)
    >>> bool(np.allclose(later.angles_between, clock.angles_between)), abs(later.score - clock.score) < 1e-12
    (True, True)
    >>> rope_clock([1.0, 0.0], [1.0, 0.0, 0.0, 0.0], 0, 1)
    Traceback (most recent call last):
    ...
    attention_math._errors.ScenarioError: key: expected 2 numbers (as many as the query), got 4
    """
    q = as_array("query", query, 1)
    k = as_array("key", key, 1)
    d = _checked_dimension("query", q.shape[0], columns=True)
    if k.shape[0] != d:
        raise ScenarioError(f"key: expected {d} numbers (as many as the query), got {k.shape[0]}")
    spots = _checked_positions([_checked_position("query_position", query_position),
                                _checked_position("key_position", key_position)], 2, "vector")
    return _clock(q, k, spots, rope_frequencies(d, base), rope_pair_dimensions(d, layout), float(base), layout)


def _clock(q: FloatArray, k: FloatArray, spots: FloatArray, theta: FloatArray, dims: IntArray, base: float,
           layout: str) -> RopeClock:
    """The clock of checked inputs: both vectors turned, their pairs' hands, angles and shares."""
    turns = _angles(spots, theta)
    turned = _rotated("query", np.stack([q, k]), turns, dims)
    pairs, turned_pairs = np.stack([q, k])[:, dims], turned[:, dims]  # 2 × d/2 × 2
    hands = np.arctan2(turned_pairs[..., 1], turned_pairs[..., 0])
    apart = hands[1] - hands[0]
    return RopeClock(
        query=owned(q), key=owned(k), query_position=float(spots[0]), key_position=float(spots[1]),
        frequencies=theta, query_turns=owned(turns[0].copy()), key_turns=owned(turns[1].copy()),
        query_pairs=owned(pairs[0].copy()), key_pairs=owned(pairs[1].copy()),
        turned_query_pairs=owned(turned_pairs[0].copy()), turned_key_pairs=owned(turned_pairs[1].copy()),
        query_hands=owned(hands[0].copy()), key_hands=owned(hands[1].copy()),
        angles_between=owned(np.arctan2(np.sin(apart), np.cos(apart))),
        contributions=owned(np.sum(turned_pairs[0] * turned_pairs[1], axis=1)),
        score=float(turned[0] @ turned[1]), base=base, layout=layout,
    )


def _checked_position(name: str, value: Any) -> float:
    """A position: a finite real number (not a bool), or a ScenarioError naming ``name``."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real) or not math.isfinite(float(value)):
        raise ScenarioError(f"{name}: expected a finite number, got {value!r}")
    return float(value)


@dataclass(frozen=True, eq=False)
class RopeTrace:
    """Every intermediate of self-attention with RoPE, as read-only float64 arrays.

    Not an :class:`~attention_math.AttentionTrace`: its scores are ``(R_m q_m)·(R_n k_n)``,
    not ``Q Kᵀ``; the attention without positions is :attr:`plain`, for side by side.

    Attributes
    ----------
    embeddings, w_query, w_key, w_value, queries, keys, values
        As in :class:`~attention_math.AttentionTrace`: ``Q = X W_Q``, ``K = X W_K`` before any
        turn, ``V = X W_V`` (values are never turned).
    positions
        The position of each token, ``n``.
    angles
        ``positions[m]·θ_i``, ``n × d_k/2``.
    rotated_queries, rotated_keys
        ``R_m q_m`` and ``R_m k_m``, ``n × d_k``.
    scores
        ``rotated_queries @ rotated_keysᵀ``, ``n × n``.
    scaled_scores, weights, context
        ``scores / √d_k`` (``-inf`` above the diagonal when causal), their row-wise softmax
        and ``weights @ values``.
    d_k, scaled, causal
        As in :class:`~attention_math.AttentionTrace`.
    base, layout
        The base of the frequencies and the pairing of dimensions.
    plain
        The same attention without RoPE.
    """

    embeddings: FloatArray
    w_query: FloatArray
    w_key: FloatArray
    w_value: FloatArray
    queries: FloatArray
    keys: FloatArray
    values: FloatArray
    positions: FloatArray
    angles: FloatArray
    rotated_queries: FloatArray
    rotated_keys: FloatArray
    scores: FloatArray
    scaled_scores: FloatArray
    weights: FloatArray
    context: FloatArray
    d_k: int
    scaled: bool
    causal: bool
    base: float
    layout: str
    plain: AttentionTrace

    @property
    def n_tokens(self) -> int:
        """The number of tokens ``n``."""
        return int(self.embeddings.shape[0])

    @property
    def sqrt_d_k(self) -> float:
        """The divisor of the scores: ``√d_k``, or 1 when unscaled."""
        return math.sqrt(self.d_k) if self.scaled else 1.0

    @property
    def frequencies(self) -> FloatArray:
        """``θ_i`` for each of the ``d_k/2`` pairs."""
        return rope_frequencies(self.d_k, self.base)


def rope_attention(
    embeddings: npt.ArrayLike,
    w_query: npt.ArrayLike,
    w_key: npt.ArrayLike,
    w_value: npt.ArrayLike,
    *,
    positions: npt.ArrayLike | None = None,
    base: float = 10000.0,
    layout: str = "pairs",
    causal: bool = False,
    scaled: bool = True,
) -> RopeTrace:
    """Self-attention with RoPE: ``softmax((R q)(R k)ᵀ / √d_k) V``, each query and key turned by its position.

    Parameters
    ----------
    embeddings, w_query, w_key, w_value
        As in :func:`~attention_math.self_attention`; ``d_k`` (the columns of ``W_Q``) even.
    positions
        One position per token; ``0, 1, …, n − 1`` when omitted.
    base, layout, causal, scaled
        As in :func:`rope` and :func:`~attention_math.self_attention`.

    Returns
    -------
    RopeTrace
        The turned queries and keys, the scores, weights and context from them, and the same
        attention without positions (:attr:`RopeTrace.plain`); the inputs are not touched.

    Examples
    --------
    Two tokens with the same embedding score alike without positions; with them, a key one
    position away meets the query at an angle of 1 radian, wherever the pair of tokens stands.

    >>> X = [[1.0, 0.0], [1.0, 0.0]]
    >>> eye = [[1.0, 0.0], [0.0, 1.0]]
    >>> trace = rope_attention(X, eye, eye, eye, scaled=False)
    >>> trace.plain.scores
    array([[1., 1.],
           [1., 1.]])
    >>> trace.scores.round(3)  # cos(m − n)
    array([[1.  , 0.54],
           [0.54, 1.  ]])
    >>> bool(np.allclose(rope_attention(X, eye, eye, eye, positions=[7, 8]).scores, trace.scores))
    True
    """
    x, wq, wk, wv = checked_matrices(embeddings, w_query, w_key, w_value)
    d_k = _checked_dimension("w_query", wq.shape[1], columns=True)
    dims = rope_pair_dimensions(d_k, layout)
    spots = _checked_positions(np.arange(x.shape[0]) if positions is None else positions, x.shape[0], "token")
    angles = _angles(spots, rope_frequencies(d_k, base))
    plain = checked_attention(x, wq, wk, wv, scaled=bool(scaled), causal=bool(causal))
    return _rope_trace(plain, spots, angles, dims, float(base), layout)


def _rope_trace(
    plain: AttentionTrace, positions: FloatArray, angles: FloatArray, dims: IntArray, base: float, layout: str
) -> RopeTrace:
    """The plain trace's queries and keys turned, and the attention of the turned ones."""
    rotated_queries = owned(_rotated("w_query", plain.queries, angles, dims))
    rotated_keys = owned(_rotated("w_key", plain.keys, angles, dims))
    scores, scaled_scores, weights = _turned_softmax(rotated_queries, rotated_keys, plain.sqrt_d_k, plain.causal)
    return RopeTrace(
        embeddings=plain.embeddings,
        w_query=plain.w_query,
        w_key=plain.w_key,
        w_value=plain.w_value,
        queries=plain.queries,
        keys=plain.keys,
        values=plain.values,
        positions=owned(positions),
        angles=angles,
        rotated_queries=rotated_queries,
        rotated_keys=rotated_keys,
        scores=scores,
        scaled_scores=scaled_scores,
        weights=weights,
        context=owned(weights @ plain.values),
        d_k=plain.d_k,
        scaled=plain.scaled,
        causal=plain.causal,
        base=base,
        layout=layout,
        plain=plain,
    )


def _turned_softmax(
    queries: FloatArray, keys: FloatArray, divisor: float, causal: bool
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Scores of the turned queries and keys, scaled (masked when causal), and their softmax."""
    with np.errstate(over="ignore", invalid="ignore"):
        scores = queries @ keys.T
        scaled_scores = scores / divisor
        spread = np.max(scaled_scores, axis=1) - np.min(scaled_scores, axis=1)
    # Turning keeps lengths but not dot products: q ⟂ k scores 0 unturned, |q||k| turned.
    if not np.all(np.isfinite(spread)):
        raise ScenarioError("embeddings: numbers too large, the turned scores overflow float64 (keep far below 1e100)")
    if causal:
        scaled_scores[np.triu(np.ones(scores.shape, dtype=bool), k=1)] = -np.inf
    return owned(scores), owned(scaled_scores), owned(softmax(scaled_scores, axis=1))


def _rotated(name: str, matrix: FloatArray, angles: FloatArray, dims: IntArray) -> FloatArray:
    """Each row's pairs ``(a, b)`` turned to ``(a cos φ − b sin φ, a sin φ + b cos φ)``."""
    cos, sin = np.cos(angles), np.sin(angles)
    first, second = matrix[:, dims[:, 0]], matrix[:, dims[:, 1]]
    turned = np.empty_like(matrix)
    with np.errstate(over="ignore", invalid="ignore"):
        turned[:, dims[:, 0]] = first * cos - second * sin
        turned[:, dims[:, 1]] = first * sin + second * cos
    if not np.all(np.isfinite(turned)):
        raise ScenarioError(f"{name}: numbers too large, the turned rows overflow float64 (keep them far below 1e300)")
    return turned


def _angles(positions: FloatArray, theta: FloatArray) -> FloatArray:
    with np.errstate(over="ignore", invalid="ignore"):
        angles = positions[:, np.newaxis] * theta[np.newaxis, :]
    if not np.all(np.isfinite(angles)):
        raise ScenarioError("positions: numbers too large, the angles overflow float64")
    return owned(angles)


def _checked_positions(positions: Any, n: int | None, each: str = "row of x") -> FloatArray:
    """``positions`` as a 1-d float64 copy of finite numbers, ``n`` of them when ``n`` is given."""
    try:
        shape = np.shape(positions)
    except ValueError:  # a ragged list
        raise ScenarioError("positions: expected a flat list of numbers, one per token") from None
    if len(shape) != 1 or shape[0] == 0:
        raise ScenarioError(f"positions: expected a flat, non-empty list of numbers, got shape {shape}")
    if n is not None and shape[0] != n:
        plural = "position" if n == 1 else "positions"
        raise ScenarioError(f"positions: expected {n} {plural} (one per {each}), got {shape[0]}")
    return as_array("positions", positions, 1)


def _checked_dimension(name: str, d: Any, *, columns: bool = False) -> int:
    """``d`` as an even whole number ≥ 2, or a ScenarioError naming ``name``."""
    if isinstance(d, (bool, np.bool_)) or not isinstance(d, numbers.Integral) or int(d) < 2 or int(d) % 2:
        if columns:
            raise ScenarioError(
                f"{name}: expected an even number of columns (dimensions turn in pairs), got {d!r}"
            )
        raise ScenarioError(
            f"{name}: expected an even whole number ≥ 2 (dimensions turn in pairs), got {d!r}"
        )
    return int(d)


def _checked_base(base: Any) -> float:
    if isinstance(base, (bool, np.bool_)) or not isinstance(base, numbers.Real) or not (
        math.isfinite(float(base)) and float(base) > 0
    ):
        raise ScenarioError(f"base: expected a positive finite number (10000 in RoFormer), got {base!r}")
    return float(base)


def _checked_layout(layout: Any) -> str:
    if layout not in ROPE_LAYOUTS:
        raise ScenarioError(f"layout: expected 'pairs' or 'half', got {layout!r}")
    return str(layout)
