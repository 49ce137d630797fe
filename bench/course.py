"""The course row of ``python -m bench`` (issue 31): a course on a local Dask cluster against ``render``.

``course_renders`` renders one course of :data:`BUNDLES` (4 bundles) with ``attention-explainer
course --workers 2`` (a local cluster of two one-thread workers), and, in the same round, the same
4 bundles one after another with ``attention-explainer render`` (each on the machine's cores, as
render does); each cold, in fresh folders. The budget is the ratio of the two wall times,
measured side by side (:data:`BUDGET`), never seconds.

``task_overhead`` measures the scheduler's overhead per task: the round trip of a task that does
nothing (submit, run on a worker, result back) on a local cluster of two workers, one after
another, after a warm-up; no test asserts a time.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path
from typing import Any

from .measure import run_measured

BUNDLES: tuple[tuple[str, str], ...] = (
    ("preset", "dog-chased-ball"),
    ("preset", "raw-dot-product"),
    ("sentence", "the cat sat on the mat"),
    ("sentence", "attention lets tokens look back"),
)
"""The course's 4 bundles: ``(scenario key, value)``, each of the default lecture."""

SCENES = ("scores", "softmax")
"""The scenes of each bundle (quick mode: the first only)."""

BUDGET = 1.1
"""The most the course may take, in wall time, over the same bundles rendered one after another."""


def course_file(scenes: tuple[str, ...]) -> str:
    """The course file of :data:`BUNDLES` at -ql."""
    tables = []
    for number, (key, value) in enumerate(BUNDLES, start=1):
        listed = ", ".join(f'"{scene}"' for scene in scenes)
        tables.append(f'[[bundle]]\n{key} = "{value}"\nscenes = [{listed}]\nquality = "l"\nname = "b{number}"\n')
    return 'title = "bench"\n\n' + "\n".join(tables)


def _render_command(out: Path, key: str, value: str, scenes: tuple[str, ...]) -> list[str]:
    return [sys.executable, "-m", "attention_explainer", "render", f"--{key}", value, "--scenes", ",".join(scenes),
            "--quality", "l", "--out", str(out)]  # fmt: skip


def _one_by_one(folder: Path, scenes: tuple[str, ...]) -> dict[str, float]:
    """The course's bundles rendered by render, one after another: summed wall and CPU time."""
    walls, cpus = [], []
    for number, (key, value) in enumerate(BUNDLES, start=1):
        report = run_measured(_render_command(folder / "render" / f"b{number}", key, value, scenes))
        walls.append(report["wall_s"])
        cpus.append(report["cpu_s"])
    return {"wall_s": sum(walls), "cpu_s": sum(cpus)}


def _round(folder: Path, scenes: tuple[str, ...], course_first: bool) -> tuple[dict[str, Any], dict[str, float]]:
    """One side-by-side round: the course on 2 workers and the same bundles by render, one after
    another (which goes first alternates from round to round, so a drift of the machine's load
    favours neither)."""
    folder.mkdir(parents=True)
    course = folder / "course.toml"
    course.write_text(course_file(scenes), encoding="utf-8")
    command = [sys.executable, "-m", "attention_explainer", "course", str(course), "--workers", "2", "--out",
               str(folder / "course")]  # fmt: skip
    one_by_one = {} if course_first else _one_by_one(folder, scenes)
    on_cluster = run_measured(command)
    return on_cluster, one_by_one or _one_by_one(folder, scenes)


def course_renders(runs: int, scratch: Path, quick: bool = False) -> dict[str, Any]:
    """Medians of ``runs`` rounds: the course's wall and CPU time, render's, and their ratio."""
    scenes = SCENES[:1] if quick else SCENES
    rounds = [_round(scratch / f"course-{run}", scenes, course_first=run % 2 == 0) for run in range(runs)]
    ratios = [course["wall_s"] / one_by_one["wall_s"] for course, one_by_one in rounds]
    return {
        "runs": runs,
        "bundles": len(BUNDLES),
        "scenes": list(scenes),
        "course_wall_s": statistics.median(c["wall_s"] for c, _ in rounds),
        "course_cpu_s": statistics.median(c["cpu_s"] for c, _ in rounds),
        "render_wall_s": statistics.median(r["wall_s"] for _, r in rounds),
        "render_cpu_s": statistics.median(r["cpu_s"] for _, r in rounds),
        "ratio": statistics.median(ratios),
        "ratios": ratios,  # each round's, in order: a shared machine's load moves them
        "overhead": task_overhead(),
    }


def nothing(value: int) -> int:
    """The trivial task whose round trip :func:`task_overhead` times."""
    return value


def task_overhead(tasks: int = 200) -> dict[str, float]:
    """Milliseconds per round trip of a trivial task on a local cluster of two workers (median, 90th centile)."""
    import logging

    import distributed

    with distributed.LocalCluster(  # type: ignore[no-untyped-call]
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None, silence_logs=logging.CRITICAL
    ) as cluster, distributed.Client(cluster) as client:  # type: ignore[no-untyped-call]
        for k in range(20):  # warm-up: connections made, the function's module imported on each worker
            client.submit(nothing, k, pure=False).result()
        times = []
        for k in range(tasks):
            start = time.perf_counter()
            client.submit(nothing, k, pure=False).result()
            times.append((time.perf_counter() - start) * 1000)
    times.sort()
    return {"tasks": tasks, "median_ms": statistics.median(times), "p90_ms": times[int(0.9 * len(times))]}


def course_table(course: dict[str, Any] | None) -> list[str]:
    """The course row as Markdown."""
    if not course:
        return []
    verdict = "✓" if course["ratio"] <= BUDGET else "✗"
    overhead = course["overhead"]
    return [
        "",
        f"| a course of {course['bundles']} bundles ({', '.join(course['scenes'])}, -ql), side by side | wall (s) "
        "| CPU (s) | course / render | target |",
        "|---|---:|---:|---:|---|",
        f"| `course`, a local cluster of 2 workers | {course['course_wall_s']:.1f} | {course['course_cpu_s']:.1f} "
        f"| {course['ratio']:.2f} | ≤ {BUDGET}× {verdict} |",
        f"| `render`, one bundle after another | {course['render_wall_s']:.1f} | {course['render_cpu_s']:.1f} | | |",
        "",
        f"Dask's round trip of a trivial task on a local cluster of 2 workers: {overhead['median_ms']:.1f} ms "
        f"(median of {overhead['tasks']:.0f}; 90th centile {overhead['p90_ms']:.1f} ms).",
    ]


def course_target(course: dict[str, Any] | None) -> list[str]:
    """The course's line of the targets."""
    if not course:
        return []
    return [f"a course on 2 workers ≤ {BUDGET}× render one by one {'✓' if course['ratio'] <= BUDGET else '✗'}"]
