"""scenes.plan declares which trace numbers each scene shows; the bundle trusts it to keep clips.

Every scene is dry-run with a scenario, trace and query step that note each attribute read;
what the scene read must be exactly what the plan declares (a scene that read more would keep a
stale clip; one that declared more would re-render for nothing).
"""

from __future__ import annotations

import dataclasses

import pytest
from scene_helpers import NUMBER_SCENARIOS, SCENARIOS, built, scenarios_of
from scene_helpers import SCENES as ALL_SCENES

from attention_explainer.plan import BundleSettings, scene_key, work_folder
from attention_explainer.selection import SCENES
from attention_explainer.selection import SCENES as BUNDLE_SCENES
from attention_math import preset
from scenes.plan import INPUTS, depends_on, scene_view
from scenes.registry import DEFAULT_LECTURE, lecture, lecture_of_scene, lectures, render_cost

SCORES = next(spec.stem for spec in BUNDLE_SCENES if spec.name == "Scores")  # "04-scores"

CASES = [
    pytest.param(scene, scenario, id=f"{scene[1]}-{scenario}")
    for scene in ALL_SCENES for scenario in scenarios_of(scene[1], NUMBER_SCENARIOS)
]


@pytest.mark.parametrize(("scene", "scenario"), CASES)
def test_a_scene_reads_no_number_the_plan_does_not_declare(scene_builds, scene, scenario) -> None:
    build = built(scene_builds, scene, scenario)
    read = frozenset().union(*(depends_on(source, name) for source, name in build.reads))
    shows = lecture_of_scene(scene[1]).shows[scene[1]]
    assert read <= shows, f"{scene[1]} reads {sorted(read - shows)} beyond its lecture's shows"


@pytest.mark.parametrize("scene", ALL_SCENES, ids=[name for _, name in ALL_SCENES])
def test_the_plan_declares_nothing_a_scene_never_reads(scene_builds, scene) -> None:
    read = frozenset().union(
        *(
            depends_on(source, name)
            for scenario in scenarios_of(scene[1], NUMBER_SCENARIOS)
            for source, name in built(scene_builds, scene, scenario).reads
        )
    )
    assert sorted(read) == sorted(lecture_of_scene(scene[1]).shows[scene[1]])


def _with_value_weight_changed(scenario):
    w_value = scenario.w_value.copy()
    w_value[0, 0] += 0.5
    return dataclasses.replace(scenario, w_value=w_value)


def test_a_value_weight_change_keeps_exactly_the_clips_that_show_no_value() -> None:
    scenario = SCENARIOS["default"]()
    changed = _with_value_weight_changed(scenario)
    settings = BundleSettings()
    kept = {s.name for s in SCENES if scene_key(s, scenario, settings, "c") == scene_key(s, changed, settings, "c")}
    assert kept == {"RawDotProducts", "Scores", "ScaleAndSoftmax", "WhyScale"}
    # the same rule, from the plan: a scene keeps its clip when it shows nothing W_V changes
    touched = {"w_value", "values", "context"}
    default = lecture(DEFAULT_LECTURE)
    assert kept == {name for name in default.scene_names if not default.shows[name] & touched}


@pytest.mark.parametrize(
    "change",
    [
        lambda s: s.with_query(1),
        lambda s: dataclasses.replace(s, tokens=("A", *s.tokens[1:])),
        lambda s: dataclasses.replace(s, precision=3),
        lambda s: dataclasses.replace(s, scaled=not s.scaled),
    ],
    ids=["query", "token", "precision", "scaled"],
)
def test_a_layout_change_rerenders_every_scene_of_the_scenario(change) -> None:
    scenario = SCENARIOS["three"]()
    settings = BundleSettings()
    for spec in SCENES:
        same = scene_key(spec, scenario, settings, "c") == scene_key(spec, change(scenario), settings, "c")
        assert same == (not spec.uses_scenario), spec.name


