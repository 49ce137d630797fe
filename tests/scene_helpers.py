"""Shared machinery of the scene tests: scenarios, one dry run per (scene, scenario), checkers.

A scene is built once per test session and scenario (:func:`build_scene`), as a dry run with
``skip_animations`` (every animation jumps to its end state: the same states as a full dry run,
without drawing intermediate frames). A probe hooked into :data:`scenes.base.AFTER_PLAY_HOOKS`
looks at the screen after every ``play``: mobjects outside the frame, text that overlaps,
numbers drawn without being recorded, numbers standing in another token's (or dimension's) row
or column than their own (:func:`bands_seen`, ``number_checks.placements``), and every mobject
ever on screen. The number checks (:func:`number_problems`) re-derive each recorded number from
the trace, independently of the scene's own formatting, and say where one stood out of place.

The checkers are plain functions so that ``test_scenes_layout`` and ``test_scenes_numbers`` can
prove they catch deliberately broken scenes.
"""

from __future__ import annotations

import importlib
import os
import sys
import traceback
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from manim import (
    DecimalNumber,
    MarkupText,
    Mobject,
    Paragraph,
    SingleStringMathTex,
    Text,
    Transform,
    VMobject,
    config,
    tempconfig,
)
from manim.renderer.cairo_renderer import CairoRenderer
from number_checks import (
    BandsSeen,
    Placement,
    belongs_to,
    canonical,
    caption_problems,
    declared_checks,
    derive_all,
    describe_fact,
    is_shortened,
    place_problems,
    placements,
    plotted_problems,
    relation_problems,
    shown_problems,
    stray_digits,
)

from attention_math import DEFAULT_PRESET, Scenario, preset, train_attention
from attention_math.scenario import ModelChoice
from scenes.base import AFTER_PLAY_HOOKS, Bands, Beat, ExplainerScene, Fact, Plotted, Relation, Shown
from scenes.kit.layout import BOTTOM
from scenes.registry import lectures

REPO = Path(__file__).resolve().parents[1]

# -- scenarios ------------------------------------------------------------------------------


def drawn(
    tokens: str, *, d_in: int, d_k: int, d_v: int, seed: int, precision: int, decimals: int = 1,
    query: int | None = None, low: float = -1.0,
) -> Scenario:
    """A scenario of the given sizes whose inputs are drawn (seeded) from [low, 1] at ``decimals``."""
    rng = np.random.default_rng(seed)

    def draw(rows: int, columns: int) -> np.ndarray:
        return np.round(rng.uniform(low, 1.0, size=(rows, columns)), decimals) + 0.0

    words = tuple(tokens.split())
    n = len(words)
    return Scenario(title=tokens, tokens=words, embeddings=draw(n, d_in), w_query=draw(d_in, d_k),
                    w_key=draw(d_in, d_k), w_value=draw(d_in, d_v), query=query, precision=precision)


def _read_back_scenario(seed: int, scene: str) -> Scenario:
    from frame_reading import fresh_scenario_for  # the sweep's own draw (seeded): the same scenario every run

    return fresh_scenario_for(seed, scene)


def _whole(tokens: str, *, d_in: int, d_k: int, d_v: int, seed: int, query: int | None = None) -> Scenario:
    """Whole-number inputs shown with 0 decimals, as a lecturer picks them for a board."""
    rng = np.random.default_rng(seed)
    words = tuple(tokens.split())

    def draw(rows: int, columns: int) -> np.ndarray:
        return rng.integers(-2, 3, size=(rows, columns)).astype(float)

    return Scenario(title=tokens, tokens=words, embeddings=draw(len(words), d_in), w_query=draw(d_in, d_k),
                    w_key=draw(d_in, d_k), w_value=draw(d_in, d_v), query=query, precision=0)


SIXTEEN = "Attention lets every token look back at all the others and choose what matters most here"
TWELVE = "The quick brown fox jumps over the extraordinarily lazy dog near water"

SCENARIOS: dict[str, Callable[[], Scenario]] = {
    "default": lambda: preset(DEFAULT_PRESET),
    "three": lambda: Scenario.from_sentence("the cat sat", seed=1, precision=1),  # rounded: 1 decimal of 2
    "seven": lambda: Scenario.from_sentence("one two three four five six seven", seed=3, d_model=6, d_k=4),
    "eight-narrow": lambda: drawn("a quick brown fox extraordinarily jumps over dogs", d_in=2, d_k=1, d_v=1, seed=8,
                                  precision=2, query=5),
    "two-wide": lambda: drawn("attention works", d_in=4, d_k=2, d_v=3, seed=2, precision=4, decimals=2, low=0.0),
    "five-whole": lambda: _whole("The dog chased the ball", d_in=3, d_k=2, d_v=3, seed=5),
    "twelve": lambda: drawn(TWELVE, d_in=3, d_k=4, d_v=2, seed=12, precision=2, query=8),
    "sixteen": lambda: drawn(SIXTEEN, d_in=3, d_k=2, d_v=3, seed=16, precision=4, decimals=2, low=0.0),
    "sixteen-whole": lambda: _whole(SIXTEEN, d_in=2, d_k=1, d_v=1, seed=6, query=3),
    "saturation": lambda: preset("softmax-saturation"),  # a query 710 long, keys of length 1
    "two": lambda: Scenario.from_sentence("Hello world", seed=4),  # a tall, thin query/key picture
    "masked-dog": lambda: preset("masked-dog"),  # the masked lecture's: a middle token, whose row the mask changes
    "two-first": lambda: Scenario.from_sentence("Hello world", seed=4, query=1),  # the first token: only itself
    # the learned lecture's: its preset, and the weights another training run learned (seed 5, 40 steps of 0.5)
    "learned": lambda: preset("learned"),
    "learned-other": lambda: train_attention(5, steps=40, learning_rate=0.5).scenario(query=2),
    "rope-dog": lambda: preset("rope-dog"),  # the rope lecture's: d_k 4, two pairs to turn
    # a typed sentence of 10 short words (render --sentence): colours only, row labels ("1 In") narrower than the
    # "colours only" note over them
    "ten-short": lambda: Scenario.from_sentence("In 2024, the cat saw men run on the sea."),
    # the read-back sweep's seed 27 (docs/readback.md): d_k 2 at 4 decimals, a query of −1.8501 and −0.0831, whose
    # numbers ran into each other in RopePairs' columns of 1.45
    "rope-wide": lambda: _read_back_scenario(27, "RopePairs"),
}
"""Scenarios every scene is built with, by test id: 2 to 16 tokens, 0 to 4 decimals (one rounded), d_k/d_v from
(1, 1) to (4, 2), and (2, 3), with long tokens and whole numbers, and a query hundreds of times longer than its
keys."""

