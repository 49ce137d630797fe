"""The command line run as a user runs it, for the tests that render a bundle of hostile text."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path

from scene_helpers import clean_environment

from attention_math import Scenario, scenario_to_toml

__all__ = ["render_hostile", "run_explainer"]


def run_explainer(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``python -m attention_explainer ARGS`` in ``cwd``, no scenario chosen from outside; its output kept."""
    return subprocess.run(
        [sys.executable, "-m", "attention_explainer", *args], cwd=cwd, env=clean_environment(),
        capture_output=True, text=True, timeout=900,
    )


def render_hostile(folder: Path, sentence: str, title: str, *args: str) -> subprocess.CompletedProcess[str]:
    """``ARGS`` run in ``folder`` beside its ``hostile.toml``: the scenario of ``sentence`` (seed 3) titled
    ``title``. The run must succeed."""
    scenario = dataclasses.replace(Scenario.from_sentence(sentence, seed=3), title=title)
    (folder / "hostile.toml").write_text(scenario_to_toml(scenario), encoding="utf-8")
    result = run_explainer(*args, cwd=folder)
    assert result.returncode == 0, result.stderr[-3000:]
    return result
