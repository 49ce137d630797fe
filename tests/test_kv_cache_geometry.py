"""KVCacheSteps' picture, beyond the shared layout checks, measured on the scene as it ends.

* every cached row is on screen at the end; the last step's rows (the one computed) at full strength,
  every earlier row greyed (reused from the cache, not computed again);
* the last step's weights, one per cached key, each in its key's row and between the K and V caches;
* the step's panel and the summary stand right of the V cache, clear of it, inside the safe area.
"""

from __future__ import annotations

import dataclasses
import importlib
from pathlib import Path
from typing import Any

import pytest
from scene_helpers import DECODER_SCENARIOS, SCENARIOS, build_scene, dry_render, family_box, with_scenario

from attention_math import Scenario, smollm
from scenes.inference import new_tokens
from scenes.inference.kv_cache import KVCacheSteps
from scenes.kit.layout import BOTTOM, HALF_WIDTH, TOP

pytestmark = pytest.mark.xdist_group("kv-cache-geometry")  # one worker builds each scene once

CASES = ("grouped-dog", "two-heads-sixteen", *DECODER_SCENARIOS)  # the preset's 5 tokens; 16 tokens, d_v 3; SmolLM2's
# own runs: 6 tokens and the 5 it writes (10 rows), 16 and 2 (17 rows)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Scenario, Any]]:
    done = {}
    for case in CASES:
        scenario = SCENARIOS[case]()
        done[case] = scenario, dry_render(with_scenario(KVCacheSteps, scenario), Path(tmp_path_factory.mktemp(case)))
    return done


@pytest.mark.parametrize("case", CASES)
def test_the_last_row_is_computed_and_the_earlier_rows_are_greyed(built, case: str) -> None:
    _, scene = built[case]
    board, last = scene.board, scene.story.n - 1
    for grid in (board.keys, board.values):
        for i, row in enumerate(grid.cells):
            opacities = {round(float(mob.get_fill_opacity()), 2) for mob in row}
            if i == last:
                assert opacities == {1.0}, f"row {i + 1}: {opacities}"
            else:
                assert all(0.2 < o < 0.8 for o in opacities), f"row {i + 1} is not greyed: {opacities}"


@pytest.mark.parametrize("case", CASES)
def test_each_weight_stands_in_its_keys_row_between_the_caches(built, case: str) -> None:
    _, scene = built[case]
    board = scene.board
    weights = board.weights[-1]
    assert len(weights) == scene.story.n  # the last token reads every cached key
    pitch = board.keys.cells[1][0].get_y() - board.keys.cells[0][0].get_y() if scene.story.n > 1 else -1.0
    for j, mob in enumerate(weights):
        assert abs(mob.get_y() - board.keys.cells[j][0].get_y()) < abs(pitch) / 3, f"weight of key {j + 1}"
        assert board.keys.brackets.get_right()[0] < mob.get_left()[0], f"weight of key {j + 1} over K"
        assert mob.get_right()[0] < board.values.brackets.get_left()[0], f"weight of key {j + 1} over V"


@pytest.mark.parametrize("case", CASES)
def test_the_panel_and_summary_stand_right_of_the_caches(built, case: str) -> None:
    _, scene = built[case]
    right = scene.board.values.brackets.get_right()[0]
    for name, mob in (("panel", scene.panel), ("summary", scene.summary)):
        left, bottom, far, top = family_box(mob)
        assert left > right + 0.2, f"{name} over the V cache"
        assert far <= HALF_WIDTH + 0.01 and bottom >= BOTTOM and top <= TOP + 0.3, f"{name} outside the safe area"
    if scene.story.cut:  # a real run's summary takes the panel's place
        assert scene.panel not in scene.mobjects and scene.summary in scene.mobjects
    else:
        assert family_box(scene.summary)[3] < family_box(scene.panel)[1], "the summary over the panel"


@pytest.mark.parametrize("case", DECODER_SCENARIOS)
def test_a_real_runs_rows_are_its_prompt_then_what_it_wrote(built, case: str) -> None:
    """The cache's rows: the prompt's tokens, then each token the model wrote but the last (greedy, checked against
    a recompute without a cache in tests/test_smollm.py); the panel and the last frame say what it wrote."""
    scenario, scene = built[case]
    assert scenario.model is not None
    found = smollm.generate(scenario.model.sentence, max_new_tokens=new_tokens(scenario.n_tokens))
    written = [smollm.display_token(token) for token in found.new_tokens]
    rows = [label.text for label in scene.board.keys.row_labels]
    assert [row.replace(" ", "") for row in rows] == [
        token.replace(" ", "") for token in (*scenario.tokens, *written[:-1])]
    shown = scene.summary[-1][-1].text.replace(" ", "")  # the continuation, cut short at most
    whole = "".join(smollm.display_token(t) if not t.strip() else t for t in found.new_tokens).replace(" ", "")
    assert whole.startswith(shown.rstrip("…")) and len(shown) >= min(len(whole), 6)


def test_a_run_the_model_ends_at_once_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A model that chooses a control token right after the prompt writes nothing: the first pass is the whole
    story, its panel and the last frame say the text ends (a real run cut to its prompt stands in for one)."""
    module = importlib.import_module("scenes.inference.kv_cache")
    story = module._story

    def ended(scenario: Scenario) -> Any:
        told = story(scenario)
        prompt = told.prefill
        return dataclasses.replace(told, tokens=told.tokens[:prompt], steps=told.steps[:prompt],
                                   written=(None,) * prompt, text="")

    monkeypatch.setattr(module, "_story", ended)
    build = build_scene(KVCacheSteps, SCENARIOS["smollm2-six"](), tmp_path)
    assert build.error is None, build.error
    assert "and the model ends its text there." in build.beats[0].caption
    assert {"then it stops", "nothing: its text ends"} <= build.texts
    problems = [p for play in build.plays for p in (*play.outside, *play.overlaps, *play.small, *play.out_of_place)]
    assert not problems, problems
