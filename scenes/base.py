"""The base of every explainer scene: the scenario, the beats, and every number on screen.

A scene reads its scenario from the environment (``ATTENTION_SCENARIO``: a preset name or a
path to a TOML file; ``ATTENTION_QUERY``: a token number from 1 or the token's text), then
from the ``[attention]`` section of ``manim.cfg`` in the working folder, then falls back to
the default preset.

Every digit a scene draws or says goes through one recording path. A :class:`Fact` names where
a number comes from (a field of a trace, a token's position, a size of the scenario); the scene
draws it with :meth:`ExplainerScene.number` or inside a label with
:meth:`ExplainerScene.label`, and says it in a caption with :meth:`ExplainerScene.cite` (or
:meth:`~ExplainerScene.fmt`). Each drawn fact is kept in ``scene.shown`` and each said one in
its beat, so tests can derive every number again from ``attention_math`` and compare.

A number must also stand in its place: key j's score beside key j's bar, row i's weight in row i.
A scene registers the rows and columns it lays numbers out by with :meth:`ExplainerScene.rows` and
:meth:`ExplainerScene.columns` (a :class:`Bands` each: a kind of thing, an anchor per index, the
region the bands reach across); the kit's :class:`~scenes.kit.grids.NumberGrid`,
:class:`~scenes.kit.heatmap.HeatGrid` and :class:`~scenes.kit.bars.BarRows` give their own anchors
(``scene.rows("key", chart)``), and :func:`~scenes.kit.heatmap.key_column` registers its rows. The
tests then hold every shown number whose fact names a token, key or dimension to its own band.

Importing this module does nothing but define things: the bundle's own hooks (progress lines,
a shared TeX cache) are installed by ``attention_explainer.runner``.
"""

from __future__ import annotations

import configparser
import math
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, TypeVar, cast

import numpy as np
from manim import (
    DOWN,
    LEFT,
    RIGHT,
    UL,
    UR,
    Animation,
    Camera,
    ManimColor,
    MathTex,
    Mobject,
    Scene,
    Text,
    VGroup,
    VMobject,
    config,
)

from attention_math import DEFAULT_PRESET, PRESETS, Scenario, ScenarioError, format_number, load_scenario, preset
from attention_math.arithmetic import adds_up
from scenes.facts import (
    Bands,
    Fact,
    Named,
    Plotted,
    Relation,
    Shown,
    TokenPart,
    position,
    query_number,
    scene_number,
    size,
    value,
)
from scenes.kit.formula import AttentionFormula
from scenes.kit.grids import NumberGrid
from scenes.kit.palette import BACKGROUND, INK, MUTED
from scenes.kit.text import NUMBER_SIZE, drop_svg_paths, text
from scenes.registry import decoder_lectures, lecture_of_scene, lectures, model_lecture

__all__ = [
    "AFTER_PLAY_HOOKS",
    "BEAT_HOOKS",
    "LONGEST_READING",
    "MAX_SHOWN",
    "NUMBER_WIDTHS",
    "READING_PACE",
    "SCENE_LIMITS",
    "Bands",
    "Beat",
    "ExplainerScene",
    "Fact",
    "Named",
    "Plotted",
    "Relation",
    "Shown",
    "TokenPart",
    "check_scene_limits",
    "position",
    "query_number",
    "scenario_from_environment",
    "scene_number",
    "size",
    "value",
]

SCENE_LIMITS: dict[str, tuple[int, int]] = {
    "tokens": (2, 16),
    "d_in": (2, 6),
    "d_k": (1, 4),
    "d_v": (1, 4),
    "precision": (0, 4),
}
"""What the scenes can lay out legibly: a scenario outside these fails before rendering."""

READING_PACE = 22.0
"""Characters of a caption a second that a paced beat leaves the viewer to read it: lecture 6's pace (its
captions' characters over its beats' seconds, 22.6 at -ql), whose own waits set it."""
LONGEST_READING = 8.0
"""The most seconds a paced beat lasts for its reading alone (a caption of 176 characters at the pace)."""

