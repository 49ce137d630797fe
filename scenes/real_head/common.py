"""What the real-head scenes share: the model's head as their sources, and the scenario they can draw.

Every number these scenes show is the model's own: its head's trace (``model``), the colour scales
of its matrices (``model_extremes``), its biases (``bias``) and its place in the model, counted as a
lecture counts (``place``: layer 3 of 6, head 4 of 12, 384 = 12 × 32), all from
:func:`attention_math.minilm.head` through the scenario's ``model``.
"""

from __future__ import annotations

from typing import Any

from manim import Animation, Mobject

from attention_math import Scenario, ScenarioError
from attention_math.heat import Extremes
from attention_math.minilm import ModelHead
from scenes.base import ExplainerScene

__all__ = ["LONGEST_BEAT", "MOST_DECIMALS", "READING_PACE", "RealHeadScene"]

MOST_DECIMALS = 2
"""The most decimals the real-head scenes draw: x's and q, k, v's slices fit beside the colour maps."""


READING_PACE = 22.0
"""Characters of a caption a second that a beat leaves the viewer to read it: lecture 6's pace (its
captions' characters over its beats' seconds, 22.6 at -ql). This lecture's captions say more a beat
(the model's name, its sizes, the head's place): at the waits lecture 6 uses they ran at 34 a second."""
LONGEST_BEAT = 5.0
"""A beat lasts at most this long for its reading (the storyboard's beats: 2 to 5 s)."""


class RealHeadScene(ExplainerScene):
    """A scene of the real-head lecture: a scenario with ``model`` (``--model minilm``), 2 to 16 WordPieces."""

    shows_model = True
    head_found: ModelHead

    @classmethod
    def check_scenario(cls, scenario: Scenario) -> Scenario:
        """At most :data:`MOST_DECIMALS` decimals (slices of 6 numbers beside three colour maps); the model's
        head is read once here, so a missing model fails before anything is drawn."""
        if scenario.precision > MOST_DECIMALS:
            raise ScenarioError(
                f"precision: the real-head scenes draw 0 to {MOST_DECIMALS} decimals (a model's numbers are "
                f"rounded either way), this scenario asks for {scenario.precision}"
            )
        scenario.model_head()
        return scenario

    def beat(self, caption: str, *animations: Animation | Mobject | Any, wait: float = 0.8, **kwargs: Any) -> None:
        """A beat long enough to read its caption at :data:`READING_PACE` (up to :data:`LONGEST_BEAT`):
        the pause after the animations grows where they and ``wait`` leave too little."""
        moving = float(kwargs.get("run_time", max((float(getattr(a, "run_time", 1.0)) for a in animations),
                                                  default=0.0)))
        reading = min(len(caption) / READING_PACE, LONGEST_BEAT)
        super().beat(caption, *animations, wait=max(wait, reading - moving), **kwargs)

    def open_head(self) -> None:
        """Register the model's head as the scene's sources (its construct's first step: the head is
        read from the scenario there, where the plan's checks see what a scene reads)."""
        found = self.scenario.model_head()
        precision = self.scenario.precision
        self.head_found = found
        self.add_source("model", found.trace, precision)
        self.add_source("model_extremes", Extremes(found.trace), precision)
        self.add_source("bias", found, precision)
        self.add_source("place", found, 0)  # layer, head and sizes: whole numbers
