"""The latent-attention lecture's number proof (``LECTURE.checks``): what its scenes show, derived again here.

Every source the scenes register is made from the scenario alone: MLA by ``attention_math.latent_attention`` on the
scenario's ``X`` with ``attention_math.latent_weights`` of the lecture's ``LATENT_SETUP`` (never the scenes'
``setting.latent_trace``); DeepSeek-V2's cache per token and layer, and Llama 2 7B's (lecture 9's memory), counted
here from their config.json, copied below (not from ``attention_math.DEEPSEEK_V2`` or ``PUBLISHED_CONFIGS``).
:data:`BELONGS` says what each index of a trace field names; the test scenarios run from 2 to 16 tokens and 0 to 4
decimals; :data:`FAULTS` are wrong numbers planted in the scenes, each of which the number checks must catch
(``tests/test_mutations.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from attention_math import Scenario, latent_attention, latent_weights, preset
from scenes.base import ExplainerScene
from scenes.facts import Fact
from scenes.latent_attention import GQA_GROUPS, LATENT_SETUP
from scenes.registry import LectureChecks, PlantedFault

__all__ = [
    "BELONGS", "CHECKS", "DEEPSEEK_V2_CONFIG_JSON", "FAULTS", "KEY_NUMBERS", "LLAMA_2_7B_CONFIG_JSON", "SCENARIOS",
]

DEEPSEEK_V2_CONFIG_JSON = {
    # https://huggingface.co/deepseek-ai/DeepSeek-V2/blob/main/config.json
    "num_hidden_layers": 60, "num_attention_heads": 128, "kv_lora_rank": 512, "qk_nope_head_dim": 128,
    "qk_rope_head_dim": 64, "v_head_dim": 128,
}
LLAMA_2_7B_CONFIG_JSON = {
    # https://huggingface.co/meta-llama/Llama-2-7b-hf/blob/main/config.json (float16)
    "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 32, "hidden_size": 4096,
}


def _latent(s: Scenario) -> Any:
    return latent_attention(s.embeddings, **latent_weights(s.d_in, **LATENT_SETUP), causal=True)


class _DeepSeekCache:
    """DeepSeek-V2's cache per token and layer, four ways (DeepSeek-V2, table 1), counted from its config.json."""

    def __init__(self) -> None:
        c = DEEPSEEK_V2_CONFIG_JSON
        self.n_heads, self.d_head, self.n_kv_heads = c["num_attention_heads"], c["qk_nope_head_dim"], GQA_GROUPS
        self.d_c, self.d_rope, self.layers = c["kv_lora_rank"], c["qk_rope_head_dim"], c["num_hidden_layers"]
        self.key_and_value = 2
        self.multi_head = 2 * self.n_heads * self.d_head
        self.grouped_query = 2 * GQA_GROUPS * self.d_head
        self.multi_query = 2 * self.d_head
        self.latent = self.d_c + self.d_rope
        self.sizes = np.array([self.multi_head, self.grouped_query, self.multi_query, self.latent])
        self.saving = self.multi_head / self.latent
        self.equivalent_groups = self.latent / (2 * self.d_head)


class _LlamaCache:
    """Llama 2 7B's cache per token, as lecture 9 counts it: 2 × layers × key/value heads × d_head × 2 bytes."""

    def __init__(self) -> None:
        c = LLAMA_2_7B_CONFIG_JSON
        self.layers, self.kv_heads = c["num_hidden_layers"], c["num_key_value_heads"]
        self.d_head = c["hidden_size"] // c["num_attention_heads"]
        self.kib_per_token = 2 * self.layers * self.kv_heads * self.d_head * 2 / 1024


DERIVED: dict[str, Callable[[Scenario], tuple[Any, int]]] = {
    "latent": lambda s: (_latent(s), s.precision),  # the trace, at the scenario's decimals
    "latent_whole": lambda s: (_latent(s), 0),  # its sizes, whole
    "latent_tenths": lambda s: (_latent(s), 1),  # its weights, one decimal each
    "deepseek": lambda s: (_DeepSeekCache(), 0),  # the published model's counts, whole
    "deepseek_ratio": lambda s: (_DeepSeekCache(), 1),  # its saving, one decimal
    "deepseek_groups": lambda s: (_DeepSeekCache(), 2),  # grouped-query heads as large, two decimals
    "llama": lambda s: (_LlamaCache(), 0),  # lecture 9's multi-head model, KiB a token
}

