"""Grouped-query attention: ``h`` query heads share ``g`` key/value heads, ``h/g`` to a group.

Multi-head attention gives every head its own ``W_K`` and ``W_V``, so a KV cache keeps ``h``
keys and values per token and layer. Grouped-query attention (Ainslie et al. 2023, arXiv
2305.13245) keeps ``g`` of them: query head ``i`` uses key/value head ``i // (h/g)``, the order
of the paper's groups and of Hugging Face's ``repeat_kv``, which repeats each key/value head
``h/g`` times side by side. ``g = h`` is multi-head attention; ``g = 1`` is multi-query
attention (Shazeer 2019, arXiv 1911.02150), one key and value for all the heads. Each query
head then computes ``softmax(Q Kᵀ / √d_k) V`` with its group's ``K`` and ``V``; the heads' context
vectors are joined and projected by ``W_O`` as in multi-head attention.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ._core import as_array, checked_attention
from ._errors import ScenarioError
from .multi_head import MultiHeadTrace, checked_heads, combine_heads

__all__ = ["GroupedQueryTrace", "grouped_query_attention", "shared_key_value_heads"]


@dataclass(frozen=True, eq=False)
class GroupedQueryTrace(MultiHeadTrace):
    """Every intermediate of grouped-query attention: a multi-head trace whose heads share K and V.

    Attributes
    ----------
    heads
        One :class:`~attention_math.AttentionTrace` per query head, in order; the heads of one
        group have the same ``keys`` and ``values``.
    concat, w_out, output
        As in :class:`~attention_math.MultiHeadTrace`.
    n_kv_heads
        ``g``, the number of key/value heads.

    Examples
    --------
    Six query heads in two groups of three; four query heads cannot be shared among six
    key/value heads:

    >>> rng = np.random.default_rng(0)
    >>> X, w_query, w_kv = rng.normal(size=(4, 3)), rng.normal(size=(6, 3, 2)), rng.normal(size=(2, 3, 2))
    >>> trace = grouped_query_attention(X, w_query, w_kv, w_kv, np.eye(12))
    >>> trace.groups, trace.kv_head_of(4), trace.output.shape
    (((0, 1, 2), (3, 4, 5)), 1, (4, 12))
    >>> six = rng.normal(size=(6, 3, 2))
    >>> grouped_query_attention(X, w_query[:4], six, six, np.eye(8))
    Traceback (most recent call last):
    ...
    attention_math._errors.ScenarioError: w_key: expected key/value heads that divide the 4 query heads, got 6
    """

    n_kv_heads: int

    @property
    def group_size(self) -> int:
        """``h/g``: the query heads that share one key/value head."""
        return self.n_heads // self.n_kv_heads

    @property
    def groups(self) -> tuple[tuple[int, ...], ...]:
        """The 0-based query heads of each key/value head: ``groups[j]`` uses key/value head ``j``."""
        size = self.group_size
        return tuple(tuple(range(j * size, (j + 1) * size)) for j in range(self.n_kv_heads))

    def kv_head_of(self, i: int) -> int:
        """The key/value head query head ``i`` uses (both 0-based): ``i // (h/g)``.

        Raises
        ------
        ScenarioError
            If ``i`` is not a query head.
        """
        if isinstance(i, bool) or not isinstance(i, (int, np.integer)) or not 0 <= i < self.n_heads:
            raise ScenarioError(f"query_head: expected a head index from 0 to {self.n_heads - 1}, got {i!r}")
        return int(i) // self.group_size

    @property
    def d_out(self) -> int:
        """The output's columns: the same ``n × d_out`` as multi-head attention with this ``W_O``."""
        return int(self.output.shape[1])


