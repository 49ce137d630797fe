"""The decoder row of ``python -m bench`` (issue 40): the decoder lectures on SmolLM2 against their presets.

``decoder_renders`` renders, for each lecture of :data:`LECTURES`, a cold -ql bundle of its preset and one with
``--model smollm2`` (:data:`MODEL_FLAGS`: the model's own head on the presets' sentence), one right
after the other in each round (which goes first alternates from round to round, so a drift of the machine's load
favours neither). The budget is each lecture's wall seconds per video second with the model over its preset's,
in the same round (:data:`BUDGET`), never seconds: the model's forward passes and its longer numbers must not make
a lecture much slower to make than its toy. No test asserts a time.
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path
from typing import Any

from .measure import run_measured

LECTURES = ("masked", "inference", "rope")
"""The lectures that draw a decoder's head (besides the real-head lecture, whose row is the lectures' table's)."""

MODEL_FLAGS = ("--model", "smollm2", "--layer", "14", "--head", "2", "--sentence", "The dog chased the ball")
"""The presets' own sentence (the same 5 tokens: the row measures the model, not a longer sentence), a middle
layer, a head of the first key/value group."""

BUDGET = 1.3
"""The most a lecture's wall seconds per video second with the model may be, over its preset's."""


def _command(out: Path, lecture: str, *flags: str) -> list[str]:
    return [sys.executable, "-m", "attention_explainer", "render", "--quality", "l", "--lecture", lecture,
            "--out", str(out), *flags]  # fmt: skip


def _video_seconds(out: Path) -> float:
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    return float(next(f["duration"] for f in manifest["files"] if f["kind"] == "lecture"))


def _pair(folder: Path, lecture: str, model_first: bool, scenes: tuple[str, ...]) -> dict[str, dict[str, float]]:
    """One lecture's preset and model bundles, cold, one after the other: wall, CPU and video seconds of each."""
    found: dict[str, dict[str, float]] = {}
    for kind in ("model", "preset") if model_first else ("preset", "model"):
        out = folder / f"{lecture}-{kind}" / "bundle"
        flags = (*(MODEL_FLAGS if kind == "model" else ()), *scenes)
        print(f"[bench] cold render -ql, the {lecture} lecture, {kind}", file=sys.stderr, flush=True)
        report = run_measured(_command(out, lecture, *flags))
        found[kind] = {"wall_s": report["wall_s"], "cpu_s": report["cpu_s"], "video_s": _video_seconds(out)}
    return found


def decoder_renders(runs: int, scratch: Path, quick: bool = False) -> dict[str, Any]:
    """Medians of ``runs`` rounds: each lecture's bundles with the model and with its preset, and the ratio of their
    wall seconds per video second (quick mode: each lecture's first scene, to prove the rows run)."""
    scenes = ("--scenes", "1") if quick else ()
    rounds = [{lecture: _pair(scratch / f"decoder-{run}", lecture, run % 2 == 1, scenes) for lecture in LECTURES}
              for run in range(runs)]
    rows: dict[str, dict[str, float]] = {}
    for lecture in LECTURES:
        pairs = [found[lecture] for found in rounds]
        ratios = [(p["model"]["wall_s"] / p["model"]["video_s"]) / (p["preset"]["wall_s"] / p["preset"]["video_s"])
                  for p in pairs]
        rows[lecture] = {f"{kind}_{what}": statistics.median(p[kind][what] for p in pairs)
                         for kind in ("model", "preset") for what in ("wall_s", "cpu_s", "video_s")}
        rows[lecture]["ratio"] = statistics.median(ratios)
    return {"runs": runs, "scenes": "first" if quick else "all", "rows": rows}


def decoder_table(decoder: dict[str, Any] | None) -> list[str]:
    """The decoder rows as Markdown."""
    if not decoder:
        return []
    lines = ["", f"| cold bundle at -ql, {decoder['scenes']} scenes, side by side | preset: wall (s) | video (s) "
             "| SmolLM2: wall (s) | video (s) | wall / video s, × preset's | target |",
             "|---|---:|---:|---:|---:|---:|---|"]
    for lecture, row in decoder["rows"].items():
        verdict = "✓" if row["ratio"] <= BUDGET else "✗"
        lines.append(f"| the {lecture} lecture | {row['preset_wall_s']:.1f} | {row['preset_video_s']:.1f} "
                     f"| {row['model_wall_s']:.1f} | {row['model_video_s']:.1f} | {row['ratio']:.2f} "
                     f"| ≤ {BUDGET}× {verdict} |")
    return lines


def decoder_targets(decoder: dict[str, Any] | None) -> list[str]:
    """The decoder rows' lines of the targets."""
    if not decoder:
        return []
    return [f"the {lecture} lecture on SmolLM2 ≤ {BUDGET}× its preset per video second "
            f"{'✓' if row['ratio'] <= BUDGET else '✗'}" for lecture, row in decoder["rows"].items()]
