"""LearnedPipeline's picture, beyond the shared layout checks: the table as drawn, measured as the scene ends.

* every bar starts on one zero line, and every number of a key stands level with that key's label;
* the outline at the end goes round the row of the key with the largest weight (found here from the
  scenario's trace) and reaches no other row;
* the closing words stand clear of the table, inside the safe area.

Built with the lecture's preset (4 tokens: the table over the words), the weights of another training run
asking about the first "it", and 12 tokens (the query's line and the words beside the table).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scene_helpers import SCENARIOS, dry_render, family_box, with_scenario

from attention_math import Scenario
from scenes.kit.layout import BOTTOM, HALF_WIDTH, TOP
from scenes.learned.learned_pipeline import LearnedPipeline

pytestmark = pytest.mark.xdist_group("learned-pipeline-geometry")  # one worker builds each scene once

CASES = ("learned", "learned-other", "twelve")


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Scenario, Any]]:
    done = {}
    for case in CASES:
        scenario = SCENARIOS[case]()
        done[case] = scenario, dry_render(with_scenario(LearnedPipeline, scenario), Path(tmp_path_factory.mktemp(case)))
    return done


@pytest.mark.parametrize("case", CASES)
def test_bars_share_a_zero_line_and_numbers_stand_level_with_their_key(built, case: str) -> None:
    _, scene = built[case]
    lefts = [bar.get_left()[0] for bar in scene.chart.bars]
    assert max(lefts) - min(lefts) < 0.02
    for j, key in enumerate(scene.keys):
        numbers = [column[1][j] for column in scene.columns_made] + [scene.chart.bars[j], scene.chart.placed[j]]
        for number in numbers:
            assert abs(number.get_y() - key.get_y()) < scene.pitch / 3, (j, getattr(number, "text", "bar"))


@pytest.mark.parametrize("case", CASES)
def test_the_outline_goes_round_the_top_keys_row_alone(built, case: str) -> None:
    scenario, scene = built[case]
    top = int(np.argmax(scenario.trace().weights[scenario.query]))
    mark = scene.summary[0]
    low, high = mark.get_bottom()[1], mark.get_top()[1]
    assert low < scene.keys[top].get_y() < high
    assert all(not low < key.get_y() < high for j, key in enumerate(scene.keys) if j != top)


@pytest.mark.parametrize("case", CASES)
def test_the_closing_words_stand_clear_of_the_table(built, case: str) -> None:
    _, scene = built[case]
    words = family_box(scene.summary[1])
    for part in (scene.keys, *scene.columns_made, scene.chart):
        box = family_box(part)
        assert words[3] < box[2] or words[2] > box[3] or words[0] > box[1] or words[1] < box[0]
    assert -HALF_WIDTH - 0.01 <= words[0] and words[1] <= HALF_WIDTH + 0.01
    assert BOTTOM <= words[2] and words[3] <= TOP