LAYOUT_SCENARIOS = tuple(SCENARIOS)
NUMBER_SCENARIOS = LAYOUT_SCENARIOS  # the numbers are checked on every build the layout tests make

def shared(scenario: Scenario, kv_heads: int) -> Scenario:
    """``scenario`` whose heads share ``kv_heads`` key/value heads: each group of neighbouring heads takes its first
    head's W_K and W_V (grouped-query attention's groups)."""
    size = scenario.n_heads // kv_heads
    first = [i - i % size for i in range(scenario.n_heads)]
    return replace(scenario, w_key=scenario.w_key[first], w_value=scenario.w_value[first])


HEADS_SCENARIOS: dict[str, Callable[[], Scenario]] = {
    "two-heads": lambda: preset("two-heads"),
    "three-heads-eight": lambda: Scenario.from_sentence("a cat sat on the mat and purred", seed=7, heads=3, query=3),
    "two-heads-sixteen": lambda: Scenario.from_sentence(SIXTEEN, seed=16, d_k=2, d_v=3, heads=2, precision=2,
                                                        query=9),
    "two-heads-two": lambda: Scenario.from_sentence("Hello world", seed=4, heads=2),  # a tie in head 1 as shown
    "five-heads-twelve": lambda: Scenario.from_sentence(TWELVE, seed=12, heads=5, query=8),  # more heads than drawn
    # 16 tokens at 4 decimals, d_in 6: X and the matrices by their shapes, z as columns beside the table
    "two-heads-sixteen-wide": lambda: Scenario.from_sentence(SIXTEEN, seed=3, d_model=6, d_k=2, d_v=2, heads=2,
                                                             precision=4),
    # the efficient form's and the causal heads' sizes: 2 tokens; 12 tokens through 6 heads (4 drawn)
    "two-tokens-heads": lambda: Scenario.from_sentence("Hello world", seed=4, d_k=1, heads=3, precision=3),
    "six-heads-twelve": lambda: Scenario.from_sentence(TWELVE, seed=12, heads=6, d_model=4, query=9),
    "grouped-dog": lambda: preset("grouped-dog"),  # the inference lecture's: 4 query heads sharing 2 key/value heads
    # grouped-query attention with 12 tokens (6 query heads, 2 key/value heads), multi-query with 16 at 4 decimals
    "grouped-twelve": lambda: shared(Scenario.from_sentence(TWELVE, seed=12, heads=6, query=8), 2),
    "multi-query-sixteen": lambda: shared(Scenario.from_sentence(SIXTEEN, seed=16, d_k=2, d_v=3, heads=4,
                                                                 precision=4, query=9), 1),
}
"""Several heads: only for the scenes that name them in :data:`OWN_SCENARIOS` (the multi-head lecture's)."""
SCENARIOS.update(HEADS_SCENARIOS)

MODEL_SENTENCE_LONG = "The quick brown fox jumps over the lazy dog near the riverbank."  # 16 WordPieces, ##bank
SMOLLM2_SENTENCE_LONG = "In 2024, the quick brown fox jumped over lazy dogs."  # 16 tokens: a space, 4 digits
MODEL_SCENARIOS: dict[str, Callable[[], Scenario]] = {
    "minilm-four": lambda: Scenario.from_model(ModelChoice("minilm", "Hello there!", layer=1, head=1)),
    "minilm-eight": lambda: Scenario.from_model(ModelChoice("minilm", "The dog chased the ball.", layer=3, head=4),
                                                query="dog"),
    "minilm-sixteen": lambda: Scenario.from_model(ModelChoice("minilm", MODEL_SENTENCE_LONG, layer=6, head=12),
                                                  query="fox"),
    "smollm2-six": lambda: Scenario.from_model(ModelChoice("smollm2", "The dog chased the ball.", layer=3, head=4),
                                               query="dog"),
    "smollm2-sixteen": lambda: Scenario.from_model(ModelChoice("smollm2", SMOLLM2_SENTENCE_LONG, layer=30, head=9)),
}
"""A real model's heads (all-MiniLM-L6-v2; SmolLM2-135M-Instruct, a decoder): only for the real-head scenes
(:data:`OWN_SCENARIOS`); 4, 8 and 16 WordPieces, the first layer and head, a middle one and the last; SmolLM2's 6
and 16 tokens, a middle layer and head, and the last."""
SCENARIOS.update(MODEL_SCENARIOS)
DECODER_SCENARIOS = ("smollm2-six", "smollm2-sixteen")
"""A decoder's heads (SmolLM2), for the scenes of the masked, inference and rope lectures that draw one."""

