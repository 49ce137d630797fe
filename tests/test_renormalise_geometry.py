"""Renormalise (the masked lecture's third scene), looked at after every play of a dry run.

What the shared checks do not see: at the end both routes stand side by side on each key's line and
read the same, number for number ("=" between them); once the future is zeroed its bars are empty and
its labels dimmed to the end; the heads over the bars and the Σ under them keep clear of the bars and
their zero line (they once sat on it).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest
from geometry_helpers import watch_cases
from number_checks import masked_row
from scene_helpers import family_box, on_screen, outermost_texts
from scene_helpers import text_of as said_by

from attention_math import Scenario
from scenes.kit.palette import DIM

pytestmark = pytest.mark.xdist_group("renormalise-geometry")

SCENE = ("scenes.masked.renormalise", "Renormalise")
CASES = ("masked-dog", "two", "sixteen")
ZERO_STEP = "Then the keys after"

Box = tuple[float, float, float, float]


@dataclass
class _Look:
    step: str
    numbers: dict[tuple[str, int], tuple[str, Box]] = field(default_factory=dict)  # (source, key) → text, box
    signs: list[Box] = field(default_factory=list)  # the "=" between the routes
    texts: list[tuple[str, Box]] = field(default_factory=list)  # every text but the numbers of the rows
    bars: list[Box] = field(default_factory=list)  # every bar and the zero line on screen
    label_opacity: list[float] = field(default_factory=list)  # the keys' labels
    bar_widths: list[float] = field(default_factory=list)  # the route's bars now, by key


class _Watch:
    def __init__(self) -> None:
        self.looks: list[_Look] = []

    def __call__(self, scene: Any) -> None:
        ids = {id(mob) for mob in on_screen(scene)}
        look = _Look(getattr(scene, "current_step", ""))
        rows = set()
        for shown in scene.shown:
            fact = shown.fact
            if id(shown.mobject) in ids and fact.field == "weights" and len(fact.index) == 2 and fact.reduce is None:
                look.numbers[fact.source, fact.index[1]] = (shown.text, family_box(shown.mobject))
                rows.add(id(shown.mobject))
        for mob in outermost_texts(scene.mobjects):
            box = family_box(mob)
            if box is not None and id(mob) not in rows:
                if said_by(mob) == "=":
                    look.signs.append(box)
                else:
                    look.texts.append((said_by(mob), box))
        charts = scene.chart.charts
        for chart in charts.values():
            look.bars += [box for bar in chart.bars if id(bar) in ids and (box := family_box(bar)) is not None]
            if id(chart.zero_line) in ids:
                look.bars.append(family_box(chart.zero_line))
        look.label_opacity = [float(label.get_fill_opacity()) for label in charts["full"].labels]
        look.bar_widths = [max((float(chart.bars[j].width) for chart in charts.values() if id(chart.bars[j]) in ids),
                               default=0.0) for j in range(len(charts["full"].bars))]
        self.looks.append(look)


@pytest.fixture(scope="module")
def watched(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Scenario, list[_Look]]]:
    return watch_cases(SCENE, CASES, tmp_path_factory, _Watch)


@pytest.mark.parametrize("case", CASES)
def test_both_routes_read_the_same_number_for_number_on_each_key_line(watched, case: str) -> None:
    scenario, looks = watched[case]
    look = looks[-1]
    for j in range(scenario.n_tokens):
        route, masked = look.numbers.get(("renormalised", j)), look.numbers.get(("causal", j))
        assert route is not None and masked is not None, f"key {j + 1}: the two routes are not both on screen"
        assert route[0] == masked[0], f"key {j + 1}: {route[0]} by the other route, {masked[0]} masked"
        y = (route[1][2] + route[1][3]) / 2
        assert abs(y - (masked[1][2] + masked[1][3]) / 2) < 0.05, f"key {j + 1}: the two on different lines"
        signs = [box for box in look.signs if route[1][1] < box[0] and box[1] < masked[1][0]
                 and box[2] - 0.05 <= y <= box[3] + 0.05]
        assert len(signs) == 1, f"key {j + 1}: {len(signs)} '=' between the routes"


@pytest.mark.parametrize("case", CASES)
def test_the_future_stays_empty_and_dim_once_zeroed(watched, case: str) -> None:
    scenario, looks = watched[case]
    r = masked_row(scenario)
    first = next(k for k, look in enumerate(looks) if look.step.startswith(ZERO_STEP))
    for look in looks[first:]:
        for j in range(r + 1, scenario.n_tokens):
            assert look.bar_widths[j] <= 0.02, f"{look.step!r}: key {j + 1}'s bar is {look.bar_widths[j]:.2f} long"
            assert look.label_opacity[j] <= DIM + 1e-6, f"{look.step!r}: key {j + 1}'s label is not dimmed"
        for j in range(r + 1):
            assert look.label_opacity[j] == 1.0, f"{look.step!r}: key {j + 1}, in the past, is dimmed"


def _meet(a: Box, b: Box, pad: float = 0.02) -> bool:
    return a[0] < b[1] + pad and b[0] < a[1] + pad and a[2] < b[3] + pad and b[2] < a[3] + pad


@pytest.mark.parametrize("case", CASES)
def test_heads_and_sums_keep_clear_of_the_bars_and_the_zero_line(watched, case: str) -> None:
    _, looks = watched[case]
    for look in looks:
        for content, box in look.texts:
            if content.startswith(("softmax over", "keys after", "each ÷", "Σ")):
                hit = [bar for bar in look.bars if _meet(box, bar)]
                assert not hit, f"{look.step!r}: {content!r} meets a bar or the zero line"
