"""CausalHeads, looked at after every play of a dry run: each mask hides exactly the future, each head's map
and lines stay in its own panel.

What the shared checks do not see: a mask that leaves a future key uncovered or covers a past one (the
staircase drawn one cell off), the changed row's outline around another row, a head's title over another
head's map or in another head's colour, a "−∞" left on the weights. The scenarios: the lecture's (numbers
in the cells), 2 tokens through 3 heads, and 12 tokens through 6 heads (colours only, 4 drawn). The last
test plants a staircase one cell off and shows it is caught.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from geometry_helpers import inside_polygon
from scene_helpers import SCENARIOS, build_watched, family_box, on_screen, outermost_texts
from scene_helpers import text_of as said_by

import scenes.multi_head.causal_heads as causal_heads
from scenes.kit.blocks import head_color
from scenes.kit.mask import future_mask

pytestmark = pytest.mark.xdist_group("causal-heads-geometry")

SCENE = ("scenes.multi_head.causal_heads", "CausalHeads")
CASES = ("two-heads", "six-heads-twelve")
TOLERANCE = 0.02


@dataclass
class _Look:
    step: str
    masks: list[tuple[int, list[str]]] = field(default_factory=list)  # head, the cells its mask gets wrong
    boxes: list[tuple[int, int]] = field(default_factory=list)  # head, the row its outline holds
    titles: list[str] = field(default_factory=list)  # what is wrong with a head's title
    infinite: bool = False  # a "∞" on screen


def mask_errors(mask: Any, grid: Any) -> list[str]:
    """The cells the staircase gets wrong: a future key (j > i) outside it, or a past one (j ≤ i) inside."""
    corners = mask.get_vertices()
    n = len(grid.squares)
    return [f"({i + 1}, {j + 1}) {'uncovered' if j > i else 'covered'}" for i in range(n) for j in range(n)
            if inside_polygon(grid.cell_center(i, j), corners) != (j > i)]


class _Watch:
    def __init__(self) -> None:
        self.looks: list[_Look] = []

    def __call__(self, scene: Any) -> None:
        present = {id(mob) for mob in on_screen(scene)}
        look = _Look(getattr(scene, "current_step", ""))
        for p in getattr(scene, "panels", []):
            if id(p.mask) in present:
                look.masks.append((p.head, mask_errors(p.mask, p.grid)))
            if id(p.box) in present:
                half = p.grid.cell_h / 2
                look.boxes += [(p.head, i) for i in range(len(p.grid.squares)) if abs(p.grid.row_y(i) - p.box.get_y())
                               < half]
            if id(p.title) in present:
                look.titles += _title_problems(p)
        look.infinite = any("∞" in said_by(mob) for mob in outermost_texts(scene.mobjects) if family_box(mob))
        self.looks.append(look)


def _title_problems(panel: Any) -> list[str]:
    """A head's title names it, in its colour, over its own map (left of the map's middle, within it)."""
    title, grid = panel.title, panel.grid
    problems = []
    if said_by(title) != f"head {panel.head + 1}":
        problems.append(f"panel {panel.head + 1} titled {said_by(title)!r}")
    if str(title.get_color().to_hex()).upper() != head_color(panel.head).upper():
        problems.append(f"head {panel.head + 1}'s title is {title.get_color().to_hex()}")
    left, right = grid.brackets.get_left()[0] - TOLERANCE, grid.brackets.get_right()[0]
    if not left <= title.get_left()[0] <= (left + right) / 2 or title.get_bottom()[1] < grid.get_top()[1] - TOLERANCE:
        problems.append(f"head {panel.head + 1}'s title is not over its map")
    return problems


def _watched(scenario_id: str, root: Path) -> tuple[Any, list[_Look]]:
    watch = _Watch()
    scenario = SCENARIOS[scenario_id]()
    build_watched(*SCENE, scenario, root, watch)
    return scenario, watch.looks


@pytest.fixture(scope="module")
def watched(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Any, list[_Look]]]:
    return {case: _watched(case, tmp_path_factory.mktemp(case)) for case in CASES}


@pytest.mark.parametrize("case", CASES)
def test_each_mask_hides_exactly_the_keys_after_each_query(watched, case: str) -> None:
    scenario, looks = watched[case]
    seen = {head for look in looks for head, _ in look.masks}
    assert seen == set(range(min(scenario.n_heads, 4))), f"masks drawn for heads {sorted(seen)}"
    problems = [f"{look.step!r}: head {head + 1}: {wrong}" for look in looks for head, wrong in look.masks if wrong]
    assert not problems, "\n".join(problems[:10])


@pytest.mark.parametrize("case", CASES)
def test_the_outline_holds_the_changed_row_in_every_head(watched, case: str) -> None:
    scenario, looks = watched[case]
    row = causal_heads.changed_row(scenario)
    outlined = {(head, r) for look in looks for head, r in look.boxes}
    assert outlined == {(k, row) for k in range(min(scenario.n_heads, 4))}, outlined


@pytest.mark.parametrize("case", CASES)
def test_each_title_names_its_head_over_its_map(watched, case: str) -> None:
    _, looks = watched[case]
    problems = sorted({problem for look in looks for problem in look.titles})
    assert not problems, problems


@pytest.mark.parametrize("case", CASES)
def test_no_minus_infinity_is_drawn(watched, case: str) -> None:
    """The masked keys' weights are zeros: the −∞ of the scores never reaches this scene's screen."""
    _, looks = watched[case]
    assert not [look.step for look in looks if look.infinite]


def test_the_mask_check_catches_a_staircase_one_cell_off(tmp_path: Path) -> None:
    def shifted(grid: Any, **options: Any) -> Any:
        return future_mask(grid, **options).shift([grid.cell_w, 0, 0])  # one key to the right: key i+1 shown

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(causal_heads, "future_mask", shifted)
        _, looks = _watched("two-tokens-heads", tmp_path)
    assert any(wrong for look in looks for _, wrong in look.masks)


def test_changed_row_is_the_query_unless_it_is_the_last_token() -> None:
    assert causal_heads.changed_row(SCENARIOS["two-heads"]()) == 2  # "ball" is last: "chased", as lecture 7 takes
    assert causal_heads.changed_row(SCENARIOS["six-heads-twelve"]()) == 8  # the query, token 9 "lazy"
    assert causal_heads.changed_row(SCENARIOS["two-tokens-heads"]()) == 0  # two tokens: the first


@pytest.mark.parametrize(("options", "field"), [
    ({"heads": 4, "d_v": 4, "precision": 4}, "d_v"),  # 16 numbers of 4 decimals in the joined row
    ({"heads": 2, "d_model": 6, "d_v": 4, "precision": 4}, None),  # fits
])
def test_a_scenario_whose_joined_row_does_not_fit_is_refused_naming_its_field(options: dict[str, Any],
                                                                              field: str | None) -> None:
    from attention_math import Scenario, ScenarioError

    scenario = Scenario.from_sentence("a b c", seed=2, **options)
    if field is None:
        assert causal_heads.CausalHeads.check_scenario(scenario) is scenario
        return
    with pytest.raises(ScenarioError, match=f"^{field}: the causal heads' scene joins") as error:
        causal_heads.CausalHeads.check_scenario(scenario)
    assert "\n" not in str(error.value)
