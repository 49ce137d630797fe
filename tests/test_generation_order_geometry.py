"""GenerationOrder (the masked lecture's first scene), looked at after every play of a dry run.

What the shared checks do not see: every arrow points back (from the token being written to itself or
an earlier token, never forward), lands on a token's box and stays under the header; the token being
written reads exactly itself and the tokens before it; the line under the row names the reader's last
key; in the grid of who reads whom the past cells are filled and the future ones not, and the mask's
staircase covers exactly the future cells.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest
from geometry_helpers import inside_polygon, watch_cases
from manim import CurvedArrow, Polygon
from number_checks import masked_row
from scene_helpers import is_visible, on_screen, outermost_texts
from scene_helpers import text_of as said_by

from attention_math import Scenario
from scenes.kit.layout import TOP

pytestmark = pytest.mark.xdist_group("generation-order-geometry")

SCENE = ("scenes.masked.generation_order", "GenerationOrder")
CASES = ("masked-dog", "two", "sixteen")


@dataclass
class _Look:
    step: str
    arrows: list[tuple[np.ndarray, np.ndarray, float]]  # start, end, the highest point
    boxes: list[tuple[float, float, float]]  # each token's box (written or not yet): left, right, top
    texts: list[str]
    filled: list[list[float]] = field(default_factory=list)  # the grid's cells' fill opacity, once it is up
    centres: list[list[np.ndarray]] = field(default_factory=list)  # and their centres
    mask: Any = None  # the staircase, when on screen


class _Watch:
    def __init__(self) -> None:
        self.looks: list[_Look] = []

    def __call__(self, scene: Any) -> None:
        mobs = on_screen(scene)
        ids = {id(mob) for mob in mobs}
        arrows = [(np.asarray(a.get_start()), np.asarray(a.get_end()), float(a.get_top()[1]))
                  for a in mobs if isinstance(a, CurvedArrow) and is_visible(a)]
        boxes = [(float(b.get_left()[0]), float(b.get_right()[0]), float(b.get_top()[1])) for b in scene.row.boxes]
        texts = [said_by(mob) for mob in outermost_texts(scene.mobjects)
                 if any(is_visible(part) for part in mob.get_family())]
        look = _Look(getattr(scene, "current_step", ""), arrows, boxes, texts)
        board = getattr(scene, "board", None)
        if board is not None and any(id(s) in ids for row in board.grid.squares for s in row):
            look.filled = [[float(s.get_fill_opacity()) for s in squares] for squares in board.grid.squares]
            look.centres = [[s.get_center() for s in squares] for squares in board.grid.squares]
            look.mask = next((m.copy() for m in mobs if type(m) is Polygon), None)
        self.looks.append(look)


@pytest.fixture(scope="module")
def watched(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Scenario, list[_Look]]]:
    return watch_cases(SCENE, CASES, tmp_path_factory, _Watch)


@pytest.mark.parametrize("case", CASES)
def test_every_arrow_points_back_onto_a_token_and_stays_under_the_header(watched, case: str) -> None:
    _, looks = watched[case]
    assert any(look.arrows for look in looks), "no arrow drawn"
    for k, look in enumerate(looks):
        for start, end, top in look.arrows:
            assert end[0] <= start[0] + 1e-6, f"play {k + 1} ({look.step!r}): an arrow points forward"
            assert top <= TOP, f"play {k + 1}: an arrow reaches into the header, y {top:.2f}"
            assert any(left - 0.05 <= end[0] <= right + 0.05 and abs(end[1] - box_top) < 0.1
                       for left, right, box_top in look.boxes), f"play {k + 1}: an arrow lands on no token"


@pytest.mark.parametrize("case", CASES)
def test_the_token_followed_reads_itself_and_the_tokens_before_it(watched, case: str) -> None:
    scenario, looks = watched[case]
    r = masked_row(scenario)
    look = next(look for look in looks if look.step.startswith("So '"))
    assert len(look.arrows) == r + 1, f"{len(look.arrows)} arrows from token {r + 1}"
    line = next(t for t in look.texts if "reads token" in t)
    assert line.startswith(f"'{scenario.tokens[r][:8]}"), line
    assert re.findall(r"\d+", line)[-1] == str(r + 1), line
    last = next(look for look in looks if look.step.startswith("Each token"))
    assert len(last.arrows) == scenario.n_tokens, "the last token written reads every token"
    assert re.findall(r"\d+", next(t for t in last.texts if "reads token" in t))[-1] == str(scenario.n_tokens)


@pytest.mark.parametrize("case", CASES)
def test_the_grid_fills_the_past_and_the_mask_covers_exactly_the_future(watched, case: str) -> None:
    scenario, looks = watched[case]
    final, n = looks[-1], scenario.n_tokens
    assert final.filled, "the grid of who reads whom is not on screen at the end"
    assert final.mask is not None, "no mask at the end"
    for i in range(n):
        for j in range(n):
            assert (final.filled[i][j] > 0) == (j <= i), f"cell ({i + 1}, {j + 1}) filled {final.filled[i][j]}"
            masked = inside_polygon(final.centres[i][j], final.mask.get_vertices())
            assert masked == (j > i), f"the mask and cell ({i + 1}, {j + 1})"
