"""GroupedHeads' picture, beyond the shared layout checks, measured on the scene as it ends.

* every query head is drawn in its key/value head's colour, and its line runs from it to that key/value
  head (query head i to key/value head i // (h/g)), never to another;
* the box round each head's largest weight holds that number alone (not a neighbour's);
* the diagram, the output and the summary stay left of the weights' table, in the safe area.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scene_helpers import SCENARIOS, dry_render, family_box, with_scenario

from attention_math import Scenario
from scenes.inference.grouped_heads import GroupedHeads
from scenes.kit.layout import BOTTOM, HALF_WIDTH, TOP

pytestmark = pytest.mark.xdist_group("grouped-heads-geometry")  # one worker builds each scene once

CASES = ("grouped-dog", "multi-query-sixteen")  # 2 query heads per key/value head; 4 on one, 16 tokens


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Scenario, Any]]:
    done = {}
    for case in CASES:
        scenario = SCENARIOS[case]()
        done[case] = scenario, dry_render(with_scenario(GroupedHeads, scenario), Path(tmp_path_factory.mktemp(case)))
    return done


def _kv_head(scenario: Scenario, i: int) -> int:
    """The key/value head query head i shares: the first head whose W_K and W_V are its own, counted by groups."""
    heads = scenario.heads
    distinct: list[int] = []
    for k, head in enumerate(heads):
        if not any(np.array_equal(head.w_key, heads[d].w_key) and np.array_equal(head.w_value, heads[d].w_value)
                   for d in distinct):
            distinct.append(k)
        if k == i:
            return sum(1 for d in distinct if d <= i) - 1
    raise AssertionError(i)


@pytest.mark.parametrize("case", CASES)
def test_each_query_head_wears_and_joins_its_key_value_head(built, case: str) -> None:
    scenario, scene = built[case]
    d = scene.diagram
    assert len(d.queries) == scenario.n_heads and len(d.kv) == scene.grouped.n_kv_heads
    for i, (chip, link) in enumerate(zip(d.queries, d.links, strict=True)):
        j = _kv_head(scenario, i)
        assert chip[0].get_stroke_color() == d.kv[j][0].get_stroke_color(), f"head {i + 1}"
        assert np.linalg.norm(link.get_start()[:2] - chip.get_bottom()[:2]) < 0.1, f"head {i + 1}"
        ends = [np.linalg.norm(link.get_end()[:2] - kv.get_top()[:2]) for kv in d.kv]
        assert int(np.argmin(ends)) == j and ends[j] < 0.1, f"head {i + 1}"


@pytest.mark.parametrize("case", CASES)
def test_each_top_box_holds_its_weight_alone(built, case: str) -> None:
    scenario, scene = built[case]
    t, q = scene.table, scenario.query
    for k, (box, column) in enumerate(zip(t.tops, t.numbers, strict=True)):
        top = int(np.argmax(scene.grouped.heads[k].weights[q]))
        left, right, bottom, up = family_box(box)  # x from left to right, y from bottom to up
        for j, number in enumerate(column):
            x, y = number.get_center()[:2]
            inside = left < x < right and bottom < y < up
            assert inside == (j == top), f"head {k + 1}, key {j + 1}"


@pytest.mark.parametrize("case", CASES)
def test_the_left_column_stays_clear_of_the_table(built, case: str) -> None:
    _, scene = built[case]
    table_left = min(family_box(mob)[0] for mob in (*scene.table.tokens, scene.table.title))
    for part in (scene.diagram.queries, scene.diagram.kv, scene.diagram.titles, scene.output, scene.summary):
        left, right, bottom, top = family_box(part)  # a box is x from left to right, then y from bottom to top
        assert right < table_left and left >= -HALF_WIDTH - 0.01 and bottom >= BOTTOM and top <= TOP
    assert family_box(scene.output)[3] < family_box(scene.diagram.titles)[2]  # under the cache's line
