"""The number checks: every digit a scene draws or says, derived again from attention_math.

A scene records each number it draws or says as a :class:`scenes.facts.Fact` (``scene.shown``,
``beat.said``). The checks here never read a number the scene made: for each fact they derive
the expected number from the scenario and ``attention_math`` alone (:data:`DERIVED`, formatted
by :func:`expected_text`, not by the scenes' formatter) and compare it with

- the text the scene recorded and the precision it used;
- the text its mobject really carries (for a label, every number in it, in order);
- the numbers the beat's caption says, in order, each of which must be on screen in that beat.

Each number must also stand in its place (:func:`place_problems`): :data:`BELONGS` says, from the
fact alone, which token, key or dimension a number belongs to (``trace.weights[i, j]``: query i's
row and key j's column), and the bands the scene registered (:class:`scenes.facts.Bands`: rows,
columns, an anchor per index) say where each one is drawn; at the end of every play a number must
stand in its own band, not another's.

A text on screen with a digit that no fact accounts for fails (:func:`stray_digits`): a typed
"√7" is as wrong as a typed "0.42". Tokens hold any characters, digits too: a label marked as a
token is checked to be that token, shortened at most.
"""

from __future__ import annotations

import math
import re
from bisect import bisect_right
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from decimal import ROUND_HALF_EVEN, ROUND_HALF_UP, Decimal
from functools import cache
from typing import Any

import numpy as np

from attention_math import (
    AttentionTrace,
    ScalingSpread,
    Scenario,
    TrainingTrace,
    multi_head_attention,
    preset,
    renormalised_weights,
    scaling_spread,
    self_attention,
    train_attention,
)
from attention_math.alignment import alignment
from attention_math.masking import attention_dropout
from scenes import inference, learned
from scenes.facts import Fact, Named, Plotted, Relation, Shown
from scenes.flash_attention import FLASH_BLOCKS
from scenes.kit.text import shorten_token
from scenes.masked import MASKED_DROPOUT
from scenes.registry import Lecture, LectureChecks, lecture_of_scene, lectures

__all__ = [
    "BELONGS",
    "DERIVED",
    "BandsSeen",
    "PlainSmolLayer",
    "belongs_to",
    "canonical",
    "caption_numbers",
    "caption_problems",
    "declared_checks",
    "derive_all",
    "describe_fact",
    "expected_for",
    "expected_text",
    "is_shortened",
    "lecture_checks",
    "masked_row",
    "numbers_in",
    "place_problems",
    "placements",
    "plain_smol_layer",
    "plotted_problems",
    "relation_problems",
    "shown_problems",
    "smol_cache_rows",
    "stray_digits",
]

GENERATION_STEPS = 24
"""The inference lecture's cache scene shows at most this many steps (16 tokens; a real model's prompt and what it
writes: ``scenes.inference.kv_cache.MOST_ROWS``)."""

_NUMBER = re.compile(r"[−-]?\d+(?:\.\d+)?|[−-]?∞")


def expected_text(value: float, precision: int) -> str:
    """The on-screen form of ``value``, derived here without the scenes' formatter.

    Fixed decimals (round half to even on the exact binary value, as Python's own formatting
    does), U+2212 for minus, no "−0.00", and "−∞" for a masked score.
    """
    if np.isnan(value):
        raise ValueError("NaN is never a displayable number")
    if np.isinf(value):
        return "−∞" if value < 0 else "∞"
    quantum = Decimal(1).scaleb(-precision)
    rounded = Decimal(float(value)).quantize(quantum, rounding=ROUND_HALF_EVEN)
    digits = f"{abs(rounded):f}"
    return "−" + digits if rounded < 0 else digits


class _OwnEnds:
    """A field's own smallest and largest finite entry, as a legend that is not widened writes them."""

    def __init__(self, trace: Any) -> None:
        self._trace = trace

    def __getattr__(self, name: str) -> np.ndarray:
        matrix = np.asarray(getattr(self._trace, name), dtype=float)
        finite = matrix[np.isfinite(matrix)]
        return np.array([finite.min(), finite.max()])


class _Ranges:
    """The ends of each heat map's colour scale, as its legend writes them: the matrix's smallest and
    largest finite entry, widened about their middle to a least span where they are closer: 1 for
    scaled scores, √d_k for raw ones (1 unscaled), half the largest weight for weights (the scale
    then moved, not shrunk, to lie within [0, 1]), a quarter of the largest magnitude otherwise."""

    def __init__(self, trace: Any) -> None:
        self._trace = trace

    def __getattr__(self, name: str) -> np.ndarray:
        matrix = np.asarray(getattr(self._trace, name), dtype=float)
        finite = matrix[np.isfinite(matrix)]
        low, high = float(finite.min()), float(finite.max())
        if name == "scaled_scores":
            least = 1.0
        elif name == "scores":
            least = float(np.sqrt(self._trace.d_k)) if self._trace.scaled else 1.0
        else:
            least = float(np.abs(finite).max()) * (0.5 if name == "weights" else 0.25)
        if high - low < least:
            low, high = (low + high) / 2 - least / 2, (low + high) / 2 + least / 2
            if name == "weights" and low < 0:
                low, high = 0.0, least
            elif name == "weights" and high > 1:
                low, high = 1.0 - least, 1.0
        return np.array([low, high])


def _raw_dot_product() -> Scenario:
    return preset("raw-dot-product")


_HEADS: dict[int, tuple[Scenario, tuple[Any, ...], Any]] = {}


def _heads(s: Scenario) -> tuple[tuple[Any, ...], Any]:
    """Every head's trace, and the multi-head trace (``None`` for one head), computed here from the inputs."""
    known = _HEADS.get(id(s))
    if known is None or known[0] is not s:
        if s.w_out is None:
            made: tuple[tuple[Any, ...], Any] = (
                (self_attention(s.embeddings, s.w_query, s.w_key, s.w_value, scaled=s.scaled),), None)
        else:
            multi = multi_head_attention(s.embeddings, s.w_query, s.w_key, s.w_value, s.w_out, scaled=s.scaled)
            made = (multi.heads, multi)
        known = _HEADS[id(s)] = (s, *made)
    return known[1], known[2]


def _head(s: Scenario, k: int) -> Any:
    """Head ``k`` (from 0) of the scenario, or ``None`` when it has fewer heads."""
    heads = _heads(s)[0]
    return heads[k] if k < len(heads) else None


def masked_row(s: Scenario) -> int:
    """The row the masked lecture follows (and lecture 6's last scene): the query's, if a token comes after it;
    else, the last token seeing every key masked or not, token 3's (token 1's with fewer than 3 tokens, or if
    the query is token 3), or the token before the last where that one is the last."""
    last, query = s.n_tokens - 1, s.query
    if query != last:
        return query
    second = 2 if s.n_tokens > 2 and query != 2 else next(i for i in range(s.n_tokens) if i != query)
    return second if second != last else max(last - 1, 0)


DROPOUT_P, DROPOUT_SEED = MASKED_DROPOUT
"""Dropout as the masked lecture shows it (scene AttentionDropout, and its handout): p = 0.5 as in Raschka's
chapter 3, one seed for every scenario (it drops at least one weight of the triangle and keeps one, for 2 to 16
tokens)."""


def _causal(s: Scenario) -> Any:
    """The masked trace (of the first head, if several), computed here from the inputs (not by the scenario); a
    decoder's, from the model's file (:func:`_trace`)."""
    if s.model is not None and s.model.name == "smollm2":
        return _trace(s, causal=True)
    one = s.heads[0] if s.w_out is not None else s
    return self_attention(one.embeddings, one.w_query, one.w_key, one.w_value, scaled=one.scaled, causal=True)


def _causal_head(s: Scenario, k: int) -> Any:
    """Head ``k`` (from 0) with the causal mask, from its own inputs, or ``None`` when there are fewer heads."""
    if k >= s.n_heads:
        return None
    head = s.heads[k]
    return self_attention(head.embeddings, head.w_query, head.w_key, head.w_value, scaled=s.scaled, causal=True)


def _causal_multi(s: Scenario) -> Any:
    """Every head masked, joined, times ``W_O`` (``None`` for one head)."""
    if s.w_out is None:
        return None
    return multi_head_attention(s.embeddings, s.w_query, s.w_key, s.w_value, s.w_out, scaled=s.scaled, causal=True)


class _Fused:
    """The fields of a fused-heads trace (``attention_math.fused_multi_head``), derived here by the per-head
    route: each head's own attention (``self_attention`` on its own W_Q, W_K, W_V), its matrices and results
    put side by side (the big ones) or stacked (the split ones); the heads joined times ``W_O`` from
    ``multi_head_attention`` (none for one head, which has no ``W_O``)."""

    def __init__(self, s: Scenario, *, causal: bool = False) -> None:
        heads = [self_attention(h.embeddings, h.w_query, h.w_key, h.w_value, scaled=s.scaled, causal=causal)
                 for h in s.heads]
        self.d_k, self.d_v, self.embeddings = s.d_k, s.d_v, s.embeddings
        for name in ("w_query", "w_key", "w_value"):
            setattr(self, name, np.stack([getattr(h, name) for h in s.heads]))
            setattr(self, f"{name}_big", np.concatenate([getattr(h, name) for h in s.heads], axis=1))
        for name in ("queries", "keys", "values"):
            setattr(self, f"{name}_big", np.concatenate([getattr(t, name) for t in heads], axis=1))
            setattr(self, f"{name}_split", np.stack([getattr(t, name) for t in heads]))
        for name in ("scores", "scaled_scores", "weights", "context"):
            setattr(self, name, np.stack([getattr(t, name) for t in heads]))
        if s.w_out is not None:
            multi = multi_head_attention(s.embeddings, s.w_query, s.w_key, s.w_value, s.w_out, scaled=s.scaled,
                                         causal=causal)
            self.concat, self.w_out, self.output = multi.concat, multi.w_out, multi.output


@dataclass(frozen=True, eq=False)
class _PlainHead:
    """One head of all-MiniLM-L6-v2 on a sentence, computed from the formulas and the stored weights: the
    trace's fields (``[x, 1] @ [W; b]``), the biases, and the head's place counted from 1."""

    embeddings: np.ndarray
    w_query: np.ndarray
    w_key: np.ndarray
    w_value: np.ndarray
    queries: np.ndarray
    keys: np.ndarray
    values: np.ndarray
    scores: np.ndarray
    scaled_scores: np.ndarray
    weights: np.ndarray
    context: np.ndarray
    bias_query: np.ndarray
    bias_key: np.ndarray
    bias_value: np.ndarray
    layer_number: int
    head_number: int
    n_layers: int
    n_heads: int
    d_model: int
    d_head: int
    bias_row: int
    first_column: int
    last_column: int
    d_k: int = 32
    scaled: bool = True