OWN_SCENARIOS: dict[str, tuple[str, ...]] = {
    "RawDotProducts": ("default", "sixteen"),  # it always shows its own preset: the scenario changes nothing
    "WhyScale": ("default", "sixteen"),  # it shows the sampler, never the scenario
    # heads, 12 tokens through 6 heads (4 drawn), and one head
    "MultiHead": ("two-heads", "three-heads-eight", "two-heads-sixteen", "six-heads-twelve", "default"),
    # the masked lecture: its preset (a middle token, whose row the mask changes), 2 tokens asking about the first,
    # 12 about the ninth (colours only); the context also asks about a last token (the mask changes nothing) and
    # with d_v 1 (a row per arrow), dropout with 16 tokens at 4 decimals (its widest panel) and SmolLM2's 16 (its
    # labels "14 lazy" over "15 dogs": a descender over an ascender, a row apart)
    "MaskedContext": ("default", "masked-dog", "two-first", "twelve", "sixteen-whole", *DECODER_SCENARIOS),
    "AttentionDropout": ("masked-dog", "two-first", "twelve", "sixteen", *DECODER_SCENARIOS),
    "TriangularMap": ("masked-dog", "two-first", "twelve", *DECODER_SCENARIOS),
    # and a decoder's head (SmolLM2): 6 tokens asking about the second, and 16 about the last (colours only)
    "GenerationOrder": ("default", "three", "sixteen", "masked-dog", "two", *DECODER_SCENARIOS),
    "MaskedScores": ("default", "three", "sixteen", "masked-dog", "two", "twelve", "ten-short", *DECODER_SCENARIOS),
    "Renormalise": ("default", "three", "sixteen", "masked-dog", "two", *DECODER_SCENARIOS),
    # 2, 5, 12 and 16 tokens; 2 and 5 heads (more than drawn); one head
    "WhyHeads": ("two-heads", "two-heads-two", "five-heads-twelve", "two-heads-sixteen-wide", "default"),
    "PerHead": ("two-heads", "two-heads-two", "five-heads-twelve", "two-heads-sixteen-wide", "default"),
    # 2, 5 and 12 tokens (12 through more heads than drawn), and one head
    "FusedProjection": ("two-heads", "two-tokens-heads", "six-heads-twelve", "default"),
    "CausalHeads": ("two-heads", "two-tokens-heads", "six-heads-twelve", "default"),
    "RealWeights": tuple(MODEL_SCENARIOS),  # a model's heads: 4, 8 and 16 WordPieces; SmolLM2's 6 and 16 tokens
    # the two ends (8 WordPieces: their control frames, stills and planted faults), and SmolLM2's
    **dict.fromkeys(("RealHeadPlace", "RealProjection"), ("minilm-four", "minilm-sixteen", "smollm2-six",
                                                         "smollm2-sixteen")),
    # the learned lecture: the training scenes show the training run whatever the scenario (tests/test_learned.py
    # builds them with another run too); the pipeline its preset, another run's weights asking about the first "it",
    # 2, 5 (whole numbers) and 12 tokens (the words beside the table)
    "TrainingSteps": ("learned",),
    "LearnedWeights": ("learned",),
    "LearnedPipeline": ("learned", "learned-other", "two", "five-whole", "twelve"),
    # the rope lecture (RoPE needs an even d_k): its preset, 2 tokens, 12 tokens (colours only) with d_k 4
    "OrderBlind": ("rope-dog", "two", "twelve", "ten-short", *DECODER_SCENARIOS),
    # one pair (d_k 2) and two; its table is the query's alone; a decoder's head: its first two pairs and its last
    "RopePairs": ("rope-dog", "two", "twelve", "rope-wide", *DECODER_SCENARIOS),
    # one plane (d_k 2) and two; the key before the query (the ninth); a decoder's head: its first and last pair
    "ClockHands": ("rope-dog", "two", "twelve", *DECODER_SCENARIOS),
    "RopeScores": ("rope-dog", "two", "twelve", "ten-short", *DECODER_SCENARIOS),
    # the inference lecture: its preset (head 1 of four), 2 tokens, 12 and 16 (d_v 3, the widest rows it draws)
    # and a decoder's head (SmolLM2): the model's own run, its prompt at once, then 5 and 2 tokens it writes
    "KVCacheSteps": ("grouped-dog", "two", "five-heads-twelve", "two-heads-sixteen", *DECODER_SCENARIOS),
    # 16 tokens, the widest counts; a decoder's head (SmolLM2: 576 → 64, six-digit counts)
    "CacheSavings": ("grouped-dog", "two", "five-heads-twelve", "sixteen", *DECODER_SCENARIOS),
    # 2 query heads per key/value head, one head (nothing to share), 3 per key/value head with 12 tokens, all 4 on
    # one (multi-query) with 16 tokens at 4 decimals (the tallest table, four columns); a decoder's layer (SmolLM2:
    # 9 query heads on 3), 6 tokens asking about the second (group 2), 16 about the fifteenth (group 3)
    "GroupedHeads": ("grouped-dog", "two", "grouped-twelve", "multi-query-sixteen", *DECODER_SCENARIOS),
    "CacheMemory": ("grouped-dog", *DECODER_SCENARIOS),  # published models; a decoder scenario's own model too
    # the flash-attention lecture: lecture 6's preset (tiles of 2 over 5 keys: the last one shorter), 2 tokens (one
    # tile), 16 at 4 decimals with d_v 3 (the values left out, the most tiles; the geometry test builds 12 tokens)
    "MemoryRoutes": ("default", "two"),
    "OnlineSoftmax": ("default", "two", "sixteen"),
    "TiledTraffic": ("default", "two", "sixteen"),
}
"""Scenes tested with fewer scenarios than the rest, and why."""


def _declared_scenarios() -> tuple[dict[str, Callable[[], Scenario]], dict[str, tuple[str, ...]]]:
    """The test scenarios the lectures declare with their checks (``LectureChecks.scenarios``), and which of them
    each of their scenes is built with; a name taken twice is refused."""
    made: dict[str, Callable[[], Scenario]] = {}
    own: dict[str, tuple[str, ...]] = {}
    for item, checks in declared_checks():
        taken = (set(SCENARIOS) | set(made)) & set(checks.scenarios)
        if taken:
            raise ValueError(f"lecture {item.name!r}: test scenarios {', '.join(sorted(taken))} are named already")
        made.update(checks.scenarios)
        own.update({scene: checks.scenarios_of(scene) for scene in item.scene_names})
    return made, own


LECTURE_SCENARIOS, _LECTURE_OWN = _declared_scenarios()
"""Scenarios of the lectures that declare their checks in their folders: their scenes are built with those alone."""
SCENARIOS.update(LECTURE_SCENARIOS)
OWN_SCENARIOS.update(_LECTURE_OWN)


EVERY_SCENE_SCENARIOS = ("default", "three", "sixteen")
"""Every scene (but those of :data:`OWN_SCENARIOS`) is built with these: the lecture's own, 3 tokens
rounded to 1 decimal, and 16 tokens at 4 decimals."""

MORE_SCENARIOS: dict[str, tuple[str, ...]] = {
    "Projection": ("seven", "two-wide"),  # d_in 6 → d_k 4; d_v ≠ d_k at 4 decimals
    "Spaces": ("eight-narrow", "twelve"),  # d_k 1: a line, not a plane; d_k 4 seen in two dimensions
    "Scores": ("five-whole", "twelve", "two", "saturation"),  # whole numbers (and a narrow picture, the board
    # beside it); long tokens; two tokens, the board beside; a query drawn shorter (and no room for the board)
    "ScaleAndSoftmax": ("eight-narrow", "five-whole"),
    "WeightedSum": ("two-wide", "sixteen-whole"),  # d_v 3; d_v 1 with whole numbers
    "MatrixForm": ("twelve",),  # maps too big for numbers (and 16 tokens, as every scene)
    "CausalMask": ("sixteen-whole",),  # whole numbers, d_k 1
    # the masked lecture: its own preset (a query with a future; "default" asks about the last token), 2 tokens
    # (the first can only read itself), 12 tokens colour only beside the row's table
    "GenerationOrder": ("masked-dog", "two"),
    "MaskedScores": ("masked-dog", "two", "twelve"),
    "Renormalise": ("masked-dog", "two"),
}
"""The other test scenarios, shared out between the scenes (most are built by two scenes or more,
chosen for what it strains in them): the suite stays within CI's time. Set
``ATTENTION_ALL_SCENARIOS=1`` to build every scene with every scenario (``make test-all``)."""

