"""CacheSavings' picture, beyond the shared layout checks, measured on the scene as it ends.

* the two charts share one scale: a count is as long a bar with the cache as without one (step 1's two
  bars, equal counts, are equally long), and each bar's length is its count times that one unit;
* every bar's count stands just beyond its bar's end, in its step's row, left of the next chart;
* the totals and the formula stand under the charts, inside the safe area.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from scene_helpers import SCENARIOS, dry_render, family_box, with_scenario

from attention_math import Scenario, kv_cache_generation
from scenes.inference.cache_savings import CacheSavings
from scenes.kit.layout import BOTTOM, HALF_WIDTH

pytestmark = pytest.mark.xdist_group("cache-savings-geometry")  # one worker builds each scene once

CASES = ("grouped-dog", "sixteen")  # the preset's 5 tokens; 16 tokens, the longest counts


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Scenario, Any]]:
    done = {}
    for case in CASES:
        scenario = SCENARIOS[case]()
        done[case] = scenario, dry_render(with_scenario(CacheSavings, scenario), Path(tmp_path_factory.mktemp(case)))
    return done


def _counts(scenario: Scenario) -> tuple[list[int], list[int]]:
    one = scenario.heads[0]
    steps = kv_cache_generation(one.embeddings, one.w_query, one.w_key, one.w_value).steps
    return [s.multiplies_with_cache for s in steps], [s.multiplies_without_cache for s in steps]


@pytest.mark.parametrize("case", CASES)
def test_both_charts_share_one_scale(built, case: str) -> None:
    scenario, scene = built[case]
    charts = scene.charts
    unit = charts.again.bars[-1].width / _counts(scenario)[1][-1]
    for chart, counts in zip((charts.cached, charts.again), _counts(scenario), strict=True):
        for t, (bar, count) in enumerate(zip(chart.bars, counts, strict=True)):
            assert bar.width == pytest.approx(count * unit, rel=1e-3), f"step {t + 1}"
    assert charts.cached.bars[0].width == pytest.approx(charts.again.bars[0].width, rel=1e-6)


@pytest.mark.parametrize("case", CASES)
def test_each_count_stands_beyond_its_bar_in_its_row(built, case: str) -> None:
    _, scene = built[case]
    charts = scene.charts
    for chart, numbers in zip((charts.cached, charts.again), charts.numbers, strict=True):
        for t, (bar, mob) in enumerate(zip(chart.bars, numbers, strict=True)):
            assert 0 < mob.get_left()[0] - bar.get_right()[0] < 0.3, f"step {t + 1}"
            assert abs(mob.get_y() - bar.get_y()) < bar.height / 2, f"step {t + 1}"
    for mob in charts.numbers[0]:
        assert mob.get_right()[0] < charts.again.zero_line.get_x(), "a count over the other chart"
    assert max(mob.get_right()[0] for mob in charts.numbers[1]) <= HALF_WIDTH + 0.01


@pytest.mark.parametrize("case", CASES)
def test_the_totals_stand_under_the_charts(built, case: str) -> None:
    _, scene = built[case]
    left, bottom, right, top = family_box(scene.summary)
    lowest = min(bar.get_bottom()[1] for bar in scene.charts.again.bars)
    assert top < lowest and bottom >= BOTTOM and -HALF_WIDTH <= left and right <= HALF_WIDTH
