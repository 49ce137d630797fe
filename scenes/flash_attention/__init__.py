"""Lecture 11, FlashAttention (Dao et al., arXiv 2205.14135) and the online softmax (Milakov & Gimelshein,
arXiv 1805.02867): the n × n matrix of scores written to slow memory, or never stored; one query's row walked
tile by tile with a running maximum, sum and output; the whole matrix in blocks and the memory traffic of
both routes (its :data:`LECTURE` gives the order; the tiles' size is
:data:`FLASH_BLOCKS`).

Render one with ``manim render -ql scenes/flash_attention/online_softmax.py OnlineSoftmax``.
"""

from __future__ import annotations

from attention_math import DEFAULT_PRESET
from scenes.registry import Lecture

__all__ = ["FLASH_BLOCKS", "LECTURE"]

FLASH_BLOCKS: tuple[int, int] = (2, 2)
"""The flash-attention lecture's tiles, ``(B_c, B_r)``: keys per tile and queries per block
(``attention_math.online_softmax_row(..., block_size=B_c)``, ``flash_attention(..., block_size=B_c,
query_block_size=B_r)``, ``memory_traffic(n, d, block_size=B_c, query_block_size=B_r)``). 2 does not divide
lecture 6's 5 tokens, so the last tile is shorter; its scenes, number proof, handout and notebook read it here."""

LECTURE = Lecture(
    name="flash-attention",
    title="Lecture 11, FlashAttention: the n × n matrix never stored, the online softmax, the memory traffic",
    scenes=(
        ("scenes.flash_attention.memory_routes", "MemoryRoutes"),
        ("scenes.flash_attention.online_softmax", "OnlineSoftmax"),
        ("scenes.flash_attention.tiled_traffic", "TiledTraffic"),
    ),
    preset=DEFAULT_PRESET,
    # the sizes alone (the memory picture, the counts); the query's row of scaled scores walked in tiles over
    # the values, ending on its context
    shows={
        "MemoryRoutes": frozenset(),
        "OnlineSoftmax": frozenset({"scaled_scores", "values", "context"}),
        "TiledTraffic": frozenset(),
    },
    cost={
        # estimated from their clips' length until measured
        "l": {"MemoryRoutes": 0.6, "OnlineSoftmax": 1.0, "TiledTraffic": 0.7},
        "h": {"MemoryRoutes": 0.6, "OnlineSoftmax": 0.9, "TiledTraffic": 0.7},
    },
    steps="scenes.flash_attention.handout:FLASH",
    storyboard="docs/lectures/flash-attention.md",
    stills="docs/stills/flash_attention",
)
"""Lecture 11."""
