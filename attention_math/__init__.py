"""attention_math: scaled dot-product self-attention, every step kept and explained.

``softmax(Q Kᵀ / √d_k) V`` with ``Q = X W_Q``, ``K = X W_K``, ``V = X W_V``, in the row
convention of PyTorch (one row per token); several heads joined by ``W_O``
(:func:`multi_head_attention`); the sampled reason for ``√d_k`` (:func:`scaling_spread`);
rotary position embeddings (:func:`rope_attention`); and attention by tiles, the online
softmax of one row (:func:`online_softmax_row`) and FlashAttention (:func:`flash_attention`,
:func:`memory_traffic`).
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
from .multi_head import MultiHeadTrace, multi_head_attention
from .presets import DEFAULT_PRESET, PRESETS, preset
from .rope import (
    ROPE_LAYOUTS,
    RopeTrace,
    rope,
    rope_angles,
    rope_attention,
    rope_frequencies,
    rope_pair_dimensions,
)
from .scaling import ScalingSpread, scaling_spread
from .scenario import Scenario, load_scenario, resolve_query, scenario_from_mapping, scenario_to_toml
from .walkthrough import format_walkthrough, walkthrough_data

__all__ = [
    "DEFAULT_PRESET",
    "MINUS",
    "PRESETS",
    "ROPE_LAYOUTS",
    "AttentionTrace",
    "FlashTile",
    "FlashTrace",
    "MemoryTraffic",
    "MultiHeadTrace",
    "OnlineRowTrace",
    "OnlineStep",
    "QueryStep",
    "RopeTrace",
    "ScalingSpread",
    "Scenario",
    "ScenarioError",
    "a100_traffic",
    "flash_attention",
    "format_number",
    "format_walkthrough",
    "load_scenario",
    "memory_traffic",
    "multi_head_attention",
    "online_softmax_row",
    "preset",
    "resolve_query",
    "rope",
    "rope_angles",
    "rope_attention",
    "rope_frequencies",
    "rope_pair_dimensions",
    "scaling_spread",
    "scenario_from_mapping",
    "scenario_to_toml",
    "self_attention",
    "softmax",
    "walkthrough_data",
]
