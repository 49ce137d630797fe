"""The matrix-form and causal-mask scenes, looked at after every play of a dry run.

What the shared layout checks do not look at: nothing is drawn in the subtitles' band
(y < -3.2) at any moment; after the softmax of the mask no "−∞" is left on the weights; the
numbers over the columns of a colour-only grid stay apart ("10 11", never "1011"); the
title of the mask's comparison ("row 3 lighthouse") sits clear of its column heads and keeps its
token whole where there is room; upright column labels keep their token whole where the frame
has room for it.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from reviewed_scenarios import REVIEWED
from scene_helpers import (
    SCENARIOS,
    build_watched,
    family_box,
    is_visible,
    on_screen,
    outermost_texts,
)
from scene_helpers import curve_box as own_box
from scene_helpers import text_of as said_by

from attention_math import Scenario
from scenes.kit.layout import BOTTOM

pytestmark = pytest.mark.xdist_group("mask-geometry")  # one worker builds the scenes once for every test here

BAND_TOLERANCE = 0.02
COLUMN_GAP = 0.15  # between two numbers over neighbouring columns: about 9 px at 480p
TITLE_GAP = 0.12  # between the comparison's title and its column heads

CASES = [
    ("scenes.self_attention.causal_mask", "CausalMask", "rivers"),
    ("scenes.self_attention.causal_mask", "CausalMask", "lighthouse"),
    ("scenes.self_attention.causal_mask", "CausalMask", "engineers"),
    ("scenes.self_attention.causal_mask", "CausalMask", "sixteen"),
    ("scenes.self_attention.causal_mask", "CausalMask", "default"),
    ("scenes.self_attention.matrix_form", "MatrixForm", "rivers"),
    ("scenes.self_attention.matrix_form", "MatrixForm", "engineers"),
]


@dataclass
class _Look:
    """What one play left on screen, as the checks here need it."""

    step: str
    texts: list[tuple[str, tuple[float, float, float, float]]]
    lowest: list[str] = field(default_factory=list)  # what reaches into the subtitles' band


class _Watch:
    def __init__(self) -> None:
        self.looks: list[_Look] = []

    def __call__(self, scene: Any) -> None:
        texts = [(said_by(mob), box) for mob in outermost_texts([*scene.mobjects, *scene.foreground_mobjects])
                 if (box := family_box(mob)) is not None]
        look = _Look(getattr(scene, "current_step", ""), texts)
        for mob in on_screen(scene):
            box = own_box(mob) if is_visible(mob) else None
            if box is not None and box[2] < BOTTOM - BAND_TOLERANCE:
                look.lowest.append(f"{type(mob).__name__} down to y {box[2]:.2f}")
        self.looks.append(look)


@pytest.fixture(scope="module")
def watched(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], tuple[Scenario, list[_Look]]]:
    done: dict[tuple[str, str], tuple[Scenario, list[_Look]]] = {}
    for module, name, scenario_id in CASES:
        scenario = (REVIEWED.get(scenario_id) or SCENARIOS[scenario_id])()
        watch = _Watch()
        build_watched(module, name, scenario, Path(tmp_path_factory.mktemp(name)), watch)
        done[name, scenario_id] = scenario, watch.looks
    return done


def _ids(case: tuple[str, str, str]) -> str:
    return f"{case[1]}-{case[2]}"


@pytest.mark.parametrize("case", CASES, ids=_ids)
def test_nothing_is_drawn_in_the_subtitles_band(watched, case: tuple[str, str, str]) -> None:
    _, looks = watched[case[1], case[2]]
    problems = [f"play {k + 1} ({look.step!r}): {what}" for k, look in enumerate(looks) for what in look.lowest]
    assert not problems, "\n".join(problems[:10])


@pytest.mark.parametrize("case", [c for c in CASES if c[1] == "CausalMask"], ids=_ids)
def test_no_minus_infinity_is_left_after_the_softmax(watched, case: tuple[str, str, str]) -> None:
    _, looks = watched[case[1], case[2]]
    after = [k for k, look in enumerate(looks) if look.step.startswith("After the softmax")]
    assert after, "no softmax beat"
    left = [(k + 1, look.step) for k, look in enumerate(looks[after[0]:], after[0])
            if any("∞" in content for content, _ in look.texts)]
    assert not left, f"−∞ still on screen after the softmax: plays {left}"


def _column_numbers(look: _Look) -> list[list[tuple[str, tuple[float, float, float, float]]]]:
    """Lines of whole numbers side by side: the numbers over a colour-only grid's columns."""
    numbers = [(content, box) for content, box in look.texts if re.fullmatch(r"\d+", content)]
    lines: dict[float, list[tuple[str, tuple[float, float, float, float]]]] = {}
    for content, box in numbers:
        lines.setdefault(round((box[2] + box[3]) / 2, 2), []).append((content, box))
    return [sorted(line, key=lambda item: item[1][0]) for line in lines.values() if len(line) > 2]


@pytest.mark.parametrize("case", CASES, ids=_ids)
def test_column_numbers_stay_apart(watched, case: tuple[str, str, str]) -> None:
    _, looks = watched[case[1], case[2]]
    for look in looks:
        for line in _column_numbers(look):
            gaps = [(a[0], b[0], b[1][0] - a[1][1]) for a, b in itertools.pairwise(line)]
            close = [f"{a} {b}: {gap:.2f}" for a, b, gap in gaps if gap < COLUMN_GAP]
            assert not close, f"{look.step!r}: column numbers closer than {COLUMN_GAP}: {close}"


@pytest.mark.parametrize("case", [c for c in CASES if c[1] == "CausalMask"], ids=_ids)
def test_the_comparison_title_is_clear_of_its_heads_and_whole_where_it_fits(
        watched, case: tuple[str, str, str]) -> None:
    scenario, looks = watched[case[1], case[2]]
    for look in looks:
        titles = [(content, box) for content, box in look.texts if content.startswith("row ")]
        heads = [box for content, box in look.texts if content in ("no mask", "masked")]
        for content, box in titles:
            top = max((head[3] for head in heads if head[3] < box[3]), default=None)
            assert top is not None and box[2] - top >= TITLE_GAP, f"{content!r} is jammed against its heads"
            token = scenario.tokens[int(content.split()[1]) - 1]
            if len(token) <= 12:
                assert content.endswith(token), f"{content!r}: the token {token!r} cut though it fits"


def test_upright_column_labels_keep_short_tokens_whole(watched) -> None:
    scenario, looks = watched["MatrixForm", "rivers"]
    last = [content for content, _ in looks[-1].texts]
    cut = [token for token in scenario.tokens if last.count(token) < 2]  # its row's label and its column's
    assert not cut, f"column or row labels cut though the frame has room: {cut}"

