"""Lecture 7, masked (causal) self-attention: a decoder writes one token at a time, so a query may read
only the keys up to its own; the mask, the other route to the same weights, the masked context, dropout,
the triangular map (``scenes.plan.LECTURES["masked"]`` gives the order).

Render one with ``manim render -ql scenes/masked/masked_scores.py MaskedScores``.
"""
