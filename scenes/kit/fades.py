"""Fades that change opacity only.

Manim's ``FadeIn``/``FadeOut`` (without a shift) are transforms: they copy the mobject, then every frame
move every point of every glyph to where it already is and blend its colours. A table of numbers is
thousands of such points. :class:`Fade` leaves the points alone and scales each part's own opacities
(fill, stroke, background stroke) by the animation's progress: the same frames for a fraction of the work.
Use it for what fades in or out in place; a fade that also moves stays a ``FadeIn(..., shift=...)``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

import numpy as np
from manim import Animation, Group, Mobject, VMobject

__all__ = ["Fade", "Reshade", "fade_in", "fade_out", "reshade"]


class Fade(Animation):
    """``mobjects`` fading in (``out=False``) or out, in place: their opacities scaled, their points untouched.

    A fade out removes the mobjects at its end and gives them back their opacities (as ``FadeOut`` does), so a
    mobject faded out may be shown again.
    """

    def __init__(self, *mobjects: Mobject, out: bool = False, **kwargs: Any) -> None:
        group = mobjects[0] if len(mobjects) == 1 else Group(*mobjects)
        self.out = out
        self.parts = [m for m in group.get_family() if isinstance(m, VMobject) and m.has_points()]
        self.opacities = [(m.fill_rgbas.copy(), m.stroke_rgbas.copy(), m.background_stroke_rgbas.copy())
                          for m in self.parts]
        super().__init__(group, remover=out, introducer=not out, **kwargs)

    def create_starting_mobject(self) -> Mobject:
        return cast(Mobject, self.mobject)  # nothing is interpolated from a copy: the opacities are kept in __init__

    def interpolate_mobject(self, alpha: float) -> None:
        alpha = self.rate_func(alpha)  # as manim's own animations ease
        self._shade(1.0 - alpha if self.out else alpha)

    def _shade(self, level: float) -> None:
        scale = np.array([1.0, 1.0, 1.0, level])
        for part, (fill, stroke, background) in zip(self.parts, self.opacities, strict=True):
            part.fill_rgbas = fill * scale
            part.stroke_rgbas = stroke * scale
            part.background_stroke_rgbas = background * scale

    def clean_up_from_scene(self, scene: Any) -> None:
        super().clean_up_from_scene(scene)
        if self.out:
            self._shade(1.0)  # removed: its own opacities again, for a later FadeIn or add


def fade_in(*mobjects: Mobject, **kwargs: Any) -> Fade:
    """``mobjects`` appear where they are (opacity only)."""
    return Fade(*mobjects, **kwargs)


def fade_out(*mobjects: Mobject, **kwargs: Any) -> Fade:
    """``mobjects`` fade away where they are (opacity only) and leave the scene."""
    return Fade(*mobjects, out=True, **kwargs)


class Reshade(Animation):
    """The fills of ``mobject``'s parts from what they were to what ``change`` makes them (their colours and
    opacities blended, their points untouched): a heat map's cells refilled in one animation, not one each."""

    def __init__(self, mobject: Mobject, change: Callable[[], object], **kwargs: Any) -> None:
        self.parts = [m for m in mobject.get_family() if isinstance(m, VMobject) and m.has_points()]
        before = [m.fill_rgbas.copy() for m in self.parts]
        change()
        self.ends = [(start, m.fill_rgbas.copy()) for start, m in zip(before, self.parts, strict=True)]
        for part, start in zip(self.parts, before, strict=True):  # as it was until the animation plays
            part.fill_rgbas = start
        super().__init__(mobject, **kwargs)

    def create_starting_mobject(self) -> Mobject:
        return cast(Mobject, self.mobject)  # nothing is interpolated from a copy: both ends are kept in __init__

    def interpolate_mobject(self, alpha: float) -> None:
        alpha = self.rate_func(alpha)  # as manim's own animations ease
        for part, (start, end) in zip(self.parts, self.ends, strict=True):
            if start.shape == end.shape:
                part.fill_rgbas = start + (end - start) * alpha
            else:  # a part given more (or fewer) colours: it takes the new ones
                part.fill_rgbas = end if alpha > 0 else start


def reshade(mobject: Mobject, change: Callable[[], object], **kwargs: Any) -> Reshade:
    """Animate the fills ``change()`` gives ``mobject``'s parts (called now, undone until the animation plays)."""
    return Reshade(mobject, change, **kwargs)
