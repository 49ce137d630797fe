"""PerHead's panels and table, measured at the end of every play: what the general layout checks let through.

Each head's numbers stand inside its own panel (or its own box of z), never spilling over the frame that says
whose they are; the matrices (rows of embedding dimensions, not tokens) never sit beside lit token labels as
if they were a token's row; the outline on the largest weight stays within its row; every row's label and
numbers stand on one baseline; the boxes of z stand clear of the panel and of each other.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest
from manim import Mobject, VMobject
from reviewed_scenarios import REVIEWED
from scene_helpers import SCENARIOS, after_every_play, dry_render, with_scenario

from scenes.base import ExplainerScene
from scenes.kit.baselines import baseline
from scenes.kit.palette import DIM
from scenes.multi_head.per_head import PerHead

pytestmark = pytest.mark.xdist_group("per-head-geometry")  # one worker builds each scenario once

CHOSEN = {
    "two-heads": SCENARIOS["two-heads"],  # 5 tokens: the matrices in X's place, z under the table
    "five-heads-twelve": SCENARIOS["five-heads-twelve"],  # 12 tokens: the matrices one above another, z beside
    "two-heads-sixteen-wide": SCENARIOS["two-heads-sixteen-wide"],  # X and the matrices by shape, z as columns
    "lighthouse": REVIEWED["lighthouse"],  # 8 tokens, d_in 4, d_k = d_v = 3, one head
}
Box = tuple[float, float, float, float]
_RUNS: dict[str, tuple[PerHead, list[str]]] = {}


def _box(mob: Mobject) -> Box:
    return (float(mob.get_left()[0]), float(mob.get_right()[0]), float(mob.get_bottom()[1]), float(mob.get_top()[1]))


def _inside(inner: Box, outer: Box, slack: float = 0.01) -> bool:
    return (inner[0] >= outer[0] - slack and inner[1] <= outer[1] + slack and inner[2] >= outer[2] - slack
            and inner[3] <= outer[3] + slack)


def _family(scene: ExplainerScene) -> set[int]:
    return {id(part) for top in scene.mobjects for part in top.get_family()}


def _visible(mob: Mobject) -> bool:
    return any(isinstance(part, VMobject) and len(part.points) and part.get_fill_opacity() > 0
               for part in mob.get_family())


def _look(scene: PerHead, problems: list[str]) -> None:
    """After one play: each head's numbers in its panel or box; the matrices never beside lit token labels."""
    present = _family(scene)
    panels = {h.head: _box(h.panel) for h in scene.drawn if id(h.panel) in present}
    boxes = {h.head: _box(h.z[0]) for h in scene.drawn if id(h.z[0]) in present}
    play = len(scene.beats) + 1
    for shown in scene.shown:
        source = shown.fact.source
        if not source.startswith("head") or id(shown.mobject) not in present or not _visible(shown.mobject):
            continue
        head, where = int(source[4:]) - 1, _box(shown.mobject)
        homes = [home for home in (panels.get(head), boxes.get(head)) if home is not None]
        if not any(_inside(where, home) for home in homes):
            problems.append(f"beat {play}: {source}.{shown.fact.field} {shown.text!r} outside head {head + 1}'s panel")
    for head in scene.drawn:
        if id(head.matrices) in present and _visible(head.matrices):
            lit = scene.board.labels[0].get_fill_opacity() > DIM + 0.01
            beside_labels = head.matrices.get_left()[0] < scene.layout.vector_left + scene.scenario.d_in * 0.3
            if lit and beside_labels:
                problems.append(f"beat {play}: head {head.head + 1}'s matrices beside lit token labels")
            if not _inside(_box(head.matrices), _box(head.panel)):
                problems.append(f"beat {play}: head {head.head + 1}'s matrices outside its panel")


@pytest.fixture(params=list(CHOSEN))
def run(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[PerHead, list[str]]:
    if request.param not in _RUNS:
        problems: list[str] = []

        def watch(scene: ExplainerScene) -> None:
            if isinstance(scene, PerHead) and hasattr(scene, "drawn"):
                _look(scene, problems)

        with after_every_play(watch):
            made = dry_render(with_scenario(PerHead, CHOSEN[request.param]()), tmp_path_factory.mktemp("per-head"))
        assert isinstance(made, PerHead)
        _RUNS[request.param] = (made, problems)
    return _RUNS[request.param]


def test_each_heads_numbers_stay_in_its_panel_and_the_matrices_never_pass_for_a_tokens_row(run) -> None:
    _, problems = run
    assert not problems, "\n".join(problems)


def _rows(scene: PerHead) -> Iterator[tuple[int, list[VMobject]]]:
    """Each key's row at the end: its label and every number the last head's table shows in it."""
    head = scene.drawn[-1]
    for j, label in enumerate(scene.board.labels):
        yield j, [label, *head.values[j], *(head.columns[f][j] for f in head.columns)]


def test_every_row_stands_on_one_baseline(run) -> None:
    scene, _ = run
    for j, row in _rows(scene):
        lines = [baseline(mob) for mob in row]
        assert np.ptp(lines) < 0.02, f"row {j + 1} ({scene.scenario.tokens[j]!r}): baselines {np.round(lines, 3)}"


def test_the_outline_on_the_largest_weight_stays_in_its_row(run) -> None:
    scene, _ = run
    for head in scene.drawn:
        weights = head.columns["weights"]
        for outline, j in zip(head.outline, head.tops, strict=True):
            if j > 0:
                assert outline.get_top()[1] < weights[j - 1].get_bottom()[1], f"head {head.head + 1}, row {j + 1}"
            if j + 1 < len(weights):
                assert outline.get_bottom()[1] > weights[j + 1].get_top()[1], f"head {head.head + 1}, row {j + 1}"


def test_the_boxes_of_z_stand_clear_of_the_panel_and_each_other(run) -> None:
    scene, _ = run
    panel = _box(scene.drawn[-1].panel)
    boxes = [_box(head.z[0]) for head in scene.drawn]

    def apart(a: Box, b: Box) -> bool:
        return a[1] < b[0] or b[1] < a[0] or a[3] < b[2] or b[3] < a[2]

    for k, box in enumerate(boxes):
        assert apart(box, panel), f"head {k + 1}'s box of z overlaps the panel"
        assert all(apart(box, other) for other in boxes[k + 1:]), f"head {k + 1}'s box of z overlaps another"
