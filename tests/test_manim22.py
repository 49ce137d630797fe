"""The bundle on manim 0.22: one scene of every lecture rendered by ``attention-explainer render``.

Skipped unless the manim installed is 0.22 (the suite's ``.venv`` holds 0.21, the pinned default);
``make test-manim22`` makes a second venv with manim 0.22.0 and runs this module there, with the
accelerator's, the runner's and the slides' own tests. Each lecture's cheapest scene (by
its lecture's ``cost``) is rendered at -ql and 5 frames a second: the render says nothing to
the person rendering (``processes.NOTICE``: no accelerator refused, no runner's hook left out, so the
still is the frame as drawn), the clip is x264's as the accelerator sets it, and the still is there.
The default lecture's scene is rendered as a lecturer does (``--captions burn --slides``): its deck
has a slide per caption (manim-slides through :mod:`scenes.kit.slide`), the captions burnt in by
the runner's hook on 0.22's ``write_frame``.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import manim
import pytest
import srt
from scene_helpers import REPO, clean_environment, x264_options

from attention_explainer import accel, processes
from scenes import registry

pytestmark = [
    pytest.mark.render,
    pytest.mark.skipif(not manim.__version__.startswith("0.22."),
                       reason=f"manim {manim.__version__}: `make test-manim22` runs this on manim 0.22"),
]


def _cheapest(lecture: str) -> tuple[int, str]:
    """The number and name of the lecture's scene that renders quickest at -ql."""
    declared = registry.lecture(lecture)
    costs = [(declared.render_cost(name, "l"), number, name)
             for number, name in enumerate(declared.scene_names, start=1)]
    _, number, name = min(costs)
    return number, name


def _render(lecture: str, number: int, out: Path, *more: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "attention_explainer", "render", "--lecture", lecture, "--scenes", str(number),
         "--quality", "l", "--fps", "5", "--out", str(out), *more],
        cwd=REPO, env=clean_environment(), capture_output=True, text=True, timeout=900,
    )


def test_the_accelerator_fits_this_manim() -> None:
    assert manim.__version__ in accel.TESTED_MANIM
    assert [group.problems() for group in accel._groups()] == [[]] * len(accel._groups())


@pytest.mark.parametrize("lecture", registry.lecture_names())
def test_a_scene_of_each_lecture_renders_on_manim_022(tmp_path: Path, lecture: str) -> None:
    number, name = _cheapest(lecture)
    more: tuple[str, ...] = ()
    if lecture == registry.DEFAULT_LECTURE:
        more = ("--captions", "burn", "--slides")
    elif lecture == "real-head":  # all-MiniLM-L6-v2's head: the model's weights (the dev install's) and a sentence
        more = ("--model", "minilm", "--sentence", "the dog chased the ball")
    result = _render(lecture, number, tmp_path / "out", *more)
    assert result.returncode == 0, result.stderr[-3000:]
    said = [line for line in result.stderr.splitlines() if line.startswith(processes.NOTICE)]
    assert said == []  # the accelerator in place, every hook installed (the still saved as drawn)
    out = tmp_path / "out"
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["rendered"] == [name]
    kinds = {entry["path"]: entry["kind"] for entry in manifest["files"]}
    clips = [rel for rel in kinds if re.fullmatch(rf"{number:02d}-[a-z0-9-]+\.mp4", rel)]
    assert len(clips) == 1, kinds
    clip = out / clips[0]
    assert "me=dia" in x264_options(clip) and "subme=1" in x264_options(clip)  # the accelerator's x264
    stem = clip.stem
    assert (out / "stills" / f"{stem}.png").is_file()
    if lecture == registry.DEFAULT_LECTURE:
        cues = list(srt.parse((out / f"{stem}.srt").read_text(encoding="utf-8")))
        deck = (out / "slides.html").read_text(encoding="utf-8")
        assert manifest["deck"] and len(re.findall(r"<section\b", deck)) == len(cues) > 0
