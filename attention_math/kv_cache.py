"""Generation with a KV cache, and the size of the cache in published models.

A decoder writes one token at a time. The output of token ``t`` under causal attention needs its
query ``q_t`` and the keys and values ``k_1..k_t``, ``v_1..v_t`` of every token so far (on the
board tokens count from 1; the steps here count from 0); those of the earlier tokens do not
change when a token is added. So keep them (the cache): each step
projects the new token once, appends its key and value as one new row of ``K`` and ``V``, and
lets its one query attend to all the rows. The step's context is row ``t`` of full causal
attention over the sentence. Without a cache, every step projects every token's key and value
again. :func:`kv_cache_generation` does both and counts the multiplies each way.

The cache costs memory instead: per token, a key and a value (2) per layer, per key/value head,
of ``d_head`` numbers each: ``2 × layers × kv_heads × d_head × bytes per number``
(:func:`kv_cache_bytes`). Multi-query attention (Shazeer 2019, arXiv 1911.02150) keeps one
key/value head; grouped-query attention (Ainslie et al. 2023, arXiv 2305.13245) keeps ``g``;
:data:`PUBLISHED_CONFIGS` has models of each kind, from their published ``config.json``
(``d_head = hidden_size / num_attention_heads``; 2 bytes a number, the configs' float16 or bfloat16):

- Llama-2-7B, multi-head: 32 layers, 32 heads, ``num_key_value_heads`` 32, hidden size 4096,
  float16; https://huggingface.co/meta-llama/Llama-2-7b-hf/blob/main/config.json
- Llama-2-70B, grouped-query: 80 layers, 64 heads, 8 key/value heads, hidden size 8192,
  float16; https://huggingface.co/meta-llama/Llama-2-70b-hf/blob/main/config.json
- Mistral-7B-v0.1, grouped-query: 32 layers, 32 heads, 8 key/value heads, hidden size 4096,
  bfloat16; https://huggingface.co/mistralai/Mistral-7B-v0.1/blob/main/config.json
- Falcon-7B, multi-query: 32 layers, 71 heads, ``"multi_query": true`` (one key/value head),
  hidden size 4544, bfloat16; https://huggingface.co/tiiuae/falcon-7b/blob/main/config.json
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ._core import AttentionTrace, FloatArray, checked_attention, checked_matrices, owned, softmax
from ._errors import ScenarioError

__all__ = [
    "PUBLISHED_CONFIGS", "CacheMemory", "CacheStep", "KVCacheTrace", "ModelConfig", "cache_memory", "kv_cache_bytes",
    "kv_cache_generation",
]


@dataclass(frozen=True, eq=False)
class CacheStep:
    """One step of generation with a KV cache: the new token's query against the cache.

    Attributes
    ----------
    index
        ``t``, the 0-based position of the new token (on screen, token ``t + 1``); the cache
        holds tokens ``0..t`` after this step.
    embedding
        ``x_t``, the new token's row of ``X``.
    query, new_key, new_value
        ``q_t = x_t W_Q``, ``k_t = x_t W_K`` and ``v_t = x_t W_V``: the new token's projections,
        the only ones this step computes.
    keys, values
        The cache after this step: ``t + 1`` rows, ``k_0..k_t`` and ``v_0..v_t``; the new row
        is the last (``keys[index]``). Equal to ``K[:t + 1]`` and ``V[:t + 1]`` of the sentence.
    scores
        ``K q_t``: the new query against every cached key, ``t + 1`` numbers.
    scaled_scores
        ``scores / √d_k`` (``scores`` when unscaled).
    weights
        ``softmax(scaled_scores)``: row ``t`` of the causal weights without its masked zeros.
    context
        ``weights @ values``, ``z_t``: row ``t`` of full causal attention (to rounding).
    context_without_cache
        ``z_t`` computed again without the cache, every key and value projected anew.
    multiplies_with_cache
        Scalar multiplies of the matrix products this step did with the cache (counted as
        they were done): ``d_in · (2 d_k + d_v)`` to project ``q_t, k_t, v_t``, ``(t + 1) · d_k``
        for the scores and ``(t + 1) · d_v`` for the context.
    multiplies_without_cache
        The same, for the step without a cache: ``(t + 1) · d_in · (d_k + d_v)`` to project the
        keys and values of tokens ``0..t``, ``d_in · d_k`` for ``q_t``, and the same scores and
        context. The difference, ``t · d_in · (d_k + d_v)``, is the earlier tokens' keys and
        values, projected again. The division by ``√d_k`` and the softmax are the same either
        way and not counted.
    """

    index: int
    embedding: FloatArray
    query: FloatArray
    new_key: FloatArray
    new_value: FloatArray
    keys: FloatArray
    values: FloatArray
    scores: FloatArray
    scaled_scores: FloatArray
    weights: FloatArray
    context: FloatArray
    context_without_cache: FloatArray
    multiplies_with_cache: int
    multiplies_without_cache: int


@dataclass(frozen=True, eq=False)
class KVCacheTrace:
    """Generation token by token with a KV cache, and full causal attention to compare with.

    Attributes
    ----------
    steps
        One :class:`CacheStep` per token, ``steps[t]`` for token ``t`` (0-based).
    full
        ``self_attention(X, W_Q, W_K, W_V, causal=True)``: step ``t``'s weights and context are
        its row ``t`` (the weights without the masked zeros).
    """

    steps: tuple[CacheStep, ...]
    full: AttentionTrace

    @property
    def n_tokens(self) -> int:
        """The number of tokens (and of steps)."""
        return len(self.steps)

    @property
    def keys(self) -> FloatArray:
        """The cache of keys after the last step: ``K``, one row per token."""
        return self.steps[-1].keys

    @property
    def values(self) -> FloatArray:
        """The cache of values after the last step: ``V``, one row per token."""
        return self.steps[-1].values

    @property
    def total_multiplies_with_cache(self) -> int:
        """The multiplies of every step with the cache, added up."""
        return sum(step.multiplies_with_cache for step in self.steps)

    @property
    def total_multiplies_without_cache(self) -> int:
        """The multiplies of every step without a cache, added up."""
        return sum(step.multiplies_without_cache for step in self.steps)


class _Tally:
    """Computes matrix products and counts their scalar multiplies as it goes."""

    def __init__(self) -> None:
        self.multiplies = 0

    def product(self, left: FloatArray, right: FloatArray) -> FloatArray:
        """``left @ right``; an ``m × k`` by ``k × p`` product takes ``m·k·p`` multiplies."""
        # A vector on the left is one row; on the right, one column.
        self.multiplies += left.size * (right.shape[1] if right.ndim == 2 else 1)
        result: FloatArray = left @ right
        return result


def _attend(
    tally: _Tally, query: FloatArray, keys: FloatArray, values: FloatArray, sqrt_d_k: float
) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
    """One query against its keys and values: scores, scaled scores, weights and context."""
    scores = tally.product(keys, query)
    scaled_scores = scores / sqrt_d_k
    weights = softmax(scaled_scores)
    return scores, scaled_scores, weights, tally.product(weights, values)


def _step(full: AttentionTrace, t: int, cached_keys: FloatArray, cached_values: FloatArray) -> CacheStep:
    """Token ``t``'s step: with the cache of tokens ``0..t-1``, then without any cache."""
    x = full.embeddings[t]
    with_cache = _Tally()
    query = with_cache.product(x, full.w_query)
    new_key = with_cache.product(x, full.w_key)
    new_value = with_cache.product(x, full.w_value)
    keys = np.vstack([cached_keys, new_key])
    values = np.vstack([cached_values, new_value])
    scores, scaled_scores, weights, context = _attend(with_cache, query, keys, values, full.sqrt_d_k)
    # Without a cache the keys and values of tokens 0..t are all projected again.
    without_cache = _Tally()
    seen = full.embeddings[: t + 1]
    again = _attend(
        without_cache,
        without_cache.product(x, full.w_query),
        without_cache.product(seen, full.w_key),
        without_cache.product(seen, full.w_value),
        full.sqrt_d_k,
    )
    return CacheStep(
        index=t,
        embedding=owned(x.copy()),
        query=owned(query),
        new_key=owned(new_key),
        new_value=owned(new_value),
        keys=owned(keys),
        values=owned(values),
        scores=owned(scores),
        scaled_scores=owned(scaled_scores),
        weights=owned(weights),
        context=owned(context),
        context_without_cache=owned(again[3]),
        multiplies_with_cache=with_cache.multiplies,
        multiplies_without_cache=without_cache.multiplies,
    )