NUMBER_WIDTHS: tuple[tuple[int, int], ...] = ((4, 10), (5, 8), (7, 7), (16, 8))
"""``(tokens, characters)``: up to that many tokens, the widest number as shown (say "−12.34",
6 characters) that fits the rows of scores and weights (measured in dry runs of every scene)."""

MAX_SHOWN = 1e6
"""Every number the scenes draw is smaller than this in size (six digits before the point at most):
far larger numbers no longer fit the frame, and near 1e10 building a scene takes gigabytes."""

M = TypeVar("M", bound=Mobject)

AFTER_PLAY_HOOKS: list[Callable[[ExplainerScene], None]] = []
"""Called with the scene after every ``play`` (the bundle's runner and the layout tests add here)."""

BEAT_HOOKS: list[Callable[[ExplainerScene, str], float]] = []
"""Called with the scene and a beat's caption as the beat starts; each returns the seconds the
caption is spoken from there (0: not spoken). The beat then lasts at least that long (the scene
waits for the voice) and its subtitle spans the speech. The bundle's runner adds its voice here."""


@dataclass(frozen=True)
class Beat:
    """One step of a scene: its caption (the subtitle line), when it plays, what it says."""

    number: int
    caption: str
    start: float
    end: float
    said: tuple[Shown, ...] = ()
    named: tuple[Named, ...] = ()  # the tokens its caption names (scene.quote), in order


# -- limits and the scenario ------------------------------------------------------------------------


def check_scene_limits(scenario: Scenario, *, model: bool = False, decoder: bool = False) -> Scenario:
    """Raise :class:`ScenarioError` when the scenes cannot draw the scenario legibly.

    ``model``: the scenes show a real model's head (a scenario with ``model``), whose sizes are the
    model's (384 → 32, drawn as slices and colours); the others draw made-up numbers only, but with
    ``decoder`` they also draw a decoder's head (``--model smollm2``) from its scores and weights alone
    (:attr:`ExplainerScene.draws_decoder`).
    """
    if model or scenario.model is not None:
        return _check_model_limits(scenario, model, decoder)
    sizes = {
        "tokens": scenario.n_tokens,
        "d_in": scenario.d_in,
        "d_k": scenario.d_k,
        "d_v": scenario.d_v,
        "precision": scenario.precision,
    }
    for name, count in sizes.items():
        low, high = SCENE_LIMITS[name]
        if not low <= count <= high:
            raise ScenarioError(
                f"{name}: the scenes draw {low} to {high}, this scenario has {count} "
                "(attention_math itself has no such limit)"
            )
    shown = _shown_matrices(scenario)
    for name, values in shown.items():
        largest = float(np.max(np.abs(values[np.isfinite(values)]))) if np.any(np.isfinite(values)) else 0.0
        if largest >= MAX_SHOWN:
            raise ScenarioError(
                f"{name}: the scenes draw numbers below {MAX_SHOWN:,.0f} in size, this scenario's reach "
                f"{largest:.3g} (use smaller embeddings or weights; attention_math itself has no such limit)"
            )
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


def _check_model_limits(scenario: Scenario, model: bool, decoder: bool) -> Scenario:
    """A real model's head for the scenes that show one (its lecture's scenes check its tokens), a decoder's for
    the scenes that draw one, none for the others."""
    if scenario.model is None:
        raise ScenarioError(
            "model: these scenes show a real model's head; give --model (minilm or smollm2) and a --sentence"
        )
    if model:
        return scenario
    if decoder and scenario.model.causal:
        return _check_decoder_limits(scenario)
    if decoder:
        raise ScenarioError(f"model: these scenes draw small made-up numbers or a decoder's head (--model smollm2); "
                            f"an encoder's head is the {model_lecture()} lecture")
    if scenario.model.causal:  # a decoder's head: the lectures that draw one
        return _refuse_decoder()
    raise ScenarioError(
        f"model: these scenes draw small made-up numbers; a real model's head is the {model_lecture()} lecture"
    )


def _refuse_decoder() -> Scenario:
    """The one line for a decoder's head asked of scenes that draw made-up numbers: the lectures that draw one."""
    *most, last = decoder_lectures()
    named = f"{', '.join(most)} and {last}" if most else last
    raise ScenarioError(f"model: these scenes draw small made-up numbers; a decoder's head (--model smollm2) is "
                        f"drawn by the {named} lectures")


