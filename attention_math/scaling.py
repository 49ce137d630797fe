"""Why divide by √d_k: the spread of ``q · k`` grows like √d; divided by √d it stays near 1.

For ``q`` and ``k`` with ``d`` independent standard-normal entries, ``q · k`` is a sum of ``d``
products of variance 1, so its variance is ``d`` and its standard deviation ``√d``
("Attention Is All You Need", footnote 4). Softmax over scores that far apart gives one key
nearly all the weight; ``q · k / √d`` has spread 1 at every ``d``. :func:`scaling_spread`
measures both with a seeded generator, so a plot of them is the same every time.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ._core import FloatArray, owned, softmax
from ._errors import ScenarioError

__all__ = ["DEFAULT_DIMS", "ScalingSpread", "scaling_spread"]

DEFAULT_DIMS: tuple[int, ...] = tuple(2**p for p in range(10))
"""1, 2, 4, …, 512."""

_CHUNK = 2**20  # numbers drawn at once: memory stays small at any d and number of samples


@dataclass(frozen=True, eq=False)
class ScalingSpread:
    """The spread of ``q · k`` at each dimension, and one row of scores softmaxed both ways.

    Attributes
    ----------
    dims
        The dimensions ``d`` sampled, in the order asked.
    samples, seed
        Pairs ``(q, k)`` drawn per dimension, and the generator's seed.
    raw_std
        The standard deviation of ``q · k`` over the samples, per dimension (about ``√d``).
    scaled_std
        The standard deviation of ``q · k / √d`` (about 1): ``raw_std / √d`` of the same samples.
    kept_products
        The first ``kept`` of the ``q · k`` drawn at each dimension (``len(dims) × kept``), for
        a cloud of points; their spread is about ``√d`` like all of them.
    row_dim
        The dimension of the example row: the largest of ``dims``.
    row_scores
        ``q · k_j`` for one query and ``len(row_scores)`` keys, all drawn at ``row_dim``.
    unscaled_weights, scaled_weights
        ``softmax(row_scores)`` and ``softmax(row_scores / √row_dim)``.
    """

    dims: tuple[int, ...]
    samples: int
    seed: int
    raw_std: FloatArray
    scaled_std: FloatArray
    kept_products: FloatArray
    row_dim: int
    row_scores: FloatArray
    unscaled_weights: FloatArray
    scaled_weights: FloatArray

    @property
    def sqrt_dims(self) -> FloatArray:
        """``√d`` for each of ``dims``: the spread ``q · k`` should have."""
        return owned(np.sqrt(np.array(self.dims, dtype=np.float64)))

    @property
    def row_scaled_scores(self) -> FloatArray:
        """``row_scores / √row_dim``: the example row as the softmax sees it when scaled.

        >>> scaling_spread((1, 256), samples=100, seed=1).row_scaled_scores.round(2)[:3]
        array([-0.58, -0.73,  1.01])
        """
        return owned(self.row_scores / math.sqrt(self.row_dim))

    @property
    def top_key(self) -> int:
        """The key (from 0) with the largest score in the example row: it takes the most weight.

        >>> spread = scaling_spread((1, 256), samples=100, seed=1)
        >>> spread.top_key, int(spread.unscaled_weights.argmax()), int(spread.scaled_weights.argmax())
        (2, 2, 2)
        """
        return int(np.argmax(self.row_scores))


def scaling_spread(
    dims: Sequence[int] = DEFAULT_DIMS, *, samples: int = 2_000, keys: int = 8, kept: int = 60, seed: int = 0
) -> ScalingSpread:
    """Sample the spread of ``q · k`` and ``q · k / √d`` for standard-normal ``q`` and ``k``.

    Parameters
    ----------
    dims
        Dimensions ``d`` to sample, each from 1 to 65,536 (default 1, 2, 4, …, 512).
    samples
        Pairs ``(q, k)`` per dimension, 2 to 1,000,000.
    keys
        Keys of the example row at the largest dimension, 2 to 1,024.
    kept
        Dot products kept per dimension (the first drawn) for a cloud of points, 0 to ``samples``.
    seed
        Seed of ``numpy.random.default_rng``; the same arguments give the same numbers.

    Returns
    -------
    ScalingSpread
        Frozen, its arrays read-only.

    Raises
    ------
    ScenarioError
        Naming the argument, if one is not a whole number in its range.

    Examples
    --------
    >>> spread = scaling_spread((1, 16, 256), samples=4_000, seed=1)
    >>> (spread.raw_std / spread.sqrt_dims).round(1), spread.scaled_std.round(1)
    (array([1., 1., 1.]), array([1., 1., 1.]))
    >>> spread.row_dim, spread.row_scores.round(1)
    (256, array([ 11. , -18.7,  -4.2,   8.2,   1.1,   0.2,  -7.7,  12.1]))
    >>> spread.unscaled_weights.round(2)
    array([0.24, 0.  , 0.  , 0.01, 0.  , 0.  , 0.  , 0.75])
    >>> spread.scaled_weights.round(2)
    array([0.21, 0.03, 0.08, 0.17, 0.11, 0.11, 0.06, 0.22])

    The first few dot products of each dimension, for a cloud; they spread out as ``d`` grows:

    >>> scaling_spread((2, 512), samples=100, kept=4, seed=1).kept_products.round(1)
    array([[  2.3,  -0.8,  -0.6,   1.8],
           [-11.3,  -9.9,  25.6,  32.4]])
    """
    checked = _checked_dims(dims)
    samples, keys, seed = _whole("samples", samples, 2, 1_000_000), _whole("keys", keys, 2, 1_024), _whole(
        "seed", seed, 0, 2**63 - 1)
    kept = _whole("kept", kept, 0, samples)
    rng = np.random.default_rng(seed)
    raw, clouds = _spreads(rng, checked, samples, kept)
    query = rng.standard_normal(row_dim := max(checked))  # the example row: the query first, then its keys
    row_scores = rng.standard_normal((keys, row_dim)) @ query
    return ScalingSpread(dims=checked, samples=samples, seed=seed, raw_std=owned(raw),
                         scaled_std=owned(raw / np.sqrt(np.array(checked, dtype=np.float64))),
                         kept_products=owned(clouds), row_dim=row_dim, row_scores=owned(row_scores),
                         unscaled_weights=owned(softmax(row_scores)),
                         scaled_weights=owned(softmax(row_scores / math.sqrt(row_dim))))


def _spreads(rng: np.random.Generator, dims: tuple[int, ...], samples: int, kept: int) -> tuple[FloatArray, FloatArray]:
    """The spread of ``samples`` fresh dot products at each dimension, and the first ``kept`` of each."""
    raw, clouds = np.empty(len(dims)), np.empty((len(dims), kept))
    for i, d in enumerate(dims):
        drawn = _dot_products(rng, d, samples)
        raw[i], clouds[i] = np.std(drawn, ddof=1), drawn[:kept]
    return raw, clouds


def _dot_products(rng: np.random.Generator, d: int, samples: int) -> FloatArray:
    """``samples`` dot products of fresh standard-normal pairs in ``d`` dimensions."""
    out = np.empty(samples)
    rows = max(1, _CHUNK // d)
    for start in range(0, samples, rows):
        count = min(rows, samples - start)
        q = rng.standard_normal((count, d))
        k = rng.standard_normal((count, d))
        out[start : start + count] = np.einsum("ij,ij->i", q, k)
    return out


def _whole(name: str, value: object, low: int, high: int) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise ScenarioError(f"{name}: expected a whole number from {low:,} to {high:,}, got {value!r}")
    if not low <= int(value) <= high:
        raise ScenarioError(f"{name}: expected a whole number from {low:,} to {high:,}, got {value}")
    return int(value)


def _checked_dims(dims: object) -> tuple[int, ...]:
    if isinstance(dims, (str, bytes)) or not isinstance(dims, Sequence) or not dims:
        raise ScenarioError(f"dims: expected a non-empty list of whole numbers, got {dims!r}")
    return tuple(_whole("dims", d, 1, 65_536) for d in dims)
