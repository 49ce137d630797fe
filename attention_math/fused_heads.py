"""Multi-head attention the efficient way: one big matrix per role, then reshape into heads.

Instead of ``h`` small products ``X W_Q⁽ⁱ⁾`` (``d_in × d_k`` each), put the heads' ``W_Q``
side by side in one ``d_in × h·d_k`` matrix and multiply once; column block ``i`` of ``X W_Q``
is head ``i``'s queries. Reshaping the ``n × h·d_k`` product to ``(n, h, d_k)`` and transposing
to ``(h, n, d_k)`` gives a stack of per-head query matrices, and every head's attention runs as
one batched product. The numbers are those of :func:`~attention_math.multi_head_attention`
(Raschka, *Build a Large Language Model (From Scratch)*, chapter 3, ``MultiHeadAttention``;
PyTorch's ``nn.MultiheadAttention`` packs its weights the same way).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ._core import FloatArray, owned, softmax
from ._errors import ScenarioError
from .multi_head import checked_heads, projected

__all__ = ["FusedHeadsTrace", "fused_multi_head"]

_TOO_LARGE = "embeddings: numbers too large, {} (keep embeddings and weights far below 1e100)"


@dataclass(frozen=True, eq=False)
class FusedHeadsTrace:
    """Every intermediate of multi-head attention computed with one matrix per role.

    Arrays are read-only float64 copies; the per-head inputs are kept as given.

    Attributes
    ----------
    embeddings
        ``X``, ``n × d_in``.
    w_query, w_key, w_value
        The heads' own matrices: ``h × d_in × d_k`` (``h × d_in × d_v`` for values).
    w_out
        ``W_O``, ``h·d_v × d_out``.
    w_query_big, w_key_big
        The heads' ``W_Q`` (``W_K``) side by side, ``d_in × h·d_k``: head ``i``'s columns are
        ``head_columns(i)``.
    w_value_big
        The heads' ``W_V`` side by side, ``d_in × h·d_v``: head ``i``'s are ``value_columns(i)``.
    queries_big, keys_big, values_big
        ``X @ w_query_big`` and so on: ``n × h·d_k`` (``n × h·d_v`` for values).
    queries_split, keys_split, values_split
        The big products reshaped to ``(n, h, d_k)`` and transposed to ``(h, n, d_k)``
        (``d_v`` for values): ``queries_split[i]`` is head ``i``'s ``Q = X W_Q⁽ⁱ⁾``.
    scores
        ``Q Kᵀ`` of every head at once, ``h × n × n``.
    scaled_scores
        ``scores / √d_k`` (or ``scores`` when unscaled); ``-inf`` above each diagonal when causal.
    weights
        The row softmax of ``scaled_scores``, ``h × n × n``.
    context
        ``weights @ values_split``, ``h × n × d_v``: each head's context vectors.
    concat
        ``context`` transposed back to ``(n, h, d_v)`` and reshaped to ``n × h·d_v``: row ``i``
        is ``[z_i of head 1, z_i of head 2, …]``.
    output
        ``concat @ w_out``, ``n × d_out``.
    d_k
        The key size of each head.
    scaled, causal
        Whether the scores were divided by ``√d_k``, and whether the causal mask was applied.
    """

    embeddings: FloatArray
    w_query: FloatArray
    w_key: FloatArray
    w_value: FloatArray
    w_out: FloatArray
    w_query_big: FloatArray
    w_key_big: FloatArray
    w_value_big: FloatArray
    queries_big: FloatArray
    keys_big: FloatArray
    values_big: FloatArray
    queries_split: FloatArray
    keys_split: FloatArray
    values_split: FloatArray
    scores: FloatArray
    scaled_scores: FloatArray
    weights: FloatArray
    context: FloatArray
    concat: FloatArray
    output: FloatArray
    d_k: int
    scaled: bool = True
    causal: bool = False

    @property
    def n_heads(self) -> int:
        """The number of heads ``h``."""
        return int(self.w_query.shape[0])

    @property
    def n_tokens(self) -> int:
        """The number of tokens ``n``."""
        return int(self.embeddings.shape[0])

    @property
    def d_v(self) -> int:
        """The value size of each head."""
        return int(self.w_value.shape[2])

    @property
    def sqrt_d_k(self) -> float:
        """The divisor of the scores: ``√d_k``, or 1 when unscaled."""
        return math.sqrt(self.d_k) if self.scaled else 1.0

    def head_columns(self, head: int) -> slice:
        """Head ``head``'s columns (0-based) in ``w_query_big``, ``w_key_big``, ``queries_big``, ``keys_big``.

        Examples
        --------
        >>> trace = fused_multi_head([[1.0, 2.0]], [[[1.0], [0.0]], [[0.0], [1.0]]],
        ...                          [[[1.0], [0.0]], [[0.0], [1.0]]], [[[1.0], [1.0]]] * 2, [[1.0], [1.0]])
        >>> trace.head_columns(1), trace.queries_big[:, trace.head_columns(1)]
        (slice(1, 2, None), array([[2.]]))
        """
        start = self._head(head) * self.d_k
        return slice(start, start + self.d_k)

    def value_columns(self, head: int) -> slice:
        """Head ``head``'s columns (0-based) in ``w_value_big``, ``values_big`` and ``concat``
        (and its rows of ``w_out``): blocks of ``d_v``, which may differ from ``d_k``."""
        start = self._head(head) * self.d_v
        return slice(start, start + self.d_v)

    def _head(self, head: int) -> int:
        h = self.n_heads
        if isinstance(head, bool) or not isinstance(head, (int, np.integer)) or not -h <= head < h:
            raise ScenarioError(f"head: expected a head index from 0 to {h - 1}, got {head!r}")
        return int(head) % h


def fused_multi_head(
    embeddings: npt.ArrayLike,
    w_query: npt.ArrayLike,
    w_key: npt.ArrayLike,
    w_value: npt.ArrayLike,
    w_out: npt.ArrayLike,
    *,
    causal: bool = False,
    scaled: bool = True,
) -> FusedHeadsTrace:
    """Multi-head attention with one ``d_in × h·d_k`` matrix per role, split into heads by a reshape.

    The arguments of :func:`~attention_math.multi_head_attention`, and its numbers (to rounding).

    Parameters
    ----------
    embeddings
        ``X``, ``n × d_in``.
    w_query, w_key
        One matrix per head: ``h × d_in × d_k``.
    w_value
        ``h × d_in × d_v``.
    w_out
        ``W_O``, ``h·d_v × d_out``.
    causal, scaled
        As in :func:`~attention_math.self_attention`, for every head.

    Returns
    -------
    FusedHeadsTrace
        The big matrices, their products, the split heads, the batched attention, the
        concatenation and the output; the inputs are not touched. A ``ScenarioError`` names the
        argument of the wrong shape, or says which numbers overflow.

    Examples
    --------
    Two heads of ``d_k = d_v = 1`` (head 1 reads the first coordinate, head 2 the second), as in
    :func:`~attention_math.multi_head_attention`'s example:

    >>> X = [[1.0, 0.0], [0.0, 1.0]]
    >>> picks = [[[1.0], [0.0]], [[0.0], [1.0]]]
    >>> trace = fused_multi_head(X, picks, picks, picks, [[0.0, 1.0], [1.0, 0.0]])
    >>> trace.w_query_big
    array([[1., 0.],
           [0., 1.]])
    >>> trace.queries_split.shape, trace.weights[1, 1].round(2)
    ((2, 2, 1), array([0.27, 0.73]))
    >>> trace.concat.round(2)
    array([[0.73, 0.5 ],
           [0.5 , 0.73]])
    >>> trace.output.round(2)
    array([[0.5 , 0.73],
           [0.73, 0.5 ]])
    """
    x, wq, wk, wv, wo = checked_heads(embeddings, w_query, w_key, w_value, w_out)
    return _fused_trace(x, wq, wk, wv, wo, scaled=bool(scaled), causal=bool(causal))


def _fused_trace(
    x: FloatArray, wq: FloatArray, wk: FloatArray, wv: FloatArray, wo: FloatArray, *, scaled: bool, causal: bool
) -> FusedHeadsTrace:
    """The trace of checked inputs (float64 copies that nobody else holds)."""
    bigs = tuple(_side_by_side(stack) for stack in (wq, wk, wv))
    with np.errstate(over="ignore", invalid="ignore"):
        queries_big, keys_big, values_big = (x @ big for big in bigs)
    if not np.all(np.isfinite(values_big)):
        raise ScenarioError(_TOO_LARGE.format("the values overflow float64"))
    queries, keys, values = (_split(product, wq.shape[0]) for product in (queries_big, keys_big, values_big))
    d_k = int(wk.shape[2])
    scores, scaled_scores, weights = _batched_weights(queries, keys, d_k, scaled=scaled, causal=causal)
    context = weights @ values
    concat, output = _joined(context, wo)
    return FusedHeadsTrace(
        embeddings=owned(x), w_query=owned(wq), w_key=owned(wk), w_value=owned(wv), w_out=owned(wo),
        w_query_big=owned(bigs[0]), w_key_big=owned(bigs[1]), w_value_big=owned(bigs[2]),
        queries_big=owned(queries_big), keys_big=owned(keys_big), values_big=owned(values_big),
        queries_split=owned(queries), keys_split=owned(keys), values_split=owned(values),
        scores=owned(scores), scaled_scores=owned(scaled_scores), weights=owned(weights), context=owned(context),
        concat=owned(concat), output=owned(output), d_k=d_k, scaled=scaled, causal=causal,
    )


def _side_by_side(stack: FloatArray) -> FloatArray:
    """``h × d_in × d`` per-head matrices as one ``d_in × h·d``: head ``i`` in columns ``i·d … (i+1)·d − 1``."""
    return np.concatenate(tuple(stack), axis=1)


def _split(product: FloatArray, h: int) -> FloatArray:
    """``n × h·d`` to ``(n, h, d)``, then heads first: ``(h, n, d)`` (a copy, not a view of ``product``)."""
    n, width = product.shape
    return product.reshape(n, h, width // h).transpose(1, 0, 2).copy()


def _batched_weights(
    queries: FloatArray, keys: FloatArray, d_k: int, *, scaled: bool, causal: bool
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Every head's scores, scaled (and masked) scores and weights, as ``h × n × n`` stacks."""
    with np.errstate(over="ignore", invalid="ignore"):
        scores = queries @ keys.transpose(0, 2, 1)
        scaled_scores = scores / math.sqrt(d_k) if scaled else scores.copy()
        spread = np.max(scaled_scores, axis=2) - np.min(scaled_scores, axis=2)
    if not np.all(np.isfinite(scaled_scores)):
        raise ScenarioError(_TOO_LARGE.format("the scores overflow float64"))
    if not np.all(np.isfinite(spread)):
        raise ScenarioError(_TOO_LARGE.format("the scores of one query differ by more than float64 holds"))
    if causal:
        n = scaled_scores.shape[1]
        scaled_scores[:, np.triu(np.ones((n, n), dtype=bool), k=1)] = -np.inf
    return scores, scaled_scores, softmax(scaled_scores, axis=-1)


def _joined(context: FloatArray, w_out: FloatArray) -> tuple[FloatArray, FloatArray]:
    """``(h, n, d_v)`` back to ``(n, h, d_v)`` and to ``n × h·d_v``; and that times ``W_O``, checked."""
    h, n, d_v = context.shape
    concat = context.transpose(1, 0, 2).reshape(n, h * d_v).copy()  # a copy even when the reshape needs none
    return concat, projected(concat, w_out)
