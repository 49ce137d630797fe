"""``render``'s options, defined once: the ``render`` command's parser and a course file's bundles read them.

:func:`add_render_arguments` adds every option of ``attention-explainer render`` to a parser and returns
them (argparse's actions). A course entry (:mod:`attention_explainer.course_file`) has a key for each of
them but those of :data:`NOT_PER_BUNDLE`; its value's kind (true or false, a whole number, a string,
one of a few) is read off the option (:func:`course_keys`), the entry becomes the arguments ``render``
would be given (:func:`course_key_argv`), parsed by the same parser (:func:`parse_render_argv`) and
checked by the same :func:`check_render_request`; its scenario, scenes and settings are made from them
as ``render`` makes them (:func:`lecture_of`, :func:`settings_from_args`, :func:`check_scenes_can_draw`).

The module imports nothing heavy at its top (the command owns Ctrl-C before it imports numpy).
"""

from __future__ import annotations

import argparse
import importlib
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NoReturn

if TYPE_CHECKING:
    from attention_math import Scenario

    from .plan import BundleSettings, SceneSpec

__all__ = [
    "NOT_PER_BUNDLE",
    "STOCK_MANIM",
    "CourseKey",
    "add_render_arguments",
    "check_render_request",
    "check_scenes_can_draw",
    "course_key_argv",
    "course_keys",
    "lecture_of",
    "parse_render_argv",
    "settings_from_args",
    "stock_manim_asked",
]

STOCK_MANIM = "ATTENTION_STOCK_MANIM"
"""``1``: render on manim as it is, as ``render --stock-manim`` does."""

NOT_PER_BUNDLE = ("out", "jobs", "stock-manim", "debug")
"""``render``'s options a course entry has no key for: its folder is the course's (``name``), its renders
run one a worker, manim as it is is the workers' own setting (``ATTENTION_STOCK_MANIM``), tracebacks the
command's (``--debug``)."""


