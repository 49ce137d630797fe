"""The lectures (self-attention, masked, multi-head) and what is special to WhyScale and the multi-head scenes.

``attention-explainer render --lecture NAME`` picks a lecture's scenes in its own order and, with
no scenario named, its own preset; an unknown lecture, or a scenario a lecture's scene cannot
draw, is one line before anything renders. WhyScale shows the sampler whatever the scenario;
MultiHead refuses what it cannot lay out and says when a scenario has one head; WhyHeads and PerHead
draw any number of heads (the first four, the first two) and say how many there are. (The numbers,
layout and plan checks of both scenes run with every other scene's, in ``test_scenes_*`` and
``test_scene_plan``; no test here renders a video.)
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Any

import pytest
from manim import tempconfig
from scene_helpers import DRY_RUN_SETTINGS, built

from attention_explainer import bundle
from attention_explainer.cli import main
from attention_explainer.out_dir import default_out_dir
from attention_explainer.plan import BundleError
from attention_explainer.selection import lecture_specs, select_scenes
from attention_math import PRESETS, Scenario, ScenarioError, preset
from scenes.facts import Fact
from scenes.multi_head.multi_head import MAX_DRAWN as MULTI_HEAD_DRAWN
from scenes.multi_head.multi_head import MultiHead
from scenes.multi_head.per_head import PerHead
from scenes.multi_head.why_heads import MAX_DRAWN, WhyHeads
from scenes.plan import lecture_of
from scenes.registry import DEFAULT_LECTURE, lecture, lecture_names, lectures, model_lecture

WHY_SCALE = ("scenes.self_attention.why_scale", "WhyScale")
MULTI_HEAD = ("scenes.multi_head.multi_head", "MultiHead")
WHY_HEADS = ("scenes.multi_head.why_heads", "WhyHeads")
PER_HEAD = ("scenes.multi_head.per_head", "PerHead")


def test_why_scale_follows_scale_and_softmax_in_the_default_lecture() -> None:
    names = lecture(DEFAULT_LECTURE).scene_names
    assert names[names.index("ScaleAndSoftmax") + 1] == "WhyScale"
    assert DEFAULT_LECTURE == "self-attention" and lectures()[0] is lecture(DEFAULT_LECTURE)
    assert "WhyScale" in lecture(DEFAULT_LECTURE).own_preset  # its clip never depends on the scenario


def test_every_lecture_has_a_preset_and_every_scene_one_lecture() -> None:
    assert all(item.preset in PRESETS for item in lectures())
    assert lecture("multi-head").preset == "two-heads"
    scenes = [name for item in lectures() for name in item.scene_names]
    assert len(scenes) == len(set(scenes))
    assert lecture_of("MultiHead") == "multi-head" and lecture_of("Scores") == DEFAULT_LECTURE


def test_the_multi_head_lecture_has_its_own_scenes_numbered_from_one() -> None:
    specs = select_scenes(None, "multi-head")
    assert [(spec.number, spec.name, spec.stem) for spec in specs] == [
        (1, "WhyHeads", "01-why-heads"), (2, "PerHead", "02-per-head"), (3, "FusedProjection", "03-fused-projection"),
        (4, "CausalHeads", "04-causal-heads"), (5, "MultiHead", "05-multi-head")]
    assert select_scenes("why-heads,per-head,fused-projection,causal-heads,multi-head", "multi-head") == specs
    assert [spec.name for spec in select_scenes(None)] == list(lecture(DEFAULT_LECTURE).scene_names)
    with pytest.raises(BundleError, match="--scenes: unknown scene 'scores'; expected names from WhyHeads, PerHead"):
        select_scenes("scores", "multi-head")


def test_an_unknown_lecture_is_one_line_with_the_known_names(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(BundleError) as error:
        lecture_specs("unmasked")
    assert error.value.status == 2
    known = ", ".join(lecture_names())
    assert str(error.value) == f"--lecture: unknown lecture 'unmasked'; expected one of {known}"
    assert main(["render", "--lecture", "unmasked"]) == 2
    err = capsys.readouterr().err
    assert err == f"attention-explainer: error: {error.value}\n"


def test_another_lecture_gets_its_own_default_folder() -> None:
    scenario = preset("two-heads")
    root = Path("/somewhere")
    media = root / "media"
    assert default_out_dir(scenario, root) == media / "the-dog-chased-the-ball-two-heads"
    assert default_out_dir(scenario, root, "multi-head") == media / "the-dog-chased-the-ball-two-heads-multi-head"


def _rendered_with(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, *argv: str) -> dict[str, Any]:
    """Run ``render`` with the bundle's build replaced: what it would have rendered, and from what."""
    asked: dict[str, Any] = {}

    def build(scenario: Scenario, out: Path, settings: Any, scenes: Any, **_: Any) -> dict[str, Any]:
        asked.update(scenario=scenario, out=out, scenes=[spec.name for spec in scenes])
        return {}

    monkeypatch.setattr(bundle, "build_bundle", build)
    assert main(["render", "--out", str(tmp_path / "out"), *argv]) == 0
    return asked


