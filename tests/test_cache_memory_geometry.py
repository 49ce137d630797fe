"""CacheMemory's picture, beyond the shared layout checks, measured on the scene as it ends.

* each chart has one unit: a bar's length is its number (KiB a token, GiB for the long context) times that
  unit, and the two charts order the models alike;
* every number stands just beyond its own bar, in its model's row, left of the next chart and in the frame;
* each model's name and factors stand in its row, left of the charts; the formula under the rows.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from scene_helpers import SCENARIOS, dry_render, family_box, with_scenario

from attention_math import PUBLISHED_CONFIGS
from scenes.inference import CACHE_CONTEXT
from scenes.inference.cache_memory import CacheMemory
from scenes.kit.layout import BOTTOM, HALF_WIDTH

pytestmark = pytest.mark.xdist_group("cache-memory-geometry")  # one worker builds the scene once


@pytest.fixture(scope="module")
def scene(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return dry_render(with_scenario(CacheMemory, SCENARIOS["grouped-dog"]()), Path(tmp_path_factory.mktemp("memory")))


def _per_model() -> tuple[list[float], list[float]]:
    """KiB a token and GiB for the long context, counted here: 2 × layers × kv heads × d_head × bytes."""
    per_token = [2 * c.layers * c.kv_heads * c.d_head * c.bytes_per_number for c in PUBLISHED_CONFIGS]
    return [b / 1024 for b in per_token], [b * CACHE_CONTEXT / 2**30 for b in per_token]


def test_each_chart_has_one_unit(scene: Any) -> None:
    r = scene.chart
    for chart, sizes in zip((r.per_token, r.context), _per_model(), strict=True):
        unit = chart.bars[0].width / sizes[0]
        for k, (bar, size) in enumerate(zip(chart.bars, sizes, strict=True)):
            assert bar.width == pytest.approx(max(size * unit, 0.01), rel=1e-3), PUBLISHED_CONFIGS[k].name
    order = [sorted(range(len(bars)), key=lambda k: bars[k].width) for bars in (r.per_token.bars, r.context.bars)]
    assert order[0] == order[1]


def test_each_number_stands_beyond_its_bar_in_its_row(scene: Any) -> None:
    r = scene.chart
    for chart, numbers in zip((r.per_token, r.context), r.numbers, strict=True):
        for k, (bar, mob) in enumerate(zip(chart.bars, numbers, strict=True)):
            assert 0 < mob.get_left()[0] - bar.get_right()[0] < 0.3, PUBLISHED_CONFIGS[k].name
            assert abs(mob.get_y() - bar.get_y()) < bar.height / 2, PUBLISHED_CONFIGS[k].name
    assert max(mob.get_right()[0] for mob in r.numbers[0]) < r.context.zero_line.get_x()
    assert max(mob.get_right()[0] for mob in r.numbers[1]) <= HALF_WIDTH + 0.01


def test_names_and_factors_stand_in_their_rows_left_of_the_charts(scene: Any) -> None:
    r = scene.chart
    for k, (name, factors, bar) in enumerate(zip(r.names, r.factors, r.per_token.bars, strict=True)):
        both = family_box(name), family_box(factors)
        assert max(box[1] for box in both) < r.per_token.zero_line.get_x(), PUBLISHED_CONFIGS[k].name
        assert both[1][2] < bar.get_y() < both[0][3], PUBLISHED_CONFIGS[k].name  # the bar between name and factors
    left, right, bottom, top = family_box(r.titles[2])  # x from left to right, then y from bottom to top
    assert top < min(bar.get_bottom()[1] for bar in r.per_token.bars) and bottom >= BOTTOM
    assert -HALF_WIDTH <= left and right <= HALF_WIDTH
