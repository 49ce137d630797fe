"""The ends of a heat map's colour scale: each matrix's own range, widened where it is too narrow.

A heat map spreads its lightness over its scale, so weights of 0.16 and 0.31 look different;
its legend writes the two ends. Spread over a grid's own range alone, a grid whose numbers
barely differ would have its differences exaggerated: with weights from 0.49 to 0.51, two cells
that both print 0.50 would differ clearly and 0.49 would look as dark as a zero weight. So the
scale spans at least a *least span* (:func:`least_span`), centred on the grid's range:

- scores: one unit of the softmax's input. A scaled score higher by 1 multiplies its weight by
  e; differences well under 1 barely move the weights and should barely show. That is 1 for
  scaled scores, ``√d_k`` for raw scores (which the scaling divides by ``√d_k``).
- weights: half the largest weight, so a grid fills the scale when its largest weight is about
  twice its smallest, and one within a few percent of uniform looks nearly uniform. A weight
  scale never reaches below 0 nor above 1.
- anything else: a quarter of the largest magnitude.

Both ends come from here, so the legend's numbers are facts like any other.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ._core import AttentionTrace, FloatArray

__all__ = ["SCORE_FIELDS", "WEIGHT_SHARE", "Extremes", "Ranges", "colour_scale", "least_span", "value_range"]

WEIGHT_SHARE = 0.5
"""A weight scale spans at least this share of the largest weight."""
OTHER_SHARE = 0.25
"""Any other matrix's scale spans at least this share of its largest magnitude."""
SCORE_FIELDS = ("scores", "scaled_scores")


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


def colour_scale(matrix: npt.ArrayLike, least: float, *, floor: float = -math.inf,
                 ceiling: float = math.inf) -> FloatArray:
    """``(low, high)``: the ends of a colour scale over ``matrix`` spanning at least ``least``.

    The grid's own range (:func:`value_range`) where it is at least ``least`` wide, else that
    range widened on both sides alike to ``least``, then moved (not shrunk) to lie within
    ``[floor, ceiling]``; a ``least`` wider than that interval gives the interval.

    Parameters
    ----------
    matrix
        The numbers the heat map shows; ``-inf`` (masked) entries are left out.
    least
        The narrowest span of the scale (``>= 0``).
    floor, ceiling
        What the scale may not pass: the bounds of what the numbers can be (0 and 1 for weights).

    Examples
    --------
    >>> colour_scale([[0.10, 0.31]], 0.155)  # wide enough: the grid's own ends
    array([0.1 , 0.31])
    >>> colour_scale([[0.49, 0.51]], 0.255).round(4)  # widened about the middle
    array([0.3725, 0.6275])
    >>> colour_scale([[0.02, 0.05]], 0.1, floor=0.0).round(4)  # not below 0: moved up
    array([0. , 0.1])
    >>> colour_scale([[0.9, 1.0]], 0.5, floor=0.0, ceiling=1.0)
    array([0.5, 1. ])
    """
    if least < 0 or not floor < ceiling:
        raise ValueError("a colour scale needs least >= 0 and floor < ceiling")
    low, high = (float(end) for end in value_range(matrix))
    if high - low < least:
        middle = (low + high) / 2
        low, high = middle - least / 2, middle + least / 2
        if low < floor:
            low, high = floor, min(floor + least, ceiling)
        elif high > ceiling:
            low, high = max(ceiling - least, floor), ceiling
    ends = np.array([low, high], dtype=np.float64)
    ends.setflags(write=False)
    return ends


def least_span(trace: AttentionTrace, name: str) -> float:
    """The narrowest colour scale of trace field ``name`` (see the module's notes for why).

    Examples
    --------
    >>> from attention_math import preset
    >>> trace = preset("dog-chased-ball").trace()
    >>> least_span(trace, "scaled_scores"), round(least_span(trace, "scores"), 4)  # d_k = 2
    (1.0, 1.4142)
    >>> round(least_span(trace, "weights"), 4)  # half of the largest weight, 0.3106
    0.1553
    """
    if name == "scaled_scores":
        return 1.0
    if name == "scores":
        return float(trace.sqrt_d_k)
    largest = value_range(np.abs(np.asarray(getattr(trace, name), dtype=np.float64)))[1]
    return float(largest) * (WEIGHT_SHARE if name == "weights" else OTHER_SHARE)


@dataclass(frozen=True, eq=False)
class Extremes:
    """The ends of each matrix's colour scale (:func:`colour_scale`), by the trace's field name.

    Only the fields asked for are read from the trace (a scene's reads are checked against
    what it declares it shows). Weights keep within ``[0, 1]``.

    Examples
    --------
    >>> from attention_math import preset
    >>> trace = preset("dog-chased-ball").trace()
    >>> Extremes(trace).weights.round(2)  # wide enough: the grid's own range
    array([0.1 , 0.31])
    >>> low, high = Extremes(preset("dog-chased-ball").trace(causal=True)).scaled_scores
    >>> bool(np.isfinite(low)), round(float(high), 2)
    (True, 2.63)
    >>> from attention_math import Scenario
    >>> owls = Scenario(title="Owls listen", tokens=("Owls", "listen"),
    ...                 embeddings=[[0.3, 0.8, 0.6], [-0.5, -0.4, 0.7]],
    ...                 w_query=[[-1.0, 0.6], [0.6, -0.1], [-0.4, -0.4]],
    ...                 w_key=[[-0.5, -0.1], [0.0, 0.1], [1.0, 0.6]],
    ...                 w_value=[[0.2, 1.0], [-0.6, -0.7], [0.2, -0.9]]).trace()
    >>> value_range(owls.weights).round(3), Extremes(owls).weights.round(3)  # 0.49 to 0.51: widened
    (array([0.494, 0.506]), array([0.374, 0.626]))
    >>> value_range(owls.scaled_scores).round(3), Extremes(owls).scaled_scores.round(3)
    (array([-0.178, -0.06 ]), array([-0.619,  0.381]))
    """

    trace: AttentionTrace

    def __getattr__(self, name: str) -> FloatArray:
        if name.startswith("_"):  # copy, pickle and dataclass machinery ask for these
            raise AttributeError(name)
        bounds = (0.0, 1.0) if name == "weights" else (-math.inf, math.inf)
        return colour_scale(getattr(self.trace, name), least_span(self.trace, name), floor=bounds[0],
                            ceiling=bounds[1])


@dataclass(frozen=True, eq=False)
class Ranges:
    """Each field's own smallest and largest finite entry (:func:`value_range`), by the field's name: a colour
    scale that shows exactly the grid's range, not widened (:class:`Extremes` widens a narrow one).

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> Ranges(SimpleNamespace(weights=[[0.0, -np.inf], [0.5, 1.25]])).weights  # dropout's: 0 to the largest kept
    array([0.  , 1.25])
    """

    trace: object

    def __getattr__(self, name: str) -> FloatArray:
        if name.startswith("_"):  # copy, pickle and dataclass machinery ask for these
            raise AttributeError(name)
        return value_range(getattr(self.trace, name))
