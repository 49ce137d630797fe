"""Masked (causal) self-attention and dropout on the attention weights: lecture 7's arithmetic.

A decoder writes left to right, so query ``i`` may only use keys ``0 … i`` (rows are tokens, as
everywhere in :mod:`attention_math`). The mask sets every score above the diagonal to ``-inf``
before the softmax (:func:`masked_scores`); ``exp(-inf) = 0``, so the future gets weight 0 and
each row still sums to 1 over the past. :func:`renormalised_weights` takes the other route that
Raschka (*Build a Large Language Model (From Scratch)*, chapter 3) shows first: softmax the whole
row, zero the future, divide by what is left; the full softmax's denominator cancels, so the
weights are the same. :func:`attention_dropout` is the dropout applied to the weights in
training.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from ._core import FloatArray, as_array, as_matrix, owned, softmax
from ._errors import ScenarioError

__all__ = [
    "DropoutTrace",
    "RenormalisedWeights",
    "attention_dropout",
    "causal_mask",
    "masked_scores",
    "renormalised_weights",
]

BoolArray = npt.NDArray[np.bool_]

_MAX_SEED = 2**63 - 1


def causal_mask(n: int) -> BoolArray:
    """The causal mask of ``n`` tokens: ``True`` where the key comes after the query.

    Row ``i`` is query ``i``, column ``j`` key ``j``; ``mask[i, j]`` is ``j > i``, the strict
    upper triangle. The diagonal is never masked: a token may always look at itself.

    Parameters
    ----------
    n
        The number of tokens, a whole number from 1.

    Returns
    -------
    numpy.ndarray
        A read-only ``n × n`` array of booleans.

    Raises
    ------
    ScenarioError
        If ``n`` is not a whole number of at least 1.

    Examples
    --------
    >>> causal_mask(3)
    array([[False,  True,  True],
           [False, False,  True],
           [False, False, False]])
    >>> causal_mask(0)
    Traceback (most recent call last):
    ...
    attention_math._errors.ScenarioError: n: expected a whole number of tokens, at least 1, got 0
    """
    if isinstance(n, (bool, np.bool_)) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ScenarioError(f"n: expected a whole number of tokens, at least 1, got {n!r}")
    mask: BoolArray = np.triu(np.ones((int(n), int(n)), dtype=bool), k=1)
    mask.setflags(write=False)
    return mask


def masked_scores(scaled_scores: npt.ArrayLike) -> FloatArray:
    """The scaled scores with every future key set to ``-inf``, ready for the softmax.

    Parameters
    ----------
    scaled_scores
        ``Q Kᵀ / √d_k`` before masking: a square ``n × n`` matrix of finite numbers, row ``i``
        query ``i`` against every key.

    Returns
    -------
    numpy.ndarray
        A read-only float64 copy, ``-inf`` above the diagonal; the input is not touched.

    Raises
    ------
    ScenarioError
        Naming ``scaled_scores``, if it is not a square matrix of finite numbers.

    Examples
    --------
    >>> masked_scores([[1.0, 2.0], [3.0, 4.0]])
    array([[  1., -inf],
           [  3.,   4.]])
    >>> softmax(masked_scores([[1.0, 2.0], [3.0, 4.0]])).round(2)
    array([[1.  , 0.  ],
           [0.27, 0.73]])
    """
    scores = _square_scores(scaled_scores)
    scores[causal_mask(scores.shape[0])] = -np.inf
    return owned(scores)


@dataclass(frozen=True, eq=False)
class RenormalisedWeights:
    """Causal attention weights by the other route: softmax everything, zero the future, renormalise.

    Row ``i`` of ``full`` sums to 1 over every key; keeping only keys ``0 … i`` leaves
    ``row_sums[i]``; dividing by it makes the row sum to 1 again. The full softmax's denominator
    cancels in that division, so ``weights`` is the softmax of :func:`masked_scores`, the
    weights of ``self_attention(…, causal=True)``.

    Attributes
    ----------
    scaled_scores
        The scaled scores given, unmasked, ``n × n``.
    full
        The row softmax over every key, future included (the unmasked weights).
    zeroed
        ``full`` with every future key (above the diagonal) set to 0.
    row_sums
        ``zeroed``'s row sums, length ``n``: what is left of each row (1 for the last row).
    weights
        ``zeroed / row_sums`` row by row: each row sums to 1 again, 0 above the diagonal.
    """

    scaled_scores: FloatArray
    full: FloatArray
    zeroed: FloatArray
    row_sums: FloatArray
    weights: FloatArray


def renormalised_weights(scaled_scores: npt.ArrayLike) -> RenormalisedWeights:
    """Mask after the softmax: softmax each full row, zero the future, divide by the row's new sum.

    The same weights as masking with ``-inf`` before the softmax:
    ``exp(s_j) / Σ_all exp(s) ÷ (Σ_past exp(s) / Σ_all exp(s)) = exp(s_j) / Σ_past exp(s)``.

    In float64 the division is exact only while the past's share of the full softmax is a normal
    number. When a future key outscores every past one by more than about 708, that share
    underflows to 0 (``row_sums`` shows it, as it is) and ``zeroed / row_sums`` would be 0/0; those
    rows divide the same ratio taken before normalising, ``exp(s_j − m) / Σ_past exp(s − m)`` with
    ``m`` the row's largest past score (both parts of the ratio multiplied by one number, so it is
    unchanged), which is why ``weights`` stays the masked softmax for any scores.

    Parameters
    ----------
    scaled_scores
        ``Q Kᵀ / √d_k`` before masking: a square ``n × n`` matrix of finite numbers.

    Returns
    -------
    RenormalisedWeights
        The full softmax, the zeroed rows, their sums and the weights, as read-only float64 arrays.

    Raises
    ------
    ScenarioError
        Naming ``scaled_scores``, if it is not a square matrix of finite numbers.

    Examples
    --------
    >>> route = renormalised_weights([[1.0, 2.0], [3.0, 4.0]])
    >>> route.full.round(2)
    array([[0.27, 0.73],
           [0.27, 0.73]])
    >>> route.zeroed.round(2), route.row_sums.round(2)
    (array([[0.27, 0.  ],
           [0.27, 0.73]]), array([0.27, 1.  ]))
    >>> route.weights.round(2)
    array([[1.  , 0.  ],
           [0.27, 0.73]])
    """
    scores = _square_scores(scaled_scores)
    future = causal_mask(scores.shape[0])
    full = softmax(scores)
    zeroed = np.where(future, 0.0, full)
    row_sums = np.sum(zeroed, axis=1)
    weights = np.empty_like(zeroed)
    normal = row_sums >= np.finfo(np.float64).tiny
    weights[normal] = zeroed[normal] / row_sums[normal, np.newaxis]
    if not np.all(normal):
        weights[~normal] = _past_ratio(scores[~normal], future[~normal])
    return RenormalisedWeights(
        scaled_scores=owned(scores), full=owned(full), zeroed=owned(zeroed), row_sums=owned(row_sums),
        weights=owned(weights),
    )


def _past_ratio(scores: FloatArray, future: BoolArray) -> FloatArray:
    """``exp(s − m)`` over the past divided by its sum, ``m`` each row's largest past score."""
    past = np.where(future, -np.inf, scores)
    # Scores further apart than float64 holds differ by -inf: exp gives 0, as it should.
    with np.errstate(over="ignore"):
        exps = np.exp(past - np.max(past, axis=1, keepdims=True))
    ratio: FloatArray = exps / np.sum(exps, axis=1, keepdims=True)
    return ratio