def _check_decoder_limits(scenario: Scenario) -> Scenario:
    """A decoder's head as the scenes that draw one show it: 2 to 16 tokens; its scores, weights and the first two
    entries of its v and z (the planes they draw) no wider than the rows of numbers fit."""
    low, high = SCENE_LIMITS["tokens"]
    n = scenario.n_tokens
    if not low <= n <= high:
        raise ScenarioError(f"sentence: the scenes draw {low} to {high} tokens, this sentence has {n}")
    if scenario.precision > 2:
        raise ScenarioError(f"precision: a model's head is drawn with 0 to 2 decimals, this scenario asks for "
                            f"{scenario.precision}")
    plain, own = scenario.trace(), scenario.trace(causal=True)
    fits = next(width for tokens, width in NUMBER_WIDTHS if n <= tokens)
    shown = {"scaled_scores": plain.scaled_scores, "weights": own.weights, "values": own.values[:, :2],
             "context": own.context[:, :2]}
    for name, values in shown.items():
        widest = max((format_number(float(v), scenario.precision) for v in np.ravel(values)), key=len)
        if len(widest) > fits:
            raise ScenarioError(f"{name}: with {n} tokens the scenes fit numbers of {fits} characters, this head "
                                f"shows {widest!r} (try another layer or head, or fewer tokens)")
    return scenario


def _shown_matrices(scenario: Scenario) -> dict[str, np.ndarray]:
    """Every matrix of numbers some scene draws, by the name an error gives it."""
    trace, step = scenario.trace(), scenario.query_step()
    shown: dict[str, np.ndarray] = {
        name: np.asarray(getattr(trace, name))
        for name in ("embeddings", "w_query", "w_key", "w_value", "queries", "keys", "values", "scores", "context")
    }
    shown.update(products=step.products, weighted_values=step.weighted_values, exps=step.exps)
    shown.update(scaled_scores=trace.scaled_scores, weights=trace.weights)
    for name, weights in (("queries", trace.w_query), ("keys", trace.w_key), ("values", trace.w_value)):
        # the terms x_ij · w_jk that the projection scene adds up by hand
        shown[f"{name} (their terms)"] = trace.embeddings[:, :, None] * weights[None, :, :]
    return shown


def _manim_cfg_attention(folder: Path) -> dict[str, str]:
    parser = configparser.ConfigParser()
    cfg = folder / "manim.cfg"
    if cfg.is_file():
        parser.read(cfg, encoding="utf-8")
    return dict(parser["attention"]) if parser.has_section("attention") else {}


def scenario_from_environment(folder: Path | None = None, default: str = DEFAULT_PRESET, *,
                              model: bool = False, decoder: bool = False) -> Scenario:
    """The scenario and query the scenes should show.

    ``ATTENTION_SCENARIO`` / ``ATTENTION_QUERY`` first, then ``scenario`` / ``query`` in the
    ``[attention]`` section of ``manim.cfg`` in ``folder`` (default: the working folder), then
    the preset ``default`` with its own query (a scene passes its lecture's preset).
    """
    cfg = _manim_cfg_attention(folder or Path.cwd())
    spec = os.environ.get("ATTENTION_SCENARIO") or cfg.get("scenario") or default
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
    return check_scene_limits(scenario, model=model, decoder=decoder)


def _negative(shown: str) -> bool:
    """Is a shown number negative? (``format_number`` never writes a minus before a zero.)"""
    return shown.startswith(("−", "-"))


def lecture_number(name: str) -> int:
    """The number of scene ``name`` in its lecture (from 1)."""
    return lecture_of_scene(name).scene_names.index(name) + 1


# -- the scene ----------------------------------------------------------------------------------------


