"""Read back every number of fresh scenarios' last frames: a sweep over every scene of every lecture.

    .venv/bin/python tools/readback.py                       # 200 seeds from a fresh start (make readback)
    .venv/bin/python tools/readback.py --seeds 1 --start 81  # replay one seed
    .venv/bin/python tools/readback.py --seeds 200 --start 2000 --reread  # read a sweep's frames again, no render

Seed ``s`` renders scene ``s mod N`` of the N scenes of every lecture of ``scenes.registry`` (in lecture order) for a
scenario drawn from ``s`` (``frame_reading.fresh_scenario_for``: random letters, sizes and decimals the scene
accepts; a random sentence, layer and head of all-MiniLM-L6-v2 for the real-head lecture; 2 to 4 heads for the
scenes that draw every head), two renders at a time, and reads every number on its last frame in its own box
(``frame_reading.read_frame``) against the core. Prints the frames, the numbers read and every misread (seed,
scene, fact, expected, read), whose crop is saved under ``--out`` for review. Exit status 1 on any misread.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import time
from pathlib import Path
from typing import Any

# The reader lives in tests/, beside the number checks it uses; mypy checks tools/ on its own, so the module is
# imported by name (tests/ is checked with the suite, not from here).
ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]
frame_reading = importlib.import_module("frame_reading")


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=200, help="how many seeds, one frame each (default 200)")
    parser.add_argument("--start", type=int, default=None, help="the first seed (default: a fresh one, printed)")
    parser.add_argument("--processes", type=int, default=2, help="renders at a time (default 2)")
    parser.add_argument("--out", type=Path, default=ROOT / "media" / "readback", help="frames and misread crops")
    parser.add_argument("--reread", action="store_true",
                        help="read the frames an earlier sweep of these seeds left in --out again (after a change "
                             "of the reader), rendering nothing")
    return parser.parse_args()


def jobs_of(start: int, count: int) -> dict[str, tuple[str, Any]]:
    """Seed → (scene, scenario), for ``count`` seeds from ``start``."""
    scenes = list(frame_reading.SCENES)
    jobs = {}
    for seed in range(start, start + count):
        scene = scenes[seed % len(scenes)]
        jobs[str(seed)] = (scene, frame_reading.fresh_scenario_for(seed, scene))
    return jobs


def rendered_before(jobs: dict[str, tuple[str, Any]], folder: Path) -> Any:
    """The frames an earlier sweep of these seeds rendered into ``folder``, as :func:`frame_reading.render_frames`
    yields them; a seed it did not render stops the run in one line."""
    for seed, (scene, scenario) in jobs.items():
        if not (folder / seed / "boxes.json").is_file():
            raise SystemExit(f"--reread: no frame of seed {seed} in {folder}; render it first (without --reread)")
        yield seed, frame_reading.frame_of(scene, scenario, folder / seed)


def save_misread(reading: Any, seed: str, number: int, out: Path) -> Path:
    from PIL import Image

    crop = out / "misreads" / f"{seed}-{reading.scene}-{number}.png"
    crop.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(reading.crop).save(crop)
    return crop


def main() -> int:
    args = arguments()
    start = args.start if args.start is not None else frame_reading.fresh_seed() % 2**31
    print(f"seeds {start} to {start + args.seeds - 1} (replay one: --seeds 1 --start SEED)", flush=True)
    started = time.monotonic()
    jobs = jobs_of(start, args.seeds)
    frames = numbers = 0
    misreads: list[str] = []
    per_scene: dict[str, int] = {}
    frames_of = (rendered_before(jobs, args.out / "frames") if args.reread
                 else frame_reading.render_frames(jobs, args.out / "frames", processes=args.processes))
    for seed, frame in frames_of:
        readings = frame_reading.read_frame(frame)
        frames, numbers = frames + 1, numbers + len(readings)
        per_scene[frame.scene] = per_scene.get(frame.scene, 0) + 1
        wrong = [(k, r) for k, r in enumerate(readings) if not r.agrees]
        for k, reading in wrong:
            crop = save_misread(reading, seed, k, args.out)
            misreads.append(f"seed {seed}: {frame_reading.describe(reading)} (crop {crop})")
        print(f"seed {seed} {frame.scene}: {len(readings)} numbers, {len(wrong)} misread", flush=True)
    print(f"\n{frames} frames ({len(per_scene)} scenes), {numbers} numbers read, {len(misreads)} misread, "
          f"in {time.monotonic() - started:.0f} s")
    for line in misreads:
        print("  " + line)
    return 1 if misreads else 0


if __name__ == "__main__":
    os.environ.setdefault("OMP_THREAD_LIMIT", "1")
    sys.exit(main())