def shared_key_value_heads(w_key: npt.ArrayLike, w_value: npt.ArrayLike) -> int:
    """``g``: the fewest key/value heads that one ``W_K`` and ``W_V`` per query head come to.

    A scenario may give every query head its own ``W_K`` and ``W_V`` (``h × d_in × d_k``, ``h × d_in
    × d_v``), equal within each group: grouped-query attention then keeps one of each per group. The
    groups are grouped-query attention's, ``h/g`` neighbouring heads (query head ``i`` in group
    ``i // (h/g)``); ``g`` is the smallest divisor of ``h`` for which every head's two matrices equal
    its group's first head's, exactly. ``h`` (nothing shared) is multi-head attention, 1 multi-query.

    Parameters
    ----------
    w_key, w_value
        One matrix per query head: ``h × d_in × d_k`` and ``h × d_in × d_v``.

    Returns
    -------
    int
        ``g``; ``w_key[::h // g]`` and ``w_value[::h // g]`` are the key/value heads. A
        ``ScenarioError`` names a stack that is not 3-d, or of another number of heads than ``w_key``.

    Examples
    --------
    Four heads, the first two sharing one ``W_K`` and ``W_V``, the last two another:

    >>> a, b = np.zeros((2, 1)), np.ones((2, 1))
    >>> shared_key_value_heads([a, a, b, b], [a, a, b, b]), shared_key_value_heads([a, a, b, b], [a, b, a, b])
    (2, 4)
    >>> shared_key_value_heads([a, a, a], [b, b, b]), shared_key_value_heads([a, b, b, b], [a, b, b, b])
    (1, 4)
    """
    wk, wv = as_array("w_key", w_key, 3), as_array("w_value", w_value, 3)
    h = int(wk.shape[0])
    if wv.shape[0] != h:
        raise ScenarioError(f"w_value: expected {h} heads like w_key, got {wv.shape[0]}")
    for g in (g for g in range(1, h + 1) if h % g == 0):
        size = h // g
        if all(np.array_equal(stack[i], stack[i - i % size]) for stack in (wk, wv) for i in range(h)):
            return g
    return h  # not reached: with g = h every head is its own group


def grouped_query_attention(
    embeddings: npt.ArrayLike,
    w_query: npt.ArrayLike,
    w_key: npt.ArrayLike,
    w_value: npt.ArrayLike,
    w_out: npt.ArrayLike,
    *,
    causal: bool = False,
    scaled: bool = True,
) -> GroupedQueryTrace:
    """Compute grouped-query attention: query head ``i`` attends with key/value head ``i // (h/g)``.

    Parameters
    ----------
    embeddings
        ``X``, ``n × d_in``, shared by every head.
    w_query
        One matrix per query head: ``h × d_in × d_k``.
    w_key, w_value
        One matrix per key/value head: ``g × d_in × d_k`` and ``g × d_in × d_v``; ``g`` divides ``h``.
    w_out
        ``W_O``, ``h·d_v × d_out``.
    causal, scaled
        As in :func:`~attention_math.self_attention`, for every head.

    Returns
    -------
    GroupedQueryTrace
        Each query head's trace, the concatenation and the output; the inputs are not touched.
        A ``ScenarioError`` names the field of an array of the wrong shape, a number of
        key/value heads that does not divide the query heads, or numbers that overflow.

    Examples
    --------
    Four query heads of ``d_k = d_v = 1``; heads 0 and 1 share the first coordinate as key and value.

    >>> X = [[1.0, 0.0], [0.0, 1.0]]
    >>> picks = [[[1.0], [0.0]], [[0.0], [1.0]]]
    >>> queries = [[[1.0], [0.0]], [[0.0], [1.0]], [[1.0], [0.0]], [[0.0], [1.0]]]
    >>> trace = grouped_query_attention(X, queries, picks, picks, np.eye(4))
    >>> trace.n_heads, trace.n_kv_heads, trace.groups, trace.kv_head_of(3)
    (4, 2, ((0, 1), (2, 3)), 1)
    >>> trace.concat.round(2)
    array([[0.73, 0.5 , 0.73, 0.5 ],
           [0.5 , 0.73, 0.5 , 0.73]])
    >>> trace.heads[0].keys.ravel(), trace.heads[1].keys.ravel(), trace.heads[2].keys.ravel()
    (array([1., 0.]), array([1., 0.]), array([0., 1.]))
    """
    x, wq, wk, wv, wo = checked_heads(embeddings, w_query, w_key, w_value, w_out, grouped=True)
    size = wq.shape[0] // wk.shape[0]
    heads = tuple(
        checked_attention(
            x.copy(), wq[i].copy(), wk[i // size].copy(), wv[i // size].copy(), scaled=bool(scaled), causal=bool(causal)
        )
        for i in range(wq.shape[0])
    )
    joined = combine_heads(heads, wo)
    return GroupedQueryTrace(joined.heads, joined.concat, joined.w_out, joined.output, n_kv_heads=wk.shape[0])

