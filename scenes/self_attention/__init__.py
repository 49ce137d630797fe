"""Lecture 6, self-attention with trainable weights: from the raw dot product's failure to the
causal mask, one scene per step (its :data:`LECTURE` gives the order).

Render one with ``manim render -ql scenes/self_attention/scores.py Scores``.
"""

from __future__ import annotations

from attention_math import DEFAULT_PRESET
from scenes.plan import INPUTS
from scenes.registry import Lecture

__all__ = ["LECTURE"]

LECTURE = Lecture(
    name="self-attention",
    title="Lecture 6, self-attention with trainable weights: from the raw dot product to the causal mask",
    scenes=(
        ("scenes.self_attention.raw_dot_products", "RawDotProducts"),
        ("scenes.self_attention.projection", "Projection"),
        ("scenes.self_attention.spaces", "Spaces"),
        ("scenes.self_attention.scores", "Scores"),
        ("scenes.self_attention.softmax", "ScaleAndSoftmax"),
        ("scenes.self_attention.why_scale", "WhyScale"),
        ("scenes.self_attention.weighted_sum", "WeightedSum"),
        ("scenes.self_attention.matrix_form", "MatrixForm"),
        ("scenes.self_attention.causal_mask", "CausalMask"),
    ),
    preset=DEFAULT_PRESET,
    shows={
        "RawDotProducts": frozenset(),
        "Projection": INPUTS | {"queries", "keys", "values"},
        "Spaces": frozenset({"embeddings", "queries", "keys", "values"}),
        "Scores": frozenset({"queries", "keys", "scores"}),
        "ScaleAndSoftmax": frozenset({"scores", "scaled_scores", "weights"}),
        "WhyScale": frozenset(),
        "WeightedSum": frozenset({"weights", "values", "context"}),
        "MatrixForm": frozenset({"scores", "scaled_scores", "weights", "values", "context"}),
        # the causal trace is computed afresh from the inputs
        "CausalMask": INPUTS | {"scaled_scores", "weights", "context"},
    },
    cost={
        # -ql: drawing and making texts weigh most
        "l": {"RawDotProducts": 1.7, "Projection": 1.7, "Spaces": 0.8, "Scores": 1.0, "ScaleAndSoftmax": 1.1,
              "WhyScale": 0.7, "WeightedSum": 0.9, "MatrixForm": 2.4, "CausalMask": 1.6},
        # -qh (and -qm, -qp, -qk): encoding weighs most, so the length of the clip counts more (the mean of three
        # cold bundles, two renders at a time; a scene's share moves by a tenth from one bundle to the next)
        "h": {"RawDotProducts": 0.95, "Projection": 1.0, "Spaces": 0.65, "Scores": 1.0, "ScaleAndSoftmax": 0.77,
              "WhyScale": 0.95, "WeightedSum": 1.25, "MatrixForm": 1.33, "CausalMask": 0.89},
    },
    steps="scenes.self_attention.handout:SELF_ATTENTION",
    # RawDotProducts: its own preset; WhyScale: the seeded sampler of attention_math.scaling_spread
    own_preset=frozenset({"RawDotProducts", "WhyScale"}),
    bench_limit=None,  # the yardstick of the others
    storyboard="docs/lectures/self-attention.md",
    stills="docs/stills/self_attention",
)
"""Lecture 6, the default lecture."""
