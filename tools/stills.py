"""Render the last frame of every scene of every lecture at 480p into ``docs/stills/``.

Each lecture's scenes with its own preset (what ``manim render -s`` shows with no scenario
named), one PNG per scene in ``docs/stills/<lecture>/<file>.png``: the README's gallery.
The lectures of ``scenes.registry`` are the list (each its ``stills`` folder), so a new lecture's stills
come with its declaration::

    .venv/bin/python tools/stills.py                       # every lecture
    .venv/bin/python tools/stills.py --lecture multi-head  # one
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MANIM = Path(sys.executable).with_name("manim")


def still(module: str, name: str, folder: str, media: Path) -> Path:
    """Render scene ``name`` of ``module`` with ``-ql -s`` and copy its PNG into docs/stills."""
    source = ROOT / (module.replace(".", "/") + ".py")
    command = [str(MANIM), "render", "-ql", "-s", "--media_dir", str(media), str(source.relative_to(ROOT)), name]
    subprocess.run([*command, "-v", "WARNING"], cwd=ROOT, check=True)
    made = sorted(media.rglob(f"{name}_ManimCE_*.png"))
    if not made:
        raise SystemExit(f"stills: {name} wrote no PNG under {media}")
    target = ROOT / folder / f"{source.stem}.png"
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(made[-1], target)
    return target


def main(argv: list[str] | None = None) -> int:
    sys.path.insert(0, str(ROOT))
    from scenes.registry import lectures

    known = {item.name: item for item in lectures() if item.stills}
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lecture", choices=sorted(known), help="one lecture (default: every lecture)")
    args = parser.parse_args(argv)
    chosen = [known[args.lecture]] if args.lecture else list(known.values())
    with tempfile.TemporaryDirectory(prefix="stills-") as media:
        for lecture in chosen:
            for module, name in lecture.scenes:
                print(still(module, name, str(lecture.stills), Path(media)).relative_to(ROOT))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
