"""The base of every explainer scene: the scenario, the beats, and the numbers on screen.

A scene reads its scenario from the environment (``ATTENTION_SCENARIO``: a preset name or a
path to a TOML file; ``ATTENTION_QUERY``: a token number from 1 or the token's text), then
from the ``[attention]`` section of ``manim.cfg`` in the working folder, then falls back to
the default preset. Every number it draws is made by :meth:`ExplainerScene.number`, which
records where in the trace the number comes from, so tests can check each one.
"""

from __future__ import annotations

import configparser
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
from manim import UL, UR, Animation, ManimColor, Mobject, Scene, Text, VGroup, config

from attention_math import DEFAULT_PRESET, PRESETS, Scenario, ScenarioError, load_scenario, preset

from .common import BACKGROUND, INK, MUTED, NUMBER_SIZE, AttentionFormula, NumberGrid, format_number, text

__all__ = [
    "AFTER_PLAY_HOOKS",
    "MAX_SHOWN",
    "NUMBER_WIDTHS",
    "SCENE_LIMITS",
    "Beat",
    "ExplainerScene",
    "Shown",
    "check_scene_limits",
    "scenario_from_environment",
]

# TeX typesets only the scenes' own formulas (user text is drawn with Pango, never TeX), and it
# never runs programs: TeX Live's default is a restricted \write18; kpathsea takes this variable
# from the environment before texmf.cnf, and the latex processes manim starts inherit it.
os.environ["shell_escape"] = "f"

SCENE_LIMITS: dict[str, tuple[int, int]] = {
    "tokens": (2, 8),
    "d_in": (2, 6),
    "d_k": (1, 4),
    "d_v": (1, 4),
    "precision": (0, 3),
}
"""What the scenes can lay out legibly: a scenario outside these fails before rendering."""

NUMBER_WIDTHS: tuple[tuple[int, int], ...] = ((4, 10), (5, 8), (7, 7), (8, 6))
"""``(tokens, characters)``: up to that many tokens, the widest number as shown (say "−12.34",
6 characters) that fits the rows of scores and weights (measured in dry runs of every scene)."""

MAX_SHOWN = 1e6
"""Every number the scenes draw is smaller than this in size (six digits before the point at most):
far larger numbers no longer fit the frame, and near 1e10 building a scene takes gigabytes."""


AFTER_PLAY_HOOKS: list[Callable[[ExplainerScene], None]] = []
"""Called with the scene after every ``play`` (layout tests add a probe here)."""


def _report_progress(scene: ExplainerScene) -> None:
    # One machine-readable line per play, read by the bundle command's progress display.
    step = scene.current_step.replace("\n", " ")
    print(f"ATTENTION-PROGRESS {scene.renderer.num_plays} {step}", file=sys.stderr, flush=True)


if os.environ.get("ATTENTION_PROGRESS") == "1":
    AFTER_PLAY_HOOKS.append(_report_progress)


def _share_tex_cache(folder: Path) -> None:
    """Compile TeX into ``folder``, shared by the bundle's parallel manim processes.

    Each formula is then compiled once per bundle, not once per scene. Manim checks only that
    a cached SVG exists and clears the folder's other files after each compile, so processes
    take turns (a file lock beside the folder) to compile or reuse; each then reads its own
    copy of the SVG (manim writes a scratch file beside the SVG it loads).
    """
    import fcntl
    import shutil

    from manim.mobject.text import tex_mobject

    own = config.get_dir("tex_dir")  # this process's media folder
    own.mkdir(parents=True, exist_ok=True)
    folder.mkdir(parents=True, exist_ok=True)
    config.tex_dir = str(folder)
    compile_one = tex_mobject.tex_to_svg_file

    def shared(*args: Any, **kwargs: Any) -> Path:
        with open(folder.with_name(folder.name + ".lock"), "a") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)  # released when the file closes
            svg = Path(compile_one(*args, **kwargs))
            copy = own / svg.name
            if not copy.exists():
                shutil.copyfile(svg, copy)
        return copy

    tex_mobject.tex_to_svg_file = shared


if os.environ.get("ATTENTION_TEX_DIR"):
    _share_tex_cache(Path(os.environ["ATTENTION_TEX_DIR"]))


@dataclass(frozen=True)
class Shown:
    """One number on screen and where it comes from: ``sources[source].field[index]``.

    ``reduce="sum"`` means the sum of the indexed entries (a row's total, say).
    """

    source: str
    field: str
    index: tuple[int, ...]
    text: str
    precision: int
    reduce: str | None = None
    mobject: Mobject | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class Beat:
    """One step of a scene: its caption (the subtitle line) and when it plays."""

    number: int
    caption: str
    start: float
    end: float


