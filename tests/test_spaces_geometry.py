"""Spaces: no label crosses a drawn line, arrow, dot, ring or axis, at the end of every play.

The shared layout tests check text against text; here each text of the scene is checked against
the marks (dots, rings, lines, arrows and their tips, axes) on screen with it: the text's box
against each mark's outline, sampled along its curves. The query token is labelled in every
space. Built with the scene's test scenarios, three sentences a reviewer rendered (3 tokens with
two equal embeddings; 8 tokens, d_model 4, d_k 3; 15 tokens with a long one) and the hostile
tokens of the lecture-hall test.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest
from manim import Circle, Line, Mobject, Polygon, VMobject
from manim.mobject.geometry.tips import ArrowTip
from reviewed_scenarios import REVIEWED
from scene_helpers import (
    LAYOUT_SCENARIOS,
    SCENARIOS,
    TEXT_TYPES,
    after_every_play,
    curve_box,
    dry_render,
    family_box,
    is_visible,
    load_scene_class,
    one_moment,
    outermost_texts,
    scenarios_of,
    text_of,
    with_scenario,
)

from attention_math import Scenario
from scenes.base import ExplainerScene
from scenes.kit.palette import HIGHLIGHT
from scenes.kit.text import shorten_token

pytestmark = pytest.mark.xdist_group("scene-Spaces-geometry")

Box = tuple[float, float, float, float]

HOSTILE = '<script>window.__pwned=2</script> "); import {{x}} \u05e2\u05d1\u05e8 a\u200bb'
"""The sentence of the lecture-hall test (it renders Spaces): markup, right-to-left, a zero-width space."""

CASES: dict[str, Callable[[], Scenario]] = {
    **{name: SCENARIOS[name] for name in scenarios_of("Spaces", LAYOUT_SCENARIOS)},
    **REVIEWED,
    "hostile": lambda: Scenario.from_sentence(HOSTILE, seed=3),
}

TOLERANCE = 0.015  # a text's box, shrunk by this: glyph boxes are tight, a line grazing one is not a crossing


@dataclass
class Look:
    """The screen at the end of one play: texts by box, marks as polylines (and filled discs)."""

    beat: str
    texts: list[tuple[str, Box, str]] = field(default_factory=list)  # what it says, its box, its colour
    marks: list[tuple[str, np.ndarray, bool]] = field(default_factory=list)  # name, outline points, filled
    planes: list[Box] = field(default_factory=list)  # the sheets of the planes (upright rectangles)


def _is_mark(mob: Mobject) -> bool:
    return isinstance(mob, Line | Circle | ArrowTip) and not isinstance(mob, Polygon) and is_visible(mob)


def _is_plane(mob: Mobject) -> bool:
    """A plane's sheet: a filled rectangle without a stroke, upright (a 3-d view's floor is slanted)."""
    if not isinstance(mob, Polygon) or not is_visible(mob) or mob.stroke_width > 0:
        return False
    corners = np.asarray(mob.get_vertices(), dtype=float)[:, :2]
    return len(corners) == 4 and all(np.isclose(a[0], b[0]) or np.isclose(a[1], b[1])
                                     for a, b in zip(corners, np.roll(corners, 1, axis=0), strict=True))


def _outline(mob: VMobject) -> np.ndarray:
    """Points along the mobject's curves, close enough that a segment between two is straight."""
    points = np.asarray(mob.points, dtype=float)
    if len(points) % 4:
        return points[:, :2]
    curves = points.reshape(-1, 4, 3)
    t = np.linspace(0.0, 1.0, 17)[:, None, None]
    a, b, c, d = (curves[None, :, k, :] for k in range(4))
    samples = (1 - t) ** 3 * a + 3 * (1 - t) ** 2 * t * b + 3 * (1 - t) * t**2 * c + t**3 * d
    return np.transpose(samples, (1, 0, 2)).reshape(-1, 3)[:, :2]


def _walk(mob: Mobject) -> Iterator[Mobject]:
    yield mob
    if not isinstance(mob, TEXT_TYPES):
        for sub in mob.submobjects:
            yield from _walk(sub)


def _look(scene: ExplainerScene) -> Look:
    look = Look(getattr(scene, "current_step", "") or (scene.beats[-1].caption if scene.beats else ""))
    top = [mob for mob in scene.mobjects if not getattr(mob, "is_furniture", False)]
    with one_moment():
        for text in outermost_texts(top):
            box = family_box(text)
            if box is not None:
                look.texts.append((text_of(text), box, str(text.get_color()).upper()))
        for mob in {id(m): m for top_mob in top for m in _walk(top_mob)}.values():
            if _is_plane(mob) and (box := curve_box(mob)) is not None:
                look.planes.append(box)
            if _is_mark(mob) and isinstance(mob, VMobject) and curve_box(mob) is not None:
                filled = float(np.max(mob.get_fill_opacities(), initial=0.0)) > 0
                look.marks.append((f"{type(mob).__name__} at {np.round(mob.get_center()[:2], 2)}", _outline(mob),
                                   filled))
    return look


def _build(scenario: Scenario, media_dir: Path) -> list[Look]:
    cls = with_scenario(load_scene_class("scenes.self_attention.spaces", "Spaces"), scenario)
    looks: list[Look] = []

    def hook(scene: ExplainerScene) -> None:
        if isinstance(scene, cls):
            looks.append(_look(scene))

    with after_every_play(hook):
        scene = dry_render(cls, media_dir)
    looks.append(_look(scene))
    looks[-1].beat = "end of scene"
    return looks


