"""The bundle's manim process, ``python -m attention_explainer.runner``: plain ``manim render`` plus
the bundle's hooks (progress lines, a shared TeX folder, the tests' hold), manim's exit status.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from scene_helpers import REPO, clean_environment, x264_options

from attention_explainer import accel, hooks, narration_hooks, runner, sharing_hooks, still_hooks
from attention_explainer.accel.patching import PatchError
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
    flags = ["--progress", "--tex-dir", str(tex), "--hold-after", "3", "--hold-file", str(marker)]
    command = [*RUNNER, *flags, "--", *MANIM_ARGS, "--media_dir", str(media), *SCENE]
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
    plays = [int(n) for n in re.findall(rf"^{hooks.PROGRESS} (\d+) ", held, re.MULTILINE)]
    assert plays and plays[-1] >= 3 and plays == sorted(plays)
    assert not [n for n in plays if n > plays[-1]]  # the hold came at the first hook past play 3
    progress = re.findall(rf"^{hooks.PROGRESS} (\d+) (.*)$", log.read_text(encoding="utf-8"), re.MULTILINE)
    assert len(progress) > len(plays)  # it went on after the release
    assert any("score" in caption for _, caption in progress)  # each line carries the beat's caption
    assert _clip(media).is_file()
    assert "me=dia subme=1" in x264_options(_clip(media))  # encoded with the accelerator's settings
    # the formula was compiled into the shared folder, and read from the process's own copy
    shared = sorted(path.name for path in tex.glob("*.svg"))
    assert shared
    assert sorted(path.name for path in (media / "Tex").glob("*.svg")) == shared


@pytest.mark.render
def test_the_last_still_is_the_frame_drawn_with_captions_burnt_on_this_manim(tmp_path: Path) -> None:
    """``--last-still`` with ``--burn-captions`` on the manim installed (0.21's ``write_frame(frame_or_renderer,
    num_frames)``, 0.22's ``write_frame(pixels, *, repeat)``): both hooks in place, nothing said, and the
    still beside the clip is the clip's last frame as drawn (the clip's own decodes close to it)."""
    import numpy as np
    from PIL import Image

    from attention_explainer.media import last_frame

    media = tmp_path / "media"
    command = [*RUNNER, "--last-still", "--burn-captions", "--", *MANIM_ARGS, "--frame_rate", "5",
               "--disable_caching", "--media_dir", str(media), *SCENE]
    result = subprocess.run(command, cwd=tmp_path, env=clean_environment(), capture_output=True, text=True,
                            timeout=TIMEOUT)
    assert result.returncode == 0, result.stderr[-3000:]
    assert [line for line in result.stderr.splitlines() if line.startswith("attention-explainer")] == []
    (clip,) = media.glob("videos/scores/*/Scores.mp4")
    still = still_hooks.still_path(clip)
    assert still.is_file()
    decoded = tmp_path / "decoded.png"
    last_frame(clip, decoded)
    drawn = np.asarray(Image.open(still).convert("RGB"), dtype=float)
    theirs = np.asarray(Image.open(decoded).convert("RGB"), dtype=float)
    assert drawn.shape == theirs.shape
    assert float(np.mean(np.abs(drawn - theirs))) < 3  # x264's loss only


def test_without_flags_the_runner_installs_no_hook(monkeypatch: pytest.MonkeyPatch) -> None:
    from manim.mobject.text import tex_mobject

    import scenes.base

    after_play: list[object] = []
    monkeypatch.setattr(scenes.base, "AFTER_PLAY_HOOKS", after_play)
    original = tex_mobject.tex_to_svg_file
    monkeypatch.setattr(tex_mobject, "tex_to_svg_file", original)  # put back after the test
    monkeypatch.setenv("shell_escape", "t")  # put back after the test
    enabled: list[bool] = []
    monkeypatch.setattr("manim.__main__.main", lambda *args, **kwargs: enabled.append(accel.is_enabled()))
    was = accel.is_enabled()
    accel.disable()
    try:
        assert runner.main(["--", "scenes/self_attention/scores.py", "Scores"]) == 0
        assert enabled == [True] and not accel.is_enabled()  # the accelerator during the render, not after
        assert runner.main(["--stock-manim", "--", "scenes/self_attention/scores.py", "Scores"]) == 0
        assert enabled == [True, False]
    finally:
        if was:
            accel.enable()
    assert after_play == [] and hooks.installed_hooks() == []
    assert tex_mobject.tex_to_svg_file is original
    assert os.environ["shell_escape"] == "f"  # the latex processes manim starts run no programs


@pytest.fixture(autouse=True)
def no_hooks_left() -> Iterator[None]:
    """Each test starts and ends with none of the runner's hooks in place (they are the process's)."""
    hooks.remove_hooks()
    yield
    hooks.remove_hooks()


def test_installing_twice_adds_each_hook_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from manim.mobject.text import tex_mobject

    import scenes.base

    after_play: list[object] = []
    monkeypatch.setattr(scenes.base, "AFTER_PLAY_HOOKS", after_play)
    original = tex_mobject.tex_to_svg_file
    monkeypatch.setattr(tex_mobject, "tex_to_svg_file", original)
    for _ in range(2):
        hooks.install_progress()
        hooks.install_hold(3, tmp_path / "held")
        sharing_hooks.share_tex_cache(tmp_path / "tex")
    assert len(after_play) == 2
    assert hooks.installed_hooks() == ["progress", "hold", "TeX cache"]
    wrapped = tex_mobject.tex_to_svg_file
    assert wrapped is not original
    assert wrapped.__closure__ is not None and original in [cell.cell_contents for cell in wrapped.__closure__]


def test_every_hook_is_undone_the_last_first(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each hook (a patch of manim or manim-slides, a hook in the scenes' lists, the texts shared)
    is undone by remove_hooks: the very objects back, the lists as they were."""
    from manim.mobject.text import tex_mobject
    from manim.renderer.cairo_renderer import CairoRenderer
    from manim.scene.scene_file_writer import SceneFileWriter
    from manim_slides.slide.base import BaseSlide

    import attention_math.minilm
    import scenes.base
    import scenes.kit.text

    monkeypatch.setattr(scenes.base, "AFTER_PLAY_HOOKS", [])
    monkeypatch.setattr(scenes.base, "BEAT_HOOKS", [])
    shared: list[Path | None] = []
    monkeypatch.setattr(scenes.kit.text, "share_made_texts", shared.append)
    heads: list[Path | None] = []
    monkeypatch.setattr(attention_math.minilm, "share_heads", heads.append)
    patched = [(tex_mobject, "tex_to_svg_file"), (SceneFileWriter, "write_frame"), (SceneFileWriter, "finish"),
               (CairoRenderer, "scene_finished"), (BaseSlide, "skip_reversing")]
    before = [vars(owner)[name] for owner, name in patched]
    still_hooks.install_last_still()  # the last still and the burnt captions both wrap write_frame
    hooks.install_progress()
    sharing_hooks.share_tex_cache(tmp_path / "tex")
    sharing_hooks.share_texts(tmp_path / "texts")
    sharing_hooks.share_model_heads(tmp_path / "heads")
    narration_hooks.install_narration(tmp_path / "voice", burn=True)
    hooks.install_forward_slides()
    hooks.install_slide_notes()
    hooks.install_hold(3, tmp_path / "held")
    assert all(vars(owner)[name] is not was for (owner, name), was in zip(patched, before, strict=True))
    assert len(scenes.base.AFTER_PLAY_HOOKS) == 2 and len(scenes.base.BEAT_HOOKS) == 2
    assert shared == [tmp_path / "texts"] and heads == [tmp_path / "heads"]
    hooks.remove_hooks()
    assert all(vars(owner)[name] is was for (owner, name), was in zip(patched, before, strict=True))
    assert scenes.base.AFTER_PLAY_HOOKS == [] and scenes.base.BEAT_HOOKS == []
    assert shared == [tmp_path / "texts", None] and heads == [tmp_path / "heads", None]
    assert hooks.installed_hooks() == []


