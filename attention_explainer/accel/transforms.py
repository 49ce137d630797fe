"""Transforms: every submobject of a Transform interpolated in one batch.

Every frame of a Transform (a fade, ``.animate``, a move, an indication) interpolated each
submobject's points and seven colour fields with a dozen small numpy operations, and walked
three families to pair them. Here the pairs are taken once, on the first frame after ``begin``,
their starts and ends laid end to end in two arrays, and each frame is one
``(1 - alpha) * start + alpha * end`` of them all (the same operations on the same doubles,
element by element) into one buffer the submobjects hold views of: 240 glyphs take 0.8 ms a
frame, not 16.9. manim's loop runs wherever anything differs: a lag between submobjects, a path
other than straight, a mobject that interpolates its own way, a family changed since, the last
frame (manim copies the target's colours there).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .patching import Patch

__all__ = ["patches"]


_COLOUR_FIELDS = (
    "fill_rgbas", "stroke_rgbas", "background_stroke_rgbas", "stroke_width", "background_stroke_width",
    "sheen_direction", "sheen_factor",
)  # what VMobject.interpolate_color interpolates, in its order


class _Interpolation:
    """A Transform's (submobject, start, end) triples as two flat arrays: each frame one
    interpolation of them all, ``(1 - alpha) * start + alpha * end`` element by element (the
    operations manim's ``interpolate`` makes on each small array: the same doubles), written
    into one buffer that each submobject's points and colours are views of (made once), and
    its widths floats read from it. A submobject holds the latest frame's values, as it holds
    a new array of them with manim's own loop."""

    def __init__(self, family: list[Any], fields: list[tuple[Any, str, int, int, Any]], start: Any, end: Any) -> None:
        self.family, self.start, self.end = family, start, end
        self.now, self.part = np.empty_like(start), np.empty_like(start)
        self.arrays = [(sub, name, self.now[lo:hi].reshape(shape)) for sub, name, lo, hi, shape in fields
                       if shape is not None]
        self.floats = [(sub, name) for sub, name, _, _, shape in fields if shape is None]
        self.at = np.array([lo for _, _, lo, _, shape in fields if shape is None], dtype=np.intp)

    @classmethod
    def of(cls, animation: Any) -> _Interpolation | None:
        """The batch of ``animation``'s families, or None where manim's own loop must run."""
        from manim import Mobject, VMobject
        from manim.animation.animation import Animation
        from manim.animation.transform import Transform
        from manim.utils.bezier import interpolate

        kind = type(animation)
        if (kind.interpolate_submobject is not Transform.interpolate_submobject
                or kind.get_sub_alpha is not Animation.get_sub_alpha or animation.path_func is not interpolate):
            return None
        triples = list(animation.get_all_families_zipped())
        if not triples or (animation.lag_ratio != 0 and len(triples) > 1):
            return None
        fields, starts, ends, at = [], [], [], 0
        for sub, a, b in triples:
            for mob in (sub, a, b):
                if (not isinstance(mob, VMobject) or type(mob).interpolate is not Mobject.interpolate
                        or type(mob).interpolate_color is not VMobject.interpolate_color):
                    return None
            for name in ("points", *_COLOUR_FIELDS):
                x, y = getattr(a, name), getattr(b, name)
                if isinstance(x, np.ndarray) and isinstance(y, np.ndarray):
                    if x.dtype != np.float64 or y.dtype != np.float64 or x.shape != y.shape:
                        return None
                    shape = x.shape
                elif type(x) in (float, int, np.float64) and type(y) in (float, int, np.float64):
                    shape = None
                else:
                    return None
                size = 1 if shape is None else x.size
                fields.append((sub, name, at, at + size, shape))
                starts.append(np.ravel(x))
                ends.append(np.ravel(y))
                at += size
        family = [sub for sub, _, _ in triples]
        return cls(family, fields, np.concatenate(starts).astype(float), np.concatenate(ends).astype(float))

    def apply(self, alpha: float) -> None:
        np.multiply(1 - alpha, self.start, out=self.now)
        np.multiply(alpha, self.end, out=self.part)
        np.add(self.now, self.part, out=self.now)
        for sub, name, view in self.arrays:
            setattr(sub, name, view)  # again: something may have replaced it since
        for (sub, name), value in zip(self.floats, self.now[self.at].tolist(), strict=True):
            setattr(sub, name, value)


def _same(these: Sequence[Any], those: Sequence[Any]) -> bool:
    """The same objects, in the same order?"""
    return len(these) == len(those) and all(a is b for a, b in zip(these, those, strict=True))


def _batched_transforms(original: Callable[..., Any]) -> Callable[..., Any]:
    """``Transform.interpolate_mobject``: one interpolation of every submobject's points and
    colours (kept per animation), where manim's would loop over them with the same arithmetic;
    manim's own loop wherever anything differs from that (see :meth:`_Interpolation.of`)."""

    def interpolate_mobject(self: Any, alpha: float) -> None:
        # made on the first frame after ``begin`` (which interpolates once, and may then still
        # change its copies: FadeTransform fits them to each other); made again if begun again
        sources = tuple(self.get_all_mobjects())  # the objects, not their ids: never a reused id
        kept = self.__dict__.get("_accel_batch")
        if kept is None or not _same(kept[0], sources):
            self.__dict__["_accel_batch"] = (sources, None)
            original(self, alpha)
            return
        batch = kept[1]
        if batch is None:
            batch = _Interpolation.of(self) or False
            self.__dict__["_accel_batch"] = (sources, batch)
        if batch is False:
            original(self, alpha)
            return
        sub_alpha = self.get_sub_alpha(alpha, 0, len(batch.family))  # with no lag, every submobject's
        if sub_alpha == 1.0 or not _same(self.mobject.family_members_with_points(), batch.family):
            original(self, alpha)  # the end (manim copies the target's colours there), or a changed family
            return
        batch.apply(sub_alpha)

    return interpolate_mobject


def patches() -> list[Patch]:
    """``Transform.interpolate_mobject`` (inherited from ``Animation``: put back, it is inherited again)."""
    return [Patch("manim.animation.transform:Transform", "interpolate_mobject", _batched_transforms,
                  ("self", "alpha"))]
