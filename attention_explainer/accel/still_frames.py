"""Still mobjects drawn above moving ones: drawn once per play, not once per frame.

Manim's Cairo renderer draws, once per play, every mobject before the first one that moves (in
drawing order) into the play's still frame, and every frame draws the rest on it: everything
after the first moving mobject, moving or not. In the lecture's scenes a third of what is drawn
each frame stands still (a title added after the axes, a caption over a grid that fades in).

A still mobject can be drawn into the still frame instead, on top of manim's, when it shares no
pixel with anything drawn each frame before it: Cairo's ``OVER`` of two drawings that touch no
common pixel gives the same bytes in either order, and what comes after it in the drawing order
was drawn after it anyway. Each frame is then manim's, pixel for pixel.

"Shares no pixel" is decided by boxes (:mod:`.boxes`): a mobject's points' box (a Bézier curve stays within its
control points), widened by its stroke (five widths where the path has joins, Cairo's miter
joins reaching at most ten half-widths; three quarters of a width for a single curve's caps) and
by two pixels (antialiasing). The boxes of what is drawn each frame are measured again every
frame, after the frame's interpolation: a still mobject that something before it reaches goes
back to being drawn every frame, and the still frame is drawn again without it.

Manim's own assumption holds here too: a mobject that no animation of the play holds and that
has no updater does not change during the play. A play with updaters, a camera other than
manim's plain ``Camera``, or a drawing that is not a ``VMobject`` is left to manim.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

from . import background_rows
from .boxes import boxes, meet
from .patching import Patch

__all__ = ["patches"]

_KEY = "_still_on_top"


class _Play:
    """One play's still mobjects drawn into its still frame (``lifted``), by ``id``."""

    def __init__(self, moving: list[Any], held: set[int], static: list[Any]) -> None:
        self.moving = moving  # the scene's list this play (its identity says the play)
        self.held = held  # ids of what the animations hold: never lifted
        self.static = static  # manim's still mobjects
        self.lifted: dict[int, Any] = {}
        self.lifted_boxes: dict[int, np.ndarray] = {}

    def choose(self, drawn: list[Any], drawn_boxes: np.ndarray, allowed: Callable[[Any], bool]) -> None:
        """Lift, in drawing order, each allowed still mobject that meets nothing kept before it."""
        lifted: dict[int, Any] = {}
        kept: list[int] = []
        for index, mob in enumerate(drawn):
            box = drawn_boxes[index : index + 1]
            if id(mob) not in self.held and allowed(mob) and not (kept and meet(drawn_boxes[kept], box).any()):
                lifted[id(mob)] = mob
            else:
                kept.append(index)
        self.lifted = lifted
        self.lifted_boxes = {id(m): drawn_boxes[i] for i, m in enumerate(drawn) if id(m) in lifted}

    def reached(self, drawn: list[Any], kept_boxes: np.ndarray, kept_at: np.ndarray) -> bool:
        """Does anything kept (drawn each frame) meet a lifted mobject drawn after it?"""
        lifted_at = np.array([i for i, m in enumerate(drawn) if id(m) in self.lifted], dtype=np.intp)
        if not len(lifted_at) or not len(kept_at):
            return False
        lifted_boxes = np.array([self.lifted_boxes[id(drawn[i])] for i in lifted_at])
        meets = meet(kept_boxes, lifted_boxes) & (kept_at[:, None] < lifted_at[None, :])
        return bool(meets.any())


def _held_ids(scene: Any) -> set[int] | None:
    """Ids of what the play's animations hold (nested groups too) and of foreground mobjects;
    ``None`` when anything on screen has an updater (left to manim)."""
    from manim.animation.composition import AnimationGroup

    if any(m.get_family_updaters() for m in [*scene.mobjects, *scene.foreground_mobjects]):
        return None
    held: set[int] = set()
    pending = list(scene.animations or [])
    while pending:
        animation = pending.pop()
        held.update(id(m) for m in animation.mobject.get_family())
        if isinstance(animation, AnimationGroup):
            pending.extend(animation.animations)
    for mob in scene.foreground_mobjects:
        held.update(id(m) for m in mob.get_family())
    return held


def _drawable(renderer: Any, scene: Any) -> bool:
    from manim import Camera, VMobject

    return (
        type(renderer.camera) is Camera
        and not renderer.skip_animations
        and bool(scene.moving_mobjects)
        and not scene.is_current_animation_frozen_frame()
        and all(isinstance(m, VMobject) for m in scene.moving_mobjects if len(m.points))
    )


