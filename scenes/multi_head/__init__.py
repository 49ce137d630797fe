"""Lecture 8, multi-head attention: several heads side by side, joined by W_O
(its :data:`LECTURE` gives the order).

Render one with ``manim render -ql scenes/multi_head/multi_head.py MultiHead``.
"""

from __future__ import annotations

from scenes.plan import INPUTS
from scenes.registry import Lecture

__all__ = ["LECTURE"]

HEADS_SCENES = ("WhyHeads", "PerHead", "FusedProjection", "CausalHeads", "MultiHead")
"""Every scene of the lecture: each shows every head."""

LECTURE = Lecture(
    name="multi-head",
    title="Lecture 8, multi-head attention: several heads side by side, joined by W_O",
    scenes=(
        ("scenes.multi_head.why_heads", "WhyHeads"),
        ("scenes.multi_head.per_head", "PerHead"),
        ("scenes.multi_head.fused_projection", "FusedProjection"),
        ("scenes.multi_head.causal_heads", "CausalHeads"),
        ("scenes.multi_head.multi_head", "MultiHead"),
    ),
    preset="two-heads",
    # every head from its inputs (each head's, and W_O: all_heads): side by side, fused, masked and not
    shows=dict.fromkeys(HEADS_SCENES, INPUTS),
    cost={
        # WhyHeads measured with MultiHead and Scores (1.13 here), one render at a time
        "l": {"WhyHeads": 0.4, "PerHead": 1.7, "FusedProjection": 1.2, "CausalHeads": 1.2, "MultiHead": 1.1},
        # WhyHeads from its clip's length beside MultiHead's and Scores' (not measured at -qh)
        "h": {"WhyHeads": 0.5, "PerHead": 1.3, "FusedProjection": 0.8, "CausalHeads": 0.8, "MultiHead": 0.7},
    },
    steps="scenes.multi_head.handout:MULTI_HEAD",
    all_heads=frozenset(HEADS_SCENES),
    storyboard="docs/lectures/multi-head.md",
    stills="docs/stills/multi_head",
)
"""Lecture 8."""
