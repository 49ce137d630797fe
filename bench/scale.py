"""The scale-out row of ``python -m bench`` (issue 42): one course on 1 and on 2 Dask workers, side by side.

:func:`scale_out` renders the course of :func:`bench.course.course_file` (4 bundles of the default
lecture at -ql) with ``attention-explainer course --workers 1`` and ``--workers 2`` (a local cluster on
127.0.0.1), cold, in fresh folders, one after the other in each round (which goes first alternates);
the measure is the ratio of their wall times, 1 worker / 2 workers (:data:`TARGET`: 1.7 on 2 cores).

From the 1-worker run it splits the course's wall time as Amdahl's law does (:func:`amdahl`): the
parallel part is the scene renders (each scene's ``render_s`` in its bundle's manifest, as the worker
timed it), the serial part the rest (the cluster's start, planning, the round trips, the assembly of
the bundles), and projects the speed-up on N workers. A projection, not a measurement; no test asserts
a time.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
from pathlib import Path
from typing import Any

from .course import SCENES, course_file
from .measure import run_measured

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


def _course(course: Path, out: Path, workers: int) -> dict[str, Any]:
    command = [sys.executable, "-m", "attention_explainer", "course", str(course), "--workers", str(workers),
               "--out", str(out)]  # fmt: skip
    load = os.getloadavg()[0]
    report = run_measured(command)
    return {**report, "tasks_s": task_seconds(out), "load": [load, os.getloadavg()[0]]}


def _round(folder: Path, scenes: tuple[str, ...], one_first: bool) -> dict[int, dict[str, Any]]:
    """One round: the course on 1 worker and on 2, one after the other, each cold in a folder of its own."""
    folder.mkdir(parents=True)
    course = folder / "course.toml"
    course.write_text(course_file(scenes), encoding="utf-8")
    return {workers: _course(course, folder / f"workers-{workers}", workers) for workers in
            ((1, 2) if one_first else (2, 1))}  # fmt: skip


def scale_out(runs: int, scratch: Path, quick: bool = False) -> dict[str, Any]:
    """Medians of ``runs`` rounds: each worker count's wall and CPU time, their ratio, and Amdahl's split."""
    scenes = SCENES[:1] if quick else SCENES
    rounds = [_round(scratch / f"scale-{run}", scenes, one_first=run % 2 == 0) for run in range(runs)]
    ratios = [r[1]["wall_s"] / r[2]["wall_s"] for r in rounds]
    one_wall = statistics.median(r[1]["wall_s"] for r in rounds)
    parallel = statistics.median(sum(r[1]["tasks_s"]) for r in rounds)
    serial = max(0.0, one_wall - parallel)
    longest = statistics.median(max(r[1]["tasks_s"]) for r in rounds)
    return {
        "runs": runs,
        "scenes": list(scenes),
        "tasks": len(rounds[0][1]["tasks_s"]),
        "wall_s": {str(n): statistics.median(r[n]["wall_s"] for r in rounds) for n in (1, 2)},
        "cpu_s": {str(n): statistics.median(r[n]["cpu_s"] for r in rounds) for n in (1, 2)},
        "ratio": statistics.median(ratios),
        "ratios": ratios,  # each round's, in order: a shared machine's load moves them
        "load": [r[n]["load"] for r in rounds for n in (1, 2)],  # the 1-minute load average before and after
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
        "",
        f"Amdahl's split of the 1-worker course: scene renders {scale['parallel_s']:.1f} s (median per scene "
        f"{scale['task_median_s']:.1f} s, longest {scale.get('longest_s', 0.0):.1f} s), the rest "
        f"{scale['serial_s']:.1f} s; projected speed-up of this course on N workers "
        f"{projected} (load average {min(loads):.1f} to {max(loads):.1f} during the runs).",
    ]


def scale_target(scale: dict[str, Any] | None) -> list[str]:
    """The scale-out's line of the targets."""
    if not scale:
        return []
    return [f"a course on 2 workers ≥ {TARGET}× on 1 {'✓' if scale['ratio'] >= TARGET else '✗'}"]