@cache
def _stored_model() -> tuple[dict[str, Any], dict[str, Any]]:
    """The model's configuration and its arrays as stored (Linear weights ``out × in``), read here."""
    import json
    import zipfile

    from safetensors.numpy import load

    from attention_math.minilm import model_path

    with zipfile.ZipFile(model_path()) as archive:
        return json.loads(archive.read("config.json")), dict(load(archive.read("model.safetensors")))


_MODEL_HEADS: dict[int, tuple[Scenario, _PlainHead | _PlainSmolHead]] = {}


def _model_head(s: Scenario) -> _PlainHead | _PlainSmolHead | None:
    """The scenario's model head, from the formulas: ``None`` for a scenario of made-up numbers."""
    if s.model is None:
        return None
    known = _MODEL_HEADS.get(id(s))
    if known is None or known[0] is not s:
        known = _MODEL_HEADS[id(s)] = (s, _plain_head(s))
    return known[1]


@dataclass(frozen=True, eq=False)
class _PlainSmolHead:
    """One query head of SmolLM2-135M-Instruct on a sentence, computed here from the GGUF file's matrices as stored
    (``out × in``) by a forward pass of our own: RMSNorm, the projections, each pair (2i, 2i+1) turned by
    position·100000^(−2i/64) written with cos and sin, the causal softmax, W_O, the SwiGLU feed-forward; its place
    counted from 1."""

    embeddings: np.ndarray
    w_query: np.ndarray
    w_key: np.ndarray
    w_value: np.ndarray
    unrotated_queries: np.ndarray
    unrotated_keys: np.ndarray
    queries: np.ndarray
    keys: np.ndarray
    values: np.ndarray
    scores: np.ndarray
    scaled_scores: np.ndarray
    weights: np.ndarray
    context: np.ndarray
    angles: np.ndarray
    layer_number: int
    head_number: int
    kv_head_number: int
    n_layers: int
    n_heads: int
    n_kv_heads: int
    d_model: int
    d_head: int
    first_column: int
    last_column: int
    kv_first_column: int
    kv_last_column: int
    d_k: int = 64
    scaled: bool = True
    causal: bool = True


_SMOL_EPS = 9.999999747378752e-06  # llama.attention.layer_norm_rms_epsilon as stored (a float32)


@cache
def _smol_file() -> Any:
    from attention_math.smollm import model_path, read_gguf

    return read_gguf(model_path())


@cache
def _smol_layer(layer: int) -> dict[str, np.ndarray]:
    names = ("attn_norm", "attn_q", "attn_k", "attn_v", "attn_output", "ffn_norm", "ffn_gate", "ffn_up", "ffn_down")
    return {name: np.asarray(_smol_file().tensor(f"blk.{layer}.{name}.weight"), dtype=np.float64) for name in names}


def _smol_norm(x: np.ndarray, gain: np.ndarray) -> np.ndarray:
    return x / np.sqrt((x**2).mean(axis=1, keepdims=True) + _SMOL_EPS) * gain


def _smol_turn(x: np.ndarray) -> np.ndarray:
    """Each row m's pairs (2i, 2i+1) turned by m·100000^(−2i/64): ``tokens × … × 64``."""
    angles = np.arange(x.shape[0])[:, None] * 100000.0 ** (-np.arange(0, 64, 2) / 64.0)
    shape = (x.shape[0],) + (1,) * (x.ndim - 2) + (32,)
    cos, sin = np.cos(angles).reshape(shape), np.sin(angles).reshape(shape)
    out = np.empty_like(x)
    out[..., 0::2], out[..., 1::2] = x[..., 0::2] * cos - x[..., 1::2] * sin, x[..., 0::2] * sin + x[..., 1::2] * cos
    return out


def _smol_attend(q: np.ndarray, k: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, ...]:
    """Scores, masked scaled scores, weights and z of one head's turned q, k and its v."""
    scores = np.einsum("id,jd->ij", q, k)
    scaled = np.where(np.tril(np.ones(scores.shape, dtype=bool)), scores / 8.0, -np.inf)
    exps = np.exp(scaled - scaled.max(axis=1, keepdims=True))
    weights = exps / exps.sum(axis=1, keepdims=True)
    return scores, scaled, weights, np.einsum("ij,jd->id", weights, v)


@dataclass(frozen=True, eq=False)
class PlainSmolLayer:
    """Every query head of one SmolLM2 layer on a sentence, computed here from the GGUF file's matrices as stored:
    query head g reads key/value head g // (heads / key/value heads), its turned q against that head's turned keys;
    the heads' z side by side, times the stored W_O (``attn_output``): the layer's attention output, before the
    residual add. The head counts come from the matrices' rows (64 numbers a head)."""

    weights: np.ndarray  # heads × n × n, causal
    concat: np.ndarray  # n × 64·heads: head g's z in columns 64g … 64g + 63
    output: np.ndarray  # n × 576
    n_heads: int
    n_kv_heads: int


