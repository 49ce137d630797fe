"""Run one command and report its wall time, CPU time and peak memory, as one JSON line.

``python -m bench.measure -- COMMAND...`` runs in a process of its own, so the CPU time and
peak memory it reads from ``getrusage(RUSAGE_CHILDREN)`` are those of COMMAND and its children
only. Also: ``python -m bench.measure --parallel-renders SPEC.json`` renders several manim
scenes at once (the floor and the peer scenes) through the bundle's manim process
(``attention_explainer.runner``) and joins the clips, like the bundle does.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any


def run_measured(command: list[str], env: dict[str, str] | None = None, cwd: str | None = None) -> dict[str, Any]:
    """Run ``command`` in a fresh ``bench.measure`` process; return wall, cpu, peak RSS, status."""
    wrapper = [sys.executable, "-m", "bench.measure", "--", *command]
    root = str(Path(__file__).resolve().parent.parent)
    full_env = dict(env or os.environ)
    full_env["PYTHONPATH"] = os.pathsep.join(filter(None, [root, full_env.get("PYTHONPATH", "")]))
    result = subprocess.run(wrapper, env=full_env, cwd=cwd, capture_output=True, text=True, check=False)
    try:
        report: dict[str, Any] = json.loads(result.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        raise RuntimeError(f"bench: could not measure {command[:4]}: {result.stderr.strip()[-500:]}") from None
    if report["status"] != 0:
        raise RuntimeError(f"bench: {' '.join(command[:6])} failed ({report['status']}): {report['stderr_tail']}")
    return report


def _measure(command: list[str]) -> dict[str, Any]:
    start = time.perf_counter()
    process = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, check=False)
    wall = time.perf_counter() - start
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return {
        "wall_s": wall,
        "cpu_s": usage.ru_utime + usage.ru_stime,
        # the largest single process among COMMAND and its children (Linux reports KiB)
        "peak_rss_mib": usage.ru_maxrss / 1024,
        "status": process.returncode,
        "stderr_tail": process.stderr.strip()[-800:],
    }


def _parallel_renders(spec_file: Path) -> None:
    """Render ``spec["renders"]`` (each: file, scene, env) with ``spec["jobs"]`` at once, then
    join the clips into ``spec["joined"]``."""
    from attention_explainer.media import join_videos

    spec = json.loads(spec_file.read_text(encoding="utf-8"))

    def render(item: dict[str, Any]) -> Path:
        media = Path(item["media_dir"])
        # the bundle's manim process (attention_explainer.runner: plain manim render, no hooks
        # asked for here), with the flags the bundle passes
        command = [
            sys.executable, "-m", "attention_explainer.runner", "--", f"-q{spec['quality']}", "--disable_caching",
            "--progress_bar", "none", "-v", "WARNING", "--media_dir", str(media), item["file"], item["scene"],
        ]  # fmt: skip
        env = dict(os.environ, **item.get("env", {}))
        subprocess.run(command, env=env, cwd=media.parent, check=True, stdout=subprocess.DEVNULL)
        return next(media.glob(f"videos/**/{item['scene']}.mp4"))

    with ThreadPoolExecutor(max_workers=spec["jobs"]) as pool:
        clips = list(pool.map(render, spec["renders"]))
    if spec.get("joined"):
        join_videos(clips, Path(spec["joined"]))
    print(json.dumps({"clips": [str(c) for c in clips]}))


def main(argv: list[str]) -> int:
    if argv[:1] == ["--parallel-renders"]:
        _parallel_renders(Path(argv[1]))
        return 0
    if argv[:1] != ["--"] or len(argv) < 2:
        print("usage: python -m bench.measure -- COMMAND...", file=sys.stderr)
        return 2
    print(json.dumps(_measure(argv[1:])))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