def test_the_multi_head_lecture_shows_the_two_heads_preset_unless_told(monkeypatch, tmp_path) -> None:
    asked = _rendered_with(monkeypatch, tmp_path, "--lecture", "multi-head")
    assert asked["scenes"] == list(lecture("multi-head").scene_names)
    assert asked["scenario"].title == preset("two-heads").title
    asked = _rendered_with(monkeypatch, tmp_path, "--lecture", "multi-head", "--sentence", "a b c", "--heads", "3")
    assert asked["scenario"].n_heads == 3
    asked = _rendered_with(monkeypatch, tmp_path)
    assert asked["scenes"][5] == "WhyScale" and asked["scenario"].title == preset("dog-chased-ball").title


MASKED = ("GenerationOrder", "MaskedScores", "Renormalise")
"""The masked lecture's first scenes (its last three come from another branch: MaskedContext,
AttentionDropout, TriangularMap)."""


def test_the_masked_lecture_has_its_scenes_in_order_and_its_own_preset(monkeypatch, tmp_path) -> None:
    specs = select_scenes(None, "masked")
    assert [spec.name for spec in specs][:3] == list(MASKED)
    assert [(spec.number, spec.stem) for spec in specs][:3] == [(1, "01-generation-order"), (2, "02-masked-scores"),
                                                                 (3, "03-renormalise")]
    assert lecture("masked").preset == "masked-dog" and preset("masked-dog").query_token == "chased"
    asked = _rendered_with(monkeypatch, tmp_path, "--lecture", "masked")
    assert asked["scenes"][:3] == list(MASKED) and asked["scenario"].title == preset("masked-dog").title
    assert asked["out"] == tmp_path / "out"
    assert default_out_dir(preset("masked-dog"), Path("/r"), "masked") == Path(
        "/r/media/the-dog-chased-the-ball-masked-masked")


def test_the_command_line_names_every_lecture_and_its_preset(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["render", "--help"])
    shown = re.sub(r"-\s+", "-", " ".join(capsys.readouterr().out.split()))  # argparse wraps after a hyphen
    for name, preset_name in ((item.name, item.preset) for item in lectures()):
        if name == model_lecture():  # a real model's head: no preset, its lecture named with --model's
            assert f"with --model, {name}" in shown
        else:
            assert name in shown and f"{name}: {preset_name}" in shown, name


def test_a_scenario_the_multi_head_scene_cannot_draw_stops_before_rendering(monkeypatch, tmp_path, capsys) -> None:
    monkeypatch.setattr(bundle, "build_bundle", lambda *a, **k: pytest.fail("rendered"))
    argv = ["render", "--lecture", "multi-head", "--sentence", "a b c", "--heads", "3", "--d-v", "3"]
    assert main([*argv, "--out", str(tmp_path)]) == 2
    expected = "d_v: the multi-head scene joins at most 8 numbers (drawn heads × d_v), this scenario has 3 × 3"
    assert capsys.readouterr().err == f"attention-explainer: error: {expected}\n"


def _wide_output() -> Scenario:
    """Six output numbers such as −68.1651: wider than the frame, even with W_O by name only."""
    scenario = Scenario.from_sentence("a b c", heads=2, d_model=6, precision=4)
    return dataclasses.replace(scenario, w_out=scenario.w_out * 100)


@pytest.mark.parametrize(
    ("scenario", "message"),
    [
        (lambda: Scenario.from_sentence("a b c", heads=3, d_v=3), "d_v: the multi-head scene joins at most 8 numbers"),
        (lambda: Scenario.from_sentence("a b c", heads=6, d_v=3), "d_v: .* this scenario has 4 × 3"),
        (lambda: _wide_output(), "w_out: the output row of 6 numbers does not fit the frame"),
    ],
    ids=["nine joined numbers", "six heads, four drawn, twelve joined numbers", "wide output"],
)
def test_the_multi_head_scene_refuses_what_it_cannot_lay_out(scenario, message: str) -> None:
    with pytest.raises(ScenarioError, match=message):
        MultiHead.check_scenario(scenario())
    for fits in (preset("two-heads"), preset("dog-chased-ball"), Scenario.from_sentence("a b c", heads=4),
                 Scenario.from_sentence("a b c", heads=6), Scenario.from_sentence("a b c", heads=64)):
        assert MultiHead.check_scenario(fits) is fits