def check_scene_limits(scenario: Scenario) -> Scenario:
    """Raise :class:`ScenarioError` when the scenes cannot draw the scenario legibly."""
    sizes = {
        "tokens": scenario.n_tokens,
        "d_in": scenario.d_in,
        "d_k": scenario.d_k,
        "d_v": scenario.d_v,
        "precision": scenario.precision,
    }
    for name, size in sizes.items():
        low, high = SCENE_LIMITS[name]
        if not low <= size <= high:
            raise ScenarioError(
                f"{name}: the scenes draw {low} to {high}, this scenario has {size} "
                "(attention_math itself has no such limit)"
            )
    trace, step = scenario.trace(), scenario.query_step()
    shown = {
        name: getattr(trace, name)
        for name in ("embeddings", "w_query", "w_key", "w_value", "queries", "keys", "values", "scores", "context")
    }
    shown.update(products=step.products, weighted_values=step.weighted_values)
    for name, weights in (("queries", trace.w_query), ("keys", trace.w_key), ("values", trace.w_value)):
        # the terms x_ij · w_jk that scene 2 adds up by hand
        shown[f"{name} (their terms)"] = trace.embeddings[:, :, None] * weights[None, :, :]
    for name, values in shown.items():
        largest = float(np.max(np.abs(values)))
        if largest >= MAX_SHOWN:
            raise ScenarioError(
                f"{name}: the scenes draw numbers below {MAX_SHOWN:,.0f} in size, this scenario's reach "
                f"{largest:.3g} (use smaller embeddings or weights; attention_math itself has no such limit)"
            )
    shown.update(scaled_scores=trace.scaled_scores, weights=trace.weights, exps=step.exps)
    n = scenario.n_tokens
    fits = next(width for tokens, width in NUMBER_WIDTHS if n <= tokens)
    for name, values in shown.items():
        widest = max((format_number(float(v), scenario.precision) for v in np.ravel(values)), key=len)
        if len(widest) > fits:
            raise ScenarioError(
                f"{name}: with {n} tokens the scenes fit numbers of {fits} characters, this scenario shows "
                f"{widest!r} (use fewer tokens, a lower precision or smaller numbers)"
            )
    return scenario


def _manim_cfg_attention(folder: Path) -> dict[str, str]:
    parser = configparser.ConfigParser()
    cfg = folder / "manim.cfg"
    if cfg.is_file():
        parser.read(cfg, encoding="utf-8")
    return dict(parser["attention"]) if parser.has_section("attention") else {}


def scenario_from_environment(folder: Path | None = None) -> Scenario:
    """The scenario and query the scenes should show.

    ``ATTENTION_SCENARIO`` / ``ATTENTION_QUERY`` first, then ``scenario`` / ``query`` in the
    ``[attention]`` section of ``manim.cfg`` in ``folder`` (default: the working folder), then
    the default preset with its own query.
    """
    cfg = _manim_cfg_attention(folder or Path.cwd())
    spec = os.environ.get("ATTENTION_SCENARIO") or cfg.get("scenario") or DEFAULT_PRESET
    query = os.environ.get("ATTENTION_QUERY") or cfg.get("query")
    if spec in PRESETS:
        scenario = preset(spec)
    elif spec.endswith(".toml") or Path(spec).is_file():
        scenario = load_scenario(spec)
    else:
        known = ", ".join(PRESETS)
        raise ScenarioError(
            f"ATTENTION_SCENARIO: expected a preset name ({known}) or a path to a .toml file, got {spec!r}"
        )
    if query:
        scenario = scenario.with_query(query)
    return check_scene_limits(scenario)