def test_a_multi_head_view_holds_every_head_and_w_out() -> None:
    """The multi-head scenes show every head (MultiHead W_O too): a change to head 2 or to W_O re-renders them, not
    the one-head scenes."""
    scenario = preset("two-heads")
    w_value, w_out = scenario.w_value.copy(), scenario.w_out.copy()
    w_value[1, 0, 0] += 0.1  # head 2's
    w_out[0, 0] += 0.1
    for changed in (dataclasses.replace(scenario, w_value=w_value), dataclasses.replace(scenario, w_out=w_out)):
        for name in ("WhyHeads", "PerHead", "MultiHead"):  # each shows head 2 (ALL_HEADS)
            assert scene_view(name, changed) != scene_view(name, scenario), name
        assert scene_view("MatrixForm", changed) == scene_view("MatrixForm", scenario)  # it shows head 1 only
    assert scene_view("MultiHead", SCENARIOS["default"]())["w_out"] is None  # one head: no W_O


def test_views_hold_every_declared_number_bit_for_bit() -> None:
    scenario = SCENARIOS["three"]()
    view = scene_view("CausalMask", scenario)
    assert view is not None
    assert INPUTS <= view.keys()
    assert view["w_key"] == [[repr(float(x)) for x in row] for row in scenario.w_key.tolist()]
    nudged = dataclasses.replace(scenario, w_key=scenario.w_key + 1e-15)
    assert scene_view("CausalMask", nudged) != view


@pytest.mark.render
def test_a_bundle_rerenders_only_the_scenes_that_show_a_changed_number(tmp_path) -> None:
    import json
    import subprocess
    import sys

    from attention_math import Scenario, scenario_to_toml

    scenario = Scenario.from_sentence("the cat sat", seed=4)
    files = {}
    for label, version in (("before", scenario), ("after", _with_value_weight_changed(scenario))):
        files[label] = tmp_path / f"{label}.toml"
        files[label].write_text(scenario_to_toml(version), encoding="utf-8")
    out = tmp_path / "bundle"

    def render(label: str) -> list[str]:
        command = [sys.executable, "-m", "attention_explainer", "render", "--scenario", str(files[label])]
        result = subprocess.run(
            [*command, "--scenes", "Scores,WeightedSum", "--fps", "5", "--out", str(out)],
            capture_output=True, text=True, check=False,
        )
        assert result.returncode == 0, result.stderr
        return json.loads((out / "manifest.json").read_text(encoding="utf-8"))["rendered"]

    assert render("before") == ["Scores", "WeightedSum"]
    scores_clip = (out / f"{SCORES}.mp4").read_bytes()
    assert render("after") == ["WeightedSum"]
    assert (out / f"{SCORES}.mp4").read_bytes() == scores_clip
    # and the TeX cache the scenes share was kept, whole, for the re-render
    assert (work_folder(out) / "tex.complete").exists()
    assert list((work_folder(out) / "tex").glob("*.svg"))


def test_every_scene_has_a_render_cost_at_each_quality() -> None:
    """The bundle starts the longest renders first by these tables; a scene missing from one
    would start as if it cost as much as Scores."""
    from attention_explainer.schedule import expected_cost

    for declared in lectures():
        for quality in "lh":
            table = declared.cost[quality]
            assert set(table) == set(declared.scene_names), f"{declared.name} -q{quality}: {sorted(table)}"
    spec = next(s for s in SCENES if s.name == "WeightedSum")
    costs = {q: expected_cost(spec, {}, dataclasses.replace(BundleSettings(), quality=q)) for q in "lmh"}
    assert costs == {"l": render_cost("WeightedSum", "l"), "m": render_cost("WeightedSum", "h"),
                     "h": render_cost("WeightedSum", "h")}
    assert render_cost("WeightedSum", "l") == 0.9 and render_cost("WeightedSum", "m") == 1.25
