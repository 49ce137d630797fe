"""One encoder for a whole scene (:mod:`attention_explainer.accel.one_stream`): the same frames, one file.

A scene of several plays and waits is rendered with one stream and with manim's partial movie
per play: the clip holds the same number of frames, lasts as long and comes from one partial
file, starting on its only forced keyframe; the pictures the encoder is given are those of
manim's plays (the accelerator's own tests compare them with manim's pixel for pixel, with one
stream in place), and each is the whole frame's conversion, across the plays' boundaries too.
A render that fails halfway, or after ``construct``, discards the open stream and leaves no
encoder waiting; drawing that runs ahead of an encoder still at a long wait takes no more
arrays; manim's cache and manim-slides' slides keep a partial movie per play.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import av
import pytest
from encoded_frames import ENCODE, ENCODER, Encode, encoding_through
from manim import RIGHT, UP, Circle, FadeIn, Scene, Square, Text, tempconfig

from attention_explainer import accel
from attention_explainer.accel import encoding, frame_pool, one_stream
from attention_explainer.accel.patching import PatchGroup

pytestmark = pytest.mark.xdist_group("accel")


@pytest.fixture
def fast() -> Iterator[None]:
    """The accelerator (one stream among it) during the test; as before, after it."""
    was = accel.is_enabled()
    assert accel.enable()
    yield
    accel.disable()
    if was:
        assert accel.enable()


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
    group = next(group for group in accel._ENABLED if group.name == "one stream")
    group.undo()
    try:
        per_play = _render(_Plays, tmp_path / "per-play")
    finally:
        group.apply(checked=True)  # (its stream opener wraps the encoding's: checked by enable, against manim's)
    assert len([f for f in per_play.renderer.file_writer.partial_movie_files if f is not None]) == 6
    frames, keyframes, seconds = _frames_and_keyframes(_clip(one))
    their_frames, their_keyframes, their_seconds = _frames_and_keyframes(_clip(per_play))
    assert frames == their_frames == round(15 * 2.4)
    assert seconds == pytest.approx(their_seconds)
    assert keyframes == 1 and their_keyframes == 6  # a keyframe at each play's start, with manim's


def test_the_encoder_is_given_each_frame_whole_across_plays(
    fast: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Converted only where it changed since the frame before, across the plays' boundaries
    too (a new still frame, a wait, a fade): each picture is the whole frame's conversion."""
    import numpy as np

    shown: list[tuple[np.ndarray, int]] = []
    pictures: list[list[np.ndarray]] = []
    convert = encoding._Converter.convert

    def seen(encode: Encode, job: Any, frame: np.ndarray, num_frames: int) -> None:
        shown.append((np.array(frame, copy=True), num_frames))
        encode(job, frame, num_frames)

    def recorded(converter: encoding._Converter, frame: Any) -> Any:
        picture = convert(converter, frame)
        pictures.append([np.frombuffer(p, np.uint8).reshape(p.height, p.line_size)[:, : p.width].copy()
                         for p in picture.planes])
        return picture

    monkeypatch.setattr(ENCODER, ENCODE, encoding_through(seen))
    monkeypatch.setattr(encoding._Converter, "convert", recorded)
    _render(_Plays, tmp_path)
    assert len(pictures) == len(shown) > 20
    for index, ((frame, _), picture) in enumerate(zip(shown, pictures, strict=True)):
        whole = av.VideoFrame.from_ndarray(frame, format="rgba").reformat(format="yuv420p", interpolation="AREA")
        planes = [np.frombuffer(p, np.uint8).reshape(p.height, p.line_size)[:, : p.width] for p in whole.planes]
        assert all(np.array_equal(a, b) for a, b in zip(picture, planes, strict=True)), f"picture {index} differs"


def test_a_render_that_fails_discards_the_stream_and_leaves_no_encoder(fast: None, tmp_path: Path) -> None:
    import threading

    with pytest.raises(RuntimeError, match="halfway"):
        _render(_Fails, tmp_path)
    assert not list(tmp_path.rglob("partial_movie_files/**/*.mp4"))  # discarded, as manim's aborted partial
    assert not [t for t in threading.enumerate() if t.name.startswith("partial-movie-encoder")]


class _FailsAfterConstruct(_Plays):
    def tear_down(self) -> None:
        raise RuntimeError("after construct")


def test_a_failure_after_construct_also_discards_the_stream(fast: None, tmp_path: Path) -> None:
    import threading

    with pytest.raises(RuntimeError, match="after construct"):
        _render(_FailsAfterConstruct, tmp_path)
    assert not list(tmp_path.rglob("partial_movie_files/**/*.mp4"))
    assert not [t for t in threading.enumerate() if t.name.startswith("partial-movie-encoder")]


class _WaitThenMove(Scene):
    """A long wait, then a move: the encoder is still at the wait when the move is drawn."""

    def construct(self) -> None:
        square = Square(1.0).set_fill("#58C4DD", 0.5)
        self.add(square)
        self.wait(1.0)
        self.play(square.animate.shift(2 * RIGHT), run_time=1.0)


def test_drawing_waits_for_an_encoder_still_at_a_long_wait(
    fast: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Frames drawn ahead of the encoder across plays take no more arrays than within a play:
    drawing waits while the encoder works through a wait longer than the patience."""
    import time

    pools: list[frame_pool._Frames] = []
    made = frame_pool._Frames.__init__

    def kept(frames: frame_pool._Frames) -> None:
        made(frames)
        pools.append(frames)

    def slowly(encode: Encode, job: Any, frame: Any, num_frames: int) -> None:
        for _ in range(num_frames):  # the wait's 15 frames take 3 s, longer than the patience (2 s)
            time.sleep(0.2)
            encode(job, frame, 1)

    monkeypatch.setattr(frame_pool._Frames, "__init__", kept)
    monkeypatch.setattr(ENCODER, ENCODE, encoding_through(slowly))
    scene = _render(_WaitThenMove, tmp_path)
    assert _frames_and_keyframes(_clip(scene))[0] == 30
    assert len(pools) == 1 and pools[0].patient and len(pools[0].arrays) <= frame_pool._Frames.FEW


def test_manims_cache_keeps_a_partial_movie_per_play(fast: None, tmp_path: Path) -> None:
    scene = _render(_Plays, tmp_path, disable_caching=False)
    assert len([f for f in scene.renderer.file_writer.partial_movie_files if f is not None]) == 6


def test_slides_keep_a_partial_movie_per_play(fast: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from scenes.kit.slide import Slide  # manim-slides' own, made on manim 0.22 too

    monkeypatch.chdir(tmp_path)  # manim-slides writes its slides into ./slides

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

    was = accel.is_enabled()
    accel.disable()
    try:
        manims = SceneFileWriter.open_partial_movie_stream, SceneFileWriter.finish
        group = PatchGroup("one stream", one_stream.patches())
        group.apply()
        group.apply()
        assert group.applied and SceneFileWriter.finish is not manims[1]
        group.undo()
        assert not group.applied
        assert (SceneFileWriter.open_partial_movie_stream, SceneFileWriter.finish) == manims
    finally:
        if was:
            assert accel.enable()
