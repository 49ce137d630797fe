"""From a scenario to a lecture-ready bundle: clips, full video, subtitles, stills, handout.

The scenes render in parallel manim processes (one per scene, each with its own media folder),
started through :mod:`attention_explainer.runner`, which adds the bundle's hooks (progress
lines, one TeX cache for all) to plain ``manim render``; everything else is assembled here, in
stages: plan, render what changed, stage the new files, write the manifest, swap them in.
Every file is written under a temporary name and renamed into place, so an interrupted run
never leaves a truncated file under a final name, and the previous bundle stays whole until
each of its files is replaced.

The bundle's folder holds what its manifest lists and nothing else: manim's media, the slides,
the caches, the staged files and the lock are in its work folder beside it,
``<parent>/.cache/<name>/`` (:func:`attention_explainer.plan.work_folder`).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
import unicodedata
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_EXCEPTION, Future, ThreadPoolExecutor, wait
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import srt

from attention_math import Scenario, scenario_to_toml

from .fingerprint import code_version
from .forkserver import ForkedRender, ForkServer, start_early, start_fork_server
from .interrupts import received, stop_meant_by
from .media import contact_sheet, join_videos, last_frame, probe
from .outputs.handout import handout_files, handout_names
from .outputs.notebook import notebook_json
from .outputs.page import lecture_page
from .outputs.pptx import KIND as PPTX_KIND
from .outputs.pptx import pptx_key, stage_pptx
from .outputs.slides import deck_key, reveal_package, stage_deck
from .outputs.subtitles import to_webvtt
from .plan import SLIDES, BundleError, BundlePlan, BundleSettings, SceneSpec, json_hash, scenes_folder, work_folder
from .runner import HOLD_AT, HOLD_FILE, PROGRESS, hold, still_path
from .schedule import start_order
from .staging import Staging

__all__ = [
    "CAPTIONS",
    "FORMATS",
    "MANIFEST",
    "NOTICE",
    "QUALITIES",
    "SCENES",
    "BundleError",
    "BundleSettings",
    "RenderedScenes",
    "SceneProducts",
    "SceneSpec",
    "atomic_write",
    "build_bundle",
    "bundle_is_current",
    "default_out_dir",
    "expected_cost",
    "install_products",
    "lecture_specs",
    "plan_bundle",
    "prepare_out_dir",
    "read_manifest",
    "render_scene_products",
    "select_scenes",
    "slug",
    "start_renders_early",
]

QUALITIES = ("l", "m", "h", "p", "k")
FORMATS = ("mp4", "webm", "gif", "mov")
MANIFEST = "manifest.json"
PAGE = "index.html"
_PROGRESS = re.compile(rf"^{PROGRESS} (\d+) (.*)$")
NOTICE = "attention-explainer: "
"""The first words of a line a render says to the person rendering, not to the log: the accelerator left
out (:func:`attention_explainer.accel.enable`) or a runner's hook left out. Each render's are kept in its
job's ``notices``; the command line shows each line once, however many renders say it."""
TEXTS, TEXTS_KEPT = "texts", 5000  # the texts the renders share (a few MB a scenario), and how many are kept
HEADS = "heads"  # a real model's heads, computed once and read back by the renders (a few hundred kB each)
OLD_WORK, OLD_LOCK = ".work", ".lock"  # what versions before the work folder kept in the bundle
RUNNER = "attention_explainer.runner"  # the module every manim process of the bundle runs


class _Stopped(Exception):
    """A render the build stopped (after another's failure, or an interrupt): its status says nothing."""


class _Renders:
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


def lecture_specs(lecture: str | None = None) -> tuple[SceneSpec, ...]:
    """The scenes of a lecture (``--lecture``; default self-attention), numbered from 1."""
    from scenes import registry

    name = lecture or registry.DEFAULT_LECTURE
    if name not in registry.lecture_names():
        known = ", ".join(registry.lecture_names())
        raise BundleError(f"--lecture: unknown lecture {name!r}; expected one of {known}", 2)
    declared = registry.lecture(name)
    return tuple(
        SceneSpec(number, scene, module, uses_scenario=scene not in declared.own_preset)
        for number, (module, scene) in enumerate(declared.scenes, start=1)
    )


SCENES: tuple[SceneSpec, ...] = lecture_specs()
"""The default lecture's scenes."""


