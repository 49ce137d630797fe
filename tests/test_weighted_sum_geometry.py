"""WeightedSum's picture, beyond the shared layout checks: what a reviewer found wrong, checked on screen.

Each scenario is dry-run once (the three sentences of a review, and test scenarios with d_v = 1 and
4); after every play a snapshot notes what is on screen, in the camera's frame (a scene that moves
its camera is judged by what the camera sees). The checks:

* every term shows all d_v components, and each column of terms stands over its entry of z_i;
* "weight" and "value" over the table stand on one baseline;
* a highlight keeps clear of the rows above and below the one it marks;
* a token's name never touches an arrow, an axis or another token's name;
* nothing is drawn in the subtitles' band of the camera's frame, and text there reads at its size;
* while the view is close, every weighted value of some size is an arrow at least 0.6 long;
* at the end z_i can be seen (at least 0.8 long) and the tip-to-tail chain is drawn over it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from manim import Arrow, DashedLine, Line, Mobject, Text, VMobject, config, tempconfig
from manim.utils.color import ManimColor
from manim.utils.family import extract_mobject_family_members
from reviewed_scenarios import REVIEWED_TOML
from scene_helpers import (
    DRY_RUN_SETTINGS,
    SCENARIOS,
    curve_box,
    family_box,
    is_visible,
    no_pixels,
    on_screen,
    one_moment,
    outermost_texts,
    text_of,
    with_scenario,
)

from attention_math import Scenario, load_scenario
from scenes.base import AFTER_PLAY_HOOKS
from scenes.kit.palette import HIGHLIGHT, MUTED
from scenes.weighted_sum import WeightedSum

Box = tuple[float, float, float, float]

CASES = [*REVIEWED_TOML, "default", "sixteen-whole", "seven"]  # and d_v = 1 with whole numbers, d_v = 4
SUBTITLES = -3.2  # the lowest 0.8 units of the camera's frame are the subtitles'
ON_BASELINE = set("abcdefhiklmnorstuvwxz")


@dataclass
class Look:
    """What one play left on screen, in the camera's frame (8 units tall, centred)."""

    caption: str
    texts: list[tuple[str, Box, float, bool, int]] = field(default_factory=list)  # text, box, size, token?, id
    arrows: list[tuple[np.ndarray, np.ndarray, float, Box | None, int]] = field(default_factory=list)
    axes: list[tuple[np.ndarray, np.ndarray]] = field(default_factory=list)
    highlights: list[Box] = field(default_factory=list)
    lowest: tuple[float, str] = (np.inf, "")
    order: list[int] = field(default_factory=list)  # ids in drawing order
    heads: dict[str, float] = field(default_factory=dict)  # baseline of each head over the table


@dataclass
class Run:
    scenario: Scenario
    looks: list[Look]
    facts: dict[int, tuple[str, tuple[int, ...]]]  # id of a shown or plotted mobject: (field, index)


class _Camera:
    """Scene points to the camera frame's points (a scene without a moving camera: the identity)."""

    def __init__(self, scene: Any) -> None:
        frame = getattr(scene.camera, "frame", None)
        self.centre = np.zeros(3) if frame is None else np.asarray(frame.get_center())
        self.zoom = 1.0 if frame is None else config.frame_height / frame.height

    def point(self, p: np.ndarray) -> np.ndarray:
        return (np.asarray(p) - self.centre) * self.zoom

    def box(self, box: Box) -> Box:
        (x0, y0, _), (x1, y1, _) = self.point(np.array([box[0], box[2], 0])), self.point(np.array([box[1], box[3], 0]))
        return (x0, x1, y0, y1)


def _baseline(mob: Text) -> float | None:
    chars = str(mob.text)
    if len(chars) != len(mob.submobjects):
        return None
    bottoms = [g.get_bottom()[1] for ch, g in zip(chars, mob.submobjects, strict=True) if ch in ON_BASELINE]
    return float(np.median(bottoms)) if bottoms else None


def _look(scene: Any) -> Look:
    camera = _Camera(scene)
    look = Look(getattr(scene, "current_step", ""))
    tops = [*scene.mobjects, *scene.foreground_mobjects]
    for mob in outermost_texts(tops):
        box = family_box(mob)
        if box is None:
            continue
        look.texts.append((text_of(mob), camera.box(box), float(mob.font_size) * camera.zoom,
                           getattr(mob, "source_token", None) is not None, id(mob)))
        if isinstance(mob, Text) and text_of(mob) in ("weight", "value"):
            look.heads[text_of(mob)] = float(camera.point(np.array([0, _baseline(mob) or 0, 0]))[1])
    for mob in on_screen(scene):
        _note_shape(look, mob, camera)
    look.order = [id(m) for m in extract_mobject_family_members(tops, use_z_index=True, only_those_with_points=True)]
    return look