def _smol_attention(x: np.ndarray, w: dict[str, np.ndarray]) -> PlainSmolLayer:
    """One layer's attention on its input ``x`` (before the RMSNorm), every head, from the stored matrices."""
    h, n = _smol_norm(x, w["attn_norm"]), x.shape[0]
    heads, kv_heads = w["attn_q"].shape[0] // 64, w["attn_k"].shape[0] // 64
    q = _smol_turn(np.einsum("oi,ni->no", w["attn_q"], h).reshape(n, heads, 64))
    k = _smol_turn(np.einsum("oi,ni->no", w["attn_k"], h).reshape(n, kv_heads, 64))
    v = np.einsum("oi,ni->no", w["attn_v"], h).reshape(n, kv_heads, 64)
    size = heads // kv_heads
    attended = [_smol_attend(q[:, g], k[:, g // size], v[:, g // size]) for g in range(heads)]
    z = np.concatenate([found[3] for found in attended], axis=1)
    return PlainSmolLayer(weights=np.stack([found[2] for found in attended]), concat=z,
                          output=np.einsum("oi,ni->no", w["attn_output"], z), n_heads=heads, n_kv_heads=kv_heads)


@cache
def plain_smol_layer(ids: tuple[int, ...], layer: int) -> PlainSmolLayer:
    """Layer ``layer`` (0-based) of SmolLM2 on the token ids, every head: :class:`PlainSmolLayer`."""
    return _smol_attention(_smol_states(ids, layer), _smol_layer(layer))


@cache
def _smol_states(ids: tuple[int, ...], layer: int) -> np.ndarray:
    """What enters layer ``layer`` (0-based), each earlier layer run here."""
    if layer == 0:
        return np.asarray(_smol_file().tensor("token_embd.weight"), dtype=np.float64)[list(ids)]
    x, w = _smol_states(ids, layer - 1), _smol_layer(layer - 1)
    x = x + _smol_attention(x, w).output
    h = _smol_norm(x, w["ffn_norm"])
    gate, up = np.einsum("oi,ni->no", w["ffn_gate"], h), np.einsum("oi,ni->no", w["ffn_up"], h)
    return x + np.einsum("oi,ni->no", w["ffn_down"], gate / (1.0 + np.exp(-gate)) * up)


def _plain_smol_head(s: Scenario, head: int | None = None) -> _PlainSmolHead:
    """The scenario's head, or query head ``head`` (0-based) of its layer."""
    from attention_math.smollm import token_ids

    assert s.model is not None
    return _plain_smol(token_ids(s.model.sentence), s.model.layer - 1, s.model.head - 1 if head is None else head)


@cache
def _plain_smol(ids: tuple[int, ...], layer: int, head: int) -> _PlainSmolHead:
    group = head // 3
    w = _smol_layer(layer)
    x = _smol_norm(_smol_states(ids, layer), w["attn_norm"])
    mine, shared = slice(64 * head, 64 * head + 64), slice(64 * group, 64 * group + 64)
    wq, wk, wv = w["attn_q"][mine].T, w["attn_k"][shared].T, w["attn_v"][shared].T
    q_raw, k_raw, v = x @ wq, x @ wk, x @ wv
    q, k = _smol_turn(q_raw), _smol_turn(k_raw)
    scores, scaled, weights, context = _smol_attend(q, k, v)
    angles = np.arange(len(ids))[:, None] * 100000.0 ** (-np.arange(0, 64, 2) / 64.0)
    return _PlainSmolHead(
        embeddings=x, w_query=wq, w_key=wk, w_value=wv, unrotated_queries=q_raw, unrotated_keys=k_raw, queries=q,
        keys=k, values=v, scores=scores, scaled_scores=scaled, weights=weights, context=context, angles=angles,
        layer_number=layer + 1, head_number=head + 1, kv_head_number=group + 1, n_layers=30, n_heads=9, n_kv_heads=3,
        d_model=576, d_head=64, first_column=64 * head + 1, last_column=64 * head + 64,
        kv_first_column=64 * group + 1, kv_last_column=64 * group + 64,
    )


def _plain_head(s: Scenario) -> _PlainHead | _PlainSmolHead:
    from attention_math.minilm import hidden_states

    if s.model is not None and s.model.name == "smollm2":
        return _plain_smol_head(s)

    config, stored = _stored_model()
    assert s.model is not None
    layer, head = s.model.layer - 1, s.model.head - 1  # the screen counts from 1, the files from 0
    d = int(config["hidden_size"])
    width = d // int(config["num_attention_heads"])
    x = np.asarray(hidden_states(s.model.sentence)[layer], dtype=np.float64)  # what enters the layer
    ones = np.hstack([x, np.ones((x.shape[0], 1))])
    columns = slice(head * width, (head + 1) * width)
    made: dict[str, np.ndarray] = {}
    for kind, field in (("query", "queries"), ("key", "keys"), ("value", "values")):
        prefix = f"encoder.layer.{layer}.attention.self.{kind}"
        weight = np.asarray(stored[f"{prefix}.weight"], dtype=np.float64)[columns].T  # in × out
        bias = np.asarray(stored[f"{prefix}.bias"], dtype=np.float64)[columns]
        made[f"w_{kind}"], made[f"bias_{kind}"] = np.vstack([weight, bias]), bias
        made[field] = x @ weight + bias
    scores = made["queries"] @ made["keys"].T
    scaled = scores / np.sqrt(width)
    exps = np.exp(scaled - scaled.max(axis=1, keepdims=True))
    weights = exps / exps.sum(axis=1, keepdims=True)
    return _PlainHead(
        embeddings=ones, scores=scores, scaled_scores=scaled, weights=weights, context=weights @ made["values"],
        **made, layer_number=layer + 1, head_number=head + 1, n_layers=int(config["num_hidden_layers"]),
        n_heads=int(config["num_attention_heads"]), d_model=d, d_head=width, bias_row=d + 1,
        first_column=head * width + 1, last_column=(head + 1) * width, d_k=width,
    )


def _trace(s: Scenario, *, causal: bool = False) -> Any:
    """The scenario's trace (masked when ``causal``); a decoder's head (SmolLM2) recomputed here from the model's
    file (:func:`_plain_smol_head`), not by attention_math: masked, the model's own; unmasked, every key of its
    turned q and k weighed (a trace container around the arrays made here, for its query steps)."""
    if s.model is None or s.model.name != "smollm2":
        return s.trace(causal=causal)
    plain = _model_head(s)
    assert isinstance(plain, _PlainSmolHead)
    return _smol_trace(plain, causal)


@cache
def _smol_trace(plain: _PlainSmolHead, causal: bool) -> AttentionTrace:
    scaled = plain.scaled_scores if causal else plain.scores / 8.0
    exps = np.exp(scaled - scaled.max(axis=1, keepdims=True))
    weights = exps / exps.sum(axis=1, keepdims=True)
    return AttentionTrace(
        embeddings=plain.embeddings, w_query=plain.w_query, w_key=plain.w_key, w_value=plain.w_value,
        queries=plain.queries, keys=plain.keys, values=plain.values, scores=plain.scores, scaled_scores=scaled,
        weights=weights, context=weights @ plain.values, d_k=64, scaled=True, causal=causal,
    )


class _Backwards:
    """The attention of the sentence backwards (source ``backwards``), derived here from the scenario's own trace
    (of its first head) by reversing both axes: token i of the reversed sentence is token n − 1 − i, so its score
    against key j is the trace's ``scores[n − 1 − i, n − 1 − j]`` (what the scene shows by computing afresh)."""

    def __init__(self, s: Scenario) -> None:
        trace = _head(s, 0)
        self.d_k, self.scaled = trace.d_k, trace.scaled
        for name in ("scores", "scaled_scores", "weights"):
            setattr(self, name, np.asarray(getattr(trace, name))[::-1, ::-1])


class _Roped:
    """Attention with RoPE (sources ``rope`` and ``rope_whole``), derived here from the scenario (its first head) by
    RoFormer's formula written out, not by ``attention_math.rope``: θ_i = 10000^(−2i/d_k), the angle m·θ_i at
    positions m = 0 … n − 1, each pair (2i, 2i+1) of the projections turned with cos and sin, their dot products,
    ÷ √d_k, a softmax. ``None`` for an odd d_k (RoPE has no pairs)."""

    def __init__(self, s: Scenario) -> None:
        one = s.heads[0] if s.w_out is not None else s
        x = np.asarray(one.embeddings, dtype=float)
        self.queries = x @ np.asarray(one.w_query, dtype=float)
        keys = x @ np.asarray(one.w_key, dtype=float)
        self.d_k, self.scaled = int(self.queries.shape[1]), bool(s.scaled)
        self.positions = np.arange(x.shape[0], dtype=float)
        self.frequencies = _rope_base(s) ** (-2 * np.arange(self.d_k // 2) / self.d_k)
        self.angles = self.positions[:, np.newaxis] * self.frequencies[np.newaxis, :]
        self.rotated_queries, rotated_keys = self._turned(self.queries), self._turned(keys)
        self.scores = self.rotated_queries @ rotated_keys.T
        self.scaled_scores = self.scores / (np.sqrt(self.d_k) if self.scaled else 1.0)
        exps = np.exp(self.scaled_scores - self.scaled_scores.max(axis=1, keepdims=True))
        self.weights = exps / exps.sum(axis=1, keepdims=True)

    def _turned(self, matrix: np.ndarray) -> np.ndarray:
        a, b = matrix[:, 0::2], matrix[:, 1::2]
        cos, sin = np.cos(self.angles), np.sin(self.angles)
        out = np.empty_like(matrix)
        out[:, 0::2], out[:, 1::2] = a * cos - b * sin, a * sin + b * cos
        return out


def _rope_base(s: Scenario) -> float:
    """RoPE's base: RoFormer's 10000; a decoder's head (SmolLM2), its own, read here from the model's file."""
    if s.model is not None and s.model.name == "smollm2":
        return float(_smol_file().metadata["llama.rope.freq_base"])
    return 10000.0


def _roped(s: Scenario) -> _Roped | None:
    return None if s.d_k % 2 else _Roped(s)


class _Clock:
    """One query and one key turned pair by pair (sources ``clock``, ``shifted``, ``half``, ``reordered`` and the
    ``_whole`` ones), derived here by RoFormer's formula in Python floats, not by ``attention_math.rope_clock``: the
    query of the scenario's token at m = its index (plus ``shift``), the key of the token before it (after it, for
    the first) at n; pair i the dimensions (2i, 2i+1), or (i, i + d/2) in the "half" layout; each arrow turned by
    position × θ_i, θ_i = 10000^(−2i/d); its share of the score the dot product of the turned arrows.
    ``reordered``: the paper's pairs of q and k with the dimensions listed 1, 1 + d/2, 2, 2 + d/2, ….
    ``None`` for an odd d_k."""

    def __init__(self, s: Scenario, *, shift: float = 0.0, layout: str = "pairs", reordered: bool = False) -> None:
        roped = _Roped(s)
        q_at, k_at = s.query, (s.query - 1 if s.query > 0 else 1)
        x = np.asarray((s.heads[0] if s.w_out is not None else s).embeddings, dtype=float)
        wk = np.asarray((s.heads[0] if s.w_out is not None else s).w_key, dtype=float)
        query, key = [float(v) for v in roped.queries[q_at]], [float(v) for v in (x @ wk)[k_at]]
        d = len(query)
        if reordered:
            listed = [c for i in range(d // 2) for c in (i, i + d // 2)]
            query, key = [query[c] for c in listed], [key[c] for c in listed]
        pairs = [(2 * i, 2 * i + 1) if layout == "pairs" else (i, i + d // 2) for i in range(d // 2)]
        self.query_position, self.key_position = q_at + shift, k_at + shift
        self.frequencies = [_rope_base(s) ** (-2 * i / d) for i in range(d // 2)]
        self.query_turns = [self.query_position * t for t in self.frequencies]
        self.key_turns = [self.key_position * t for t in self.frequencies]
        self.query_pairs = [[query[a], query[b]] for a, b in pairs]
        self.key_pairs = [[key[a], key[b]] for a, b in pairs]
        self.turned_query_pairs = [_turned_pair(p, phi)
                                   for p, phi in zip(self.query_pairs, self.query_turns, strict=True)]
        self.turned_key_pairs = [_turned_pair(p, phi) for p, phi in zip(self.key_pairs, self.key_turns, strict=True)]
        self.query_hands = [math.atan2(y, x) for x, y in self.turned_query_pairs]
        key_hands = [math.atan2(y, x) for x, y in self.turned_key_pairs]
        self.angles_between = [math.atan2(math.sin(b - a), math.cos(b - a))
                               for a, b in zip(self.query_hands, key_hands, strict=True)]
        self.contributions = [qx * kx + qy * ky for (qx, qy), (kx, ky) in zip(self.turned_query_pairs,
                                                                            self.turned_key_pairs, strict=True)]
        self.score = sum(self.contributions)


def _turned_pair(pair: list[float], phi: float) -> list[float]:
    a, b = pair
    return [a * math.cos(phi) - b * math.sin(phi), a * math.sin(phi) + b * math.cos(phi)]


def _clock(s: Scenario, **options: Any) -> _Clock | None:
    return None if s.d_k % 2 else _Clock(s, **options)


class _Generation:
    """Step ``t`` (0-based) of generation with a KV cache (``attention_math.kv_cache_generation``), derived here
    from full masked attention over the sentence (of the first head): the cache is the first ``t + 1`` rows of K
    and V, the step's query row ``t`` of Q, its weights row ``t`` of the masked weights without the masked zeros,
    its context row ``t`` of Z; the multiplies counted from the shapes (projecting ``q_t``, ``k_t``, ``v_t``, then
    ``t + 1`` scores and a ``t + 1``-row weighted sum; without a cache every key and value row is projected
    again)."""

    def __init__(self, s: Scenario, t: int) -> None:
        causal = _causal(s)
        d_in, d_k, d_v = s.d_in, s.d_k, s.d_v
        self.keys, self.values = causal.keys[: t + 1], causal.values[: t + 1]
        self.query, self.weights, self.context = causal.queries[t], causal.weights[t, : t + 1], causal.context[t]
        attend = (t + 1) * (d_k + d_v)
        self.multiplies_with_cache = d_in * (2 * d_k + d_v) + attend
        self.multiplies_without_cache = d_in * d_k + (t + 1) * d_in * (d_k + d_v) + attend


@cache
def _smol_vocabulary() -> tuple[np.ndarray, frozenset[int]]:
    """The token embeddings (the output matrix too: tied) and the control tokens' ids, read from the file here."""
    kinds = _smol_file().metadata["tokenizer.ggml.token_type"]
    control = frozenset(index for index, kind in enumerate(kinds) if kind == 3)
    return np.asarray(_smol_file().tensor("token_embd.weight"), dtype=np.float64), control


@cache
def _smol_fed(sentence: str, count: int) -> tuple[int, ...]:
    """The tokens a greedy run of ``count`` new tokens puts through the model, computed here without a cache: the
    whole text again at each step, its last row's logits' best, until a control token or ``count`` tokens; the
    last one written is not read back (unless the model stopped itself)."""
    from attention_math.smollm import token_ids

    embeddings, control = _smol_vocabulary()
    final = np.asarray(_smol_file().tensor("output_norm.weight"), dtype=np.float64)
    ids = token_ids(sentence)
    for written in range(count):
        best = int(np.argmax(embeddings @ _smol_norm(_smol_states(ids, 30)[-1:], final)[0]))
        if best in control:
            return ids
        if written == count - 1:
            return ids
        ids = (*ids, best)
    return ids


def smol_cache_rows(s: Scenario) -> int:
    """The rows of the inference lecture's cache for a decoder's head (SmolLM2), counted here (:func:`_smol_fed`);
    a made-up scenario's, its tokens."""
    if s.model is None or s.model.name != "smollm2":
        return s.n_tokens
    return len(_smol_fed(s.model.sentence, inference.new_tokens(s.n_tokens)))


class _SmolGeneration:
    """Step ``t`` (0-based) of a decoder's head (SmolLM2) while the model writes, derived here from the forward pass
    over every token it put through (:func:`_smol_fed`), without a cache: step t's query is row t of the turned Q,
    the cache the first ``t + 1`` rows of the turned K and of V, its weights row t of the causal weights without the
    masked zeros, its z row t."""

    def __init__(self, s: Scenario, t: int) -> None:
        assert s.model is not None
        fed = _smol_fed(s.model.sentence, inference.new_tokens(s.n_tokens))
        plain = _plain_smol(fed, s.model.layer - 1, s.model.head - 1)
        self.keys, self.values = plain.keys[: t + 1], plain.values[: t + 1]
        self.query, self.weights, self.context = plain.queries[t], plain.weights[t, : t + 1], plain.context[t]


def _generation(s: Scenario, t: int) -> _Generation | _SmolGeneration | None:
    """Step ``t`` of the inference lecture's cache scene, or ``None`` past its last row."""
    if t >= smol_cache_rows(s):
        return None
    if s.model is not None and s.model.name == "smollm2":
        return _SmolGeneration(s, t)
    return _Generation(s, t)


class _GenerationTotals:
    """The multiplies of every step of generation, with and without the cache, added up here."""

    def __init__(self, s: Scenario) -> None:
        steps = [_Generation(s, t) for t in range(s.n_tokens)]
        self.total_multiplies_with_cache = sum(step.multiplies_with_cache for step in steps)
        self.total_multiplies_without_cache = sum(step.multiplies_without_cache for step in steps)


class _Grouped:
    """Grouped-query attention over the scenario's heads, derived here: ``n_kv_heads`` the fewest groups of
    neighbouring heads within which every head's W_K and W_V equal the group's first head's (compared here, head
    by head); the output multi-head attention's over the heads' own matrices (the shared ones, repeated), one
    head's z itself (no W_O); ``d_out`` its columns."""

    def __init__(self, s: Scenario) -> None:
        if _decoder(s):
            self._decoder(s)
            return
        heads = s.heads
        h = self.n_heads = len(heads)

        def shares(i: int, first: int) -> bool:
            return all(np.array_equal(getattr(heads[i], name), getattr(heads[first], name))
                       for name in ("w_key", "w_value"))

        self.n_kv_heads = next(g for g in range(1, h + 1) if h % g == 0
                               and all(shares(i, i - i % (h // g)) for i in range(h)))
        self.group_size = h // self.n_kv_heads
        traces, multi = _heads(s)
        self.output = traces[0].context if multi is None else multi.output
        self.d_out = self.output.shape[1]

    def _decoder(self, s: Scenario) -> None:
        """A decoder's layer (SmolLM2): its heads and key/value heads counted from its matrices, the output its
        heads' z joined times W_O (:func:`plain_smol_layer`)."""
        from attention_math.smollm import token_ids

        assert s.model is not None
        plain = plain_smol_layer(token_ids(s.model.sentence), s.model.layer - 1)
        self.n_heads, self.n_kv_heads = plain.n_heads, plain.n_kv_heads
        self.group_size = self.n_heads // self.n_kv_heads
        self.output = plain.output
        self.d_out = self.output.shape[1]


def _decoder(s: Scenario) -> bool:
    """Is the scenario a decoder's head (SmolLM2)?"""
    return s.model is not None and s.model.name == "smollm2"


def _grouped_head(s: Scenario, k: int) -> Any:
    """Query head ``k`` (from 0) as the grouped-heads scene shows it: of a decoder's layer, its causal trace
    recomputed here from the model's file; else the scenario's head (``None`` when it has fewer)."""
    if _decoder(s):
        plain = _plain_smol_head(s, k) if k < 9 else None
        return plain and _smol_trace(plain, True)
    return _head(s, k)


PUBLISHED_CONFIG_JSON = (
    # num_hidden_layers, num_attention_heads, num_key_value_heads, hidden_size, bytes of its torch_dtype
    (32, 32, 32, 4096, 2),  # meta-llama/Llama-2-7b-hf, float16
    (80, 64, 8, 8192, 2),  # meta-llama/Llama-2-70b-hf, float16
    (32, 32, 8, 4096, 2),  # mistralai/Mistral-7B-v0.1, bfloat16
    (32, 71, 1, 4544, 2),  # tiiuae/falcon-7b, bfloat16, "multi_query": true (one key/value head)
    (30, 9, 3, 576, 2),  # HuggingFaceTB/SmolLM2-135M-Instruct, bfloat16 (a decoder scenario's own model, last)
)
"""The published models of the inference lecture's memory scene, as their config.json files say (copied here from
the Hugging Face Hub, not from attention_math.PUBLISHED_CONFIGS)."""


class _Memory:
    """The KV cache of published model ``k`` (0-based), counted here from its config.json: a key and a value per
    layer and key/value head, ``hidden_size / num_attention_heads`` numbers each; KiB a token, GiB for the lecture's
    long context (``scenes.inference.CACHE_CONTEXT``)."""

    def __init__(self, k: int) -> None:
        self.layers, heads, self.kv_heads, hidden, self.bytes_per_number = PUBLISHED_CONFIG_JSON[k]
        self.key_and_value, self.d_head, self.context_tokens = 2, hidden // heads, inference.CACHE_CONTEXT
        per_token = 2 * self.layers * self.kv_heads * self.d_head * self.bytes_per_number
        self.kib_per_token = per_token / 1024
        self.gib_context = per_token * self.context_tokens / 1024**3


@cache
def _spread() -> ScalingSpread:
    """The sampler as the lecture shows it: its defaults, seed 0 (the same for every scenario)."""
    return scaling_spread(seed=0)


@cache
def _run(seed: int, steps: int, learning_rate: float) -> TrainingTrace:
    return train_attention(seed, steps=steps, learning_rate=learning_rate)


def _training() -> TrainingTrace:
    """The learned lecture's training run, trained here again from its settings (read when derived, as the scenes
    read them when set up: a test may change them); the same for every scenario."""
    return _run(*learned.LEARNED_TRAINING)


class _Online:
    """One query's row of scaled scores walked in tiles of ``FLASH_BLOCKS[0]`` keys (source ``online``), derived here
    by Milakov & Gimelshein's recurrence in Python floats, not by ``attention_math.flash``: per tile the running
    maximum m, the factor exp(m_old − m) (0 at the first tile), the running sum ℓ and output Σ exp(s − m)·v; per key
    exp(s − m) against its tile's m; at the end output / ℓ."""

    def __init__(self, s: Scenario) -> None:
        trace = s.trace()
        row, values = trace.scaled_scores[s.query].tolist(), trace.values.tolist()
        self.block_size = FLASH_BLOCKS[0]
        self.scores = np.array(row)
        m, total, out = float("-inf"), 0.0, [0.0] * len(values[0])
        exps, maxima, rescales, sums, outputs, tile_sums = [], [], [], [], [], []
        for start in range(0, len(row), self.block_size):
            tile = row[start : start + self.block_size]
            new = max(m, *tile)
            factor = 0.0 if m == float("-inf") else float(np.exp(m - new))
            mine = [float(np.exp(score - new)) for score in tile]
            total = factor * total + sum(mine)
            out = [factor * o + sum(e * v[c] for e, v in zip(mine, values[start : start + len(tile)], strict=True))
                   for c, o in enumerate(out)]
            m = new
            exps += mine
            maxima.append(m), rescales.append(factor), sums.append(total), outputs.append(out)
            tile_sums.append(sum(mine))
        self.tile_exps, self.maxima, self.rescales = np.array(exps), np.array(maxima), np.array(rescales)
        self.sums, self.tile_sums, self.outputs = np.array(sums), np.array(tile_sums), np.array(outputs)
        self.max_score, self.exp_sum, self.output = m, total, np.array(out) / total


class _Traffic:
    """Numbers read from and written to slow memory (sources ``traffic`` and ``a100``), derived here in closed form from
    FlashAttention's Algorithms 0 and 1 for ``n`` tokens of ``d``: standard attention reads Q, K, V (3nd) and S and P
    (2n²) and writes S, P (2n²) and O (nd); FlashAttention reads K and V once (2nd) and, for each of its ⌈n / B_c⌉ key
    blocks, every query's Q, O, ℓ, m (n(2d + 2)), writes O, ℓ, m back as often and once at the start (n(d + 2)
    each). ``sram`` M is 4·d·B_c, or given (then B_c = ⌈M / 4d⌉, B_r = min(B_c, d)); Theorem 2's n·d + n² and
    n²d²/M beside them."""

    def __init__(self, n: int, d: int, block_size: int | None = None, query_block_size: int | None = None,
                 sram: int | None = None) -> None:
        if sram is not None:
            block_size = -(-sram // (4 * d))
            query_block_size = min(block_size, d)
        assert block_size is not None and query_block_size is not None
        self.n, self.d, self.block_size, self.query_block_size = n, d, block_size, query_block_size
        self.sram = sram if sram is not None else 4 * d * block_size
        passes = -(-n // block_size)
        self.standard_reads, self.standard_writes = 3 * n * d + 2 * n * n, 2 * n * n + n * d
        self.flash_reads = 2 * n * d + passes * n * (2 * d + 2)
        self.flash_writes = (passes + 1) * n * (d + 2)
        self.standard_accesses = self.standard_reads + self.standard_writes
        self.flash_accesses = self.flash_reads + self.flash_writes
        self.standard_formula, self.flash_formula = n * d + n * n, n * n * d * d / self.sram
        self.ratio = self.standard_accesses / self.flash_accesses


def _ours(s: Scenario) -> _Traffic:
    return _Traffic(s.n_tokens, s.d_k, *FLASH_BLOCKS)


def _a100() -> _Traffic:
    """The paper's sizes (section 2.1, Figure 2): n 1024, d 64, M about 100 KB of SRAM in 2-byte numbers."""
    return _Traffic(1024, 64, sram=100 * 1024 // 2)


DERIVED: dict[str, Callable[[Scenario], tuple[Any, int]]] = {
    # the scenario itself, unmasked and masked
    "trace": lambda s: (_trace(s), s.precision),
    "step": lambda s: (s.query_step(), s.precision),
    "causal": lambda s: (_trace(s, causal=True), s.precision),
    # the ends of each heat map's colour scale
    "extremes": lambda s: (_Ranges(_trace(s)), s.precision),
    "causal_extremes": lambda s: (_Ranges(_trace(s, causal=True)), s.precision),
    # the masked lecture: the row it follows, masked, step by step (its exps, their sum); the other route to the
    # masked weights, from the unmasked scaled scores
    "causal_step": lambda s: (_causal(s).query_step(masked_row(s)), s.precision),
    "renormalised": lambda s: (renormalised_weights(_trace(s).scaled_scores), s.precision),
    # the masked lecture's context scene: the query's row masked; dropout on the masked weights (its p and
    # scale at one decimal, its seed whole)
    "causal_query_step": lambda s: (_causal(s).query_step(s.query), s.precision),
    "dropout": lambda s: (attention_dropout(_causal(s).weights, DROPOUT_P, seed=DROPOUT_SEED), s.precision),
    # the dropout legend's ends: the smallest and largest finite weight after dropout, by plain numpy
    "dropout_ends": lambda s: (_OwnEnds(attention_dropout(_causal(s).weights, DROPOUT_P, seed=DROPOUT_SEED)),
                               s.precision),
    "dropout_rate": lambda s: (attention_dropout(_causal(s).weights, DROPOUT_P, seed=DROPOUT_SEED), 1),
    "dropout_seed": lambda s: (attention_dropout(_causal(s).weights, DROPOUT_P, seed=DROPOUT_SEED), 0),
    # scene 1 shows its own preset: raw dot products (X plays every role), then W_K's keys
    "raw": lambda s: (_raw_dot_product().simplified().trace(), _raw_dot_product().precision),
    "raw_step": lambda s: (_raw_dot_product().simplified().query_step(), _raw_dot_product().precision),
    "projected": lambda s: (_raw_dot_product().trace(), _raw_dot_product().precision),
    "projected_step": lambda s: (_raw_dot_product().query_step(), _raw_dot_product().precision),
    # the scores scene's geometry: each key's shadow on the query's line
    "alignment": lambda s: (alignment(s.query_step()), s.precision),
    # the saturation aside, as the lecture writes it: softmax(5, 6) = (0.27, 0.73) and
    # softmax(500, 505) = (0.007, 0.993)
    "saturation_scores": lambda s: (preset("softmax-saturation").trace(), 0),
    "saturation_rounded": lambda s: (preset("softmax-saturation").trace(), 2),
    "saturation": lambda s: (preset("softmax-saturation").trace(), 3),
    # why scale: the seeded sampler's spreads and weights (2 decimals), sizes d and raw scores
    # (whole numbers), scores ÷ √d (1 decimal)
    "scaling": lambda s: (_spread(), 2),
    "scaling_whole": lambda s: (_spread(), 0),
    "scaling_tenths": lambda s: (_spread(), 1),
    # the multi-head scene: each head's trace (head1 … head4) and its heat maps' ranges, the concat,
    # W_O and the output
    # (of a decoder, every query head of its layer: the grouped-heads scene shows the chosen head's group)
    **{f"head{k + 1}": (lambda s, k=k: (_grouped_head(s, k), s.precision)) for k in range(9)},
    **{f"head{k + 1}_extremes": (lambda s, k=k: (_head(s, k) and _Ranges(_head(s, k)), s.precision))
       for k in range(4)},
    "multi": lambda s: (_heads(s)[1], s.precision),
    # the causal heads' scene: each head masked (and its heat map's range), the masked heads joined times W_O
    **{f"causal_head{k + 1}": (lambda s, k=k: (_causal_head(s, k), s.precision)) for k in range(4)},
    **{f"causal_head{k + 1}_extremes": (lambda s, k=k: (_causal_head(s, k) and _Ranges(_causal_head(s, k)),
                                                        s.precision)) for k in range(4)},
    "multi_causal": lambda s: (_causal_multi(s), s.precision),
    # the fused-heads scene: one big matrix per role, its product split into the heads
    "fused": lambda s: (_Fused(s), s.precision),
    # a real model's head (the real-head lecture): its trace, colour scales, biases and place, recomputed here
    # from the stored weights (not by attention_math.minilm.head)
    "model": lambda s: (_model_head(s), s.precision),
    "model_extremes": lambda s: (_model_head(s) and _Ranges(_model_head(s)), s.precision),
    "bias": lambda s: (_model_head(s), s.precision),
    "place": lambda s: (_model_head(s), 0),
    # the learned lecture's training run: losses, weights and attention rows (2 decimals), step numbers (whole)
    "training": lambda s: (_training(), 2),
    "training_whole": lambda s: (_training(), 0),
    # the rope lecture: the sentence backwards; attention with RoPE (even d_k only); their heat maps' ranges
    # a decoder's head (its trace turned by RoPE): attention without positions, from its X and W alone
    "positionless": lambda s: (_head(s, 0), s.precision),
    "positionless_extremes": lambda s: (_Ranges(_head(s, 0)), s.precision),
    "backwards": lambda s: (_Backwards(s), s.precision),
    "backwards_extremes": lambda s: (_Ranges(_Backwards(s)), s.precision),
    "rope": lambda s: (_roped(s), s.precision),
    "rope_extremes": lambda s: (_roped(s) and _Ranges(_roped(s)), s.precision),
    "rope_whole": lambda s: (_roped(s), 0),  # the positions, whole
    # the clock hands: the query and the key before it, turned; every position moved on by the sentence's length;
    # the "half" layout, and the paper's pairs of the dimensions reordered
    "clock": lambda s: (_clock(s), s.precision),
    "clock_whole": lambda s: (_clock(s), 0),
    "shifted": lambda s: (_clock(s, shift=float(s.n_tokens)), s.precision),
    "shifted_whole": lambda s: (_clock(s, shift=float(s.n_tokens)), 0),
    "half": lambda s: (_clock(s, layout="half"), s.precision),
    "reordered": lambda s: (_clock(s, reordered=True), s.precision),
    # the inference lecture: generation with a KV cache, one source per step (generation1 is the first token's)
    **{f"generation{t + 1}": (lambda s, t=t: (_generation(s, t), s.precision)) for t in range(GENERATION_STEPS)},
    # what the cache saves: each step's multiplies with and without it, and their totals (whole numbers)
    **{f"cost{t + 1}": (lambda s, t=t: (_Generation(s, t) if t < s.n_tokens else None, 0)) for t in range(16)},
    "cost": lambda s: (_GenerationTotals(s), 0),
    # heads sharing keys and values: the first group's heads are head1 … (above), the output, and the counts whole
    "grouped": lambda s: (_Grouped(s), s.precision),
    "grouped_whole": lambda s: (_Grouped(s), 0),
    # the cache's memory in published models (not the scenario): their factors and KiB whole, GiB at 2 decimals
    **{f"memory{k + 1}": (lambda s, k=k: (_Memory(k), 0)) for k in range(len(PUBLISHED_CONFIG_JSON))},
    **{f"memory{k + 1}_gib": (lambda s, k=k: (_Memory(k), 2)) for k in range(len(PUBLISHED_CONFIG_JSON))},
    # the flash-attention lecture: the query's row walked in tiles (its tile size whole); the slow-memory traffic of
    # both routes at the lecture's sizes and the paper's (counts whole, n²d²/M and the ratio at 2 decimals)
    "online": lambda s: (_Online(s), s.precision),
    "online_count": lambda s: (_Online(s), 0),
    "traffic": lambda s: (_ours(s), 0),
    "traffic_exact": lambda s: (_ours(s), 2),
    "a100": lambda s: (_a100(), 0),
    "a100_exact": lambda s: (_a100(), 2),
}
"""How each named source is made from the scenario, and how many decimals it is shown with."""

SIZES = frozenset({"n_tokens", "d_in", "d_k", "d_v", "n_heads", "precision"})


def expected_for(fact: Fact, scenario: Scenario, derived: dict[str, tuple[Any, int]]) -> tuple[str, int | None]:
    """The text and precision a fact must be shown with, derived from the scenario alone."""
    if fact.source == "position":
        (j,) = fact.index
        count = position_count(fact.field, scenario, derived)
        if not 0 <= j < count:
            raise ValueError(f"{fact.field or 'token'} {j + 1} does not exist: the scenario has {count}")
        return str(j + 1), None
    if fact.source == "query":
        return str(scenario.query + 1), None
    if fact.source == "scenario":
        if fact.field not in SIZES:
            raise ValueError(f"the scenario has no size {fact.field!r}")
        return str(int(getattr(scenario, fact.field))), None
    if fact.source == "lecture":
        return str(lecture_of_scene(fact.field).scene_names.index(fact.field) + 1), None
    if fact.source not in derived:
        raise ValueError(f"unknown source {fact.source!r} (the tests derive {', '.join(sorted(derived))})")
    precision = derived[fact.source][1]
    return expected_text(derived_value(fact, derived), precision), precision


def position_count(kind: str, scenario: Scenario, derived: dict[str, tuple[Any, int]]) -> int:
    """How many things of ``kind`` (:data:`scenes.facts.POSITION_KINDS`) the scenario has, counted here: the
    positions a scene may show are 1 to this."""
    model = _model_head(scenario)
    counts: dict[str, Callable[[], int]] = {
        "token": lambda: scenario.n_tokens, "query": lambda: scenario.n_tokens, "key": lambda: scenario.n_tokens,
        "step": lambda: smol_cache_rows(scenario), "d_in": lambda: scenario.d_in, "d_k": lambda: scenario.d_k,
        "d_v": lambda: scenario.d_v, "pair": lambda: scenario.d_k // 2,
        "head": lambda: model.n_heads if model is not None else scenario.n_heads,
        "kv_head": lambda: _Grouped(scenario).n_kv_heads,
        "layer": lambda: model.n_layers if model is not None else 0,
        "tile": lambda: -(-scenario.n_tokens // FLASH_BLOCKS[0]),
        "block": lambda: -(-scenario.n_tokens // min(FLASH_BLOCKS)),
    }
    for checks in lecture_checks():
        counts.update({name: (lambda count=count: count(scenario)) for name, count in checks.positions.items()})
    if kind not in counts:
        raise ValueError(f"a position of an unknown kind {kind!r}")
    return counts[kind]()


def derived_value(fact: Fact, derived: dict[str, tuple[Any, int]]) -> float:
    """The number a fact of a derived source names, unrounded."""
    obj, _ = derived[fact.source]
    number = np.asarray(getattr(obj, fact.field), dtype=float)
    if fact.index:
        number = number[tuple(fact.index)]
    if fact.reduce == "sum":
        number = np.sum(number)
    elif fact.reduce == "magnitude":
        number = np.abs(number)
    elif fact.reduce is not None:
        raise ValueError(f"unknown reduce {fact.reduce!r}")
    if np.ndim(number) != 0:
        raise ValueError(f"names {np.size(number)} numbers, not one")
    return float(number)


def plotted_problems(plotted: Iterable[Plotted], scenario: Scenario, tolerance: float = 0.02) -> list[str]:
    """Each plotted mobject's anchor against ``axes.c2p`` of its coordinates, derived here."""
    derived = derive_all(scenario)
    problems = []
    for item in plotted:
        mob = item.mobject
        anchor = {"center": mob.get_center, "end": mob.get_end, "start": mob.get_start, "right": mob.get_right,
                  "left": mob.get_left, "top": mob.get_top, "bottom": mob.get_bottom}
        point = np.asarray(anchor[item.anchor]())
        try:
            values = [derived_value(fact, derived) for fact in item.coordinates]
        except (AttributeError, IndexError, ValueError, TypeError, KeyError) as error:
            problems.append(f"a plotted point of {[describe_fact(f) for f in item.coordinates]}: {error}")
            continue
        where = np.asarray(item.axes.c2p(*values))
        if np.linalg.norm(point[:2] - where[:2]) > tolerance:
            facts = ", ".join(describe_fact(f) for f in item.coordinates)
            problems.append(f"({facts}) drawn at {point[:2].round(3)}, its axes put {np.round(values, 4)} at "
                            f"{where[:2].round(3)}")
    return problems


@cache
def declared_checks() -> tuple[tuple[Lecture, LectureChecks], ...]:
    """Each lecture that declares its number proof in its folder (``Lecture.checks``), with that proof; a source of
    each named once: a lecture deriving a source the project's tests (or another lecture) derive is refused."""
    found, names = [], set(DERIVED)
    for item in lectures():
        checks = item.load_checks()
        if checks is None:
            continue
        taken = names & set(checks.derived)
        if taken:
            raise ValueError(f"lecture {item.name!r} derives {', '.join(sorted(taken))}, derived already")
        names |= set(checks.derived)
        found.append((item, checks))
    return tuple(found)


def lecture_checks() -> tuple[LectureChecks, ...]:
    """The number proofs of :func:`declared_checks`, without their lectures."""
    return tuple(checks for _, checks in declared_checks())


def derive_all(scenario: Scenario) -> dict[str, tuple[Any, int]]:
    sources = {**DERIVED, **{name: make for checks in lecture_checks() for name, make in checks.derived.items()}}
    return {name: make(scenario) for name, make in sources.items()}


def _lecture_belongs(source: str) -> dict[str, tuple[str, ...]] | None:
    """What each index of each field of ``source`` names, where a lecture's own checks say (else ``None``)."""
    for checks in lecture_checks():
        if source in checks.belongs:
            return dict(checks.belongs[source])
    return None


STEP_TO_TRACE = {"query": "queries", "scores": "scores", "scaled_scores": "scaled_scores", "weights": "weights",
                 "context": "context"}
"""QueryStep fields that are one row of a trace field (the query's row)."""

STEPS = {"step": "trace", "causal_query_step": "causal"}
"""The query steps of a trace, by the name of the trace (the unmasked and the masked)."""


def canonical(fact: Fact, query: int) -> tuple[str, str, tuple[int, ...], str | None]:
    """step.weights[j] and trace.weights[q, j] are the same number (causal_query_step's and causal's too); "q5" is
    position 5."""
    source, field, index = fact.source, fact.field, tuple(int(i) for i in fact.index)
    if source in STEPS and field in STEP_TO_TRACE and len(index) == 1:
        source, field, index = STEPS[source], STEP_TO_TRACE[field], (query, *index)
    elif source in STEPS and field in ("keys", "values"):
        source = STEPS[source]
    elif source == "query":
        source, field, index = "position", "", (query,)
    elif source == "position":
        field = ""  # "k3" and "key 3" say one number, whatever kind of thing the fact counts
    return source, field, index, fact.reduce


def numbers_in(content: str, remove: Iterable[str] = ()) -> list[str]:
    """The numbers a text holds, left to right, after taking out the given token texts."""
    for part in sorted(set(remove), key=len, reverse=True):
        if part and any(ch.isdigit() for ch in part):  # a token of digits ("2"): never the digits of a number ("12 2")
            content = re.sub(rf"(?<![\d.]){re.escape(part)}(?![\d.])", " ", content)
        elif part:
            content = content.replace(part, " ")
    return [match.replace("-", "−") for match in _NUMBER.findall(content)]


def caption_numbers(caption: str, tokens: Iterable[str]) -> list[str]:
    """The numbers a caption says; a quoted token ('2024') is a token, not a number."""
    return numbers_in(caption, [f"'{token}'" for token in tokens])


def is_shortened(shown: str, token: str) -> bool:
    """Is ``shown`` the token as the screen writes it, whole or cut short with an ellipsis?"""
    whole = shorten_token(token, 10**9)
    return shown == whole or (shown.endswith("…") and whole.startswith(shown[:-1]))


def token_texts(mob: Any) -> list[str]:
    """The token texts a label holds (a token label, or the token parts of a scene's label)."""
    token = getattr(mob, "source_token", None)
    if token is not None:
        return [str(getattr(mob, "original_text", getattr(mob, "text", "")))]
    return list(getattr(mob, "token_parts", []))


def stray_digits(content: str, mob: Any) -> list[str]:
    """The numbers of a text on screen that are not one of its tokens."""
    return numbers_in(content, token_texts(mob))


def shown_problems(shown: list[Shown], scenario: Scenario, text_of: Callable[[Any], str]) -> list[str]:
    """Each recorded fact against its derivation; each mobject's numbers against its facts."""
    derived = derive_all(scenario)
    problems: list[str] = []
    by_mobject: dict[int, list[tuple[Shown, str]]] = {}
    for k, item in enumerate(shown):
        name = f"shown[{k}] {describe_fact(item.fact)}"
        try:
            expected, precision = expected_for(item.fact, scenario, derived)
        except (AttributeError, IndexError, ValueError, TypeError) as error:
            problems.append(f"{name}: cannot derive it from attention_math: {error}")
            continue
        if item.text != expected:
            problems.append(f"{name}: recorded text {item.text!r}, attention_math says {expected!r}")
        if item.precision != precision:
            problems.append(f"{name}: recorded precision {item.precision}, expected {precision}")
        if item.mobject is None:
            problems.append(f"{name}: no mobject recorded")
            continue
        by_mobject.setdefault(id(item.mobject), []).append((item, expected))
    for items in by_mobject.values():
        mob = items[0][0].mobject
        drawn = stray_digits(text_of(mob), mob)
        wanted = [expected for _, expected in items]
        if drawn != wanted:
            facts = ", ".join(describe_fact(item.fact) for item, _ in items)
            problems.append(f"{text_of(mob)!r} shows numbers {drawn}, its facts ({facts}) say {wanted}")
    return problems


def describe_fact(fact: Fact) -> str:
    index = f"[{', '.join(map(str, fact.index))}]" if fact.index else ""
    reduce = f" ({fact.reduce})" if fact.reduce else ""
    field = f".{fact.field}" if fact.field else ""
    return f"{fact.source}{field}{index}{reduce}"


def caption_problems(
    caption: str, said: tuple[Shown, ...], scenario: Scenario, tokens: Iterable[str], visible: set[Any],
    named: tuple[Named, ...] = (),
) -> list[str]:
    """A caption's numbers, in order, against the facts it cites; each must be on screen, and each must be the
    number of the token (or head) its sentence names for it (:func:`tie_problems`)."""
    derived = derive_all(scenario)
    tokens = tuple(tokens)
    problems = []
    wanted = []
    for item in said:
        try:
            expected, _ = expected_for(item.fact, scenario, derived)
        except (AttributeError, IndexError, ValueError, TypeError) as error:
            problems.append(f"cites {describe_fact(item.fact)}, which cannot be derived: {error}")
            continue
        wanted.append(expected)
        if canonical(item.fact, scenario.query) not in visible:
            problems.append(f"says {expected} ({describe_fact(item.fact)}), which is not on screen in this beat")
    said_numbers = caption_numbers(caption, tokens)
    if said_numbers != wanted:
        problems.append(f"says numbers {said_numbers}, its facts say {wanted}")
    else:
        problems += tie_problems(caption, said, named, scenario, tokens, derived)
    return [f"caption {caption!r}: {problem}" for problem in problems]


_SENTENCE_END = re.compile(r"[.!?;](?=\s|$)")
_CLAUSE_END = re.compile(r"[.!?;:,](?=\s|$)")
TIED_KINDS = frozenset({"token", "query", "key", "head", "referrer"})
"""The things a caption's sentence names in words ('dog' quoted, "head 2") and ties its numbers to."""


@dataclass(frozen=True)
class _Mention:
    kind: str
    index: int
    at: int
    text: str


def _masked(caption: str, tokens: Iterable[str]) -> str:
    """The caption with each quoted token blanked (its digits are no number), every character where it was."""
    for token in sorted(set(tokens), key=len, reverse=True):
        if token:
            caption = caption.replace(f"'{token}'", " " * (len(token) + 2))
    return caption


def _mentions(caption: str, said: tuple[Shown, ...], starts: list[int], named: tuple[Named, ...],
              query: int) -> tuple[list[_Mention], list[str]]:
    """What the caption names, where: each quoted token (``scene.quote``), each head it numbers."""
    found, problems, start = [], [], 0
    for name in named:
        at = caption.find(name.text, start)
        if at < 0:
            problems.append(f"records naming {name.text} ({name.kind} {name.index + 1}), which it does not say there")
            continue
        found.append(_Mention(name.kind, name.index, at, name.text))
        start = at + len(name.text)
    for item, at in zip(said, starts, strict=True):
        if item.fact.source == "position" and item.fact.field == "head":
            found.append(_Mention("head", item.fact.index[0], at, str(item.fact.index[0] + 1)))
    return found, problems


def _unrecorded_quotes(caption: str, cited_sentences: set[int], ends: list[int], mentions: list[_Mention],
                       tokens: Iterable[str]) -> list[str]:
    """Tokens quoted in a sentence that cites a number, in words only: the number cannot be tied to them."""
    recorded = {m.at for m in mentions}
    problems = []
    for token in set(tokens):
        quoted = f"'{token}'"
        for match in re.finditer(re.escape(quoted), caption):
            if match.start() not in recorded and bisect_right(ends, match.start()) in cited_sentences:
                problems.append(f"names {quoted} beside a number in words only (scene.quote ties the number to it)")
    return problems


def tie_problems(caption: str, said: tuple[Shown, ...], named: tuple[Named, ...], scenario: Scenario,
                 tokens: Iterable[str], derived: dict[str, tuple[Any, int]]) -> list[str]:
    """Each number a caption cites against what its clause names: a number of key j said after a quoted token
    named as a key (the last one before it in its clause, between commas, colons and full stops; else the first
    after it; in a clause that names none, the same in its sentence) must be that token's; a number of head h
    after "head 2", head 2's. What a fact belongs to is derived from the core (:func:`belongs_to`), never from the
    scene."""
    masked = _masked(caption, tokens)
    spans = [(match.start(), match.end()) for match in _NUMBER.finditer(masked)]
    starts = [start for start, _ in spans]
    mentions, problems = _mentions(caption, said, starts, named, scenario.query)
    ends = [match.end() for match in _SENTENCE_END.finditer(masked)]
    clauses = [match.end() for match in _CLAUSE_END.finditer(masked)]
    cited = {bisect_right(ends, at) for item, at in zip(said, starts, strict=True)
             if item.fact.source not in WITHOUT_QUANTITY
             and any(kind in TIED_KINDS for kind, _ in belongs_to(item.fact, scenario.query, derived))}
    problems += _unrecorded_quotes(caption, cited, ends, mentions, scenario.tokens)
    for item, (at, end) in zip(said, spans, strict=True):
        if item.fact.source in WITHOUT_QUANTITY:  # a token's or a head's number names it; it is no number of it
            continue
        clause = bisect_right(clauses, at)
        for kind, index in belongs_to(item.fact, scenario.query, derived):
            if kind not in TIED_KINDS:
                continue
            same = [m for m in mentions if m.kind == kind and bisect_right(clauses, m.at) == clause] or [
                m for m in mentions if m.kind == kind and bisect_right(ends, m.at) == bisect_right(ends, at)]
            before = [m for m in same if m.at < at]
            tied = before[-1] if before else next((m for m in same if m.at >= end), None)
            if tied is not None and tied.index != index:
                problems.append(f"says {describe_fact(item.fact)} ({kind} {index + 1}) of {tied.text}, which is "
                                f"{kind} {tied.index + 1}")
    return problems


def _combined(terms: list[Decimal], op: str) -> Decimal:
    """The shown terms combined exactly, as a student with a calculator combines them."""
    if op == "sum":
        return sum(terms, Decimal(0))
    if op == "product":
        product = Decimal(1)
        for term in terms:
            product *= term
        return product
    if op == "dot":
        return sum((a * b for a, b in zip(terms[::2], terms[1::2], strict=True)), Decimal(0))
    raise ValueError(f"unknown operation {op!r}")


def relation_problems(relations: Iterable[Relation], scenario: Scenario) -> list[str]:
    """Each sum or product a scene shows: ``=`` exactly where the shown numbers add up, else ``≈``."""
    derived = derive_all(scenario)
    problems = []
    for relation in relations:
        name = f"{describe_fact(relation.result)} {relation.sign} {relation.op} of " + ", ".join(
            describe_fact(term) for term in relation.terms)
        try:
            result, precision = expected_for(relation.result, scenario, derived)
            terms = [Decimal(expected_for(term, scenario, derived)[0].replace("−", "-")) for term in relation.terms]
            combined = _combined(terms, relation.op)
        except (AttributeError, IndexError, ValueError, TypeError) as error:
            problems.append(f"{name}: cannot derive it: {error}")
            continue
        if precision is None:
            problems.append(f"{name}: the result is not a number of the trace")
            continue
        rounded = combined.quantize(Decimal(1).scaleb(-precision), rounding=ROUND_HALF_UP)
        right = "=" if rounded == Decimal(result.replace("−", "-")) else "≈"
        if relation.sign != right:
            problems.append(f"{name}: shows {relation.sign!r}, but the shown numbers give {rounded} for {result}")
    return problems


# -- every number in its place -------------------------------------------------------------------------

ATTENTION = ("query", "key")
PACKED_K, PACKED_V = "head·d_k", "head·d_v"  # a column of the heads' matrices side by side (fused heads)
BELONGS: dict[str, tuple[str, ...]] = {
    # the fields of a trace (and of the masked one, the raw-dot-product preset's, each head's)
    "embeddings": ("token", "d_in"),
    "w_query": ("d_in", "d_k"), "w_key": ("d_in", "d_k"), "w_value": ("d_in", "d_v"),
    "queries": ("query", "d_k"), "keys": ("key", "d_k"), "values": ("key", "d_v"),
    "scores": ATTENTION, "scaled_scores": ATTENTION, "weights": ATTENTION,
    "context": ("query", "d_v"),
    # the query step's own (its rows of a trace field become those: ``canonical``)
    "query_terms": ("d_in", "d_k"), "products": ("key", "d_k"), "exps": ("key",), "running_weights": ("key",),
    "weighted_values": ("key", "d_v"), "running_context": ("key", "d_v"),
    # several heads joined, and W_O
    "concat": ("query", "concat"), "w_out": ("concat", "output"), "output": ("query", "output"),
    # masking after the softmax (each row's share of the past), dropout (the weights before it, each row's sum)
    "full": ATTENTION, "zeroed": ATTENTION, "row_sums": ("query",), "before": ATTENTION, "kept": ATTENTION,
    # RoPE: each token's position, each pair's θ_i, the angle of pair i at token m, the turned queries and keys
    "positions": ("token",), "frequencies": ("pair",), "angles": ("token", "pair"),
    "rotated_queries": ("query", "d_k"), "rotated_keys": ("key", "d_k"),
    # a decoder's head (SmolLM2): its q and k before RoPE turned them
    "unrotated_queries": ("query", "d_k"), "unrotated_keys": ("key", "d_k"),
}
"""What each index of a field names (see :data:`scenes.facts.BAND_KINDS`), written from the fields'
meaning, not from any scene: ``weights[i, j]`` is query i's weight of key j."""

BELONGS_BIAS: dict[str, tuple[str, ...]] = {"bias_query": ("d_k",), "bias_key": ("d_k",), "bias_value": ("d_v",)}
"""A real head's biases (source ``bias``): entry c is the bias of output column c."""

TRACE_SOURCES = frozenset({"trace", "step", "causal", "causal_query_step", "renormalised", "dropout", "raw", "raw_step",
                           "projected", "projected_step", "multi", "multi_causal", "backwards", "rope", "rope_whole",
                           "positionless", "grouped", "model",
                           *(f"head{k}" for k in range(1, 10)), *(f"causal_head{k}" for k in range(1, 5)),
                           })
"""The sources whose fields :data:`BELONGS` describes (the scenario's, or a preset's, traces)."""

GENERATION_SOURCES = frozenset(f"generation{t + 1}" for t in range(GENERATION_STEPS))
"""Generation's steps (KV cache): step t's query, cache, weights and context; its row fields index a key."""

STEP_SOURCES = frozenset({"causal_step", *GENERATION_SOURCES})

COST_SOURCES = frozenset(f"cost{t + 1}" for t in range(16))
"""The multiplies of generation's steps (scalars): each belongs to its step, the query of the token it generates."""
"""Query steps of another row than the query's (``step`` is the query's: :func:`canonical` makes its rows of a
trace field that field's): one index of a row field names a key (:data:`STEP_BELONGS`)."""

MEMORY_SOURCES = {f"memory{k + 1}{suffix}": k for k in range(len(PUBLISHED_CONFIG_JSON)) for suffix in ("", "_gib")}
"""The cache's memory in published model k (0-based): every number of it belongs to that model's row."""

STEP_BELONGS: dict[str, tuple[str, ...]] = {
    **{name: BELONGS[name] for name in ("query_terms", "products", "exps", "running_weights", "weighted_values",
                                        "running_context", "keys", "values")},
    "scores": ("key",), "scaled_scores": ("key",), "weights": ("key",), "query": ("d_k",), "context": ("d_v",),
}
"""What each index of a query step's field names."""

FUSED_BELONGS: dict[str, tuple[str, ...]] = {
    "embeddings": ("token", "d_in"),
    # the heads' own matrices, stacked: head, then row and column
    "w_query": ("head", "d_in", "d_k"), "w_key": ("head", "d_in", "d_k"), "w_value": ("head", "d_in", "d_v"),
    # side by side: column c is head c // d_k's dimension c % d_k (c // d_v, c % d_v for values)
    "w_query_big": ("d_in", PACKED_K), "w_key_big": ("d_in", PACKED_K), "w_value_big": ("d_in", PACKED_V),
    "queries_big": ("query", PACKED_K), "keys_big": ("key", PACKED_K), "values_big": ("key", PACKED_V),
    # split into heads: (h, n, d)
    "queries_split": ("head", "query", "d_k"), "keys_split": ("head", "key", "d_k"),
    "values_split": ("head", "key", "d_v"),
    "scores": ("head", *ATTENTION), "scaled_scores": ("head", *ATTENTION), "weights": ("head", *ATTENTION),
    "context": ("head", "query", "d_v"),
    "concat": ("query", "concat"), "w_out": ("concat", "output"), "output": ("query", "output"),
}
"""The same for a fused-heads trace (source ``fused``): its stacks index the head first, and a column of its
big matrices names a head and a dimension of that head."""

FUSED_SOURCES = frozenset({"fused"})

SCALING_BELONGS: dict[str, tuple[str, ...]] = {
    **dict.fromkeys(("dims", "raw_std", "scaled_std", "sqrt_dims"), ("size",)),
    **dict.fromkeys(("row_scores", "row_scaled_scores", "unscaled_weights", "scaled_weights"), ("sample",)),
}
"""The same for the scaling sampler of WhyScale (its sizes d, and the keys of its one row)."""

TRAINING_BELONGS: dict[str, tuple[str, ...]] = {
    "step_numbers": ("step",), "step_losses": ("step",), "losses": ("step",),
    "w_query": ("step", "d_in", "d_k"), "w_key": ("step", "d_in", "d_k"),
    "grad_query": ("step", "d_in", "d_k"), "grad_key": ("step", "d_in", "d_k"),
    "rows": ("step", "referrer", "key"), "embeddings": ("token", "d_in"), "w_value": ("d_in", "d_v"),
}
"""The same for a training run (``TrainingTrace``): ``rows[t, m, j]`` is step t's weight of key j for the run's
m-th query (its m-th "it", a referrer); ``w_query[t, a, c]`` step t's entry of feature a, dimension c."""


CLOCK_BELONGS: dict[str, tuple[str, ...]] = {
    name: ("pair",) for name in ("frequencies", "query_turns", "key_turns", "query_hands", "key_hands",
                                 "angles_between", "contributions", "query_pairs", "key_pairs", "turned_query_pairs",
                                 "turned_key_pairs")
}
"""The same for one query and one key turned pair by pair (``RopeClock``): every array's first index is a pair."""

CLOCK_SOURCES = frozenset({"clock", "clock_whole", "shifted", "shifted_whole", "half", "reordered"})

ONLINE_BELONGS: dict[str, tuple[str, ...]] = {
    "scores": ("key",), "tile_exps": ("key",), "maxima": ("tile",), "rescales": ("tile",), "sums": ("tile",),
    "tile_sums": ("tile",), "outputs": ("tile", "d_v"), "output": ("d_v",),
}
"""The same for one query's row walked in tiles (source ``online``): a score and its exp are its key's; the running m,
factor, ℓ and output after tile t are tile t's (the output's column c dimension c of the values)."""


POSITION_BANDS = {"token": "token", "query": "query", "key": "key", "d_in": "d_in", "d_k": "d_k", "d_v": "d_v",
                  "head": "head", "step": "query", "tile": "tile", "pair": "pair"}
"""The band a shown position stands in: its own thing's (a generation step is the query of the token it writes)."""

WITHOUT_QUANTITY = frozenset({"position", "query", "scenario", "lecture"})
"""Sources whose numbers are no quantity of a table (a token's number, a size): no table's column holds them."""


def belongs_to(fact: Fact, query: int, derived: dict[str, tuple[Any, int]]) -> list[tuple[str, Any]]:
    """The things (kind, index) the number of ``fact`` belongs to: its quantity (``("field", "source.field")``,
    the column of a table it stands in), and the token, key, dimension, head, step or tile it names; no thing
    for a size or a sum of all."""
    source, field, index, _ = canonical(fact, query)
    if source == "position":
        kind = POSITION_BANDS.get(fact.field or "token") if fact.source == "position" else "query"
        return [(kind, index[0])] if kind is not None else []
    things = [] if source in WITHOUT_QUANTITY else [("field", f"{source}.{field}")]
    return things + _indexed_things(source, field, index, derived)


def _indexed_things(source: str, field: str, index: tuple[int, ...],
                    derived: dict[str, tuple[Any, int]]) -> list[tuple[str, Any]]:
    """The token, key, dimension, head, step, tile or pair the index of a derived field names."""
    if source.endswith(("extremes", "_ends")) and len(index) == 1:  # a colour scale's low (0) or high (1) end
        return [("end", index[0])]
    if source in MEMORY_SOURCES:  # a published model's number belongs to its row (its config's)
        return [("config", MEMORY_SOURCES[source])]
    if source in COST_SOURCES:  # a step's count belongs to its step (the token it generates, that step's query)
        route = {"multiplies_with_cache": 0, "multiplies_without_cache": 1}  # and to its route: with the cache or not
        step = [("query", int(source.removeprefix("cost")) - 1)]
        return step + ([("route", route[field])] if field in route else [])
    if source in TRACE_SOURCES:
        kinds = BELONGS.get(field, ())
    elif source in STEP_SOURCES:
        kinds = STEP_BELONGS.get(field, ())
        if source in GENERATION_SOURCES:  # a step's numbers are its query's: the token it writes
            return [("query", int(source.removeprefix("generation")) - 1),
                    *_indexed_things("causal_step", field, index, derived)]
    elif source in FUSED_SOURCES:
        return _fused_things(FUSED_BELONGS.get(field, ()), index, derived[source][0] if source in derived else None)
    elif source.startswith("scaling"):
        kinds = SCALING_BELONGS.get(field, ())
    elif source == "bias":
        kinds = BELONGS_BIAS.get(field, ())
    elif source in CLOCK_SOURCES:
        kinds = CLOCK_BELONGS.get(field, ())
    elif source == "online":
        kinds = ONLINE_BELONGS.get(field, ())
    elif source.startswith("training"):
        kinds = TRAINING_BELONGS.get(field, ())
    elif (own := _lecture_belongs(source)) is not None:
        kinds = own.get(field, ())
    else:
        return []
    things: list[tuple[str, Any]] = []
    if source.startswith(("head", "causal_head")) and source.rsplit("head", 1)[1].isdigit():
        things.append(("head", int(source.rsplit("head", 1)[1]) - 1))
    if kinds and index:
        shape = np.shape(getattr(derived[source][0], field)) if source in derived else ()
        for k, (kind, i) in enumerate(zip(kinds, index, strict=False)):
            i = i + shape[k] if i < 0 and k < len(shape) else i
            if source.startswith("backwards") and kind in ("query", "key") and len(shape) > k:
                i = shape[k] - 1 - i  # token i of the sentence backwards is token n − 1 − i of the sentence
            things.append((kind, i))
    if field == "concat" and len(index) == 2 and source in derived and derived[source][0] is not None:
        width = np.shape(derived[source][0].heads[0].values)[1]  # the heads' z side by side: d_v columns each
        things.append(("head", index[1] // width))
    return things


def _fused_things(kinds: tuple[str, ...], index: tuple[int, ...], trace: Any) -> list[tuple[str, int]]:
    """What the index of a fused-heads field names: a packed column is a head and a dimension of it."""
    things: list[tuple[str, int]] = []
    for kind, i in zip(kinds, index, strict=False):
        if kind in (PACKED_K, PACKED_V):
            width = trace.d_k if kind == PACKED_K else trace.d_v
            things += [("head", i // width), ("d_k" if kind == PACKED_K else "d_v", i % width)]
        else:
            things.append((kind, i))
    return things


@dataclass(frozen=True)
class BandsSeen:
    """One registered set of bands as it stands at one moment: ``bands`` (index, low, high) along its
    axis (y for rows, x for columns), ``across`` the extent of its region the other way."""

    kind: str
    axis: str
    bands: tuple[tuple[Any, float, float], ...]
    across: tuple[float, float]


PLACE_TOLERANCE = 0.03
"""A band holds what stands this far outside it (a baseline a hair below a label's)."""
REACH = 0.1
"""A number stands within a set's region when its centre is at most this far outside it."""


def quantity_band_of(coordinate: float, bands: Sequence[tuple[Any, float, float]], own: Any) -> Any:
    """The quantity whose band holds ``coordinate``: its own where its own band holds it (several quantities may
    share a band), else the one holding it, else the nearest; ``None`` outside them all."""
    holding = [key for key, low, high in bands if low - PLACE_TOLERANCE <= coordinate <= high + PLACE_TOLERANCE]
    if own in holding:
        return own
    if holding:
        return holding[0]
    if not min(b[1] for b in bands) - PLACE_TOLERANCE <= coordinate <= max(b[2] for b in bands) + PLACE_TOLERANCE:
        return None
    nearest = min(abs(coordinate - (b[1] + b[2]) / 2) for b in bands)
    close = [b[0] for b in bands if abs(abs(coordinate - (b[1] + b[2]) / 2) - nearest) < 1e-9]
    return own if own in close else close[0]


def band_of(coordinate: float, bands: Sequence[tuple[int, float, float]]) -> int | None:
    """The band that holds ``coordinate`` (one alone), else the nearest by its middle; ``None`` outside them all."""
    holding = [index for index, low, high in bands if low - PLACE_TOLERANCE <= coordinate <= high + PLACE_TOLERANCE]
    if len(holding) == 1:
        return holding[0]
    if not holding and not min(b[1] for b in bands) - PLACE_TOLERANCE <= coordinate <= max(b[2] for b in bands) \
            + PLACE_TOLERANCE:
        return None
    candidates = [b for b in bands if b[0] in holding] or list(bands)
    return min(candidates, key=lambda b: abs(coordinate - (b[1] + b[2]) / 2))[0]


Placement = tuple[str, str, Any, Any, str]
"""A number held by a band: (its name, the kind of thing, its own index, the band's index, row or column)."""


def placements(numbers: Iterable[tuple[str, Fact, float, float]], seen: Sequence[BandsSeen], query: int,
               derived: dict[str, tuple[Any, int]]) -> list[Placement]:
    """Where each number (its name, fact and centre x, y) stands among the bands of the things it belongs to.

    For each thing (kind, index) of :func:`belongs_to`, the sets of bands of that kind whose region holds the
    number (the nearest across, where several do; of those, the narrowest: a composite row under a panel's
    reach is the row's) each put it in a band.
    """
    found = []
    for name, fact, x, y in numbers:
        for kind, index in belongs_to(fact, query, derived):
            held = []
            for bands in seen:
                if bands.kind != kind or not bands.bands:
                    continue
                along, across = (y, x) if bands.axis == "row" else (x, y)
                gap = max(bands.across[0] - across, across - bands.across[1], 0.0)
                if gap > REACH:
                    continue
                band = quantity_band_of(along, bands.bands, index) if kind == "field" else band_of(along, bands.bands)
                if band is not None:
                    held.append((gap, bands.across[1] - bands.across[0], band, bands.axis))
            nearest = min(((gap, reach) for gap, reach, _, _ in held), default=(0.0, 0.0))
            found += [(name, kind, index, band, axis) for gap, reach, band, axis in held
                      if gap <= nearest[0] + 1e-9 and reach <= nearest[1] + 1e-9]
    return found


def place_problems(found: Iterable[Placement]) -> list[str]:
    """The numbers standing in another thing's band than their own."""
    return [f"{name} stands in the {axis} of {_thing(kind, band)}, not in its own ({_thing(kind, index)})"
            for name, kind, index, band, axis in found if band != index]


def _thing(kind: str, index: Any) -> str:
    return f"the quantity {index}" if kind == "field" else f"{kind} {index + 1}"