def _write_frame_of_another_manim(self: Any, frame: Any) -> None:
    """A ``write_frame`` that takes other parameters than the tested manim's."""


def test_a_hook_that_does_not_fit_manim_installs_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    from manim.scene.scene_file_writer import SceneFileWriter

    monkeypatch.setattr(SceneFileWriter, "write_frame", _write_frame_of_another_manim)
    finish = SceneFileWriter.finish
    with pytest.raises(PatchError, match=r"last still: .*write_frame takes \(self, frame\), expected"):
        still_hooks.install_last_still()
    assert SceneFileWriter.write_frame is _write_frame_of_another_manim and SceneFileWriter.finish is finish
    assert hooks.installed_hooks() == []


def test_the_runner_leaves_out_a_hook_with_a_fallback_and_stops_for_one_without(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Where manim's ``write_frame`` takes other parameters, the last still (the bundle decodes
    it from the clip instead) is left out with one line, and the render goes on; burnt-in
    captions (no fallback) stop it with an error; either way nothing is left in place."""
    from manim.scene.scene_file_writer import SceneFileWriter

    rendered: list[list[str]] = []
    monkeypatch.setattr("manim.__main__.main", lambda args, **kwargs: rendered.append(args))
    monkeypatch.setattr(SceneFileWriter, "write_frame", _write_frame_of_another_manim)
    monkeypatch.setenv("shell_escape", "t")  # put back after the test
    scene = ["scenes/self_attention/scores.py", "Scores"]
    assert runner.main(["--stock-manim", "--last-still", "--progress", "--", *scene]) == 0
    assert rendered == [["render", *scene]]
    left_out = [line for line in capsys.readouterr().err.splitlines() if line]
    assert len(left_out) == 1 and left_out[0].startswith("attention-explainer: the runner's hook left out: last still:")
    assert hooks.installed_hooks() == []  # undone once manim returned
    assert runner.main(["--stock-manim", "--burn-captions", "--", *scene]) == 1
    assert len(rendered) == 1  # not rendered
    assert capsys.readouterr().err.startswith("error: narration: ")
    assert hooks.installed_hooks() == [] and SceneFileWriter.write_frame is _write_frame_of_another_manim


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
    from attention_explainer.bundle import build_bundle
    from attention_explainer.plan import BundleSettings
    from attention_explainer.selection import select_scenes
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