def _note_shape(look: Look, mob: Mobject, camera: _Camera) -> None:
    box = curve_box(mob) if is_visible(mob) else None
    if box is None:
        return
    box = camera.box(box)
    if box[2] < look.lowest[0]:
        look.lowest = (box[2], type(mob).__name__)
    if isinstance(mob, Arrow):
        tip = curve_box(mob.tip) if mob.submobjects else None
        look.arrows.append((camera.point(mob.get_start()), camera.point(mob.get_end()),
                            mob.get_stroke_width() / 100 * camera.zoom, camera.box(tip) if tip else None, id(mob)))
    elif isinstance(mob, Line) and not isinstance(mob, DashedLine) and mob.get_stroke_width() >= 1.9 \
            and mob.get_stroke_opacity() > 0.5 and ManimColor(mob.get_stroke_color()) == ManimColor(MUTED):
        look.axes.append((camera.point(mob.get_start()), camera.point(mob.get_end())))
    if isinstance(mob, VMobject) and not isinstance(mob, Text) and any(
            ManimColor(c) == ManimColor(HIGHLIGHT) for c in (mob.get_fill_color(), mob.get_stroke_color())):
        look.highlights.append(box)


_RUNS: dict[str, Run] = {}


def run(name: str, tmp_path_factory: pytest.TempPathFactory) -> Run:
    """The scene dry-run with scenario ``name`` (once per session), a look after every play."""
    if name not in _RUNS:
        folder = tmp_path_factory.mktemp(f"weighted-{name}")
        if name in REVIEWED_TOML:  # read from its file, as the bundle reads it
            (folder / "scenario.toml").write_text(REVIEWED_TOML[name], encoding="utf-8")
            scenario = load_scenario(folder / "scenario.toml")
        else:
            scenario = SCENARIOS[name]()
        _RUNS[name] = _dry_run(scenario, folder)
    return _RUNS[name]


def _dry_run(scenario: Scenario, folder: Path) -> Run:
    scene_class = with_scenario(WeightedSum, scenario)
    looks: list[Look] = []

    def hook(scene: Any) -> None:
        if isinstance(scene, scene_class):
            with one_moment():
                looks.append(_look(scene))

    AFTER_PLAY_HOOKS.append(hook)
    try:
        with tempconfig({**DRY_RUN_SETTINGS, "media_dir": str(folder)}), no_pixels():
            scene = scene_class(skip_animations=True)
            scene.render()
    finally:
        AFTER_PLAY_HOOKS.remove(hook)
    facts = {id(s.mobject): (s.fact.field, tuple(s.fact.index)) for s in scene.shown if s.fact.source == "step"}
    for item in scene.plotted:
        fields = {fact.field for fact in item.coordinates}
        facts[id(item.mobject)] = (fields.pop() if len(fields) == 1 else "", tuple(item.coordinates[0].index))
    return Run(scenario, looks, facts)


# -- geometry ---------------------------------------------------------------------------------------


def _gap(a: Box, b: Box) -> float:
    """The distance between two boxes (negative: they overlap)."""
    return max(a[0] - b[1], b[0] - a[1], a[2] - b[3], b[2] - a[3])


def _to_segment(box: Box, start: np.ndarray, end: np.ndarray) -> float:
    """The distance from a box to a segment (sampled), 0 when they meet."""
    points = start[:2] + np.linspace(0, 1, 60)[:, None] * (end[:2] - start[:2])
    dx = np.maximum(np.maximum(box[0] - points[:, 0], points[:, 0] - box[1]), 0)
    dy = np.maximum(np.maximum(box[2] - points[:, 1], points[:, 1] - box[3]), 0)
    return float(np.min(np.hypot(dx, dy)))


def _shown(run_: Run, look: Look, field_name: str) -> dict[tuple[int, ...], list[Box]]:
    found: dict[tuple[int, ...], list[Box]] = {}
    for _, box, _, _, key in look.texts:
        fact = run_.facts.get(key)
        if fact is not None and fact[0] == field_name:
            found.setdefault(fact[1], []).append(box)
    return found


# -- the checks -------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", CASES)
def test_every_term_shows_all_its_components_and_the_columns_stand_over_z(name, tmp_path_factory) -> None:
    r = run(name, tmp_path_factory)
    last, n, d = r.looks[-1], r.scenario.n_tokens, r.scenario.d_v
    terms, values, z = (_shown(r, last, f) for f in ("weighted_values", "values", "context"))
    missing = [f"{kind}[{j}, {c}]" for kind, found in (("values", values), ("w·v", terms))
               for j in range(n) for c in range(d) if (j, c) not in found]
    assert not missing, f"{name}: the last frame leaves out {missing}"
    assert all((c,) in z for c in range(d)), f"{name}: z is not written with its {d} components"
    for c in range(d):
        edges = [box[1] for j in range(n) for box in terms[(j, c)]] + [box[1] for box in z[(c,)]]
        assert max(edges) - min(edges) < 0.03, f"{name}: column {c + 1} of the terms does not stand over z's entry"


