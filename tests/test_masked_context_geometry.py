"""MaskedContext's picture, beyond the shared layout checks: what the two planes must show, measured on screen.

Each scenario is dry-run once; the checks look at the scene as it ends (the last frame is the summary):

* the masked plane's chain has the past's links only (keys 1 … i), the unmasked one every key's, the future's
  in another colour than the past's (and named by the legend);
* both planes are drawn at one scale, side by side, right of the table, neither over the other;
* each past link of the masked chain is longer than its unmasked twin by one factor, 1 ÷ (the unmasked weights
  of keys 1 … i added up), from the number checks' unmasked weights;
* each link ends at its running sum as the number checks derive it, a link of a near-zero weight too (shorter
  than an arrow can draw: drawn that long, it still ends where it should);
* z's name keeps off every arrow of its plane; the legend keeps clear of the lines of z;
* the mask's bands stand behind the future's rows of the table, one per key after the query, and nowhere else.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from number_checks import derive_all
from reviewed_scenarios import REVIEWED
from scene_helpers import SCENARIOS, dry_render, family_box, with_scenario

from attention_math import Scenario
from attention_math.scenario import ModelChoice
from scenes.masked.masked_context import MaskedContext

pytestmark = pytest.mark.xdist_group("masked-context-geometry")  # one worker builds each scene once

# a middle token; the first; d_v 3; d_v 1; a decoder's head whose query (the space after "In") gives most keys
# weights near zero (a few thousandths: links shorter than an arrow can draw)
CASES = ("masked-dog", "two-first", "lighthouse", "sixteen-whole", "smollm2-near-zero")
OWN = {"smollm2-near-zero": lambda: Scenario.from_model(
    ModelChoice("smollm2", "In 2024, the cat saw men run on the sea.", layer=3, head=4), query=2)}


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Scenario, Any]]:
    done = {}
    for case in CASES:
        scenario = (REVIEWED.get(case) or OWN.get(case) or SCENARIOS[case])()
        done[case] = scenario, dry_render(with_scenario(MaskedContext, scenario), Path(tmp_path_factory.mktemp(case)))
    return done


def _length(arrow: Any) -> float:
    return float(np.linalg.norm(arrow.get_end() - arrow.get_start()))


@pytest.mark.parametrize("case", CASES)
def test_the_masked_chain_has_the_past_only(built, case: str) -> None:
    scenario, scene = built[case]
    unmasked, masked = scene.planes
    q, n = scenario.query, scenario.n_tokens
    assert len(masked.chain) == q + 1, f"{len(masked.chain)} links with the mask: a future key's arrow left in?"
    assert len(unmasked.chain) == n
    past, future = {a.get_color() for a in unmasked.chain[: q + 1]}, {a.get_color() for a in unmasked.chain[q + 1:]}
    assert len(past) == 1 and not past & future, "the future's links are not told from the past's"
    assert {a.get_color() for a in masked.chain} == past


@pytest.mark.parametrize("case", CASES)
def test_both_planes_share_one_scale_side_by_side(built, case: str) -> None:
    _, scene = built[case]
    unmasked, masked = scene.planes
    assert unmasked.view.unit == pytest.approx(masked.view.unit)
    assert unmasked.view.rows == masked.view.rows
    assert unmasked.view.window[1] < masked.view.window[0], "the planes overlap"
    assert unmasked.view.window[0] > family_box(scene.table.keys)[1], "the planes reach over the table"
    for plane in scene.planes:  # every link inside its own plane
        left, right, bottom, top = plane.view.window
        for arrow in [*plane.chain, plane.z_arrow]:
            for point in (arrow.get_start(), arrow.get_end()):
                assert left - 0.05 <= point[0] <= right + 0.05 and bottom - 0.05 <= point[1] <= top + 0.05


@pytest.mark.parametrize("case", CASES)
def test_each_past_arrow_grows_by_one_factor(built, case: str) -> None:
    scenario, scene = built[case]
    unmasked, masked = scene.planes
    weights = derive_all(scenario)["trace"][0].weights  # a model's head's too (RoPE and all)
    share = float(np.sum(weights[scenario.query, : scenario.query + 1]))
    for j, (before, after) in enumerate(zip(unmasked.chain, masked.chain, strict=False)):
        if _length(before) > 0.1:  # a link shorter than its tip is drawn a hair long
            assert _length(after) / _length(before) == pytest.approx(1 / share, rel=0.03), f"key {j + 1}"


@pytest.mark.parametrize("case", CASES)
def test_each_link_ends_at_its_running_sum(built, case: str) -> None:
    scenario, scene = built[case]
    derived, dims = derive_all(scenario), min(2, scenario.d_v)
    for plane, step in zip(scene.planes, ("step", "causal_query_step"), strict=True):
        sums = np.asarray(derived[step][0].running_context)
        for j, link in enumerate(plane.chain):
            at = np.zeros(2)
            at[:dims] = sums[j, :dims]
            off = float(np.linalg.norm(link.get_end()[:2] - np.asarray(plane.view.point(at, j))[:2]))
            assert off < 0.005, f"{step}: key {j + 1}'s link ends {off:.3f} from its running sum"


def _crosses(box: tuple[float, float, float, float], arrow: Any) -> bool:
    start, end = arrow.get_start(), arrow.get_end()
    points = start[:2] + np.linspace(0, 1, 60)[:, None] * (end[:2] - start[:2])
    inside = (box[0] <= points[:, 0]) & (points[:, 0] <= box[1]) & (box[2] <= points[:, 1]) & (points[:, 1] <= box[3])
    return bool(inside.any())


@pytest.mark.parametrize("case", CASES)
def test_z_names_keep_off_the_arrows_and_the_legend_off_z(built, case: str) -> None:
    _, scene = built[case]
    for plane in scene.planes:
        box = family_box(plane.z_tag)
        arrows = [*plane.chain, plane.z_arrow, *([plane.ghost] if plane.ghost is not None else [])]
        crossed = [k for k, arrow in enumerate(arrows) if _crosses(box, arrow)]
        assert not crossed, f"z's name crosses arrows {crossed}"
    legend = family_box(scene.legend)
    for plane in scene.planes:
        line = family_box(plane.z_line)
        assert legend[3] < line[2] or line[3] < legend[2] or legend[1] < line[0] or line[1] < legend[0]


@pytest.mark.parametrize("case", CASES)
def test_the_mask_bands_stand_behind_the_future_rows(built, case: str) -> None:
    scenario, scene = built[case]
    table = scene.table
    future = range(scenario.query + 1, scenario.n_tokens)
    assert len(table.future) == len(future)
    for band, j in zip(table.future, future, strict=True):
        assert band.get_y() == pytest.approx(table.unmasked[j].get_y(), abs=0.02)
        assert band.height < abs(table.unmasked[1].get_y() - table.unmasked[0].get_y()) + 0.01  # one row, not two
