"""``python -m attention_math``: the walkthrough's numbers, its formats, and its one-line errors."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from attention_math import Scenario, preset

PROG = "python -m attention_math"
TIMEOUT = 120


def run(*arguments: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONUTF8": "1", "PYTHONIOENCODING": "utf-8"}
    return subprocess.run(
        [sys.executable, "-m", "attention_math", *map(str, arguments)],
        capture_output=True, text=True, encoding="utf-8", env=env, cwd=cwd, timeout=TIMEOUT, check=False,
    )


def ok(*arguments: str | Path) -> str:
    result = run(*arguments)
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    return result.stdout


# -- the default walkthrough --------------------------------------------------------------------


def test_default_prints_the_ball_walkthrough_with_the_slide_numbers() -> None:
    text = ok()
    lines = text.splitlines()
    assert lines[0] == "The dog chased the ball: the context vector for 'ball' (token 5)"
    assert "q5 · k1 (The) = 0.73×0.72 + 1.70×1.39 = 0.53 + 2.36 = 2.89" in lines
    scores = {line.split(" (")[0]: line.rsplit("= ", 1)[1] for line in lines if line.startswith("q5 · k")}
    assert scores == {"q5 · k1": "2.89", "q5 · k2": "2.82", "q5 · k3": "3.42", "q5 · k4": "2.18", "q5 · k5": "3.72"}
    assert "z5 = 0.17·v1 + 0.16·v2 + 0.25·v3 + 0.10·v4 + 0.31·v5" in lines
    weights = [line.split()[-1] for line in lines if line.split()[:1] in (["1"], ["2"], ["3"], ["4"], ["5"])
               and len(line.split()) == 7]
    assert weights == ["0.17", "0.16", "0.25", "0.10", "0.31"]
    assert "Scale by √2 = 1.41, then softmax" in lines
    assert any(line.startswith("= z5") for line in lines)
    assert "The weights sum to 1.00." in text
    assert "-0.00" not in text


def test_same_as_asking_for_the_default_preset_and_query() -> None:
    assert ok("--preset", "dog-chased-ball", "--query", "5") == ok()


def test_json_weights_equal_the_trace() -> None:
    data = json.loads(ok("--format", "json"))
    trace = preset("dog-chased-ball").trace()
    assert data["tokens"] == ["The", "dog", "chased", "the", "ball"]
    assert data["query"]["number"] == 5 and data["query"]["token"] == "ball"
    assert data["query"]["weights"] == trace.weights[4].tolist()
    assert data["matrices"]["weights"] == trace.weights.tolist()
    assert data["matrices"]["context"] == trace.context.tolist()
    assert data["query"]["context"] == trace.context[4].tolist()
    assert np.round(data["query"]["scores"][:3], 2).tolist() == [2.89, 2.82, 3.42]
    assert data["d_k"] == 2 and data["scaled"] is True


def test_markdown_has_tables() -> None:
    text = ok("--format", "markdown")
    lines = text.splitlines()
    assert lines[0] == "# The dog chased the ball: the context vector for 'ball' (token 5)"
    assert "## X, the input embeddings (5 × 3)" in lines
    separators = [line for line in lines if line.startswith("|:---|")]
    assert len(separators) >= 9
    assert "|:---|---:|---:|---:|" in lines  # X has three columns
    assert "| 5 ball | 0.70 | 0.60 | 0.90 |" in lines
    assert "| 5 ball | 3.72 | 2.63 | 0.00 | 1.000 | 0.31 |" in lines
    assert "- z5 = 0.17·v1 + 0.16·v2 + 0.25·v3 + 0.10·v4 + 0.31·v5" in lines
    # Each table row has as many cells as its header.
    for index, separator in enumerate(lines):
        if separator in separators:
            width = separator.count("|")
            row = index + 1
            while row < len(lines) and lines[row].startswith("|"):
                assert lines[row].count("|") - lines[row].count("\\|") == width
                row += 1


def test_raw_dot_product_preset() -> None:
    text = ok("--preset", "raw-dot-product")
    lines = text.splitlines()
    assert lines[0] == "Why raw dot products fail: the context vector for 'it' (token 1)"
    assert any(line.startswith("q1 · k2 (dog) =") and line.endswith("= 0.56") for line in lines)
    assert any(line.startswith("q1 · k3 (ball) =") and line.endswith("= 0.96") for line in lines)
    assert "q1 · k2 (dog) = 0.50×0.90 + 0.50×0.20 + 0.10×0.10 = 0.45 + 0.10 + 0.01 = 0.56" in lines


def test_softmax_saturation_preset_is_unscaled_with_three_decimals() -> None:
    text = ok("--preset", "softmax-saturation")
    assert "Scale by 1 (unscaled), then softmax" in text
    assert "z2 = 0.007·v1 + 0.993·v2" in text


@pytest.mark.parametrize("query", ["3", "chased"])
def test_query_by_number_or_token(query: str) -> None:
    text = ok("--query", query)
    lines = text.splitlines()
    assert lines[0] == "The dog chased the ball: the context vector for 'chased' (token 3)"
    step = preset("dog-chased-ball").trace().query_step(2)
    expected = " + ".join(f"{w:.2f}·v{j + 1}" for j, w in enumerate(step.weights))
    assert f"z3 = {expected}" in lines
    assert "q3 · k1 (The) = " in text


def test_query_by_number_and_by_token_agree() -> None:
    assert ok("--query", "3") == ok("--query", "chased")
    assert ok("--query", "3") != ok()


def test_sentence_with_seed() -> None:
    text = ok("--sentence", "a b c", "--seed", "2")
    assert text.splitlines()[0] == "a b c: the context vector for 'c' (token 3)"
    data = json.loads(ok("--sentence", "a b c", "--seed", "2", "--format", "json"))
    scenario = Scenario.from_sentence("a b c", seed=2)
    assert data["matrices"]["embeddings"] == scenario.embeddings.tolist()
    assert data["query"]["weights"] == scenario.trace().weights[2].tolist()
    other = json.loads(ok("--sentence", "a b c", "--seed", "3", "--format", "json"))
    assert other["matrices"]["embeddings"] != data["matrices"]["embeddings"]
    sized = json.loads(ok("--sentence", "a b c", "--d-model", "4", "--d-k", "3", "--query", "b", "--format", "json"))
    assert np.array(sized["matrices"]["embeddings"]).shape == (3, 4)
    assert np.array(sized["matrices"]["w_key"]).shape == (4, 3)
    assert sized["query"]["token"] == "b"


def test_sentence_with_its_own_value_size_and_heads() -> None:
    data = json.loads(ok("--sentence", "a b c", "--seed", "2", "--d-v", "3", "--format", "json"))
    scenario = Scenario.from_sentence("a b c", seed=2, d_v=3)
    assert np.array(data["matrices"]["w_value"]).shape == (3, 3)
    assert data["query"]["context"] == scenario.query_step().context.tolist()
    two = json.loads(ok("--sentence", "a b c", "--heads", "2", "--d-v", "1", "--format", "json"))
    expected = Scenario.from_sentence("a b c", heads=2, d_v=1).multi_head_trace()
    assert len(two["heads"]) == 2 and two["query"]["output"] == expected.output[2].tolist()
    text = ok("--sentence", "a b c", "--heads", "2")
    assert text.splitlines()[0] == "a b c: the multi-head output for 'c' (token 3)"
    assert "Head 1" in text and "Head 2" in text and "Join the heads" in text


def test_two_heads_walkthrough_shows_both_heads_for_ball() -> None:
    text = ok("--preset", "two-heads")
    scenario = preset("two-heads")
    for head in scenario.heads:
        expected = " + ".join(f"{w:.2f}·v{j + 1}" for j, w in enumerate(head.query_step().weights))
        assert f"z5 = {expected}" in text.splitlines()
    last = [line for line in text.splitlines() if line.startswith("o5[")]
    assert [line.rsplit("= ", 1)[1] for line in last] == [
        f"{v:.2f}" for v in scenario.multi_head_trace().output[4]
    ]


def test_rounded_numbers_are_said_once() -> None:
    rounded = ok("--preset", "your-journey")
    assert rounded.count("Numbers are rounded to 4 decimals") == 1
    assert rounded.splitlines()[0] == "Your journey starts with one step: the context vector for 'journey' (token 2)"
    assert "= 0.1500" in rounded and "0.2264" in rounded  # the book's weights
    assert "rounded" not in ok()  # one-decimal inputs at 2 decimals: exact
    tiny = ok("--sentence", "a b c")
    assert "rounded" not in tiny


def test_precision_chooses_the_decimals_of_any_scenario() -> None:
    two = ok("--preset", "your-journey", "--precision", "2")
    assert two.count("Numbers are rounded to 2 decimals") == 1 and "0.15" in two and "0.1500" not in two
    one = ok("--sentence", "a b c", "--precision", "1")
    assert one.count("Numbers are rounded to 1 decimal ") == 1
    whole = ok("--precision", "0")
    assert "rounded to 0 decimals" in whole
    four = ok("--precision", "4")
    assert re.search(r"\b0\.\d{4}\b", four) and not re.search(r"\b0\.\d{2}\b(?!\d)", four.split("\n", 2)[2])


def test_scenario_file(tmp_path: Path) -> None:
    path = tmp_path / "file.toml"
    path.write_text(
        'title = "Tiny"\ntokens = ["x", "y"]\nembeddings = [[1.0, 0.0], [0.0, 1.0]]\n'
        "w_query = [[1.0], [0.0]]\nw_key = [[1.0], [1.0]]\nw_value = [[1.0], [2.0]]\nquery = 1\n",
        encoding="utf-8",
    )
    text = ok("--scenario", path)
    lines = text.splitlines()
    assert lines[0] == "Tiny: the context vector for 'x' (token 1)"
    assert "z1 = 0.50·v1 + 0.50·v2" in lines
    assert ok("--scenario", path, "--query", "y").splitlines()[0] == "Tiny: the context vector for 'y' (token 2)"


# -- bad input: exit 2, one line on stderr, no traceback ---------------------------------------


@pytest.mark.parametrize(
    ("arguments", "words"),
    [
        pytest.param(["--preset", "nope"], ["preset", "dog-chased-ball", "raw-dot-product"], id="unknown preset"),
        pytest.param(["--query", "9"], ["query", "1 to 5"], id="query out of range"),
        pytest.param(["--query", "0"], ["query"], id="query zero"),
        pytest.param(["--query", "cat"], ["query", "'cat'"], id="unknown query token"),
        pytest.param(["--query", "²"], ["query"], id="unicode digit query"),
        pytest.param(["--sentence", "a b a", "--query", "a"], ["query", "1, 3"], id="ambiguous query"),
        pytest.param(["--scenario", "{tmp}/missing.toml"], ["no such file"], id="missing file"),
        pytest.param(["--scenario", "{tmp}"], ["directory"], id="directory"),
        pytest.param(["--scenario", "{tmp}/bad.toml"], ["invalid TOML", "line 1, column"], id="invalid TOML"),
        pytest.param(["--scenario", "{tmp}/big.toml"], ["embeddings"], id="integer beyond float64"),
        pytest.param(["--scenario", "{tmp}/typo.toml"], ["did you mean 'sentence'"], id="unknown key"),
        pytest.param(["--format", "yaml"], ["--format", "invalid choice"], id="bad format choice"),
        pytest.param(["--bogus"], ["unrecognized arguments: --bogus"], id="unknown option"),
        pytest.param(["--seed", "x", "--sentence", "a"], ["--seed"], id="seed not a number"),
        pytest.param(["--sentence", "a", "--seed", "-1"], ["seed"], id="negative seed"),
        pytest.param(["--sentence", "a b", "--d-k", "0"], ["d_k"], id="d_k zero"),
        pytest.param(["--sentence", "a b", "--d-v", "0"], ["d_v", "1 to 64"], id="d_v zero"),
        pytest.param(["--sentence", "a b", "--d-v", "x"], ["--d-v"], id="d_v not a number"),
        pytest.param(["--sentence", "a b", "--heads", "0"], ["heads", "1 to 64"], id="no heads"),
        pytest.param(["--scenario", "{tmp}/precise.toml"], ["precision", "0 to 4"], id="precision above 4"),
        pytest.param(["--sentence", " "], ["sentence"], id="blank sentence"),
        pytest.param(["--preset", "raw-dot-product", "--sentence", "a"], ["not allowed with"], id="two sources"),
        pytest.param(["--query"], ["--query", "expected one argument"], id="missing value"),
    ],
)
def test_bad_input_is_one_line_and_exit_two(tmp_path: Path, arguments: list[str], words: list[str]) -> None:
    (tmp_path / "bad.toml").write_text("title = = 1\n", encoding="utf-8")
    (tmp_path / "big.toml").write_text(
        'tokens = ["a"]\nembeddings = [[1' + "0" * 400 + "]]\nw_query = [[1]]\nw_key = [[1]]\nw_value = [[1]]\n",
        encoding="utf-8",
    )
    (tmp_path / "typo.toml").write_text('sentense = "a b"\n', encoding="utf-8")
    (tmp_path / "precise.toml").write_text('sentence = "a b"\nprecision = 5\n', encoding="utf-8")
    result = run(*(a.replace("{tmp}", str(tmp_path)) for a in arguments))
    assert result.returncode == 2, (result.returncode, result.stderr)
    assert result.stdout == ""
    assert "Traceback" not in result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert result.stderr.endswith("\n")
    assert lines[0].startswith(f"{PROG}: error: ")
    for word in words:
        assert word in lines[0], (word, lines[0])


def test_help_exits_zero() -> None:
    result = run("--help")
    assert result.returncode == 0
    for option in ("--preset", "--scenario", "--sentence", "--seed", "--d-v", "--heads", "--query", "--format"):
        assert option in result.stdout


# -- importing stays light ---------------------------------------------------------------------


def test_import_does_not_pull_in_manim() -> None:
    code = (
        "import sys\n"
        "import attention_math, attention_math.__main__, attention_math.walkthrough, attention_math.presets\n"
        "attention_math.format_walkthrough(attention_math.preset('dog-chased-ball'))\n"
        "heavy = [m for m in ('manim', 'manimlib', 'cairo', 'manimpango') if m in sys.modules]\n"
        "print(heavy)\n"
        "print('attention_math' in sys.modules)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=TIMEOUT, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["[]", "True"]
