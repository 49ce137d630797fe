"""One encoder for a whole scene (:mod:`attention_explainer.one_stream`): the same frames, one file.

A scene of several plays and waits is rendered with one stream and with manim's partial movie
per play: the clip holds the same number of frames, lasts as long and comes from one partial
file, starting on its only forced keyframe; the pictures the encoder is given are those of
manim's plays (the speedups' own tests compare them with manim's pixel for pixel, with one
stream in place). A render that fails halfway discards the open stream and leaves no encoder
waiting; manim's cache and manim-slides' slides keep a partial movie per play.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import av
import pytest
from manim import RIGHT, UP, Circle, FadeIn, Scene, Square, Text, tempconfig

from attention_explainer import one_stream, speedups

pytestmark = pytest.mark.xdist_group("speedups")


@pytest.fixture
def fast() -> Iterator[None]:
    """The speedups (one stream among them) during the test; as before, after it."""
    was = speedups.installed()
    speedups.install()
    yield
    speedups.uninstall()
    if was:
        speedups.install()


class _Plays(Scene):
    """Four plays and two waits: a fade, a move, a still wait, a text, a colour, a wait."""

    def construct(self) -> None:
        square = Square(1.0).set_fill("#58C4DD", 0.5)
        self.play(FadeIn(square), run_time=0.4)
        self.play(square.animate.shift(2 * RIGHT), run_time=0.4)
        self.wait(0.4)
        self.play(FadeIn(Text("key", font="DejaVu Sans").shift(UP)), run_time=0.4)
        self.play(square.animate.set_color("#FFB000"), run_time=0.4)
        self.wait(0.4)


class _Fails(_Plays):
    def construct(self) -> None:
        self.play(FadeIn(Circle()), run_time=0.4)
        self.wait(0.2)
        raise RuntimeError("halfway")


def _render(scene_class: type[Scene], media: Path, **options: Any) -> Scene:
    settings = {"pixel_width": 320, "pixel_height": 180, "frame_rate": 15, "media_dir": str(media),
                "disable_caching": True, "progress_bar": "none", "verbosity": "WARNING", **options}
    with tempconfig(settings):
        scene = scene_class()
        scene.render()
    return scene


def _frames_and_keyframes(clip: Path) -> tuple[int, int, float]:
    with av.open(str(clip)) as container:
        stream = container.streams.video[0]
        packets = [p for p in container.demux(stream) if p.size]
        seconds = float(stream.duration * stream.time_base) if stream.duration else 0.0
        return len(packets), sum(p.is_keyframe for p in packets), seconds


def _clip(scene: Scene) -> Path:
    return Path(scene.renderer.file_writer.movie_file_path)


def test_a_scene_is_one_stream_with_manims_frames_and_length(fast: None, tmp_path: Path) -> None:
    one = _render(_Plays, tmp_path / "one")
    files = [f for f in one.renderer.file_writer.partial_movie_files if f is not None]
    assert len(files) == 1 and Path(files[0]).exists()
    assert len(one.renderer.file_writer.partial_movie_files) == 6  # one entry per play, as manim keeps them
    one_stream.uninstall()
    try:
        per_play = _render(_Plays, tmp_path / "per-play")
    finally:
        one_stream.install()
    assert len([f for f in per_play.renderer.file_writer.partial_movie_files if f is not None]) == 6
    frames, keyframes, seconds = _frames_and_keyframes(_clip(one))
    their_frames, their_keyframes, their_seconds = _frames_and_keyframes(_clip(per_play))
    assert frames == their_frames == round(15 * 2.4)
    assert seconds == pytest.approx(their_seconds)
    assert keyframes == 1 and their_keyframes == 6  # a keyframe at each play's start, with manim's


def test_a_render_that_fails_discards_the_stream_and_leaves_no_encoder(fast: None, tmp_path: Path) -> None:
    import threading

    with pytest.raises(RuntimeError, match="halfway"):
        _render(_Fails, tmp_path)
    assert not list(tmp_path.rglob("partial_movie_files/**/*.mp4"))  # discarded, as manim's aborted partial
    assert not [t for t in threading.enumerate() if t.name.startswith("partial-movie-encoder")]


def test_manims_cache_keeps_a_partial_movie_per_play(fast: None, tmp_path: Path) -> None:
    scene = _render(_Plays, tmp_path, disable_caching=False)
    assert len([f for f in scene.renderer.file_writer.partial_movie_files if f is not None]) == 6


def test_slides_keep_a_partial_movie_per_play(fast: None, tmp_path: Path) -> None:
    from manim_slides import Slide

    class Slides(Slide):
        def construct(self) -> None:
            square = Square(1.0)
            self.play(FadeIn(square), run_time=0.4)
            self.next_slide()
            self.play(square.animate.shift(RIGHT), run_time=0.4)

    scene = _render(Slides, tmp_path)
    assert len([f for f in scene.renderer.file_writer.partial_movie_files if f is not None]) == 2


def test_install_twice_and_uninstall_put_manims_own_back() -> None:
    from manim.scene.scene_file_writer import SceneFileWriter

    was = speedups.installed()
    speedups.uninstall()
    try:
        manims = SceneFileWriter.open_partial_movie_stream, SceneFileWriter.finish
        one_stream.install()
        one_stream.install()
        assert one_stream.installed() and SceneFileWriter.finish is not manims[1]
        one_stream.uninstall()
        assert not one_stream.installed()
        assert (SceneFileWriter.open_partial_movie_stream, SceneFileWriter.finish) == manims
    finally:
        if was:
            speedups.install()
