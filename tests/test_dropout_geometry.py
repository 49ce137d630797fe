"""AttentionDropout's picture, beyond the shared layout checks: the draw as drawn, measured on screen.

Each scenario is dry-run once; the checks look at the scene as it ends (the last frame is the summary):

* an outline stands on exactly the weights of the triangle the draw drops — replayed here from the lecture's
  p and seed (``number_checks``), not from the scene — and on no kept or masked one;
* a dropped weight's cell is as dark as a zero (the legend's low end), a kept weight's brighter;
* in the query's row written beside the grid, the dropped weights (and only they) take the outline's colour;
* the outline round the query's row holds that row's cells and no other's;
* the setting's lines stand under the panel, clear of the grid, its title and its legend;
* the rows stand a line of their labels' type apart: no row label's descender meets the next one's ascender (16
  rows of SmolLM2's tokens, colours only: "14 lazy" over "15 dogs");
* the column of row sums has its head ("row sum") over it, left-aligned with it, on the line of the row's heads,
  clear of the keys' column, inside the safe area.
"""

from __future__ import annotations

from itertools import pairwise
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from number_checks import DROPOUT_P, DROPOUT_SEED, derive_all
from reviewed_scenarios import REVIEWED
from scene_helpers import SCENARIOS, dry_render, family_box, on_screen, text_of, with_scenario

from attention_math import Scenario
from scenes.kit.heatmap import text_height
from scenes.kit.layout import HALF_WIDTH, TOP
from scenes.kit.palette import HIGHLIGHT
from scenes.kit.text import SMALLEST_SIZE
from scenes.masked.dropout import AttentionDropout

pytestmark = pytest.mark.xdist_group("dropout-geometry")  # one worker builds each scene once

# numbers in the cells; 2 tokens; 15, colours only; SmolLM2's 16 tokens, colours only, the tallest board
CASES = ("masked-dog", "two-first", "engineers", "smollm2-sixteen")

Box = tuple[float, float, float, float]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Scenario, Any]]:
    done = {}
    for case in CASES:
        scenario = (REVIEWED.get(case) or SCENARIOS[case])()
        done[case] = scenario, dry_render(with_scenario(AttentionDropout, scenario),
                                          Path(tmp_path_factory.mktemp(case)))
    return done


def _dropped(scenario: Scenario) -> set[tuple[int, int]]:
    """The triangle's weights the lecture's draw drops: NumPy's generator replayed, one number per weight."""
    n = scenario.n_tokens
    draw = np.random.default_rng(DROPOUT_SEED).random((n, n))
    return {(i, j) for i in range(n) for j in range(i + 1) if draw[i, j] < DROPOUT_P}


def _apart(a: Box, b: Box) -> bool:
    return a[1] <= b[0] or b[1] <= a[0] or a[3] <= b[2] or b[3] <= a[2]


@pytest.mark.parametrize("case", CASES)
def test_outlines_stand_on_exactly_the_dropped_weights(built, case: str) -> None:
    scenario, scene = built[case]
    grid = scene.board.grid
    n = scenario.n_tokens
    marked = set()
    for outline in scene.board.outlines:
        cell = min(((i, j) for i in range(n) for j in range(n)),
                   key=lambda c: float(np.linalg.norm(grid.cell_center(*c) - outline.get_center())))
        assert np.linalg.norm(grid.cell_center(*cell) - outline.get_center()) < 0.01
        marked.add(cell)
    assert marked == _dropped(scenario), f"outlined {sorted(marked)}, dropped {sorted(_dropped(scenario))}"
    assert marked, "the draw drops nothing: the scene says it does"


@pytest.mark.parametrize("case", CASES)
def test_a_dropped_cell_is_as_dark_as_a_zero(built, case: str) -> None:
    scenario, scene = built[case]
    squares, dropped = scene.board.grid.squares, _dropped(scenario)
    lowest = min(square.get_fill_opacity() for row in squares for square in row)
    causal, _ = derive_all(scenario)["causal"]  # a model's head's too
    for i, row in enumerate(squares):
        for j, square in enumerate(row):
            if (i, j) in dropped:
                assert square.get_fill_opacity() == pytest.approx(lowest), f"dropped ({i + 1}, {j + 1}) lit"
            elif j <= i and causal.weights[i, j] > 0.05:
                assert square.get_fill_opacity() > lowest + 0.01, f"kept ({i + 1}, {j + 1}) as dark as a zero"


@pytest.mark.parametrize("case", CASES)
def test_the_query_row_shows_its_dropped_weights_in_the_outline_colour(built, case: str) -> None:
    scenario, scene = built[case]
    q = scenario.query
    table, box = scene.board.row
    dropout_column = table[3]
    dropped = {j for i, j in _dropped(scenario) if i == q}
    coloured = {j for j, entry in enumerate(dropout_column) if entry.get_color().to_hex().upper() == HIGHLIGHT.upper()}
    assert coloured == dropped
    cells = [family_box(square) for square in scene.board.grid.row(q)]
    outline = family_box(box)
    assert all(outline[0] <= c[0] and c[1] <= outline[1] and outline[2] <= c[2] and c[3] <= outline[3]
               for c in cells)
    for i in (q - 1, q + 1):  # and no neighbour's
        if 0 <= i < scenario.n_tokens:
            centre = scene.board.grid.cell_center(i, 0)
            assert not outline[2] < centre[1] < outline[3]


@pytest.mark.parametrize("case", CASES)
def test_the_setting_stands_under_the_panel_clear_of_the_grid(built, case: str) -> None:
    _, scene = built[case]
    board = scene.board
    grid_box = family_box(board.grid)
    for line in scene.setting:
        box = family_box(line)
        assert box[0] >= board.right - 0.01, "the setting starts left of the panel"
        for other in (grid_box, family_box(board.titles[1]), family_box(board.legend)):
            assert _apart(box, other), f"{line} meets the grid, its title or its legend"


@pytest.mark.parametrize("case", CASES)
def test_the_row_sums_have_a_head(built, case: str) -> None:
    _, scene = built[case]
    heads = [family_box(mob) for mob in on_screen(scene) if type(mob).__name__ == "_PangoText"
             and text_of(mob) == "row sum"]
    assert len(heads) == 1, f"{len(heads)} heads 'row sum' on screen"
    head, sums = heads[0], family_box(scene.board.sums)
    table, _ = scene.board.row
    masked, keys = family_box(table[0][0]), family_box(table[1])
    assert head[0] == pytest.approx(sums[0], abs=0.02), "not left-aligned with the sums"
    assert head[2] > sums[3] and head[2] == pytest.approx(masked[2], abs=0.02), "not on the line of the row's heads"
    assert head[1] < keys[0], "it reaches the keys' column"
    assert -HALF_WIDTH <= head[0] and head[1] <= HALF_WIDTH and head[3] <= TOP


@pytest.mark.parametrize("case", CASES)
def test_the_rows_stand_a_line_of_their_labels_apart(built, case: str) -> None:
    _, scene = built[case]
    grid = scene.board.grid
    if not scene.board.fit.numbers:  # the labels at the floor, "j token"
        assert grid.cell_h >= text_height(SMALLEST_SIZE), f"rows {grid.cell_h:.3f} apart"
    labels = [family_box(label) for label in grid.row_labels]
    for k, (upper, lower) in enumerate(pairwise(labels)):
        # under a pixel at 1080p (1/135 of a unit): an "l" stands a hair over a line's "A"
        assert lower[3] - upper[2] < 0.005, f"row labels {k + 1} and {k + 2} overlap by {lower[3] - upper[2]:.3f}"
