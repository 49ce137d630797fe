"""The rope lecture's pictures, beyond the shared layout checks, measured on screen as each scene ends.

OrderBlind (the sentence and the sentence backwards):

* the two grids stand side by side, each in its half, clear of each other;
* the backwards grid is the first turned half a turn: cell (i, j) of one has the fill (and, where the
  cells carry numbers, the number) of cell (n − 1 − i, n − 1 − j) of the other;
* the two boxes mark the same pair of tokens, each around its own cell and crossing no other cell's number.

RopePairs (the query's pairs):

* each pair's brace spans its own two columns and no other's; its θ_i and its angle stand under it;
* the rule of a turn and the note stand under the table, clear of it and of each other, in the safe area.

RopeScores (without positions and with RoPE):

* the last frame keeps the RoPE map and its summary side by side, clear of each other, in the safe area;
* the box on the query's row surrounds that row and crosses no number of the rows beside it;
* where the cells carry numbers, the diagonal's scores are the same in both maps (a token turns by one
  angle as a query and as a key): the scene's own records of the two sources agree there and only there.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scene_helpers import SCENARIOS, dry_render, with_scenario

from attention_math import Scenario
from scenes.kit.layout import BOTTOM, HALF_WIDTH, TOP
from scenes.rope.order_blind import OrderBlind
from scenes.rope.rope_pairs import RopePairs
from scenes.rope.rope_scores import RopeScores

pytestmark = pytest.mark.xdist_group("rope-geometry")  # one worker builds each scene once

CASES = ("rope-dog", "two", "twelve")  # numbers in the cells (5 and 2 tokens); colours only (12)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], tuple[Scenario, Any]]:
    done = {}
    for cls in (OrderBlind, RopePairs, RopeScores):
        for case in CASES:
            scenario = SCENARIOS[case]()
            folder = Path(tmp_path_factory.mktemp(f"{cls.__name__}-{case}"))
            done[(cls.__name__, case)] = scenario, dry_render(with_scenario(cls, scenario), folder)
    return done


def _box(mob: Any) -> tuple[float, float, float, float]:
    """(left, bottom, right, top) of a mobject."""
    return float(mob.get_left()[0]), float(mob.get_bottom()[1]), float(mob.get_right()[0]), float(mob.get_top()[1])


def _meet(a: Any, b: Any) -> bool:
    (l1, b1, r1, t1), (l2, b2, r2, t2) = _box(a), _box(b)
    return l1 < r2 and l2 < r1 and b1 < t2 and b2 < t1


# -- OrderBlind ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("case", CASES)
def test_the_two_grids_stand_in_their_halves(built, case: str) -> None:
    _, scene = built[("OrderBlind", case)]
    left, right = scene.board.grids
    assert left.get_right()[0] < 0 < right.get_left()[0]
    assert left.get_left()[0] >= -HALF_WIDTH - 1e-6 and right.get_right()[0] <= HALF_WIDTH + 1e-6


@pytest.mark.parametrize("case", CASES)
def test_backwards_is_the_grid_turned_half_a_turn(built, case: str) -> None:
    scenario, scene = built[("OrderBlind", case)]
    n, (left, right) = scenario.n_tokens, scene.board.grids
    for i in range(n):
        for j in range(n):
            assert right.squares[n - 1 - i][n - 1 - j].get_fill_opacity() == pytest.approx(
                left.squares[i][j].get_fill_opacity()), (i, j)
    numbers = scene.board.numbers
    if len(numbers[0]):
        texts = [[numbers[side][i][j].text for j in range(n)] for side in (0, 1) for i in range(n)]
        mine, theirs = np.array(texts[:n]), np.array(texts[n:])
        assert (mine == theirs[::-1, ::-1]).all()


@pytest.mark.parametrize("case", CASES)
def test_the_boxes_mark_one_pair_and_cross_no_other_number(built, case: str) -> None:
    scenario, scene = built[("OrderBlind", case)]
    n, (left, right) = scenario.n_tokens, scene.board.grids
    q, k = scene._pair
    assert k != q
    for side, (grid, (i, j)) in enumerate(zip((left, right), ((q, k), (n - 1 - q, n - 1 - k)), strict=True)):
        box = scene.board.boxes[side]
        assert np.allclose(box.get_center()[:2], grid.cell_center(i, j)[:2], atol=1e-6)
        numbers = scene.board.numbers[side]
        for a in range(len(numbers)):
            for b in range(n):
                if (a, b) != (i, j):
                    assert not _meet(box, numbers[a][b]), (side, a, b)


# -- RopePairs -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("case", CASES)
def test_each_brace_spans_its_pair_and_its_numbers_stand_under_it(built, case: str) -> None:
    scenario, scene = built[("RopePairs", case)]
    xs = list(scene.columns_x.values())  # every dimension of a made-up d_k, in order
    assert len(scene.braces) == scenario.d_k // 2
    for i, brace in enumerate(scene.braces):
        left, right = brace.get_left()[0], brace.get_right()[0]
        for c, x in enumerate(xs):
            assert (left < x < right) == (c // 2 == i), (i, c)
        for row in ("theta", "angle"):
            assert scene.table[row][i].get_x() == pytest.approx((xs[2 * i] + xs[2 * i + 1]) / 2, abs=1e-6), row
    for row in ("query", "turned"):
        assert [round(float(n.get_x()), 6) for n in scene.table[row]] == [round(x, 6) for x in xs], row


@pytest.mark.parametrize("case", CASES)
def test_the_rule_and_the_note_stand_under_the_table(built, case: str) -> None:
    _, scene = built[("RopePairs", case)]
    table_bottom = min(n.get_bottom()[1] for row in scene.table.values() for n in row)
    assert scene.rule.get_top()[1] < table_bottom
    assert scene.notes.get_top()[1] < scene.rule.get_bottom()[1]
    assert scene.notes.get_bottom()[1] >= BOTTOM - 1e-6
    for mob in (scene.rule, scene.notes):
        assert -HALF_WIDTH - 1e-6 <= mob.get_left()[0] and mob.get_right()[0] <= HALF_WIDTH + 1e-6


# -- RopeScores ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("case", CASES)
def test_the_summary_stands_beside_the_rope_map(built, case: str) -> None:
    _, scene = built[("RopeScores", case)]
    right = scene.board.grids[1]
    summary = scene.summary
    assert right.get_right()[0] < summary.get_left()[0]
    assert summary.get_right()[0] <= HALF_WIDTH + 1e-6
    assert BOTTOM <= summary.get_bottom()[1] and summary.get_top()[1] <= TOP
    assert right.get_left()[0] >= -HALF_WIDTH - 1e-6


@pytest.mark.parametrize("case", CASES)
def test_the_row_box_holds_the_query_row_and_no_other_number(built, case: str) -> None:
    scenario, scene = built[("RopeScores", case)]
    q, n = scenario.query, scenario.n_tokens
    for side in (0, 1):
        box, grid = scene.board.boxes[side], scene.board.grids[side]
        assert box.get_y() == pytest.approx(grid.row_y(q), abs=1e-6)
        numbers = scene.board.numbers[side]
        for a in range(len(numbers)):
            for b in range(n):
                if a != q:
                    assert not _meet(box, numbers[a][b]), (side, a, b)


@pytest.mark.parametrize("case", CASES)
def test_the_diagonal_keeps_its_scores_and_only_it(built, case: str) -> None:
    """As the scene registered them: RoPE leaves q_i · k_i alone (the diagonal it boxes) and moves the others."""
    scenario, scene = built[("RopeScores", case)]
    rope, plain = scene.sources["rope"][0].scaled_scores, scene.sources["trace"][0].scaled_scores
    n = scenario.n_tokens
    assert np.allclose(np.diag(rope), np.diag(plain), rtol=1e-12, atol=1e-12)
    assert all(not np.isclose(rope[i, j], plain[i, j]) for i in range(n) for j in range(n) if i != j)


def test_rope_scores_refuses_an_odd_d_k_in_one_line_naming_it() -> None:
    from attention_math import ScenarioError

    odd = Scenario.from_sentence("the cat sat", seed=1, d_k=3)
    with pytest.raises(ScenarioError) as info:
        RopeScores.check_scenario(odd)
    message = str(info.value)
    assert message.startswith("d_k: ") and "even" in message and message.endswith("has 3") and "\n" not in message
    even = SCENARIOS["rope-dog"]()
    assert RopeScores.check_scenario(even) is even
    assert OrderBlind.check_scenario(odd) is odd  # the problem needs no pairs: any d_k
    with pytest.raises(ScenarioError, match=r"^d_k: .* has 3$"):
        RopePairs.check_scenario(odd)
