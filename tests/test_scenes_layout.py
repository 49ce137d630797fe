"""At the end of every animation of every scene, nothing leaves the frame or enters the subtitles' band (the lowest
0.8 units) and no two texts overlap.

The probe in ``scene_helpers`` runs after every ``play`` (through
``scenes.base.AFTER_PLAY_HOOKS``) of the session's dry runs, which the number tests share. A
visible mobject is one whose own fill or stroke is not fully transparent; text-like mobjects
(Text, MarkupText, Paragraph, MathTex/Tex, DecimalNumber) are compared as wholes. The scenarios
of ``scene_helpers.SCENARIOS``: 2 to 16 tokens, 0 to 4 decimals, d_k/d_v from (1, 1) to (4, 2).
Text is never drawn below the font floor (size 20, which reads at 480p). The last tests prove
the checks catch a deliberately broken scene.
"""

from __future__ import annotations

import pytest
from manim import DOWN, LEFT, RIGHT, UP, FadeIn, Square, VGroup, config
from scene_helpers import LAYOUT_SCENARIOS, SCENES, Build, PlayReport, build_scene, built, scenarios_of

from attention_math import preset
from scenes.base import ExplainerScene
from scenes.kit.text import text

CASES = [
    pytest.param(scene, scenario, id=f"{scene[1]}-{scenario}")
    for scene in SCENES for scenario in scenarios_of(scene[1], LAYOUT_SCENARIOS)
]


def _report(build: Build, kind: str) -> list[str]:
    """One line per distinct problem, with the plays it lasts through."""
    plays: dict[str, list[PlayReport]] = {}
    for play in build.plays:
        for problem in getattr(play, kind):
            plays.setdefault(problem, []).append(play)
    lines = []
    for problem, where in plays.items():
        first, numbers = where[0], [play.number for play in where]
        span = f"play {numbers[0]}" if len(numbers) == 1 else f"plays {_ranges(numbers)}"
        beat = f" (first in beat: {first.beat!r})" if first.beat else ""
        lines.append(f"{build.label}, {span}{beat}: {problem}")
    return lines


def _ranges(numbers: list[int]) -> str:
    """[3, 4, 5, 9] → "3-5, 9"."""
    spans: list[list[int]] = []
    for number in numbers:
        if spans and number == spans[-1][1] + 1:
            spans[-1][1] = number
        else:
            spans.append([number, number])
    return ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in spans)


@pytest.mark.parametrize(("scene", "scenario"), CASES)
def test_everything_visible_stays_in_the_frame(scene_builds, scene: tuple[str, str], scenario: str) -> None:
    build = built(scene_builds, scene, scenario)
    assert build.plays, f"{build.label}: no animation was played"
    problems = _report(build, "outside")
    assert not problems, f"{len(problems)} problem(s):\n" + "\n".join(problems)


@pytest.mark.parametrize(("scene", "scenario"), CASES)
def test_no_two_texts_overlap(scene_builds, scene: tuple[str, str], scenario: str) -> None:
    build = built(scene_builds, scene, scenario)
    problems = _report(build, "overlaps")
    assert not problems, f"{len(problems)} overlap(s):\n" + "\n".join(problems)


@pytest.mark.parametrize(("scene", "scenario"), CASES)
def test_no_text_below_the_font_floor(scene_builds, scene: tuple[str, str], scenario: str) -> None:
    """Every text reads at 480p: nothing drawn below size 20 (digits about 11 px tall)."""
    build = built(scene_builds, scene, scenario)
    problems = _report(build, "small")
    assert not problems, f"{len(problems)} text(s) too small:\n" + "\n".join(problems)


FILL_WIDTH, FILL_HEIGHT = 0.7, 0.4
"""The last frame is a slide: its drawing spans at least this share of the frame's width and of
its height below the header (from the header's band, y = 2.85, to the bottom edge)."""


