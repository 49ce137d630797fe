"""Every scene renders end to end at -ql, as a user would run it, with its subtitles.

``manim render -ql --media_dir TMP scenes/<file>.py <Scene>`` from the repository root, one
subprocess per scene, with no ATTENTION_* variables (the default scenario). The renders start in
the background as soon as the tests are collected (see ``conftest.py``); each test waits for its
own. Marked ``render``: they run by default; ``-m "not render"`` leaves them out.
"""

from __future__ import annotations

import pytest
from scene_helpers import SCENES, load_scene_class

pytestmark = pytest.mark.render


@pytest.mark.parametrize("scene", [pytest.param(scene, id=scene[1]) for scene in SCENES])
def test_scene_renders_at_low_quality(scene: tuple[str, str], render_pool) -> None:
    module, name = scene
    load_scene_class(module, name)  # an import error fails here, clearly, before waiting for the render
    result = render_pool.result(module, name)
    assert result.returncode == 0, f"{name} did not render:\n{result.explain()}"
    assert "Traceback" not in result.stderr, result.explain()

    videos = [p for p in result.media_dir.rglob(f"{name}.mp4") if "partial_movie_files" not in p.parts]
    assert len(videos) == 1, f"expected one {name}.mp4 under {result.media_dir}, found {videos}\n{result.explain()}"
    video = videos[0]
    assert video.parent.name == "480p15", f"not a -ql render: {video}"
    assert video.stat().st_size > 10_000, f"{video} is {video.stat().st_size} bytes"

    subtitles = video.with_suffix(".srt")
    assert subtitles.is_file(), f"no subtitles beside the video: {subtitles}\n{result.explain()}"
    srt = subtitles.read_text(encoding="utf-8")
    assert "-->" in srt and srt.strip(), f"{subtitles} has no captions:\n{srt!r}"
