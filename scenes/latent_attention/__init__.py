"""Lecture 12, latent attention: DeepSeek-V2's multi-head latent attention (MLA), the cache of one small latent a
token (``SCENES`` gives the order; ``setting.LATENT_SETUP`` the lecture's weights).

Render one with ``manim render -ql scenes/latent_attention/projection.py LatentProjection``.
"""

LECTURE_NAME = "latent-attention"
"""The lecture's name on the command line (``--lecture latent-attention``)."""

PRESET = "latent-dog"
"""The preset the lecture shows when no scenario is chosen."""

SCENES: tuple[tuple[str, str], ...] = (
    ("scenes.latent_attention.projection", "LatentProjection"),
    ("scenes.latent_attention.absorption", "Absorption"),
    ("scenes.latent_attention.decoupled_rope", "DecoupledRope"),
    ("scenes.latent_attention.cache_sizes", "LatentCacheSizes"),
)
"""The lecture's scenes in order, as (module, class): for the lecture's declaration."""
