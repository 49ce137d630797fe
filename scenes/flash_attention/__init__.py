"""Lecture 11, FlashAttention (Dao et al., arXiv 2205.14135) and the online softmax (Milakov & Gimelshein,
arXiv 1805.02867): the n × n matrix of scores written to slow memory, or never stored; one query's row walked
tile by tile with a running maximum, sum and output; the whole matrix in blocks and the memory traffic of
both routes (``scenes.plan.LECTURES["flash-attention"]`` gives the order; the tiles' size is
``scenes.plan.FLASH_BLOCKS``).

Render one with ``manim render -ql scenes/flash_attention/online_softmax.py OnlineSoftmax``.
"""
