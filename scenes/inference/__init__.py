"""Lecture 9, inference: the KV cache and the heads that share keys and values (``scenes.plan.LECTURES["inference"]``
gives the order).

Render one with ``manim render -ql scenes/inference/kv_cache.py KVCacheSteps``.
"""
