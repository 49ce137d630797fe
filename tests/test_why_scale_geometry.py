"""WhyScale at the end of every beat, measured: what the general layout checks let through.

A review found the first five beats in the top third of the frame (the lower half empty until the
last beat), the axis name "q·k" touching the dots of d = 512, axis texts at the font floor, and
the unscaled weights drawn in vermillion beside the scaled ones in the weights' yellow. No text
overlapped another, so the layout tests passed. Here, after every beat: the drawing spans most of
the safe area, no text comes near a dot, no text is below size 22; and every weight bar is yellow.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from manim import Dot, Rectangle, VMobject, tempconfig
from scene_helpers import (
    DRY_RUN_SETTINGS,
    SCENARIOS,
    family_box,
    no_pixels,
    outermost_texts,
    text_of,
    with_scenario,
)

from scenes.kit.layout import BOTTOM, SAFE_WIDTH, TOP
from scenes.kit.palette import WEIGHT
from scenes.self_attention.why_scale import WhyScale

pytestmark = pytest.mark.xdist_group("why-scale-geometry")

FILL = 0.75  # of the safe area's width and height, at the end of every beat
CLEARANCE = 0.06  # between a text's box and a dot: about 4 px at 480p
LEAST_SIZE = 22  # axis names, ticks, weights and scores: a little above the floor


def _visible(scene: Any) -> list[VMobject]:
    return [part for top in scene.mobjects if not getattr(top, "is_furniture", False) for part in top.get_family()
            if family_box(part) is not None]


def _look(scene: Any) -> dict[str, Any]:
    """What a beat leaves on screen: the drawing's extent, texts sitting on dots, small texts, bars."""
    tops = [top for top in scene.mobjects if not getattr(top, "is_furniture", False)]
    boxes = [box for top in tops if (box := family_box(top)) is not None]
    width = max(b[1] for b in boxes) - min(b[0] for b in boxes)
    height = max(b[3] for b in boxes) - min(b[2] for b in boxes)
    texts = [(mob, family_box(mob)) for mob in outermost_texts(tops) if family_box(mob) is not None]
    dots = [family_box(part) for part in _visible(scene) if isinstance(part, Dot)]
    c = CLEARANCE
    touching = sorted({text_of(mob) for mob, t in texts for d in dots
                       if t[0] - c < d[1] and d[0] < t[1] + c and t[2] - c < d[3] and d[2] < t[3] + c})
    small = sorted({f"{text_of(mob)} ({mob.font_size:.0f})" for mob, _ in texts if mob.font_size < LEAST_SIZE - 0.5})
    bars = {part.get_fill_color().to_hex().upper() for part in _visible(scene)
            if type(part) is Rectangle and part.get_fill_opacity() > 0}
    return {"width": width, "height": height, "touching": touching, "small": small, "bars": bars}


_LOOKS: list[tuple[str, dict[str, Any]]] = []


def _beats(folder: Path) -> list[tuple[str, dict[str, Any]]]:
    """Each beat's caption and what it leaves on screen (one dry run per module)."""
    if not _LOOKS:
        shown = with_scenario(WhyScale, SCENARIOS["default"]())

        def beat(self: Any, caption: str, *animations: Any, **options: Any) -> None:
            shown.beat(self, caption, *animations, **options)  # type: ignore[arg-type]
            _LOOKS.append((caption, _look(self)))

        looked = type("WhyScale", (shown,), {"beat": beat, "__module__": WhyScale.__module__})
        with tempconfig({**DRY_RUN_SETTINGS, "media_dir": str(folder)}), no_pixels():
            looked(skip_animations=True).render()
    return _LOOKS


@pytest.fixture
def beats(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[str, dict[str, Any]]]:
    found = _beats(tmp_path_factory.mktemp("why-scale"))
    assert len(found) == 7, [caption for caption, _ in found]
    return found


def test_every_beat_uses_the_frame(beats: list[tuple[str, dict[str, Any]]]) -> None:
    for caption, look in beats:
        assert look["width"] >= FILL * SAFE_WIDTH and look["height"] >= FILL * (TOP - BOTTOM), (
            f"{caption!r}: the drawing is {look['width']:.2f} × {look['height']:.2f} units"
        )


def test_no_text_touches_a_dot(beats: list[tuple[str, dict[str, Any]]]) -> None:
    for caption, look in beats:
        assert not look["touching"], f"{caption!r}: texts on dots: {look['touching']}"


def test_every_text_reads(beats: list[tuple[str, dict[str, Any]]]) -> None:
    for caption, look in beats:
        assert not look["small"], f"{caption!r}: texts below size {LEAST_SIZE}: {look['small']}"


def test_both_rows_of_weights_are_weights(beats: list[tuple[str, dict[str, Any]]]) -> None:
    caption, last = beats[-1]
    assert last["bars"] == {WEIGHT.upper()}, f"{caption!r}: bars filled {last['bars']}"
