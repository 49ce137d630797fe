"""GroupedHeads' picture, beyond the shared layout checks, measured on the scene as it ends.

* every query head is drawn in its key/value head's colour, and its line runs from it to that key/value
  head (query head i to key/value head i // (h/g)), never to another;
* the box round each head's largest weight holds that number alone (not a neighbour's);
* the diagram, the output and the summary stay left of the weights' table, in the safe area;
* a decoder's layer (SmolLM2): the table is the chosen head's group (head h reads key/value head h // 3, not always
  the first), a box round the chosen head's column alone, the keys up to the query and a line saying the rest is
  masked; the output's row its first entries of 576, then "…".
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from number_checks import derive_all
from scene_helpers import DECODER_SCENARIOS, SCENARIOS, dry_render, family_box, with_scenario

from attention_math import Scenario
from scenes.inference.grouped_heads import GroupedHeads
from scenes.kit.layout import BOTTOM, HALF_WIDTH, TOP

pytestmark = pytest.mark.xdist_group("grouped-heads-geometry")  # one worker builds each scene once

CASES = ("grouped-dog", "multi-query-sixteen", *DECODER_SCENARIOS)  # 2 query heads per key/value head; 4 on one,
# 16 tokens; SmolLM2's layer 3 on 6 tokens, head 4 (group 2), and layer 30 on 16, head 9 (group 3)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Scenario, Any]]:
    done = {}
    for case in CASES:
        scenario = SCENARIOS[case]()
        done[case] = scenario, dry_render(with_scenario(GroupedHeads, scenario), Path(tmp_path_factory.mktemp(case)))
    return done


def _kv_head(scenario: Scenario, i: int) -> int:
    """The key/value head query head i shares: the first head whose W_K and W_V are its own, counted by groups; of
    SmolLM2, i // 3 (9 query heads on 3 key/value heads, config.json's num_key_value_heads)."""
    if scenario.model is not None:
        return i // 3
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
    heads, kv_heads = (9, 3) if scenario.model is not None else (scenario.n_heads, scene.grouped.n_kv_heads)
    assert len(d.queries) == heads and len(d.kv) == kv_heads
    for i, (chip, link) in enumerate(zip(d.queries, d.links, strict=True)):
        j = _kv_head(scenario, i)
        assert chip[0].get_stroke_color() == d.kv[j][0].get_stroke_color(), f"head {i + 1}"
        assert np.linalg.norm(link.get_start()[:2] - chip.get_bottom()[:2]) < 0.1, f"head {i + 1}"
        ends = [np.linalg.norm(link.get_end()[:2] - kv.get_top()[:2]) for kv in d.kv]
        assert int(np.argmin(ends)) == j and ends[j] < 0.1, f"head {i + 1}"


@pytest.mark.parametrize("case", CASES)
def test_each_top_box_holds_its_weight_alone(built, case: str) -> None:
    scenario, scene = built[case]
    t, q, derived = scene.table, scenario.query, derive_all(scenario)
    for i, box, column in zip(scene.drawn, t.tops, t.numbers, strict=True):
        top = int(np.argmax(derived[f"head{i + 1}"][0].weights[q]))  # recomputed by the number checks
        left, right, bottom, up = family_box(box)  # x from left to right, y from bottom to up
        for j, number in enumerate(column):
            x, y = number.get_center()[:2]
            inside = left < x < right and bottom < y < up
            assert inside == (j == top), f"head {i + 1}, key {j + 1}"


@pytest.mark.parametrize("case", CASES)
def test_the_left_column_stays_clear_of_the_table(built, case: str) -> None:
    _, scene = built[case]
    table_left = min(family_box(mob)[0] for mob in (*scene.table.tokens, scene.table.title))
    for part in (scene.diagram.queries, scene.diagram.kv, scene.diagram.titles, scene.output, scene.summary):
        left, right, bottom, top = family_box(part)  # a box is x from left to right, then y from bottom to top
        assert right < table_left and left >= -HALF_WIDTH - 0.01 and bottom >= BOTTOM and top <= TOP
    assert family_box(scene.output)[3] < family_box(scene.diagram.titles)[2]  # under the cache's line


@pytest.mark.parametrize("case", DECODER_SCENARIOS)
def test_a_decoders_table_is_the_chosen_heads_group_and_marks_it(built, case: str) -> None:
    scenario, scene = built[case]
    assert scenario.model is not None
    chosen = scenario.model.head - 1
    group = tuple(range(chosen // 3 * 3, chosen // 3 * 3 + 3))
    t = scene.table
    assert scene.drawn == group and [head.text for head in t.heads] == [f"head{i + 1}" for i in group]
    assert chosen // 3 > 0  # not the first group: the table follows the chosen head
    assert t.title[0].text.endswith(f"K/V{chosen // 3 + 1}")  # Pango's text leaves the spaces out
    (box,) = t.chosen
    left, right, bottom, top = family_box(box)
    for i, header, column in zip(group, t.heads, t.numbers, strict=True):
        for part in (header, *column):
            x, y = part.get_center()[:2]
            assert (left < x < right and bottom < y < top) == (i == chosen), f"head {i + 1}"


@pytest.mark.parametrize("case", DECODER_SCENARIOS)
def test_a_decoders_rows_end_at_the_query_and_its_output_row_is_cut(built, case: str) -> None:
    scenario, scene = built[case]
    q, n = scenario.query, scenario.n_tokens
    t = scene.table
    assert all(len(column) == q + 1 for column in t.numbers) and len(t.tokens) == q + 1
    assert (len(t.note) == 1) == (q < n - 1)
    if t.note:
        assert family_box(t.note)[3] < min(family_box(label)[2] for label in t.tokens)  # under the last row
    row = scene.output[1].text
    assert row.endswith("…)") and row.count(",") == 4  # four entries of 576, then "…"
