"""The command line run as a user runs it, for the tests that render a bundle of hostile text."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path

import pytest
from scene_helpers import clean_environment

from attention_explainer import cli
from attention_math import Scenario, scenario_to_toml

__all__ = ["PROG", "refused_render", "render_hostile", "run_explainer"]

PROG = "attention-explainer"
"""The command's name, as its errors begin."""


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


def refused_render(capsys: pytest.CaptureFixture[str], tmp_path: Path, *args: str) -> str:
    """``render ARGS`` in this process, refused as a user must see it: exit 2, one line beginning with the
    command's name, no traceback, no bundle folder made. Return the line."""
    out = tmp_path / "bundle"
    status = cli.main(["render", *args, "--out", str(out)])
    err = capsys.readouterr().err
    assert status == 2, err
    assert "Traceback" not in err and len(err.splitlines()) == 1, err
    assert err.startswith(f"{PROG}: error: ")
    assert not out.exists()
    return err
