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


@contextmanager
def encoded_frames(*, pace: str = "slow") -> Iterator[list[tuple[np.ndarray, int]]]:
    """A list that fills, while in the block, with every ``(frame, times shown)`` an encoder is
    given, copied as the encoder reads it. ``pace``: ``"slow"``, the encoder slowed down, so that
    drawing runs ahead of it into fresh arrays; ``"in step"``, each frame encoded before the next
    is drawn, so that the same two arrays are drawn in again and again; ``"free"``, as it goes."""
    job = scene_file_writer._PartialMovieEncodeJob
    encode, put = job._encode_and_write_frame, job.put
    seen: list[tuple[np.ndarray, int]] = []
    given = [0]

    def seen_then_encoded(self: Any, frame: np.ndarray, num_frames: int) -> None:
        if pace == "slow":
            time.sleep(0.004)
        seen.append((np.array(frame, copy=True), num_frames))
        encode(self, frame, num_frames)

    def put_in_step(self: Any, num_frames: int, frame: np.ndarray) -> None:
        given[0] += 1
        put(self, num_frames, frame)
        while len(seen) < given[0] and self._exception is None:
            time.sleep(0.0002)

    job._encode_and_write_frame = seen_then_encoded  # type: ignore[method-assign]
    if pace == "in step":
        job.put = put_in_step  # type: ignore[method-assign]
    try:
        yield seen
    finally:
        job._encode_and_write_frame, job.put = encode, put  # type: ignore[method-assign]


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
