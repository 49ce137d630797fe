"""ScaleAndSoftmax's table and bars, measured: what the general layout checks let through.

A review found, with three tokens, the weight bars squeezed into about one unit at the right edge
(0.35 and 0.33 looked the same) and their glow 8 px from the frame's edge; and token labels
centred by their boxes, so "canyons" (a descender) stood higher than the numbers of its row. No
text overlapped, so the layout tests passed. Here: the bars get a real width and keep the margin;
every row stands on one baseline; the header band's texts do too, line by line.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from manim import Rectangle, RoundedRectangle, Text, VMobject, config
from scene_helpers import SCENARIOS, dry_render, with_scenario

from scenes.base import ExplainerScene
from scenes.kit.palette import WEIGHT
from scenes.self_attention.softmax import FIELDS, ScaleAndSoftmax

pytestmark = pytest.mark.xdist_group("softmax-geometry")  # one worker builds each scenario once

CHOSEN = ("three", "two-wide", "default", "eight-narrow", "sixteen")  # 2, 3, 5, 8, 16 tokens
MARGIN = 0.3  # from the frame's left, right and top edges
BARS_LEAST = 3.0  # units: a weight difference of 0.02 stays visible at 480p
_ON_BASELINE = frozenset("abcdehiklmnorstuvwxzABCDEFGHIJKLMNOPRSTUVWXYZ0123456789Σ")


def baseline(mob: VMobject) -> float:
    """Where a Pango text's glyphs without descenders stand (measured here, not by the scene)."""
    chars = [ch for ch in getattr(mob, "text", "") if not ch.isspace()]
    bottoms = []
    for ch, glyph in zip(chars, mob.submobjects, strict=False):
        if ch == "f" or not (ch.isascii() or ch in "−÷√Σ≈·"):
            break
        if ch in _ON_BASELINE:
            bottoms.append(float(glyph.get_bottom()[1]))
    assert bottoms, f"no glyph to stand on in {mob.text!r}"
    return float(np.median(bottoms))


_ENDS: dict[str, ExplainerScene] = {}


def finished(name: str, folder: Path) -> ExplainerScene:
    """The scene after a dry run of scenario ``name`` (once per module)."""
    if name not in _ENDS:
        _ENDS[name] = dry_render(with_scenario(ScaleAndSoftmax, SCENARIOS[name]()), folder)
    return _ENDS[name]


@pytest.fixture(params=CHOSEN)
def scene(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> ExplainerScene:
    return finished(request.param, tmp_path_factory.mktemp("softmax"))


def _drawn(scene: ExplainerScene) -> list[VMobject]:
    return [part for top in scene.mobjects for part in top.get_family()]


def test_the_weight_bars_have_room_and_keep_the_margin(scene: ExplainerScene) -> None:
    bars = [mob for mob in _drawn(scene) if isinstance(mob, Rectangle) and not isinstance(mob, RoundedRectangle)
            and mob.get_fill_opacity() > 0 and mob.get_fill_color().to_hex().upper() == WEIGHT.upper()]
    assert len(bars) == scene.scenario.n_tokens
    longest = max(bar.width for bar in bars)
    assert longest >= BARS_LEAST - 1e-6, f"the longest bar is {longest:.2f} units"
    right = config.frame_width / 2 - MARGIN
    for mob in _drawn(scene):
        if not mob.has_points() or (mob.get_stroke_opacity() == 0 and mob.get_fill_opacity() == 0):
            continue
        reach = float(mob.get_right()[0]) + mob.get_stroke_width() * 0.01 / 2  # a stroke's outer half
        assert reach <= right + 1e-6, f"{type(mob).__name__} reaches x = {reach:.2f}, past {right:.2f}"


def test_each_row_stands_on_one_baseline(scene: ExplainerScene) -> None:
    rows: dict[int, list[Text]] = {}
    for shown in scene.shown:
        fact = shown.fact
        in_table = fact.source == "position" or (fact.source == "step" and fact.field in FIELDS)
        if in_table and isinstance(shown.mobject, Text):
            rows.setdefault(fact.index[0], []).append(shown.mobject)
    assert len(rows) == scene.scenario.n_tokens
    for j, texts in rows.items():
        assert len(texts) == len(FIELDS) + 1, f"row {j + 1}: {len(texts)} texts"
        lines = [baseline(text) for text in texts]
        assert max(lines) - min(lines) < 0.01, (
            f"row {j + 1} stands on {len(set(np.round(lines, 3)))} baselines: "
            + ", ".join(f"{text.text!r} {line:.3f}" for text, line in zip(texts, lines, strict=True))
        )


def test_the_headers_stand_on_two_baselines(scene: ExplainerScene) -> None:
    first_row = max(baseline(shown.mobject) for shown in scene.shown if shown.fact.source == "position")
    header = [mob for mob in _drawn(scene) if isinstance(mob, Text) and mob.get_bottom()[1] > first_row + 0.2
              and not getattr(mob, "is_furniture", False) and mob.get_top()[1] < 2.9]
    assert len(header) >= 9, [mob.text for mob in header]
    lines = sorted(baseline(mob) for mob in header)
    groups = [[lines[0]]]
    for line in lines[1:]:
        if line - groups[-1][-1] > 0.05:
            groups.append([line])
        else:
            groups[-1].append(line)
    assert len(groups) == 2 and all(max(g) - min(g) < 0.01 for g in groups), (
        "header baselines: " + ", ".join(f"{mob.text!r} {baseline(mob):.3f}" for mob in header)
    )