class ExplainerScene(Scene):
    """Common base: loads the scenario, marks beats, records every number shown or said.

    Class attributes
    ----------------
    scenario_override
        A scenario to show instead of the environment's (tests set it).
    """

    scenario_override: ClassVar[Scenario | None] = None
    shows_model: ClassVar[bool] = False
    """Does the scene show a real model's head (a scenario with ``model``; see :func:`check_scene_limits`)?"""
    draws_decoder: ClassVar[bool] = False
    """Does the scene also draw a decoder's head (``--model smollm2``): its tokens and the numbers its turned q and
    k give (scores, weights, z), none of X or W (see :func:`check_scene_limits`)?"""
    reading_pace: ClassVar[float | None] = None
    """Characters a second a beat leaves to read its caption (:data:`READING_PACE`), up to
    :data:`LONGEST_READING` seconds: the pause after the animations grows where they and ``wait`` leave
    too little. ``None``: the waits as written (lecture 6's scenes, whose waits set the pace)."""

    def setup(self) -> None:
        # TeX typesets only the scenes' own formulas (user text is drawn with Pango, never TeX),
        # and it never runs programs: kpathsea reads this before texmf.cnf, and the latex
        # processes manim starts inherit it.
        os.environ["shell_escape"] = "f"
        cast(Camera, self.camera).background_color = ManimColor(BACKGROUND)  # manim-slides reads it as a colour
        if self.scenario_override is not None:
            scenario = self.check_scenario(check_scene_limits(self.scenario_override, model=self.shows_model,
                                                              decoder=self.draws_decoder))
        else:
            try:
                scenario = self.check_scenario(
                    scenario_from_environment(default=self._default_preset(), model=self.shows_model,
                                              decoder=self.draws_decoder)
                )
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
        self._said: list[Shown] = []
        self._named: list[Named] = []
        self.relations: list[Relation] = []
        self.plotted: list[Plotted] = []
        self.bands: list[Bands] = []
        self._rounding_said = False
        self.sources: dict[str, tuple[Any, int]] = {}
        self.add_source("trace", self.trace, scenario.precision)
        self.add_source("step", self.step, scenario.precision)

    @classmethod
    def check_scenario(cls, scenario: Scenario) -> Scenario:
        """The scenario, or a :class:`ScenarioError` naming what this scene cannot draw of it.

        Beyond :func:`check_scene_limits`, which every scene needs; a scene with limits of its own
        overrides this (the bundle asks every chosen scene before it renders any).
        """
        return scenario

    @property
    def second_query(self) -> int:
        """The 0-based token the matrix-form and mask scenes switch to: token 3 in the
        lecture, or the first other token when token 3 is the query or does not exist."""
        if self.scenario.n_tokens > 2 and self.scenario.query != 2:
            return 2
        return next(i for i in range(self.scenario.n_tokens) if i != self.scenario.query)

    @property
    def earlier_query(self) -> int:
        """The 0-based token whose row the causal mask changes, followed by the scenes about the mask: the
        query when a token comes after it; else (the last token sees every key, masked or not) the second
        query, or the token before the last when that is the last."""
        last, query = self.scenario.n_tokens - 1, self.scenario.query
        if query != last:
            return query
        return self.second_query if self.second_query != last else max(last - 1, 0)

    # -- numbers ----------------------------------------------------------------------------
    def add_source(self, name: str, obj: Any, precision: int) -> None:
        """Name an object whose fields the scene shows (a trace, a query step, ...)."""
        self.sources[name] = (obj, precision)

    def value_of(self, fact: Fact) -> float:
        """The number a fact of a registered source names (summed or its size as it says)."""
        obj, _ = self.sources[fact.source]
        number = np.asarray(getattr(obj, fact.field))
        if fact.index:
            number = number[fact.index]
        if fact.reduce == "sum":
            return float(np.sum(number))
        if fact.reduce == "magnitude":
            return abs(float(number))
        return float(number)

    def precision_of(self, fact: Fact) -> int | None:
        """Decimals the fact is shown with (``None``: a whole number, a count or a position)."""
        return self.sources[fact.source][1] if fact.source in self.sources else None

    def text_for(self, fact: Fact) -> str:
        """The fact as shown on screen (recording nothing: for layout and measuring)."""
        if fact.source == "position":
            return str(fact.index[0] + 1)
        if fact.source == "query":
            return str(self.scenario.query + 1)
        if fact.source == "scenario":
            return str(int(getattr(self.scenario, fact.field)))  # a size, or the precision
        if fact.source == "lecture":
            return str(lecture_number(fact.field))
        _, precision = self.sources[fact.source]
        return format_number(self.value_of(fact), precision)

    def _record(self, fact: Fact, mob: Mobject | None) -> Shown:
        return Shown(fact, self.text_for(fact), self.precision_of(fact), mob)

    def number(
        self,
        source: str,
        field_name: str,
        *index: int,
        color: str = INK,
        size: float = NUMBER_SIZE,
        reduce: str | None = None,
    ) -> Text:
        """A number from a registered source, drawn and recorded as shown."""
        fact = value(source, field_name, *index, reduce=reduce)
        mob = text(self.text_for(fact), size=size, color=color)
        self.shown.append(self._record(fact, mob))
        return mob

    def factor(
        self, source: str, field_name: str, *index: int, color: str = INK, size: float = NUMBER_SIZE
    ) -> VMobject:
        """A number written after an operator (the second factor of a product, a term after a
        plus): in parentheses when it is negative, as 0.77 × (−0.46) is written (the number
        itself drawn and recorded by :meth:`number`)."""
        mob = self.number(source, field_name, *index, color=color, size=size)
        if not _negative(mob.text):
            return mob
        return VGroup(text("(", size=size, color=MUTED), mob, text(")", size=size, color=MUTED)).arrange(
            RIGHT, buff=0.04 * size / NUMBER_SIZE
        )

    def fmt_factor(self, source: str, field_name: str, *index: int) -> str:
        """:meth:`fmt` of a number after an operator: in parentheses when it is negative."""
        said = self.fmt(source, field_name, *index)
        return f"({said})" if _negative(said) else said

    def label(
        self, template: str, *parts: Fact | TokenPart, size: float = 24, color: str = INK, tex: bool = False,
        **options: Any,
    ) -> Text | MathTex:
        """A label whose numbers (and tokens) are facts: ``template.format(*their texts)``.

        Each fact is recorded as shown in this label; tokens are marked so the checks know
        their characters for the token's. ``tex=True`` typesets our own formula with MathTex
        (never a token).
        """
        if tex and any(isinstance(part, TokenPart) for part in parts):
            raise ValueError("tokens never go through TeX")
        texts = [part.shown if isinstance(part, TokenPart) else self.text_for(part) for part in parts]
        content = template.format(*texts)
        mob: Text | MathTex
        if tex:
            mob = drop_svg_paths(MathTex(content, font_size=size, color=color, **options))
        else:
            mob = text(content, size=size, color=color, **options)
        mob.token_parts = [part.shown for part in parts if isinstance(part, TokenPart)]  # type: ignore[union-attr]
        self.shown.extend(self._record(part, mob) for part in parts if isinstance(part, Fact))
        return mob

    def cite(self, fact: Fact) -> str:
        """The fact as a caption says it; the next :meth:`beat` records that its caption does."""
        said = self._record(fact, None)
        self._said.append(said)
        return said.text

    def quote(self, j: int, as_: str = "token", tokens: Sequence[str] | None = None, index: int | None = None) -> str:
        """Token ``j`` named in a caption, quoted (``'dog'``), as a ``"token"``, the ``"query"`` or a ``"key"``.

        The next :meth:`beat` records it: a number cited in the same sentence is tied to the thing named
        before it (a weight said after ``'dog'`` must be dog's), and the tests check that from the core.
        ``tokens``: another sentence's (a training run's), where the numbers are of that sentence; ``index``: the
        thing's own index where it is not the token's (a training run's m-th "it", as a ``"referrer"``).
        """
        said = f"'{(self.scenario.tokens if tokens is None else tokens)[j]}'"
        self._named.append(Named(as_, int(j if index is None else index), said))
        return said

    def fmt(self, source: str, field_name: str, *index: int, reduce: str | None = None) -> str:
        """A number of a registered source, as a caption says it (see :meth:`cite`)."""
        return self.cite(value(source, field_name, *index, reduce=reduce))

    def plot(self, mob: M, axes: Any, *coordinates: Fact, anchor: str = "center") -> M:
        """Record that ``mob``'s anchor sits at ``axes.c2p(*coordinates)`` (tests map it back)."""
        self.plotted.append(Plotted(tuple(coordinates), mob, axes, anchor))
        return mob

    # -- where numbers stand --------------------------------------------------------------------
    def rows(self, kind: str, anchors: Mapping[int, Mobject] | Any, *region: Mobject) -> Bands:
        """Numbers that belong to a ``kind`` (key j, query i, …) stand in these rows: index → anchor.

        ``anchors`` maps each index to the mobject at its row's height (a row label, a bar, a row of
        cells), or is a kit object with rows of its own (a ``NumberGrid``, ``HeatGrid``, ``BarRows``:
        its anchors, and itself with the numbers it placed as the region). ``region``: what the rows
        reach across (a table's body). See :class:`Bands`; the tests check every shown number by them.
        """
        return self._bands(kind, "row", anchors, region)

    def fields(self, axis: str, anchors: Mapping[str, Mobject], *region: Mobject) -> Bands:
        """The quantities of a table, a legend or a composite row: ``{quantity: anchor}`` (a column's header or
        its mark, ``"online.maxima"``, :func:`scenes.facts.quantity`), one band each along ``axis``
        (``"column"``: side by side; ``"row"``: one over another); several quantities may share one anchor.

        A number standing within ``region`` must stand in its own quantity's band: a true number in another
        quantity's column fails the tests, as does a number of a quantity the table has no column for.
        """
        bands = Bands("field", axis, dict(anchors), tuple(region))
        self.bands.append(bands)
        return bands

    def columns(self, kind: str, anchors: Mapping[int, Mobject] | Any, *region: Mobject) -> Bands:
        """As :meth:`rows`, for columns: numbers of ``kind`` stand under (or over) their index's anchor."""
        return self._bands(kind, "column", anchors, region)

    def _bands(self, kind: str, axis: str, anchors: Mapping[int, Mobject] | Any, region: tuple[Mobject, ...]) -> Bands:
        if not isinstance(anchors, Mapping):  # a kit object that knows its rows and columns
            thing = anchors
            anchors = thing.row_anchors() if axis == "row" else thing.column_anchors()
            region = region or tuple(thing.band_region())
        bands = Bands(kind, axis, dict(anchors), tuple(region))
        self.bands.append(bands)
        return bands

    # -- arithmetic that adds up --------------------------------------------------------------
    def equals(self, result: Fact, terms: Sequence[Fact], op: str = "sum") -> str:
        """``"="`` when the shown terms give the shown result, else ``"≈"``; recorded either way.

        Every sum or product a scene shows goes through here, so a student who redoes it with the
        shown numbers never finds a wrong ``=``.
        """
        values = [self.value_of(term) for term in terms]
        precision = self.precision_of(result)
        exact = precision is not None and adds_up(values, self.value_of(result), precision, op=op)  # type: ignore[arg-type]
        sign = "=" if exact else "≈"
        self.relations.append(Relation(result, tuple(terms), op, sign))
        return sign

    @property
    def rounding_shows(self) -> bool:
        """Has some shown arithmetic not added up (a ``≈``) so far?"""
        return any(relation.sign == "≈" for relation in self.relations)

    def rounding_note(self, size: float = 20) -> Text | MathTex:
        """"≈ : rounded to 2 decimals", under the heading (the header's band), for a ``≈`` written.

        Add it once, when the first ``≈`` appears; it is frame furniture, like the header.
        """
        note = self.label("≈ : rounded to {} " + self._decimals(), Fact("scenario", "precision"), size=size,
                          color=MUTED)
        note.next_to(self.heading, DOWN, buff=0.1, aligned_edge=LEFT)
        note.is_furniture = True  # type: ignore[union-attr]
        return note

    def said_rounded(self) -> str:
        """The caption's words about rounding: said once per scene, when a ``≈`` is on screen."""
        if self._rounding_said or not self.rounding_shows:
            return ""
        self._rounding_said = True
        return f" The numbers are rounded to {self.cite(Fact('scenario', 'precision'))} {self._decimals()}, so ≈."

    def _decimals(self) -> str:
        return "decimal" if self.scenario.precision == 1 else "decimals"

    def grid(
        self,
        source: str,
        field_name: str,
        *,
        row_labels: Sequence[str] | None = None,
        color: str = INK,
        size: float = NUMBER_SIZE,
        h_buff: float = 0.28,
        rows: str | None = None,
    ) -> NumberGrid:
        """A whole matrix field as a :class:`NumberGrid`, every entry recorded; ``rows``: the kind of
        thing its labelled rows are (``"token"``, ``"key"``, …: registered with :meth:`rows`)."""
        obj, _ = self.sources[source]
        n_rows, n_columns = np.asarray(getattr(obj, field_name)).shape
        entries = [
            [self.number(source, field_name, i, j, color=color, size=size) for j in range(n_columns)]
            for i in range(n_rows)
        ]
        grid = NumberGrid(entries, row_labels=row_labels, color=color, h_buff=h_buff)
        if rows is not None:
            self.rows(rows, grid)
        return grid

    # -- frame furniture --------------------------------------------------------------------
    def header(self, title: str, *focus: str, parts: Sequence[Fact | TokenPart] = ()) -> VGroup:
        """The scene's number and title top-left, the formula top-right with ``focus`` lit.

        ``title`` may hold ``{}`` for ``parts``. ``focus`` names parts of
        :class:`AttentionFormula` (``"query"``, ``"key"``, ``"scale"``, ``"softmax"``,
        ``"value"``); the other parts are dimmed.
        """
        heading = self.label("{} · " + title, scene_number(self._lecture_name()), *parts, size=26, color=MUTED)
        heading.to_corner(UL, buff=0.4)
        formula = AttentionFormula(font_size=30).to_corner(UR, buff=0.4).light(*focus)
        self.formula = formula
        group = VGroup(heading, formula)
        group.is_furniture = True  # type: ignore[attr-defined]  # not part of the scene's drawing
        self.heading = heading
        self.add(group)
        return group

    def _lecture_name(self) -> str:
        """The name of the lecture scene this is (a variant or test subclass keeps its number)."""
        names = {scene for lecture in lectures() for scene in lecture.scene_names}
        return next((cls.__name__ for cls in type(self).__mro__ if cls.__name__ in names), type(self).__name__)

    def _default_preset(self) -> str:
        """The preset shown when no scenario is chosen: the one of this scene's lecture."""
        try:
            return lecture_of_scene(self._lecture_name()).preset
        except KeyError:  # a scene of no lecture (a test's)
            return DEFAULT_PRESET

    # -- beats ------------------------------------------------------------------------------
    def beat(self, caption: str, *animations: Animation | Mobject | Any, wait: float = 0.8, **kwargs: Any) -> None:
        """Play one beat of the storyboard: its animations, a pause to read, one subtitle.

        Every beat of every scene goes through here, so subtitles, sections and slide steps
        are made in one place. The facts cited since the last beat are what its caption says.
        """
        start = self.renderer.time
        self.current_step = caption
        said, self._said = tuple(self._said), []
        named, self._named = tuple(self._named), []
        spoken = max((hook(self, caption) for hook in BEAT_HOOKS), default=0.0)
        # the beat lasts while the voice speaks, and (paced) long enough to read its subtitle
        reading = min(len(caption) / self.reading_pace, LONGEST_READING) if self.reading_pace else 0.0
        if animations:
            self.play(*animations, **kwargs)
        held = start + max(spoken, reading) - self.renderer.time
        if held > 1e-6:
            # whole frames, rounded up (a still wait of d seconds draws int(d · fps) frames, which
            # ended the beat up to a frame before its sentence)
            wait = max(wait, (math.ceil(held * config.frame_rate - 1e-6) + 0.5) / config.frame_rate)
        if wait > 0:
            self.wait(wait)
        end = self.renderer.time
        self.add_subcaption(caption, duration=spoken or end - start, offset=start - end)
        self.beats.append(Beat(len(self.beats) + 1, caption, start, end, said, named))
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
