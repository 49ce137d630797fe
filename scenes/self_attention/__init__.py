"""Lecture 6, self-attention with trainable weights: from the raw dot product's failure to the
causal mask, one scene per step (``scenes.plan.LECTURES["self-attention"]`` gives the order).

Render one with ``manim render -ql scenes/self_attention/scores.py Scores``.
"""