_ATTENTION = ("head", "query", "key")
_TRACE = {
    "embeddings": ("token", "d_in"), "latent": ("key", "d_c"), "cache": ("key",),
    "w_dkv": ("d_in", "d_c"), "w_kr": ("d_in", "d_rope"), "w_uk": ("d_c",), "w_uv": ("d_c",),
    "content_keys": ("head", "key", "d_k"), "values": ("head", "key", "d_v"), "rope_keys": ("key", "d_rope"),
    "unrotated_rope_keys": ("key", "d_rope"), "content_queries": ("head", "query", "d_k"),
    "absorbed_queries": ("head", "query", "d_c"), "rope_queries": ("head", "query", "d_rope"),
    "content_scores": _ATTENTION, "absorbed_content_scores": _ATTENTION, "rope_scores": _ATTENTION,
    "scores": _ATTENTION, "absorbed_scores": _ATTENTION, "scaled_scores": _ATTENTION, "weights": _ATTENTION,
    "context": ("head", "query", "d_v"), "latent_context": ("head", "query", "d_c"),
}
BELONGS: dict[str, dict[str, tuple[str, ...]]] = {
    "latent": _TRACE, "latent_whole": _TRACE, "latent_tenths": _TRACE,
    "deepseek": {"sizes": ("mla",)},
}
"""What each index of a field names: a stack's first index is the lecture's head, a row of the cache a key, entry m
of DeepSeek-V2's ``sizes`` the way of caching m (multi-head, grouped-query, multi-query, latent)."""

_SIXTEEN = "Attention lets every token look back at all the others and choose what matters most here"
_TWELVE = "The quick brown fox jumps over the extraordinarily lazy dog near water"


def _drawn(sentence: str, *, d_in: int, seed: int, precision: int, query: int, decimals: int = 1) -> Scenario:
    """A scenario of ``sentence`` whose embeddings are drawn (seeded) from [−1, 1] at ``decimals`` (its plain
    attention weights too, which the lecture never shows)."""
    rng = np.random.default_rng(seed)
    words = tuple(sentence.split())

    def draw(rows: int, columns: int) -> np.ndarray:
        return np.round(rng.uniform(-1.0, 1.0, size=(rows, columns)), decimals) + 0.0

    return Scenario(title=sentence, tokens=words, embeddings=draw(len(words), d_in), w_query=draw(d_in, 2),
                    w_key=draw(d_in, 2), w_value=draw(d_in, 2), query=query, precision=precision)


SCENARIOS: dict[str, Callable[[], Scenario]] = {
    "latent-dog": lambda: preset("latent-dog"),
    "latent-two": lambda: Scenario.from_sentence("Hello world", seed=4),  # the last token asks: two keys
    "latent-first": lambda: Scenario.from_sentence("Hello world", seed=4, query=1),  # the first: itself alone
    "latent-seven": lambda: _drawn("one two three four five six seven", d_in=6, seed=7, precision=0, query=3),
    "latent-twelve": lambda: _drawn(_TWELVE, d_in=4, seed=12, precision=4, query=8, decimals=2),
    "latent-sixteen": lambda: _drawn(_SIXTEEN, d_in=3, seed=16, precision=2, query=15),
}
"""The lecture's test scenarios: its preset; 2 tokens asked by the last and by the first; 7 tokens of 6 dimensions
shown whole; 12 tokens at 4 decimals with a long word, a middle query; 16 tokens, the last asking (every row)."""

# -- the planted faults --------------------------------------------------------------------------------------------


def _rows_one_down(field: str) -> Callable[[Any], None]:
    """Row i of ``latent.field`` shows row i + 1's numbers (the last row the first's): true numbers, a row off."""
    def plant(monkeypatch: Any) -> None:
        number = ExplainerScene.number

        def planted(self: ExplainerScene, source: str, name: str, *index: int, **options: Any) -> Any:
            if name == field and len(index) >= 2:
                axis = len(index) - 2  # the key's index: the second last
                moved = list(index)
                moved[axis] = (moved[axis] + 1) % self.scenario.n_tokens
                index = tuple(moved)
            return number(self, source, name, *index, **options)

        monkeypatch.setattr(ExplainerScene, "number", planted)

    return plant


def _heads_swapped(monkeypatch: Any) -> None:
    """Every head's keys and values drawn from the other head (head 1 under head 2's title, and back)."""
    number = ExplainerScene.number

    def planted(self: ExplainerScene, source: str, name: str, *index: int, **options: Any) -> Any:
        if name in ("content_keys", "values") and len(index) == 3:
            index = (1 - index[0], *index[1:])
        return number(self, source, name, *index, **options)

    monkeypatch.setattr(ExplainerScene, "number", planted)


