"""Render scenes and save the frame at the end of every beat, to look at them.

For each scene: ``manim render -ql`` with the scenario, then the clip is decoded with PyAV and the
frame at each subtitle's end (and the last frame) is saved as a PNG, with a contact sheet of them
all. Use it before saying a scene looks right::

    .venv/bin/python tools/beat_frames.py --sentence "the cat sat on the mat" --scenes Scores,WeightedSum
    .venv/bin/python tools/beat_frames.py --scenario my.toml --out /tmp/frames

Frames land in ``--out/<Scene>/beat-NN.png`` and ``--out/<Scene>/sheet.png``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import av
import srt
from PIL import Image

from attention_explainer.plan import SceneSpec
from attention_math import scenario_to_toml
from attention_math.__main__ import add_scenario_arguments, scenario_from_args

ROOT = Path(__file__).resolve().parents[1]


def _lecture() -> list[tuple[str, str]]:
    """Every lecture's scenes, in order (the default lecture's first)."""
    sys.path.insert(0, str(ROOT))
    from scenes.registry import lectures

    return [scene for lecture in lectures() for scene in lecture.scenes]


def render(module: str, name: str, scenario_file: Path, media: Path, quality: str) -> Path:
    """Render one scene; return its clip."""
    script = SceneSpec(0, name, module).file  # wherever the lecture is installed (a plug-in too)
    env = dict(os.environ, ATTENTION_SCENARIO=str(scenario_file))
    env.pop("ATTENTION_QUERY", None)
    command = [sys.executable, "-m", "manim", "render", f"-q{quality}", "--media_dir", str(media),
               "--disable_caching", "-v", "WARNING", "--progress_bar", "none", str(script), name]
    subprocess.run(command, cwd=ROOT, env=env, check=True)
    return next(media.glob(f"videos/*/*/{name}.mp4"))


def frames_at(clip: Path, times: list[float]) -> list[Image.Image]:
    """The last decoded frame at or before each time (seconds), and the clip's last frame."""
    wanted = sorted(times)
    found: list[Image.Image] = []
    last = None
    with av.open(str(clip)) as container:
        stream = container.streams.video[0]
        for frame in container.decode(stream):
            t = float(frame.pts * stream.time_base) if frame.pts is not None and stream.time_base else 0.0
            while wanted and t > wanted[0] + 1e-6 and last is not None:
                found.append(last)
                wanted.pop(0)
            last = frame.to_image()  # type: ignore[no-untyped-call]
    found += [last] * len(wanted) if last is not None else []
    return [*found, last] if last is not None else found


def sheet(images: list[Image.Image], columns: int = 3) -> Image.Image:
    width, height = images[0].size
    rows = -(-len(images) // columns)
    out = Image.new("RGB", (columns * width, rows * height), "#000000")
    for k, image in enumerate(images):
        out.paste(image, ((k % columns) * width, (k // columns) * height))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_scenario_arguments(parser)
    parser.add_argument("--scenes", help="class names, comma-separated (default: every lecture's scenes)")
    parser.add_argument("--out", default=str(Path(tempfile.gettempdir()) / "beat-frames"))
    parser.add_argument("--quality", default="l")
    args = parser.parse_args()
    scenario = scenario_from_args(args)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    scenario_file = out / "scenario.toml"
    scenario_file.write_text(scenario_to_toml(scenario), encoding="utf-8")
    chosen = set(args.scenes.split(",")) if args.scenes else None
    for module, name in _lecture():
        if chosen is not None and name not in chosen:
            continue
        folder = out / name
        folder.mkdir(exist_ok=True)
        clip = render(module, name, scenario_file, out / "media", args.quality)
        subtitles = list(srt.parse(clip.with_suffix(".srt").read_text(encoding="utf-8")))
        images = frames_at(clip, [sub.end.total_seconds() - 0.05 for sub in subtitles])
        for k, image in enumerate(images, start=1):
            image.save(folder / (f"beat-{k:02d}.png" if k <= len(subtitles) else "last.png"))
        sheet(images).save(folder / "sheet.png")
        print(f"{name}: {len(images)} frames in {folder}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
