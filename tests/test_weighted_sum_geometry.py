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
* at the end z_i can be seen (at least 0.8 long) and the tip-to-tail chain is drawn over it;

and, after a second review (its three sentences are cases too):

* the query's arrow is always named; with six tokens or fewer, a name the chain showed stays after the pull-back;
* a name is nearer its own arrow than any other's (the query's may not be: its arrow can lie along another's),
  and names keep 0.18 apart (not stacked);
* neither axis of the plane collapses (two tokens' points almost on one line);
* z's name keeps clear of the axes and the arrows;
* every row whose shown weight is the top one as shown glows (tied rows all glow; when every row ties, the
  caption names no leader), on a band on which the rows' text keeps its contrast;
* z under the chain is not so much wider that it buries the chain.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from manim import Arrow, DashedLine, Line, Mobject, RoundedRectangle, Text, config
from manim.utils.color import ManimColor
from manim.utils.family import extract_mobject_family_members
from reviewed_scenarios import ENGINEERS_ROWS, REVIEWED_TOML
from scene_helpers import (
    SCENARIOS,
    after_every_play,
    curve_box,
    dry_render,
    family_box,
    is_visible,
    on_screen,
    one_moment,
    outermost_texts,
    text_of,
    with_scenario,
)

from attention_math import Scenario, load_scenario
from scenes.kit.palette import BACKGROUND, INK, MUTED
from scenes.self_attention.weighted_sum import WeightedSum

Box = tuple[float, float, float, float]

SECOND_REVIEW = {  # a second review's sentences: 2 tokens whose weights tie as shown; d_model 4, d_k 3; 16 tokens
    "owls": """title = "Owls listen"
tokens = ["Owls", "listen"]
embeddings = [
  [0.3, 0.8, 0.6],
  [-0.5, -0.4, 0.7],
]
w_query = [
  [-1.0, 0.6],
  [0.6, -0.1],
  [-0.4, -0.4],
]
w_key = [
  [-0.5, -0.1],
  [0.0, 0.1],
  [1.0, 0.6],
]
w_value = [
  [0.2, 1.0],
  [-0.6, -0.7],
  [0.2, -0.9],
]
query = 2
precision = 2
scaled = true
""",
    "foxes": """title = "Quiet foxes cross frozen rivers tonight"
tokens = ["Quiet", "foxes", "cross", "frozen", "rivers", "tonight"]
embeddings = [
  [-0.7, 0.0, 0.2, -0.9],
  [-0.7, 0.9, -0.9, -0.7],
  [0.9, 0.2, -0.3, 0.0],
  [0.3, -0.4, -0.7, 0.6],
  [0.3, 0.0, 0.6, 0.1],
  [1.0, -0.6, 0.1, 0.0],
]
w_query = [
  [-0.3, 0.2, -0.5],
  [0.6, 0.7, -0.7],
  [-0.1, -0.4, -0.8],
  [0.8, -0.1, -0.7],
]
w_key = [
  [0.3, -0.6, 0.8],
  [-0.6, -0.9, -0.6],
  [-0.3, -0.1, 0.8],
  [0.4, -0.3, -1.0],
]
w_value = [
  [-0.7, 1.0],
  [-0.1, 0.4],
  [-0.9, -0.9],
  [0.7, 0.2],
]
query = 5
precision = 2
scaled = true
""",
    "cartographers": """title = "Extraordinarily patient cartographers (16 tokens)"
tokens = ["Extraordinarily", "patient", "cartographers", "meticulously", "documented", "uncharted", "archipelagos",
          "while", "enthusiastic", "volunteers", "photographed", "bioluminescent", "jellyfish", "near", "crumbling",
          "lighthouses"]
embeddings = [
""" + ENGINEERS_ROWS + """  [0.0, 0.0, -0.5],
]
w_query = [
  [-1.0, 0.9],
  [-0.8, 0.7],
  [-0.3, 0.9],
]
w_key = [
  [-0.2, 0.9],
  [0.1, -0.5],
  [0.5, 0.3],
]
w_value = [
  [0.4, -0.1],
  [-0.6, 0.3],
  [-0.8, 0.4],
]
query = 13
precision = 2
scaled = true
""",
}
SCENARIO_FILES = {**REVIEWED_TOML, **SECOND_REVIEW}
CASES = [*SCENARIO_FILES, "default", "sixteen-whole", "seven"]  # and d_v = 1 with whole numbers, d_v = 4
# every test of one case on one worker of ``pytest -n``, which dry-runs the case once (:func:`run`)
CASE_PARAMS = [pytest.param(name, marks=pytest.mark.xdist_group(f"weighted-sum-{name}")) for name in CASES]
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
    names: dict[int, int] = field(default_factory=dict)  # id of a token's name in value space: the token it names
    glows: list[tuple[Box, str, float]] = field(default_factory=list)  # a highlight: box, fill colour, fill opacity
    colors: dict[int, str] = field(default_factory=dict)  # id of a text: its colour


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
        look.colors[id(mob)] = ManimColor(mob.get_color()).to_hex()
        if getattr(mob, "names_token", None) is not None:
            look.names[id(mob)] = int(mob.names_token)
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
    if isinstance(mob, RoundedRectangle) and mob.get_fill_opacity() > 0 and \
            ManimColor(mob.get_stroke_color()) == ManimColor(INK):  # a glow behind rows
        look.highlights.append(box)
        look.glows.append((box, ManimColor(mob.get_fill_color()).to_hex(), float(mob.get_fill_opacity())))


_RUNS: dict[str, Run] = {}


def run(name: str, tmp_path_factory: pytest.TempPathFactory) -> Run:
    """The scene dry-run with scenario ``name`` (once per session), a look after every play."""
    if name not in _RUNS:
        folder = tmp_path_factory.mktemp(f"weighted-{name}")
        if name in SCENARIO_FILES:  # read from its file, as the bundle reads it
            (folder / "scenario.toml").write_text(SCENARIO_FILES[name], encoding="utf-8")
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

    with after_every_play(hook):
        scene = dry_render(scene_class, folder)
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


@pytest.mark.parametrize("name", CASE_PARAMS)
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


@pytest.mark.parametrize("name", CASE_PARAMS)
def test_the_heads_stand_on_one_baseline(name, tmp_path_factory) -> None:
    heads = run(name, tmp_path_factory).looks[-1].heads
    assert set(heads) == {"weight", "value"}, heads
    assert abs(heads["weight"] - heads["value"]) < 0.01, f"{name}: 'weight' and 'value' on baselines {heads}"


@pytest.mark.parametrize("name", CASE_PARAMS)
def test_a_highlight_keeps_clear_of_the_rows_around(name, tmp_path_factory) -> None:
    """A text whose middle is in a highlight is the highlighted row's; any other keeps clear of it."""
    for number, look in enumerate(run(name, tmp_path_factory).looks):
        for glow in look.highlights:
            for content, box, *_ in look.texts:
                own = glow[0] <= (box[0] + box[1]) / 2 <= glow[1] and glow[2] <= (box[2] + box[3]) / 2 <= glow[3]
                assert own or _gap(glow, box) >= 0.015, (
                    f"{name}, play {number + 1}: a highlight cuts through {content!r} (gap {_gap(glow, box):.3f})")


@pytest.mark.parametrize("name", CASE_PARAMS)
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


@pytest.mark.parametrize("name", CASE_PARAMS)
def test_the_camera_sees_nothing_in_the_subtitles_band_and_text_at_its_size(name, tmp_path_factory) -> None:
    for number, look in enumerate(run(name, tmp_path_factory).looks):
        assert look.lowest[0] >= SUBTITLES - 0.02, (
            f"{name}, play {number + 1} ({look.caption[:40]!r}): a {look.lowest[1]} reaches y = {look.lowest[0]:.2f}")
        for content, _, size, token, _ in look.texts:
            most = 36 if token else 60
            assert 19.5 <= size <= most, f"{name}, play {number + 1}: {content!r} seen at size {size:.0f}"


@pytest.mark.parametrize("name", CASE_PARAMS)
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


@pytest.mark.parametrize("name", CASE_PARAMS)
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


# -- a second review: names kept, a plane that does not collapse, z's name clear, ties, a readable band ---------

TOKEN_FIELDS = ("values", "weighted_values", "running_context")


def _token_arrows(r: Run, look: Look) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """Token j's arrow on screen (its value, weighted value or link of the chain)."""
    return {r.facts[key][1][0]: (start, end) for start, end, _, _, key in look.arrows
            if r.facts.get(key, ("",))[0] in TOKEN_FIELDS}


def _beat(r: Run, opening: str) -> Look:
    return next(look for look in r.looks if look.caption.startswith(opening))


@pytest.mark.parametrize("name", CASE_PARAMS)
def test_the_query_is_always_named_and_names_shown_before_the_pull_back_stay(name, tmp_path_factory) -> None:
    """The scene is about the query's token: wherever every token's arrow is drawn, the query's is named. With six
    tokens or fewer (room for every name in the plane beside the table), a name the chain showed is shown again
    after the pull-back."""
    r = run(name, tmp_path_factory)
    query = r.scenario.query
    for number, look in enumerate(r.looks):
        if len(_token_arrows(r, look)) == r.scenario.n_tokens:
            assert query in look.names.values(), (
                f"{name}, play {number + 1} ({look.caption[:40]!r}): the query's arrow is not named")
    if r.scenario.n_tokens > 6:
        return
    before, after = (set(_beat(r, opening).names.values()) for opening in ("Laid tip to tail", "The columns add up"))
    lost = [r.scenario.tokens[j] for j in sorted(before - after)]
    assert not lost, f"{name}: the pull-back loses the names of {lost}"


@pytest.mark.parametrize("name", CASE_PARAMS)
def test_each_name_is_nearest_its_own_arrow_and_names_keep_apart(name, tmp_path_factory) -> None:
    r = run(name, tmp_path_factory)
    problems = set()
    for look in r.looks:
        if look.caption.startswith("Each arrow shrinks"):  # the names stay, dimmed, by the full values' ghosts
            continue
        arrows = _token_arrows(r, look)
        boxes = {key: box for _, box, _, _, key in look.texts if key in look.names}
        for key, box in boxes.items():
            j = look.names[key]
            distance = {k: _to_segment(box, *segment) for k, segment in arrows.items()}
            nearer = min(distance.values()) < distance[j] - 0.01 and j != r.scenario.query  # (the query's is
            if j in distance and (distance[j] > 0.8 or nearer):  # always shown: its arrow may lie along another's)
                problems.add(f"{r.scenario.tokens[j]!r} is {distance[j]:.2f} from its arrow, nearer another's "
                             f"({look.caption[:30]!r})")
        keys = list(boxes)
        for a, key in enumerate(keys):
            for other in keys[a + 1:]:
                if _gap(boxes[key], boxes[other]) < 0.18:
                    problems.add(f"{r.scenario.tokens[look.names[key]]!r} and "
                                 f"{r.scenario.tokens[look.names[other]]!r} stacked ({look.caption[:30]!r})")
    assert not problems, f"{name}:\n" + "\n".join(sorted(problems))


@pytest.mark.parametrize("name", CASE_PARAMS)
def test_the_plane_keeps_a_readable_shape(name, tmp_path_factory) -> None:
    """Neither axis collapses (two tokens' values can lie almost on one line): the shorter is at least 0.45 of
    the longer, and 1 unit long."""
    r = run(name, tmp_path_factory)
    if r.scenario.d_v == 1:
        return
    for number, look in enumerate(r.looks):
        spans = [float(np.linalg.norm(end[:2] - start[:2])) for start, end in look.axes]
        if len(spans) >= 2:
            short, long = min(spans[:2]), max(spans[:2])
            assert short >= max(0.45 * long, 1.0), (
                f"{name}, play {number + 1} ({look.caption[:40]!r}): axes {short:.2f} and {long:.2f} long")


@pytest.mark.parametrize("name", CASE_PARAMS)
def test_zs_name_keeps_clear_of_axes_and_arrows(name, tmp_path_factory) -> None:
    r = run(name, tmp_path_factory)
    last = r.looks[-1]
    tags = [box for content, box, *_ in last.texts if content.startswith("z_{") and "sum" not in content]
    assert len(tags) == 1, tags
    tag = tags[0]
    for start, end in last.axes:
        assert _to_segment(tag, start, end) >= 0.15, f"{name}: z's name {_to_segment(tag, start, end):.2f} from an axis"
    for start, end, width, tip, key in last.arrows:
        gap = _to_segment(tag, start, end) - width / 2
        assert gap >= 0.12 and (tip is None or _gap(tag, tip) >= 0.12), (
            f"{name}: z's name {gap:.2f} from the arrow of {r.facts.get(key, ('?',))[0]}")


def _luminance(hex_colour: str) -> float:
    channels = [int(hex_colour.lstrip("#")[k:k + 2], 16) / 255 for k in (0, 2, 4)]
    linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def _contrast(a: float, b: float) -> float:
    return (max(a, b) + 0.05) / (min(a, b) + 0.05)


@pytest.mark.parametrize("name", CASE_PARAMS)
def test_the_highlight_marks_every_top_weight_as_shown_and_keeps_its_rows_readable(name, tmp_path_factory) -> None:
    """Every row whose shown weight is the top shown weight glows (shown numbers that tie name no single winner,
    nor does the caption); on the band each text keeps 85 % of its contrast and at least 4.5 : 1."""
    r = run(name, tmp_path_factory)
    last = r.looks[-1]
    shown = {r.facts[key][1][0]: content for content, _, _, _, key in last.texts
             if r.facts.get(key, ("",))[0] == "weights"}
    top = shown[r.scenario.query_step().top_key]
    weights = _shown(r, last, "weights")
    lit = {j for (j,), boxes in weights.items() for box in boxes for glow in last.highlights
           if glow[0] <= (box[0] + box[1]) / 2 <= glow[1] and glow[2] <= (box[2] + box[3]) / 2 <= glow[3]}
    tops = {j for j, content in shown.items() if content == top}
    if len(tops) == r.scenario.n_tokens > 1:  # every weight ties: no row leads, none glows
        assert "leaning toward" not in last.caption, f"{name}: the weights tie, yet {last.caption!r}"
        tops = set()
    assert lit == tops, f"{name}: lit {lit}, shown weights {shown}"
    for box, fill, opacity in last.glows:
        band = [opacity * int(fill[k:k + 2], 16) + (1 - opacity) * int(BACKGROUND[k:k + 2], 16) for k in (1, 3, 5)]
        under = _luminance("#" + "".join(f"{round(c):02x}" for c in band))
        for content, text_box, _, _, key in last.texts:
            middle = ((text_box[0] + text_box[1]) / 2, (text_box[2] + text_box[3]) / 2)
            if box[0] <= middle[0] <= box[1] and box[2] <= middle[1] <= box[3]:
                ink = _luminance(last.colors[key])
                on_band, off_band = _contrast(ink, under), _contrast(ink, _luminance(BACKGROUND))
                assert on_band >= max(4.5, 0.85 * off_band), (
                    f"{name}: {content!r} on the highlight at contrast {on_band:.2f} (off it {off_band:.2f})")


@pytest.mark.parametrize("name", CASE_PARAMS)
def test_z_under_the_chain_leaves_the_chain_seen(name, tmp_path_factory) -> None:
    """Where the chain runs along z (many tokens: nearly one line), z is not so much wider that it buries it."""
    r = run(name, tmp_path_factory)
    last = r.looks[-1]
    z = [width for *_, width, _, key in last.arrows if r.facts.get(key, ("",))[0] == "context"]
    chain = [width for *_, width, _, key in last.arrows if r.facts.get(key, ("",))[0] == "running_context"]
    assert max(chain) >= 0.6 * z[0], f"{name}: z drawn {z[0]:.3f} wide under a chain {max(chain):.3f} wide"