def kv_cache_generation(
    embeddings: npt.ArrayLike,
    w_query: npt.ArrayLike,
    w_key: npt.ArrayLike,
    w_value: npt.ArrayLike,
    *,
    scaled: bool = True,
) -> KVCacheTrace:
    """Causal self-attention token by token, as a decoder generates, keeping K and V in a cache.

    Step ``t`` (0-based) projects token ``t`` alone to ``q_t, k_t, v_t``, appends ``k_t`` and
    ``v_t`` to the cache and attends from ``q_t`` to the ``t + 1`` cached rows; each step is
    also done without a cache, to count what the cache saves.

    Parameters
    ----------
    embeddings
        ``X``, ``n × d_in``: the tokens in the order they are generated.
    w_query, w_key, w_value
        ``W_Q`` and ``W_K``, ``d_in × d_k``; ``W_V``, ``d_in × d_v``.
    scaled
        Divide the scores by ``√d_k`` (the default).

    Returns
    -------
    KVCacheTrace
        The steps and the full causal trace, as read-only arrays; the inputs are not touched. A
        ``ScenarioError`` names the field of a matrix that is not a non-empty 2-d array of finite
        numbers, of shapes that disagree, or of numbers that overflow (as in ``self_attention``).

    Examples
    --------
    >>> X = [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]
    >>> I = [[1.0, 0.0], [0.0, 1.0]]
    >>> trace = kv_cache_generation(X, I, I, I)
    >>> step = trace.steps[2]
    >>> step.keys
    array([[1., 0.],
           [0., 1.],
           [1., 1.]])
    >>> step.weights.round(3), trace.full.weights[2].round(3)
    (array([0.248, 0.248, 0.503]), array([0.248, 0.248, 0.503]))
    >>> [s.multiplies_with_cache for s in trace.steps], [s.multiplies_without_cache for s in trace.steps]
    ([16, 20, 24], [16, 28, 40])
    >>> trace.total_multiplies_with_cache, trace.total_multiplies_without_cache
    (60, 84)
    """
    x, wq, wk, wv = checked_matrices(embeddings, w_query, w_key, w_value)
    full = checked_attention(x, wq, wk, wv, scaled=bool(scaled), causal=True)
    keys: FloatArray = np.empty((0, wk.shape[1]))
    values: FloatArray = np.empty((0, wv.shape[1]))
    steps = []
    for t in range(full.n_tokens):
        step = _step(full, t, keys, values)
        steps.append(step)
        keys, values = step.keys, step.values
    return KVCacheTrace(steps=tuple(steps), full=full)