ALL_SCENARIOS = os.environ.get("ATTENTION_ALL_SCENARIOS", "") not in ("", "0")


def scenarios_of(scene: str, chosen: tuple[str, ...]) -> tuple[str, ...]:
    """The scenarios of ``chosen`` that scene ``scene`` is built with (see :data:`MORE_SCENARIOS`);
    a scene that names scenarios with several heads is built with those too."""
    own = OWN_SCENARIOS.get(scene)
    if own is not None:
        return tuple(s for s in (*chosen, *HEADS_SCENARIOS, *MODEL_SCENARIOS, *LECTURE_SCENARIOS) if s in own)
    if ALL_SCENARIOS:
        return chosen
    picked = {*EVERY_SCENE_SCENARIOS, *MORE_SCENARIOS.get(scene, ())}
    return tuple(s for s in chosen if s in picked)


SCENES: tuple[tuple[str, str], ...] = tuple(scene for lecture in lectures() for scene in lecture.scenes)
"""(module, class) of every scene under test, every lecture's in lecture order."""


def load_scene_class(module: str, name: str) -> type[ExplainerScene]:
    """The scene class; a missing module or class fails the test (no skips)."""
    cls = getattr(importlib.import_module(module), name)
    assert isinstance(cls, type) and issubclass(cls, ExplainerScene), f"{module}.{name} is not an ExplainerScene"
    return cls


def with_scenario(cls: type[ExplainerScene], scenario: Scenario) -> type[ExplainerScene]:
    """``cls`` showing ``scenario`` whatever the environment says (same name, same module)."""
    return type(cls.__name__, (cls,), {"scenario_override": scenario, "__module__": cls.__module__})


def clean_environment() -> dict[str, str]:
    """The environment for a subprocess render (``manim render``): no scenario chosen from outside."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ATTENTION_")}
    env["PYTHONUNBUFFERED"] = "1"
    return env


def manim_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "manim", "render", *args]


def x264_options(clip: Path) -> str:
    """The options x264 wrote into ``clip`` (its SEI message, ``me=dia subme=1 ...``): which
    settings encoded it, the accelerator's (:mod:`attention_explainer.accel.encoding`) or manim's."""
    import re

    found = re.search(rb"x264 - core .*? options: ([ -~]*)", clip.read_bytes(), re.DOTALL)
    assert found is not None, f"{clip}: no x264 options in it"
    return found.group(1).decode("ascii")


RENDER_OPTIONS: dict[str, tuple[str, ...]] = {
    # the whole lecture is three minutes of video in one process: at 5 frames a second and 256 × 144
    # it costs a fraction, and its test (durations, subtitles, one video) holds at any rate and size
    "Explainer": ("--frame_rate", "5", "--resolution", "256,144"),
}
"""Extra ``manim render`` options of the background render pool, by scene."""


# -- what is on screen ---------------------------------------------------------------------

TEXT_TYPES: tuple[type[Mobject], ...] = (Text, MarkupText, Paragraph, SingleStringMathTex, DecimalNumber)
"""Text-like mobjects: checked as wholes (never letter by letter) for overlaps."""

FRAME_TOLERANCE = 0.05
SUBTITLE_BAND_TOP = BOTTOM  # the lowest 0.8 units stay quiet: subtitles may be burned in there
OVERLAP_TOLERANCE = 0.02


def on_screen(scene: Any) -> list[Mobject]:
    """Every mobject in the families of what the scene shows, once each, in drawing order."""
    seen: dict[int, Mobject] = {}
    for top in [*scene.mobjects, *getattr(scene, "foreground_mobjects", [])]:
        for mob in top.get_family():
            seen.setdefault(id(mob), mob)
    return list(seen.values())


def _alpha_max(rgbas: Any) -> float:
    array = np.asarray(rgbas, dtype=float)
    return float(array[..., 3].max()) if array.size else 0.0


def is_visible(mob: Mobject) -> bool:
    """Does the mobject itself (not its children) draw anything?"""
    if len(mob.points) == 0:
        return False
    if isinstance(mob, VMobject):
        fill = _alpha_max(mob.fill_rgbas)
        stroke = _alpha_max(mob.stroke_rgbas) if mob.stroke_width > 0 else 0.0
        background = (
            _alpha_max(mob.background_stroke_rgbas) if getattr(mob, "background_stroke_width", 0) > 0 else 0.0
        )
        return max(fill, stroke, background) > 0
    opacity = getattr(mob, "opacity", None)  # images, point clouds: assume drawn unless transparent
    return opacity is None or opacity > 0


_MEMO: dict[tuple[str, int], Any] | None = None
"""Boxes already measured at this moment of the scene (see :func:`one_moment`), by mobject id."""


@contextmanager
def one_moment() -> Iterator[None]:
    """Measure each mobject's box once while nothing moves (one look of the probe)."""
    global _MEMO
    _MEMO = {}
    try:
        yield
    finally:
        _MEMO = None


def _memo(kind: str, mob: Mobject, measure: Callable[[Mobject], Any]) -> Any:
    if _MEMO is None:
        return measure(mob)
    key = (kind, id(mob))
    if key not in _MEMO:
        _MEMO[key] = measure(mob)
    return _MEMO[key]


def curve_box(mob: Mobject) -> tuple[float, float, float, float] | None:
    """(left, right, bottom, top) of what the mobject's own points draw (measured once a moment)."""
    return _memo("curve", mob, _curve_box)  # type: ignore[no-any-return]


