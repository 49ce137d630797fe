"""A frame starts from the play's still frame: copy back only the rows drawn over since.

Every frame of a play, manim's Cairo renderer copies the play's still frame whole into the
array it draws in (8 MB at 1080p, about 1.5 ms), though the frame drawn there before changed it
only where its moving mobjects lie. Here each array remembers which still frame it was last
given and which rows anything was drawn in since; given the same still frame again, only those
rows are copied back. The frame handed to the encoder knows them too (:func:`lent`), so that
the conversion to the encoder's colours compares only those rows with the frame before
(:func:`may_differ`), and converts only the columns drawn over in those rows
(:func:`columns_drawn`). The rows and columns come from the boxes of what was drawn
(:func:`.boxes.boxes`: points, stroke and mitres, two pixels of antialiasing); where a
drawing's rows are not known (a camera other than manim's plain ``Camera``, a mobject other
than a ``VMobject``, an array written some other way), the next copy is whole, as manim's.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from typing import Any

import numpy as np

from .boxes import boxes
from .patching import Patch, Step

__all__ = ["Lent", "columns_drawn", "given", "lent", "may_differ", "measured", "patches", "restore"]

_FOLLOWING: list[bool] = []  # [True] while captures remember the rows they draw in (patched)
_KEY = "_background_rows"


class _Drawn:
    """What one array holds: ``background`` with rows ``rows`` (a mask) drawn over, in row ``r``
    only columns ``left[r]`` to ``right[r]`` (excluded); ``rows`` is ``None`` once something was
    drawn whose rows are not known."""

    def __init__(self, array: Any, background: Any) -> None:
        self.array = array
        self.background = background
        self.rows: Any = np.zeros(array.shape[0], dtype=bool)
        self.left: Any = np.full(array.shape[0], array.shape[1], dtype=np.intp)
        self.right: Any = np.zeros(array.shape[0], dtype=np.intp)

    def forget(self) -> None:
        """Nothing drawn over ``background`` any more."""
        self.rows[:] = False
        self.left[:] = self.array.shape[1]
        self.right[:] = 0


def _records(camera: Any) -> dict[int, _Drawn]:
    records: dict[int, _Drawn] | None = camera.__dict__.get(_KEY)
    if records is None:
        records = camera.__dict__[_KEY] = {}
    return records


def restore(camera: Any, background: Any, convert_from_floats: bool) -> bool:
    """Give ``camera.pixel_array`` the frame ``background`` by copying back the rows drawn over
    since it last had it; ``False`` (nothing done) where that is not known (or when drawings
    are not followed: not patched)."""
    if not _FOLLOWING:
        return False
    array = camera.pixel_array
    records = _records(camera)
    drawn = records.get(id(array))
    known = (
        drawn is not None and drawn.array is array and drawn.background is background and drawn.rows is not None
        and not convert_from_floats and isinstance(background, np.ndarray)
        and background.shape == array.shape and background.dtype == array.dtype
    )
    if known:
        assert drawn is not None
        changes = np.flatnonzero(np.diff(np.concatenate(([False], drawn.rows, [False])).astype(np.int8)))
        for start, end in zip(changes[::2], changes[1::2], strict=True):
            np.copyto(array[start:end], background[start:end])
        drawn.forget()
    return known


def given(camera: Any, background: Any) -> None:
    """``camera.pixel_array`` now holds ``background`` exactly."""
    array = camera.pixel_array
    if not _FOLLOWING:
        _records(camera).clear()
    elif isinstance(background, np.ndarray) and isinstance(array, np.ndarray):
        _records(camera)[id(array)] = _Drawn(array, background)
    else:
        _records(camera).pop(id(array), None)


class Lent(np.ndarray):
    """A frame lent to the encoder that knows what it holds: the still frame ``still`` with the
    rows ``rows`` (a mask) drawn over, in row ``r`` only in columns ``left[r]`` to ``right[r]``,
    the rest of it the still frame's (``None``: not known)."""

    still: Any = None
    rows: Any = None
    left: Any = None
    right: Any = None


def lent(camera: Any, array: Any) -> Lent:
    """A view of ``array``, the camera's frame just drawn, that knows what it holds where that is known."""
    view: Lent = array.view(Lent)
    drawn = _records(camera).get(id(array)) if _FOLLOWING else None
    if drawn is not None and drawn.array is array and drawn.rows is not None:
        view.still, view.rows = drawn.background, drawn.rows.copy()
        view.left, view.right = drawn.left.copy(), drawn.right.copy()
    return view