@pytest.fixture(scope="module")
def looks(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], list[Look]]:
    made: dict[str, list[Look]] = {}
    media = tmp_path_factory.mktemp("spaces-geometry")

    def get(name: str) -> list[Look]:
        if name not in made:
            made[name] = _build(CASES[name](), media)
        return made[name]

    return get


def _outline_hits_box(outline: np.ndarray, box: Box) -> bool:
    """Does any segment of the polyline ``outline`` enter the box (Liang–Barsky clipping, all segments at once)?"""
    start, d = outline[:-1, :2], np.diff(outline[:, :2], axis=0)
    t0, t1 = np.zeros(len(d)), np.ones(len(d))
    hit = np.ones(len(d), dtype=bool)
    for axis, (low, high) in enumerate(((box[0], box[1]), (box[2], box[3]))):
        delta, begin = d[:, axis], start[:, axis]
        parallel = np.abs(delta) < 1e-12
        hit &= ~parallel | ((begin >= low) & (begin <= high))  # parallel to this axis: inside its band or never
        step = np.where(parallel, 1.0, delta)
        a, b = (low - begin) / step, (high - begin) / step
        t0 = np.where(parallel, t0, np.maximum(t0, np.minimum(a, b)))
        t1 = np.where(parallel, t1, np.minimum(t1, np.maximum(a, b)))
    return bool(np.any(hit & (t0 <= t1)))


def crossings(look: Look) -> list[str]:
    """Each text whose box a mark's outline enters (or a filled mark covers)."""
    found = []
    for said, box, _ in look.texts:
        inner = (box[0] + TOLERANCE, box[1] - TOLERANCE, box[2] + TOLERANCE, box[3] - TOLERANCE)
        for name, outline, filled in look.marks:
            hit = len(outline) > 1 and _outline_hits_box(outline, inner)
            if not hit and filled:
                centre = outline.mean(axis=0)
                hit = inner[0] <= centre[0] <= inner[1] and inner[2] <= centre[1] <= inner[3]
            if hit:
                found.append(f"{said!r} at x {box[0]:.2f}..{box[1]:.2f}, y {box[2]:.2f}..{box[3]:.2f} "
                             f"is crossed by the {name}")
    return found


def hanging(look: Look) -> list[str]:
    """Each text partly on a plane and partly off it (a label hanging over the edge of its panel)."""
    found = []
    for said, box, _ in look.texts:
        for plane in look.planes:
            overlap = min(box[1], plane[1]) - max(box[0], plane[0]) > TOLERANCE and \
                min(box[3], plane[3]) - max(box[2], plane[2]) > TOLERANCE
            inside = (plane[0] - TOLERANCE <= box[0] and box[1] <= plane[1] + TOLERANCE
                      and plane[2] - TOLERANCE <= box[2] and box[3] <= plane[3] + TOLERANCE)
            if overlap and not inside:
                found.append(f"{said!r} at x {box[0]:.2f}..{box[1]:.2f}, y {box[2]:.2f}..{box[3]:.2f} hangs over the "
                             f"edge of the plane at x {plane[0]:.2f}..{plane[1]:.2f}, y {plane[2]:.2f}..{plane[3]:.2f}")
    return found


def test_the_crossing_check_sees_a_crossing() -> None:
    look = Look("made up", texts=[("dim 1", (0.0, 1.0, 0.0, 0.3), "#FFFFFF")],
                marks=[("Line", np.array([[0.5, -1.0], [0.5, 1.0]]), False),
                       ("Line", np.array([[2.0, -1.0], [2.0, 1.0]]), False)])
    assert crossings(look) == ["'dim 1' at x 0.00..1.00, y 0.00..0.30 is crossed by the Line"]


@pytest.mark.parametrize("case", list(CASES))
def test_no_label_crosses_a_mark(looks: Callable[[str], list[Look]], case: str) -> None:
    problems = [f"play {k + 1} ({look.beat!r}): {problem}" for k, look in enumerate(looks(case))
                for problem in crossings(look)]
    assert not problems, "\n".join(problems[:30])


@pytest.mark.parametrize("case", list(CASES))
def test_no_label_hangs_over_the_edge_of_a_plane(looks: Callable[[str], list[Look]], case: str) -> None:
    problems = [f"play {k + 1} ({look.beat!r}): {problem}" for k, look in enumerate(looks(case))
                for problem in hanging(look)]
    assert not problems, "\n".join(problems[:30])


@pytest.mark.parametrize("case", list(CASES))
def test_the_query_is_labelled_in_every_space(looks: Callable[[str], list[Look]], case: str) -> None:
    """At the end of the one-token beat four spaces are on screen, each with the query's label lit."""
    scenario = CASES[case]()
    one_token = next(look for look in looks(case) if look.beat.startswith(f"One token, '{scenario.query_token}'"))
    name = shorten_token(scenario.query_token)
    lit = [said for said, _, color in one_token.texts if color == HIGHLIGHT.upper() and said == name]
    assert len(lit) == 4, f"the query is labelled by name in {len(lit)} spaces of 4"