def kv_cache_bytes(layers: int, kv_heads: int, d_head: int, bytes_per_number: int = 2, tokens: int = 1) -> int:
    """The memory a KV cache takes: ``2 × layers × kv_heads × d_head × bytes_per_number × tokens``.

    Each token keeps a key and a value (the 2) in every layer, for every key/value head, each
    of ``d_head`` numbers.

    Parameters
    ----------
    layers, kv_heads, d_head
        The model's layers, key/value heads per layer and numbers per head.
    bytes_per_number
        2 for float16 or bfloat16 (the default), 4 for float32, 1 for an 8-bit cache.
    tokens
        The tokens cached (the context length times the batch size).

    Returns
    -------
    int
        Bytes.

    Raises
    ------
    ScenarioError
        If an argument is not a whole number of at least 1 (``tokens`` may be 0).

    Examples
    --------
    A 32-layer model with 32 heads of 128 in float16, then with 8 key/value heads:

    >>> kv_cache_bytes(32, 32, 128) // 1024, kv_cache_bytes(32, 8, 128) // 1024
    (512, 128)
    >>> kv_cache_bytes(32, 8, 128, tokens=4096) / 2**30
    0.5
    """
    arguments = {"layers": layers, "kv_heads": kv_heads, "d_head": d_head, "bytes_per_number": bytes_per_number}
    for name, value in (*arguments.items(), ("tokens", tokens)):
        least = 0 if name == "tokens" else 1
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < least:
            raise ScenarioError(f"{name}: expected a whole number of at least {least}, got {value!r}")
    return 2 * math.prod(int(value) for value in arguments.values()) * int(tokens)


