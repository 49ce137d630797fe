"""The frames a render gives its encoder, each as the encoder reads it: what the accelerator's
frame tests compare with manim's own (``tests/test_accel.py``, ``tests/test_accel_lecture.py``)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
from manim import Scene, tempconfig
from manim.scene import scene_file_writer

SMALL = {"pixel_width": 320, "pixel_height": 180, "frame_rate": 15}
"""A small frame at -ql's rate: the accelerator's tests of single scenes."""

SEGMENTS = hasattr(scene_file_writer, "VideoSegmentEncoder")
"""manim 0.22: a ``VideoSegmentEncoder`` encodes each partial movie (``write_frame(pixels, *, repeat)``);
0.21: the encode job itself (``_PartialMovieEncodeJob._encode_and_write_frame(frame, num_frames)``)."""
ENCODER: Any = scene_file_writer.VideoSegmentEncoder if SEGMENTS else scene_file_writer._PartialMovieEncodeJob
ENCODE = "write_frame" if SEGMENTS else "_encode_and_write_frame"
"""The class and method that encode a frame shown some times, in the manim installed."""

Encode = Callable[[Any, np.ndarray, int], None]


def encoding_through(around: Callable[[Encode, Any, np.ndarray, int], None]) -> Any:
    """A replacement of ``ENCODER.ENCODE`` as it is now (manim's, or the accelerator's) that calls
    ``around(encode, encoder, frame, times)``, ``encode(encoder, frame, times)`` being the method replaced."""
    original = getattr(ENCODER, ENCODE)
    if SEGMENTS:
        def encode(encoder: Any, frame: np.ndarray, times: int) -> None:
            original(encoder, frame, repeat=times)

        def write_frame(self: Any, pixels: np.ndarray, *, repeat: int = 1) -> None:
            around(encode, self, pixels, repeat)

        return write_frame

    def encode_and_write(self: Any, frame: np.ndarray, num_frames: int) -> None:
        around(original, self, frame, num_frames)

    return encode_and_write


@contextmanager
def encoded_frames(*, pace: str = "slow") -> Iterator[list[tuple[np.ndarray, int]]]:
    """A list that fills, while in the block, with every ``(frame, times shown)`` an encoder is
    given, copied as the encoder reads it. ``pace``: ``"slow"``, the encoder slowed down, so that
    drawing runs ahead of it into fresh arrays; ``"in step"``, each frame encoded before the next
    is drawn, so that the same two arrays are drawn in again and again; ``"free"``, as it goes."""
    job = scene_file_writer._PartialMovieEncodeJob
    encode, put = getattr(ENCODER, ENCODE), job.put
    seen: list[tuple[np.ndarray, int]] = []
    given = [0]

    def seen_then_encoded(original: Encode, self: Any, frame: np.ndarray, num_frames: int) -> None:
        if pace == "slow":
            time.sleep(0.004)
        seen.append((np.array(frame, copy=True), num_frames))
        original(self, frame, num_frames)

    def put_in_step(self: Any, num_frames: int, frame: np.ndarray) -> None:
        given[0] += 1
        put(self, num_frames, frame)
        while len(seen) < given[0] and self._exception is None:
            time.sleep(0.0002)

    setattr(ENCODER, ENCODE, encoding_through(seen_then_encoded))
    if pace == "in step":
        job.put = put_in_step  # type: ignore[method-assign]
    try:
        yield seen
    finally:
        setattr(ENCODER, ENCODE, encode)
        job.put = put  # type: ignore[method-assign]


def frames_encoded(
    make_scene: Callable[[], Scene], media: Path, *, pace: str = "slow", settings: dict[str, Any] | None = None
) -> list[tuple[np.ndarray, int]]:
    """Every frame the encoder is given for the scene ``make_scene()`` renders (see
    :func:`encoded_frames`) at :data:`SMALL` size and rate, or as ``settings`` say, and last the frame the
    camera holds once the scene has ended (manim's frame tests read it)."""
    with encoded_frames(pace=pace) as seen, tempconfig({
        "disable_caching": True, "progress_bar": "none", "verbosity": "WARNING", **SMALL, **(settings or {}),
        "media_dir": str(media),
    }):
        scene = make_scene()
        scene.render()
        seen.append((scene.renderer.get_frame(), 0))
    return seen
