"""Lecture 12, latent attention: DeepSeek-V2's multi-head latent attention (MLA), the cache of one small latent a
token: why the cache must shrink, the latent and its up-projections, absorption, the decoupled RoPE, the cache
against multi-head, grouped-query and multi-query attention (its :data:`LECTURE` gives the order).

Render one with ``manim render -ql scenes/latent_attention/projection.py LatentProjection``.
"""

from __future__ import annotations

from scenes.registry import Lecture

__all__ = ["GQA_GROUPS", "LATENT_SETUP", "LECTURE", "MAX_TOKENS"]

LATENT_SETUP: dict[str, int] = {"seed": 1, "d_c": 2, "d_c_query": 2, "heads": 2, "d_h": 2, "d_rope": 2}
"""The lecture's MLA weights: the keyword arguments of ``attention_math.latent_weights`` after ``d_model`` (the seed,
``d_c`` the latent, ``d_c'`` the query's latent, 2 heads of ``d_h`` = 2 content numbers, ``d_R`` = 2 RoPE numbers).
A scenario carries ``X`` and plain attention's weights; MLA needs eight other matrices, the lecture's (as the masked
lecture's dropout is), one decimal each, the same for every sentence of one width. Small, so every number fits on
screen: a token keeps ``d_c + d_R`` = 4 numbers where multi-head attention of these heads keeps 8. The scenes, the
handout and the number checks all read it here."""

GQA_GROUPS = 8
"""The key/value heads of the grouped-query attention the lecture sets beside DeepSeek-V2's 128 query heads (as
``attention_math.latent_cache_sizes``' example does)."""

MAX_TOKENS = 16
"""The most tokens the lecture's tables draw, a row each."""

LECTURE = Lecture(
    name="latent-attention",
    title="Lecture 12, multi-head latent attention (DeepSeek-V2): a small latent cached, keys made from it, "
          "absorbed, a decoupled RoPE key",
    scenes=(
        ("scenes.latent_attention.projection", "LatentProjection"),
        ("scenes.latent_attention.absorption", "Absorption"),
        ("scenes.latent_attention.decoupled_rope", "DecoupledRope"),
        ("scenes.latent_attention.cache_sizes", "LatentCacheSizes"),
    ),
    preset="latent-dog",
    shows={
        # MLA of the scenario's embeddings with the lecture's own weights (LATENT_SETUP), not the scenario's W_Q, W_K,
        # W_V; the last scene shows DeepSeek-V2's published sizes, never the scenario
        "LatentProjection": frozenset({"embeddings"}),
        "Absorption": frozenset({"embeddings"}),
        "DecoupledRope": frozenset({"embeddings"}),
        "LatentCacheSizes": frozenset(),
    },
    cost={
        # one cold render of the lecture each (two scenes at a time), against Scores' alone just before: -ql 4.5, 2.0,
        # 4.0 and 2.1 s against 4.5 s; -qh 24.3, 13.4, 21.6 and 14.7 s against 20.5 s
        "l": {"LatentProjection": 1.0, "Absorption": 0.45, "DecoupledRope": 0.9, "LatentCacheSizes": 0.45},
        "h": {"LatentProjection": 1.2, "Absorption": 0.65, "DecoupledRope": 1.05, "LatentCacheSizes": 0.7},
    },
    steps="scenes.latent_attention.handout:LATENT",
    own_preset=frozenset({"LatentCacheSizes"}),  # DeepSeek-V2's configuration
    storyboard="docs/lectures/latent-attention.md",
    stills="docs/stills/latent_attention",
    position_kinds={"latent_head": "a head of the latent-attention lecture's weights (its LATENT_SETUP's, not the "
                                    "scenario's heads)"},
    band_kinds={"d_c": "a dimension of the latent c_KV (a column of c_KV, of W_DKV, a row of W_UK and W_UV)",
                "d_rope": "a dimension of the decoupled RoPE key and queries (a column of k_R, q_R)",
                "mla": "a way of caching (multi-head, grouped-query, multi-query, latent): its row, its bar"},
    checks="scenes.latent_attention.checks:CHECKS",
)
"""Lecture 12."""
