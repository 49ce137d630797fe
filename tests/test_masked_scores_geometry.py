"""MaskedScores (the masked lecture's second scene), looked at after every play of a dry run.

What the shared checks do not see: once the mask is on, every cell above the diagonal is grey (a
masked score is no colour of the grid's scale) and carries "−∞", never a number (where the cells
carry numbers; else one "−∞" is written across the mask, inside it); the staircase covers exactly
those cells; after the softmax they stay grey and read 0, the past cells take the weights' hue; the
row's box sits on the row the lecture follows, and its outline never strikes through the one number written
across the mask; where the cells carry no numbers, the weight written across the mask in the end says what it is
("masked: weight 0.00": the last frame is a slide), inside the mask; its table's "−∞" and 0 stand on the lines of
the keys after its token.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from frame_reading import fresh_scenario_for
from geometry_helpers import inside_polygon
from manim import Polygon
from manim.utils.color import ManimColor
from number_checks import masked_row
from scene_helpers import SCENARIOS, build_watched, family_box, on_screen
from scene_helpers import text_of as said_by

from attention_math import Scenario, format_number
from scenes.kit.mask import GREYED
from scenes.kit.palette import MUTED, WEIGHT

pytestmark = pytest.mark.xdist_group("masked-scores-geometry")

SCENE = ("scenes.masked.masked_scores", "MaskedScores")
# numbers in the cells (5 and 2 tokens), colours only (12 tokens; 5 at 4 decimals, the box's row through the block;
# 10 short words, their blocks of hidden cells short)
CASES = ("masked-dog", "two", "twelve", "five-at-four-decimals", "ten-short")
COLOURS_ONLY = ("twelve", "five-at-four-decimals", "ten-short")
CASE_SCENARIOS = {**SCENARIOS, "five-at-four-decimals": lambda: fresh_scenario_for(1120, "MaskedScores")}
MASK_STEP, SOFTMAX_STEP = "A query may not read", "Every row the same way"

Box = tuple[float, float, float, float]


@dataclass
class _Look:
    step: str
    fills: list[list[tuple[str, float]]]  # each cell's fill colour and opacity
    centres: list[list[np.ndarray]]
    cell_texts: list[list[str]] = field(default_factory=list)  # the numbers in the cells, when they carry them
    texts: list[tuple[str, Box]] = field(default_factory=list)  # every text on screen
    mask: Any = None
    box: Box | None = None  # the outline on the row followed


def _box(mob: Any) -> Box:
    found = family_box(mob)
    assert found is not None
    return found


class _Watch:
    def __init__(self) -> None:
        self.looks: list[_Look] = []

    def __call__(self, scene: Any) -> None:
        board = scene.board
        ids = {id(mob) for mob in on_screen(scene)}
        fills = [[(ManimColor(s.get_fill_color()).to_hex().upper(), float(s.get_fill_opacity())) for s in row]
                 for row in board.grid.squares]
        look = _Look(getattr(scene, "current_step", ""), fills,
                     [[s.get_center() for s in row] for row in board.grid.squares])
        if len(board.numbers):
            look.cell_texts = [[said_by(entry) for entry in row] for row in board.numbers]
        look.texts = [(said_by(mob), box) for mob in on_screen(scene) if type(mob).__name__ == "_PangoText"
                      and (box := family_box(mob)) is not None]
        look.mask = next((m.copy() for m in on_screen(scene) if type(m) is Polygon), None)
        box = getattr(scene, "box", None)
        look.box = _box(box) if box is not None and id(box) in ids else None
        self.looks.append(look)


@pytest.fixture(scope="module")
def watched(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Scenario, list[_Look]]]:
    done = {}
    for case in CASES:
        scenario, watch = CASE_SCENARIOS[case](), _Watch()
        build_watched(*SCENE, scenario, Path(tmp_path_factory.mktemp(case)), watch)
        done[case] = scenario, watch.looks
    return done


def _from(looks: list[_Look], step: str) -> list[_Look]:
    first = next(k for k, look in enumerate(looks) if look.step.startswith(step))
    return looks[first:]


@pytest.mark.parametrize("case", CASES)
def test_a_masked_cell_is_grey_and_reads_minus_infinity_never_a_number(watched, case: str) -> None:
    scenario, looks = watched[case]
    n = scenario.n_tokens
    masked = [look for look in _from(looks, MASK_STEP) if not look.step.startswith(SOFTMAX_STEP)]
    assert masked, "no play with the mask on"
    for look in masked:
        for i in range(n):
            for j in range(i + 1, n):
                assert look.fills[i][j] == (MUTED.upper(), GREYED), f"cell ({i + 1}, {j + 1}): {look.fills[i][j]}"
                if look.cell_texts:
                    assert look.cell_texts[i][j] == "−∞", f"cell ({i + 1}, {j + 1}) reads {look.cell_texts[i][j]!r}"
                    assert look.cell_texts[j][i] != "−∞", f"cell ({j + 1}, {i + 1}), in the past, reads −∞"
        if not look.cell_texts:  # colours only: one −∞ written across the mask, inside it
            marks = [(content, box) for content, box in look.texts if content == "−∞"
                     and inside_polygon(np.array([(box[0] + box[1]) / 2, (box[2] + box[3]) / 2]),
                                        look.mask.get_vertices())]
            assert len(marks) == 1, f"{look.step!r}: {len(marks)} '−∞' inside the mask"


@pytest.mark.parametrize("case", CASES)
def test_the_staircase_covers_exactly_the_cells_above_the_diagonal(watched, case: str) -> None:
    scenario, looks = watched[case]
    look, n = looks[-1], scenario.n_tokens
    assert look.mask is not None
    for i in range(n):
        for j in range(n):
            masked = inside_polygon(look.centres[i][j], look.mask.get_vertices())
            assert masked == (j > i), f"the mask and cell ({i + 1}, {j + 1})"


@pytest.mark.parametrize("case", CASES)
def test_after_the_softmax_the_future_stays_grey_at_zero_and_the_past_takes_the_weights_hue(
        watched, case: str) -> None:
    scenario, looks = watched[case]
    n, look = scenario.n_tokens, looks[-1]
    assert look.step.startswith(SOFTMAX_STEP)
    zero = format_number(0.0, scenario.precision)
    for i in range(n):
        for j in range(n):
            colour, _ = look.fills[i][j]
            assert colour == (WEIGHT.upper() if j <= i else MUTED.upper()), f"cell ({i + 1}, {j + 1}): {colour}"
            if look.cell_texts and j > i:
                assert look.cell_texts[i][j] == zero, f"cell ({i + 1}, {j + 1}) reads {look.cell_texts[i][j]!r}"
    assert not any(content == "−∞" for row in look.cell_texts for content in row)


@pytest.mark.parametrize("case", CASES)
def test_the_box_is_on_the_row_followed(watched, case: str) -> None:
    scenario, looks = watched[case]
    r, look = masked_row(scenario), looks[-1]
    assert look.box is not None
    row = [centre for centre in look.centres[r]]
    assert look.box[0] <= row[0][0] and row[-1][0] <= look.box[1]
    assert look.box[2] <= row[0][1] <= look.box[3]
    for other in (r - 1, r + 1):
        if 0 <= other < scenario.n_tokens:
            assert not look.box[2] <= look.centres[other][0][1] <= look.box[3], f"the box holds row {other + 1} too"


@pytest.mark.parametrize("case", CASES)
def test_the_box_never_strikes_through_the_number_written_across_the_mask(watched, case: str) -> None:
    _, looks = watched[case]
    marks = 0
    for look in _from(looks, MASK_STEP):
        if look.cell_texts or look.box is None or look.mask is None:
            continue
        for content, box in look.texts:
            if inside_polygon(np.array([(box[0] + box[1]) / 2, (box[2] + box[3]) / 2]), look.mask.get_vertices()):
                marks += 1
                assert box[3] <= look.box[2] or look.box[3] <= box[2], f"{look.step!r}: the box crosses {content!r}"
    if case in COLOURS_ONLY:
        assert marks, "no number written across the mask while the box is on"


@pytest.mark.parametrize("case", COLOURS_ONLY)
def test_the_weight_written_across_the_mask_says_what_it_is(watched, case: str) -> None:
    """Inside the mask, or where no block of hidden cells holds it legibly (5 tokens at 4 decimals), over the mask's
    top right corner, above the column labels."""
    scenario, looks = watched[case]
    look, said = looks[-1], f"masked: weight {format_number(0.0, scenario.precision)}"
    corners = look.mask.get_vertices()
    centres = [content for content, box in look.texts
               if inside_polygon(np.array([(box[0] + box[1]) / 2, (box[2] + box[3]) / 2]), corners)]
    assert all(content == said for content in centres), f"across the mask: {centres}"
    boxes = [box for content, box in look.texts if content == said]
    assert len(boxes) == 1, f"{len(boxes)} × {said!r}"
    box = boxes[0]
    if centres:
        assert all(inside_polygon(np.array([x, y]), corners) for x in box[:2] for y in box[2:]), "out of the mask"
    else:
        top, right = float(corners[:, 1].max()), float(corners[:, 0].max())
        labels = max(b[3] for content, b in look.texts if content.isdigit() and b[2] > top)  # the column labels'
        assert box[2] > labels and right - 0.1 <= box[1] <= right + 0.1, "not over the mask's corner"
