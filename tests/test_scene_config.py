"""How a scene picks its scenario: ATTENTION_SCENARIO / ATTENTION_QUERY, manim.cfg, the default.

And what happens when the scenario is too big to draw: a one-line error before anything is
drawn, also from ``manim render`` itself.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest
from scene_helpers import REPO, clean_environment, manim_command

from attention_math import DEFAULT_PRESET, PRESETS, Scenario, ScenarioError, format_number, preset
from scenes.base import MAX_SHOWN, NUMBER_WIDTHS, SCENE_LIMITS, check_scene_limits, scenario_from_environment

SMALL_TOML = """\
title = "small"
tokens = ["red", "green", "blue"]
embeddings = [[1.0, 0.0], [0.0, 1.0], [0.5, 0.5]]
w_query = [[1.0], [0.0]]
w_key = [[0.0], [1.0]]
w_value = [[1.0], [1.0]]
query = 2
"""


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty working folder (no manim.cfg) and no ATTENTION_* variables."""
    monkeypatch.delenv("ATTENTION_SCENARIO", raising=False)
    monkeypatch.delenv("ATTENTION_QUERY", raising=False)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def same(a: Scenario, b: Scenario) -> bool:
    return (
        a.tokens == b.tokens
        and a.query == b.query
        and all(np.array_equal(getattr(a, f), getattr(b, f)) for f in ("embeddings", "w_query", "w_key", "w_value"))
    )


