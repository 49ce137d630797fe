"""Lecture 8, multi-head attention: several heads side by side, joined by W_O
(``scenes.plan.LECTURES["multi-head"]`` gives the order).

Render one with ``manim render -ql scenes/multi_head/multi_head.py MultiHead``.
"""
