"""Lecture 10, rotary position embeddings (RoPE, RoFormer arXiv 2104.09864): attention without positions
cannot tell the order of its tokens; RoPE turns each pair of dimensions of a query and a key by an angle
that grows with position, so a score depends on how far apart two tokens stand
(``scenes.plan.LECTURES["rope"]`` gives the order).

Render one with ``manim render -ql scenes/rope/order_blind.py OrderBlind``.
"""

from attention_math import Scenario, ScenarioError


def turnable(scenario: Scenario) -> Scenario:
    """``scenario`` if RoPE can turn its queries and keys (``d_k`` even), else a one-line ScenarioError naming d_k:
    every scene of this lecture's ``check_scenario``."""
    if scenario.d_k % 2:
        raise ScenarioError(f"d_k: RoPE turns the dimensions of queries and keys in pairs, so d_k must be even; "
                            f"this scenario has {scenario.d_k}")
    return scenario
