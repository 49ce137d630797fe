"""One scene's render: the manim process that runs it, as the bundle starts and follows it.

Each render runs :mod:`attention_explainer.runner` (plain ``manim render`` plus the bundle's hooks) in its own
media folder, forked from the warm process of :mod:`attention_explainer.forkserver` where there is one; its
stderr carries the progress lines and the notices the command line shows. A render that ends badly is told
apart here: stopped by the build, stopped by a Ctrl-C or SIGTERM (:mod:`attention_explainer.interrupts`), or
failed.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from .forkserver import ForkedRender, ForkServer, start_early
from .hooks import HOLD_AT, HOLD_FILE, PROGRESS
from .interrupts import received, stop_meant_by
from .media import last_frame
from .plan import SLIDES, BundleError, BundleSettings, SceneSpec, scenes_folder
from .still_hooks import still_path

__all__ = [
    "HEADS",
    "NOTICE",
    "RUNNER",
    "TEXTS",
    "Job",
    "ProgressCallback",
    "Renders",
    "Stopped",
    "fresh_media",
    "hold_requested",
    "render_scene",
    "runner_command",
    "runner_environment",
    "start_renders_early",
]

_PROGRESS = re.compile(rf"^{PROGRESS} (\d+) (.*)$")
NOTICE = "attention-explainer: "
"""The first words of a line a render says to the person rendering, not to the log: the accelerator left
out (:func:`attention_explainer.accel.enable`) or a runner's hook left out. Each render's are kept in its
job's ``notices``; the command line shows each line once, however many renders say it."""
TEXTS = "texts"  # the texts the renders share (a few MB a scenario)
HEADS = "heads"  # a real model's heads, computed once and read back by the renders (a few hundred kB each)
RUNNER = "attention_explainer.runner"  # the module every manim process of the bundle runs


class Stopped(Exception):
    """A render the build stopped (after another's failure, or an interrupt): its status says nothing."""


class Renders:
    """The manim processes of one build; :meth:`stop` ends every one, and any started after it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._running: set[subprocess.Popen[str] | ForkedRender] = set()
        self.stopping = False

    def started(self, process: subprocess.Popen[str] | ForkedRender) -> None:
        with self._lock:
            self._running.add(process)
            stopping = self.stopping
        if stopping:
            process.terminate()

    def ended(self, process: subprocess.Popen[str] | ForkedRender) -> None:
        with self._lock:
            self._running.discard(process)

    def stop(self) -> None:
        with self._lock:
            self.stopping = True
            running = list(self._running)
        for process in running:
            process.terminate()


@dataclass
class Job:
    """One scene's render as the build follows it (the progress display reads it)."""

    spec: SceneSpec
    status: str = "waiting"
    step: str = ""
    plays: int = 0
    started: float = 0.0
    seconds: float = 0.0  # how long its render took
    notices: list[str] = field(default_factory=list)  # the render's NOTICE lines, each once


ProgressCallback = Callable[[list[Job]], None]
"""Called with every job of the build whenever one's status, step or notices change."""


def fresh_media(spec: SceneSpec, work: Path) -> Path:
    """The scene's media folder, with manim's caches kept only if its last render finished.

    Manim reuses whatever its caches hold (TeX and text SVGs) without checking them, and a
    render killed mid-way leaves some of them truncated. Old clips and slides go, so the ones
    found after the render are this render's.
    """
    media = work / "media" / spec.name
    finished = media / ".finished"
    if finished.exists():
        finished.unlink()
        for old in media.glob(f"videos/*/*/{spec.name}.*"):
            old.unlink()
    else:
        shutil.rmtree(media, ignore_errors=True)
    (work / SLIDES / f"{spec.name}.json").unlink(missing_ok=True)
    shutil.rmtree(work / SLIDES / "files" / spec.name, ignore_errors=True)
    return media


def hold_requested(moment: str) -> Path | None:
    """The marker file when the tests' hold hook asks to hold at ``moment`` (see the runner)."""
    if os.environ.get(HOLD_AT) == moment and os.environ.get(HOLD_FILE):
        return Path(os.environ[HOLD_FILE]).absolute()
    return None


def runner_command(spec: SceneSpec, settings: BundleSettings, work: Path, media: Path) -> list[str]:
    """``manim render`` of one scene, through the runner that adds the bundle's hooks.

    With slides the scene renders as its slide variant (``scenes/slides.py``), which writes the
    same clip and, in ``work/slides``, its slides: one render serves the clip and the deck.
    """
    hooks = ["--progress", "--last-still", "--tex-dir", str(work / "tex"), "--text-dir", str(work / TEXTS),
             "--head-dir", str(work / HEADS)]
    if settings.voice:
        hooks += ["--voice", str(work / "voice")]
    if settings.captions == "burn":
        hooks.append("--burn-captions")
    if settings.stock_manim:
        hooks.append("--stock-manim")
    script = spec.file
    if settings.slides:
        hooks += ["--forward-slides", "--slide-notes"]
        script = scenes_folder() / "slides.py"  # every lecture's slide variants
    at = os.environ.get(HOLD_AT, "")
    marker = hold_requested(at) if at.startswith("play:") else None
    if marker is not None:
        hooks += ["--hold-after", at.removeprefix("play:"), "--hold-file", str(marker)]
    manim = [f"-q{settings.quality}", "--format", settings.fmt, "--media_dir", str(media)]
    if settings.fps is not None:
        manim += ["--frame_rate", str(settings.fps)]
    # one name for every format (manim adds its version to a gif's name otherwise)
    manim += ["--output_file", spec.name, "--progress_bar", "none", "-v", "WARNING", "--silent"]
    # Manim's partial-movie cache hashes every mobject of every play (a third of a scene's render
    # time, by profile) and rarely hits: a changed number changes every later hash. The bundle
    # keeps whole clips by its own scene keys instead.
    manim.append("--disable_caching")
    if settings.transparent:
        manim.append("--transparent")
    return [sys.executable, "-m", RUNNER, *hooks, "--", *manim, str(script), spec.name]