def _curve_box(mob: Mobject) -> tuple[float, float, float, float] | None:
    """(left, right, bottom, top) of what the mobject's own points draw.

    Bézier control points can stick out of the curve (a circle's do, by 8 %), so the cubic
    curves are sampled rather than their control points taken.
    """
    points = np.asarray(mob.points, dtype=float)
    if len(points) == 0:
        return None
    per_curve = getattr(mob, "n_points_per_cubic_curve", 4)
    if isinstance(mob, VMobject) and per_curve == 4 and len(points) % 4 == 0:
        curves = points.reshape(-1, 4, 3)
        anchors = curves[:, ::3, :2].reshape(-1, 2)
        low, high = anchors.min(axis=0), anchors.max(axis=0)
        if (points[:, :2].min(axis=0) >= low).all() and (points[:, :2].max(axis=0) <= high).all():
            # no control point sticks out of the anchors' box: the curves (inside their control points'
            # hull, through their anchors) span exactly that box, as the samples would find
            return float(low[0]), float(high[0]), float(low[1]), float(high[1])
        t = np.linspace(0.0, 1.0, 9)[:, None, None]
        a, b, c, d = (curves[None, :, k, :] for k in range(4))
        samples = ((1 - t) ** 3 * a + 3 * (1 - t) ** 2 * t * b + 3 * (1 - t) * t**2 * c + t**3 * d).reshape(-1, 3)
    else:
        samples = points
    return (
        float(samples[:, 0].min()),
        float(samples[:, 0].max()),
        float(samples[:, 1].min()),
        float(samples[:, 1].max()),
    )


def family_box(mob: Mobject) -> tuple[float, float, float, float] | None:
    """The box of the visible parts of ``mob``'s family (None when nothing is visible)."""
    return _memo("family", mob, _family_box)  # type: ignore[no-any-return]


def _family_box(mob: Mobject) -> tuple[float, float, float, float] | None:
    boxes = [box for part in mob.get_family() if is_visible(part) and (box := curve_box(part)) is not None]
    if not boxes:
        return None
    array = np.array(boxes)
    return (array[:, 0].min(), array[:, 1].max(), array[:, 2].min(), array[:, 3].max())


def text_of(mob: Mobject) -> str:
    """What a text-like mobject says, as written in the scene's code."""
    if isinstance(mob, DecimalNumber):
        return f"{mob.get_value():.{mob.num_decimal_places}f}"
    if isinstance(mob, Paragraph):
        return " / ".join(text_of(line) for line in mob.submobjects)
    if isinstance(mob, SingleStringMathTex):
        return mob.get_tex_string()
    original = getattr(mob, "original_text", None)
    return str(original if original is not None else getattr(mob, "text", ""))


def describe(mob: Mobject, box: tuple[float, float, float, float] | None = None) -> str:
    box = box or family_box(mob) or curve_box(mob)
    where = "" if box is None else f" at x {box[0]:.2f}..{box[1]:.2f}, y {box[2]:.2f}..{box[3]:.2f}"
    if isinstance(mob, TEXT_TYPES):
        return f"{type(mob).__name__} {text_of(mob)!r}{where}"
    return f"{type(mob).__name__}{where}"


def outermost_texts(mobjects: Iterable[Mobject]) -> list[Mobject]:
    """Text-like mobjects that are not inside another text-like mobject, once each."""
    found: dict[int, Mobject] = {}

    def walk(mob: Mobject) -> None:
        if isinstance(mob, TEXT_TYPES):
            found.setdefault(id(mob), mob)
            return
        for sub in mob.submobjects:
            walk(sub)

    for mob in mobjects:
        walk(mob)
    return list(found.values())


def outside_frame(
    scene_mobjects: Iterable[Mobject], half_width: float, half_height: float, tolerance: float = FRAME_TOLERANCE
) -> list[str]:
    """Visible mobjects that leave the frame; a text-like mobject is judged (and named) as a whole."""
    problems: list[str] = []
    seen: set[int] = set()

    def outside(box: tuple[float, float, float, float]) -> str | None:
        left, right, bottom, top = box
        if left < -half_width - tolerance or right > half_width + tolerance or bottom < -half_height - tolerance \
                or top > half_height + tolerance:
            return f"outside the frame (±{half_width:.2f}, ±{half_height:.2f})"
        if bottom < SUBTITLE_BAND_TOP - tolerance:
            return f"in the subtitles' band (below y = {SUBTITLE_BAND_TOP})"
        return None

    def walk(mob: Mobject) -> None:
        if id(mob) in seen:
            return
        seen.add(id(mob))
        if isinstance(mob, TEXT_TYPES):
            box = family_box(mob)
        elif is_visible(mob):
            box = curve_box(mob)
        else:
            box = None
        where = outside(box) if box is not None else None
        if where is not None:
            problems.append(f"{where}: {describe(mob, box)}")
        if not isinstance(mob, TEXT_TYPES):
            for sub in mob.submobjects:
                walk(sub)

    for mob in scene_mobjects:
        walk(mob)
    return problems


def overlapping_texts(scene_mobjects: Iterable[Mobject], tolerance: float = OVERLAP_TOLERANCE) -> list[str]:
    """Pairs of visible text-like mobjects whose boxes overlap by more than ``tolerance`` both ways.

    A text lying exactly on an identical copy of itself draws the same pixels and is not counted.
    """
    texts = []
    for mob in outermost_texts(scene_mobjects):
        box = family_box(mob)
        if box is not None:
            texts.append((mob, box))
    problems = []
    for k, (first, a) in enumerate(texts):
        for second, b in texts[k + 1 :]:
            dx = min(a[1], b[1]) - max(a[0], b[0])
            dy = min(a[3], b[3]) - max(a[2], b[2])
            if dx <= tolerance or dy <= tolerance:
                continue
            if text_of(first) == text_of(second) and np.allclose(a, b, atol=1e-3):
                continue
            problems.append(f"texts overlap ({dx:.2f} × {dy:.2f}): {describe(first, a)} and {describe(second, b)}")
    return problems


def stray_numbers(scene_mobjects: Iterable[Mobject], recorded: set[int]) -> list[str]:
    """Text on screen showing a digit (or ∞) that no fact accounts for: not recorded, not a token."""
    problems = []
    for mob in outermost_texts(scene_mobjects):
        if id(mob) in recorded or family_box(mob) is None:
            continue
        token = getattr(mob, "source_token", None)
        if token is not None and not is_shortened(text_of(mob), token):
            problems.append(f"a token label that is not its token {token!r}: {describe(mob)}")
        if isinstance(mob, DecimalNumber) or stray_digits(text_of(mob), mob):
            problems.append(f"a number on screen not recorded in scene.shown: {describe(mob)}")
    return problems


def _transforms(animations: Iterable[Any]) -> Iterator[Transform]:
    for animation in animations:
        if isinstance(animation, Transform):
            yield animation
        yield from _transforms(getattr(animation, "animations", []))