class ExplainerScene(Scene):
    """Common base: loads the scenario, marks beats, records every number shown.

    Class attributes
    ----------------
    scenario_override
        A scenario to show instead of the environment's (tests and the bundle set it).
    """

    scenario_override: ClassVar[Scenario | None] = None

    def setup(self) -> None:
        self.camera.background_color = ManimColor(BACKGROUND)  # manim-slides reads it as a colour
        if self.scenario_override is not None:
            scenario = check_scene_limits(self.scenario_override)
        else:
            try:
                scenario = scenario_from_environment()
            except ScenarioError as error:
                # One clear line instead of a traceback, before anything is drawn.
                print(f"error: {error}", file=sys.stderr)
                raise SystemExit(2) from None
        self.scenario = scenario
        self.trace = scenario.trace()
        self.step = scenario.query_step()
        self.shown: list[Shown] = []
        self.beats: list[Beat] = []
        self.current_step = ""
        self.sources: dict[str, tuple[Any, int]] = {}
        self.add_source("trace", self.trace, scenario.precision)
        self.add_source("step", self.step, scenario.precision)

    @property
    def second_query(self) -> int:
        """The 0-based token the matrix-form and mask scenes switch to: token 3 in the
        lecture, or the first other token when token 3 is the query or does not exist."""
        if self.scenario.n_tokens > 2 and self.scenario.query != 2:
            return 2
        return next(i for i in range(self.scenario.n_tokens) if i != self.scenario.query)

    # -- numbers ----------------------------------------------------------------------------
    def add_source(self, name: str, obj: Any, precision: int) -> None:
        """Name an object whose fields the scene shows (a trace, a query step, ...)."""
        self.sources[name] = (obj, precision)

    def value_of(self, source: str, field_name: str, index: Sequence[int] = (), reduce: str | None = None) -> float:
        """The number ``sources[source].field[index]`` (summed when ``reduce="sum"``)."""
        obj, _ = self.sources[source]
        value = np.asarray(getattr(obj, field_name))
        if index:
            value = value[tuple(index)]
        if reduce == "sum":
            return float(np.sum(value))
        return float(value)

    def fmt(self, source: str, field_name: str, *index: int, reduce: str | None = None) -> str:
        """A trace number formatted as on screen, for captions (not drawn, not recorded)."""
        _, precision = self.sources[source]
        return format_number(self.value_of(source, field_name, index, reduce), precision)

    def number(
        self,
        source: str,
        field_name: str,
        *index: int,
        color: str = INK,
        size: float = NUMBER_SIZE,
        reduce: str | None = None,
    ) -> Text:
        """A number from a trace field, drawn and recorded as shown."""
        _, precision = self.sources[source]
        shown_text = format_number(self.value_of(source, field_name, index, reduce), precision)
        mob = text(shown_text, size=size, color=color)
        self.shown.append(Shown(source, field_name, tuple(index), shown_text, precision, reduce, mob))
        return mob

    def grid(
        self,
        source: str,
        field_name: str,
        *,
        row_labels: Sequence[str] | None = None,
        column_labels: Sequence[str] | None = None,
        color: str = INK,
        size: float = NUMBER_SIZE,
    ) -> NumberGrid:
        """A whole matrix field as a :class:`NumberGrid`, every entry recorded."""
        obj, _ = self.sources[source]
        rows, columns = np.asarray(getattr(obj, field_name)).shape
        entries = [
            [self.number(source, field_name, i, j, color=color, size=size) for j in range(columns)]
            for i in range(rows)
        ]
        return NumberGrid(entries, row_labels=row_labels, column_labels=column_labels, color=color)

    # -- frame furniture --------------------------------------------------------------------
    def header(self, number: int, title: str, *focus: str) -> VGroup:
        """The scene's number and title top-left, the formula top-right with ``focus`` lit.

        ``focus`` names parts of :class:`AttentionFormula` (``"query"``, ``"key"``,
        ``"scale"``, ``"softmax"``, ``"value"``); the other parts are dimmed.
        """
        heading = text(f"{number} · {title}", size=26, color=MUTED)
        heading.to_corner(UL, buff=0.4)
        formula = AttentionFormula(font_size=30).to_corner(UR, buff=0.4)
        self.light_formula(formula, *focus)
        self.formula = formula
        group = VGroup(heading, formula)
        self.add(group)
        return group

    @staticmethod
    def light_formula(formula: AttentionFormula, *focus: str) -> AttentionFormula:
        """Dim every part of the formula but ``focus`` (all lit when ``focus`` is empty)."""
        for name, part in formula.part.items():
            part.set_opacity(1.0 if not focus or name in focus else 0.35)
        return formula

    # -- beats ------------------------------------------------------------------------------
    def beat(self, caption: str, *animations: Animation | Mobject | Any, wait: float = 0.8, **kwargs: Any) -> None:
        """Play one beat of the storyboard: its animations, a pause to read, one subtitle.

        Every beat of every scene goes through here, so subtitles, sections and slide steps
        are made in one place.
        """
        start = self.renderer.time
        self.current_step = caption
        if animations:
            self.play(*animations, **kwargs)
        if wait > 0:
            self.wait(wait)
        end = self.renderer.time
        self.add_subcaption(caption, duration=end - start, offset=start - end)
        self.beats.append(Beat(len(self.beats) + 1, caption, start, end))
        # As a manim-slides Slide (scenes/slides.py), every beat is one slide step.
        next_slide = getattr(self, "next_slide", None)
        if next_slide is not None:
            next_slide()

    def play(self, *args: Any, **kwargs: Any) -> None:
        super().play(*args, **kwargs)
        for hook in AFTER_PLAY_HOOKS:
            hook(self)

    def add_subcaption(self, content: str, duration: float = 1, offset: float = 0) -> None:
        # manim 0.21 writes the .srt beside config.output_file, which a dry run leaves empty
        # (ValueError "PosixPath('.') has an empty name" at the end of render): a dry run keeps
        # its captions in self.beats only.
        if config.dry_run:
            return
        super().add_subcaption(content, duration=duration, offset=offset)
