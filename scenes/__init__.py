"""Manim scenes of the self-attention explainer; every number comes from attention_math.

Render one with ``manim render -ql scenes/scores.py Scores``; the lecture order is
``scenes.lecture.LECTURE``.
"""
