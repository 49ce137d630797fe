"""What every RoPE scene of the lecture refuses: a scenario whose queries and keys cannot turn in pairs.

Not a scene: the lecture's scenes that turn queries and keys derive from :class:`Turning` first.
"""

from __future__ import annotations

from typing import Any

from attention_math import Scenario, self_attention
from attention_math.heat import Extremes
from scenes.base import ExplainerScene
from scenes.rope import rope_base, turnable

__all__ = ["Turning", "positionless"]


class Turning(ExplainerScene):
    """A scene that turns queries and keys by RoPE: its scenario's ``d_k`` must be even."""

    @classmethod
    def check_scenario(cls, scenario: Scenario) -> Scenario:
        """RoPE turns dimensions in pairs: ``d_k`` must be even."""
        return turnable(scenario)


    def rope_base(self) -> float:
        """RoPE's base: the lecture's 10000, or a real decoder's own (:func:`scenes.rope.rope_base`)."""
        return rope_base(self.scenario)


def positionless(scene: ExplainerScene) -> tuple[str, str, Any]:
    """Attention without positions, as sources: ``(its source, its colour scale's source, its trace)``.

    The scenario's own trace; a decoder's head (``--model smollm2``), whose trace is turned by RoPE, its X and
    W's attention with no turn, registered as ``positionless`` (and ``positionless_extremes``).
    """
    s = scene.scenario
    if s.model is None or not s.model.causal:
        return "trace", "extremes", scene.trace
    plain = self_attention(s.embeddings, s.w_query, s.w_key, s.w_value, scaled=s.scaled)
    scene.add_source("positionless", plain, s.precision)
    scene.add_source("positionless_extremes", Extremes(plain), s.precision)
    return "positionless", "positionless_extremes", plain
