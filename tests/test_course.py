"""``attention-explainer course``: a course file's bundles, every scene a task on Dask distributed.

* A bad course file (TOML syntax, an unknown key, a value of the wrong type, two scenario keys,
  two bundles in one folder) is refused in one line naming the field, exit 2, no traceback, before
  any cluster starts; without ``distributed`` the command and ``import attention_explainer.course``
  say to install the course extra.
* On a real cluster started here (``dask scheduler`` and two ``dask worker`` processes on
  127.0.0.1, each in a folder of its own: no disk shared with the command), a worker killed with
  SIGKILL while it renders costs its render a second run on the other: the course ends with exit 0,
  says a worker was lost, and every bundle is whole (its folder holds exactly what its manifest
  lists) and is the bundle ``render`` would make (``render`` into it renders nothing).
* A second run with nothing changed renders nothing and starts no render; a bad scenario in one
  entry is one line naming the entry and the field, the other bundles are still made, exit 2.

The renders are Scores at -ql and 5 frames a second. The killed worker is held mid-render by the
runner's test hook (``ATTENTION_HOLD_AT``: the render writes a marker and waits), so nothing
races: the test waits on conditions (a file, a worker count), each with a timeout.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from course_checks import assert_whole, course_refusal
from scene_helpers import clean_environment

from attention_explainer.cli import main

ROOT = Path(__file__).resolve().parent.parent
DASK = Path(sys.executable).with_name("dask")
TIMEOUT = 600.0  # s: a loaded machine renders slowly; nothing here is timed
COURSE = """title = "Week 3"

[[bundle]]
preset = "dog-chased-ball"
scenes = ["scores"]
quality = "l"
fps = 5
name = "dog"