@pytest.mark.parametrize("name", CASES)
def test_the_heads_stand_on_one_baseline(name, tmp_path_factory) -> None:
    heads = run(name, tmp_path_factory).looks[-1].heads
    assert set(heads) == {"weight", "value"}, heads
    assert abs(heads["weight"] - heads["value"]) < 0.01, f"{name}: 'weight' and 'value' on baselines {heads}"


@pytest.mark.parametrize("name", CASES)
def test_a_highlight_keeps_clear_of_the_rows_around(name, tmp_path_factory) -> None:
    """A text whose middle is in a highlight is the highlighted row's; any other keeps clear of it."""
    for number, look in enumerate(run(name, tmp_path_factory).looks):
        for glow in look.highlights:
            for content, box, *_ in look.texts:
                own = glow[0] <= (box[0] + box[1]) / 2 <= glow[1] and glow[2] <= (box[2] + box[3]) / 2 <= glow[3]
                assert own or _gap(glow, box) >= 0.015, (
                    f"{name}, play {number + 1}: a highlight cuts through {content!r} (gap {_gap(glow, box):.3f})")


@pytest.mark.parametrize("name", CASES)
def test_token_names_touch_no_arrow_axis_or_other_name(name, tmp_path_factory) -> None:
    problems = set()
    for look in run(name, tmp_path_factory).looks:
        tokens = [(content, box) for content, box, _, token, _ in look.texts if token]
        for k, (content, box) in enumerate(tokens):
            for start, end, width, tip, _ in look.arrows:
                if _to_segment(box, start, end) < width / 2 + 0.02 or (tip and _gap(box, tip) < 0.02):
                    problems.add(f"{content!r} touches an arrow ({look.caption[:40]!r})")
            for start, end in look.axes:
                if _to_segment(box, start, end) < 0.03:
                    problems.add(f"{content!r} touches an axis ({look.caption[:40]!r})")
            for other, other_box in tokens[k + 1:]:
                if _gap(box, other_box) < 0.03:
                    problems.add(f"{content!r} touches {other!r} ({look.caption[:40]!r})")
    assert not problems, f"{name}:\n" + "\n".join(sorted(problems))


@pytest.mark.parametrize("name", CASES)
def test_the_camera_sees_nothing_in_the_subtitles_band_and_text_at_its_size(name, tmp_path_factory) -> None:
    for number, look in enumerate(run(name, tmp_path_factory).looks):
        assert look.lowest[0] >= SUBTITLES - 0.02, (
            f"{name}, play {number + 1} ({look.caption[:40]!r}): a {look.lowest[1]} reaches y = {look.lowest[0]:.2f}")
        for content, _, size, token, _ in look.texts:
            most = 36 if token else 60
            assert 19.5 <= size <= most, f"{name}, play {number + 1}: {content!r} seen at size {size:.0f}"


@pytest.mark.parametrize("name", CASES)
def test_up_close_every_weighted_value_is_a_visible_arrow(name, tmp_path_factory) -> None:
    r = run(name, tmp_path_factory)
    step = r.scenario.query_step()
    lengths = np.linalg.norm(np.asarray(step.weighted_values)[:, : min(2, r.scenario.d_v)], axis=1)
    sizable = {j for j, length in enumerate(lengths) if length >= 0.15 * lengths.max()}
    best = 0.0
    for look in r.looks:
        drawn = {r.facts[key][1][0]: float(np.linalg.norm(end - start)) for start, end, _, _, key in look.arrows
                 if r.facts.get(key, ("",))[0] == "weighted_values"}
        if sizable <= set(drawn):
            best = max(best, min(drawn[j] for j in sizable))
    assert best >= 0.6, f"{name}: up close, the shortest weighted value is {best:.2f} long"


@pytest.mark.parametrize("name", CASES)
def test_z_is_seen_and_the_chain_is_drawn_over_it(name, tmp_path_factory) -> None:
    r = run(name, tmp_path_factory)
    last = r.looks[-1]
    z = [(start, end, key) for start, end, _, _, key in last.arrows if r.facts.get(key, ("",))[0] == "context"]
    chain = [key for *_, key in last.arrows if r.facts.get(key, ("",))[0] == "running_context"]
    assert len(z) == 1 and len(chain) == r.scenario.n_tokens, (len(z), len(chain))
    start, end, key = z[0]
    step = r.scenario.query_step()
    nothing = np.linalg.norm(step.context[:2]) < 0.05 * np.max(np.linalg.norm(step.values[:, :2], axis=1))
    assert np.linalg.norm(end - start) >= 0.8 or nothing, f"{name}: z is drawn {np.linalg.norm(end - start):.2f} long"
    assert all(last.order.index(key) < last.order.index(link) for link in chain), f"{name}: z is drawn over the chain"
