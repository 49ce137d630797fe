"""``attention-explainer``: a scenario in, a lecture-ready bundle out.

Subcommands: ``render`` (the bundle), ``course`` (many bundles, on Dask distributed), ``numbers``
(the by-hand walkthrough, as ``python -m attention_math``) and ``presets``. Every error is one
line on stderr: exit 2 for bad input, 1 for an internal failure; ``--debug`` shows the traceback
instead.
"""

from __future__ import annotations

import argparse
import functools
import importlib
import json
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import interrupts  # light, as every import here: the command owns Ctrl-C before it imports numpy
from .render_options import STOCK_MANIM

if TYPE_CHECKING:
    from .plan import BundleSettings

__all__ = ["STOCK_MANIM", "main"]

PROG = "attention-explainer"


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        print(f"{self.prog}: error: {message}", file=sys.stderr)
        raise SystemExit(2)


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog=PROG, description="Animated, hand-checkable explainers of self-attention.")
    parser.add_argument("--debug", action="store_true", help="show tracebacks")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    _add_render(commands.add_parser("render", help="render a scenario into a lecture bundle"))
    _add_other_commands(commands)
    return parser


def _add_render(render: argparse.ArgumentParser) -> None:
    """The options of ``render`` (:mod:`attention_explainer.render_options`, a course entry's keys too)."""
    from .render_options import add_render_arguments

    add_render_arguments(render)
    render.add_argument("--debug", action="store_true", help="show tracebacks")


def _add_other_commands(commands: Any) -> None:
    """``course COURSE.toml`` (the bundles of a course file, on Dask distributed), ``numbers``, ``presets``."""
    from attention_math.__main__ import add_scenario_arguments
    from attention_math.walkthrough import FORMATS as NUMBER_FORMATS

    cores = os.cpu_count() or 1

    numbers = commands.add_parser("numbers", help="print the by-hand walkthrough")
    add_scenario_arguments(numbers)
    numbers.add_argument("--format", choices=NUMBER_FORMATS, default="text")
    numbers.add_argument("--debug", action="store_true", help="show tracebacks")

    presets = commands.add_parser("presets", help="list the presets")
    presets.add_argument("--debug", action="store_true", help="show tracebacks")

    course = commands.add_parser("course", help="render a course file's bundles, each scene a task on Dask distributed")
    course.add_argument("course_file", metavar="COURSE.toml", help="the course file (see docs/course.md)")
    course.add_argument("--out", metavar="DIR", help="the course's folder (default media/<course-file-name>/)")
    course.add_argument("--scheduler", metavar="tcp://HOST:PORT",
                        help="a Dask scheduler whose workers have the project installed (default: a local cluster)")
    course.add_argument("--workers", type=int, default=cores,
                        help=f"the local cluster's workers, one thread each (default: the cores, {cores} here)")
    course.add_argument("--debug", action="store_true", help="show tracebacks")


def _cmd_presets() -> int:
    from attention_math import PRESETS

    width = max(len(name) for name in PRESETS)
    for name, scenario in PRESETS.items():
        shape = f"{scenario.n_tokens} tokens, d_in {scenario.d_in}, d_k {scenario.d_k}"
        print(f"{name.ljust(width)}  {scenario.title} ({shape}; query '{scenario.query_token}')")
    return 0


def _cmd_numbers(args: argparse.Namespace) -> int:
    from attention_math.__main__ import scenario_from_args
    from attention_math.walkthrough import format_walkthrough

    scenario = scenario_from_args(args)
    sys.stdout.write(format_walkthrough(scenario, args.format))
    return 0


def _cmd_render(args: argparse.Namespace) -> int:
    from .forkserver import discard_early

    try:
        return _render(args)
    finally:
        discard_early()


