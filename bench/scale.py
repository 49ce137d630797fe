"""The scale-out row of ``python -m bench`` (issue 42): one course on 1 and on 2 Dask workers, side by side.

:func:`scale_out` renders the course of :func:`bench.course.course_file` (4 bundles of the default
lecture at -ql) with ``attention-explainer course --workers 1`` and ``--workers 2`` (a local cluster on
127.0.0.1), cold, in fresh folders, one after the other in each round (which goes first alternates);
the measure is the ratio of their wall times, 1 worker / 2 workers (:data:`TARGET`: 1.7 on 2 cores).

It does the same with workers each in a session of their own (:func:`own_sessions`: a ``dask scheduler`` and
``dask worker`` processes on 127.0.0.1, ``course --scheduler``), as a deployment starts them: on a busy shared
host Linux's autogroup scheduling gives each session a part of the CPU, so a local cluster's second worker,
in the command's session, gets no more CPU than that session had with one.

From the 1-worker run it splits the course's wall time as Amdahl's law does (:func:`amdahl`): the
parallel part is the scene renders (each scene's ``render_s`` in its bundle's manifest, as the worker
timed it), the serial part the rest (the cluster's start, planning, the round trips, the assembly of
the bundles), and projects the speed-up on N workers. A projection, not a measurement; no test asserts
a time.
"""

from __future__ import annotations

import json
import os
import signal
import statistics
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from .course import SCENES, course_file
from .measure import run_measured

ROOT = Path(__file__).resolve().parent.parent

TARGET = 1.7
"""The least the 2-worker course should be faster than the 1-worker one, in wall time, on 2 cores."""

PROJECTED = (2, 10, 20, 50, 100)
"""The worker counts the table projects the speed-up for."""


def amdahl(serial_s: float, parallel_s: float, workers: int, longest_s: float = 0.0) -> float:
    """The speed-up of ``workers`` over one when only ``parallel_s`` of the work shares out, in tasks of
    which the longest takes ``longest_s`` (no worker count ends the renders sooner than that task).

    >>> round(amdahl(10.0, 90.0, 10), 2)
    5.26
    >>> amdahl(0.0, 90.0, 4)
    4.0
    >>> amdahl(10.0, 90.0, 100, longest_s=15.0)
    4.0
    """
    return (serial_s + parallel_s) / (serial_s + max(parallel_s / workers, longest_s))


def task_seconds(out: Path) -> list[float]:
    """Every scene render of the course in ``out``, in seconds, as its worker timed it (the manifests' ``render_s``)."""
    seconds = []
    for manifest in sorted(out.glob("*/manifest.json")):
        scenes = json.loads(manifest.read_text(encoding="utf-8"))["scenes"]
        seconds += [float(scene["render_s"]) for scene in scenes if scene.get("render_s")]
    return seconds


def _course(course: Path, out: Path, cluster: list[str]) -> dict[str, Any]:
    command = [sys.executable, "-m", "attention_explainer", "course", str(course), *cluster, "--out", str(out)]
    load = os.getloadavg()[0]
    report = run_measured(command)
    return {**report, "tasks_s": task_seconds(out), "load": [load, os.getloadavg()[0]]}


@contextmanager
def own_sessions(folder: Path, workers: int) -> Iterator[str]:
    """A ``dask scheduler`` and ``workers`` ``dask worker`` processes of one thread on 127.0.0.1, each in a
    session of its own, as a deployment starts them; yield the scheduler's address, end them all after.

    Linux's autogroup scheduling shares the CPU out between sessions first: on a busy shared host the
    workers of a local cluster, all in the command's session, share that one session's part, so a second
    worker there gains nothing; a worker in its own session gets a part of its own.
    """
    import distributed

    env = dict(os.environ, PYTHONPATH=str(ROOT))
    started: list[subprocess.Popen[bytes]] = []

    def start(name: str, *args: str) -> None:
        with open(folder / f"{name}.log", "wb") as log:
            started.append(subprocess.Popen([str(Path(sys.executable).with_name("dask")), *args], env=env, cwd=folder,
                                            stdout=log, stderr=subprocess.STDOUT, start_new_session=True))  # fmt: skip

    try:
        start("scheduler", "scheduler", "--no-dashboard", "--host", "127.0.0.1", "--port", "0", "--scheduler-file",
              str(folder / "scheduler.json"))  # fmt: skip
        with distributed.Client(scheduler_file=str(folder / "scheduler.json"), timeout=120) as client:  # type: ignore[no-untyped-call]
            address = str(json.loads((folder / "scheduler.json").read_text(encoding="utf-8"))["address"])
            for k in range(workers):
                start(f"worker-{k}", "worker", address, "--nthreads", "1", "--no-nanny", "--no-dashboard", "--host",
                      "127.0.0.1", "--local-directory", str(folder / f"worker-{k}"))  # fmt: skip
            client.wait_for_workers(workers, timeout=300)
        yield address
    finally:
        _end(started)


def _end(started: list[subprocess.Popen[bytes]]) -> None:
    """End the processes and their groups (a worker's renders): SIGTERM, then SIGKILL what is left after 30 s
    (a worker can hang closing once its scheduler is gone)."""
    for process in reversed(started):  # the workers, then the scheduler
        os.killpg(process.pid, signal.SIGTERM)
    for process in reversed(started):
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def _course_on(course: Path, out: Path, workers: int, sessions: bool) -> dict[str, Any]:
    """The course on a local cluster of ``workers`` (the command's own, ``--workers``), or, with ``sessions``,
    on that many workers in sessions of their own (their start not timed)."""
    if not sessions:
        return _course(course, out, ["--workers", str(workers)])
    folder = out.with_name(f"{out.name}-cluster")
    folder.mkdir(parents=True)
    with own_sessions(folder, workers) as address:
        return _course(course, out, ["--scheduler", address])


