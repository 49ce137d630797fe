"""The bundle's manim process, ``python -m attention_explainer.runner``: plain ``manim render`` plus
the bundle's hooks (progress lines, a shared TeX folder, the tests' hold), manim's exit status.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from scene_helpers import REPO, clean_environment

from attention_explainer import runner
from attention_math import PRESETS

RUNNER = [sys.executable, "-m", "attention_explainer.runner"]
MANIM_ARGS = ["-ql", "--progress_bar", "none", "-v", "WARNING", "--silent"]
SCENE = [str(REPO / "scenes" / "self_attention" / "scores.py"), "Scores"]
TIMEOUT = 600


def _clip(media: Path) -> Path:
    return media / "videos" / "scores" / "480p15" / "Scores.mp4"


@pytest.mark.render
def test_the_runner_reports_progress_shares_tex_and_holds_after_play_n(tmp_path: Path) -> None:
    media, tex, marker, log = tmp_path / "media", tmp_path / "tex", tmp_path / "held", tmp_path / "stderr.txt"
    hooks = ["--progress", "--tex-dir", str(tex), "--hold-after", "3", "--hold-file", str(marker)]
    command = [*RUNNER, *hooks, "--", *MANIM_ARGS, "--media_dir", str(media), *SCENE]
    with log.open("w", encoding="utf-8") as stderr:
        process = subprocess.Popen(
            command, cwd=tmp_path, env=clean_environment(), stdout=subprocess.DEVNULL, stderr=stderr
        )
        try:
            deadline = time.monotonic() + TIMEOUT
            while not marker.exists():
                assert process.poll() is None, log.read_text(encoding="utf-8")
                assert time.monotonic() < deadline
                time.sleep(0.02)
            time.sleep(1.0)  # held: still running, no clip, no further play
            held = log.read_text(encoding="utf-8")
            assert process.poll() is None
            assert not _clip(media).exists()
            marker.unlink()  # released
            assert process.wait(timeout=TIMEOUT) == 0, log.read_text(encoding="utf-8")
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
    plays = [int(n) for n in re.findall(rf"^{runner.PROGRESS} (\d+) ", held, re.MULTILINE)]
    assert plays and plays[-1] >= 3 and plays == sorted(plays)
    assert not [n for n in plays if n > plays[-1]]  # the hold came at the first hook past play 3
    progress = re.findall(rf"^{runner.PROGRESS} (\d+) (.*)$", log.read_text(encoding="utf-8"), re.MULTILINE)
    assert len(progress) > len(plays)  # it went on after the release
    assert any("score" in caption for _, caption in progress)  # each line carries the beat's caption
    assert _clip(media).is_file()
    # the formula was compiled into the shared folder, and read from the process's own copy
    shared = sorted(path.name for path in tex.glob("*.svg"))
    assert shared
    assert sorted(path.name for path in (media / "Tex").glob("*.svg")) == shared


def test_without_flags_the_runner_installs_no_hook(monkeypatch: pytest.MonkeyPatch) -> None:
    from manim.mobject.text import tex_mobject

    import scenes.base

    hooks: list[object] = []
    monkeypatch.setattr(scenes.base, "AFTER_PLAY_HOOKS", hooks)
    original = tex_mobject.tex_to_svg_file
    monkeypatch.setattr(tex_mobject, "tex_to_svg_file", original)  # put back after the test
    monkeypatch.setattr("manim.__main__.main", lambda *args, **kwargs: None)
    monkeypatch.setenv("shell_escape", "t")  # put back after the test
    assert runner.main(["--", "scenes/self_attention/scores.py", "Scores"]) == 0
    assert hooks == []
    assert tex_mobject.tex_to_svg_file is original
    assert os.environ["shell_escape"] == "f"  # the latex processes manim starts run no programs


def test_installing_twice_adds_each_hook_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from manim.mobject.text import tex_mobject

    import scenes.base

    hooks: list[object] = []
    monkeypatch.setattr(scenes.base, "AFTER_PLAY_HOOKS", hooks)
    original = tex_mobject.tex_to_svg_file
    monkeypatch.setattr(tex_mobject, "tex_to_svg_file", original)
    for _ in range(2):
        runner.install_progress()
        runner.install_hold(3, tmp_path / "held")
        runner.share_tex_cache(tmp_path / "tex")
    assert len(hooks) == 2
    wrapped = tex_mobject.tex_to_svg_file
    assert wrapped is not original
    assert wrapped.__closure__ is not None and original in [cell.cell_contents for cell in wrapped.__closure__]


def _run(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*RUNNER, *args], cwd=cwd, env=env or clean_environment(), capture_output=True, text=True, timeout=TIMEOUT
    )


def test_the_runner_exits_with_manims_status(tmp_path: Path) -> None:
    env = clean_environment()
    env["ATTENTION_SCENARIO"] = "no-such-preset"
    refused = _run("--progress", "--", *MANIM_ARGS, "--media_dir", str(tmp_path / "m"), *SCENE, cwd=tmp_path, env=env)
    assert refused.returncode == 2, refused.stderr
    known = ", ".join(PRESETS)
    assert [line for line in refused.stderr.splitlines() if line.startswith("error: ")] == [
        f"error: ATTENTION_SCENARIO: expected a preset name ({known}) or a path to a .toml file, got 'no-such-preset'"
    ]
    missing = _run("--", *MANIM_ARGS, str(tmp_path / "no-such-file.py"), "Scores", cwd=tmp_path)
    assert missing.returncode != 0  # click's usage error: the file does not exist
    assert "no-such-file.py" in missing.stderr


def test_the_runners_own_usage_errors(tmp_path: Path) -> None:
    for args, message in (
        (["--progress", *SCENE], "expected -- before the arguments for manim render"),
        (["--hold-after", "2", "--", *SCENE], "--hold-after and --hold-file go together"),
    ):
        result = _run(*args, cwd=tmp_path)
        assert result.returncode == 2
        assert result.stderr.splitlines()[-1].endswith(message)


@pytest.mark.render
def test_the_bundle_follows_each_scene_through_the_runner(tmp_path: Path) -> None:
    """The bundle starts the runner, not bare manim, and reads its progress lines (no environment switch)."""
    from attention_explainer.bundle import BundleSettings, build_bundle, select_scenes
    from attention_math import Scenario

    seen: list[tuple[str, int, str]] = []

    def record(jobs: list[Any]) -> None:
        seen.extend((job.status, job.plays, job.step) for job in jobs)

    scenario = Scenario.from_sentence("the cat sat", seed=4)
    manifest = build_bundle(scenario, tmp_path / "out", BundleSettings(jobs=1), select_scenes("scores"), record)
    assert manifest["rendered"] == ["Scores"]
    plays = [plays for status, plays, _ in seen if status == "rendering"]
    assert max(plays) >= 10 and plays == sorted(plays)
    assert any("score" in step for status, _, step in seen if status == "rendering")
    assert seen[-1][0] == "done"