@dataclass(frozen=True, eq=False)
class DropoutTrace:
    """Dropout on attention weights, as in training: some weights dropped, the rest scaled up.

    Attributes
    ----------
    p
        The probability that a weight is dropped.
    seed
        The seed of ``numpy.random.default_rng`` that drew ``kept``.
    before
        The weights given (a read-only copy).
    kept
        Read-only booleans of ``before``'s shape: ``default_rng(seed).random(before.shape) >= p``.
    scale
        ``1 / (1 − p)``: a kept weight's factor, so each weight keeps its expected value.
    weights
        ``before * kept * scale``; dropped weights are exactly 0.
    row_sums
        ``weights``' sums along the last axis: no longer 1, on purpose (a row sums to 1 only on
        average over seeds).
    """

    p: float
    seed: int
    before: FloatArray
    kept: BoolArray
    scale: float
    weights: FloatArray
    row_sums: FloatArray


def attention_dropout(weights: npt.ArrayLike, p: float, *, seed: int) -> DropoutTrace:
    """Drop each attention weight with probability ``p`` and scale the kept ones by ``1 / (1 − p)``.

    Training only: at inference the weights are used as they are. The draw is exactly
    ``kept = numpy.random.default_rng(seed).random(weights.shape) >= p`` (one uniform number in
    [0, 1) per weight, in row-major order), so a notebook can replay it; with ``p = 0`` every
    weight is kept and the weights come back unchanged.

    Parameters
    ----------
    weights
        Attention weights: an ``n × n`` matrix, or ``h × n × n`` for several heads, finite numbers.
    p
        The dropout probability, from 0 up to (not including) 1.
    seed
        A whole number from 0 to 2⁶³ − 1: the same seed drops the same weights.

    Returns
    -------
    DropoutTrace
        The mask, the scale, the dropped-out weights and their row sums; the input is not touched.

    Raises
    ------
    ScenarioError
        Naming ``weights``, ``p`` or ``seed``, whichever is not as described.

    Examples
    --------
    >>> drop = attention_dropout([[1.0, 0.0], [0.25, 0.75]], 0.5, seed=1)
    >>> drop.kept, drop.scale
    (array([[ True,  True],
           [False,  True]]), 2.0)
    >>> drop.weights, drop.row_sums
    (array([[2. , 0. ],
           [0. , 1.5]]), array([2. , 1.5]))

    The draw, replayed:

    >>> np.random.default_rng(1).random((2, 2)) >= 0.5
    array([[ True,  True],
           [False,  True]])
    >>> attention_dropout([[1.0]], 1.0, seed=1)
    Traceback (most recent call last):
    ...
    attention_math._errors.ScenarioError: p: expected a dropout probability from 0 up to (not including) 1, got 1.0
    """
    given = _weights_array(weights)
    rate, seed = _probability(p), _seed(seed)
    kept: BoolArray = np.random.default_rng(seed).random(given.shape) >= rate
    kept.setflags(write=False)
    scale = 1.0 / (1.0 - rate)
    dropped = np.where(kept, given * scale, 0.0)
    return DropoutTrace(
        p=rate, seed=seed, before=owned(given), kept=kept, scale=scale, weights=owned(dropped),
        row_sums=owned(np.sum(dropped, axis=-1)),
    )