def test_multi_head_alone_shows_the_two_heads_preset(monkeypatch, tmp_path) -> None:
    for name in ("ATTENTION_SCENARIO", "ATTENTION_QUERY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)  # no manim.cfg here
    with tempconfig({**DRY_RUN_SETTINGS, "media_dir": str(tmp_path)}):
        scene = MultiHead()
        scene.setup()
    assert scene.scenario.n_heads == 2 and scene.scenario.title == preset("two-heads").title


@pytest.mark.parametrize("scene", [MULTI_HEAD], ids=["MultiHead"])
def test_one_head_is_drawn_as_one_head_and_said_so(scene_builds, scene) -> None:
    one = built(scene_builds, scene, "default")
    assert any("one head" in beat.caption for beat in one.beats)
    assert not any("concat" in beat.caption for beat in one.beats)
    two = built(scene_builds, scene, "two-heads")
    assert [beat.caption for beat in two.beats][-1].startswith("One more matrix, W_O")
    assert "the walkthrough" not in " ".join(str(getattr(s.mobject, "text", "")) for s in two.shown)  # W_O in full


@pytest.mark.parametrize("scene", [WHY_SCALE], ids=["WhyScale"])
def test_why_scale_shows_the_same_numbers_whatever_the_scenario(scene_builds, scene) -> None:
    default, other = built(scene_builds, scene, "default"), built(scene_builds, scene, "sixteen")
    assert [(s.fact, s.text) for s in default.shown] == [(s.fact, s.text) for s in other.shown]
    assert [beat.caption for beat in default.beats] == [beat.caption for beat in other.beats]
    assert {s.fact.source for s in default.shown} <= {"scaling", "scaling_whole", "scaling_tenths", "lecture"}



def test_why_heads_and_per_head_refuse_no_number_of_heads() -> None:
    """They draw the first heads and say how many there are: a scenario MultiHead refuses for its heads, they take
    (``--scenes WhyHeads,PerHead`` renders it)."""
    for heads in (1, 2, MAX_DRAWN + 1, 64):
        scenario = Scenario.from_sentence("a b c", heads=heads)
        assert WhyHeads.check_scenario(scenario) is scenario and PerHead.check_scenario(scenario) is scenario


@pytest.mark.parametrize("scene", [WHY_HEADS, PER_HEAD], ids=["WhyHeads", "PerHead"])
def test_more_heads_than_drawn_are_said_on_screen_and_in_a_caption(scene_builds, scene) -> None:
    build = built(scene_builds, scene, "five-heads-twelve")
    drawn = MAX_DRAWN if scene is WHY_HEADS else 2
    said = " ".join(beat.caption for beat in build.beats)
    shown = {item.text for item in build.shown if item.fact == Fact("scenario", "n_heads")}
    assert shown == {"5"}, "the number of heads is on screen"
    assert ("the first 4 are drawn" in said) if drawn == MAX_DRAWN else ("Heads 3 to 5 take the same steps" in said)
    heads = {int(item.fact.source[4:]) for item in build.shown if item.fact.source.startswith("head")}
    assert heads == set(range(1, drawn + 1))


def test_multi_head_draws_four_of_six_heads_and_says_the_rest(scene_builds) -> None:
    """Six heads: heads 1 to 4 drawn, "of 6" on screen and the rest said to be in the walkthrough; the joined row
    holds the drawn heads' z only, and W_O (whose rows would multiply z not shown) is named by its shape."""
    build = built(scene_builds, MULTI_HEAD, "six-heads-twelve")
    said = " ".join(beat.caption for beat in build.beats)
    assert f"The first {MULTI_HEAD_DRAWN} are drawn; the rest are in the walkthrough." in said
    assert {item.text for item in build.shown if item.fact == Fact("scenario", "n_heads")} == {"6"}
    heads = {item.fact.source.split("_")[0] for item in build.shown if item.fact.source.startswith("head")}
    assert heads == {f"head{h}" for h in range(1, MULTI_HEAD_DRAWN + 1)}
    d_v = 2
    joined = {item.fact.index[-1] for item in build.shown if item.fact.source == "multi"
              and item.fact.field == "concat"}
    assert joined == set(range(MULTI_HEAD_DRAWN * d_v))
    assert not any(item.fact.field == "w_out" for item in build.shown)
    assert {item.fact.field for item in build.shown if item.fact.source == "multi"} == {"concat", "output"}


@pytest.mark.parametrize("scene", [WHY_HEADS, PER_HEAD], ids=["WhyHeads", "PerHead"])
def test_one_head_is_one_reading_and_its_z_the_output(scene_builds, scene) -> None:
    build = built(scene_builds, scene, "default")
    last = build.beats[-1].caption
    assert "one head" in last.lower()
    assert not any(item.fact.source == "head2" for item in build.shown)


def test_per_head_refuses_only_a_table_that_cannot_fit_and_says_why() -> None:
    wide = dict(d_model=6, d_k=4, d_v=4, heads=2, precision=4, seed=3)
    sixteen = "Attention lets every token look back at all the others and choose what matters most here"
    with pytest.raises(ScenarioError, match=r"^precision: PerHead's table of 16 tokens \(d_k 4, d_v 4\)"):
        PerHead.check_scenario(Scenario.from_sentence(sixteen, **wide))
    eight = Scenario.from_sentence(" ".join(sixteen.split()[:8]), **wide)
    assert PerHead.check_scenario(eight) is eight
    assert WhyHeads.check_scenario(Scenario.from_sentence(sixteen, **wide)) is not None
