"""ClockHands (the rope lecture's clock), measured on screen as the scene ends, beyond the shared layout checks:

* in each pair's plane the angle from the query's arrow to the key's, as drawn, is the pair's angle between the
  hands (``rope_clock``), the same before and after every position moved on; the longer arrow reaches the circle;
* the moved-on score is ``rope_attention``'s at the shifted positions and the score before, to 1e-12;
* each arrow's name stands by its own tip, nearer it than the other arrow's, on neither arrow;
* the lines of each pair stand right of its circle, inside its column; the score and the layout lines under every
  plane, above the subtitles' band; an odd d_k is refused in one line naming it.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scene_helpers import SCENARIOS, dry_render, with_scenario

from attention_math import Scenario, ScenarioError, rope_attention
from scenes.kit.layout import BOTTOM, HALF_WIDTH
from scenes.rope.rope_clock import RADIUS, ClockHands

pytestmark = pytest.mark.xdist_group("clock-hands-geometry")

CASES = ("rope-dog", "twelve")  # two planes, numbers at 2 decimals; 12 tokens, the key far from the first


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Scenario, Any]]:
    done = {}
    for case in CASES:
        scenario = SCENARIOS[case]()
        done[case] = scenario, dry_render(with_scenario(ClockHands, scenario), Path(tmp_path_factory.mktemp(case)))
    return done


def _box(mob: Any) -> tuple[float, float, float, float]:
    return float(mob.get_left()[0]), float(mob.get_bottom()[1]), float(mob.get_right()[0]), float(mob.get_top()[1])


def _holds(mob: Any, point: np.ndarray) -> bool:
    left, bottom, right, top = _box(mob)
    return left <= point[0] <= right and bottom <= point[1] <= top


@pytest.mark.parametrize("case", CASES)
def test_the_drawn_angle_between_the_hands_is_the_pairs(built, case: str) -> None:
    _, scene = built[case]
    clock, shifted = scene.sources["clock"][0], scene.sources["shifted"][0]
    for plane in scene.planes:
        q_tip, k_tip = (hand.get_end() - plane.centre for hand in plane.arrows)
        drawn = math.atan2(k_tip[1], k_tip[0]) - math.atan2(q_tip[1], q_tip[0])
        for source in (clock, shifted):
            assert abs(math.remainder(drawn - source.angles_between[plane.pair], 2 * math.pi)) < 0.02, plane.pair
        longest = max(float(np.linalg.norm(q_tip[:2])), float(np.linalg.norm(k_tip[:2])))
        assert longest == pytest.approx(RADIUS, abs=0.02)


@pytest.mark.parametrize("case", CASES)
def test_moving_every_position_on_keeps_the_score(built, case: str) -> None:
    scenario, scene = built[case]
    clock, shifted = scene.sources["clock"][0], scene.sources["shifted"][0]
    one = scenario.heads[0] if scenario.w_out is not None else scenario
    n = scenario.n_tokens
    moved = rope_attention(one.embeddings, one.w_query, one.w_key, one.w_value, positions=np.arange(n) + n)
    assert shifted.query_position - clock.query_position == shifted.key_position - clock.key_position == n
    assert abs(shifted.score - moved.scores[scenario.query, scene.key]) < 1e-12
    assert abs(shifted.score - clock.score) < 1e-12
    np.testing.assert_allclose(shifted.contributions, clock.contributions, rtol=0, atol=1e-12)


@pytest.mark.parametrize("case", CASES)
def test_each_name_stands_by_its_own_tip(built, case: str) -> None:
    _, scene = built[case]
    for plane in scene.planes:
        tips = [hand.get_end() for hand in plane.arrows]
        for role, tag in enumerate(plane.tags):
            own, other = tips[role], tips[1 - role]
            centre = tag.get_center()
            assert np.linalg.norm(centre - own) <= np.linalg.norm(centre - other) + 1e-9
            assert np.linalg.norm(centre - own) < 0.6
            assert not any(_holds(tag, tip) for tip in tips)
            assert not _holds(tag, plane.centre)


@pytest.mark.parametrize("case", CASES)
def test_the_lines_stand_beside_their_plane_and_under_them_all(built, case: str) -> None:
    _, scene = built[case]
    planes = scene.planes
    for k, plane in enumerate(planes):
        right_end = planes[k + 1].centre[0] - RADIUS - 0.5 if k + 1 < len(planes) else HALF_WIDTH
        for line in plane.lines:
            assert line.get_left()[0] > plane.centre[0] + RADIUS + 0.3
            assert line.get_right()[0] < right_end
    lowest = min(plane.centre[1] - RADIUS - 0.4 for plane in planes)
    assert scene.score_line.get_top()[1] < lowest
    assert scene.layout_lines.get_top()[1] < scene.score_line.get_bottom()[1]
    assert scene.layout_lines.get_bottom()[1] > BOTTOM


def test_an_odd_d_k_is_refused_in_one_line_naming_it() -> None:
    odd = Scenario.from_sentence("the cat sat", seed=1, d_k=3)
    with pytest.raises(ScenarioError, match=r"^d_k: .* has 3$"):
        ClockHands.check_scenario(odd)
