"""The lecture's numbers: the query's scaled scores divided by a temperature τ before the softmax.

softmax(s / τ): τ below 1 stretches the scores apart (the largest weight grows, the rest shrink), τ above 1
squeezes them together (the weights flatten toward 1/n); τ = 1 is plain attention. No manim here.

>>> from attention_math import preset
>>> tempered = temper(preset("dog-chased-ball"))
>>> tempered.temperatures
(0.5, 1.0, 2.0)
>>> [round(float(row.sum()), 12) for row in tempered.weights]
[1.0, 1.0, 1.0]
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from attention_math import Scenario, ScenarioError, softmax

__all__ = ["TEMPERATURES", "Tempered", "temper"]

TEMPERATURES: tuple[float, ...] = (0.5, 1.0, 2.0)
"""The temperatures the lecture compares: sharper, plain, flatter."""


@dataclass(frozen=True, eq=False)
class Tempered:
    """The query's row at each temperature.

    Attributes
    ----------
    temperatures
        τ, one per row of :attr:`weights`.
    scaled_scores
        The query's scaled scores s_j = q·k_j / √d_k (one per key).
    weights
        ``weights[t, j] = softmax(s / τ_t)_j``: row t adds up to 1.
    top
        The key with the largest weight (the same at every τ > 0: dividing by τ keeps the order).
    """

    temperatures: tuple[float, ...]
    scaled_scores: npt.NDArray[np.float64]
    weights: npt.NDArray[np.float64]
    top: int


def temper(scenario: Scenario, temperatures: tuple[float, ...] = TEMPERATURES) -> Tempered:
    """The query's weights of ``scenario`` at each temperature (its first head's, for several heads).

    >>> from attention_math import preset
    >>> temper(preset("dog-chased-ball"), (0.0,))
    Traceback (most recent call last):
    ...
    attention_math._errors.ScenarioError: temperatures: expected numbers above 0, got 0.0
    """
    if not temperatures or any(not tau > 0 for tau in temperatures):
        shown = ", ".join(str(tau) for tau in temperatures) or "none"
        raise ScenarioError(f"temperatures: expected numbers above 0, got {shown}")
    row = np.array(scenario.trace().scaled_scores[scenario.query], dtype=np.float64)
    weights = np.array([softmax(row / tau) for tau in temperatures], dtype=np.float64)
    row.setflags(write=False)
    weights.setflags(write=False)
    return Tempered(tuple(float(tau) for tau in temperatures), row, weights, int(np.argmax(row)))
