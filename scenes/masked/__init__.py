"""Lecture 7, masked (causal) self-attention: a decoder writes one token at a time, so a query may read
only the keys up to its own; the mask, the other route to the same weights, the masked context, dropout,
the triangular map (its :data:`LECTURE` gives the order).

Render one with ``manim render -ql scenes/masked/masked_scores.py MaskedScores``.
"""

from __future__ import annotations

from scenes.plan import INPUTS
from scenes.registry import Lecture

__all__ = ["LECTURE", "MASKED_DROPOUT"]

MASKED_DROPOUT: tuple[float, int] = (0.5, 123)
"""The masked lecture's dropout on the attention weights, ``(p, seed)``:
``attention_math.attention_dropout(weights, p, seed=seed)``. p = 0.5 and seed 123 as in Raschka's
chapter 3 (whose ``torch.manual_seed(123)`` draws other numbers: this is numpy's
``default_rng(123)``). The lecture's dropout scene and its handout (the CSV, the notebook's replay)
both read it here, so they drop the same weights."""

LECTURE = Lecture(
    name="masked",
    title="Lecture 7, masked (causal) self-attention: the mask, the other route, the past-only context, dropout",
    scenes=(
        ("scenes.masked.generation_order", "GenerationOrder"),
        ("scenes.masked.masked_scores", "MaskedScores"),
        ("scenes.masked.renormalise", "Renormalise"),
        ("scenes.masked.masked_context", "MaskedContext"),
        ("scenes.masked.dropout", "AttentionDropout"),
        ("scenes.masked.triangular_map", "TriangularMap"),
    ),
    preset="masked-dog",
    shows={
        # the sentence and its order only; then the causal trace, computed afresh from the inputs, beside the
        # unmasked scaled scores (and the other route, renormalised_weights, from those)
        "GenerationOrder": frozenset(),
        "MaskedScores": INPUTS | {"scaled_scores"},
        "Renormalise": INPUTS | {"scaled_scores"},
        # the masked trace (and dropout on it) computed afresh from the inputs; the context scene also shows
        # the unmasked query step and masks the unmasked scaled scores after the softmax
        "MaskedContext": INPUTS | {"scaled_scores", "weights", "values", "context"},
        "AttentionDropout": INPUTS,
        "TriangularMap": INPUTS,
    },
    cost={
        # from one cold -ql render each here (user time, against Scores' in the same run)
        "l": {"GenerationOrder": 0.7, "MaskedScores": 1.2, "Renormalise": 0.7, "MaskedContext": 0.6,
              "AttentionDropout": 0.8, "TriangularMap": 0.65},
        # by the length of their clips against Scores' (16, 16 and 14 s against 28 s)
        "h": {"GenerationOrder": 1.04, "MaskedScores": 0.9, "Renormalise": 0.72, "MaskedContext": 0.6,
              "AttentionDropout": 0.6, "TriangularMap": 0.55},
    },
    steps="scenes.masked.handout:MASKED",
    storyboard="docs/lectures/masked.md",
    stills="docs/stills/masked",
)
"""Lecture 7."""