def select_scenes(names: str | None, lecture: str | None = None) -> list[SceneSpec]:
    """The scenes a ``--scenes`` list asks for (class names, file names or numbers) of a lecture, in order."""
    specs = lecture_specs(lecture)
    if not names:
        return list(specs)
    chosen: set[int] = set()
    for raw in names.split(","):
        word = raw.strip()
        if not word:
            continue
        for spec in specs:
            aliases = {spec.name.lower(), spec.module.rsplit(".", 1)[1], str(spec.number), spec.stem[3:]}
            if word.lower().replace("_", "-") in {a.replace("_", "-") for a in aliases}:
                chosen.add(spec.number)
                break
        else:
            known = ", ".join(spec.name for spec in specs)
            raise BundleError(f"--scenes: unknown scene {word!r}; expected names from {known} (or 1-{len(specs)})", 2)
    if not chosen:
        raise BundleError("--scenes: expected at least one scene name", 2)
    return [spec for spec in specs if spec.number in chosen]


def slug(title: str) -> str:
    """A folder name for a scenario title: lower-case ASCII words joined by dashes.

    >>> slug("The dog chased the ball")
    'the-dog-chased-the-ball'
    >>> slug("犬がボールを追った")
    'scenario'
    """
    ascii_text = unicodedata.normalize("NFKD", title).encode("ascii", "ignore").decode()
    words = re.findall(r"[a-z0-9]+", ascii_text.lower())
    return "-".join(words)[:60].strip("-") or "scenario"


def default_out_dir(scenario: Scenario, root: Path | None = None, lecture: str | None = None) -> Path:
    """``media/<scenario-slug>/`` under ``root`` (default: the working folder); another lecture than
    the default adds its name, ``media/<scenario-slug>-multi-head/``."""
    from scenes.registry import DEFAULT_LECTURE

    suffix = "" if lecture in (None, DEFAULT_LECTURE) else f"-{lecture}"
    return (root or Path.cwd()) / "media" / (slug(scenario.title) + suffix)


CAPTIONS = ("soft", "burn")
"""``soft``: subtitle files beside the clips (players show them); ``burn``: drawn into the frames too."""


@contextmanager
def atomic_write(path: Path) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; rename it into place only on success."""
    # keep the real suffix last: PyAV and PIL choose the format from it
    tmp = path.with_name(f".{path.stem}.tmp-{os.getpid()}{path.suffix}")
    try:
        yield tmp
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()


def _write_text(path: Path, content: str) -> None:
    with atomic_write(path) as tmp:
        tmp.write_text(content, encoding="utf-8")


def scene_key(spec: SceneSpec, scenario: Scenario, settings: BundleSettings, code: str) -> str:
    """What a clip depends on: the scene, what it shows of the scenario, settings and code.

    A scenario change that leaves everything a scene shows bit-equal (say a value weight, for
    the scores scene) keeps that scene's clip.
    """
    from scenes.plan import scene_view

    return json_hash(
        {
            "scene": spec.name,
            "view": scene_view(spec.name, scenario),
            "settings": settings.key(),
            "code": code,
        }
    )


@contextmanager
def _lock(out: Path) -> Iterator[None]:
    """Hold the bundle's lock (in its work folder) while the build writes, and the lock an older
    version kept in the bundle itself (``.lock``) where there is one, so neither writes over the other."""
    import fcntl

    locks = [work_folder(out) / "lock", *([out / OLD_LOCK] if (out / OLD_LOCK).is_file() else [])]
    handles = []
    try:
        for lock in locks:
            handles.append(open(lock, "w"))
            try:
                fcntl.flock(handles[-1], fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise BundleError(
                    f"--out: another render is writing into {out} (it holds {lock}); "
                    "wait for it to finish or choose another folder",
                    2,
                ) from None
        yield
    finally:
        for handle in handles:
            handle.close()


def prepare_out_dir(out: Path) -> Path:
    """Create the bundle folder and its work folder beside it (:func:`work_folder`), or say in
    one line why they cannot be used."""
    if out.exists() and not out.is_dir():
        raise BundleError(f"--out: {out} is a file, expected a folder", 2)
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe_file = out / f".write-test-{os.getpid()}"
        probe_file.write_bytes(b"")
        probe_file.unlink()
    except OSError as error:
        raise BundleError(f"--out: cannot write into {out} ({error.strerror or error})", 2) from None
    work = work_folder(out)
    try:
        work.mkdir(parents=True, exist_ok=True)
        apart = os.stat(work).st_dev != os.stat(out).st_dev
    except OSError as error:
        raise BundleError(
            f"--out: cannot make the render's work folder {work} beside {out} ({error.strerror or error}); "
            "choose a folder inside one you can write to",
            2,
        ) from None
    if apart:  # a mount point: the finished files could not be renamed into the bundle
        raise BundleError(
            f"--out: {out} is on another file system than the folder it is in, where the render keeps its work "
            f"({work}); choose a folder inside it",
            2,
        )
    return out


def _forget_old_work(out: Path) -> None:
    """Remove what an older version kept inside the bundle (``.work/``, ``.lock``): its work
    folder is beside the bundle now."""
    shutil.rmtree(out / OLD_WORK, ignore_errors=True)
    (out / OLD_LOCK).unlink(missing_ok=True)


@dataclass
class _Job:
    spec: SceneSpec
    status: str = "waiting"
    step: str = ""
    plays: int = 0
    started: float = 0.0
    seconds: float = 0.0  # how long its render took
    notices: list[str] = field(default_factory=list)  # the render's NOTICE lines, each once


ProgressCallback = Callable[[list[_Job]], None]


def _fresh_media(spec: SceneSpec, work: Path) -> Path:
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


def _hold_requested(moment: str) -> Path | None:
    """The marker file when the tests' hold hook asks to hold at ``moment`` (see the runner)."""
    if os.environ.get(HOLD_AT) == moment and os.environ.get(HOLD_FILE):
        return Path(os.environ[HOLD_FILE]).absolute()
    return None


