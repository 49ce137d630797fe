"""Every scene of the default lecture, drawn with the accelerator, is manim's own, pixel for pixel.

Each scene of the default lecture (``scenes.registry``) is rendered in this process twice, on
manim as it is and with :func:`attention_explainer.accel.enable`, and every frame given to the
encoder (as the encoder reads it: the accelerator lends it the camera's own array) and the frame
the camera holds at the end are compared byte for byte. A tiny frame at a few frames a second
keeps it within the suite's time (both renders of the nine scenes: about 40 s of CPU here); the
full-size comparison of the lecture was made once, by hand, when each patch went in.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from encoded_frames import frames_encoded
from stock_manim import stock_manim

from attention_explainer import accel
from scenes.registry import DEFAULT_LECTURE, lecture

# its own worker: the nine scenes twice are the longest of the accelerator's tests
pytestmark = pytest.mark.xdist_group("accel-lecture")

TINY = {"pixel_width": 192, "pixel_height": 108, "frame_rate": 3, "verbosity": "ERROR"}
"""A tiny frame, three a second (manim lengthens the few animations shorter than a frame, in both renders)."""


@pytest.fixture
def stock_first(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Manim as it is when the test starts, the scenes' default scenario; whatever was before, after it."""
    for name in ("ATTENTION_SCENARIO", "ATTENTION_QUERY"):
        monkeypatch.delenv(name, raising=False)
    with stock_manim():
        yield


@pytest.mark.parametrize(("module", "name"), lecture(DEFAULT_LECTURE).scenes, ids=lecture(DEFAULT_LECTURE).scene_names)
def test_the_lecture_scene_drawn_with_the_accelerator_is_manims(
    stock_first: None, tmp_path: Path, module: str, name: str
) -> None:
    scene_class = getattr(importlib.import_module(module), name)
    expected = frames_encoded(scene_class, tmp_path / "stock", pace="free", settings=TINY)
    assert accel.enable()
    got = frames_encoded(scene_class, tmp_path / "accel", pace="free", settings=TINY)
    assert [n for _, n in got] == [n for _, n in expected]  # the same frames, each held as long
    assert len(got) > 20 and any(n > 1 for _, n in got)
    for index, ((mine, _), (theirs, _)) in enumerate(zip(got, expected, strict=True)):
        assert mine.shape == theirs.shape == (108, 192, 4)
        differ = int(np.count_nonzero((mine != theirs).any(axis=2)))
        assert differ == 0, f"{name}: frame {index} of {len(got)} differs in {differ} pixels"
