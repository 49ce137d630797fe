"""FlashAttention and the online softmax: exact attention by tiles, the ``n × n`` matrix never stored.

The online softmax (Milakov & Gimelshein 2018, arXiv 1805.02867) walks a row of scores in
tiles keeping the running maximum ``m`` and the running sum ``ℓ = Σ exp(s − m)``; when a tile
raises the maximum, ``ℓ`` and the running output are multiplied by ``exp(m_old − m_new)``
(at most 1). At the end ``output / ℓ`` is the softmax-weighted sum of the values, exactly, and
no ``exp`` ever sees a positive number, so none overflows (:func:`online_softmax_row`).

FlashAttention (Dao et al. 2022, arXiv 2205.14135, Algorithm 1) does this for blocks of
queries × blocks of keys and values held in fast on-chip memory (SRAM), the whole matrix of
scores never written to slow memory (HBM) (:func:`flash_attention`). Its Theorem 2: standard
attention (Algorithm 0) makes ``Θ(n·d + n²)`` accesses to slow memory, FlashAttention
``Θ(n²·d²/M)``, ``M`` the size of the SRAM; :func:`memory_traffic` counts both.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from ._core import FloatArray, as_matrix, owned
from ._errors import ScenarioError

__all__ = [
    "FlashTile",
    "FlashTrace",
    "MemoryTraffic",
    "OnlineRowTrace",
    "OnlineStep",
    "a100_traffic",
    "flash_attention",
    "memory_traffic",
    "online_softmax_row",
]


# -- the online softmax of one row -----------------------------------------------------------


@dataclass(frozen=True, eq=False)
class OnlineStep:
    """One tile of keys in the walk along a row: the running ``m``, ``ℓ`` and output before and after.

    Attributes
    ----------
    keys
        The keys of the tile (0-based).
    scores
        Their scores.
    max_before, max_after
        The running maximum ``m`` before the tile (``-inf`` before the first) and after it.
    rescale
        ``exp(max_before − max_after)``: what the running sum and output are multiplied by,
        at most 1; exactly 1 when the tile does not raise the maximum, 0 at the first tile.
    exps
        ``exp(score − max_after)`` for each key of the tile (0 for a ``-inf`` score).
    sum_before, sum_after
        The running sum ``ℓ = Σ exp(s − m)`` over the keys seen: ``sum_after = rescale ·
        sum_before + Σ exps``.
    output_before, output_after
        The running output ``Σ exp(s − m) v``, not yet divided by ``ℓ``:
        ``output_after = rescale · output_before + exps @ values[keys]``.
    """

    keys: range
    scores: FloatArray
    max_before: float
    max_after: float
    rescale: float
    exps: FloatArray
    sum_before: float
    sum_after: float
    output_before: FloatArray
    output_after: FloatArray


@dataclass(frozen=True, eq=False)
class OnlineRowTrace:
    """One query's row of scores walked in tiles of keys, and the softmax-weighted sum it ends with.

    Attributes
    ----------
    scores
        The row, one score per key.
    values
        ``n × d_v``, one value per key.
    block_size
        Keys per tile (the last tile may hold fewer).
    steps
        One :class:`OnlineStep` per tile, in order.
    max_score, exp_sum
        The final ``m`` (the row's largest score) and ``ℓ = Σ exp(s − m)``.
    unnormalised_output
        The final running output ``Σ exp(s − m) v``.
    output
        ``unnormalised_output / exp_sum``: equal to ``softmax(scores) @ values``.
    """

    scores: FloatArray
    values: FloatArray
    block_size: int
    steps: tuple[OnlineStep, ...]
    max_score: float
    exp_sum: float
    unnormalised_output: FloatArray
    output: FloatArray

    @property
    def weights(self) -> FloatArray:
        """``exp(scores − max_score) / exp_sum``: the softmax of the row, from the final ``m`` and ``ℓ``."""
        with np.errstate(invalid="ignore"):
            exps = np.where(self.scores == -np.inf, 0.0, np.exp(self.scores - self.max_score))
        return owned(exps / self.exp_sum)

    # The walk tile by tile as arrays (what a table of the walk shows): one entry per key, or per tile.
    @property
    def tile_exps(self) -> FloatArray:
        """``exp(s − m)`` of each key, ``m`` the running maximum after the key's own tile: the exps as its tile
        made them, before any later tile rescaled them (0 for a ``-inf`` score). One per key.

        Examples
        --------
        >>> trace = online_softmax_row([1.0, 0.0, 3.0], [[1.0], [0.0], [0.0]], block_size=2)
        >>> trace.tile_exps.round(4)  # the first tile against m = 1, the second against m = 3
        array([1.    , 0.3679, 1.    ])
        """
        return owned(np.concatenate([step.exps for step in self.steps]))

    @property
    def tile_sums(self) -> FloatArray:
        """``Σ exp(s − m)`` over each tile's own keys (what the tile adds to ``ℓ``). One per tile."""
        return owned(np.array([float(np.sum(step.exps)) for step in self.steps]))

    @property
    def maxima(self) -> FloatArray:
        """The running maximum ``m`` after each tile. One per tile."""
        return owned(np.array([step.max_after for step in self.steps]))

    @property
    def rescales(self) -> FloatArray:
        """Each tile's ``exp(m_old − m_new)``, by which ``ℓ`` and the output so far are multiplied. One per tile.

        Examples
        --------
        >>> trace = online_softmax_row([1.0, 0.0, 3.0, 2.0], [[1.0], [0.0], [0.0], [1.0]], block_size=2)
        >>> trace.maxima, trace.rescales.round(4), trace.sums.round(4)
        (array([1., 3.]), array([0.    , 0.1353]), array([1.3679, 1.553 ]))
        """
        return owned(np.array([step.rescale for step in self.steps]))

    @property
    def sums(self) -> FloatArray:
        """The running sum ``ℓ`` after each tile. One per tile."""
        return owned(np.array([step.sum_after for step in self.steps]))

    @property
    def outputs(self) -> FloatArray:
        """The running output ``Σ exp(s − m) v`` after each tile (not yet divided by ``ℓ``): tiles × ``d_v``."""
        return owned(np.array([step.output_after for step in self.steps]).reshape(len(self.steps), -1))


def online_softmax_row(scores_row: npt.ArrayLike, values: npt.ArrayLike, *, block_size: int) -> OnlineRowTrace:
    """Walk one row of scores in tiles of ``block_size`` keys: ``softmax(row) @ values`` without the whole row at once.

    Parameters
    ----------
    scores_row
        One score per key, finite or ``-inf`` (a masked key), at least one finite.
    values
        ``n × d_v``, one row per key.
    block_size
        Keys per tile, at least 1; the last tile holds what is left.

    Returns
    -------
    OnlineRowTrace
        Every tile's ``m``, rescale factor, ``ℓ`` and running output, and the final output;
        read-only float64 arrays, the inputs not touched.

    Examples
    --------
    The second tile raises the maximum from 1 to 3: ``ℓ`` and the output seen so far are
    multiplied by ``exp(1 − 3)``.

    >>> trace = online_softmax_row([1.0, 0.0, 3.0, 2.0], [[1.0], [0.0], [0.0], [1.0]], block_size=2)
    >>> [(step.max_before, step.max_after) for step in trace.steps]
    [(-inf, 1.0), (1.0, 3.0)]
    >>> round(trace.steps[1].rescale, 4), round(math.exp(-2.0), 4)
    (0.1353, 0.1353)
    >>> round(trace.exp_sum, 4), trace.output.round(4)
    (1.553, array([0.324]))
    >>> from attention_math import softmax
    >>> (softmax([1.0, 0.0, 3.0, 2.0]) @ [[1.0], [0.0], [0.0], [1.0]]).round(4)
    array([0.324])
    """
    row, table = _checked_row(scores_row, values)
    size = _checked_block("block_size", block_size, "keys")
    peak, total, running = -math.inf, 0.0, owned(np.zeros(table.shape[1]))  # nothing seen yet
    steps = []
    for keys in _blocks(row.size, size):
        steps.append(_online_step(row, table, keys, peak, total, running))
        peak, total, running = steps[-1].max_after, steps[-1].sum_after, steps[-1].output_after
    if not np.all(np.isfinite(running)):
        raise ScenarioError("values: numbers too large, the weighted sum overflows float64 (keep far below 1e300)")
    return OnlineRowTrace(
        scores=owned(row), values=owned(table), block_size=size, steps=tuple(steps), max_score=peak,
        exp_sum=total, unnormalised_output=running, output=owned(running / total),
    )


def _online_step(
    row: FloatArray, table: FloatArray, keys: range, peak: float, total: float, running: FloatArray
) -> OnlineStep:
    """One tile of the walk: the new maximum, the rescale factor, the new sum and running output."""
    tile = row[keys.start : keys.stop]
    new_peak = max(peak, float(np.max(tile)))
    # exp(−inf − (−inf)) is undefined; a maximum that did not rise rescales by 1.
    rescale = 1.0 if new_peak == peak else math.exp(peak - new_peak)
    with np.errstate(over="ignore", invalid="ignore"):  # scores further apart than float64 holds: exp 0
        exps = np.where(tile == -np.inf, 0.0, np.exp(tile - new_peak))
    with np.errstate(over="ignore", invalid="ignore"):  # huge values: one ScenarioError at the end
        new_running = rescale * running + exps @ table[keys.start : keys.stop]
    return OnlineStep(
        keys=keys, scores=owned(tile.copy()), max_before=peak, max_after=new_peak, rescale=rescale,
        exps=owned(exps), sum_before=total, sum_after=rescale * total + float(np.sum(exps)),
        output_before=running, output_after=owned(new_running),
    )


# -- FlashAttention ----------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class FlashTile:
    """One block of queries × one block of keys, as Algorithm 1 (lines 8–13) computes it on chip.

    The vectors have one entry per query of the block; ``m``, ``ℓ`` and ``O`` are the block's
    running statistics and output, read from slow memory before and written back after.

    Attributes
    ----------
    block_row, block_column
        The tile's place in the grid: query block ``i`` and key block ``j`` (0-based).
    query_block, key_block
        Its queries and keys (0-based rows of ``Q`` and ``K``).
    scores
        ``S_ij = Q_i K_jᵀ / √d_k`` (unscaled if asked), ``-inf`` where a causal mask hides a key.
    tile_max
        ``m̃_ij``, each row's largest score in the tile (``-inf`` if the mask hides all of it).
    exps
        ``P̃_ij = exp(S_ij − m̃_ij)`` (0 where masked).
    tile_sum
        ``ℓ̃_ij``, the row sums of ``exps``.
    max_before, max_after
        ``m_i`` and ``m_i_new = max(m_i, m̃_ij)``.
    sum_before, sum_after
        ``ℓ_i`` and ``ℓ_i_new = rescale · ℓ_i + tile_rescale · ℓ̃_ij``.
    rescale
        ``exp(m_i − m_i_new)``: the factor of the old sum and output, at most 1 (0 at a
        block's first tile, where ``m_i = -inf``).
    tile_rescale
        ``exp(m̃_ij − m_i_new)``: the factor of the tile's own sums, at most 1. In each row one
        of the two factors is exactly 1.
    output_before, output_after
        ``O_i`` before and after, normalised as Algorithm 1 keeps it:
        ``O_i_new = (rescale · ℓ_i · O_i + tile_rescale · P̃_ij V_j) / ℓ_i_new``.
    """

    block_row: int
    block_column: int
    query_block: range
    key_block: range
    scores: FloatArray
    tile_max: FloatArray
    exps: FloatArray
    tile_sum: FloatArray
    max_before: FloatArray
    max_after: FloatArray
    sum_before: FloatArray
    sum_after: FloatArray
    rescale: FloatArray
    tile_rescale: FloatArray
    output_before: FloatArray
    output_after: FloatArray


@dataclass(frozen=True, eq=False)
class FlashTrace:
    """Attention computed by tiles (FlashAttention's Algorithm 1), with every tile and the memory traffic.

    Attributes
    ----------
    queries, keys, values
        ``Q`` (``n × d_k``), ``K`` (``n_keys × d_k``), ``V`` (``n_keys × d_v``).
    output
        ``softmax(Q Kᵀ / √d_k) V``, ``n × d_v``.
    max_score, exp_sum
        The final ``m`` and ``ℓ`` of each query: its largest score and ``Σ exp(s − m)``.
    tiles
        Every :class:`FlashTile` in the order Algorithm 1 visits them: key blocks in the outer
        loop, query blocks in the inner one; a tile a causal mask hides entirely is skipped.
    block_size, query_block_size
        ``B_c`` (keys per block) and ``B_r`` (queries per block); the last blocks may be smaller.
    d_k, scaled, causal
        The key size, whether scores were divided by ``√d_k``, whether the causal mask applied.
    reads, writes
        Numbers read from and written to slow memory by the run (lines 2, 6, 8, 12 and 13 of
        Algorithm 1): ``K_j, V_j`` once each, ``Q_i, O_i, ℓ_i, m_i`` read and ``O_i, ℓ_i, m_i``
        written back at every tile, and ``O, ℓ, m`` initialised.
    """

    queries: FloatArray
    keys: FloatArray
    values: FloatArray
    output: FloatArray
    max_score: FloatArray
    exp_sum: FloatArray
    tiles: tuple[FlashTile, ...]
    block_size: int
    query_block_size: int
    d_k: int
    scaled: bool
    causal: bool
    reads: int
    writes: int

    @property
    def grid_shape(self) -> tuple[int, int]:
        """``(T_r, T_c)``: the number of query blocks and of key blocks."""
        return (-(-self.queries.shape[0] // self.query_block_size), -(-self.keys.shape[0] // self.block_size))


def flash_attention(
    queries: npt.ArrayLike,
    keys: npt.ArrayLike,
    values: npt.ArrayLike,
    *,
    block_size: int,
    query_block_size: int | None = None,
    scaled: bool = True,
    causal: bool = False,
) -> FlashTrace:
    """Compute ``softmax(Q Kᵀ / √d_k) V`` by tiles, as FlashAttention's Algorithm 1, counting slow-memory traffic.

    For each block of keys and values (outer loop), for each block of queries (inner loop):
    the tile's scores, row maxima ``m̃`` and sums ``ℓ̃``, and the block's running ``m``, ``ℓ``
    and ``O`` updated by ``exp(m − m_new)`` and ``exp(m̃ − m_new)``; never all the scores at once.

    Parameters
    ----------
    queries
        ``Q``, ``n × d_k``.
    keys, values
        ``K`` (``n_keys × d_k``) and ``V`` (``n_keys × d_v``).
    block_size, query_block_size
        ``B_c`` keys and ``B_r`` queries per tile, at least 1 (``B_r = B_c`` when omitted).
    scaled, causal
        Divide the scores by ``√d_k``; hide every key after the query (key ``j > i``), skipping
        the tiles hidden entirely (neither computed nor loaded).

    Returns
    -------
    FlashTrace
        The output, every tile, and the numbers read and written; the inputs are not touched.

    Examples
    --------
    >>> Q = [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]
    >>> V = [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]
    >>> trace = flash_attention(Q, Q, V, block_size=2, query_block_size=1)
    >>> trace.grid_shape, len(trace.tiles), [(t.block_row, t.block_column) for t in trace.tiles][:4]
    ((3, 2), 6, [(0, 0), (1, 0), (2, 0), (0, 1)])
    >>> trace.output.round(3)
    array([[3.   , 4.   ],
           [3.407, 4.407],
           [3.51 , 4.51 ]])
    >>> from attention_math import softmax
    >>> bool(np.allclose(trace.output, softmax(np.array(Q) @ np.array(Q).T / np.sqrt(2)) @ V))
    True
    >>> trace.reads, trace.writes  # 3·(2+2) for K, V + 2 passes × 3·(2+2+2) for Q, O, ℓ, m
    (48, 36)
    """
    q, k, v = _checked_qkv(queries, keys, values)
    key_size, query_size = _checked_blocks(block_size, query_block_size)
    return _flash_trace(q, k, v, key_size, query_size, bool(scaled), bool(causal))


def _flash_trace(
    q: FloatArray, k: FloatArray, v: FloatArray, key_size: int, query_size: int, scaled: bool, causal: bool
) -> FlashTrace:
    """Algorithm 1 on checked inputs: every tile, the output, and the traffic counted as it runs."""
    slow = _SlowMemory()
    # O, m and ℓ: slow memory, as Algorithm 1 line 2 initialises it.
    output, peak, total = np.zeros((q.shape[0], v.shape[1])), np.full(q.shape[0], -np.inf), np.zeros(q.shape[0])
    tiles = []
    for place in _algorithm_1(q.shape[0], k.shape[0], q.shape[1], v.shape[1], query_size, key_size, causal, slow):
        tile = _tile(q, k, v, output, peak, total, place, math.sqrt(q.shape[1]) if scaled else 1.0, causal)
        tiles.append(tile)
        rows = slice(tile.query_block.start, tile.query_block.stop)
        output[rows], peak[rows], total[rows] = tile.output_after, tile.max_after, tile.sum_after
    if not np.all(np.isfinite(output)):
        raise ScenarioError("values: numbers too large, the output overflows float64 (keep far below 1e300)")
    return FlashTrace(
        queries=owned(q), keys=owned(k), values=owned(v), output=owned(output), max_score=owned(peak),
        exp_sum=owned(total), tiles=tuple(tiles), block_size=key_size, query_block_size=query_size,
        d_k=int(q.shape[1]), scaled=scaled, causal=causal, reads=slow.reads, writes=slow.writes,
    )


def _tile(
    q: FloatArray, k: FloatArray, v: FloatArray, output: FloatArray, peak: FloatArray, total: FloatArray,
    place: tuple[int, range, int, range], divisor: float, causal: bool,
) -> FlashTile:
    """Algorithm 1 lines 9–12 for one tile, on copies of the block's ``O``, ``m`` and ``ℓ``."""
    i, rows, j, columns = place
    queries, block_keys = q[rows.start : rows.stop], k[columns.start : columns.stop]
    with np.errstate(over="ignore", invalid="ignore"):
        scores = (queries @ block_keys.T) / divisor
    if not np.all(np.isfinite(scores)):
        raise ScenarioError("queries: numbers too large, the scores overflow float64 (keep far below 1e100)")
    if causal:
        later = np.arange(columns.start, columns.stop)[np.newaxis, :] > np.arange(rows.start, rows.stop)[:, np.newaxis]
        scores[later] = -np.inf
    tile_max = np.max(scores, axis=1)
    max_before, sum_before = peak[rows.start : rows.stop].copy(), total[rows.start : rows.stop].copy()
    output_before = output[rows.start : rows.stop].copy()
    max_after = np.maximum(max_before, tile_max)  # finite: every query sees key 0, in the first tile
    # Scores further apart than float64 holds differ by −inf: exp gives 0, as it should. A row the
    # mask hides entirely in this tile adds nothing: exp(−inf) = 0, never exp(−inf + inf).
    with np.errstate(over="ignore"):
        exps = np.exp(scores - np.where(tile_max == -np.inf, 0.0, tile_max)[:, np.newaxis])
        rescale, tile_rescale = np.exp(max_before - max_after), np.exp(tile_max - max_after)
    tile_sum = np.sum(exps, axis=1)
    sum_after = rescale * sum_before + tile_rescale * tile_sum
    with np.errstate(over="ignore", invalid="ignore"):  # huge values: one ScenarioError at the end
        mixed = (rescale * sum_before)[:, np.newaxis] * output_before + tile_rescale[:, np.newaxis] * (
            exps @ v[columns.start : columns.stop]
        )
        output_after = mixed / sum_after[:, np.newaxis]
    return FlashTile(
        block_row=i, block_column=j, query_block=rows, key_block=columns, scores=owned(scores),
        tile_max=owned(tile_max), exps=owned(exps), tile_sum=owned(tile_sum), max_before=owned(max_before),
        max_after=owned(max_after), sum_before=owned(sum_before), sum_after=owned(sum_after),
        rescale=owned(rescale), tile_rescale=owned(tile_rescale), output_before=owned(output_before),
        output_after=owned(output_after),
    )


# -- memory traffic ------------------------------------------------------------------------------


@dataclass
class _SlowMemory:
    """Numbers moved between slow memory (HBM) and the chip, counted as an algorithm moves them."""

    reads: int = 0
    writes: int = 0


def _algorithm_1(
    n: int, n_keys: int, d_k: int, d_v: int, query_size: int, key_size: int, causal: bool, slow: _SlowMemory
) -> Iterator[tuple[int, range, int, range]]:
    """FlashAttention's loops (Algorithm 1): each tile it visits, its loads and stores counted in ``slow``."""
    slow.writes += n * (d_v + 2)  # line 2: O, ℓ and m initialised in slow memory
    query_blocks = list(enumerate(_blocks(n, query_size)))
    for j, columns in enumerate(_blocks(n_keys, key_size)):
        # A query block whose last query comes before the block's first key sees none of it.
        met = [(i, rows) for i, rows in query_blocks if not (causal and rows.stop - 1 < columns.start)]
        if not met:
            continue
        slow.reads += len(columns) * (d_k + d_v)  # line 6: K_j and V_j
        for i, rows in met:
            slow.reads += len(rows) * (d_k + d_v + 2)  # line 8: Q_i, O_i, ℓ_i and m_i
            yield i, rows, j, columns
            slow.writes += len(rows) * (d_v + 2)  # lines 12 and 13: O_i, ℓ_i and m_i


def _algorithm_0(n: int, n_keys: int, d_k: int, d_v: int, slow: _SlowMemory) -> None:
    """Standard attention's traffic (Algorithm 0): ``S`` and ``P`` written to slow memory and read back."""
    slow.reads += (n + n_keys) * d_k  # line 1: Q and K
    slow.writes += n * n_keys  # line 1: S
    slow.reads += n * n_keys  # line 2: S
    slow.writes += n * n_keys  # line 2: P
    slow.reads += n * n_keys + n_keys * d_v  # line 3: P and V
    slow.writes += n * d_v  # line 3: O


@dataclass(frozen=True, eq=False)
class MemoryTraffic:
    """Numbers read from and written to slow memory by standard attention and by FlashAttention.

    Counted by walking each algorithm's loops (the loops :func:`flash_attention` runs), for
    ``n`` queries and keys of ``d`` numbers each, values too.

    Attributes
    ----------
    n, d
        The sequence length and the head dimension.
    sram
        ``M``, on-chip memory in numbers: as given, or ``4·d·block_size`` (what Algorithm 1
        line 1 asks for blocks of ``block_size``: ``Q_i``, ``K_j``, ``V_j`` and ``O_i``).
    block_size, query_block_size
        ``B_c`` and ``B_r``.
    causal
        Whether tiles a causal mask hides entirely were skipped.
    standard_reads, standard_writes
        Algorithm 0: ``Q``, ``K``, ``V`` read, ``S`` and ``P`` written and read back, ``O`` written.
    flash_reads, flash_writes
        Algorithm 1, as in :attr:`FlashTrace.reads` and :attr:`FlashTrace.writes`.
    """

    n: int
    d: int
    sram: int
    block_size: int
    query_block_size: int
    causal: bool
    standard_reads: int
    standard_writes: int
    flash_reads: int
    flash_writes: int

    @property
    def standard_accesses(self) -> int:
        """Reads and writes of standard attention."""
        return self.standard_reads + self.standard_writes

    @property
    def flash_accesses(self) -> int:
        """Reads and writes of FlashAttention."""
        return self.flash_reads + self.flash_writes

    @property
    def standard_formula(self) -> int:
        """``n·d + n²``: Theorem 2's ``Θ(n·d + n²)`` without its constant."""
        return self.n * self.d + self.n**2

    @property
    def flash_formula(self) -> float:
        """``n²·d²/M``: Theorem 2's ``Θ(n²·d²/M)`` without its constant."""
        return self.n**2 * self.d**2 / self.sram

    @property
    def ratio(self) -> float:
        """How many times fewer accesses FlashAttention makes."""
        return self.standard_accesses / self.flash_accesses


def memory_traffic(
    n: int,
    d: int,
    *,
    sram: int | None = None,
    block_size: int | None = None,
    query_block_size: int | None = None,
    causal: bool = False,
) -> MemoryTraffic:
    """Count the slow-memory traffic of standard attention and of FlashAttention for ``n`` tokens of ``d``.

    Parameters
    ----------
    n, d
        The sequence length and the head dimension (``d_k = d_v = d``).
    sram
        ``M``, on-chip memory in numbers; the blocks are then Algorithm 1 line 1's:
        ``B_c = ⌈M / 4d⌉``, ``B_r = min(⌈M / 4d⌉, d)``.
    block_size, query_block_size
        ``B_c`` and ``B_r`` (``B_r = B_c`` when omitted), instead of ``sram``.
    causal
        Skip the tiles a causal mask hides entirely.

    Returns
    -------
    MemoryTraffic
        The counts of both algorithms, and Theorem 2's formulas beside them.

    Examples
    --------
    >>> traffic = memory_traffic(8, 2, block_size=4)
    >>> traffic.standard_reads, traffic.standard_writes  # 3·n·d + 2·n², 2·n² + n·d
    (176, 144)
    >>> traffic.flash_reads, traffic.flash_writes  # n·2d + 2 passes × n·(2d + 2); 3 × n·(d + 2)
    (128, 96)
    >>> memory_traffic(1024, 64, sram=51200).block_size, memory_traffic(1024, 64, sram=51200).query_block_size
    (200, 64)
    """
    size = _checked_block("n", n, "tokens")
    width = _checked_block("d", d, "numbers per head")
    memory, key_size, query_size = _sram_and_blocks(width, sram, block_size, query_block_size)
    standard, flash = _SlowMemory(), _SlowMemory()
    _algorithm_0(size, size, width, width, standard)
    for _ in _algorithm_1(size, size, width, width, query_size, key_size, bool(causal), flash):
        pass  # the loads and stores alone: no numbers to compute
    return MemoryTraffic(
        n=size, d=width, sram=memory, block_size=key_size, query_block_size=query_size, causal=bool(causal),
        standard_reads=standard.reads, standard_writes=standard.writes,
        flash_reads=flash.reads, flash_writes=flash.writes,
    )


def _sram_and_blocks(d: int, sram: Any, block_size: Any, query_block_size: Any) -> tuple[int, int, int]:
    """``M``, ``B_c`` and ``B_r``: the blocks from ``M`` (Algorithm 1 line 1), or ``M`` from the blocks."""
    if (sram is None) == (block_size is None):
        raise ScenarioError("sram: expected either sram (M, numbers) or block_size, not both or neither")
    if sram is not None:
        if query_block_size is not None:
            raise ScenarioError("query_block_size: expected none with sram (Algorithm 1 line 1 sets it)")
        memory = _checked_block("sram", sram, "numbers")
        key_size = -(-memory // (4 * d))
        return memory, key_size, min(key_size, d)
    key_size, query_size = _checked_blocks(block_size, query_block_size)
    return 4 * d * key_size, key_size, query_size


def a100_traffic(n: int = 1024, d: int = 64, *, sram_kb: int = 100, bytes_per_number: int = 2) -> MemoryTraffic:
    """:func:`memory_traffic` at the paper's sizes: ``M`` of about 100 KB of SRAM, in fp16 numbers.

    FlashAttention section 2.1: "the A100 GPU has 40-80GB of high bandwidth memory (HBM) with
    bandwidth 1.5-2.0TB/s and 192KB of on-chip SRAM per each of 108 streaming multiprocessors";
    section 3.2: "For typical values of d (64-128) and M (around 100KB), d² is many times
    smaller than M". Its Figure 2 uses sequence length 1024 and head dimension 64, the
    defaults here. ``sram_kb`` counts 1024 bytes a kilobyte; fp16 numbers are 2 bytes.

    Examples
    --------
    >>> traffic = a100_traffic()
    >>> traffic.sram, traffic.block_size, traffic.query_block_size
    (51200, 200, 64)
    >>> traffic.standard_accesses, traffic.flash_accesses, round(traffic.ratio, 2)
    (4456448, 1402880, 3.18)
    """
    memory = _checked_block("sram_kb", sram_kb, "kilobytes") * 1024 // _checked_block(
        "bytes_per_number", bytes_per_number, "bytes"
    )
    return memory_traffic(n, d, sram=memory)


# -- shared checks -------------------------------------------------------------------------------


def _blocks(n: int, size: int) -> list[range]:
    """``0 … n − 1`` cut into ranges of ``size``, the last one shorter if ``size`` does not divide ``n``."""
    return [range(start, min(start + size, n)) for start in range(0, n, size)]


def _checked_block(name: str, value: Any, what: str) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral) or int(value) < 1:
        raise ScenarioError(f"{name}: expected a whole number of {what}, at least 1, got {value!r}")
    return int(value)


def _checked_blocks(block_size: Any, query_block_size: Any) -> tuple[int, int]:
    """``B_c`` and ``B_r`` (``B_c`` when ``query_block_size`` is None), each a whole number ≥ 1."""
    key_size = _checked_block("block_size", block_size, "keys")
    if query_block_size is None:
        return key_size, key_size
    return key_size, _checked_block("query_block_size", query_block_size, "queries")


def _checked_row(scores_row: Any, values: Any) -> tuple[FloatArray, FloatArray]:
    """The row of scores (finite or ``-inf``, one finite at least) and the values, one row per score."""
    try:
        row = np.array(scores_row, dtype=np.float64, copy=True)
    except (TypeError, ValueError) as error:
        raise ScenarioError(f"scores_row: expected real numbers ({error})") from None
    if row.ndim != 1 or row.size == 0:
        raise ScenarioError(f"scores_row: expected a flat, non-empty list of scores, got shape {row.shape}")
    if np.any(np.isnan(row)) or np.any(row == np.inf):
        raise ScenarioError("scores_row: expected finite numbers or -inf, found NaN or +inf")
    if np.all(row == -np.inf):
        raise ScenarioError("scores_row: every score is -inf; nothing to attend to")
    table = as_matrix("values", values)
    if table.shape[0] != row.size:
        raise ScenarioError(f"values: expected {row.size} rows (one per score), got {table.shape[0]}")
    return row, table


def _checked_qkv(queries: Any, keys: Any, values: Any) -> tuple[FloatArray, FloatArray, FloatArray]:
    q, k, v = as_matrix("queries", queries), as_matrix("keys", keys), as_matrix("values", values)
    if k.shape[1] != q.shape[1]:
        raise ScenarioError(f"keys: expected {q.shape[1]} columns like queries (d_k), got {k.shape[1]}")
    if v.shape[0] != k.shape[0]:
        raise ScenarioError(f"values: expected {k.shape[0]} rows (one per key), got {v.shape[0]}")
    return q, k, v
