"""The ends of a heat map's colour scale: each matrix's smallest and largest finite number.

A heat map spreads its lightness over its own range, so weights of 0.16 and 0.31 look
different; its legend writes the two ends. Both come from here, so the legend's numbers are
facts like any other.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ._core import AttentionTrace, FloatArray

__all__ = ["Extremes", "value_range"]


def value_range(matrix: npt.ArrayLike) -> FloatArray:
    """``(low, high)``: the smallest and the largest finite entry (a masked ``-inf`` is left out).

    Examples
    --------
    >>> value_range([[0.5, -np.inf], [0.25, 2.0]])
    array([0.25, 2.  ])
    >>> value_range([[-np.inf]])
    Traceback (most recent call last):
    ...
    ValueError: no finite number to range over
    """
    values = np.asarray(matrix, dtype=np.float64)
    finite = values[np.isfinite(values)]
    if finite.size == 0:
        raise ValueError("no finite number to range over")
    ends = np.array([finite.min(), finite.max()], dtype=np.float64)
    ends.setflags(write=False)
    return ends


@dataclass(frozen=True, eq=False)
class Extremes:
    """``(low, high)`` of every matrix of a trace, by the trace's field name, read when asked.

    Only the fields asked for are read from the trace (a scene's reads are checked against
    what it declares it shows).

    Examples
    --------
    >>> from attention_math import preset
    >>> trace = preset("dog-chased-ball").trace()
    >>> Extremes(trace).weights.round(2)
    array([0.1 , 0.31])
    >>> low, high = Extremes(preset("dog-chased-ball").trace(causal=True)).scaled_scores
    >>> bool(np.isfinite(low)), round(float(high), 2)
    (True, 2.63)
    """

    trace: AttentionTrace

    def __getattr__(self, name: str) -> FloatArray:
        if name.startswith("_"):  # copy, pickle and dataclass machinery ask for these
            raise AttributeError(name)
        return value_range(getattr(self.trace, name))
