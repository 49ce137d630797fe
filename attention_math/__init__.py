"""attention_math: scaled dot-product self-attention, every step kept and explained.

``softmax(Q Kᵀ / √d_k) V`` with ``Q = X W_Q``, ``K = X W_K``, ``V = X W_V``, in the row
convention of PyTorch (one row per token), and the lectures that follow it, each a function with
every step kept:

- several heads joined by ``W_O`` (:func:`multi_head_attention`, and its one-big-matrix form
  :func:`fused_multi_head`); the sampled reason for ``√d_k`` (:func:`scaling_spread`);
- the causal mask, its renormalising route and dropout on the weights (:func:`masked_scores`,
  :func:`renormalised_weights`, :func:`attention_dropout`);
- inference: generation with a KV cache (:func:`kv_cache_generation`), the cache's size
  (:func:`kv_cache_bytes`, :func:`cache_memory` of :data:`PUBLISHED_CONFIGS`) and query heads that share
  key/value heads (:func:`grouped_query_attention`, :func:`shared_key_value_heads`);
- rotary position embeddings (:func:`rope_attention`); attention by tiles, the online softmax of
  one row (:func:`online_softmax_row`) and FlashAttention (:func:`flash_attention`,
  :func:`memory_traffic`);
- latent attention (DeepSeek-V2's MLA): :func:`latent_attention`, and its cache per token against
  the others' (:func:`latent_cache_sizes` of :data:`DEEPSEEK_V2`);
- where ``W_Q`` and ``W_K`` come from: a small training run by gradient descent
  (:func:`train_attention`); a real model's head is :mod:`attention_math.minilm` (the ``model``
  extra), and a scenario of one is :meth:`Scenario.from_model` of a :class:`ModelChoice` (layer and
  head counted from 1, as on screen).

Pure numpy; importing it does not import manim.

>>> from attention_math import preset
>>> trace = preset("dog-chased-ball").trace()
>>> trace.weights[4].round(2)
array([0.17, 0.16, 0.25, 0.1 , 0.31])
"""

from ._core import AttentionTrace, QueryStep, self_attention, softmax
from ._errors import ScenarioError
from .flash import (
    FlashTile,
    FlashTrace,
    MemoryTraffic,
    OnlineRowTrace,
    OnlineStep,
    a100_traffic,
    flash_attention,
    memory_traffic,
    online_softmax_row,
)
from .formatting import MINUS, format_number
from .fused_heads import FusedHeadsTrace, fused_multi_head
from .grouped_query import GroupedQueryTrace, grouped_query_attention, shared_key_value_heads
from .kv_cache import (
    PUBLISHED_CONFIGS,
    CacheMemory,
    CacheStep,
    KVCacheTrace,
    ModelConfig,
    cache_memory,
    kv_cache_bytes,
    kv_cache_generation,
)
from .latent import (
    DEEPSEEK_V2,
    LatentCacheSizes,
    LatentConfig,
    LatentExample,
    LatentTrace,
    latent_attention,
    latent_cache_sizes,
    latent_example,
    latent_weights,
)
from .masking import (
    DropoutTrace,
    RenormalisedWeights,
    attention_dropout,
    causal_mask,
    masked_scores,
    renormalised_weights,
)
from .multi_head import MultiHeadTrace, multi_head_attention
from .presets import DEFAULT_PRESET, PRESETS, preset
from .rope import (
    ROPE_LAYOUTS,
    RopeClock,
    RopeTrace,
    rope,
    rope_angles,
    rope_attention,
    rope_clock,
    rope_frequencies,
    rope_pair_dimensions,
)
from .scaling import ScalingSpread, scaling_spread
from .scenario import ModelChoice, Scenario, load_scenario, resolve_query, scenario_from_mapping, scenario_to_toml
from .training import LossGradient, TrainingTrace, gradient, train_attention
from .walkthrough import format_walkthrough, walkthrough_data

__all__ = [
    "DEEPSEEK_V2",
    "DEFAULT_PRESET",
    "MINUS",
    "PRESETS",
    "PUBLISHED_CONFIGS",
    "ROPE_LAYOUTS",
    "AttentionTrace",
    "CacheMemory",
    "CacheStep",
    "DropoutTrace",
    "FlashTile",
    "FlashTrace",
    "FusedHeadsTrace",
    "GroupedQueryTrace",
    "KVCacheTrace",
    "LatentCacheSizes",
    "LatentConfig",
    "LatentExample",
    "LatentTrace",
    "LossGradient",
    "MemoryTraffic",
    "ModelChoice",
    "ModelConfig",
    "MultiHeadTrace",
    "OnlineRowTrace",
    "OnlineStep",
    "QueryStep",
    "RenormalisedWeights",
    "RopeClock",
    "RopeTrace",
    "ScalingSpread",
    "Scenario",
    "ScenarioError",
    "TrainingTrace",
    "a100_traffic",
    "attention_dropout",
    "cache_memory",
    "causal_mask",
    "flash_attention",
    "format_number",
    "format_walkthrough",
    "fused_multi_head",
    "gradient",
    "grouped_query_attention",
    "kv_cache_bytes",
    "kv_cache_generation",
    "latent_attention",
    "latent_cache_sizes",
    "latent_example",
    "latent_weights",
    "load_scenario",
    "masked_scores",
    "memory_traffic",
    "multi_head_attention",
    "online_softmax_row",
    "preset",
    "renormalised_weights",
    "resolve_query",
    "rope",
    "rope_angles",
    "rope_attention",
    "rope_clock",
    "rope_frequencies",
    "rope_pair_dimensions",
    "scaling_spread",
    "scenario_from_mapping",
    "scenario_to_toml",
    "self_attention",
    "shared_key_value_heads",
    "softmax",
    "train_attention",
    "walkthrough_data",
]