def transformed_numbers(animations: Iterable[Any], recorded: set[int]) -> list[str]:
    """Numbers a play put on screen through ``Transform(shown, other)``: the mobject left on screen keeps its own
    text, but it is drawn as the target's, whose digits no fact accounts for unless the target is recorded too
    (or says the same numbers, as ``shown.animate`` does)."""
    problems = []
    for animation in _transforms(animations):
        target = animation.target_mobject
        if target is None or target is animation.mobject:
            continue
        before = [n for mob in outermost_texts([animation.mobject]) for n in stray_digits(text_of(mob), mob)]
        after = [(mob, stray_digits(text_of(mob), mob)) for mob in outermost_texts([target])]
        if [n for _, found in after for n in found] == before:
            continue
        for mob, found in after:
            if found and id(mob) not in recorded:
                problems.append(f"a number drawn through a Transform into it, not in scene.shown: {describe(mob)}")
    return problems


def drawing_extent(scene_mobjects: Iterable[Mobject]) -> tuple[float, float]:
    """Width and height of what is drawn, leaving out frame furniture (the header, notes)."""
    boxes = [box for mob in scene_mobjects if not getattr(mob, "is_furniture", False)
             and (box := family_box(mob)) is not None]
    if not boxes:
        return 0.0, 0.0
    array = np.array(boxes)
    return float(array[:, 1].max() - array[:, 0].min()), float(array[:, 3].max() - array[:, 2].min())


FONT_FLOOR = 19.5
"""The smallest type on screen: size 20 (digits about 11 px tall at 480p), with rounding."""


def too_small(scene_mobjects: Iterable[Mobject], floor: float = FONT_FLOOR) -> list[str]:
    """Visible text drawn smaller than the font floor."""
    problems = []
    for mob in outermost_texts(scene_mobjects):
        if family_box(mob) is None or mob.height <= 0:
            continue
        size = float(mob.font_size)
        if size < floor:
            problems.append(f"text at size {size:.1f}, below the floor {floor}: {describe(mob)}")
    return problems


# -- where numbers stand ------------------------------------------------------------------------

Box = tuple[float, float, float, float]


def _union(boxes: Iterable[Box | None]) -> Box | None:
    found = [box for box in boxes if box is not None]
    if not found:
        return None
    array = np.array(found)
    return (float(array[:, 0].min()), float(array[:, 1].max()), float(array[:, 2].min()), float(array[:, 3].max()))


def shown_extent(mob: Mobject, present: set[int]) -> Box | None:
    """Where ``mob`` stands as a band's anchor or region: the box of its parts on screen; for a mark that
    draws nothing (cells never filled, nor added), the box of all of it; ``None`` when it is off the screen."""
    def measure(m: Mobject) -> Box | None:
        parts = [part for part in m.get_family() if len(part.points)]
        on = [part for part in parts if id(part) in present]
        if on:
            return _union(curve_box(part) for part in on)
        if parts and not any(is_visible(part) for part in parts):
            return _union(curve_box(part) for part in parts)
        return None
    return _memo("extent", mob, measure)  # type: ignore[no-any-return]


def _on_screen(mob: Mobject, present: set[int]) -> bool:
    return any(id(part) in present for part in mob.get_family())


def bands_seen(registered: Iterable[Bands], present: set[int]) -> list[BandsSeen]:
    """The registered bands that stand on screen now (one of their anchors or their region is on it),
    each band the extent of its anchor (those that count: on screen, or marks that draw nothing)."""
    seen = []
    for bands in registered:
        if not any(_on_screen(mob, present) for mob in (*bands.anchors.values(), *bands.region)):
            continue
        row = bands.axis == "row"
        extents = [(index, box) for index, mob in bands.anchors.items()
                   if (box := shown_extent(mob, present)) is not None]
        region = _union(shown_extent(mob, present) for mob in bands.region or bands.anchors.values())
        if not extents or region is None:
            continue
        along = tuple((index, box[2], box[3]) if row else (index, box[0], box[1]) for index, box in extents)
        seen.append(BandsSeen(bands.kind, bands.axis, along, (region[0], region[1]) if row else (region[2], region[3])))
    return seen


@dataclass
class PlayReport:
    """What the probe found at the end of one ``play``."""

    number: int
    beat: str
    outside: list[str]
    overlaps: list[str]
    unrecorded: list[str]
    small: list[str] = field(default_factory=list)
    misplaced: list[str] = field(default_factory=list)  # plotted points not where their numbers say
    out_of_place: list[str] = field(default_factory=list)  # numbers in another token's row, column, band
    placed: int = 0  # numbers (by the thing they belong to) that a registered band held
    extent: tuple[float, float] = (0.0, 0.0)  # width and height of the drawing, header and notes left out
    beats_done: int = 0  # beats finished before this play ended: it belongs to beat number beats_done + 1
    visible: set[int] = field(default_factory=set)  # ids of recorded mobjects drawn in this play

    def where(self, label: str) -> str:
        beat = f" (beat: {self.beat!r})" if self.beat else ""
        return f"{label}, play {self.number}{beat}"


def _animated(animations: Iterable[Any]) -> Iterator[Mobject]:
    """The mobjects animations draw, into groups (whose own group leaves out FadeIn and the like)."""
    for animation in animations:
        yield animation.mobject
        yield from _animated(getattr(animation, "animations", []))


