"""A real model's head: all-MiniLM-L6-v2's attention on the user's sentence (``render --model minilm``)."""

from __future__ import annotations

from attention_math import DEFAULT_PRESET
from scenes.plan import INPUTS
from scenes.registry import Lecture

__all__ = ["LECTURE"]

_SCENES = ("RealHeadPlace", "RealProjection", "RealWeights")

LECTURE = Lecture(
    name="real-head",
    title="A real model's head (all-MiniLM-L6-v2): its tokens and place, its Q, K, V, what it looks at",
    scenes=(
        ("scenes.real_head.place", "RealHeadPlace"),
        ("scenes.real_head.projection", "RealProjection"),
        ("scenes.real_head.weights", "RealWeights"),
    ),
    preset=DEFAULT_PRESET,  # never shown: its scenes ask for --model (a preset has no model)
    # every number from the scenario's model head (Scenario.model_head), so from its inputs; the model,
    # sentence, layer and head themselves are in every view (scenes.plan.scene_view)
    shows=dict.fromkeys(_SCENES, INPUTS),
    cost={
        # one cold bundle against lecture 6's in the same minutes, on a busy machine (18.6, 38.9 and 20.6 s
        # against Scores' 43.3 s); the head is read back, not computed, in each
        "l": {"RealHeadPlace": 0.45, "RealProjection": 0.9, "RealWeights": 0.5},
        # one cold bundle each, on a busy machine: a rough share
        "h": {"RealHeadPlace": 0.21, "RealProjection": 0.76, "RealWeights": 0.38},
    },
    steps="scenes.real_head.handout:REAL_HEAD",
    model=True,
    bench_flags=("--model", "minilm", "--layer", "3", "--head", "4", "--sentence", "The dog chased the ball."),
    storyboard="docs/lectures/real-head.md",
    stills="docs/stills/real_head",
)
"""The lecture of a scenario with a model (``render --model minilm``): its scenes are the only ones that draw
one."""
