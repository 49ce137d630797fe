"""``Explainer`` (``scenes/lecture.py``): the whole lecture as one scene, rendered as the README and docs/scenes.md say
(``manim render -ql scenes/lecture.py Explainer``), end to end.

The render (three minutes of video at -ql's size, 5 frames a second to keep its cost down) runs in
the background with the other render tests (``tests/conftest.py``'s render pool picks up the ``scene`` parameter).
Meanwhile each lecture scene is dry-run on its own, its captions recorded with their times: the
video must last as long as the scenes one after another, each followed by the lecture's fade
(``CUT``), and its subtitles must hold every scene's captions in order, each at its scene's place.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import av
import pytest
import srt
from manim import tempconfig
from scene_helpers import RENDER_OPTIONS, REPO, no_pixels

from attention_explainer.media import probe
from scenes.base import ExplainerScene
from scenes.registry import DEFAULT_LECTURE, lecture

pytestmark = [pytest.mark.render, pytest.mark.slow]

EXPLAINER = ("scenes.lecture", "Explainer")
CUT = 0.6  # seconds: Explainer fades the screen out after each scene (scenes/lecture.py)
FPS = int(RENDER_OPTIONS["Explainer"][1])  # the render pool renders it at 5 frames a second, 256 × 144
WIDTH, HEIGHT = (int(n) for n in RENDER_OPTIONS["Explainer"][3].split(","))
FRAME = 1 / FPS


@dataclass(frozen=True)
class Caption:
    text: str
    start: float
    end: float


@dataclass(frozen=True)
class SceneRun:
    name: str
    duration: float
    captions: list[Caption]


def _dry_run(module: str, name: str, media_dir: Path) -> SceneRun:
    """Run one scene without drawing, at -ql's frame rate; record each caption as manim would time it."""
    captions: list[Caption] = []

    def record(self: Any, content: str, duration: float = 1, offset: float = 0) -> None:
        start = self.renderer.time + offset  # as manim's Scene.add_subcaption places it
        captions.append(Caption(content, start, start + duration))

    scene_class = getattr(importlib.import_module(module), name)
    options = {"dry_run": True, "quality": "low_quality", "frame_rate": FPS, "media_dir": str(media_dir),
               "disable_caching": True}
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(ExplainerScene, "add_subcaption", record)
        with tempconfig({**options, "progress_bar": "none", "verbosity": "WARNING"}), no_pixels():
            scene = scene_class()
            scene.render()
    return SceneRun(name, scene.renderer.time, captions)


@pytest.fixture(scope="module")
def scene_runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[SceneRun]]:
    """Every lecture scene's dry run, with the default scenario as the render sees it."""
    media_dir = tmp_path_factory.mktemp("lecture-dry-runs")
    with pytest.MonkeyPatch.context() as patch:
        for name in [name for name in os.environ if name.startswith("ATTENTION_")]:
            patch.delenv(name)  # the render runs with a clean environment, in the repository
        patch.chdir(REPO)
        yield [_dry_run(module, name, media_dir) for module, name in lecture(DEFAULT_LECTURE).scenes]


@pytest.mark.parametrize("scene", [EXPLAINER], ids=["Explainer"])
def test_the_whole_lecture_renders_as_one_video(
    render_pool: Any, scene: tuple[str, str], scene_runs: list[SceneRun]
) -> None:
    result = render_pool.result(*scene)
    assert result.returncode == 0, result.explain()
    video = result.media_dir / "videos" / "lecture" / f"{HEIGHT}p{FPS}" / "Explainer.mp4"
    info = probe(video)
    assert (info.width, info.height, info.fps) == (WIDTH, HEIGHT, FPS)
    expected = sum(run.duration + CUT for run in scene_runs)
    assert expected > 120  # the whole lecture, not a scene of it
    assert info.duration == pytest.approx(expected, abs=2 * FRAME)
    with av.open(str(video)) as container:
        frames = sum(1 for packet in container.demux(video=0) if packet.size)
    assert frames == pytest.approx(expected * FPS, abs=2)

    subtitles = list(srt.parse(video.with_suffix(".srt").read_text(encoding="utf-8")))
    captions = [caption for run in scene_runs for caption in run.captions]
    assert len(captions) >= 7 * 3
    assert [sub.content for sub in subtitles] == [caption.text for caption in captions]
    offset = 0.0  # each scene's captions at its place in the lecture
    shown = iter(subtitles)
    for run in scene_runs:
        for caption in run.captions:
            sub = next(shown)
            assert sub.start.total_seconds() == pytest.approx(offset + caption.start, abs=FRAME), (run.name, sub)
            assert sub.end.total_seconds() == pytest.approx(offset + caption.end, abs=FRAME), (run.name, sub)
        offset += run.duration + CUT
