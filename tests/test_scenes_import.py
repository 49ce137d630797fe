"""Importing the scenes does nothing but define things: no environment, hook, config or TeX change.

A plain ``manim render scenes/x.py X`` is plain manim; the bundle's hooks (progress lines, a
shared TeX cache) come from its own runner. What a render must do (TeX without shell escape)
happens when a scene is set up.
"""

from __future__ import annotations

import json
import subprocess
import sys

from scene_helpers import REPO, clean_environment

_PROBE = r"""
import importlib, json, os, pkgutil, sys
import manim
from manim.mobject.text import tex_mobject

def state():
    return {
        "environ": dict(os.environ),
        "config": {key: repr(manim.config[key]) for key in sorted(manim.config._d)},
        "tex_to_svg_file": repr(tex_mobject.tex_to_svg_file),
        "stderr_lines": 0,
    }

before = state()
import scenes
names = sorted(name for _, name, _ in pkgutil.walk_packages(scenes.__path__, "scenes."))
for name in names:
    importlib.import_module(name)
after = state()
from scenes.base import AFTER_PLAY_HOOKS
print(json.dumps({"names": names, "before": before, "after": after, "hooks": len(AFTER_PLAY_HOOKS)}))
"""


def test_importing_every_scene_module_changes_nothing() -> None:
    env = {**clean_environment(), "ATTENTION_PROGRESS": "1", "ATTENTION_TEX_DIR": "/nonexistent/tex"}
    result = subprocess.run([sys.executable, "-c", _PROBE], cwd=REPO, env=env, capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr
    assert result.stderr.strip() == "", result.stderr  # nothing printed on import either
    data = json.loads(result.stdout)
    assert "scenes.slides" in data["names"] and "scenes.kit.text" in data["names"], data["names"]
    assert data["after"]["environ"] == data["before"]["environ"]
    assert data["after"]["config"] == data["before"]["config"]
    assert data["after"]["tex_to_svg_file"] == data["before"]["tex_to_svg_file"]
    assert data["hooks"] == 0


def test_setting_up_a_scene_turns_tex_shell_escape_off(tmp_path) -> None:
    probe = (
        "import os\nfrom manim import tempconfig\nfrom scenes.base import ExplainerScene\n"
        f"with tempconfig({{'dry_run': True, 'media_dir': {str(tmp_path)!r}}}):\n"
        "    assert os.environ.get('shell_escape') is None\n"
        "    ExplainerScene().setup()\n"
        "print(os.environ['shell_escape'])\n"
    )
    env = {k: v for k, v in clean_environment().items() if k != "shell_escape"}
    result = subprocess.run([sys.executable, "-c", probe], cwd=REPO, env=env, capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "f"