@dataclass(frozen=True)
class ModelConfig:
    """The attention shape of a published model, as its ``config.json`` gives it.

    Attributes
    ----------
    name
        The model's name on the Hugging Face Hub.
    layers
        ``num_hidden_layers`` (``n_layer``).
    query_heads
        ``num_attention_heads`` (``n_head``).
    kv_heads
        ``num_key_value_heads``; 1 where the config says ``"multi_query": true``.
    d_head
        ``hidden_size / num_attention_heads``.
    dtype, bytes_per_number
        The config's ``torch_dtype`` and the bytes of one number in it.
    source
        The address of the config.

    Examples
    --------
    :data:`PUBLISHED_CONFIGS` holds a model of each kind, with the cache it keeps per token
    beside the one it would keep with as many key/value heads as query heads:

    >>> for config in PUBLISHED_CONFIGS:
    ...     print(f"{config.name:26} {config.attention:13} {config.cache_bytes() // 1024:4} KiB"
    ...           f" (multi-head: {config.multi_head_cache_bytes() // 1024} KiB)")
    meta-llama/Llama-2-7b-hf   multi-head     512 KiB (multi-head: 512 KiB)
    meta-llama/Llama-2-70b-hf  grouped-query  320 KiB (multi-head: 2560 KiB)
    mistralai/Mistral-7B-v0.1  grouped-query  128 KiB (multi-head: 512 KiB)
    tiiuae/falcon-7b           multi-query      8 KiB (multi-head: 568 KiB)
    """

    name: str
    layers: int
    query_heads: int
    kv_heads: int
    d_head: int
    dtype: str
    bytes_per_number: int
    source: str

    @property
    def attention(self) -> str:
        """``"multi-head"``, ``"grouped-query"`` or ``"multi-query"``."""
        if self.kv_heads == self.query_heads:
            return "multi-head"
        return "multi-query" if self.kv_heads == 1 else "grouped-query"

    @property
    def group_size(self) -> int:
        """Query heads per key/value head."""
        return self.query_heads // self.kv_heads

    def cache_bytes(self, tokens: int = 1) -> int:
        """The KV cache of ``tokens`` tokens, in bytes."""
        return kv_cache_bytes(self.layers, self.kv_heads, self.d_head, self.bytes_per_number, tokens)

    def multi_head_cache_bytes(self, tokens: int = 1) -> int:
        """The cache the same model would keep with one key/value head per query head."""
        return kv_cache_bytes(self.layers, self.query_heads, self.d_head, self.bytes_per_number, tokens)


# d_head is hidden_size / num_attention_heads; Falcon-7B's config says "multi_query": true (one key/value head).
PUBLISHED_CONFIGS: tuple[ModelConfig, ...] = (
    ModelConfig("meta-llama/Llama-2-7b-hf", 32, 32, 32, 4096 // 32, "float16", 2,
                "https://huggingface.co/meta-llama/Llama-2-7b-hf/blob/main/config.json"),
    ModelConfig("meta-llama/Llama-2-70b-hf", 80, 64, 8, 8192 // 64, "float16", 2,
                "https://huggingface.co/meta-llama/Llama-2-70b-hf/blob/main/config.json"),
    ModelConfig("mistralai/Mistral-7B-v0.1", 32, 32, 8, 4096 // 32, "bfloat16", 2,
                "https://huggingface.co/mistralai/Mistral-7B-v0.1/blob/main/config.json"),
    ModelConfig("tiiuae/falcon-7b", 32, 71, 1, 4544 // 71, "bfloat16", 2,
                "https://huggingface.co/tiiuae/falcon-7b/blob/main/config.json"),
)


