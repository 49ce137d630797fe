"""``python -m bench``: what a render costs on this machine, and how the math core compares.

Measures (median of ``--runs``, each cold run in a fresh temporary folder):

1. a cold render of the whole default lecture bundle at each quality: wall and CPU time, peak
   memory, seconds of video, wall seconds per video second;
2. the floor: one static shape rendered for the same clips' durations, at the same quality and
   parallelism, joined the same way, and the ratio lecture / floor (the target's, in wall time;
   beside it the same ratio in CPU time, which a shared host's busy moments move less);
3. a warm re-render with nothing changed, and after changing one number of the scenario
   (which scenes re-rendered);
4. TeX: the .tex files a cold render makes, the latex/dvisvgm calls and the time they take;
5. ``attention_math.self_attention`` against a one-line numpy formula, d = 64;
6. the peer, LLManim (``pip install llmanim==0.1.3``): its three attention demo scenes at -ql,
   as wall seconds per video second (skipped with a note when it is not installed);
7. what the lecture-hall options cost: cold -ql bundles with ``--voice`` (Piper speaks every
   caption, each beat as long as its sentence) and with ``--slides`` (the offline deck), each run
   beside a plain cold bundle in the same round, so a busy moment of a shared machine hits all
   three alike;
8. the lectures side by side: cold -ql bundles of lecture 6 (self-attention), 7 (masked) and 8
   (multi-head), one after another in each round, as wall seconds per second of video; lectures 7
   and 8 each within 1.2× of lecture 6's in the same run; and the decoder lectures (masked, inference,
   rope) on SmolLM2, each beside its preset, within 1.3× of it per video second (:mod:`bench.decoder`).
9. a course of 4 bundles on a local Dask cluster of 2 workers against the same bundles rendered
   one after another by ``render``, side by side, and Dask's round trip of a trivial task
   (:mod:`bench.course`);
10. the same course on a local cluster of 1 and of 2 workers, side by side, their ratio and Amdahl's
   split of it into serial and parallel parts (:mod:`bench.scale`).

Writes ``bench/results/latest.json`` and ``latest.md`` (``--docs`` also puts the table in
docs/speed.md, between its bench markers).
``--quick`` is a smoke run for CI: one run, -ql, small n. No test asserts a time.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import importlib.util
import json
import math
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .course import course_renders, course_table, course_target
from .decoder import decoder_renders, decoder_table, decoder_targets
from .measure import run_measured
from .scale import scale_out, scale_table, scale_target

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
SPEED_PAGE = ROOT / "docs" / "speed.md"
"""The page whose table ``--docs`` rewrites: only the table, between the markers; its prose holds no figures."""
BENCH_START = "<!-- bench:start -->"
BENCH_END = "<!-- bench:end -->"
PEER_SCENES = (
    ("llmanim.attention.qkv_projection", "DemoQKV"),
    ("llmanim.attention.attention_score", "DemoScene"),
    ("llmanim.attention.attention_output", "DemoScene"),
)
VARIANTS: tuple[tuple[str, tuple[str, ...], float], ...] = (
    ("--voice", ("--voice",), 0.30),
    ("--slides", ("--slides",), 0.15),
)
"""``(name, render flags, the most it may add to a cold -ql bundle)`` (issue 13)."""

SIZES: tuple[tuple[str, tuple[str, ...], float], ...] = (
    ("16 tokens, the whole lecture", ("--sentence", "Attention lets every token look back at all the others and choose "
                                      "what matters most here", "--seed", "16"), 90.0),
    ("the multi-head lecture (two heads)", ("--lecture", "multi-head"), 45.0),
    # 27 s cold at -ql one scene at a time here (0.66 s of wall time per second of video, Scores 0.57 in the same run)
    ("the inference lecture (KV cache)", ("--lecture", "inference"), 35.0),
)
"""``(name, render flags, the most wall time it may take cold at -ql, s)`` (issues 11 and 14)."""


def lecture_rows() -> tuple[tuple[str, float | None], ...]:
    """``(lecture, the most its wall seconds per video second may be, as a multiple of the first's)`` of every
    lecture of :mod:`scenes.registry`, in its order (each lecture's ``bench_limit``): each lecture's cost in the same
    run as lecture 6's, never in seconds (issues 29, 30, 32 and 33); a new lecture is benched with the others."""
    from scenes.registry import lectures

    return tuple((item.name, item.bench_limit) for item in lectures())


def lecture_flags(name: str) -> tuple[str, ...]:
    """What lecture ``name``'s bundle needs besides ``--lecture`` (a real model's head: the model, its head, a
    sentence): its ``bench_flags``."""
    from scenes.registry import lecture

    return lecture(name).bench_flags


_NOUNS = "dog ball cat bird car box hat cup key pen book door tree rock leaf ship bus fish cow pig rat duck".split()
FORWARD_SENTENCES = tuple(
    f"The {_NOUNS[i]} chased the {_NOUNS[(i + k) % len(_NOUNS)]} across the park until it finally stopped there."
    for k in (1, 2) for i in range(len(_NOUNS))
)
"""Sentences of 16 WordPieces each, [CLS] and [SEP] included, for the real model's forward pass (issue 30):
more than ``attention_math.minilm`` keeps (32), so each pass is computed, not read back."""

TARGETS = {
    "cold_l_wall_s": 45.0,
    "cold_h_wall_s": 480.0,
    "floor_ratio_h": 2.0,
    "warm_unchanged_s": 3.0,
    "math_ratio_4096": 1.2,
}


def _log(message: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def _median(values: Sequence[float]) -> float:
    return float(statistics.median(values))


# -- TeX: shims on PATH that time every latex and dvisvgm call --------------------------------
def _tex_shims(folder: Path) -> Path:
    shims = folder / "tex-shims"
    shims.mkdir(parents=True, exist_ok=True)
    for tool in ("latex", "dvisvgm"):
        real = shutil.which(tool)
        if real is None:
            continue
        script = shims / tool
        # bash's EPOCHREALTIME: no extra process per call, so the shim costs nothing to speak of
        script.write_text(
            "#!/bin/bash\n"
            "start=$EPOCHREALTIME\n"
            f'"{real}" "$@"\n'
            "status=$?\n"
            f'echo "{tool} $start $EPOCHREALTIME" >> "$BENCH_TEX_LOG"\n'
            "exit $status\n",
            encoding="utf-8",
        )
        script.chmod(0o755)
    return shims


def _tex_time(log: Path) -> tuple[int, float]:
    if not log.exists():
        return 0, 0.0
    calls = [line.split() for line in log.read_text(encoding="utf-8").splitlines() if line.strip()]
    return len(calls), sum(float(end) - float(start) for _, start, end in calls)


# -- 1, 3, 4: the lecture bundle ---------------------------------------------------------------
def _render_command(out: Path, quality: str, *extra: str) -> list[str]:
    return [sys.executable, "-m", "attention_explainer", "render", "--quality", quality, "--out", str(out), *extra]


def _manifest(out: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    return data


def _lecture_seconds(manifest: dict[str, Any]) -> float:
    return float(next(f["duration"] for f in manifest["files"] if f["kind"] == "lecture"))


def _cold_run(quality: str, folder: Path, shims: Path) -> tuple[dict[str, Any], Path]:
    """One cold render of the default bundle into ``folder``: its measures and its bundle."""
    out = folder / "bundle"
    log = folder / "tex.log"
    folder.mkdir(parents=True)
    env = dict(os.environ, PATH=f"{shims}{os.pathsep}{os.environ.get('PATH', '')}", BENCH_TEX_LOG=str(log))
    _log(f"cold render -q{quality}")
    report = run_measured(_render_command(out, quality), env=env)
    manifest = _manifest(out)
    report["video_s"] = _lecture_seconds(manifest)
    report["clip_durations"] = [scene["duration"] for scene in manifest["scenes"]]
    from attention_explainer.plan import work_folder

    report["tex_files"] = len(list(work_folder(out).rglob("*.tex")))
    report["tex_calls"], report["tex_s"] = _tex_time(log)
    _log(f"  {report['wall_s']:.1f} s wall for {report['video_s']:.1f} s of video")
    return {k: v for k, v in report.items() if k != "stderr_tail"}, out


def cold_and_floor(quality: str, runs: int, scratch: Path) -> tuple[dict[str, Any], Path]:
    """Rounds of a cold render then the floor for its clips, so that each pair meets the host in
    one state (here the floor alone took 57 s and 78 s within an hour, and this host's speed
    drifts); the ratio is the median of the rounds' ratios, the times the medians of their own.
    Returns the summary and the last round's bundle."""
    shims = _tex_shims(scratch)
    colds, floors, out = [], [], scratch
    for run in range(runs):
        _log(f"round {run + 1} of {runs} at -q{quality}: the lecture cold, then the floor")
        folder = scratch / f"round-{quality}-{run}"
        cold, out = _cold_run(quality, folder / "cold", shims)
        colds.append(cold)
        floors.append(_floor_run(quality, cold["clip_durations"], folder / "floor"))
    summary: dict[str, Any] = {
        key: _median([c[key] for c in colds])
        for key in ("wall_s", "cpu_s", "peak_rss_mib", "video_s", "tex_files", "tex_calls", "tex_s")
    }
    summary["wall_per_video_s"] = summary["wall_s"] / summary["video_s"]
    summary["runs"] = colds
    summary["clip_durations"] = colds[-1]["clip_durations"]
    summary["floor_wall_s"] = _median([f["wall_s"] for f in floors])
    summary["floor_video_s"] = floors[-1]["video_s"]
    summary["floor_ratios"] = [c["wall_s"] / f["wall_s"] for c, f in zip(colds, floors, strict=True)]
    summary["floor_ratio"] = _median(summary["floor_ratios"])
    # beside the target's wall ratio: CPU time, which the host's busy moments move less (on
    # 2026-12-03 the floor's wall time went from 80 s to 118 s within 20 minutes)
    summary["floor_cpu_s"] = _median([f["cpu_s"] for f in floors])
    summary["floor_cpu_ratios"] = [c["cpu_s"] / f["cpu_s"] for c, f in zip(colds, floors, strict=True)]
    summary["floor_cpu_ratio"] = _median(summary["floor_cpu_ratios"])
    return summary, out


def warm_render(out: Path, quality: str, runs: int, scratch: Path) -> dict[str, Any]:
    """Re-render into ``out`` with nothing changed, then with one number of W_V changed."""
    from attention_math import DEFAULT_PRESET, preset, scenario_to_toml

    unchanged = []
    for run in range(runs):
        _log(f"warm re-render, nothing changed, run {run + 1} of {runs}")
        report = run_measured(_render_command(out, quality))
        report["rendered"] = _manifest(out)["rendered"]
        unchanged.append(report)
    base = preset(DEFAULT_PRESET)
    w_value = base.w_value.copy()
    w_value[0, 0] = round(float(w_value[0, 0]) + 0.1, 10)
    changed = dataclasses.replace(base, w_value=w_value)
    scenario_file = scratch / "one-number-changed.toml"
    scenario_file.write_text(scenario_to_toml(changed), encoding="utf-8")
    _log("warm re-render, W_V[1][1] changed by 0.1")
    one = run_measured(_render_command(out, quality, "--scenario", str(scenario_file)))
    return {
        "unchanged_s": _median([r["wall_s"] for r in unchanged]),
        "unchanged_rendered": unchanged[-1]["rendered"],
        "one_number_s": one["wall_s"],
        "one_number_change": "W_V[1][1] + 0.1",
        "one_number_rendered": _manifest(out)["rendered"],
    }


# -- 7: the lecture-hall options ---------------------------------------------------------------
def variant_renders(runs: int, scratch: Path, scenes: str | None = None) -> dict[str, Any]:
    """Cold -ql bundles: plain, then each of :data:`VARIANTS`, round after round; medians and ratios.

    Wall time is what the targets are about; CPU time (of the render and its children) is
    reported beside it, as a shared machine's load moves it far less.
    """
    names = ["plain", *(name for name, _, _ in VARIANTS)]
    flags = {"plain": (), **{name: extra for name, extra, _ in VARIANTS}}
    walls: dict[str, list[float]] = {name: [] for name in names}
    cpus: dict[str, list[float]] = {name: [] for name in names}
    videos: dict[str, float] = {}
    only = ("--scenes", scenes) if scenes else ()
    for run in range(runs):
        for name in names:
            out = scratch / f"variant-{name.strip('-')}-{run}" / "bundle"
            _log(f"cold render -ql {name}, run {run + 1} of {runs}")
            report = run_measured(_render_command(out, "l", *only, *flags[name]))
            walls[name].append(report["wall_s"])
            cpus[name].append(report["cpu_s"])
            videos[name] = _lecture_seconds(_manifest(out))
            _log(f"  {report['wall_s']:.1f} s wall, {report['cpu_s']:.1f} s CPU")
    wall, cpu = _median(walls["plain"]), _median(cpus["plain"])
    rows = {
        name: {
            "wall_s": _median(walls[name]),
            "cpu_s": _median(cpus[name]),
            "video_s": videos[name],
            "added": _median(walls[name]) / wall - 1,
            "added_cpu": _median(cpus[name]) / cpu - 1,
        }
        for name in names
    }
    return {"scenes": scenes or "all", "runs": runs, "rows": rows}


def size_renders(runs: int, scratch: Path) -> dict[str, Any]:
    """Cold -ql bundles of :data:`SIZES`: a 16-token sentence and the multi-head lecture; medians."""
    rows: dict[str, dict[str, Any]] = {}
    for k, (name, flags, _) in enumerate(SIZES):
        walls, cpus = [], []
        for run in range(runs):
            out = scratch / f"size-{k}-{run}" / "bundle"
            _log(f"cold render -ql, {name}, run {run + 1} of {runs}")
            report = run_measured(_render_command(out, "l", *flags))
            walls.append(report["wall_s"])
            cpus.append(report["cpu_s"])
            _log(f"  {report['wall_s']:.1f} s wall, {report['cpu_s']:.1f} s CPU")
        rows[name] = {"wall_s": _median(walls), "cpu_s": _median(cpus), "video_s": _lecture_seconds(_manifest(out))}
    return {"runs": runs, "rows": rows}


# -- 8: the lectures side by side --------------------------------------------------------------
def lecture_renders(runs: int, scratch: Path, scenes: str | None = None) -> dict[str, Any]:
    """Cold -ql bundles of every lecture of :func:`lecture_rows`, one after another in each round (a busy
    moment of a shared host hits them alike); medians, wall seconds per video second, and each
    lecture's as a multiple of the first's."""
    rows_wanted = lecture_rows()
    walls: dict[str, list[float]] = {name: [] for name, _ in rows_wanted}
    cpus: dict[str, list[float]] = {name: [] for name, _ in rows_wanted}
    videos: dict[str, float] = {}
    only = ("--scenes", scenes) if scenes else ()
    for run in range(runs):
        for name, _ in rows_wanted:
            out = scratch / f"lecture-{name}-{run}" / "bundle"
            _log(f"cold render -ql, the {name} lecture, run {run + 1} of {runs}")
            report = run_measured(_render_command(out, "l", "--lecture", name, *lecture_flags(name), *only))
            walls[name].append(report["wall_s"])
            cpus[name].append(report["cpu_s"])
            videos[name] = _lecture_seconds(_manifest(out))
            _log(f"  {report['wall_s']:.1f} s wall, {report['cpu_s']:.1f} s CPU for {videos[name]:.1f} s of video")
    rows: dict[str, dict[str, Any]] = {}
    for name, _ in rows_wanted:
        wall, cpu, video = _median(walls[name]), _median(cpus[name]), videos[name]
        rows[name] = {"wall_s": wall, "cpu_s": cpu, "video_s": video, "wall_per_video_s": wall / video,
                      "cpu_per_video_s": cpu / video}
    first = rows[rows_wanted[0][0]]
    for row in rows.values():
        row["ratio"] = row["wall_per_video_s"] / first["wall_per_video_s"]
        row["cpu_ratio"] = row["cpu_per_video_s"] / first["cpu_per_video_s"]
    return {"scenes": scenes or "all", "runs": runs, "rows": rows}


# -- 2 and 6: several manim renders at once --------------------------------------------------
def _parallel(renders: list[dict[str, Any]], quality: str, folder: Path, joined: Path | None) -> dict[str, Any]:
    spec = {"quality": quality, "jobs": os.cpu_count() or 1, "renders": renders, "joined": str(joined or "")}
    spec_file = folder / "renders.json"
    spec_file.write_text(json.dumps(spec), encoding="utf-8")
    return run_measured([sys.executable, "-m", "bench.measure", "--parallel-renders", str(spec_file)])


def _floor_run(quality: str, durations: Sequence[float], folder: Path) -> dict[str, Any]:
    """The floor: a static square for each clip's duration, rendered and joined like the bundle."""
    from attention_explainer.media import probe

    folder.mkdir(parents=True)
    renders = [
        {
            "file": str(ROOT / "bench" / "floor.py"),
            "scene": "Floor",
            "media_dir": str(folder / f"media-{i}"),
            "env": {"FLOOR_SECONDS": repr(seconds)},
        }
        # longest first, as the bundle schedules its scenes
        for i, seconds in enumerate(sorted(durations, reverse=True))
    ]
    _log(f"floor -q{quality}")
    report = _parallel(renders, quality, folder, folder / "floor.mp4")
    report["video_s"] = probe(folder / "floor.mp4").duration
    return report


def peer_render(quality: str, runs: int, scratch: Path) -> dict[str, Any]:
    """LLManim's three attention demo scenes, at the same quality and parallelism as ours."""
    from attention_explainer.media import probe

    if importlib.util.find_spec("llmanim") is None:
        return {"skipped": "llmanim is not installed (`pip install llmanim==0.1.3`; `make bench` does)"}
    files = []
    for module, scene in PEER_SCENES:
        found = importlib.util.find_spec(module)
        if found is None or found.origin is None:
            return {"skipped": f"llmanim has no {module}"}
        files.append((found.origin, scene))
    reports = []
    for run in range(runs):
        folder = scratch / f"peer-{quality}-{run}"
        folder.mkdir(parents=True)
        renders = [
            {"file": origin, "scene": scene, "media_dir": str(folder / f"media-{i}")}
            for i, (origin, scene) in enumerate(files)
        ]
        _log(f"LLManim -q{quality}, run {run + 1} of {runs}")
        report = _parallel(renders, quality, folder, None)
        report["video_s"] = sum(probe(next((folder / f"media-{i}").glob("videos/**/*.mp4"))).duration for i in range(3))
        reports.append(report)
    wall = _median([r["wall_s"] for r in reports])
    video = reports[-1]["video_s"]
    return {"quality": quality, "wall_s": wall, "video_s": video, "wall_per_video_s": wall / video}


# -- 5: the math core against the one-liner ------------------------------------------------
def numpy_one_liner(x: Any, w_q: Any, w_k: Any, w_v: Any) -> Any:
    """Scaled dot-product attention as plain numpy in three lines: what the math core is timed against."""
    s = (x @ w_q) @ (x @ w_k).T / math.sqrt(w_k.shape[1])
    e = np.exp(s - s.max(axis=1, keepdims=True))
    return (e / e.sum(axis=1, keepdims=True)) @ (x @ w_v)


def _time_call(function: Callable[[], Any], min_runs: int, budget_s: float) -> float:
    times: list[float] = []
    start = time.perf_counter()
    while len(times) < min_runs or time.perf_counter() - start < budget_s:
        begin = time.perf_counter()
        function()
        times.append(time.perf_counter() - begin)
    return _median(times)


def math_core(sizes: Sequence[int], runs: int, d: int = 64) -> list[dict[str, Any]]:
    from attention_math import self_attention

    rng = np.random.default_rng(2024)  # fixed: the same inputs on every machine
    rows = []
    for n in sizes:
        x = rng.standard_normal((n, d))
        weights = [rng.standard_normal((d, d)) / math.sqrt(d) for _ in range(3)]
        assert np.allclose(self_attention(x, *weights).context, numpy_one_liner(x, *weights))
        _log(f"attention_math n = {n}")
        budget = 0.5 if n <= 512 else 0.0
        ours, numpy_line = [], []
        for _ in range(max(runs, 3)):  # interleaved, so a busy moment hits both alike
            ours.append(_time_call(lambda: self_attention(x, *weights), 3, budget))  # noqa: B023
            numpy_line.append(_time_call(lambda: numpy_one_liner(x, *weights), 3, budget))  # noqa: B023
        rows.append(
            {
                "n": n,
                "d": d,
                "attention_math_ms": _median(ours) * 1e3,
                "numpy_one_liner_ms": _median(numpy_line) * 1e3,
                "ratio": _median(ours) / _median(numpy_line),
            }
        )
    return rows


def training_time(runs: int) -> dict[str, Any]:
    """The learned lecture's training run (``train_attention()``, 60 steps) against one lecture-6 trace of the
    matrices it learned (``self_attention`` of the ``learned`` preset's, computed afresh: a scenario keeps its
    trace), timed in turns: the ratio, no seconds promised."""
    from attention_math import preset, self_attention, train_attention

    learned = preset("learned")

    def one_trace() -> Any:
        return self_attention(learned.embeddings, learned.w_query, learned.w_key, learned.w_value)

    assert np.array_equal(train_attention().w_query[-1], learned.w_query)  # the same run, the same matrices
    _log("training run against one trace")
    train, trace = [], []
    for _ in range(max(runs, 3)):  # interleaved, so a busy moment hits both alike
        train.append(_time_call(train_attention, 3, 0.3))
        trace.append(_time_call(one_trace, 3, 0.3))
    ratio = _median(train) / _median(trace)
    return {"train_ms": _median(train) * 1e3, "trace_ms": _median(trace) * 1e3, "ratio": ratio}


def forward_time(runs: int) -> dict[str, Any]:
    """all-MiniLM-L6-v2's whole forward pass (``attention_math.minilm.encode``: 6 layers of 12 heads and their
    feed-forward) on a sentence of :data:`FORWARD_SENTENCES` against one head of its size (``self_attention``
    of 16 tokens, 384 → 32), timed in turns: the ratio, no seconds promised."""
    import itertools

    from attention_math import self_attention
    from attention_math.minilm import encode, tokenize

    try:
        counts = {len(tokenize(sentence)) for sentence in FORWARD_SENTENCES}
    except ImportError:
        return {"skipped": "the model extra is not installed"}
    assert counts == {16}, counts
    sentences = itertools.cycle(FORWARD_SENTENCES)  # a new one each time: the model keeps the last 32 it saw
    rng = np.random.default_rng(0)
    x, wq, wk, wv = (rng.standard_normal(shape) for shape in ((16, 384), (384, 32), (384, 32), (384, 32)))
    _log("the real model's forward pass, 16 WordPieces, against one head")
    forward, one_head = [], []
    for _ in range(max(runs, 3)):  # interleaved, so a busy moment hits both alike
        forward.append(_time_call(lambda: encode(next(sentences)), 3, 0.3))
        one_head.append(_time_call(lambda: self_attention(x, wq, wk, wv), 3, 0.3))
    return {"tokens": 16, "forward_ms": _median(forward) * 1e3, "head_ms": _median(one_head) * 1e3,
            "ratio": _median(forward) / _median(one_head)}


def forward_table(row: dict[str, Any] | None) -> list[str]:
    if not row:
        return []
    if "skipped" in row:
        return ["", f"The real model's forward pass skipped: {row['skipped']}."]
    return [
        "",
        f"| the real model | encode(), {row['tokens']} WordPieces (ms) | one head, 384 → 32 (ms) | ratio |",
        "|---|---:|---:|---:|",
        f"| forward pass | {row['forward_ms']:.3f} | {row['head_ms']:.3f} | {row['ratio']:.1f} |",
    ]


# -- the report ------------------------------------------------------------------------------
def machine() -> dict[str, Any]:
    import manim

    cpu = "unknown"
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        names = [line.split(":", 1)[1] for line in cpuinfo.read_text().splitlines() if line.startswith("model name")]
        cpu = names[0].strip() if names else cpu
    memory = ""
    meminfo = Path("/proc/meminfo")
    if meminfo.exists():
        kib = int(meminfo.read_text().split()[1])
        memory = f"{kib / 2**20:.0f} GiB"
    return {
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "os": platform.platform(),
        "cpu": cpu,
        "cores": os.cpu_count(),
        "memory": memory,
        "python": platform.python_version(),
        "manim": manim.__version__,
        "numpy": np.__version__,
    }


def _mark(value: float, target: float) -> str:
    return "✓" if value <= target else "✗"


def markdown(results: dict[str, Any]) -> str:
    """The results as Markdown: the machine, then one table per measure, then the targets."""
    m = results["machine"]
    lines = [
        f"Measured {m['date']} on {m['cpu']}, {m['cores']} cores, {m['memory']}; Python {m['python']}, "
        f"Manim {m['manim']}, numpy {m['numpy']}. Median of {results['runs']} run(s)"
        + (" (quick mode: a smoke run, not a measurement)" if results["quick"] else "")
        + "." + (f" The bench took {results['bench_wall_s'] / 60:.1f} min." if "bench_wall_s" in results else ""),
        "",
        *_cold_table(results["cold"]),
        *_warm_table(results.get("warm")),
        *_math_table(results.get("math", [])),
        *training_table(results.get("training")),
        *forward_table(results.get("forward")),
        *_peer_table(results.get("peer", {"skipped": "not measured in this run"}), results["cold"]),
        *_size_table(results.get("sizes")),
        *_variant_table(results.get("variants")),
        *_lecture_table(results.get("lectures")),
        *decoder_table(results.get("decoder")),
        *course_table(results.get("course")),
        *scale_table(results.get("scale")),
        "",
        "Targets: " + ", ".join(_targets(results)) + ".",
    ]
    return "\n".join(lines) + "\n"


_COLD_ROWS = (
    ("wall time (s)", "wall_s", "{:.1f}"),
    ("CPU time (s)", "cpu_s", "{:.1f}"),
    ("peak memory, largest process (MiB)", "peak_rss_mib", "{:.0f}"),
    ("video produced (s)", "video_s", "{:.1f}"),
    ("wall s per video s", "wall_per_video_s", "{:.2f}"),
    ("floor: static shape, same frames (s)", "floor_wall_s", "{:.1f}"),
    ("lecture / floor (median of rounds)", "floor_ratio", "{:.2f}"),
    ("floor's CPU time (s)", "floor_cpu_s", "{:.1f}"),
    ("lecture / floor in CPU time (median of rounds)", "floor_cpu_ratio", "{:.2f}"),
    ("TeX files made", "tex_files", "{:.0f}"),
    ("latex + dvisvgm calls", "tex_calls", "{:.0f}"),
    ("time in TeX (s, summed over processes)", "tex_s", "{:.1f}"),
)


def _cold_table(cold: dict[str, dict[str, Any]]) -> list[str]:
    if not cold:
        return []
    lines = [
        "| the default lecture, cold | " + " | ".join(f"-q{q}" for q in cold) + " |",
        "|---|" + "---:|" * len(cold),
    ]
    for label, key, form in _COLD_ROWS:
        cells = [form.format(c[key]) if key in c else "–" for c in cold.values()]
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return lines


def _warm_table(warm: dict[str, Any] | None) -> list[str]:
    if not warm:
        return []
    return [
        "",
        "| re-render at -ql | wall (s) | scenes re-rendered |",
        "|---|---:|---|",
        f"| nothing changed | {warm['unchanged_s']:.1f} | {', '.join(warm['unchanged_rendered']) or 'none'} |",
        f"| one number changed ({warm['one_number_change']}) | {warm['one_number_s']:.1f} | "
        f"{', '.join(warm['one_number_rendered']) or 'none'} |",
    ]


def _math_table(rows: list[dict[str, Any]]) -> list[str]:
    if not rows:
        return []
    return [
        "",
        "| attention_math, d = 64 | n | self_attention (ms) | numpy one-liner (ms) | ratio |",
        "|---|---:|---:|---:|---:|",
        *(
            f"| trace with every intermediate | {row['n']} | {row['attention_math_ms']:.3f} | "
            f"{row['numpy_one_liner_ms']:.3f} | {row['ratio']:.2f} |"
            for row in rows
        ),
    ]


def training_table(row: dict[str, Any] | None) -> list[str]:
    if not row:
        return []
    return [
        "",
        "| the learned lecture | train_attention(), 60 steps (ms) | one trace of its W (ms) | ratio |",
        "|---|---:|---:|---:|",
        f"| training time | {row['train_ms']:.3f} | {row['trace_ms']:.3f} | {row['ratio']:.1f} |",
    ]


def _peer_table(peer: dict[str, Any], cold: dict[str, dict[str, Any]]) -> list[str]:
    if "skipped" in peer:
        return ["", f"LLManim comparison skipped: {peer['skipped']}."]
    lines = [
        "",
        f"| wall s per video s at -q{peer['quality']} | video (s) | wall (s) | wall / video |",
        "|---|---:|---:|---:|",
        f"| LLManim 0.1.3, its three attention demo scenes | {peer['video_s']:.1f} | {peer['wall_s']:.1f} | "
        f"{peer['wall_per_video_s']:.2f} |",
    ]
    ours = cold.get(peer["quality"], {})
    if ours:
        lines.append(
            f"| this project, the whole lecture bundle | {ours['video_s']:.1f} | {ours['wall_s']:.1f} | "
            f"{ours['wall_per_video_s']:.2f} |"
        )
    return lines


def _variant_table(variants: dict[str, Any] | None) -> list[str]:
    if not variants:
        return []
    limits = {name: limit for name, _, limit in VARIANTS}
    lines = [
        "",
        f"| cold bundle at -ql, {variants['scenes']} scenes, side by side | wall (s) | CPU (s) | video (s) "
        "| added wall | added CPU | target (wall) |",
        "|---|---:|---:|---:|---:|---:|---|",
    ]
    for name, row in variants["rows"].items():
        wall = "" if name == "plain" else f"{row['added'] * 100:+.0f} %"
        cpu = "" if name == "plain" else f"{row.get('added_cpu', 0.0) * 100:+.0f} %"
        target = f"≤ +{limits[name] * 100:.0f} % {_mark(row['added'], limits[name])}" if name in limits else ""
        lines.append(
            f"| {name} | {row['wall_s']:.1f} | {row.get('cpu_s', 0.0):.1f} | {row['video_s']:.1f} | {wall} | {cpu} "
            f"| {target} |"
        )
    return lines


def _size_table(sizes: dict[str, Any] | None) -> list[str]:
    if not sizes:
        return []
    limits = {name: limit for name, _, limit in SIZES}
    lines = ["", "| cold bundle at -ql | wall (s) | CPU (s) | video (s) | target (wall) |", "|---|---:|---:|---:|---|"]
    for name, row in sizes["rows"].items():
        target = f"≤ {limits[name]:.0f} s {_mark(row['wall_s'], limits[name])}" if name in limits else ""
        lines.append(f"| {name} | {row['wall_s']:.1f} | {row['cpu_s']:.1f} | {row['video_s']:.1f} | {target} |")
    return lines


def _lecture_table(lectures: dict[str, Any] | None) -> list[str]:
    if not lectures:
        return []
    limits = dict(lecture_rows())
    first = lecture_rows()[0][0]
    lines = [
        "",
        f"| cold bundle at -ql, {lectures['scenes']} scenes, side by side | wall (s) | CPU (s) | video (s) "
        f"| wall / video s | × {first}'s | CPU × {first}'s | target (wall / video s) |",
        "|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    for name, row in lectures["rows"].items():
        limit = limits.get(name)
        target = f"≤ {limit:.1f}× {_mark(row['ratio'], limit)}" if limit else ""
        lines.append(
            f"| the {name} lecture | {row['wall_s']:.1f} | {row['cpu_s']:.1f} | {row['video_s']:.1f} "
            f"| {row['wall_per_video_s']:.2f} | {row['ratio']:.2f} | {row['cpu_ratio']:.2f} | {target} |"
        )
    return lines


def _lecture_targets(lectures: dict[str, Any] | None) -> list[str]:
    rows = (lectures or {"rows": {}})["rows"]
    return [
        f"the {name} lecture's wall/video ≤ {limit:.1f}× lecture 6's {_mark(rows[name]['ratio'], limit)}"
        for name, limit in lecture_rows()
        if limit is not None and name in rows
    ]


def _targets(results: dict[str, Any]) -> list[str]:
    out = []
    cold = results["cold"]
    if "l" in cold:
        out.append(f"cold -ql ≤ 45 s {_mark(cold['l']['wall_s'], TARGETS['cold_l_wall_s'])}")
    if "h" in cold:
        out.append(f"cold -qh ≤ 8 min {_mark(cold['h']['wall_s'], TARGETS['cold_h_wall_s'])}")
        if "floor_ratio" in cold["h"]:
            out.append(f"lecture / floor at -qh ≤ 2.0 {_mark(cold['h']['floor_ratio'], TARGETS['floor_ratio_h'])}")
    if results.get("warm"):
        out.append(f"nothing changed ≤ 3 s {_mark(results['warm']['unchanged_s'], TARGETS['warm_unchanged_s'])}")
    sizes = results.get("sizes") or {"rows": {}}
    for name, _, limit in SIZES:
        if name in sizes["rows"]:
            out.append(f"{name} ≤ {limit:.0f} s {_mark(sizes['rows'][name]['wall_s'], limit)}")
    variants = results.get("variants") or {"rows": {}}
    for name, _, limit in VARIANTS:
        if name in variants["rows"]:
            added = variants["rows"][name]["added"]
            out.append(f"{name} adds ≤ {limit * 100:.0f} % {_mark(added, limit)}")
    out += _lecture_targets(results.get("lectures"))
    out += decoder_targets(results.get("decoder"))
    if results.get("math"):
        biggest = max(results["math"], key=lambda row: row["n"])
        ratio = _mark(biggest["ratio"], TARGETS["math_ratio_4096"])
        out.append(f"attention_math at n = {biggest['n']} ≤ 1.2× {ratio}")
    peer = results.get("peer", {"skipped": ""})
    if "skipped" not in peer and peer["quality"] in cold:
        ours = cold[peer["quality"]]["wall_per_video_s"]
        out.append(f"wall/video ≤ LLManim's {_mark(ours, peer['wall_per_video_s'])}")
    return out + course_target(results.get("course")) + scale_target(results.get("scale"))


def update_docs(table: str, page: Path = SPEED_PAGE) -> None:
    """Put ``table`` between the bench markers of ``page`` (docs/speed.md), and change nothing else."""
    text = page.read_text(encoding="utf-8")
    if BENCH_START not in text or BENCH_END not in text:
        raise SystemExit(f"bench: {page} has no {BENCH_START} … {BENCH_END} block")
    head, rest = text.split(BENCH_START, 1)
    _, tail = rest.split(BENCH_END, 1)
    page.write_text(f"{head}{BENCH_START}\n{table}{BENCH_END}{tail}", encoding="utf-8")


MEASURES = frozenset({"math", "cold", "sizes", "variants", "lectures", "decoder", "peer", "course", "scale"})
"""What ``--only`` may name: the math core, the cold renders (with floor and re-renders), a
16-token sentence and the multi-head lecture, the lecture-hall options, the lectures side by side,
the decoder lectures on SmolLM2 beside their presets (:mod:`bench.decoder`), the peer, a course on
Dask against render (:mod:`bench.course`), a course on 1 and on 2 workers
(:mod:`bench.scale`)."""

DEFAULT_MEASURES = MEASURES - {"scale"}
"""What runs without ``--only``: all but the scale-out, which has a target of its own (``make bench-scale``),
so that ``make bench`` keeps within its 20 minutes."""


def _run_measures(
    results: dict[str, Any], only: set[str] | frozenset[str], args: argparse.Namespace, qualities: list[str],
    sizes: list[int], scratch: Path,
) -> None:
    if "math" in only:
        results["math"] = math_core(sizes, args.runs)
        results["training"] = training_time(args.runs)
        results["forward"] = forward_time(args.runs)
    for quality in qualities if "cold" in only else []:
        cold, last_bundle = cold_and_floor(quality, args.runs, scratch)
        results["cold"][quality] = cold
        if quality == "l":
            results["warm"] = warm_render(last_bundle, quality, args.runs, scratch)
    if "sizes" in only and not args.quick:  # quick mode: the cold -ql render proves the path runs
        results["sizes"] = size_renders(args.runs, scratch)
    if "variants" in only:
        # quick mode proves the rows run, on one short scene
        results["variants"] = variant_renders(args.runs, scratch, "spaces" if args.quick else None)
    if "lectures" in only:
        # quick mode proves the rows run, on each lecture's first scene
        results["lectures"] = lecture_renders(args.runs, scratch, "1" if args.quick else None)
    if "decoder" in only:
        results["decoder"] = decoder_renders(args.runs, scratch, quick=args.quick)
    if "peer" in only:
        results["peer"] = peer_render("l", args.runs, scratch)
    if "course" in only:
        results["course"] = course_renders(args.runs, scratch, quick=args.quick)
    if "scale" in only:
        results["scale"] = scale_out(args.runs, scratch, quick=args.quick)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="smoke run: one run, -ql, small n (CI)")
    parser.add_argument("--runs", type=int, default=1,
                        help="runs per measurement (median; default 1, `make bench-full` 3)")
    parser.add_argument("--qualities", default="l,h", help="comma-separated manim qualities (default l,h)")
    parser.add_argument("--sizes", default="8,512,4096", help="token counts for attention_math (default 8,512,4096)")
    parser.add_argument("--out", type=Path, default=RESULTS, help="folder for latest.json and latest.md")
    parser.add_argument("--docs", action="store_true", help="also put the table in docs/speed.md")
    parser.add_argument("--keep", action="store_true", help="keep the temporary render folders")
    parser.add_argument(
        "--only", default="",
        help="comma-separated measures to run: math, cold, sizes, variants, lectures, decoder, peer, course, scale "
        "(default all but scale)",
    )
    args = parser.parse_args(argv)
    if args.quick:
        args.runs, args.qualities, args.sizes = 1, "l", "8,64,256"
    qualities = [q for q in args.qualities.split(",") if q]
    if args.runs < 1 or not qualities or not set(qualities) <= set("lmhpk"):
        parser.error("--runs must be ≥ 1 and --qualities a list of l, m, h, p, k")
    sizes = [int(n) for n in args.sizes.split(",")]

    only = {name for name in args.only.split(",") if name}
    if not only <= MEASURES:
        parser.error(f"--only: expected names from {', '.join(sorted(MEASURES))}")
    results: dict[str, Any] = {"machine": machine(), "quick": args.quick, "runs": args.runs, "cold": {}}
    scratch = Path(tempfile.mkdtemp(prefix="attention-bench-"))
    started = time.perf_counter()
    try:
        _run_measures(results, only or DEFAULT_MEASURES, args, qualities, sizes, scratch)
        results["bench_wall_s"] = time.perf_counter() - started  # `make bench` keeps under 20 minutes (issue 39)
    finally:
        if args.keep:
            _log(f"render folders kept in {scratch}")
        else:
            shutil.rmtree(scratch, ignore_errors=True)
    table = markdown(results)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "latest.json").write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    (args.out / "latest.md").write_text(table, encoding="utf-8")
    if args.docs:
        update_docs(table)
    print(table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