def _cmd_course(args: argparse.Namespace) -> int:
    """Every bundle of the course file, its scenes rendered on Dask; exit 2 if an entry was bad, 1 if a
    render failed."""
    from .out_dir import slug
    from .plan import BundleError

    try:
        course = importlib.import_module("attention_explainer.course")
    except ImportError as error:
        raise BundleError(f"course: {error}", 2) from None
    if args.workers < 1:
        raise BundleError(f"--workers: expected a whole number of at least 1, got {args.workers}", 2)
    loaded = course.load_course(Path(args.course_file))
    out = Path(args.out) if args.out else Path.cwd() / "media" / slug(Path(args.course_file).stem)
    started = time.monotonic()
    connect = functools.partial(course.course_client, args.scheduler, args.workers)
    outcome = course.run_course(loaded, out, connect, course.stderr_line)
    total = len(outcome.made) + len(outcome.failed)
    lost = len(outcome.workers_lost)
    print(
        f"{PROG}: course: {len(outcome.made)} of {total} bundles made in {time.monotonic() - started:.1f} s"
        + (f"; {lost} worker{'s' if lost > 1 else ''} lost, {'their' if lost > 1 else 'its'} renders ran again "
           "on the others" if lost else "")
        + (f"; {len(outcome.failed)} not made (see above)" if outcome.failed else ""),
        file=sys.stderr,
    )
    print(f"the course page: {outcome.page}", file=sys.stderr)
    return int(outcome.status)


def _render(args: argparse.Namespace) -> int:
    from rich.console import Console

    from attention_math.__main__ import scenario_from_args
    from scenes.registry import lecture

    from .bundle import build_bundle
    from .manifest import MANIFEST
    from .out_dir import default_out_dir, prepare_out_dir
    from .processes import start_renders_early
    from .render_options import check_render_request, lecture_of
    from .selection import select_scenes

    args.lecture = lecture_of(args)  # a real model's head is its own lecture's
    chosen = select_scenes(args.scenes, args.lecture)  # an unknown lecture or scene: one line, before anything
    decoder = args.model == "smollm2"
    if decoder:  # its renders' process reads the model's weights while this one makes the scenario
        start_renders_early("smollm2")
    scenario = scenario_from_args(args, default=lecture(args.lecture).preset)
    target = Path(args.out) if args.out else default_out_dir(scenario, lecture=args.lecture)
    if not _renders_nothing(args, scenario, target, chosen):
        # (a bundle that needs no render holds clips made, so checked, from this very scenario and code)
        _check_scenario(scenario, chosen, first=not decoder and not (target / MANIFEST).is_file())
    check_render_request(args)
    out = prepare_out_dir(target)
    settings = _settings(args)
    console = Console(stderr=True)
    started = time.monotonic()
    display = _ProgressDisplay(console, len(chosen), started)

    def finish(folder: Path) -> None:
        # Runs inside the bundle's lock, once every file is in place.
        display.__exit__(None, None, None)
        manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
        rendered = manifest["rendered"]
        elapsed = time.monotonic() - started
        done = f"{len(rendered)} of {len(chosen)} scenes rendered" if rendered else "nothing changed, no scene rendered"
        console.print(f"[bold]{out}[/bold]: {done} in {elapsed:.1f} s")
        console.print(f"the lecture page: {folder / 'index.html'}")
        if manifest.get("deck"):
            console.print(f"slides: {folder / 'slides.html'}")
        if manifest.get("pptx"):
            console.print(f"PowerPoint: {folder / 'lecture.pptx'}")

    with display:
        build_bundle(scenario, out, settings, chosen, progress=display.update, then=finish)
    return 0


def _settings(args: argparse.Namespace) -> BundleSettings:
    from .render_options import settings_from_args

    return settings_from_args(args)


def _renders_nothing(args: argparse.Namespace, scenario: Any, target: Path, chosen: Sequence[Any]) -> bool:
    """Does the bundle in ``target`` already hold every clip of this request, unchanged?"""
    from .bundle import bundle_is_current

    return bundle_is_current(scenario, target, _settings(args), chosen)


def _check_scenario(scenario: Any, chosen: Sequence[Any], *, first: bool) -> None:
    """What the scenes cannot draw, in one line, before any render starts."""
    from .processes import start_renders_early
    from .render_options import check_scenes_can_draw

    if first:
        # a bundle's first render renders every scene: the process the renders are forked from
        # imports manim while the scenario is checked here
        start_renders_early()
    check_scenes_can_draw(scenario, chosen)


