"""Test set-up for the scene tests: frame-comparison options, shared dry runs, background renders.

* ``--set_test`` (write control frames instead of comparing) and ``--show_diff`` are the options
  ``manim.utils.testing.frames_comparison`` reads; manim registers them only in its own test
  suite, so they are registered here.
* ``frames_comparison`` skips every test when Cairo is older than 1.18; this machine has 1.16,
  and the control data in ``tests/control_data/scenes`` was written with it, so the minimum is
  lowered to the Cairo in use (never raised).
* ``scene_build`` dry-runs each (scene, scenario) once per session for the number and layout
  tests.
* The workers of ``pytest -n`` share the Pango texts they make through one folder for the session
  (as the bundle's processes do, :func:`scenes.kit.text.share_made_texts`): a quarter of the texts
  one worker needs, the other made.
* The ``render`` tests (``manim render -ql`` in a subprocess per scene) are slow; their renders
  start in the background, one at a time, as soon as collection is over, and each test waits for
  its own scene. Deselect them with ``-m "not render"``.
* Hypothesis runs without its per-example deadline: the suite asserts no times, and on a loaded
  machine one slow example (a deadline of 200 ms missed once, met on the retry) failed a run.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import cairo
import manim.utils.testing.frames_comparison as frames_comparison_module
import pytest
from hypothesis import settings
from manim import config as manim_config
from scene_helpers import (
    RENDER_OPTIONS,
    REPO,
    SCENARIOS,
    Build,
    build_scene,
    clean_environment,
    load_scene_class,
    manim_command,
)

from scenes.kit.text import share_made_texts

# derandomize: the same examples every run (a property test must not fail one run in twenty on fresh draws)
settings.register_profile("no-deadline", deadline=None, derandomize=True)
settings.load_profile("no-deadline")

CONTROL_DATA = Path(__file__).resolve().parent / "control_data"
CONTROL_DATA.mkdir(exist_ok=True)  # frames_comparison makes only the last level with --set_test

# Lower, never raise: on Cairo >= 1.18 manim's own threshold stays.
frames_comparison_module.MIN_CAIRO_VERSION = min(frames_comparison_module.MIN_CAIRO_VERSION, cairo.cairo_version())

RENDER_TIMEOUT = 900  # seconds; a render that hangs fails its test instead of the whole run


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--set_test",
        action="store_true",
        default=False,
        help="frame tests: write the control frames (tests/control_data/) instead of comparing with them",
    )
    parser.addoption(
        "--show_diff",
        action="store_true",
        default=False,
        help="frame tests: show a picture of the difference when a frame does not match",
    )


# -- one dry run per (scene, scenario), shared by the number and layout tests ----------------------


class _BuildCache:
    def __init__(self, media_dir: Path) -> None:
        self.media_dir = media_dir
        self.builds: dict[tuple[str, str, str], Build] = {}

    def get(self, module: str, name: str, scenario: str) -> Build:
        key = (module, name, scenario)
        if key not in self.builds:
            cls = load_scene_class(module, name)
            self.builds[key] = build_scene(cls, SCENARIOS[scenario](), self.media_dir, f"{name} [{scenario}]")
        return self.builds[key]


@pytest.fixture(scope="session")
def scene_builds(tmp_path_factory: pytest.TempPathFactory) -> _BuildCache:
    """``scene_builds.get(module, class, scenario)``: the session's dry run of that scene."""
    return _BuildCache(tmp_path_factory.mktemp("dry-run-media"))


# -- background renders ---------------------------------------------------------------------------


@dataclass
class RenderResult:
    command: list[str]
    returncode: int
    stdout: str
    stderr: str
    media_dir: Path

    def explain(self) -> str:
        tail = "\n".join((self.stdout + "\n" + self.stderr).strip().splitlines()[-40:])
        return f"$ {' '.join(self.command)}\nexit {self.returncode}\n{tail}"