def _measure(camera: Any, mobjects: Sequence[Any]) -> np.ndarray:
    return boxes(mobjects, camera.frame_width / camera.pixel_width, camera.cairo_line_width_multiple)


def _draw_still_frame(save: Callable[..., Any], renderer: Any, scene: Any, play: _Play, drawn: list[Any]) -> None:
    """Manim's still frame (``save``: manim's ``save_static_frame_data``), then the lifted
    mobjects on it in their drawing order (``drawn``)."""
    save(renderer, scene, play.static)
    if not play.lifted:
        return
    camera = renderer.camera
    if renderer.static_image is not None:
        camera.set_frame_to_background(renderer.static_image)
    else:
        camera.reset()
    camera.capture_mobjects([m for m in drawn if id(m) in play.lifted], include_submobjects=False)
    renderer.static_image = renderer.get_frame()


def _lifting(save: Callable[..., Any]) -> Callable[..., Any]:
    """``CairoRenderer.save_static_frame_data``: manim's still frame (``save``), with the still
    mobjects drawn after moving ones lifted into it where they meet nothing drawn before them."""

    def save_static_frame_data(renderer: Any, scene: Any, static_mobjects: Iterable[Any]) -> Any:
        renderer.__dict__.pop(_KEY, None)
        held = _held_ids(scene) if _drawable(renderer, scene) else None
        if held is None:
            return save(renderer, scene, static_mobjects)
        play = _Play(scene.moving_mobjects, held, list(static_mobjects))
        drawn = renderer.camera.get_mobjects_to_display(play.moving)
        play.choose(drawn, _measure(renderer.camera, drawn), lambda mob: True)
        _draw_still_frame(save, renderer, scene, play, drawn)
        if play.lifted:
            renderer.__dict__[_KEY] = play
        return renderer.static_image

    return save_static_frame_data


def _update_frame(original: Callable[..., Any], save: Callable[..., Any]) -> Callable[..., Any]:
    """``CairoRenderer.update_frame``: only what is not lifted drawn each frame, the still frame
    drawn again (``save``: manim's) when something drawn each frame reaches a lifted mobject."""

    def update_frame(self: Any, scene: Any, mobjects: Any = None, include_submobjects: bool = True,
                     ignore_skipping: bool = True, **kwargs: Any) -> None:
        play = self.__dict__.get(_KEY)
        if play is None or mobjects is not play.moving or not include_submobjects or kwargs or self.skip_animations:
            original(self, scene, mobjects, include_submobjects, ignore_skipping, **kwargs)
            return
        camera = self.camera
        drawn = camera.get_mobjects_to_display(mobjects)
        kept_at = np.array([i for i, m in enumerate(drawn) if id(m) not in play.lifted], dtype=np.intp)
        kept = [drawn[i] for i in kept_at]
        kept_boxes = _measure(camera, kept)
        if play.reached(drawn, kept_boxes, kept_at):
            before = play.lifted
            drawn_boxes = _measure(camera, drawn)
            play.choose(drawn, drawn_boxes, lambda mob: id(mob) in before)
            _draw_still_frame(save, self, scene, play, drawn)
            kept_boxes = np.array([box for m, box in zip(drawn, drawn_boxes, strict=True) if id(m) not in play.lifted])
            kept = [m for m in drawn if id(m) not in play.lifted]
        if self.static_image is not None:
            camera.set_frame_to_background(self.static_image)
        else:
            camera.reset()
        background_rows.measured(camera, kept, kept_boxes)
        camera.capture_mobjects(kept, include_submobjects=False)

    return update_frame


def patches() -> list[Patch]:
    """Still mobjects lifted into each play's still frame, in place of manim's drawing them every frame."""
    renderer = "manim.renderer.cairo_renderer:CairoRenderer"
    stock: list[Callable[..., Any]] = []  # manim's save_static_frame_data, for the still frames drawn again

    def saving(save: Callable[..., Any]) -> Callable[..., Any]:
        stock[:] = [save]
        return _lifting(save)

    return [
        Patch(renderer, "save_static_frame_data", saving, ("self", "scene", "static_mobjects")),
        Patch(renderer, "update_frame", lambda update: _update_frame(update, stock[0]),
              ("self", "scene", "mobjects", "include_submobjects", "ignore_skipping", "**kwargs")),
    ]