class _ProgressDisplay:
    """Progress of the render: scenes done of total, each scene's current step, elapsed time.

    A live table on a terminal; one plain line per change of a scene's state otherwise (logs, CI).
    A line a render says to the person rendering (``processes.NOTICE``: the accelerator left out, say)
    is printed once, however many renders say it.
    """

    def __init__(self, console: Any, total: int, started: float) -> None:
        self.console = console
        self.total = total
        self.started = started
        self.seen: dict[str, str] = {}
        self.said: set[str] = set()  # the renders' notices printed
        self.live = None
        if console.is_terminal:
            from rich.live import Live

            self.live = Live(self._table([]), console=console, refresh_per_second=4)

    def _table(self, jobs: Sequence[Any]) -> Any:
        from rich.table import Table

        done = sum(1 for job in jobs if job.status in {"done", "cached"})
        table = Table.grid(padding=(0, 2))
        table.add_row(f"[bold]scenes {done}/{self.total}[/bold]", f"elapsed {self._elapsed():5.1f} s")
        for job in jobs:
            detail = f"animation {job.plays}: {job.step}" if job.status == "rendering" else ""
            table.add_row(f"{job.spec.number}. {job.spec.name}", f"{job.status:9} {detail[:70]}")
        return table

    def _elapsed(self) -> float:
        return time.monotonic() - self.started

    def _say_notices(self, jobs: Sequence[Any]) -> None:
        for job in jobs:
            for line in job.notices:
                if line not in self.said:
                    self.said.add(line)
                    # above the live table, if any; as it is (it may hold brackets rich would read as markup)
                    self.console.print(line, markup=False, highlight=False, soft_wrap=True)

    def update(self, jobs: Sequence[Any]) -> None:
        self._say_notices(jobs)
        if self.live is not None:
            self.live.update(self._table(jobs))
            return
        done = sum(1 for job in jobs if job.status in {"done", "cached"})
        for job in jobs:
            if self.seen.get(job.spec.name) != job.status:
                self.seen[job.spec.name] = job.status
                if job.status != "waiting":
                    self.console.print(
                        f"[{self._elapsed():6.1f} s] scenes {done}/{self.total}  {job.spec.number}. {job.spec.name}: "
                        f"{job.status}",
                        highlight=False,
                    )

    def __enter__(self) -> _ProgressDisplay:
        if self.live is not None:
            self.live.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.live is not None:
            self.live.__exit__(None, None, None)
            self.live = None  # once is enough: the summary may end it early


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status.

    The command owns its Ctrl-C and SIGTERM from its first step (:func:`interrupts.own_signals`),
    even when it was started with SIGINT ignored: a Ctrl-C stops it with exit 130, SIGTERM with
    143, whichever of its processes sees the signal first. The handlers it found are put back at
    the end.
    """
    previous = interrupts.own_signals()
    try:
        return _run(list(sys.argv[1:] if argv is None else argv))
    finally:
        interrupts.restore(previous)
        interrupts.handled()


def _run(argv: list[str]) -> int:
    """The subcommand, and its outcome in one line on stderr."""
    debug = "--debug" in argv
    try:
        args = _parser().parse_args(argv)
        if args.command == "presets":
            return _cmd_presets()
        if args.command == "numbers":
            return _cmd_numbers(args)
        if args.command == "course":
            return _cmd_course(args)
        return _cmd_render(args)
    except KeyboardInterrupt as stop:
        interrupts.settle()  # a signal from now on waits for the line
        # the shell's convention: 128 + the signal's number (SIGINT 2, SIGTERM 15)
        what, status = ("terminated", 143) if isinstance(stop, interrupts.Terminated) else ("interrupted", 130)
        print(f"{PROG}: {what}; finished files are intact, nothing half-written was kept", file=sys.stderr)
        return status
    except Exception as error:
        interrupts.settle()
        if debug:
            raise
        from attention_math import ScenarioError

        from .plan import BundleError  # both imported by then: the parser imports them

        if isinstance(error, ScenarioError | BundleError):  # bad input (2) or a failure (1), said in one line
            print(f"{PROG}: error: {error}", file=sys.stderr)
            return getattr(error, "status", 2)
        print(  # an internal failure: one line unless --debug
            f"{PROG}: internal error: {type(error).__name__}: {error} (run with --debug for details)", file=sys.stderr
        )
        return 1


def entry_point() -> None:
    """The console script: refuses in one line (exit 2) when the ``video`` extra is missing."""
    from .extras import require_video_extra

    require_video_extra()
    sys.exit(main())
