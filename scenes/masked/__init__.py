"""Lecture 7, masked (causal) self-attention: a token attends only to itself and the tokens before it
(``scenes.plan.LECTURES["masked"]`` gives the order).

Render one with ``manim render -ql scenes/masked/triangular_map.py TriangularMap``.
"""
