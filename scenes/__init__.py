"""Manim scenes of the attention explainer; every number comes from attention_math.

One folder per lecture (``self_attention/``, ``multi_head/``, ...), beside what they share: the
scene framework (``base``, ``facts``), the registry of lectures (``plan``) and the visual ideas
(``kit/``). Render one with ``manim render -ql scenes/self_attention/scores.py Scores``; the
lectures' orders are ``scenes.plan.LECTURES``.
"""