@pytest.mark.parametrize(("scene", "scenario"), CASES)
def test_the_last_frame_is_a_summary_that_fills_the_frame(scene_builds, scene: tuple[str, str], scenario: str) -> None:
    build = built(scene_builds, scene, scenario)
    width, height = build.plays[-1].extent
    frame_width, below_header = config.frame_width, config.frame_height / 2 + 2.85
    assert width >= FILL_WIDTH * frame_width and height >= FILL_HEIGHT * below_header, (
        f"{build.label}: the last frame's drawing is {width:.2f} × {height:.2f} units, "
        f"{width / frame_width:.0%} of the width and {height / below_header:.0%} of the height below the header "
        f"(at least {FILL_WIDTH:.0%} and {FILL_HEIGHT:.0%})"
    )


@pytest.mark.parametrize(("scene", "scenario"), CASES)
def test_plotted_points_sit_where_their_numbers_say(scene_builds, scene: tuple[str, str], scenario: str) -> None:
    build = built(scene_builds, scene, scenario)
    problems = _report(build, "misplaced")
    assert not problems, f"{len(problems)} misplaced point(s):\n" + "\n".join(problems)


# -- the checker itself ---------------------------------------------------------------------------


class _Broken(ExplainerScene):
    """Two labels on top of each other, one off the right edge, one in the subtitles' band, a square off the bottom."""

    def construct(self) -> None:
        first = text("softmax", size=30)
        second = text("weights", size=30).move_to(first).shift(RIGHT * 0.3 + UP * 0.1)
        off_right = text("off the edge").move_to(RIGHT * 7.3)
        in_band = text("where subtitles go").move_to(DOWN * 3.45)  # inside the frame, in the quiet band
        self.play(FadeIn(VGroup(first, second)))
        self.play(FadeIn(off_right), FadeIn(in_band))
        self.play(FadeIn(Square(1).move_to(DOWN * 4)))


class _Tidy(ExplainerScene):
    """Near-misses the checker must accept: touching boxes, hidden overlaps, a text on its copy."""

    def construct(self) -> None:
        left = text("left", size=30).move_to(LEFT)
        right = text("right", size=30).next_to(left, RIGHT, buff=0.0)  # touching, not overlapping
        hidden = text("hidden", size=30).move_to(left).set_opacity(0)  # fully transparent
        twin = left.copy()  # exactly on top of an identical text: the same pixels
        edge = Square(1).move_to(DOWN * 2.7).to_edge(LEFT, buff=0.0)  # on the frame's edge and the band's, not beyond
        self.play(FadeIn(VGroup(left, right, hidden, twin, edge)))


def test_checker_catches_overlap_and_leaving_the_frame(tmp_path) -> None:
    build = build_scene(_Broken, preset("dog-chased-ball"), tmp_path, "Broken")
    assert build.error is None, build.error
    assert len(build.plays) == 4  # three plays and the end of the scene
    first = build.plays[0]
    assert len(first.overlaps) == 1, first.overlaps
    assert "'softmax'" in first.overlaps[0] and "'weights'" in first.overlaps[0]
    assert first.where("Broken") == "Broken, play 1"
    assert _report(build, "overlaps")[0].startswith("Broken, plays 1-4: texts overlap")
    assert _report(build, "outside")[0].startswith("Broken, plays 2-4: outside the frame")
    assert any("'off the edge'" in p for p in build.plays[1].outside), build.plays[1].outside
    assert any("subtitles' band" in p and "'where subtitles go'" in p for p in build.plays[1].outside)
    assert any("Square" in p for p in build.plays[2].outside), build.plays[2].outside
    assert not any("Square" in p for p in build.plays[1].outside)


def test_checker_accepts_a_tidy_scene(tmp_path) -> None:
    build = build_scene(_Tidy, preset("dog-chased-ball"), tmp_path, "Tidy")
    assert build.error is None, build.error
    for play in build.plays:
        assert play.outside == [] and play.overlaps == [], play
