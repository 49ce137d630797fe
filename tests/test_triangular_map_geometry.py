"""TriangularMap's picture, beyond the shared layout checks: the triangle as drawn, measured on screen.

Each scenario is dry-run once; the checks look at the scene as it ends (the last frame is the summary):

* the mask's staircase covers every cell above the diagonal (a key after its query) and no other;
* where the cells carry numbers, the future's zeros are dimmer than the past's weights;
* a lit cell is a weight of the past: every cell above the diagonal is as dark as a zero;
* the last frame outlines the two rows the scene wrote out (the query's and the first token's; the first
  token's and the last's when the query is the first), and its summary stands clear of the grid, its
  title and its legend, inside the frame's safe area.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from geometry_helpers import inside_polygon
from reviewed_scenarios import REVIEWED
from scene_helpers import SCENARIOS, dry_render, family_box, with_scenario

from attention_math import Scenario
from scenes.kit.layout import BOTTOM, HALF_WIDTH, TOP
from scenes.masked.triangular_map import TriangularMap

pytestmark = pytest.mark.xdist_group("triangular-map-geometry")  # one worker builds each scene once

CASES = ("masked-dog", "two-first", "engineers")  # numbers in the cells; the first token asks; colours only


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Scenario, Any]]:
    done = {}
    for case in CASES:
        scenario = (REVIEWED.get(case) or SCENARIOS[case])()
        done[case] = scenario, dry_render(with_scenario(TriangularMap, scenario), Path(tmp_path_factory.mktemp(case)))
    return done


@pytest.mark.parametrize("case", CASES)
def test_the_staircase_covers_the_future_cells_only(built, case: str) -> None:
    scenario, scene = built[case]
    grid, n = scene.board.grid, scenario.n_tokens
    corners = np.array([v[:2] for v in scene.board.mask.get_vertices()])
    for i in range(n):
        for j in range(n):
            assert inside_polygon(grid.cell_center(i, j), corners) == (j > i), f"cell ({i + 1}, {j + 1})"


@pytest.mark.parametrize("case", CASES)
def test_the_future_is_dark_and_its_zeros_dim(built, case: str) -> None:
    scenario, scene = built[case]
    squares, n = scene.board.grid.squares, scenario.n_tokens
    lowest = min(square.get_fill_opacity() for row in squares for square in row)
    assert all(squares[i][j].get_fill_opacity() == pytest.approx(lowest) for i in range(n) for j in range(i + 1, n))
    numbers = scene.board.numbers
    if len(numbers):
        past = min(numbers[i][j].get_fill_opacity() for i in range(n) for j in range(i + 1))
        future = max((numbers[i][j].get_fill_opacity() for i in range(n) for j in range(i + 1, n)), default=0.0)
        assert future < past


@pytest.mark.parametrize("case", CASES)
def test_the_last_frame_marks_both_rows_and_its_summary_keeps_clear(built, case: str) -> None:
    scenario, scene = built[case]
    grid = scene.board.grid
    rows = (scenario.query, 0) if scenario.query else (0, scenario.n_tokens - 1)
    marked = sorted(min(range(scenario.n_tokens), key=lambda i: abs(grid.row_y(i) - mark.get_y()))
                    for mark in scene.marks)
    assert marked == sorted(rows)
    for mark, row in zip(sorted(scene.marks, key=lambda m: -m.get_y()), sorted(rows), strict=True):
        assert mark.get_y() == pytest.approx(grid.row_y(row), abs=0.02)
        assert mark.height < grid.cell_h + 0.2  # one row
    summary = family_box(scene.summary)
    assert -HALF_WIDTH <= summary[0] and summary[1] <= HALF_WIDTH and BOTTOM <= summary[2] and summary[3] <= TOP
    for other in (scene.board.grid, scene.board.title, scene.board.legend):
        box = family_box(other)
        assert box[1] <= summary[0] or box[3] <= summary[2] or summary[3] <= box[2], "the summary meets the grid"