@dataclass(frozen=True, eq=False)
class CacheMemory:
    """The KV cache of one model: its factors, per token and for a context of many tokens.

    Attributes
    ----------
    config
        The model (:class:`ModelConfig`).
    context_tokens
        The tokens of the long context.
    key_and_value
        2: a token keeps a key and a value in every layer, for every key/value head.
    layers, kv_heads, d_head, bytes_per_number
        The model's, as its config gives them.
    bytes_per_token
        ``key_and_value × layers × kv_heads × d_head × bytes_per_number``.
    context_bytes
        ``bytes_per_token × context_tokens``.
    kib_per_token, gib_context
        The same in KiB (1024 bytes) and GiB (2³⁰ bytes).
    multi_head_kib_per_token
        What one token would keep with a key/value head per query head (multi-head attention), in KiB.
    """

    config: ModelConfig
    context_tokens: int
    key_and_value: int
    layers: int
    kv_heads: int
    d_head: int
    bytes_per_number: int
    bytes_per_token: int
    context_bytes: int
    kib_per_token: float
    gib_context: float
    multi_head_kib_per_token: float


def cache_memory(config: ModelConfig, context_tokens: int) -> CacheMemory:
    """The memory of ``config``'s KV cache, per token and for ``context_tokens`` tokens.

    Parameters
    ----------
    config
        A model's attention shape, as :data:`PUBLISHED_CONFIGS` holds them.
    context_tokens
        The long context's tokens (the context length times the batch size).

    Returns
    -------
    CacheMemory
        Its factors and sizes. A ``ScenarioError`` names a ``config`` that is not a
        :class:`ModelConfig`, or a ``context_tokens`` that is not a whole number of at least 1.

    Examples
    --------
    Llama-2-7B keeps 512 KiB a token, 2 GiB for its 4096-token context; Falcon-7B, one key/value
    head for its 71 query heads, 8 KiB instead of 568:

    >>> llama, falcon = (cache_memory(config, 4096) for config in (PUBLISHED_CONFIGS[0], PUBLISHED_CONFIGS[3]))
    >>> llama.kib_per_token, llama.gib_context, llama.bytes_per_token
    (512.0, 2.0, 524288)
    >>> falcon.kib_per_token, falcon.multi_head_kib_per_token, falcon.kv_heads, falcon.d_head
    (8.0, 568.0, 1, 64)
    >>> cache_memory(PUBLISHED_CONFIGS[0], 0)
    Traceback (most recent call last):
    ...
    attention_math._errors.ScenarioError: context_tokens: expected a whole number of at least 1, got 0
    """
    if not isinstance(config, ModelConfig):
        raise ScenarioError(f"config: expected a ModelConfig (one of PUBLISHED_CONFIGS), got {type(config).__name__}")
    if isinstance(context_tokens, bool) or not isinstance(context_tokens, (int, np.integer)) or context_tokens < 1:
        raise ScenarioError(f"context_tokens: expected a whole number of at least 1, got {context_tokens!r}")
    per_token = config.cache_bytes()
    return CacheMemory(
        config=config,
        context_tokens=int(context_tokens),
        key_and_value=2,
        layers=config.layers,
        kv_heads=config.kv_heads,
        d_head=config.d_head,
        bytes_per_number=config.bytes_per_number,
        bytes_per_token=per_token,
        context_bytes=config.cache_bytes(int(context_tokens)),
        kib_per_token=per_token / 1024,
        gib_context=config.cache_bytes(int(context_tokens)) / 2**30,
        multi_head_kib_per_token=config.multi_head_cache_bytes() / 1024,
    )