def _typed_score(monkeypatch: Any) -> None:
    """The absorbed scores drawn as typed text (one unit more in the last decimal), never recorded."""
    from scenes.kit.text import text

    number = ExplainerScene.number

    def planted(self: ExplainerScene, source: str, name: str, *index: int, **options: Any) -> Any:
        mob = number(self, source, name, *index, **options)
        if name != "absorbed_content_scores":
            return mob
        self.shown.pop()
        places = self.scenario.precision
        typed = f"{self.value_of(Fact(source, name, index)) + 10.0 ** -places:.{places}f}".replace("-", "−")
        return text(typed, size=options.get("size", 24), color=options.get("color", "#FFFFFF"))

    monkeypatch.setattr(ExplainerScene, "number", planted)


def _caption_of_another_key(monkeypatch: Any) -> None:
    """A caption names a key and cites the score of the key before it (a true number, tied to the wrong key)."""
    fmt = ExplainerScene.fmt

    def planted(self: ExplainerScene, source: str, name: str, *index: int, reduce: str | None = None) -> str:
        if name in ("absorbed_content_scores", "weights", "scores") and len(index) == 3:
            index = (*index[:2], (index[2] - 1) % (index[1] + 1))
        return fmt(self, source, name, *index, reduce=reduce)

    monkeypatch.setattr(ExplainerScene, "fmt", planted)


def _fields_swapped(first: str, second: str) -> Callable[[Any], None]:
    """``latent.first`` drawn where ``latent.second`` stands and back (same index, each within the other's width):
    true numbers under another quantity's header."""
    def plant(monkeypatch: Any) -> None:
        number = ExplainerScene.number
        other = {first: second, second: first}

        def planted(self: ExplainerScene, source: str, name: str, *index: int, **options: Any) -> Any:
            if source == "latent" and name in other:
                name = other[name]
            return number(self, source, name, *index, **options)

        monkeypatch.setattr(ExplainerScene, "number", planted)

    return plant


def _caption_of_the_other_head(monkeypatch: Any) -> None:
    """A caption names head 1 and cites head 2's number for the same query and key (a true number, the wrong
    head)."""
    fmt = ExplainerScene.fmt

    def planted(self: ExplainerScene, source: str, name: str, *index: int, reduce: str | None = None) -> str:
        if source == "latent" and name in ("absorbed_content_scores", "weights") and len(index) == 3:
            index = (1 - index[0], *index[1:])
        return fmt(self, source, name, *index, reduce=reduce)

    monkeypatch.setattr(ExplainerScene, "fmt", planted)


def _sizes_one_down(monkeypatch: Any) -> None:
    """Each way of caching shows the next one's size (the latent's multi-head's): true numbers in the wrong row."""
    number = ExplainerScene.number

    def planted(self: ExplainerScene, source: str, name: str, *index: int, **options: Any) -> Any:
        if (source, name) == ("deepseek", "sizes"):
            index = ((index[0] + 1) % 4,)
        return number(self, source, name, *index, **options)

    monkeypatch.setattr(ExplainerScene, "number", planted)


def _heads_counted_on(monkeypatch: Any) -> None:
    """Heads numbered from 2 ("head 3" for the second, which the lecture's weights do not have)."""
    label = ExplainerScene.label

    def planted(self: ExplainerScene, template: str, *parts: Any, **options: Any) -> Any:
        moved = [Fact("position", p.field, (p.index[0] + 1,)) if isinstance(p, Fact) and p.field == "latent_head"
                 else p for p in parts]
        return label(self, template, *moved, **options)

    monkeypatch.setattr(ExplainerScene, "label", planted)


