"""Lecture 10, rotary position embeddings (RoPE, RoFormer arXiv 2104.09864): attention without positions
cannot tell the order of its tokens; RoPE turns each pair of dimensions of a query and a key by an angle
that grows with position, so a score depends on how far apart two tokens stand
(``scenes.plan.LECTURES["rope"]`` gives the order).

Render one with ``manim render -ql scenes/rope/order_blind.py OrderBlind``.
"""
