"""What every RoPE scene of the lecture refuses: a scenario whose queries and keys cannot turn in pairs.

Not a scene: the lecture's scenes that turn queries and keys derive from :class:`Turning` first.
"""

from __future__ import annotations

from attention_math import Scenario
from scenes.base import ExplainerScene
from scenes.rope import turnable

__all__ = ["Turning"]


class Turning(ExplainerScene):
    """A scene that turns queries and keys by RoPE: its scenario's ``d_k`` must be even."""

    @classmethod
    def check_scenario(cls, scenario: Scenario) -> Scenario:
        """RoPE turns dimensions in pairs: ``d_k`` must be even."""
        return turnable(scenario)
