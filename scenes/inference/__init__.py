"""Lecture 9, inference: the KV cache and the heads that share keys and values (its :data:`LECTURE`
gives the order).

Render one with ``manim render -ql scenes/inference/kv_cache.py KVCacheSteps``.
"""

from __future__ import annotations

from scenes.plan import INPUTS
from scenes.registry import Lecture

__all__ = ["CACHE_CONTEXT", "LECTURE", "MOST_NEW", "MOST_ROWS", "new_tokens"]

CACHE_CONTEXT = 4096
"""The long context the inference lecture's memory scene counts the cache for: Llama 2's context length
(``max_position_embeddings`` in its config.json). Its scene, its handout and its number checks read it here."""

MOST_ROWS = 17
"""A real model's run in the cache scene: its rows at most, the prompt's and the written tokens' (17 fit at the
font floor)."""
MOST_NEW = 5
"""Tokens a real model writes in the inference lecture, at most (fewer after a long prompt: the rows must fit)."""


def new_tokens(prompt_tokens: int) -> int:
    """The tokens a real model writes in the inference lecture after a prompt of ``prompt_tokens``: up to
    :data:`MOST_NEW`, at least 2, its rows (all but the last written token's) at most :data:`MOST_ROWS`.
    The cache scene, its handout and its number checks read it here.

    >>> new_tokens(5), new_tokens(14), new_tokens(16)
    (5, 4, 2)
    """
    return max(2, min(MOST_NEW, MOST_ROWS + 1 - prompt_tokens))


LECTURE = Lecture(
    name="inference",
    title="Lecture 9, inference: generation with a KV cache, heads sharing keys and values, the cache's memory",
    scenes=(
        ("scenes.inference.kv_cache", "KVCacheSteps"),
        ("scenes.inference.cache_savings", "CacheSavings"),
        ("scenes.inference.grouped_heads", "GroupedHeads"),
        ("scenes.inference.cache_memory", "CacheMemory"),
    ),
    preset="grouped-dog",
    shows={
        # generation with a KV cache, computed afresh from the inputs (head 1's)
        "KVCacheSteps": INPUTS,
        "CacheSavings": INPUTS,
        # every head's own W_Q, the shared W_K and W_V, and W_O (all_heads); then published models, not the scenario
        "GroupedHeads": INPUTS,
        "CacheMemory": frozenset(),
    },
    cost={
        # one cold -ql render each, one at a time, against Scores' just before (13.2 and 5.1 s against 15.8 s of
        # wall time, on a shared machine); the last two by one -ql beat_frames render each against KVCacheSteps'
        "l": {"KVCacheSteps": 0.85, "CacheSavings": 0.35, "GroupedHeads": 0.45, "CacheMemory": 0.35},
        # by the length of their clips against Scores' (17.2 and 10.7 s against 27.8 s; the last two about 19 and
        # 17 s, not measured at -qh)
        "h": {"KVCacheSteps": 0.6, "CacheSavings": 0.4, "GroupedHeads": 0.55, "CacheMemory": 0.45},
    },
    steps="scenes.inference.handout:INFERENCE",
    own_preset=frozenset({"CacheMemory"}),  # published models' configurations
    all_heads=frozenset({"GroupedHeads"}),
    storyboard="docs/lectures/inference.md",
    stills="docs/stills/inference",
)
"""Lecture 9."""
