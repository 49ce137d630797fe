"""The frame pool: each frame drawn goes to the encoder without a copy, the next is drawn elsewhere.

``CairoRenderer.render``
    each frame drawn was copied for the encoder (``get_frame``, 8 MB at 1080p) and the next
    drawn into the same array. Here the drawn array goes to the encoder as it is; it stays the
    camera's frame (whatever reads the frame after a play reads it), but the next frame is drawn
    into another array, lent back once the encoder is done with it: a copy less per moving
    frame, the same frames (the test slows the encoder down so drawing runs ahead, and reads
    the frame the camera holds at the end). Drawing that runs ahead waits for one of four
    arrays to be let go rather than take more (it took up to 32: a -qh render's peak memory
    was 1.1 GB, now 0.75; each new array first took the play's still frame whole).
``Camera.set_pixel_array``
    with which every frame starts (the background, written over the whole array): while the
    encoder holds the camera's array, the camera takes a free one, and the background is
    written there, only in the rows drawn over since that array last had it, where they are
    known (:mod:`.background_rows`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from . import background_rows
from .encoding import frames_encoded
from .patching import Patch

__all__ = ["patches"]


class _Frames:
    """The arrays a camera draws its frames into, lent to the encoder in turn (see
    :func:`_frames_handed_over`). Each array lives as long as the camera, so the Cairo context
    manim keeps for an array, by its ``id``, never outlives it; an array is lent as a view of
    it, and is free again once nobody holds that view (the encoder drops it once the frame after
    it is converted)."""

    MOST = 32  # more frames than this waiting for the encoder: manim's copy instead
    # Past this many arrays, drawing waits for the encoder to free one rather than take another:
    # every array the camera draws in first takes each play's still frame whole (8 MB at 1080p,
    # where an array drawn in before takes back only the rows drawn over), and 32 of them
    # cycled through fall out of the processor's cache. Waiting costs no CPU: the encoder, and
    # the bundle's other render, use it.
    FEW = 4
    PATIENCE = 2.0  # seconds; an encoder that frees no array in this long is not waited for again

    def __init__(self) -> None:
        import threading

        self.arrays: list[Any] = []
        self.lent: list[Callable[[], Any]] = []  # a weak reference to each array's view, while lent
        self.released = threading.Event()  # set whenever the encoder lets go of a view
        self.patient = True

    def _free(self, but: Any) -> Any:
        """A free array like ``but``, other than it, or None."""
        return next((a for a, view in zip(self.arrays, self.lent, strict=True)
                     if a is not but and view() is None and a.shape == but.shape and a.dtype == but.dtype), None)

    def can_lend(self, drawn: Any) -> bool:
        """Is there an array to draw the next frame in, once ``drawn`` is lent?"""
        return self._free(drawn) is not None or len(self.arrays) < self.MOST

    def lend(self, drawn: Any, view: Any) -> Any:
        """``view``, a view of ``drawn``, for the encoder; ``drawn`` is not drawn in again while it is held."""
        import weakref

        if not any(a is drawn for a in self.arrays):
            self.arrays.append(drawn)
            self.lent.append(_nobody)
        self.lent[next(k for k, a in enumerate(self.arrays) if a is drawn)] = weakref.ref(view, self._let_go)
        return view

    def _let_go(self, _view: Any) -> None:
        self.released.set()  # in whichever thread dropped the view: the encoder's, mostly

    def _freed(self, like: Any) -> Any:
        """A free array like ``like``, waited for while the encoder works through the frames it
        holds; ``None`` (and no more waiting) if for :attr:`PATIENCE` seconds it frees none and
        encodes no frame (a long wait's frame, encoded again and again, is held all along)."""
        import time

        deadline, encoded = time.monotonic() + self.PATIENCE, frames_encoded()
        while True:
            self.released.clear()  # before looking: a view let go after this wakes the wait
            spare = self._free(like)
            if spare is not None:
                return spare
            left = deadline - time.monotonic()
            if left > 0 and self.released.wait(left):
                continue
            if frames_encoded() == encoded:
                self.patient = False
                return None
            deadline, encoded = time.monotonic() + self.PATIENCE, frames_encoded()  # the encoder is at work

    def is_lent(self, array: Any) -> bool:
        return any(a is array and view() is not None for a, view in zip(self.arrays, self.lent, strict=True))

    def spare(self, lent: Any) -> Any:
        """A free array like ``lent`` to draw in instead: waited for once :attr:`FEW` are made, else made."""

        spare = self._free(lent)
        if spare is None and self.patient and len(self.arrays) >= self.FEW:
            spare = self._freed(lent)
        if spare is None:
            spare = np.empty_like(lent)
            self.arrays.append(spare)
            self.lent.append(_nobody)
        return spare


def _nobody() -> None:
    return None


def _frames_handed_over() -> Callable[..., Any]:
    """``CairoRenderer.render``: the frame just drawn goes to the encoder as it is, where manim's
    ``get_frame`` copied it (8 MB at 1080p). The camera keeps it as its frame (whoever reads the
    frame after a play reads it), but draws the next frame into another array
    (:func:`_drawn_elsewhere_while_lent`)."""

    def render(self: Any, scene: Any, time: float, moving_mobjects: Any = None) -> None:
        self.update_frame(scene, moving_mobjects)
        camera = self.camera
        frames = camera.__dict__.get("_accel_frames")
        if frames is None:
            frames = camera.__dict__["_accel_frames"] = _Frames()
        drawn = camera.pixel_array
        if not isinstance(drawn, np.ndarray) or not drawn.flags.c_contiguous or not frames.can_lend(drawn):
            self.add_frame(self.get_frame())  # manim's own: a copy
            return
        self.add_frame(frames.lend(drawn, background_rows.lent(camera, drawn)))

    return render


def _drawn_elsewhere_while_lent(original: Callable[..., Any]) -> Callable[..., Any]:
    """``Camera.set_pixel_array``, with which every frame starts (the background, written over
    the whole array): while the encoder holds the camera's array, the camera takes a free one
    and the background is written there instead, only its rows drawn over since that array last
    had the same background where they are known (:mod:`.background_rows`)."""

    def set_pixel_array(self: Any, pixel_array: Any, convert_from_floats: bool = False) -> None:
        frames = self.__dict__.get("_accel_frames")
        current = self.__dict__.get("pixel_array")
        if frames is not None and current is not None and frames.is_lent(current):
            self.pixel_array = frames.spare(current)
        if current is None or not background_rows.restore(self, pixel_array, convert_from_floats):
            original(self, pixel_array, convert_from_floats)
        background_rows.given(self, pixel_array)

    return set_pixel_array


def patches() -> list[Patch]:
    """Frames handed to the encoder as drawn, the next drawn into an array the encoder let go of."""
    return [
        Patch("manim.renderer.cairo_renderer:CairoRenderer", "render", lambda _: _frames_handed_over(),
              ("self", "scene", "time", "moving_mobjects")),
        Patch("manim.camera.camera:Camera", "set_pixel_array", _drawn_elsewhere_while_lent,
              ("self", "pixel_array", "convert_from_floats")),
    ]
