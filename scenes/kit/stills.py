"""What a beat leaves alone is drawn once, not every frame.

Manim draws the mobjects a play leaves alone once, as the frame's background, and redraws the
rest every frame; but "the rest" is everything after the first animated mobject in the scene's
list, moving or not. A beat that dims a row of labels made early, or fades out a matrix, so
redraws every number laid out after it, frame after frame. :class:`StillFirst` puts what a play
leaves alone first in the list before it plays (splitting a group whose parts differ), so only
what moves is redrawn; the picture stays the same, as a mobject moves behind a moving one only
when the two do not overlap (nor would where the moving one goes).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
from manim import AnimationGroup, Mobject, Scene

__all__ = ["StillFirst", "still_first"]

MARGIN = 0.05  # two boxes closer than this count as overlapping (strokes reach past a box)


def _animated(args: Iterable[Any], found: list[Mobject], going: list[Mobject]) -> None:
    """Into ``found`` the mobjects a play's arguments animate (an animation's, a builder's, a group's parts'),
    into ``going`` where they go (a transform's target, a builder's)."""
    for arg in args:
        mob = getattr(arg, "mobject", None)
        if isinstance(mob, Mobject):
            found.append(mob)
            going += [to for to in (getattr(arg, "target_mobject", None), getattr(mob, "target", None))
                      if isinstance(to, Mobject) and to.get_family() and to is not mob]
        if isinstance(arg, AnimationGroup):
            _animated(arg.animations, found, going)


def _pieces(mob: Mobject, touched: set[int], out: list[Mobject]) -> None:
    """``mob`` whole where the play touches all of it or none (or it draws itself, or is furniture), else its
    parts, each the same way."""
    family = mob.get_family()
    hit = sum(id(part) in touched for part in family)
    if hit in (0, len(family)) or mob.has_points() or getattr(mob, "is_furniture", False):
        out.append(mob)
        return
    for part in mob.submobjects:
        _pieces(part, touched, out)


def _box(mobs: Sequence[Mobject]) -> np.ndarray:
    """The boxes (x0, y0, x1, y1) of ``mobs``, each widened by :data:`MARGIN`; empty ones far away."""
    boxes = np.full((len(mobs), 4), [1e9, 1e9, 1e9, 1e9])
    for k, mob in enumerate(mobs):
        points = [part.points for part in mob.get_family() if len(part.points)]
        if points:
            every = np.concatenate(points)
            boxes[k] = [*(every[:, :2].min(axis=0) - MARGIN), *(every[:, :2].max(axis=0) + MARGIN)]
    return boxes


def still_first(scene: Scene, args: Sequence[Any]) -> None:
    """Reorder ``scene.mobjects`` so that what the play of ``args`` leaves alone comes first (drawn once).

    A piece the play leaves alone stays after an animated one it used to be drawn over when their boxes (the
    animated one's where it is and where it goes) overlap: the picture never changes.
    """
    animated: list[Mobject] = []
    targets: list[Mobject] = []
    _animated(args, animated, targets)
    touched = {id(part) for mob in animated for part in mob.get_family()}
    pieces: list[Mobject] = []
    for mob in scene.mobjects:
        _pieces(mob, touched, pieces)
    moving_flags = [any(id(part) in touched for part in piece.get_family()) for piece in pieces]
    if not any(moving_flags):
        return
    boxes, going = _box(pieces), _box(targets)
    still: list[Mobject] = []
    moving: list[Mobject] = []
    moved_boxes: list[np.ndarray] = []
    for piece, flag, box in zip(pieces, moving_flags, boxes, strict=True):
        if not flag and moved_boxes:
            over = np.vstack([*moved_boxes, going]) if len(going) else np.vstack(moved_boxes)
            flag = bool(np.any((over[:, 0] <= box[2]) & (box[0] <= over[:, 2])
                               & (over[:, 1] <= box[3]) & (box[1] <= over[:, 3])))
        (moving if flag else still).append(piece)
        if flag:
            moved_boxes.append(box[None, :])
    scene.mobjects = still + moving


class StillFirst(Scene):
    """A scene whose plays redraw only what moves (:func:`still_first` before every play)."""

    def play(self, *args: Any, **kwargs: Any) -> None:
        still_first(self, args)
        super().play(*args, **kwargs)