def _round(folder: Path, scenes: tuple[str, ...], one_first: bool, sessions: bool) -> dict[int, dict[str, Any]]:
    """One round: the course on 1 worker and on 2, one after the other, each cold in a folder of its own."""
    folder.mkdir(parents=True)
    course = folder / "course.toml"
    course.write_text(course_file(scenes), encoding="utf-8")
    return {workers: _course_on(course, folder / f"workers-{workers}", workers, sessions) for workers in
            ((1, 2) if one_first else (2, 1))}  # fmt: skip


def _ratios(rounds: list[dict[int, dict[str, Any]]]) -> dict[str, Any]:
    """Each worker count's median wall time, and each round's ratio, 1 worker / 2."""
    ratios = [r[1]["wall_s"] / r[2]["wall_s"] for r in rounds]
    walls = {str(n): statistics.median(r[n]["wall_s"] for r in rounds) for n in (1, 2)}
    return {"wall_s": walls, "ratio": statistics.median(ratios), "ratios": ratios}


def scale_out(runs: int, scratch: Path, quick: bool = False) -> dict[str, Any]:
    """Medians of ``runs`` rounds: each worker count's wall and CPU time, their ratio, and Amdahl's split;
    the same ratio with the workers in sessions of their own (:func:`own_sessions`)."""
    scenes = SCENES[:1] if quick else SCENES
    rounds = [_round(scratch / f"scale-{run}", scenes, run % 2 == 0, sessions=False) for run in range(runs)]
    own = [_round(scratch / f"sessions-{run}", scenes, run % 2 == 0, sessions=True) for run in range(runs)]
    one_wall = statistics.median(r[1]["wall_s"] for r in rounds)
    parallel = statistics.median(sum(r[1]["tasks_s"]) for r in rounds)
    serial = max(0.0, one_wall - parallel)
    longest = statistics.median(max(r[1]["tasks_s"]) for r in rounds)
    return {
        "runs": runs,
        "scenes": list(scenes),
        "tasks": len(rounds[0][1]["tasks_s"]),
        **_ratios(rounds),
        "cpu_s": {str(n): statistics.median(r[n]["cpu_s"] for r in rounds) for n in (1, 2)},
        "own_sessions": _ratios(own),
        "load": [r[n]["load"] for r in rounds + own for n in (1, 2)],  # the 1-minute load average before and after
        "task_median_s": statistics.median(t for r in rounds for t in r[1]["tasks_s"]),
        "serial_s": serial,
        "parallel_s": parallel,
        "longest_s": longest,
        "projected": {str(n): amdahl(serial, parallel, n, longest) for n in PROJECTED},
    }


def scale_table(scale: dict[str, Any] | None) -> list[str]:
    """The scale-out rows as Markdown."""
    if not scale:
        return []
    verdict = "✓" if scale["ratio"] >= TARGET else "✗"
    projected = " · ".join(f"{n}: {speedup:.1f}×" for n, speedup in scale["projected"].items())
    loads = [load for pair in scale["load"] for load in pair]
    return [
        "",
        f"| one course ({scale['tasks']} scene renders, -ql), side by side | wall (s) | CPU (s) "
        "| 1 worker / 2 workers | target |",
        "|---|---:|---:|---:|---|",
        f"| `course --workers 1` | {scale['wall_s']['1']:.1f} | {scale['cpu_s']['1']:.1f} | | |",
        f"| `course --workers 2` | {scale['wall_s']['2']:.1f} | {scale['cpu_s']['2']:.1f} | {scale['ratio']:.2f} "
        f"| ≥ {TARGET}× {verdict} |",
        *_own_rows(scale.get("own_sessions")),
        "",
        f"Amdahl's split of the 1-worker course: scene renders {scale['parallel_s']:.1f} s (median per scene "
        f"{scale['task_median_s']:.1f} s, longest {scale.get('longest_s', 0.0):.1f} s), the rest "
        f"{scale['serial_s']:.1f} s; projected speed-up of this course on N workers "
        f"{projected} (load average {min(loads):.1f} to {max(loads):.1f} during the runs).",
    ]


def _own_rows(own: dict[str, Any] | None) -> list[str]:
    """The rows of the workers in sessions of their own (their start not timed; their CPU time not read)."""
    if not own:
        return []
    verdict = "✓" if own["ratio"] >= TARGET else "✗"
    return [
        f"| 1 worker in a session of its own (`--scheduler`) | {own['wall_s']['1']:.1f} | | | |",
        f"| 2 workers, each in a session of its own | {own['wall_s']['2']:.1f} | | {own['ratio']:.2f} "
        f"| ≥ {TARGET}× {verdict} |",
    ]


def scale_target(scale: dict[str, Any] | None) -> list[str]:
    """The scale-out's line of the targets."""
    if not scale:
        return []
    own = scale.get("own_sessions")
    mark = "✓" if scale["ratio"] >= TARGET else "✗"
    return [f"a course on 2 workers ≥ {TARGET}× on 1 {mark}"
            + (f" (in sessions of their own {'✓' if own['ratio'] >= TARGET else '✗'})" if own else "")]
