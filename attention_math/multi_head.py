"""Multi-head attention: ``h`` self-attentions side by side, their ``z`` joined, times ``W_O``.

Head ``i`` has its own ``W_Q``, ``W_K`` (``d_in × d_k``) and ``W_V`` (``d_in × d_v``) and
computes ``softmax(Q Kᵀ / √d_k) V`` on the same ``X``; the heads' context vectors are
concatenated row by row (``n × h·d_v``) and projected by ``W_O`` (``h·d_v × d_out``), as in
"Attention Is All You Need" (section 3.2.2) and PyTorch's ``nn.MultiheadAttention`` (whose
packed weights hold the heads' matrices side by side).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ._core import AttentionTrace, FloatArray, as_array, as_matrix, checked_attention, owned
from ._errors import ScenarioError

__all__ = ["MultiHeadTrace", "multi_head_attention"]


@dataclass(frozen=True, eq=False)
class MultiHeadTrace:
    """Every intermediate of multi-head attention, as read-only float64 arrays.

    Attributes
    ----------
    heads
        One :class:`~attention_math.AttentionTrace` per head, in order.
    concat
        The heads' context vectors side by side, ``n × h·d_v``: row ``i`` is
        ``[z_i of head 1, z_i of head 2, …]``.
    w_out
        ``W_O``, ``h·d_v × d_out``.
    output
        ``concat @ w_out``, ``n × d_out``: one output row per token.
    """

    heads: tuple[AttentionTrace, ...]
    concat: FloatArray
    w_out: FloatArray
    output: FloatArray

    @property
    def n_heads(self) -> int:
        """The number of heads ``h``."""
        return len(self.heads)


def multi_head_attention(
    embeddings: npt.ArrayLike,
    w_query: npt.ArrayLike,
    w_key: npt.ArrayLike,
    w_value: npt.ArrayLike,
    w_out: npt.ArrayLike,
    *,
    causal: bool = False,
    scaled: bool = True,
) -> MultiHeadTrace:
    """Compute ``concat(head_1, …, head_h) W_O``, each head ``softmax(Q Kᵀ / √d_k) V``.

    Parameters
    ----------
    embeddings
        ``X``, ``n × d_in``, shared by every head.
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
    MultiHeadTrace
        Each head's trace, the concatenation and the output; the inputs are not touched. A
        ``ScenarioError`` names the field of an array of the wrong shape, or numbers that overflow.

    Examples
    --------
    Two heads of ``d_k = d_v = 1``: head 1 reads the first coordinate, head 2 the second;
    ``W_O`` swaps the two halves of ``concat``.

    >>> X = [[1.0, 0.0], [0.0, 1.0]]
    >>> picks = [[[1.0], [0.0]], [[0.0], [1.0]]]
    >>> trace = multi_head_attention(X, picks, picks, picks, [[0.0, 1.0], [1.0, 0.0]])
    >>> trace.n_heads, trace.concat.shape, trace.heads[1].weights[1].round(2)
    (2, (2, 2), array([0.27, 0.73]))
    >>> trace.concat.round(2)
    array([[0.73, 0.5 ],
           [0.5 , 0.73]])
    >>> trace.output.round(2)
    array([[0.5 , 0.73],
           [0.73, 0.5 ]])
    >>> multi_head_attention(X, picks, picks, picks, [[1.0, 0.0]])
    Traceback (most recent call last):
    ...
    attention_math._errors.ScenarioError: w_out: expected 2 rows (heads × d_v = 2 × 1), got 1
    """
    x, wq, wk, wv, wo = checked_heads(embeddings, w_query, w_key, w_value, w_out)
    heads = tuple(
        checked_attention(x.copy(), wq[h].copy(), wk[h].copy(), wv[h].copy(), scaled=bool(scaled), causal=bool(causal))
        for h in range(wq.shape[0])
    )
    return combine_heads(heads, wo)


def combine_heads(heads: tuple[AttentionTrace, ...], w_out: FloatArray) -> MultiHeadTrace:
    """The multi-head trace of computed heads: their ``z`` side by side, times ``w_out`` (checked)."""
    concat = np.concatenate([head.context for head in heads], axis=1)
    output = projected(concat, w_out)
    return MultiHeadTrace(heads=heads, concat=owned(concat), w_out=owned(w_out.copy()), output=owned(output))


def projected(concat: FloatArray, w_out: FloatArray) -> FloatArray:
    """``concat @ w_out``, refused in one line if it overflows."""
    with np.errstate(over="ignore", invalid="ignore"):
        output: FloatArray = concat @ w_out
    if not np.all(np.isfinite(output)):
        raise ScenarioError("w_out: numbers too large, the output overflows float64 (keep weights far below 1e100)")
    return output


def checked_heads(
    embeddings: npt.ArrayLike,
    w_query: npt.ArrayLike,
    w_key: npt.ArrayLike,
    w_value: npt.ArrayLike,
    w_out: npt.ArrayLike,
    *,
    grouped: bool = False,
) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray, FloatArray]:
    """``X``, the per-head stacks and ``W_O`` as float64 copies, each checked, and their shapes against each other.

    ``grouped``: ``w_key`` and ``w_value`` hold the key/value heads of grouped-query attention, a number that
    divides the query heads, rather than one per query head.
    """
    x = as_matrix("embeddings", embeddings)
    wq, wk, wv = (as_array(name, value, 3) for name, value in (
        ("w_query", w_query), ("w_key", w_key), ("w_value", w_value)
    ))
    wo = as_matrix("w_out", w_out)
    h, d_in = wq.shape[0], x.shape[1]
    _check_head_counts(h, wk, wv, grouped=grouped)
    for name, stack in (("w_query", wq), ("w_key", wk), ("w_value", wv)):
        if stack.shape[1] != d_in:
            raise ScenarioError(
                f"{name}: expected {d_in} rows per head (one per embedding dimension), got {stack.shape[1]}"
            )
    if wk.shape[2] != wq.shape[2]:
        raise ScenarioError(f"w_key: expected {wq.shape[2]} columns to match w_query (d_k), got {wk.shape[2]}")
    d_v, heads = wv.shape[2], "query heads" if grouped else "heads"
    if wo.shape[0] != h * d_v:
        raise ScenarioError(f"w_out: expected {h * d_v} rows ({heads} × d_v = {h} × {d_v}), got {wo.shape[0]}")
    return x, wq, wk, wv, wo


def _check_head_counts(h: int, wk: FloatArray, wv: FloatArray, *, grouped: bool) -> None:
    """As many key and value heads as query heads ``h``; grouped, as many of each, a number dividing ``h``."""
    if not grouped:
        for name, stack in (("w_key", wk), ("w_value", wv)):
            if stack.shape[0] != h:
                raise ScenarioError(f"{name}: expected {h} heads like w_query, got {stack.shape[0]}")
        return
    g = wk.shape[0]
    if wv.shape[0] != g:
        raise ScenarioError(f"w_value: expected {g} key/value heads like w_key, got {wv.shape[0]}")
    if h % g:
        raise ScenarioError(f"w_key: expected key/value heads that divide the {h} query heads, got {g}")
