"""WhyHeads' bars, measured: what the general layout checks let through.

The heads are compared by their bars, so every head's bars share one scale (a weight of 0.3 is as long in
head 2 as in head 1); each number stands beyond its own bar's end, level with it, clear of the glow around
the largest; each key's label stands on the baseline of its row's numbers (a descender does not lift it);
what each head reads ("→ dog") stays under its own column.
"""

from __future__ import annotations

import numpy as np
import pytest
from reviewed_scenarios import REVIEWED
from scene_helpers import SCENARIOS, dry_render, with_scenario

from scenes.facts import value
from scenes.kit.baselines import baseline
from scenes.multi_head.why_heads import WhyHeads

pytestmark = pytest.mark.xdist_group("why-heads-geometry")  # one worker builds each scenario once

CHOSEN = {
    "two-heads": SCENARIOS["two-heads"],  # 5 tokens, two heads that disagree
    "five-heads-twelve": SCENARIOS["five-heads-twelve"],  # 12 tokens, four of five heads drawn
    "engineers": REVIEWED["engineers"],  # 15 tokens, one of 20 characters, one head
}
_ENDS: dict[str, WhyHeads] = {}


@pytest.fixture(params=list(CHOSEN))
def scene(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> WhyHeads:
    if request.param not in _ENDS:
        made = dry_render(with_scenario(WhyHeads, CHOSEN[request.param]()), tmp_path_factory.mktemp("why-heads"))
        assert isinstance(made, WhyHeads)
        _ENDS[request.param] = made
    return _ENDS[request.param]


def _weights(scene: WhyHeads, head: int) -> np.ndarray:
    return np.asarray(scene.scenario.heads[head].trace().weights[scene.scenario.query])


def test_every_head_draws_its_bars_on_one_scale(scene: WhyHeads) -> None:
    units = []
    for column in scene.board:
        weights = _weights(scene, column.head)
        for bar, weight in zip(column.chart.bars, weights, strict=True):
            if weight > 0.02:  # the shortest bars keep a least width
                units.append(bar.width / weight)
    assert np.ptp(units) < 1e-6 * max(units), "the heads' bars are drawn on different scales"
    assert len(scene.board) == min(scene.scenario.n_heads, 4)


def test_each_number_stands_beyond_its_own_bar_clear_of_the_glow(scene: WhyHeads) -> None:
    q = scene.scenario.query
    for column in scene.board:
        for j, (bar, number) in enumerate(zip(column.chart.bars, column.numbers, strict=True)):
            shown = next(s for s in scene.shown if s.mobject is number)
            assert shown.fact == value(column.source, "weights", q, j)
            assert number.get_left()[0] > bar.get_right()[0], (column.head, j)
            assert bar.get_bottom()[1] <= number.get_y() <= bar.get_top()[1], (column.head, j)
        assert len(column.glow) == 2 * len(column.tops)  # two outlines around each largest bar
        for k, j in enumerate(column.tops):
            for glow in column.glow[2 * k: 2 * k + 2]:
                reach = glow.get_right()[0] + glow.get_stroke_width() * 0.01 / 2  # a stroke's outer half
                assert reach < column.numbers[j].get_left()[0], f"head {column.head + 1}: the glow crosses a number"


def test_each_label_stands_on_its_rows_baseline(scene: WhyHeads) -> None:
    column = scene.board[0]
    for j, label in enumerate(scene.labels):
        assert baseline(label) == pytest.approx(baseline(column.numbers[j]), abs=0.02), scene.scenario.tokens[j]


def test_what_each_head_reads_stays_under_its_column(scene: WhyHeads) -> None:
    for k, column in enumerate(scene.board):
        reading = column.reading
        assert reading.get_left()[0] >= column.chart.zero_line.get_x() - 1e-6
        assert reading.get_top()[1] < min(bar.get_bottom()[1] for bar in column.chart.bars)
        if k + 1 < len(scene.board):
            assert reading.get_right()[0] < scene.board[k + 1].chart.zero_line.get_x(), f"head {k + 1}'s reading"