@dataclass
class Probe:
    """Called after every play (via AFTER_PLAY_HOOKS) and once at the end of the scene."""

    target: type[ExplainerScene]
    scenario: Scenario | None = None
    layout: bool = True  # False: only what the number checks need (the mutation test's many builds)
    plays: list[PlayReport] = field(default_factory=list)
    ever_on_screen: dict[int, Mobject] = field(default_factory=dict)  # keeps them alive: ids stay unique
    _belongs: dict[int, tuple[Shown, bool]] = field(default_factory=dict)  # by id(shown): does it belong to a thing?
    transformed: list[str] = field(default_factory=list)  # the texts Transforms drew mobjects as
    _derived: dict[str, tuple[Any, int]] | None = None

    def __call__(self, scene: ExplainerScene) -> None:
        if not isinstance(scene, self.target):
            return
        # What an animation drew during the play counts as on screen even if it is gone at the
        # end (FadeIn(..., remover=True)). Transform(a, b) draws a, never b.
        drawn: dict[int, Mobject] = {}
        for mob in _animated(scene.animations or []):
            for part in mob.get_family():
                drawn.setdefault(id(part), part)
        self.ever_on_screen.update(drawn)
        self.look(scene, len(self.plays) + 1, drawn)
        recorded = {id(shown.mobject) for shown in getattr(scene, "shown", [])}
        self.plays[-1].unrecorded += transformed_numbers(scene.animations or [], recorded)
        targets = [animation.target_mobject for animation in _transforms(scene.animations or [])
                   if animation.target_mobject is not None and animation.target_mobject is not animation.mobject]
        self.transformed += [text_of(mob) for mob in outermost_texts(targets)]

    def look(self, scene: ExplainerScene, number: int, drawn: dict[int, Mobject] | None = None) -> None:
        with one_moment():
            self._look(scene, number, drawn)

    def _look(self, scene: ExplainerScene, number: int, drawn: dict[int, Mobject] | None) -> None:
        resting = {id(mob): mob for mob in on_screen(scene) if family_box(mob) is not None}
        visible_now = {**resting, **(drawn or {})}
        self.ever_on_screen.update(visible_now)
        top = [*scene.mobjects, *scene.foreground_mobjects]
        recorded = {id(shown.mobject) for shown in getattr(scene, "shown", [])}
        beats = getattr(scene, "beats", [])
        beat = getattr(scene, "current_step", "") or (beats[-1].caption if beats else "")
        report = PlayReport(number=number, beat=beat, outside=[], overlaps=[],
                            unrecorded=stray_numbers(top, recorded), beats_done=len(beats),
                            visible={key for key in visible_now if key in recorded})
        if self.layout:
            report.outside = outside_frame(top, config.frame_width / 2, config.frame_height / 2)
            report.overlaps = overlapping_texts(top)
            report.small = too_small(top)
            # where things rest: a Transform's source ends drawn as its target, then leaves
            report.misplaced = self._misplaced(scene, resting)
            report.extent = drawing_extent(top)
        # a number check (a few per cent of a dry run): with or without the layout checks
        found = self._placements(scene, resting)
        report.out_of_place, report.placed = place_problems(found), len(found)
        self.plays.append(report)

    def _placements(self, scene: ExplainerScene, visible: dict[int, Mobject]) -> list[Placement]:
        """Every number on screen that belongs to a token, key or dimension, in the bands registered."""
        registered = getattr(scene, "bands", [])
        if self.scenario is None or not registered:
            return []
        if self._derived is None:
            self._derived = derive_all(self.scenario)
        present = {id(mob) for mob in on_screen(scene)}
        seen = bands_seen(registered, present)
        if not seen:
            return []
        numbers = []
        for k, shown in enumerate(scene.shown):
            known = self._belongs.get(id(shown))
            if known is None or known[0] is not shown:
                known = self._belongs[id(shown)] = (shown, bool(belongs_to(shown.fact, self.scenario.query,
                                                                           self._derived)))
            box = family_box(shown.mobject) if known[1] and id(shown.mobject) in visible else None
            if box is not None:
                name = f"shown[{k}] {describe_fact(shown.fact)} {shown.text!r}"
                numbers.append((name, shown.fact, (box[0] + box[1]) / 2, (box[2] + box[3]) / 2))
        return placements(numbers, seen, self.scenario.query, self._derived)

    def _misplaced(self, scene: ExplainerScene, visible: dict[int, Mobject]) -> list[str]:
        if self.scenario is None:
            return []
        shown = [item for item in getattr(scene, "plotted", []) if id(item.mobject) in visible]
        return plotted_problems(shown, self.scenario)


@dataclass
class Build:
    """One dry run of one scene with one scenario: what the tests need of it, not the scene.

    (A whole scene, its camera and its mobjects are large; the session keeps many of these.)
    """

    label: str
    scenario: Scenario
    shown: list[Shown] = field(default_factory=list)
    beats: list[Beat] = field(default_factory=list)
    on_screen: list[bool] = field(default_factory=list)  # per shown: was its mobject ever on screen?
    plays: list[PlayReport] = field(default_factory=list)
    error: str | None = None  # the formatted traceback of a failed dry run
    reads: set[tuple[str, str]] = field(default_factory=set)  # (scenario|trace|step, attribute) read
    tokens: tuple[str, ...] = ()  # every token the scene may quote: the scenario's and its own presets'
    relations: list[Relation] = field(default_factory=list)
    plotted: list[Plotted] = field(default_factory=list)
    texts: set[str] = field(default_factory=set)  # every text ever on screen, as written
    transformed: list[str] = field(default_factory=list)  # the texts Transforms drew mobjects as, play by play


class _Reads:
    """Stands in for a scenario, trace or query step and notes every attribute the scene reads."""

    def __init__(self, wrapped: Any, source: str, log: set[tuple[str, str]]) -> None:
        self._wrapped, self._source, self._log = wrapped, source, log

    def __getattr__(self, name: str) -> Any:
        self._log.add((self._source, name))
        return getattr(self._wrapped, name)


def _recording(cls: type[ExplainerScene], log: set[tuple[str, str]]) -> type[ExplainerScene]:
    """``cls`` whose scenario, trace and query step note what the scene reads of them."""

    def setup(self: Any) -> None:
        cls.setup(self)
        self.scenario = _Reads(self.scenario, "scenario", log)
        self.trace = _Reads(self.trace, "trace", log)
        self.step = _Reads(self.step, "step", log)
        self.sources["trace"] = (self.trace, self.sources["trace"][1])
        self.sources["step"] = (self.step, self.sources["step"][1])

    return type(cls.__name__, (cls,), {"setup": setup, "__module__": cls.__module__})


DRY_RUN_SETTINGS = {
    "dry_run": True,
    "disable_caching": True,
    "progress_bar": "none",
    "verbosity": "WARNING",
    # -ql's pixels: the same 14.2 × 8 frame, a camera a fifth of -qh's size
    "pixel_width": 854,
    "pixel_height": 480,
    "frame_rate": 15,
}


@contextmanager
def after_every_play(hook: Callable[[ExplainerScene], None]) -> Iterator[None]:
    """``hook`` called after every play (and by scenes that look, at their end) of any scene
    built meanwhile (:data:`scenes.base.AFTER_PLAY_HOOKS`)."""
    AFTER_PLAY_HOOKS.append(hook)
    try:
        yield
    finally:
        AFTER_PLAY_HOOKS.remove(hook)


