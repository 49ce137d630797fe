"""Lecture 10, rotary position embeddings (RoPE, RoFormer arXiv 2104.09864): attention without positions
cannot tell the order of its tokens; RoPE turns each pair of dimensions of a query and a key by an angle
that grows with position, so a score depends on how far apart two tokens stand
(its :data:`LECTURE` gives the order).

Render one with ``manim render -ql scenes/rope/order_blind.py OrderBlind``.
"""

from __future__ import annotations

from attention_math import Scenario, ScenarioError
from scenes.plan import INPUTS
from scenes.registry import Lecture

__all__ = ["LECTURE", "turnable"]

LECTURE = Lecture(
    name="rope",
    title="Lecture 10, rotary position embeddings (RoPE): order-blind attention, then queries and keys turned",
    scenes=(
        ("scenes.rope.order_blind", "OrderBlind"),
        ("scenes.rope.rope_pairs", "RopePairs"),
        ("scenes.rope.rope_clock", "ClockHands"),
        ("scenes.rope.rope_scores", "RopeScores"),
    ),
    preset="rope-dog",
    # the sentence backwards (and with RoPE) computed afresh from the inputs, beside the trace
    shows={
        "OrderBlind": INPUTS | {"scaled_scores", "weights"},
        "RopePairs": INPUTS,
        "ClockHands": INPUTS,
        "RopeScores": INPUTS | {"scaled_scores", "weights"},
    },
    cost={
        # from one cold -ql bundle (render_s against Scores' from a bundle of its own, one render at a time, on a
        # quiet machine: 9.0, 6.6 and 17.7 s against 12.0 s)
        "l": {"OrderBlind": 0.75, "RopePairs": 0.55, "RopeScores": 1.45, "ClockHands": 0.6},
        # by their clips' length against Scores' (14, 18 and 16 s against 28 s; not measured at -qh)
        "h": {"OrderBlind": 0.5, "RopePairs": 0.65, "RopeScores": 0.6, "ClockHands": 0.6},
    },
    steps="scenes.rope.handout:ROPE",
    storyboard="docs/lectures/rope.md",
    stills="docs/stills/rope",
)
"""Lecture 10."""


def turnable(scenario: Scenario) -> Scenario:
    """``scenario`` if RoPE can turn its queries and keys (``d_k`` even), else a one-line ScenarioError naming d_k:
    every scene of this lecture's ``check_scenario``."""
    if scenario.d_k % 2:
        raise ScenarioError(f"d_k: RoPE turns the dimensions of queries and keys in pairs, so d_k must be even; "
                            f"this scenario has {scenario.d_k}")
    return scenario