[[bundle]]
lecture = "self-attention"
sentence = "the cat sat"
seed = 2
scenes = ["scores"]
fps = 5
name = "cat"
"""
BAD_ENTRY = """
[[bundle]]
preset = "no-such-preset"
scenes = ["scores"]
fps = 5
"""


# --- the course file ---------------------------------------------------------------------------


def _refusal(tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str) -> str:
    return course_refusal(tmp_path, capsys, text)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('[[bundle]\npreset = "x"\n', "is not valid TOML"),
        ('colour = "red"\n[[bundle]]\n', "colour: unknown key"),
        ('title = "t"\n', "bundle: expected one [[bundle]] table"),
        ('[[bundle]]\ncolour = "red"\n', "bundle 1 (colour): unknown key"),
        ('[[bundle]]\n[[bundle]]\nquality = 3\n', "bundle 2 (quality): expected a string, got a number"),
        ('[[bundle]]\nquality = "x"\n', "bundle 1 (quality): expected one of l, m, h, p, k"),
        ('[[bundle]]\nscenes = "scores"\n', "bundle 1 (scenes): expected a list"),
        ('[[bundle]]\nfps = "5"\n', "bundle 1 (fps): expected a whole number, got a string"),
        ("[[bundle]]\nfps = true\n", "bundle 1 (fps): expected a whole number, got a boolean"),
        ("[[bundle]]\nfps = 0\n", "bundle 1 (fps): expected a whole number from 1 to 120"),
        ('[[bundle]]\npreset = "a"\nsentence = "b c"\n', "bundle 1 (sentence): give one of"),
        ("[[bundle]]\npreset = 1\n", "bundle 1 (preset): expected a string, got a number"),
        ('[[bundle]]\nname = "../up"\n', "bundle 1 (name): expected a folder name"),
        ('[[bundle]]\nname = "a"\n[[bundle]]\nname = "a"\n', "bundle 2 (name): its folder 'a' is bundle 1's too"),
        ("[[bundle]]\nquery = [1]\n", "bundle 1 (query): expected a token's text or its number, got a list"),
    ],
)
def test_a_bad_course_file_is_one_line_naming_the_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, expected: str
) -> None:
    line = _refusal(tmp_path, capsys, text)
    assert line.startswith("attention-explainer: error: ") and expected in line, line


def test_a_missing_course_file_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status = main(["course", str(tmp_path / "none.toml")])
    err = capsys.readouterr().err
    assert status == 2 and err.count("\n") == 1 and "cannot read" in err, err


def test_without_distributed_the_course_says_to_install_its_extra(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "distributed", None)  # import distributed raises ImportError
    monkeypatch.delitem(sys.modules, "attention_explainer.course", raising=False)
    with pytest.raises(ImportError, match=r"course extra .*attention-explainer\[course\]"):
        import attention_explainer.course  # noqa: F401
    course = tmp_path / "course.toml"
    course.write_text(COURSE, encoding="utf-8")
    assert main(["course", str(course)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "pip install 'attention-explainer[course]'" in err, err


def test_the_course_file_in_the_docs_is_read_as_it_says(tmp_path: Path) -> None:
    from attention_explainer.course_file import bundle_keys, folder_name, load_course

    text = (ROOT / "docs" / "course.md").read_text(encoding="utf-8")
    block = re.search(r"```toml\n(.*?)```", text, flags=re.DOTALL)
    assert block is not None
    (tmp_path / "week3.toml").write_text(block.group(1), encoding="utf-8")
    course = load_course(tmp_path / "week3.toml")
    assert course.title == "Attention, week 3" and len(course.entries) == 4
    first, second, third, fourth = course.entries
    assert (first.source, first.value, first.args.scenes, first.args.quality, first.args.fps) == (
        "preset", "dog-chased-ball", "scores,softmax", "l", 5
    )
    assert first.args.slides and first.args.pptx and not first.args.voice
    assert second.value == str(tmp_path / "my-sentence.toml") and second.args.query == "sat" and second.args.voice
    assert [folder_name(e) for e in course.entries] == [
        "01-self-attention-dog-chased-ball", "my-sentence", "03-multi-head-the-cat-sat-on-the-mat",
        "04-real-head-the-dog-chased-the-ball",
    ]
    assert (third.lecture, third.source, third.args.seed, third.args.heads) == ("multi-head", "sentence", 3, 3)
    assert (fourth.args.model, fourth.args.layer, fourth.args.head, fourth.args.query) == ("minilm", 3, 4, "dog")
    listed = re.search(r"Keys of a `\[\[bundle\]\]`: (.*?)\.\n", text, flags=re.DOTALL)
    assert listed is not None and re.findall(r"`([a-z-]+)`", listed.group(1)) == list(bundle_keys())


# --- on a cluster ------------------------------------------------------------------------------


def _wait(condition: Callable[[], bool], what: str, alive: list[subprocess.Popen[bytes]] = []) -> None:  # noqa: B006
    """Wait until ``condition()`` holds; fail after :data:`TIMEOUT`, or as soon as a process of ``alive`` ends."""
    deadline = time.monotonic() + TIMEOUT
    while not condition():
        for process in alive:
            assert process.poll() is None, f"{process.args[:3]} ended (status {process.returncode}) before {what}"
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


class _Cluster:
    """A ``dask scheduler`` and its ``dask worker`` processes, each in a process group of its own."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.processes: list[subprocess.Popen[bytes]] = []
        self.env = dict(clean_environment(), PYTHONPATH=str(ROOT))  # the worktree's code, in every process
        info = folder / "scheduler.json"
        self.scheduler = self._start(
            "scheduler", "scheduler", "--no-dashboard", "--host", "127.0.0.1", "--port", "0", "--scheduler-file",
            str(info),
        )  # fmt: skip
        _wait(lambda: info.is_file() and info.stat().st_size > 0, "the scheduler's address", [self.scheduler])
        self.address: str = json.loads(info.read_text(encoding="utf-8"))["address"]

    def _start(self, name: str, *args: str, env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
        log = open(self.folder / f"{name}.log", "wb")
        process = subprocess.Popen(
            [str(DASK), *args], env=env or self.env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
            cwd=self.folder,
        )  # fmt: skip
        log.close()
        self.processes.append(process)
        return process

    def worker(self, name: str, **env: str) -> subprocess.Popen[bytes]:
        """A worker of one thread in one process (no nanny: a killed worker stays dead), in its own folder."""
        own = self.folder / name
        own.mkdir()
        return self._start(
            name, "worker", self.address, "--name", name, "--nthreads", "1", "--nworkers", "1", "--no-nanny",
            "--no-dashboard", "--host", "127.0.0.1", "--local-directory", str(own), env=dict(self.env, **env),
        )  # fmt: skip

    def wait_for_workers(self, count: int) -> None:
        import distributed

        with distributed.Client(self.address, timeout=TIMEOUT) as client:
            client.wait_for_workers(count, timeout=TIMEOUT)

    def stop(self) -> None:
        """End every process started here (and its children: the renders), even after a failure."""
        for process in reversed(self.processes):
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
        for process in reversed(self.processes):
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
            _kill_group(process.pid)  # the renders a worker left behind


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except ProcessLookupError:
        pass


@contextmanager
def _cluster(folder: Path) -> Iterator[_Cluster]:
    cluster: _Cluster | None = None
    try:
        cluster = _Cluster(folder)
        yield cluster
    finally:
        if cluster is not None:
            cluster.stop()


def _course_command(course: Path, out: Path, address: str) -> list[str]:
    return [sys.executable, "-m", "attention_explainer", "course", str(course), "--out", str(out), "--scheduler",
            address]  # fmt: skip


@pytest.mark.render
def test_a_course_on_a_cluster_survives_a_killed_worker_and_renders_nothing_twice(tmp_path: Path) -> None:
    course, out, held = tmp_path / "course.toml", tmp_path / "out", tmp_path / "held"
    course.write_text(COURSE, encoding="utf-8")
    with _cluster(tmp_path) as cluster:
        doomed = cluster.worker("doomed", ATTENTION_HOLD_AT="play:1", ATTENTION_HOLD_FILE=str(held))
        cluster.wait_for_workers(1)
        log = open(tmp_path / "course.log", "w+", encoding="utf-8")
        command = subprocess.Popen(_course_command(course, out, cluster.address), env=cluster.env, cwd=tmp_path,
                                   stdout=subprocess.DEVNULL, stderr=log, start_new_session=True)  # fmt: skip
        try:
            _wait(held.is_file, "a render held on the doomed worker", [command, doomed])
            cluster.worker("survivor")
            cluster.wait_for_workers(2)
            os.killpg(doomed.pid, signal.SIGKILL)  # the worker and the render it runs
            status = command.wait(timeout=TIMEOUT)
        finally:
            if command.poll() is None:
                _kill_group(command.pid)
                command.wait()
        err = (tmp_path / "course.log").read_text(encoding="utf-8")
        log.close()
        assert status == 0, err
        assert re.search(r"worker tcp://127\.0\.0\.1:\d+ left the cluster", err), err
        assert "2 of 2 bundles made" in err and "1 worker lost" in err, err
        assert "Traceback" not in err, err
        for name in ("dog", "cat"):
            assert_whole(out / name)
            assert f'href="{name}/index.html"' in (out / "index.html").read_text(encoding="utf-8")
        _assert_render_would_make(out / "dog")
        _assert_second_run(course, out, cluster.address, tmp_path)


def _assert_render_would_make(bundle: Path) -> None:
    """``render`` of the same request into the course's bundle finds it current: it renders nothing."""
    result = subprocess.run(
        [sys.executable, "-m", "attention_explainer", "render", "--preset", "dog-chased-ball", "--scenes", "scores",
         "--fps", "5", "--out", str(bundle)],
        env=dict(clean_environment(), PYTHONPATH=str(ROOT), COLUMNS="1000"), capture_output=True, text=True,
        timeout=TIMEOUT,
    )  # fmt: skip
    assert result.returncode == 0 and "nothing changed, no scene rendered" in result.stderr, result.stderr
    assert json.loads((bundle / "manifest.json").read_text(encoding="utf-8"))["rendered"] == []


def _assert_second_run(course: Path, out: Path, address: str, tmp_path: Path) -> None:
    """Nothing changed: no render is sent; a bad third entry is one line, the others are made, exit 2."""
    course.write_text(COURSE + BAD_ENTRY, encoding="utf-8")
    before = {name: (out / name / "manifest.json").stat().st_mtime_ns for name in ("dog", "cat")}
    result = subprocess.run(_course_command(course, out, address), env=dict(clean_environment(), PYTHONPATH=str(ROOT)),
                            capture_output=True, text=True, timeout=TIMEOUT, cwd=tmp_path)  # fmt: skip
    assert result.returncode == 2, result.stderr
    errors = [line for line in result.stderr.splitlines() if "error" in line]
    assert len(errors) == 1 and errors[0].startswith("error: bundle 3 (preset): preset: unknown name"), result.stderr
    assert "rendered on" not in result.stderr and "renders sent" not in result.stderr, result.stderr
    assert result.stderr.count("made (nothing changed)") == 2 and "2 of 3 bundles made" in result.stderr
    for name in ("dog", "cat"):
        assert_whole(out / name)
        assert json.loads((out / name / "manifest.json").read_text(encoding="utf-8"))["rendered"] == []
        assert (out / name / "manifest.json").stat().st_mtime_ns >= before[name]
    assert "not made: bundle 3 (preset)" in (out / "index.html").read_text(encoding="utf-8")


def _group_gone(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return True
    return False


@pytest.mark.render
def test_ctrl_c_ends_a_course_on_a_local_cluster_in_one_line_with_130(tmp_path: Path) -> None:
    """Ctrl-C (SIGINT to the command's group, as a terminal sends it) once the renders are sent:
    exit 130, one line, the cluster closed (no process of the group left), no bundle written."""
    course, out, log_path = tmp_path / "course.toml", tmp_path / "out", tmp_path / "course.log"
    course.write_text('[[bundle]]\nsentence = "a b c"\nscenes = ["spaces"]\nfps = 5\nname = "abc"\n', encoding="utf-8")
    env = dict(clean_environment(), PYTHONPATH=str(ROOT))
    with open(log_path, "w", encoding="utf-8") as log:
        command = subprocess.Popen(
            [sys.executable, "-m", "attention_explainer", "course", str(course), "--out", str(out), "--workers", "1"],
            env=env, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=log, start_new_session=True,
        )  # fmt: skip
        try:
            _wait(lambda: "renders sent to" in log_path.read_text(encoding="utf-8"), "the renders sent", [command])
            os.killpg(command.pid, signal.SIGINT)
            status = command.wait(timeout=TIMEOUT)
            _wait(lambda: _group_gone(command.pid), "the cluster's processes gone")
        finally:
            _kill_group(command.pid)
            command.wait()
    err = log_path.read_text(encoding="utf-8")
    assert status == 130, err
    lines = err.strip().splitlines()
    assert lines[-1] == "attention-explainer: interrupted; finished files are intact, nothing half-written was kept"
    assert "Traceback" not in err and len(lines) == 2, err  # the renders sent, then the one line
    assert not (out / "abc" / "manifest.json").exists() and not list((out / "abc").iterdir())