def dry_render(cls: type[ExplainerScene], media_dir: Path) -> ExplainerScene:
    """``cls`` rendered as the scene tests do: animations skipped, no pixels drawn."""
    with tempconfig({**DRY_RUN_SETTINGS, "media_dir": str(media_dir)}), no_pixels():
        scene = cls(skip_animations=True)
        scene.render()
    return scene


def build_watched(module: str, name: str, scenario: Scenario, media_dir: Path,
                  watch: Callable[[ExplainerScene], None]) -> Build:
    """:func:`build_scene` without the layout checks, ``watch`` called after every play; the
    build must not fail."""
    with after_every_play(watch):
        build = build_scene(load_scene_class(module, name), scenario, media_dir, layout=False)
    assert build.error is None, build.error
    return build


def build_scene(
    cls: type[ExplainerScene], scenario: Scenario, media_dir: Path, label: str = "", *, layout: bool = True
) -> Build:
    """Dry-run ``cls`` with ``scenario``; errors are kept in the result, not raised.

    ``layout=False`` leaves out the layout checks (frame, overlaps, font floor, plotted positions),
    for builds that only the number checks look at (where numbers stand is one of those: kept).
    """
    build = Build(label or cls.__name__, scenario, tokens=_quotable_tokens(scenario))
    tested = _recording(with_scenario(cls, scenario), build.reads)
    probe = Probe(tested, scenario, layout)
    scene = None
    try:
        with after_every_play(probe), tempconfig({**DRY_RUN_SETTINGS, "media_dir": str(media_dir)}), no_pixels():
            scene = tested(skip_animations=True)
            scene.render()
            probe.look(scene, len(probe.plays) + 1)  # what stays on screen at the end
            probe.plays[-1].beat = "end of scene"
    except BaseException as error:  # SystemExit included: a scene must not exit the test run
        if isinstance(error, KeyboardInterrupt):
            raise
        build.error = "".join(traceback.format_exception(error))
    build.plays = probe.plays
    build.transformed = probe.transformed
    if scene is not None:
        build.shown = list(getattr(scene, "shown", []))
        build.beats = list(getattr(scene, "beats", []))
        build.relations = list(getattr(scene, "relations", []))
        build.plotted = list(getattr(scene, "plotted", []))
        build.on_screen = [id(s.mobject) in probe.ever_on_screen for s in build.shown]
        build.texts = {text_of(mob) for mob in probe.ever_on_screen.values() if isinstance(mob, TEXT_TYPES)}
    return build


@contextmanager
def no_pixels() -> Iterator[None]:
    """Manim draws the static frame of every play even when it skips the animation; a dry run
    looks at mobjects, never at pixels, and skips the drawing (a tenth of its time)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(CairoRenderer, "update_frame", lambda self, *args, **kwargs: None)
        yield


def _quotable_tokens(scenario: Scenario) -> tuple[str, ...]:
    own = preset("raw-dot-product").tokens
    return tuple(dict.fromkeys((*scenario.tokens, *own)))


# -- numbers -------------------------------------------------------------------------------


def number_problems(build: Build) -> list[str]:
    """Every recorded number against attention_math, its mobject, the screen and the captions."""
    problems = shown_problems(build.shown, build.scenario, text_of)
    for k, (shown, seen) in enumerate(zip(build.shown, build.on_screen, strict=True)):
        if not seen:
            problems.append(
                f"shown[{k}] {describe_fact(shown.fact)} {shown.text!r}: recorded, but its mobject was never on screen "
                "(made, not used? or shown through Transform(other, it), which draws other: use ReplacementTransform)"
            )
    problems += said_problems(build)
    problems += relation_problems(build.relations, build.scenario)
    problems += rounding_note_problems(build)
    problems += out_of_place(build)
    return problems


def out_of_place(build: Build) -> list[str]:
    """Numbers standing in another thing's band at the end of a play (each said once, where first seen)."""
    first: dict[str, str] = {}
    for play in build.plays:
        for problem in play.out_of_place:
            first.setdefault(problem, play.where(build.label))
    return [f"{where}: {problem}" for problem, where in first.items()]


def rounding_note_problems(build: Build) -> list[str]:
    """Where a scene writes ≈, it says once, on screen and in a caption, that the numbers are rounded."""
    if all(relation.sign == "=" for relation in build.relations):
        return []
    problems = []
    notes = [
        s for s, seen in zip(build.shown, build.on_screen, strict=True)
        if seen and s.fact == Fact("scenario", "precision") and "rounded" in text_of(s.mobject)
    ]
    if not notes:
        problems.append("writes ≈ but never shows that the numbers are rounded")
    said = [beat.caption for beat in build.beats if "rounded" in beat.caption]
    if len(said) != 1:
        problems.append(f"writes ≈ and should say once in a caption that the numbers are rounded, says it {len(said)}×")
    return problems


def said_problems(build: Build) -> list[str]:
    """Each beat's caption against the facts it cites and what was on screen in that beat."""
    query = build.scenario.query
    keys_of: dict[int, set[Any]] = {}
    for shown in build.shown:
        keys_of.setdefault(id(shown.mobject), set()).add(canonical(shown.fact, query))
    problems = []
    for number, beat in enumerate(build.beats):
        visible: set[Any] = set()
        for play in build.plays:
            if play.beats_done == number:
                for key in play.visible:
                    visible |= keys_of.get(key, set())
        problems += caption_problems(beat.caption, beat.said, build.scenario, build.tokens, visible, beat.named)
    return problems


def shown_keys(build: Build) -> set[tuple[str, str, tuple[int, ...], str | None]]:
    """What the scene shows, by canonical fact (sums and sizes included), as text or as a drawn position."""
    query = build.scenario.query
    shown = {canonical(s.fact, query) for s, seen in zip(build.shown, build.on_screen, strict=True) if seen}
    return shown | {canonical(fact, query) for item in build.plotted for fact in item.coordinates}


def every_index(shape: tuple[int, ...]) -> Iterator[tuple[int, ...]]:
    return (tuple(int(i) for i in index) for index in np.ndindex(*shape))


def built(scene_builds: Any, scene: tuple[str, str], scenario: str) -> Build:
    """The session's dry run of ``scene`` for ``scenario``; the test fails if the dry run did."""
    build = scene_builds.get(*scene, scenario)
    if build.error is not None:
        pytest.fail(f"{build.label}: the dry run failed:\n{build.error}", pytrace=False)
    return build