def add_render_arguments(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    """Every option of ``render``, the scenario's then the bundle's, added to ``parser``; return them."""
    from attention_math.__main__ import add_scenario_arguments

    return add_scenario_arguments(parser) + _bundle_arguments(parser)


def _bundle_arguments(render: argparse.ArgumentParser) -> list[argparse.Action]:
    """The options of the lecture and the bundle."""
    from scenes.registry import DEFAULT_LECTURE, lecture_names, lectures, model_lecture

    from .plan import CAPTIONS, FORMATS, QUALITIES

    cores = os.cpu_count() or 1
    names = f"{', '.join(lecture_names())} (default {DEFAULT_LECTURE}; with --model, {model_lecture()})"
    presets = ", ".join(f"{item.name}: {item.preset}" for item in lectures() if not item.model)
    add = render.add_argument
    return [
        add("--quality", choices=QUALITIES, default="l", help="manim quality flag (default l: 480p15)"),
        add("--fps", type=int, default=None,
            help="frames per second, 1 to 120 (default: the quality's, 15 at l; 5 makes a quick draft)"),
        add("--out", metavar="DIR", help="bundle folder (default media/<scenario-slug>/)"),
        add("--format", choices=FORMATS, default="mp4", help="video format (default mp4)"),
        add("--transparent", action="store_true",
            help="transparent background (webm or mov; mp4 is written as .mov)"),
        add("--jobs", type=int, default=cores,
            help=f"scenes rendered at once (default: the machine's cores, {cores} here)"),
        add("--lecture", metavar="NAME", help=f"the lecture: {names}; each shows its own preset "
            f"unless a scenario is given ({presets})"),
        add("--scenes", metavar="LIST", help="comma-separated scene names or numbers (default all)"),
        add("--slides", action="store_true",
            help="also write slides.html, a slide deck that runs offline (manim-slides)"),
        add("--pptx", action="store_true",
            help="also write lecture.pptx, a PowerPoint deck with every clip embedded (mp4 only)"),
        add("--voice", action="store_true", help="speak the narration (Piper, offline; the voice extra)"),
        add("--captions", choices=CAPTIONS, default="soft",
            help="soft: subtitle files beside the clips (default); burn: also drawn into the pictures"),
        add("--stock-manim", action="store_true",
            help=f"render on manim as it is, without the accelerator: slower, the same frames (also {STOCK_MANIM}=1); "
            "clips already made are kept"),
    ]  # fmt: skip


# --- a course entry's keys ---------------------------------------------------------------------


@dataclass(frozen=True)
class CourseKey:
    """A key of a course entry: one option of ``render`` (``--d-model`` is the key ``d-model``)."""

    name: str
    kind: str  # "flag" (true or false), "int", "str", "choice", "list" (of names or numbers), "token" (text or number)
    choices: tuple[str, ...] = ()

    def argv(self, value: Any) -> list[str]:
        """The arguments ``render`` would be given for the (checked) value."""
        if self.kind == "flag":
            return [f"--{self.name}"] if value else []
        if self.kind == "list":
            value = ",".join(str(item) for item in value)
        return [f"--{self.name}={value}"]  # one word: a value may begin with '-'


def course_keys() -> dict[str, CourseKey]:
    """Every key a course entry may have for ``render``'s options, by name, in render's order."""
    parser = argparse.ArgumentParser(add_help=False)
    keys = {}
    for action in add_render_arguments(parser):
        name = action.option_strings[0].removeprefix("--")
        if name not in NOT_PER_BUNDLE:
            keys[name] = CourseKey(name, _kind(action), tuple(str(c) for c in action.choices or ()))
    return keys


def _kind(action: argparse.Action) -> str:
    """How a TOML value of the option is checked: read off the option itself."""
    if action.nargs == 0:
        return "flag"
    if action.choices:
        return "choice"
    if action.type is int:
        return "int"
    return {"scenes": "list", "query": "token"}.get(action.dest, "str")


def course_key_argv(key: CourseKey, value: Any) -> list[str]:
    """The arguments for ``value`` of ``key``, or :class:`ValueError` saying what was expected, in a few words."""
    expected: dict[str, tuple[Callable[[Any], bool], str]] = {
        "flag": (lambda v: isinstance(v, bool), "true or false"),
        "int": (lambda v: isinstance(v, int) and not isinstance(v, bool), "a whole number"),
        "str": (lambda v: isinstance(v, str), "a string"),
        "choice": (lambda v: isinstance(v, str), "a string"),
        "token": (lambda v: isinstance(v, str | int) and not isinstance(v, bool), "a token's text or its number"),
        "list": (_names_or_numbers, "a list of scene names or numbers"),
    }
    right, words = expected[key.kind]
    if not right(value):
        raise ValueError(f"expected {words}, got {value_kind(value)}")
    if key.kind == "choice" and value not in key.choices:
        raise ValueError(f"expected one of {', '.join(key.choices)}, got {value!r}")
    return key.argv(value)


def _names_or_numbers(value: Any) -> bool:
    return (
        isinstance(value, list)
        and bool(value)
        and all(isinstance(s, str | int) and not isinstance(s, bool) and "," not in str(s) for s in value)
    )


def value_kind(value: Any) -> str:
    """How a TOML value is named in a message."""
    names = {bool: "a boolean", int: "a number", float: "a number", str: "a string", list: "a list", dict: "a table"}
    return next((name for kind, name in names.items() if isinstance(value, kind)), type(value).__name__)


class _Refusing(argparse.ArgumentParser):
    """A parser that raises (status 2) where ``render``'s prints and exits."""

    def error(self, message: str) -> NoReturn:
        from .plan import BundleError

        raise BundleError(message, 2)


def parse_render_argv(argv: Sequence[str]) -> argparse.Namespace:
    """``render``'s options as its parser reads them (a :class:`BundleError` where it would refuse)."""
    parser = _Refusing(prog="render", add_help=False, allow_abbrev=False)
    add_render_arguments(parser)
    return parser.parse_args(list(argv))


# --- what render makes of its options -----------------------------------------------------------


def lecture_of(args: argparse.Namespace) -> str:
    """The lecture asked for: ``--lecture``, else a real model's head's own with ``--model``, else the default."""
    from scenes.registry import DEFAULT_LECTURE, model_lecture

    if args.lecture is not None:
        return str(args.lecture)
    return model_lecture() if args.model is not None else DEFAULT_LECTURE


def check_render_request(args: argparse.Namespace) -> None:
    """Refuse, in one line (exit 2), what cannot be rendered as asked, before anything renders.

    The message begins with the option (``--fps: ...``); the :class:`BundleError`'s ``option`` names it.
    """
    for option, why in _request_problems(args):
        _refuse(option, why)
    if args.voice:
        from .extras import INSTALL_VOICE, missing_voice_modules

        missing = missing_voice_modules()
        if missing:
            no = ", ".join(missing)
            _refuse("voice", f"the voice extra is not installed (no {no}); install it with {INSTALL_VOICE}")
    if args.slides:
        from .outputs.slides import reveal_package

        reveal_package()


def _request_problems(args: argparse.Namespace) -> list[tuple[str, str]]:
    """The options asked for that cannot go together, each with why."""
    problems = [
        ("jobs", args.jobs < 1, f"expected a whole number of at least 1, got {args.jobs}"),
        ("fps", args.fps is not None and not 1 <= args.fps <= 120,
         f"expected a whole number from 1 to 120, got {args.fps}"),
        ("transparent", args.transparent and args.format == "gif",
         "needs --format mov, webm or mp4 (written as .mov), not gif"),
        ("voice", args.voice and args.format == "gif", "a gif has no sound; choose --format mp4, webm or mov"),
        ("slides", args.slides and (args.format == "gif" or (args.transparent and args.format in {"mp4", "mov"})),
         "a deck plays its slides in a browser: choose --format mp4 or webm (--transparent: webm)"),
        ("pptx", args.pptx and (args.format != "mp4" or args.transparent),
         "a PowerPoint deck embeds H.264 mp4, which PowerPoint, Keynote and LibreOffice all play: "
         "choose --format mp4, without --transparent"),
    ]  # fmt: skip
    return [(option, why) for option, wrong, why in problems if wrong]


def _refuse(option: str, why: str) -> None:
    from .plan import BundleError

    raise BundleError(f"--{option}: {why}", 2, option=option)


def settings_from_args(args: argparse.Namespace) -> BundleSettings:
    """The bundle's settings ``render`` takes from its options (and :data:`STOCK_MANIM`)."""
    from .plan import BundleSettings

    return BundleSettings(
        quality=args.quality,
        fps=args.fps,
        fmt=args.format,
        transparent=args.transparent,
        jobs=args.jobs,
        slides=args.slides,
        pptx=args.pptx,
        voice=args.voice,
        captions=args.captions,
        stock_manim=args.stock_manim or stock_manim_asked(),
    )


def stock_manim_asked() -> bool:
    """Does :data:`STOCK_MANIM` ask for manim as it is (``1``; ``0`` or unset: the accelerator)?"""
    from .plan import BundleError

    value = os.environ.get(STOCK_MANIM, "")
    if value not in ("", "0", "1"):
        raise BundleError(f"{STOCK_MANIM}: expected 1 (manim as it is) or 0 (the accelerator), got {value!r}", 2)
    return value == "1"


def check_scenes_can_draw(scenario: Scenario, chosen: Sequence[SceneSpec]) -> None:
    """What the chosen scenes cannot draw of the scenario, in one line (a ScenarioError), before any renders."""
    from scenes.base import check_scene_limits

    classes = [getattr(importlib.import_module(spec.module), spec.name) for spec in chosen]
    check_scene_limits(scenario, model=any(cls.shows_model for cls in classes),
                       decoder=all(cls.draws_decoder for cls in classes))
    for cls in classes:
        cls.check_scenario(scenario)