def write_cfg(folder: Path, **attention: str) -> None:
    lines = ["[CLI]", "media_dir = ./media", "", "[attention]", *(f"{k} = {v}" for k, v in attention.items())]
    (folder / "manim.cfg").write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_default_when_nothing_is_set(folder: Path) -> None:
    scenario = scenario_from_environment(folder)
    assert same(scenario, preset(DEFAULT_PRESET))
    assert same(scenario_from_environment(), preset(DEFAULT_PRESET))  # the working folder


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_scenario_by_preset_name(name: str, folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ATTENTION_SCENARIO", name)
    assert same(scenario_from_environment(folder), preset(name))


def test_scenario_from_a_toml_path(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = folder / "small.toml"
    path.write_text(SMALL_TOML, encoding="utf-8")
    monkeypatch.setenv("ATTENTION_SCENARIO", str(path))
    scenario = scenario_from_environment(folder)
    assert scenario.tokens == ("red", "green", "blue")
    assert scenario.query == 1  # files count from 1


def test_query_by_number(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ATTENTION_QUERY", "2")
    scenario = scenario_from_environment(folder)
    assert scenario.query == 1 and scenario.query_token == "dog"


def test_query_by_token_text(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ATTENTION_QUERY", "chased")
    assert scenario_from_environment(folder).query == 2


def test_query_and_scenario_together(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ATTENTION_SCENARIO", "raw-dot-product")
    monkeypatch.setenv("ATTENTION_QUERY", "ball")
    scenario = scenario_from_environment(folder)
    assert scenario.tokens == preset("raw-dot-product").tokens and scenario.query_token == "ball"


def test_unknown_query_names_the_field(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ATTENTION_QUERY", "cat")
    with pytest.raises(ScenarioError, match=r"^query: no token 'cat'"):
        scenario_from_environment(folder)


def test_manim_cfg_attention_section(folder: Path) -> None:
    write_cfg(folder, scenario="raw-dot-product", query="dog")
    scenario = scenario_from_environment(folder)
    assert scenario.tokens == preset("raw-dot-product").tokens and scenario.query_token == "dog"


def test_manim_cfg_scenario_path(folder: Path) -> None:
    (folder / "small.toml").write_text(SMALL_TOML, encoding="utf-8")
    write_cfg(folder, scenario=str(folder / "small.toml"), query="3")
    scenario = scenario_from_environment(folder)
    assert scenario.tokens == ("red", "green", "blue") and scenario.query == 2


def test_manim_cfg_of_the_working_folder(folder: Path) -> None:
    write_cfg(folder, scenario="softmax-saturation")
    assert same(scenario_from_environment(), preset("softmax-saturation"))


def test_environment_wins_over_manim_cfg(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_cfg(folder, scenario="softmax-saturation", query="1")
    monkeypatch.setenv("ATTENTION_SCENARIO", "raw-dot-product")
    monkeypatch.setenv("ATTENTION_QUERY", "3")
    scenario = scenario_from_environment(folder)
    assert scenario.tokens == preset("raw-dot-product").tokens and scenario.query == 2


def test_manim_cfg_without_attention_section(folder: Path) -> None:
    (folder / "manim.cfg").write_text("[CLI]\nmedia_dir = ./media\n", encoding="utf-8")
    assert same(scenario_from_environment(folder), preset(DEFAULT_PRESET))


def test_unknown_scenario_gives_a_clear_message(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ATTENTION_SCENARIO", "dog-chased-bal")
    with pytest.raises(ScenarioError) as caught:
        scenario_from_environment(folder)
    message = str(caught.value)
    assert message.startswith("ATTENTION_SCENARIO:")
    assert "'dog-chased-bal'" in message
    assert all(name in message for name in PRESETS)
    assert ".toml" in message
    assert "\n" not in message


def test_missing_toml_file_names_it(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ATTENTION_SCENARIO", str(folder / "nowhere.toml"))
    with pytest.raises(ScenarioError, match="no such file"):
        scenario_from_environment(folder)


OVER_THE_LIMIT = {
    # field: a sentence scenario just beyond what the scenes draw in that field only
    "tokens": 'sentence = "w1 w2 w3 w4 w5 w6 w7 w8 w9 w10 w11 w12 w13 w14 w15 w16 w17"\nd_model = 3\nd_k = 2\n',
    "d_in": 'sentence = "a b c"\nd_model = 7\nd_k = 2\n',
    "d_k": 'sentence = "a b c"\nd_model = 3\nd_k = 5\n',
    # precision: the scenes draw what attention_math accepts, 0 to 4 (tests/test_scenario.py)
}


def test_limits_are_the_ones_tested() -> None:
    assert SCENE_LIMITS["tokens"][1] == 16 and SCENE_LIMITS["d_in"][1] == 6 and SCENE_LIMITS["d_k"][1] == 4
    assert SCENE_LIMITS["d_v"] == (1, 4) and SCENE_LIMITS["precision"] == (0, 4)


def _identity_scenario(n: int, value: float, precision: int = 2) -> Scenario:
    """n tokens whose first embedding entry is ``value``; every weight matrix picks dimension 1."""
    embeddings = [[value if i == 0 else 0.1, 0.2] for i in range(n)]
    pick = [[1.0, 0.0], [0.0, 1.0]]
    return Scenario("wide", [f"t{i}" for i in range(n)], embeddings, pick, pick, pick, precision=precision)


@pytest.mark.parametrize(("tokens", "fits"), NUMBER_WIDTHS)
def test_numbers_wider_than_the_rows_fit_name_the_field(tokens: int, fits: int) -> None:
    # the score q1·k1 = value² is the widest number shown: from "1.56" to "998500.56"
    for value in (-1.25, -3.25, -9.25, -31.25, -99.25, -316.25, -999.25):
        scenario = _identity_scenario(tokens, value)
        widest = max(len(format_number(v, 2)) for v in np.ravel(scenario.trace().scores))
        if widest <= fits:
            assert check_scene_limits(scenario) is scenario
        else:
            with pytest.raises(ScenarioError, match=rf"with {tokens} tokens the scenes fit numbers of {fits} "):
                check_scene_limits(scenario)


def test_every_preset_and_test_scenario_fits() -> None:
    from scene_helpers import SCENARIOS

    for scenario in [*PRESETS.values(), *(make() for make in SCENARIOS.values())]:
        assert check_scene_limits(scenario, model=scenario.model is not None) is scenario


@pytest.mark.parametrize("field", sorted(OVER_THE_LIMIT))
def test_scenario_beyond_scene_limits_names_the_field(
    field: str, folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = folder / f"too-big-{field}.toml"
    path.write_text(OVER_THE_LIMIT[field], encoding="utf-8")
    monkeypatch.setenv("ATTENTION_SCENARIO", str(path))
    with pytest.raises(ScenarioError, match=rf"^{field}: the scenes draw \d+ to \d+, this scenario has \d+"):
        scenario_from_environment(folder)


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        pytest.param({"embeddings": [[1e6, 0.0], [0.0, 1.0]]}, "embeddings", id="an embedding"),
        pytest.param({"w_value": [[1.0, 0.0], [0.0, -2e7]]}, "w_value", id="a weight"),
        pytest.param({"embeddings": [[1e3, 1e3], [0.5, 1.0]], "w_query": [[1e3, 0.0], [0.0, 1.0]]}, "queries",
                     id="a query"),
        # 1000·1000 − 1000·1000 = 0: the sum is small, the terms scene 2 writes out are not
        pytest.param({"embeddings": [[1e3, 1e3], [0.0, 1.0]], "w_query": [[1e3, 0.0], [-1e3, 1.0]],
                      "w_key": [[1e-3, 0.0], [0.0, 1e-3]]}, "queries (their terms)", id="a term of a query"),
        pytest.param({"embeddings": [[1e3, 1e3], [0.0, 1.0]], "w_query": [[1e-3, 0.0], [0.0, 1e-3]],
                      "w_key": [[1e3, 0.0], [-1e3, 1.0]]}, "keys (their terms)", id="a term of a key"),
        pytest.param({"embeddings": [[100.0, 0.0], [0.0, 1.0]], "w_query": [[100.0, 0.0], [0.0, 1.0]],
                      "w_key": [[100.0, 0.0], [0.0, 1.0]]}, "scores", id="a score"),
    ],
)
def test_numbers_too_large_to_draw_name_the_field(changes: dict[str, object], field: str) -> None:
    given: dict[str, object] = {
        "embeddings": [[0.5, 0.0], [0.0, 1.0]], "w_query": [[1.0, 0.0], [0.0, 1.0]],
        "w_key": [[1.0, 0.0], [0.0, 1.0]], "w_value": [[1.0, 0.0], [0.0, 1.0]], **changes,
    }
    scenario = Scenario("large", ["a", "b"], **given)  # attention_math itself takes them
    with pytest.raises(ScenarioError) as info:
        check_scene_limits(scenario)
    message = str(info.value)
    assert message.startswith(f"{field}: the scenes draw numbers below 1,000,000 in size, this scenario's reach ")
    assert "\n" not in message


def test_numbers_just_below_the_limit_are_drawn() -> None:
    assert MAX_SHOWN == 1e6
    big = 999_999.99
    scenario = Scenario("large", ["a", "b"], [[big, 0.0], [0.0, 1.0]], [[1e-6, 0.0], [0.0, 1.0]],
                        [[1e-6, 0.0], [0.0, 1.0]], [[1e-6, 0.0], [0.0, 1.0]], precision=2)
    assert check_scene_limits(scenario) is scenario
    for scenario in PRESETS.values():
        check_scene_limits(scenario)


def test_render_of_a_too_big_scenario_fails_in_one_line(tmp_path: Path) -> None:
    scenario = tmp_path / "seventeen.toml"
    scenario.write_text(OVER_THE_LIMIT["tokens"], encoding="utf-8")
    media = tmp_path / "media"
    env = clean_environment()
    env["ATTENTION_SCENARIO"] = str(scenario)
    result = subprocess.run(
        manim_command("-ql", "--media_dir", str(media), "scenes/self_attention/scores.py", "Scores"),
        cwd=REPO, env=env, capture_output=True, text=True, timeout=300,
    )
    output = result.stdout + result.stderr
    assert result.returncode != 0, output
    errors = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1, result.stderr
    assert errors[0].startswith("error: tokens: the scenes draw 2 to 16, this scenario has 17"), errors
    assert "Traceback" not in output, output
    videos = list(media.rglob("*.mp4")) if media.exists() else []
    assert videos == [], videos