def _square_scores(scaled_scores: Any) -> FloatArray:
    """``scaled_scores`` as a float64 copy of a square matrix of finite numbers, or a ScenarioError."""
    scores = as_matrix("scaled_scores", scaled_scores)
    if scores.shape[0] != scores.shape[1]:
        raise ScenarioError(
            f"scaled_scores: expected a square n × n matrix (a row and a column per token), got shape {scores.shape}"
        )
    return scores


def _weights_array(weights: Any) -> FloatArray:
    """``weights`` as a float64 copy of an ``n × n`` or ``h × n × n`` array of finite numbers."""
    try:
        ndim = np.ndim(weights)
    except ValueError:  # ragged rows: as_array says so, naming the argument
        ndim = 2
    return as_array("weights", weights, 3 if ndim == 3 else 2)


def _probability(p: Any) -> float:
    """``p`` as a float in [0, 1), or a ScenarioError naming ``p``."""
    if isinstance(p, (bool, np.bool_)) or not isinstance(p, numbers.Real) or not 0.0 <= float(p) < 1.0:
        raise ScenarioError(f"p: expected a dropout probability from 0 up to (not including) 1, got {p!r}")
    return float(p)


def _seed(seed: Any) -> int:
    """``seed`` as an int from 0 to 2⁶³ − 1, or a ScenarioError naming ``seed``."""
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)) or not 0 <= seed <= _MAX_SEED:
        raise ScenarioError(f"seed: expected a whole number from 0 to 2**63 - 1, got {seed!r}")
    return int(seed)

