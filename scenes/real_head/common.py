"""What the real-head scenes share: the model's head as their sources, and the scenario they can draw.

Every number these scenes show is the model's own: its head's trace (``model``), the colour scales
of its matrices (``model_extremes``), its biases (``bias``) and its place in the model, counted as a
lecture counts (``place``: layer 3 of 6, head 4 of 12, 384 = 12 × 32), all from
:func:`attention_math.minilm.head` through the scenario's ``model``.
"""

from __future__ import annotations

from attention_math import Scenario, ScenarioError
from attention_math.heat import Extremes
from attention_math.minilm import MAX_TOKENS, ModelHead
from scenes.base import READING_PACE, SCENE_LIMITS, ExplainerScene

__all__ = ["MOST_DECIMALS", "RealHeadScene"]

MOST_DECIMALS = 2
"""The most decimals the real-head scenes draw: x's and q, k, v's slices fit beside the colour maps."""


class RealHeadScene(ExplainerScene):
    """A scene of the real-head lecture: a scenario with ``model`` (``--model minilm``), 2 to 16 WordPieces."""

    shows_model = True
    reading_pace = READING_PACE  # its captions say more a beat (the model's name, its sizes, the head's place)
    head_found: ModelHead

    @classmethod
    def check_scenario(cls, scenario: Scenario) -> Scenario:
        """At most :data:`MOST_DECIMALS` decimals (slices of 6 numbers beside three colour maps); the model's
        head is read once here, so a missing model fails before anything is drawn. Tokens they can name one
        per row first: the model reads a long sentence all the same."""
        low, high = SCENE_LIMITS["tokens"]
        if not low <= scenario.n_tokens <= high:
            raise ScenarioError(
                f"sentence: the scenes draw {low} to {high} WordPiece tokens with [CLS] and [SEP] (the model takes "
                f"{MAX_TOKENS}), this sentence has {scenario.n_tokens}; shorten it"
            )
        if scenario.precision > MOST_DECIMALS:
            raise ScenarioError(
                f"precision: the real-head scenes draw 0 to {MOST_DECIMALS} decimals (a model's numbers are "
                f"rounded either way), this scenario asks for {scenario.precision}"
            )
        scenario.model_head()
        return scenario

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
