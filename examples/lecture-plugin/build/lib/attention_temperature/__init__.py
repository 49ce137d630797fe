"""A lecture of another package: softmax temperature, softmax(s / τ), on the project's kit.

Its :data:`LECTURE` is all the project reads of it; the entry point in this package's ``pyproject.toml``
(group ``attention_explainer.lectures``) registers it exactly as the built-in lectures register.
Render it with ``attention-explainer render --lecture temperature``.
"""

from __future__ import annotations

from scenes.plan import INPUTS
from scenes.registry import Lecture

__all__ = ["LECTURE"]

LECTURE = Lecture(
    name="temperature",
    title="Softmax temperature: the scores divided by τ before the softmax sharpen or flatten the weights",
    scenes=(("attention_temperature.temperature", "Temperature"),),
    preset="dog-chased-ball",
    shows={"Temperature": INPUTS},  # the query's scaled scores, computed afresh from the inputs
    cost={"l": {"Temperature": 0.8}, "h": {"Temperature": 0.8}},
    steps="attention_temperature.handout:TEMPERATURE",
    band_kinds={"temperature": "one temperature τ: its column of bars"},
    bench_limit=None,
    checks="attention_temperature.checks:CHECKS",
)
"""The temperature lecture."""