FAULTS = (
    PlantedFault("latent row one down", "LatentProjection", _rows_one_down("latent"),
                 ("latent-dog", "latent-twelve")),
    PlantedFault("latent heads swapped", "LatentProjection", _heads_swapped, ("latent-dog",)),
    PlantedFault("typed absorbed score", "Absorption", _typed_score, ("latent-dog", "latent-seven")),
    PlantedFault("absorbed score of the key before", "Absorption", _caption_of_another_key, ("latent-dog",)),
    PlantedFault("rope keys one down", "DecoupledRope", _rows_one_down("rope_keys"), ("latent-dog", "latent-two")),
    PlantedFault("rope weight of the key before", "DecoupledRope", _caption_of_another_key, ("latent-dog",)),
    PlantedFault("latent heads counted on", "DecoupledRope", _heads_counted_on, ("latent-dog",)),
    PlantedFault("rope and content scores swapped", "DecoupledRope", _fields_swapped("content_scores", "rope_scores"),
                 ("latent-dog", "latent-twelve")),
    PlantedFault("cache halves swapped", "DecoupledRope", _fields_swapped("latent", "rope_keys"),
                 ("latent-dog", "latent-seven")),
    PlantedFault("rope weight of the other head", "DecoupledRope", _caption_of_the_other_head, ("latent-dog",)),
    PlantedFault("absorbed score of the other head", "Absorption", _caption_of_the_other_head, ("latent-dog",)),
    PlantedFault("cache sizes one down", "LatentCacheSizes", _sizes_one_down, ("latent-dog",)),
)
"""Wrong numbers planted in the lecture's scenes: true numbers in another row or head, in another quantity's column
(q_C·k_C under q_R·k_R), the cache's halves swapped ([k_R | c_KV] under [c_KV | k_R]'s headers), a typed number, a
caption tied to the wrong key or head, a head that does not exist."""

def _every(*shape: Callable[[Scenario], int]) -> Callable[[Scenario], list[tuple[int, ...]]]:
    """Every index of an array of the given sizes (each a function of the scenario)."""
    return lambda s: [tuple(int(i) for i in index) for index in np.ndindex(*(size(s) for size in shape))]


def _head_one(*rest: Callable[[Scenario], int]) -> Callable[[Scenario], list[tuple[int, ...]]]:
    """Head 1's every index of the given sizes after the head."""
    return lambda s: [(0, *index) for index in _every(*rest)(s)]


def _query_row(width: int = 0) -> Callable[[Scenario], list[tuple[int, ...]]]:
    """Head 1's numbers of the query's row: a key each up to the query (``width`` 0), or its ``width`` numbers."""
    if width:
        return lambda s: [(0, s.query, c) for c in range(width)]
    return lambda s: [(0, s.query, j) for j in range(s.query + 1)]


def _tokens(s: Scenario) -> int:
    return s.n_tokens


def _d_in(s: Scenario) -> int:
    return s.d_in


def _d_c(s: Scenario) -> int:
    return LATENT_SETUP["d_c"]


def _d_h(s: Scenario) -> int:
    return LATENT_SETUP["d_h"]


KEY_NUMBERS = {
    "LatentProjection": (("llama", "kib_per_token", lambda s: [()]), ("latent", "embeddings", _every(_tokens, _d_in)),
                         ("latent", "latent", _every(_tokens, _d_c)),
                         ("latent", "content_keys", _head_one(_tokens, _d_h)),
                         ("latent", "values", _head_one(_tokens, _d_h))),
    "Absorption": (("latent", "content_queries", _query_row(LATENT_SETUP["d_h"])),
                   ("latent", "absorbed_queries", _query_row(LATENT_SETUP["d_c"])),
                   ("latent", "content_scores", _query_row()), ("latent", "absorbed_content_scores", _query_row())),
    "DecoupledRope": (("latent", "rope_queries", _query_row(LATENT_SETUP["d_rope"])),
                      ("latent", "rope_keys", lambda s: [(j, c) for j in range(s.query + 1)
                                                         for c in range(LATENT_SETUP["d_rope"])]),
                      ("latent", "content_scores", _query_row()), ("latent", "rope_scores", _query_row()),
                      ("latent", "weights", _query_row())),
    "LatentCacheSizes": (("deepseek", "sizes", lambda s: [(m,) for m in range(4)]),),
}
"""What each scene must show at least: the latent and head 1's keys and values; the query's absorbed and usual
scores; its RoPE parts, scores and weights; DeepSeek-V2's four sizes."""

CHECKS = LectureChecks(
    derived=DERIVED,
    belongs=BELONGS,
    positions={"latent_head": lambda s: LATENT_SETUP["heads"]},
    scenarios=SCENARIOS,
    scene_scenarios={
        # DeepSeek-V2's sizes, whatever the scenario
        "LatentCacheSizes": ("latent-dog",),
    },
    faults=FAULTS,
    key_numbers=KEY_NUMBERS,
    read_back=("DecoupledRope", "latent-dog", 30),
)
"""The lecture's number proof."""
