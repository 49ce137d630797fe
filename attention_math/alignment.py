"""The geometry of a score: how far each key points along the query.

``q · k = |q| · (k · q / |q|)``: a score is the query's length times the signed length of the
key's shadow on the query's line. The scores scene draws it: every key drops a perpendicular
onto the query's line, and the shadow's length, times ``|q|``, is the score.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._core import FloatArray, QueryStep

__all__ = ["Alignment", "alignment"]


@dataclass(frozen=True, eq=False)
class Alignment:
    """Each key's shadow on the query's line.

    Attributes
    ----------
    query_norm
        ``|q_i|``, the query's length.
    lengths
        ``lengths[j] = q_i · k_j / |q_i|``: the signed length of key ``j``'s shadow along the
        query's direction (negative when the key points away); ``lengths[j] * query_norm`` is
        the score.
    feet
        ``feet[j] = (q_i · k_j / |q_i|²) q_i``, ``n × d_k``: the foot of the perpendicular from
        key ``j`` onto the query's line.
    order
        The keys from the highest score to the lowest (the first of equal ones first).
    """

    query_norm: float
    lengths: FloatArray
    feet: FloatArray
    order: tuple[int, ...]


def alignment(step: QueryStep) -> Alignment:
    """The shadows of every key on the line of ``step``'s query.

    A query of length 0 has no direction: every shadow is then 0 (and so is every score).

    Examples
    --------
    >>> from attention_math import preset
    >>> step = preset("dog-chased-ball").trace().query_step(4)
    >>> a = alignment(step)
    >>> round(a.query_norm, 4), a.lengths.round(3)[:3]
    (1.8501, array([1.561, 1.524, 1.846]))
    >>> bool(np.allclose(a.lengths * a.query_norm, step.scores)), a.order[0]
    (True, 4)
    >>> bool(np.allclose((step.keys - a.feet) @ step.query, 0))  # the drop is perpendicular
    True
    """
    query = np.asarray(step.query, dtype=np.float64)
    norm = float(np.linalg.norm(query))
    scores = np.asarray(step.scores, dtype=np.float64)
    if norm == 0.0:
        lengths = np.zeros_like(scores)
        feet = np.zeros_like(np.asarray(step.keys, dtype=np.float64))
    else:
        lengths = scores / norm
        feet = (scores / norm**2)[:, np.newaxis] * query[np.newaxis, :]
    order = tuple(int(j) for j in np.argsort(-scores, kind="stable"))
    lengths.setflags(write=False)
    feet.setflags(write=False)
    return Alignment(norm, lengths, feet, order)