class RenderPool:
    """Renders scenes at -ql, one at a time, in a background thread."""

    def __init__(self, jobs: list[tuple[str, str]], root: Path) -> None:
        self.jobs = jobs
        self.root = root
        self.results: dict[tuple[str, str], RenderResult] = {}
        self.done = {job: threading.Event() for job in jobs}
        self.process: subprocess.Popen[str] | None = None
        self.stopping = False
        self.thread = threading.Thread(target=self._run, name="scene-renders", daemon=True)

    def start(self) -> None:
        self.thread.start()

    def _run(self) -> None:
        for job in self.jobs:
            if self.stopping:
                break
            self.results[job] = self._render(*job)
            self.done[job].set()

    def _render(self, module: str, name: str) -> RenderResult:
        media_dir = self.root / name
        script = str(Path(*module.split(".")).with_suffix(".py"))
        command = manim_command("-ql", *RENDER_OPTIONS.get(name, ()), "--media_dir", str(media_dir), script, name)
        try:
            self.process = subprocess.Popen(
                command, cwd=REPO, env=clean_environment(), text=True,
                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            )
            try:
                stdout, stderr = self.process.communicate(timeout=RENDER_TIMEOUT)
            except subprocess.TimeoutExpired:
                self.process.kill()
                stdout, stderr = self.process.communicate()
                stderr += f"\n(killed after {RENDER_TIMEOUT} s)"
            return RenderResult(command, self.process.returncode, stdout, stderr, media_dir)
        except OSError as error:
            return RenderResult(command, -1, "", str(error), media_dir)
        finally:
            self.process = None

    def result(self, module: str, name: str) -> RenderResult:
        job = (module, name)
        if job not in self.done:  # not collected up front (e.g. run by node id): render now
            return self._render(module, name)
        self.done[job].wait()
        return self.results[job]

    def stop(self) -> None:
        self.stopping = True
        process = self.process
        if process is not None and process.poll() is None:
            process.kill()  # only the render this pool started
        self.thread.join(timeout=30)


_POOL: RenderPool | None = None
_POOL_DIR: Path | None = None


_JOBS: list[tuple[str, str]] = []
_TEXTS_FOLDER = "ATTENTION_TEST_TEXTS"  # set by the controlling process, read by its workers (not by renders)
_OWN_MEDIA: list[Path] = []  # this process's manim media folder (its text SVGs and TeX)


def pytest_configure(config: pytest.Config) -> None:
    if "PYTEST_XDIST_WORKER" not in os.environ:
        os.environ[_TEXTS_FOLDER] = tempfile.mkdtemp(prefix="attention-texts-")
    share_made_texts(Path(os.environ[_TEXTS_FOLDER]))
    # Each process its own media folder: manim writes a text's SVG to ``<hash>_.svg`` beside
    # the cache, parses it and deletes it, so two workers making one text in a shared
    # ./media/texts at the same moment can delete each other's file (FileNotFoundError).
    _OWN_MEDIA[:] = [Path(tempfile.mkdtemp(prefix="attention-media-"))]
    manim_config.media_dir = str(_OWN_MEDIA[0])


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook, which reads the groups into the node ids
def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    """Keep work that is shared on one worker of ``pytest -n`` (xdist's ``loadgroup``).

    Every test of one scene's dry runs (layout, numbers, plan) runs on one worker, which builds
    each (scene, scenario) once; the render tests of one module run on one worker, which renders
    the module's bundles once.
    """
    for item in items:
        callspec = getattr(item, "callspec", None)
        scene = callspec.params.get("scene") if callspec is not None else None
        if item.get_closest_marker("render") is not None:  # a module's renders share its fixtures
            item.add_marker(pytest.mark.xdist_group(f"renders-{item.module.__name__}"))
        elif scene is not None and "scene_builds" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.xdist_group(f"scene-{scene[1]}"))


def pytest_collection_finish(session: pytest.Session) -> None:
    """Note the renders the selected render tests need (after -m/-k); start them in the background.

    Under ``pytest -n`` every worker collects every test but runs only some: a worker starts the
    renders when its first render test asks for them.
    """
    if session.config.option.collectonly or _POOL is not None:
        return
    _JOBS.clear()
    for item in session.items:
        if item.get_closest_marker("render") is None:
            continue
        callspec = getattr(item, "callspec", None)
        scene = callspec.params.get("scene") if callspec is not None else None
        if scene is not None and tuple(scene) not in _JOBS:
            _JOBS.append(tuple(scene))
    if _JOBS and "PYTEST_XDIST_WORKER" not in os.environ:
        _start_pool()


def _start_pool() -> RenderPool:
    global _POOL, _POOL_DIR
    if _POOL is None:
        _POOL_DIR = Path(tempfile.mkdtemp(prefix="attention-renders-"))
        _POOL = RenderPool(list(_JOBS), _POOL_DIR)
        _POOL.start()
    return _POOL


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    global _POOL
    if _POOL is not None:
        _POOL.stop()
        _POOL = None
    if _POOL_DIR is not None:
        shutil.rmtree(_POOL_DIR, ignore_errors=True)
    for media in _OWN_MEDIA:
        shutil.rmtree(media, ignore_errors=True)
    texts = os.environ.pop(_TEXTS_FOLDER, None)
    if texts and "PYTEST_XDIST_WORKER" not in os.environ:
        shutil.rmtree(texts, ignore_errors=True)


@pytest.fixture(scope="session")
def render_pool(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RenderPool]:
    if _POOL is not None or _JOBS:
        yield _start_pool()
        return
    pool = RenderPool([], tmp_path_factory.mktemp("renders"))
    yield pool
