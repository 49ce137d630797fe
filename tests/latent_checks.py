"""The latent-attention lecture's number proof, to be merged into ``number_checks`` and ``scene_helpers``.

``LATENT_DERIVED`` makes every source the lecture's scenes register from the scenario alone: MLA by
``attention_math.latent_attention`` on the scenario's ``X`` with ``attention_math.latent_weights`` of the lecture's
``LATENT_SETUP`` (never the scene's ``setting.latent_trace``); DeepSeek-V2's cache per token and layer counted here
from its config.json (copied below, not from ``attention_math.DEEPSEEK_V2``). ``LATENT_BELONGS`` says what each
index of a trace field names; ``LATENT_POSITIONS`` how many heads the lecture's weights have; ``LATENT_SCENARIOS``
the scenes' test scenarios (the preset, 2 tokens, 12 and 16 tokens never seen).

``registered()`` puts all of it in place for one test (``monkeypatch``): the lecture in ``scenes.plan``'s
registries, the sources in ``number_checks.DERIVED``, the counts in ``number_checks.position_count``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import number_checks
import pytest
from scene_helpers import SCENARIOS, drawn

from attention_math import Scenario, latent_attention, latent_weights, preset
from scenes import plan
from scenes.latent_attention import LECTURE_NAME, PRESET, SCENES
from scenes.latent_attention.setting import LATENT_SETUP

DEEPSEEK_V2_CONFIG_JSON = {
    # https://huggingface.co/deepseek-ai/DeepSeek-V2/blob/main/config.json
    "num_hidden_layers": 60, "num_attention_heads": 128, "kv_lora_rank": 512, "qk_nope_head_dim": 128,
    "qk_rope_head_dim": 64, "v_head_dim": 128,
}
GQA_GROUPS = 8
"""The grouped-query attention the lecture compares with: 8 key/value heads of DeepSeek-V2's 128 (as in
``attention_math.latent_cache_sizes``' example)."""


def _latent(s: Scenario) -> Any:
    return latent_attention(s.embeddings, **latent_weights(s.d_in, **LATENT_SETUP), causal=True)


class _DeepSeekCache:
    """DeepSeek-V2's cache per token and layer, four ways, counted from its config.json (DeepSeek-V2, table 1)."""

    def __init__(self) -> None:
        c = DEEPSEEK_V2_CONFIG_JSON
        self.n_heads, self.d_head = c["num_attention_heads"], c["qk_nope_head_dim"]
        self.d_c, self.d_rope, self.layers, self.n_kv_heads = (c["kv_lora_rank"], c["qk_rope_head_dim"],
                                                               c["num_hidden_layers"], GQA_GROUPS)
        self.multi_head = 2 * self.n_heads * self.d_head
        self.grouped_query = 2 * GQA_GROUPS * self.d_head
        self.multi_query = 2 * self.d_head
        self.latent = self.d_c + self.d_rope
        self.saving = self.multi_head / self.latent
        self.equivalent_groups = self.latent / (2 * self.d_head)


LATENT_DERIVED: dict[str, Callable[[Scenario], tuple[Any, int]]] = {
    "latent": lambda s: (_latent(s), s.precision),  # the trace, at the scenario's decimals
    "latent_whole": lambda s: (_latent(s), 0),  # its sizes, whole
    "latent_tenths": lambda s: (_latent(s), 1),  # its weights, drawn at one decimal
    "deepseek": lambda s: (_DeepSeekCache(), 0),  # the published model's counts, whole
    "deepseek_ratio": lambda s: (_DeepSeekCache(), 1),  # its saving, one decimal
}

LATENT_BELONGS: dict[str, tuple[str, ...]] = {
    "embeddings": ("token", "d_in"), "latent": ("key", "d_c"), "cache": ("key", "d_c"),
    "content_keys": ("head", "key", "d_k"), "values": ("head", "key", "d_v"), "rope_keys": ("key", "d_k"),
    "content_queries": ("head", "query", "d_k"), "absorbed_queries": ("head", "query", "d_c"),
    "content_scores": ("head", *number_checks.ATTENTION), "absorbed_content_scores": ("head", *number_checks.ATTENTION),
    "rope_scores": ("head", *number_checks.ATTENTION), "scores": ("head", *number_checks.ATTENTION),
    "weights": ("head", *number_checks.ATTENTION), "rope_queries": ("head", "query", "d_k"),
}
"""What each index of a ``latent`` field names (for ``number_checks.BELONGS``-like wiring: a stack's first index is
the lecture's head; a row of the cache is a key)."""

LATENT_POSITIONS: dict[str, Callable[[Scenario], int]] = {"latent_head": lambda s: LATENT_SETUP["heads"]}

LATENT_SCENARIOS: dict[str, Callable[[], Scenario]] = {
    "latent-dog": lambda: preset(PRESET),
    "two": SCENARIOS["two"],
    "twelve": SCENARIOS["twelve"],  # d_in 3, a middle query (token 9)
    "eleven-wide": lambda: drawn("a quick brown fox jumps over the extraordinarily lazy dog here", d_in=4, d_k=2,
                                 d_v=2, seed=11, precision=4, decimals=2, low=-1.0, query=10),  # 4 decimals
    "seven": SCENARIOS["seven"],  # d_in 6
}
"""The lecture's test scenarios: its preset, 2, 7, 11 (4 decimals) and 12 tokens (the most it draws)."""


def registered(monkeypatch: pytest.MonkeyPatch) -> None:
    """The lecture, its sources and its counts in place for one test, as the merged code will have them."""
    monkeypatch.setitem(plan.LECTURES, LECTURE_NAME, SCENES)
    monkeypatch.setitem(plan.LECTURE_PRESETS, LECTURE_NAME, PRESET)
    for name, make in LATENT_DERIVED.items():
        monkeypatch.setitem(number_checks.DERIVED, name, make)
    counted = number_checks.position_count

    def position_count(kind: str, scenario: Scenario, derived: dict[str, tuple[Any, int]]) -> int:
        if kind in LATENT_POSITIONS:
            return LATENT_POSITIONS[kind](scenario)
        return counted(kind, scenario, derived)

    monkeypatch.setattr(number_checks, "position_count", position_count)
