"""The bundle's slide deck: manim-slides renders ``scenes/slides.py`` and converts it to HTML.

One slide per beat of every scene. The deck is written beside the clips as ``slides.html``
with its videos in ``slides_assets/``; it is rebuilt only when the scenario, the settings or
the code changed since the last deck.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from attention_math import Scenario, scenario_to_toml

from .bundle import BundleError, BundleSettings, SceneSpec, _hash, _scenes_dir, _write_text
from .fingerprint import code_version

__all__ = ["build_slides"]


def _run(command: list[str], cwd: Path, env: dict[str, str], what: str) -> None:
    result = subprocess.run(
        command, cwd=cwd, env=env, capture_output=True, text=True, encoding="utf-8", errors="replace"
    )
    if result.returncode != 0:
        lines = [line for line in (result.stderr + result.stdout).splitlines() if line.strip()]
        reason = next((line for line in reversed(lines) if "rror" in line), lines[-1] if lines else "no output")
        raise BundleError(f"slides: {what} failed (exit {result.returncode}): {reason.strip()}", 1)


def build_slides(
    scenario: Scenario, out: Path, settings: BundleSettings, chosen: Sequence[SceneSpec], console: Any = None
) -> Path:
    """Render the chosen scenes as slides and write ``out/slides.html``; return its path."""
    out = out.absolute()  # manim-slides runs inside out/.work/slides and is given paths below it
    deck = out / "slides.html"
    names = [spec.name for spec in chosen]
    key = _hash({"scenario": scenario.to_dict(), "settings": settings.key(), "scenes": names, "code": code_version()})
    stamp = out / ".work" / "slides.json"
    if deck.exists() and (out / "slides_assets").is_dir() and stamp.exists():
        if json.loads(stamp.read_text())["key"] == key:
            return deck
    work = out / ".work" / "slides"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    if console is not None:
        console.print(f"rendering {len(names)} scenes as slides ...")
    staging = _render_deck(scenario, settings, names, work)
    _swap_deck(staging, out, work)
    _write_text(stamp, json.dumps({"key": key}))
    return deck


def _render_deck(scenario: Scenario, settings: BundleSettings, names: list[str], work: Path) -> Path:
    """``manim-slides render`` and ``convert`` into ``work``; return the folder holding the new deck."""
    scenario_file = work / "scenario.toml"
    scenario_file.write_text(scenario_to_toml(scenario), encoding="utf-8")
    env = dict(os.environ, ATTENTION_SCENARIO=str(scenario_file))
    env.pop("ATTENTION_QUERY", None)
    binary = [sys.executable, "-m", "manim_slides"]
    quiet = ["--progress_bar", "none", "-v", "WARNING", "--silent"]
    media = ["--media_dir", str(work / "media")]
    script = str(_scenes_dir() / "slides.py")
    _run([*binary, "render", f"-q{settings.quality}", *media, *quiet, script, *names], work, env, "manim-slides render")
    staging = work / "deck"
    staging.mkdir()
    html = str(staging / "slides.html")
    _run([*binary, "convert", "--folder", str(work / "slides"), *names, html], work, env, "manim-slides convert")
    return staging


def _swap_deck(staging: Path, out: Path, work: Path) -> None:
    """Move the new deck into place: the old assets aside (a rename), the new ones and the page
    that points at them in, then the old ones away; the folder is never half-deleted."""
    assets = out / "slides_assets"
    new_assets = staging / "slides_assets"
    old_assets = work / "old_assets"
    if assets.exists():
        assets.replace(old_assets)
    if new_assets.exists():
        new_assets.replace(assets)
    os.replace(staging / "slides.html", out / "slides.html")
    shutil.rmtree(old_assets, ignore_errors=True)
