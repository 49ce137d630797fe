"""Scaled dot-product self-attention, with every intermediate kept.

Row convention throughout, as in PyTorch: ``X`` is ``n × d_in`` (one row per token), each
weight matrix is ``d_in × d_k`` (``d_in × d_v`` for values), so ``Q = X @ W_Q`` is ``n × d_k``,
``Q @ K.T`` is ``n × n`` and the softmax runs along each row.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from ._errors import ScenarioError

__all__ = [
    "AttentionTrace",
    "FloatArray",
    "QueryStep",
    "as_array",
    "as_matrix",
    "checked_attention",
    "checked_matrices",
    "frozen",
    "owned",
    "self_attention",
    "softmax",
]

FloatArray = npt.NDArray[np.float64]


_TOO_LARGE = "embeddings: numbers too large, {} (keep embeddings and weights far below 1e100)"


def owned(array: FloatArray) -> FloatArray:
    """Mark an array this module made (and shares with nobody) read-only, without a copy."""
    array.setflags(write=False)
    return array


def frozen(array: npt.ArrayLike) -> FloatArray:
    """A read-only float64 copy, so a trace can never be changed after the fact."""
    copy = np.array(array, dtype=np.float64, copy=True)
    copy.setflags(write=False)
    return copy


def as_matrix(name: str, value: Any) -> FloatArray:
    """``value`` as a float64 copy of a non-empty 2-d matrix of finite numbers, or a ScenarioError."""
    return as_array(name, value, 2)


def as_array(name: str, value: Any, ndim: int) -> FloatArray:
    """``value`` as a float64 copy with ``ndim`` dimensions, none empty, every entry finite."""
    try:
        raw = np.array(value, copy=True)
    except (TypeError, ValueError) as error:
        raise ScenarioError(f"{name}: expected a matrix of numbers ({error})") from None
    # Strings and booleans are not numbers, though numpy would turn "0.5" and True into floats.
    if raw.dtype.kind == "O":
        if not all(
            isinstance(entry, numbers.Real) and not isinstance(entry, (bool, np.bool_)) for entry in raw.flat
        ):
            raise ScenarioError(f"{name}: expected a matrix of numbers")
    elif raw.dtype.kind not in "iuf":
        raise ScenarioError(f"{name}: expected numbers, got an array of {raw.dtype}")
    try:
        matrix = raw.astype(np.float64)
    except OverflowError:  # a Python int beyond float64
        raise ScenarioError(f"{name}: expected finite numbers, found one too large for float64") from None
    if matrix.ndim != ndim or 0 in matrix.shape:
        what = "matrix" if ndim == 2 else "array (one matrix per head)"
        raise ScenarioError(f"{name}: expected a non-empty {ndim}-d {what}, got shape {matrix.shape}")
    if not np.all(np.isfinite(matrix)):
        raise ScenarioError(f"{name}: expected finite numbers, found NaN or infinity")
    return matrix


def softmax(scores: npt.ArrayLike, axis: int = -1) -> FloatArray:
    """Numerically stable softmax along ``axis``.

    The maximum of each slice is subtracted before exponentiating, so huge scores do not
    overflow; ``-inf`` entries (masked positions) get weight exactly 0.

    Parameters
    ----------
    scores
        Real numbers; ``-inf`` is allowed as long as each slice has one finite entry.
    axis
        The axis that sums to 1.

    Returns
    -------
    numpy.ndarray
        Float64 weights of the same shape, each slice summing to 1.

    Raises
    ------
    ScenarioError
        If a score is NaN or ``+inf``, or a whole slice is ``-inf``.

    Examples
    --------
    >>> softmax([5.0, 6.0]).round(2)
    array([0.27, 0.73])
    >>> softmax([500.0, 505.0]).round(3)
    array([0.007, 0.993])
    >>> softmax([1e6, 0.0])
    array([1., 0.])
    """
    try:
        values = np.array(scores, dtype=np.float64, copy=True)
    except (TypeError, ValueError) as error:
        raise ScenarioError(f"scores: expected real numbers ({error})") from None
    if values.size == 0:
        raise ScenarioError("scores: expected at least one score, got none")
    if np.any(np.isnan(values)):
        raise ScenarioError("scores: expected real numbers, found NaN")
    if np.any(values == np.inf):
        raise ScenarioError("scores: expected finite numbers or -inf, found +inf")
    peak = np.max(values, axis=axis, keepdims=True)
    if np.any(peak == -np.inf):
        raise ScenarioError("scores: every entry of a row is -inf; nothing to attend to")
    # Scores further apart than float64 can hold differ by -inf: exp gives 0, as it should.
    with np.errstate(over="ignore"):
        exps = np.exp(values - peak)
    weights: FloatArray = exps / np.sum(exps, axis=axis, keepdims=True)
    return weights


@dataclass(frozen=True, eq=False)
class QueryStep:
    """One query's arithmetic, term by term, as a lecturer writes it on the board.

    Attributes
    ----------
    index
        0-based position of the query token (on screen tokens count from 1).
    embedding
        ``x_i``, the query token's row of ``X``, length ``d_in``.
    w_query
        ``W_Q``, ``d_in × d_k``.
    query_terms
        ``query_terms[m, c] = x_i[m] * W_Q[m, c]``, ``d_in × d_k``: the products that add up
        (column by column, to rounding) to ``q_i[c]``, an entry of ``Q`` computed by hand.
    query
        ``q_i``, length ``d_k``.
    keys
        Every key ``k_j``, ``n × d_k``.
    products
        ``products[j, m] = q_i[m] * k_j[m]``: the terms of each dot product, ``n × d_k``.
    scores
        ``q_i · k_j`` for every key ``j`` (the sums of ``products``'s rows).
    d_k, sqrt_d_k
        The key size and the divisor (``sqrt_d_k`` is 1 when the trace is unscaled).
    scaled_scores
        ``scores / sqrt_d_k``; ``-inf`` where a causal mask hides the key.
    max_score
        The largest scaled score, subtracted before ``exp`` for stability.
    exps
        ``exp(scaled_score - max_score)`` for every key (0 where masked).
    exp_sum
        The sum of ``exps``.
    weights
        ``exps / exp_sum``: the attention weights of this query, summing to 1.
    values
        Every value ``v_j``, ``n × d_v``.
    weighted_values
        ``weights[j] * v_j``, ``n × d_v``: the arrows laid tip to tail.
    context
        ``z_i``, the sum of ``weighted_values``, length ``d_v``.
    running_weights
        ``running_weights[j] = weights[0] + … + weights[j]``: the running total of the
        weights; the last entry is 1 (to rounding).
    running_context
        ``running_context[j] = weighted_values[0] + … + weighted_values[j]``, ``n × d_v``: the
        points the tip-to-tail chain of arrows passes. The last row is ``context`` exactly (a
        sum in another order may differ from it in the last bits; the chain ends at ``z_i``).
    top_key
        The 0-based index of the largest weight (the first of equal ones).

    Examples
    --------
    >>> from attention_math import preset
    >>> step = preset("dog-chased-ball").trace().query_step(4)
    >>> step.embedding, step.query_terms[:, 0].round(2), step.query[0].round(2)
    (array([0.7, 0.6, 0.9]), array([0.49, 0.06, 0.18]), np.float64(0.73))
    >>> step.running_weights.round(2)
    array([0.17, 0.34, 0.59, 0.69, 1.  ])
    >>> bool(np.array_equal(step.running_context[-1], step.context)), step.top_key
    (True, 4)
    """

    index: int
    embedding: FloatArray
    w_query: FloatArray
    query_terms: FloatArray
    query: FloatArray
    keys: FloatArray
    products: FloatArray
    scores: FloatArray
    d_k: int
    sqrt_d_k: float
    scaled_scores: FloatArray
    max_score: float
    exps: FloatArray
    exp_sum: float
    weights: FloatArray
    values: FloatArray
    weighted_values: FloatArray
    context: FloatArray
    running_weights: FloatArray
    running_context: FloatArray
    top_key: int


@dataclass(frozen=True, eq=False)
class AttentionTrace:
    """Every intermediate of ``softmax(Q Kᵀ / √d_k) V`` for one input, as float64 arrays.

    Arrays are read-only copies: a trace never changes, and never shares memory with the
    caller's inputs. Rows are tokens (the row convention of PyTorch).

    Attributes
    ----------
    embeddings
        ``X``, ``n × d_in``.
    w_query, w_key, w_value
        ``W_Q`` and ``W_K`` (``d_in × d_k``), ``W_V`` (``d_in × d_v``).
    queries, keys, values
        ``Q = X W_Q``, ``K = X W_K`` (``n × d_k``), ``V = X W_V`` (``n × d_v``).
    scores
        ``Q Kᵀ``, ``n × n``; row ``i`` holds query ``i`` against every key.
    scaled_scores
        ``scores / √d_k`` (equal to ``scores`` when unscaled); ``-inf`` above the diagonal
        when causal.
    weights
        Row-wise softmax of ``scaled_scores``; exactly 0 where masked.
    context
        ``weights @ values``, ``n × d_v``: the context vectors ``z_i``.
    d_k
        The number of columns of ``W_K``.
    scaled, causal
        Whether scores were divided by ``√d_k``, and whether the causal mask was applied.
    """

    embeddings: FloatArray
    w_query: FloatArray
    w_key: FloatArray
    w_value: FloatArray
    queries: FloatArray
    keys: FloatArray
    values: FloatArray
    scores: FloatArray
    scaled_scores: FloatArray
    weights: FloatArray
    context: FloatArray
    d_k: int
    scaled: bool = True
    causal: bool = False

    @property
    def n_tokens(self) -> int:
        """The number of tokens ``n``."""
        return int(self.embeddings.shape[0])

    @property
    def sqrt_d_k(self) -> float:
        """The divisor of the scores: ``√d_k``, or 1 when unscaled."""
        return math.sqrt(self.d_k) if self.scaled else 1.0

    def query_step(self, i: int) -> QueryStep:
        """Explain query ``i`` (0-based: on screen token 5 is ``query_step(4)``).

        Parameters
        ----------
        i
            The query's row, ``0 <= i < n`` (negative indices count from the end).

        Returns
        -------
        QueryStep
            The products, scores, stable-softmax pieces, weighted values and ``z_i``.

        Raises
        ------
        ScenarioError
            If ``i`` is out of range.

        Examples
        --------
        >>> from attention_math import preset
        >>> step = preset("dog-chased-ball").trace().query_step(4)
        >>> step.scores[:3].round(2)
        array([2.89, 2.82, 3.42])
        >>> step.weights.round(2)
        array([0.17, 0.16, 0.25, 0.1 , 0.31])
        """
        n = self.n_tokens
        if isinstance(i, bool) or not isinstance(i, (int, np.integer)) or not -n <= i < n:
            raise ScenarioError(f"query: expected a token index from 0 to {n - 1}, got {i!r}")
        row = int(i) % n
        return QueryStep(
            index=row,
            embedding=frozen(self.embeddings[row]),
            w_query=self.w_query,
            query_terms=owned(self.embeddings[row][:, np.newaxis] * self.w_query),
            query=frozen(self.queries[row]),
            keys=self.keys,
            products=owned(self.queries[row][np.newaxis, :] * self.keys),
            scores=frozen(self.scores[row]),
            d_k=self.d_k,
            sqrt_d_k=self.sqrt_d_k,
            values=self.values,
            context=frozen(self.context[row]),
            **_softmax_pieces(self.scaled_scores[row], self.weights[row], self.values, self.context[row]),
        )


def _softmax_pieces(
    scaled_scores: FloatArray, weights: FloatArray, values: FloatArray, context: FloatArray
) -> dict[str, Any]:
    """The stable softmax of one row of scaled scores, its weights and their running sums."""
    max_score = float(np.max(scaled_scores))
    exps = np.exp(scaled_scores - max_score)
    weighted_values = weights[:, np.newaxis] * values
    running_context = np.cumsum(weighted_values, axis=0)
    running_context[-1] = context  # the chain ends at z_i exactly
    return {
        "scaled_scores": frozen(scaled_scores),
        "max_score": max_score,
        "exps": owned(exps),
        "exp_sum": float(np.sum(exps)),
        "weights": frozen(weights),
        "weighted_values": owned(weighted_values),
        "running_weights": owned(np.cumsum(weights)),
        "running_context": owned(running_context),
        "top_key": int(np.argmax(weights)),
    }


def self_attention(
    embeddings: npt.ArrayLike,
    w_query: npt.ArrayLike,
    w_key: npt.ArrayLike,
    w_value: npt.ArrayLike,
    *,
    scaled: bool = True,
    causal: bool = False,
) -> AttentionTrace:
    """Compute ``softmax(Q Kᵀ / √d_k) V`` with ``Q = X W_Q``, ``K = X W_K``, ``V = X W_V``.

    Parameters
    ----------
    embeddings
        ``X``, ``n × d_in``, one row per token.
    w_query, w_key
        ``d_in × d_k`` each.
    w_value
        ``d_in × d_v``.
    scaled
        Divide the scores by ``√d_k`` (the default, as in the paper).
    causal
        Mask every key after the query (scores ``-inf``, weights 0), as in a decoder.

    Returns
    -------
    AttentionTrace
        Every intermediate, as read-only float64 copies; the inputs are not touched.

    Raises
    ------
    ScenarioError
        If a matrix is not a non-empty 2-d array of finite numbers, or the shapes disagree.

    Examples
    --------
    >>> X = [[1.0, 0.0], [0.0, 1.0]]
    >>> trace = self_attention(X, X, X, X)
    >>> trace.scores
    array([[1., 0.],
           [0., 1.]])
    >>> trace.weights.round(3)
    array([[0.67, 0.33],
           [0.33, 0.67]])
    >>> self_attention(X, X, X, X, causal=True).weights.round(3)
    array([[1.  , 0.  ],
           [0.33, 0.67]])
    """
    x, wq, wk, wv = checked_matrices(embeddings, w_query, w_key, w_value)
    return checked_attention(x, wq, wk, wv, scaled=scaled, causal=causal)


def checked_attention(
    x: FloatArray, wq: FloatArray, wk: FloatArray, wv: FloatArray, *, scaled: bool, causal: bool
) -> AttentionTrace:
    """The trace of checked matrices (float64 copies that nobody else holds)."""
    with np.errstate(over="ignore", invalid="ignore"):
        queries = x @ wq
        keys = x @ wk
        values = x @ wv
        scores = queries @ keys.T
    if not np.all(np.isfinite(values)):
        raise ScenarioError(_TOO_LARGE.format("the values overflow float64"))
    d_k = int(wk.shape[1])
    # Work on n × n arrays in place: a trace of 4096 tokens should cost about what the
    # one-line numpy formula costs (bench/ measures it).
    scaled_scores = scores / math.sqrt(d_k) if scaled else scores.copy()
    weights = _masked_softmax_in_place(scaled_scores, causal)
    return AttentionTrace(
        embeddings=owned(x),
        w_query=owned(wq),
        w_key=owned(wk),
        w_value=owned(wv),
        queries=owned(queries),
        keys=owned(keys),
        values=owned(values),
        scores=owned(scores),
        scaled_scores=owned(scaled_scores),
        weights=owned(weights),
        context=owned(weights @ values),
        d_k=d_k,
        scaled=scaled,
        causal=causal,
    )


def checked_matrices(
    embeddings: npt.ArrayLike, w_query: npt.ArrayLike, w_key: npt.ArrayLike, w_value: npt.ArrayLike
) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
    """``X, W_Q, W_K, W_V`` as float64 copies, each checked, and their shapes against each other."""
    x = as_matrix("embeddings", embeddings)
    wq = as_matrix("w_query", w_query)
    wk = as_matrix("w_key", w_key)
    wv = as_matrix("w_value", w_value)
    d_in = x.shape[1]
    for name, matrix in (("w_query", wq), ("w_key", wk), ("w_value", wv)):
        if matrix.shape[0] != d_in:
            raise ScenarioError(
                f"{name}: expected {d_in} rows (one per embedding dimension), "
                f"got {matrix.shape[0]}"
            )
    if wq.shape[1] != wk.shape[1]:
        raise ScenarioError(
            f"w_key: expected {wq.shape[1]} columns to match w_query (d_k), got {wk.shape[1]}"
        )
    return x, wq, wk, wv


def _masked_softmax_in_place(scaled_scores: FloatArray, causal: bool) -> FloatArray:
    """Check the scaled scores are finite, mask them (in place) when causal; the row softmax."""
    with np.errstate(over="ignore", invalid="ignore"):
        peak = np.max(scaled_scores, axis=1, keepdims=True)
        # NaN and ±inf show up in a row's max or min; the min is needed anyway: the
        # walkthrough shows every scaled score minus its row's largest, which must be finite.
        low = np.min(scaled_scores, axis=1, keepdims=True)
        spread = peak - low
    if not (np.all(np.isfinite(peak)) and np.all(np.isfinite(low))):
        raise ScenarioError(_TOO_LARGE.format("the scores overflow float64"))
    if not np.all(np.isfinite(spread)):
        raise ScenarioError(_TOO_LARGE.format("the scores of one query differ by more than float64 holds"))
    if causal:
        above_diagonal = np.triu(np.ones(scaled_scores.shape, dtype=bool), k=1)
        scaled_scores[above_diagonal] = -np.inf
        # The diagonal is never masked, so each row keeps a finite entry.
        peak = np.max(scaled_scores, axis=1, keepdims=True)
    weights: FloatArray = np.subtract(scaled_scores, peak)
    np.exp(weights, out=weights)
    weights /= np.sum(weights, axis=1, keepdims=True)
    return weights
