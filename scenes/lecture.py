"""The lecture in order: one scene class per step, imported lazily.

``LECTURE`` lists ``(module, class)`` pairs; :func:`lecture_scenes` imports them. Render the
whole lecture scene by scene with ``manim render -ql scenes/lecture.py Explainer`` (one video)
or one scene at a time with its own file.
"""

from __future__ import annotations

import importlib

from manim import Scene

__all__ = ["LECTURE", "lecture_scenes"]

LECTURE: tuple[tuple[str, str], ...] = (
    ("scenes.raw_dot_products", "RawDotProducts"),
    ("scenes.projection", "Projection"),
    ("scenes.scores", "Scores"),
    ("scenes.softmax", "ScaleAndSoftmax"),
    ("scenes.weighted_sum", "WeightedSum"),
    ("scenes.matrix_form", "MatrixForm"),
    ("scenes.causal_mask", "CausalMask"),
)


def lecture_scenes() -> list[type[Scene]]:
    """The scene classes of the lecture, in order."""
    return [getattr(importlib.import_module(module), name) for module, name in LECTURE]