def may_differ(previous: Any, frame: Any) -> Any:
    """The rows in which two lent frames may differ (a mask): the rows drawn over in either, when
    both hold the same still frame; ``None`` when not known."""
    return previous.rows | frame.rows if _same_still(previous, frame) else None


def _same_still(previous: Any, frame: Any) -> bool:
    """Are both lent frames known to be drawn over one still frame?"""
    return (isinstance(previous, Lent) and isinstance(frame, Lent) and previous.still is not None
            and previous.still is frame.still and previous.shape == frame.shape)


def columns_drawn(previous: Any, frame: Any, first: int, end: int) -> tuple[int, int] | None:
    """The columns ``(left, right)`` (right excluded) outside which rows ``first`` to ``end`` of
    two lent frames are the same: drawn over in neither (``left >= right`` where nothing was
    drawn there), when both hold the same still frame; ``None`` when not known."""
    if not _same_still(previous, frame):
        return None
    width = frame.shape[1]
    left = min(int(previous.left[first:end].min(initial=width)), int(frame.left[first:end].min(initial=width)))
    right = max(int(previous.right[first:end].max(initial=0)), int(frame.right[first:end].max(initial=0)))
    return left, right


def measured(camera: Any, mobjects: list[Any], their_boxes: Any) -> None:
    """The next capture of exactly the list ``mobjects`` (drawn as it is, without submobjects)
    may take their boxes from here rather than measure them again."""
    camera.__dict__[_KEY + "_measured"] = (mobjects, their_boxes)


def _extent(camera: Any, shown: list[Any], drawn: Any = None) -> tuple[Any, Any, Any] | None:
    """What drawing ``shown`` may change in the camera's frame: its rows (a mask) and each row's
    first and past-the-last column (none: the frame's width and 0); ``None`` when not known."""
    from manim import Camera, VMobject

    if type(camera) is not Camera or not all(isinstance(m, VMobject) for m in shown):
        return None
    height, width = camera.pixel_height, camera.pixel_width
    left = np.full(height, width, dtype=np.intp)
    right = np.zeros(height, dtype=np.intp)
    if not shown:
        return right > left, left, right
    if drawn is None:
        drawn = boxes(shown, camera.frame_width / camera.pixel_width, camera.cairo_line_width_multiple)
    per_unit = height / camera.frame_height
    top_row = camera.frame_center[1] + camera.frame_height / 2
    left_column = camera.frame_center[0] - camera.frame_width / 2
    per_unit_x = width / camera.frame_width
    first = np.clip(np.floor((top_row - drawn[:, 3]) * per_unit) - 1, 0, height).astype(np.intp)
    last = np.clip(np.ceil((top_row - drawn[:, 2]) * per_unit) + 1, 0, height).astype(np.intp)
    begin = np.clip(np.floor((drawn[:, 0] - left_column) * per_unit_x) - 1, 0, width).astype(np.intp)
    end = np.clip(np.ceil((drawn[:, 1] - left_column) * per_unit_x) + 1, 0, width).astype(np.intp)
    for top, bottom, a, b in zip(first.tolist(), last.tolist(), begin.tolist(), end.tolist(), strict=True):
        if top < bottom and a < b:
            np.minimum(left[top:bottom], a, out=left[top:bottom])
            np.maximum(right[top:bottom], b, out=right[top:bottom])
    return right > left, left, right  # (a box wholly left or right of the frame changes no row)


def _capture(self: Any, mobjects: Iterable[Any], **kwargs: Any) -> None:
    """``Camera.capture_mobjects``: manim's, with the rows it draws in remembered."""
    shown = self.get_mobjects_to_display(mobjects, **kwargs)
    listed, their_boxes = self.__dict__.pop(_KEY + "_measured", (None, None))
    known = their_boxes if listed is mobjects and kwargs.get("include_submobjects") is False else None
    drawn = _records(self).get(id(self.pixel_array))
    if drawn is not None and drawn.array is self.pixel_array and drawn.rows is not None:
        extent = _extent(self, shown, known)
        if extent is None:
            drawn.rows = None
        else:
            drawn.rows |= extent[0]
            np.minimum(drawn.left, extent[1], out=drawn.left)
            np.maximum(drawn.right, extent[2], out=drawn.right)
    for kind, group in itertools.groupby(shown, self.type_or_raise):
        self.display_funcs[kind](list(group), self.pixel_array)


def patches() -> list[Patch | Step]:
    """Captures that remember the rows they draw in, and the records that follow them switched on."""
    return [
        Patch("manim.camera.camera:Camera", "capture_mobjects", lambda _: _capture, ("self", "mobjects", "**kwargs")),
        Step("rows followed", lambda: _FOLLOWING.append(True), _FOLLOWING.clear),
    ]