def _runner_command(spec: SceneSpec, settings: BundleSettings, work: Path, media: Path) -> list[str]:
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
    marker = _hold_requested(at) if at.startswith("play:") else None
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


def start_renders_early() -> None:
    """Start the process the renders are forked from now, before the bundle's folder is known
    (:func:`forkserver.start_early`): it imports manim while the caller checks the scenario.
    :func:`build_bundle` takes it; :func:`forkserver.discard_early` stops it if nothing did."""
    start_early(_runner_environment(None))


def _runner_environment(scenario_file: Path | None) -> dict[str, str]:
    env = dict(os.environ) if scenario_file is None else dict(os.environ, ATTENTION_SCENARIO=str(scenario_file))
    # the scenario file carries the query; the runner's flags carry the hooks
    for name in ("ATTENTION_QUERY", "ATTENTION_PROGRESS", "ATTENTION_TEX_DIR", HOLD_AT, HOLD_FILE):
        env.pop(name, None)
    return env


def _run_process(
    command: list[str], work: Path, env: dict[str, str], job: _Job, on_change: Callable[[], None],
    renders: _Renders, server: ForkServer | None,
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


def _render_scene(
    job: _Job, settings: BundleSettings, work: Path, scenario_file: Path, on_change: Callable[[], None],
    renders: _Renders, server: ForkServer | None = None,
) -> Path:
    """Render one scene in a manim process; return the clip it wrote."""
    spec = job.spec
    if renders.stopping:  # the build stops: start nothing more (and keep this scene's caches)
        raise _Stopped(spec.name)
    media = _fresh_media(spec, work)
    job.status, job.started = "rendering", time.monotonic()
    on_change()
    command = _runner_command(spec, settings, work, media)
    status, tail = _run_process(command, work, _runner_environment(scenario_file), job, on_change, renders, server)
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


def _why_ended(spec: SceneSpec, status: int, tail: list[str], renders: _Renders) -> BaseException:
    """Why a render ended with a non-zero ``status``, as the exception to raise.

    The build stopped it; or a Ctrl-C or SIGTERM ended it (its status says so, or it failed once
    the command had received one: a Ctrl-C also stops the latex a render runs); or it failed.
    """
    if renders.stopping:
        return _Stopped(spec.name)
    stop = stop_meant_by(status) or received()
    if stop is not None:
        return stop
    reason = next((t for t in reversed(tail) if "Error" in t or "error" in t), tail[-1] if tail else "no output")
    return BundleError(f"scene {spec.name}: manim render failed (exit {status}): {reason.strip()}", 1)


def _shifted_subtitles(parts: Sequence[tuple[Path, float]]) -> list[srt.Subtitle]:
    from datetime import timedelta

    merged: list[srt.Subtitle] = []
    for path, offset in parts:
        if not path.exists():
            continue
        for sub in srt.parse(path.read_text(encoding="utf-8")):
            merged.append(
                srt.Subtitle(
                    index=len(merged) + 1,
                    start=sub.start + timedelta(seconds=offset),
                    end=sub.end + timedelta(seconds=offset),
                    content=sub.content,
                )
            )
    return merged


def _timestamp(seconds: float) -> str:
    minutes, rest = divmod(seconds, 60)
    return f"{int(minutes):02d}:{rest:04.1f}"


def _narration(scenario: Scenario, scenes: Sequence[tuple[SceneSpec, Path, float]]) -> str:
    lines = [f"# Narration: {scenario.title}", "", "Timestamps are in the full lecture video.", ""]
    for spec, srt_path, offset in scenes:
        lines.append(f"## {spec.number}. {spec.name} (starts at {_timestamp(offset)})")
        lines.append("")
        if srt_path.exists():
            for sub in srt.parse(srt_path.read_text(encoding="utf-8")):
                start = offset + sub.start.total_seconds()
                lines.append(f"- [{_timestamp(start)}] {sub.content}")
        lines.append("")
    return "\n".join(lines)


def build_bundle(
    scenario: Scenario,
    out: Path,
    settings: BundleSettings,
    scenes: Sequence[SceneSpec] | None = None,
    progress: ProgressCallback | None = None,
    then: Callable[[Path], None] | None = None,
    renders: RenderedScenes | None = None,
) -> dict[str, Any]:
    """Render what changed and (re)assemble the bundle in ``out``; return the manifest.

    ``then(out)`` runs after the bundle is in place, still holding the folder's lock (the slide
    deck is made there, so a second render cannot start in between). ``renders``, if given, is
    asked for the clips of the scenes that changed instead of rendering them here (the course
    command's renders ran on Dask workers: :func:`render_scene_products`, :func:`install_products`).
    """
    chosen = list(scenes or SCENES)
    if settings.slides:
        reveal_package()  # refuse before rendering anything
    # absolute: the manim processes run inside the work folder and are given paths of the bundle
    out = prepare_out_dir(out).absolute()
    with _lock(out):
        manifest = _build(scenario, out, settings, chosen, progress, renders)
        if then is not None:
            then(out)
        return manifest


def bundle_is_current(scenario: Scenario, out: Path, settings: BundleSettings, scenes: Sequence[SceneSpec]) -> bool:
    """Would :func:`build_bundle` render nothing: is every clip in ``out``, made from this
    scenario, these settings and this code? (Reads only; a few tens of milliseconds.)"""
    if not read_manifest(out):
        return False
    return not plan_bundle(scenario, out.absolute(), settings, scenes).changed()


def plan_bundle(scenario: Scenario, out: Path, settings: BundleSettings, scenes: Sequence[SceneSpec]) -> BundlePlan:
    """The plan of a build of ``scenes`` into ``out``: the previous manifest and every clip's key."""
    code = code_version()  # once per build: it hashes sources and asks fontconfig and TeX
    keys = {spec.name: scene_key(spec, scenario, settings, code) for spec in scenes}
    return BundlePlan(scenario, out, settings, tuple(scenes), code, read_manifest(out), keys, work_folder(out))


def _build(
    scenario: Scenario,
    out: Path,
    settings: BundleSettings,
    chosen: list[SceneSpec],
    progress: ProgressCallback | None,
    renders: RenderedScenes | None = None,
) -> dict[str, Any]:
    """The stages of a build: plan, render what changed (here, or by ``renders``), stage the new
    files, vouch, swap in."""
    plan = plan_bundle(scenario, out, settings, chosen)
    plan.work.mkdir(parents=True, exist_ok=True)
    jobs = [_Job(spec) for spec in chosen]
    rendered = _render_changed(plan, jobs, progress) if renders is None else _rendered_elsewhere(plan, jobs, renders)
    staging = Staging(out, plan.work / "next")
    durations = _stage_files(plan, staging, rendered)
    files = _file_entries(plan, staging)
    staging.stage(PAGE).write_text(lecture_page(plan, staging, files, durations), encoding="utf-8")
    files.append(_file_entry(staging, PAGE, "page"))
    marker = _hold_requested("staged")
    if marker is not None:
        hold(marker)
    manifest = _manifest(plan, rendered, durations, jobs, files)
    staging.stage(MANIFEST).write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    _swap_in(staging)
    _forget_old_work(out)
    return manifest


def _render_changed(plan: BundlePlan, jobs: list[_Job], progress: ProgressCallback | None) -> dict[str, Path]:
    """Render the scenes that changed, in parallel, in the order that ends soonest; return their clips."""
    scenario_file = plan.work / "scenario.toml"
    _write_text(scenario_file, scenario_to_toml(plan.scenario))
    _keep_model_head(plan.scenario, plan.work / HEADS)
    to_render = plan.changed()
    for job in jobs:
        if job.spec not in to_render:
            job.status = "cached"
    lock = threading.Lock()

    def changed() -> None:
        if progress is not None:
            with lock:
                progress(jobs)

    changed()
    pending = [job for job in jobs if job.status == "waiting"]
    if not pending:
        return {}
    # One TeX cache for every scene (the runner shares it): kept only while no render that
    # wrote into it was interrupted, since an interrupted compile can leave a truncated SVG.
    _prune_texts(plan.work / TEXTS)
    tex_complete = _tex_cache_opened(plan.work)
    # In the order that ends soonest by the expected costs, so no core idles at the end while one long scene
    # runs on (see schedule.py).
    costs = [expected_cost(job.spec, plan.old_scenes, plan.settings) for job in pending]
    pending = [pending[i] for i in start_order(costs, plan.settings.jobs)]
    rendered = _run_jobs(pending, plan, scenario_file, changed)
    tex_complete.touch()
    return rendered


def _keep_model_head(scenario: Scenario, folder: Path) -> None:
    """A real model's head, which this process computed when it checked the scenario, kept in ``folder``
    for the renders (``--head-dir``): they read it back instead of each running the model again."""
    if scenario.model is None:
        return
    from attention_math.minilm import share_heads

    share_heads(folder)
    try:
        scenario.model_head()
    finally:
        share_heads(None)


def _tex_cache_opened(work: Path) -> Path:
    """Clear the TeX cache in ``work`` unless the last renders into it all finished; return the
    marker to touch once these have (not inside the cache: manim clears the TeX folder)."""
    tex_complete = work / "tex.complete"
    if not tex_complete.exists():
        shutil.rmtree(work / "tex", ignore_errors=True)
    tex_complete.unlink(missing_ok=True)
    return tex_complete


def _prune_texts(folder: Path) -> None:
    """The shared texts go when they are many: each scenario adds its own numbers."""
    if folder.is_dir() and sum(1 for _ in folder.iterdir()) > TEXTS_KEPT:
        shutil.rmtree(folder, ignore_errors=True)


def _run_jobs(
    pending: list[_Job], plan: BundlePlan, scenario_file: Path, changed: Callable[[], None]
) -> dict[str, Path]:
    """Run the renders on ``settings.jobs`` threads; on any failure or interrupt stop them all."""
    pool = ThreadPoolExecutor(max_workers=max(1, plan.settings.jobs))
    renders = _Renders()
    # one warm process imports manim once; each render is a fork of it (see forkserver)
    server = start_fork_server(plan.work, _runner_environment(scenario_file)) if pending else None
    try:
        futures = [
            pool.submit(_render_scene, job, plan.settings, plan.work, scenario_file, changed, renders, server)
            for job in pending
        ]
        wait(futures, return_when=FIRST_EXCEPTION)
        cause = _first_cause(futures)
        if cause is None:
            return {job.spec.name: future.result() for job, future in zip(pending, futures, strict=True)}
        renders.stop()
        pool.shutdown(wait=True, cancel_futures=True)  # once all have ended, an interrupt any saw comes first
        raise _first_cause(futures) or cause
    except BaseException:
        # interrupted or failed: stop every manim still running, keep nothing half-done
        renders.stop()
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
        if server is not None:
            server.close(wait=False)  # it exits while the bundle is assembled


def _first_cause(futures: list[Future[Path]]) -> BaseException | None:
    """What ends the renders, if anything yet: a Ctrl-C or SIGTERM any render saw, else the first
    failure in the scenes' order; never the end of a render the build stopped itself."""
    ended = [future.exception() for future in futures if future.done() and not future.cancelled()]
    causes = [error for error in ended if error is not None and not isinstance(error, _Stopped)]
    stops = [error for error in causes if isinstance(error, KeyboardInterrupt)]
    return (stops or causes or [None])[0]


def _stage_files(plan: BundlePlan, staging: Staging, rendered: dict[str, Path]) -> dict[str, float]:
    """Stage every new file (clips, subtitles, stills, lecture, texts, handout, decks); return each clip's duration."""
    out, chosen = plan.out, plan.chosen
    for spec in chosen:
        if spec.name in rendered:
            clip = rendered[spec.name]
            shutil.copyfile(clip, staging.stage(plan.clip(spec)))
            subtitles, target = clip.with_suffix(".srt"), staging.stage(f"{spec.stem}.srt")
            if subtitles.exists():
                shutil.copyfile(subtitles, target)
            else:
                target.write_text("", encoding="utf-8")
    durations = {}
    for spec in chosen:
        durations[spec.name] = probe(staging.current(plan.clip(spec))).duration
        still = f"stills/{spec.stem}.png"
        if spec.name in rendered and still_path(rendered[spec.name]).is_file():
            shutil.copyfile(still_path(rendered[spec.name]), staging.stage(still))
        elif spec.name in rendered or not (out / still).exists():
            last_frame(staging.current(plan.clip(spec)), staging.stage(still))
    lecture = f"lecture.{plan.settings.extension}"
    if rendered or not (out / lecture).exists() or plan.old.get("scenes_in_lecture") != [s.name for s in chosen]:
        join_videos([staging.current(plan.clip(s)) for s in chosen], staging.stage(lecture))
        stills = [(f"{s.number}. {s.name}", staging.current(f"stills/{s.stem}.png")) for s in chosen]
        contact_sheet(stills, staging.stage("stills/contact-sheet.png"))
    _stage_texts(plan, staging, durations)
    stage_deck(plan, staging, rendered)
    stage_pptx(plan, staging, rendered)
    return durations


def _stage_texts(plan: BundlePlan, staging: Staging, durations: dict[str, float]) -> None:
    """The subtitles (SubRip and WebVTT), the narration, the handout and its notebook, the scenario."""
    offsets, total = {}, 0.0
    for spec in plan.chosen:
        offsets[spec.name] = total
        total += durations[spec.name]
    parts = [(staging.current(f"{s.stem}.srt"), offsets[s.name]) for s in plan.chosen]
    lecture_srt = srt.compose(_shifted_subtitles(parts))
    staging.stage("lecture.srt").write_text(lecture_srt, encoding="utf-8")
    staging.stage("lecture.vtt").write_text(to_webvtt(lecture_srt), encoding="utf-8")
    for spec in plan.chosen:
        clip_srt = staging.current(f"{spec.stem}.srt").read_text(encoding="utf-8")
        staging.stage(f"{spec.stem}.vtt").write_text(to_webvtt(clip_srt), encoding="utf-8")
    scenes = [(s, staging.current(f"{s.stem}.srt"), offsets[s.name]) for s in plan.chosen]
    staging.stage("narration.md").write_text(_narration(plan.scenario, scenes), encoding="utf-8")
    for name, content in handout_files(plan.scenario, plan.lecture).items():
        staging.stage(f"handout/{name}").write_text(content, encoding="utf-8")
    notebook = notebook_json(plan.scenario, plan.lecture)
    staging.stage("handout/notebook.ipynb").write_text(notebook, encoding="utf-8")
    staging.stage("scenario.toml").write_text(scenario_to_toml(plan.scenario), encoding="utf-8")


def _file_entry(staging: Staging, rel: str, kind: str, scene: str | None = None) -> dict[str, Any]:
    """One file of the manifest: path, kind, scene, size, and for videos their shape and sound."""
    path = staging.current(rel)
    entry: dict[str, Any] = {"path": rel, "kind": kind, "scene": scene}
    if kind in {"clip", "lecture"}:
        info = probe(path)
        entry.update(duration=info.duration, width=info.width, height=info.height, fps=info.fps)
        entry["audio"] = info.audio_duration is not None
    entry["bytes"] = path.stat().st_size
    return entry


def _file_entries(plan: BundlePlan, staging: Staging) -> list[dict[str, Any]]:
    """The manifest's list of files (but the page and the manifest itself), in the page's order."""
    listed: list[tuple[str, str, str | None]] = []
    for spec in plan.chosen:
        listed += [(plan.clip(spec), "clip", spec.name), (f"{spec.stem}.srt", "subtitles", spec.name)]
        listed += [(f"{spec.stem}.vtt", "webvtt", spec.name), (f"stills/{spec.stem}.png", "still", spec.name)]
    listed += [(f"lecture.{plan.settings.extension}", "lecture", None), ("lecture.srt", "subtitles", None)]
    listed += [("lecture.vtt", "webvtt", None), ("narration.md", "narration", None)]
    listed.append(("stills/contact-sheet.png", "contact-sheet", None))
    listed += [(f"handout/{name}", "handout", None) for name in handout_names(plan.scenario, plan.lecture)]
    listed += [("handout/notebook.ipynb", "notebook", None), ("scenario.toml", "scenario", None)]
    listed += [(rel, kind, None) for rel, kind in staging.deck]
    listed += [(rel, kind, None) for rel, kind in staging.pptx]
    return [_file_entry(staging, rel, kind, scene) for rel, kind, scene in listed]


def _manifest(
    plan: BundlePlan,
    rendered: dict[str, Path],
    durations: dict[str, float],
    jobs: list[_Job],
    files: list[dict[str, Any]],
) -> dict[str, Any]:
    """The manifest: it vouches for every file of the new bundle, and is moved into place last."""
    seconds = {job.spec.name: job.seconds for job in jobs}
    old_scenes = plan.old_scenes

    def slides(spec: SceneSpec) -> str | None:
        """The clip key the scene's slides in the work folder were made with, if they are this clip's."""
        made = plan.settings.slides if spec.name in rendered else plan.has_slides(spec)
        return plan.keys[spec.name] if made else None

    scenes = [
        {
            "number": s.number,
            "name": s.name,
            "key": plan.keys[s.name],
            "render_s": seconds[s.name] or old_scenes.get(s.name, {}).get("render_s"),
            "quality": plan.settings.quality,
            "clip": plan.clip(s),
            "duration": durations[s.name],
            "slides": slides(s),
        }
        for s in plan.chosen
    ]
    return {
        "tool": "attention-explainer",
        "scenario": {"title": plan.scenario.title, "hash": json_hash(plan.scenario.to_dict())},
        "settings": plan.settings.key(),
        "settings_hash": json_hash(plan.settings.key()),
        "code": plan.code,
        "scenes_in_lecture": [s.name for s in plan.chosen],
        "rendered": sorted(rendered),
        "deck": deck_key(plan) if any(entry["kind"] == "deck" for entry in files) else None,
        PPTX_KIND: pptx_key(plan) if any(entry["kind"] == PPTX_KIND for entry in files) else None,
        "scenes": scenes,
        "files": files,
    }


def _swap_in(staging: Staging) -> None:
    """Move every staged file into place, the manifest last; the renames take milliseconds.

    Then the files of replaced folders that the new bundle no longer has, and what it removes, go.
    """
    with _signals_deferred():  # Ctrl-C or SIGTERM waits for the last rename (SIGKILL cannot)
        for rel in sorted(staging.staged, key=lambda r: r == MANIFEST):
            target = staging.out / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            os.replace(staging.staged[rel], target)
    for folder in sorted(staging.whole):
        for path in sorted((staging.out / folder).rglob("*"), reverse=True):
            rel = path.relative_to(staging.out).as_posix()
            if path.is_file() and rel not in staging.staged:
                path.unlink()
            elif path.is_dir() and not any(path.iterdir()):
                path.rmdir()
    for rel in sorted(staging.removed):
        target = staging.out / rel
        if target.is_dir():
            shutil.rmtree(target, ignore_errors=True)
        else:
            target.unlink(missing_ok=True)


@contextmanager
def _signals_deferred() -> Iterator[None]:
    """Hold SIGINT and SIGTERM until the block is done, then deliver them (main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []
    held = (signal.SIGINT, signal.SIGTERM)
    previous = {signum: signal.signal(signum, lambda signum, frame: caught.append(signum)) for signum in held}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, signal.SIG_DFL if handler is None else handler)
    for number in dict.fromkeys(caught):
        signal.raise_signal(number)


def expected_cost(spec: SceneSpec, old_scenes: dict[str, Any], settings: BundleSettings) -> float:
    """Seconds the scene's render will take: its last render at this quality, else a rough
    order measured here (at -ql MatrixForm takes 2.4 times Scores, at -qh 1.5 times)."""
    old = old_scenes.get(spec.name, {})
    if isinstance(old.get("render_s"), (int, float)) and old.get("quality") == settings.quality:
        return float(old["render_s"])
    from scenes.registry import render_cost

    return render_cost(spec.name, settings.quality)


def read_manifest(out: Path) -> dict[str, Any]:
    """The previous run's manifest; anything unreadable or malformed counts as none (re-render)."""
    try:
        data = json.loads((out / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    scenes = data.get("scenes")
    scenes = scenes if isinstance(scenes, list) else []
    data["scenes"] = [entry for entry in scenes if isinstance(entry, dict) and isinstance(entry.get("name"), str)]
    return data


RenderedScenes = Callable[[BundlePlan, list[SceneSpec]], dict[str, tuple[Path, float]]]
"""Renders made elsewhere: given the plan and the scenes that changed, each one's clip in the work
folder (its subtitles and still beside it, as :func:`install_products` writes them) and its seconds."""


@dataclass(frozen=True)
class SceneProducts:
    """What the assembly of a bundle needs of one scene's render, as bytes (they travel between machines)."""

    scene: str  # the class name
    key: str  # the clip key it was rendered for
    clip: bytes
    subtitles: bytes  # SubRip; empty when the scene has no captions
    still: bytes  # PNG of the clip's last frame
    seconds: float  # how long the render took
    made_by: str  # host and process that rendered it


def render_scene_products(
    spec: SceneSpec, settings: BundleSettings, scenario_toml: str, key: str, work: Path,
    server: ForkServer | None = None,
) -> SceneProducts:
    """Render one scene as the bundle does, in the work folder ``work`` of the caller's own (its
    TeX and text caches are kept there), and return its products as bytes.

    ``key`` is the clip key the caller planned; it travels with the products. Slides are not
    made here (a course has no decks).
    """
    import socket

    work.mkdir(parents=True, exist_ok=True)
    scenario_file = work / f"scenario-{os.getpid()}.toml"
    _write_text(scenario_file, scenario_toml)
    tex_complete = _tex_cache_opened(work)
    _prune_texts(work / TEXTS)
    job = _Job(spec)
    clip = _render_scene(job, replace(settings, slides=False), work, scenario_file, lambda: None, _Renders(), server)
    tex_complete.touch()
    subtitles = clip.with_suffix(".srt")
    return SceneProducts(
        spec.name, key, clip.read_bytes(), subtitles.read_bytes() if subtitles.is_file() else b"",
        still_path(clip).read_bytes(), job.seconds, f"{socket.gethostname()}:{os.getpid()}",
    )


def install_products(plan: BundlePlan, spec: SceneSpec, products: SceneProducts) -> Path:
    """Write a scene's products into the bundle's work folder where its own render would have
    left them (clip, subtitles and still beside it); return the clip's path."""
    if products.key != plan.keys[spec.name]:
        raise BundleError(f"scene {spec.name}: rendered for another clip key than the bundle plans", 1)
    media = _fresh_media(spec, plan.work)
    clip = media / "videos" / "elsewhere" / plan.settings.quality / f"{spec.name}.{plan.settings.extension}"
    clip.parent.mkdir(parents=True, exist_ok=True)
    for path, content in ((clip, products.clip), (clip.with_suffix(".srt"), products.subtitles)):
        with atomic_write(path) as tmp:
            tmp.write_bytes(content)
    with atomic_write(still_path(clip)) as tmp:
        tmp.write_bytes(products.still)
    (media / ".finished").touch()
    return clip


def _rendered_elsewhere(plan: BundlePlan, jobs: list[_Job], renders: RenderedScenes) -> dict[str, Path]:
    """The clips ``renders`` made of the scenes that changed; every job marked done or cached."""
    to_render = plan.changed()
    made = renders(plan, to_render)
    missing = [spec.name for spec in to_render if spec.name not in made]
    if missing:
        raise BundleError(f"scenes {', '.join(missing)}: no render was made for them", 1)
    for job in jobs:
        if job.spec.name in made:
            job.status, job.seconds = "done", made[job.spec.name][1]
        else:
            job.status = "cached"
    return {name: clip for name, (clip, _) in made.items() if name in plan.keys}