def start_renders_early(model: str | None = None) -> None:
    """Start the process the renders are forked from now, before the bundle's folder is known
    (:func:`attention_explainer.forkserver.start_early`): it imports manim (and reads ``model``'s weights, a real
    model's) while the caller checks the scenario. :func:`attention_explainer.bundle.build_bundle` takes it;
    :func:`attention_explainer.forkserver.discard_early` stops it if nothing did."""
    start_early(runner_environment(None), model=model)


def runner_environment(scenario_file: Path | None) -> dict[str, str]:
    """The environment of the renders: this one, the scenario file named (if any), no stray hook switch."""
    env = dict(os.environ) if scenario_file is None else dict(os.environ, ATTENTION_SCENARIO=str(scenario_file))
    # the scenario file carries the query; the runner's flags carry the hooks
    for name in ("ATTENTION_QUERY", "ATTENTION_PROGRESS", "ATTENTION_TEX_DIR", HOLD_AT, HOLD_FILE):
        env.pop(name, None)
    return env


def _run_process(
    command: list[str], work: Path, env: dict[str, str], job: Job, on_change: Callable[[], None],
    renders: Renders, server: ForkServer | None,
) -> tuple[int, list[str]]:
    """Run one manim process (forked by ``server``, if any), following its progress lines; return
    its status and last lines."""
    process: subprocess.Popen[str] | ForkedRender
    if server is not None and command[1:3] == ["-m", RUNNER]:
        process = server.spawn(command[3:], work, env)
    else:
        process = subprocess.Popen(
            command,
            cwd=work,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            encoding="utf-8",
            errors="replace",
        )
    renders.started(process)
    tail: list[str] = []
    assert process.stderr is not None
    for line in process.stderr:
        match = _PROGRESS.match(line.rstrip("\n"))
        if match:
            job.plays, job.step = int(match.group(1)), match.group(2)
            on_change()
        elif line.startswith(NOTICE):
            if line.rstrip() not in job.notices:
                job.notices.append(line.rstrip())
                on_change()
            tail = [*tail[-19:], line.rstrip()]
        elif line.strip():
            tail = [*tail[-19:], line.rstrip()]
    status = process.wait()
    process.stderr.close()
    renders.ended(process)
    return status, tail


def render_scene(
    job: Job, settings: BundleSettings, work: Path, scenario_file: Path, on_change: Callable[[], None],
    renders: Renders, server: ForkServer | None = None,
) -> Path:
    """Render one scene in a manim process; return the clip it wrote."""
    spec = job.spec
    if renders.stopping:  # the build stops: start nothing more (and keep this scene's caches)
        raise Stopped(spec.name)
    media = fresh_media(spec, work)
    job.status, job.started = "rendering", time.monotonic()
    on_change()
    command = runner_command(spec, settings, work, media)
    status, tail = _run_process(command, work, runner_environment(scenario_file), job, on_change, renders, server)
    if status != 0:
        cause = _why_ended(spec, status, tail, renders)
        job.status = "failed" if isinstance(cause, BundleError) else "stopped"
        on_change()
        raise cause
    clips = sorted(media.glob(f"videos/*/*/{spec.name}.{settings.extension}"))
    if not clips:
        job.status = "failed"
        on_change()
        raise BundleError(f"scene {spec.name}: manim wrote no .{settings.extension} file", 1)
    if settings.slides and not (work / SLIDES / f"{spec.name}.json").is_file():
        job.status = "failed"
        on_change()
        raise BundleError(f"scene {spec.name}: manim-slides wrote no slides", 1)
    if not still_path(clips[0]).is_file():  # the runner saves it as drawn; else decoded here
        last_frame(clips[0], still_path(clips[0]))
    (media / ".finished").touch()
    job.status, job.seconds = "done", time.monotonic() - job.started
    on_change()
    return clips[0]


def _why_ended(spec: SceneSpec, status: int, tail: list[str], renders: Renders) -> BaseException:
    """Why a render ended with a non-zero ``status``, as the exception to raise.

    The build stopped it; or a Ctrl-C or SIGTERM ended it (its status says so, or it failed once
    the command had received one: a Ctrl-C also stops the latex a render runs); or it failed.
    """
    if renders.stopping:
        return Stopped(spec.name)
    stop = stop_meant_by(status) or received()
    if stop is not None:
        return stop
    reason = next((t for t in reversed(tail) if "Error" in t or "error" in t), tail[-1] if tail else "no output")
    return BundleError(f"scene {spec.name}: manim render failed (exit {status}): {reason.strip()}", 1)
