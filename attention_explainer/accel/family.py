"""The family walk: ``Mobject.get_family`` walking the tree once.

Profiled on the default lecture (bench/), a frame's drawing and animating spends most of its
Python time in this, the Cairo paths (:mod:`.cairo_paths`) and the kind of drawing
(:mod:`.drawing`), called for every mobject of every frame. manim flattens the family level by
level, removing duplicates at each level (a set and two list reversals per mobject, for every
mobject of the tree). Here the tree is walked once and duplicates removed once, keeping each
mobject's last place as manim does: a mobject's last place in the whole list is also its last
place in its own branch, so removing them level by level or once gives the same list.
"""

from __future__ import annotations

from typing import Any

from .patching import Patch

__all__ = ["patches"]


def _fast_get_family(self: Any, recurse: bool = True) -> list[Any]:
    """:meth:`manim.Mobject.get_family`, walking the tree once."""
    family: list[Any] = []
    stack = [self]
    while stack:
        mob = stack.pop()
        family.append(mob)
        subs = mob.submobjects
        if subs:
            stack.extend(reversed(subs))
    if len(family) == len({id(mob) for mob in family}):
        return family
    kept: list[Any] = []
    seen: set[Any] = set()  # by the mobjects' own hash and equality, as manim's does
    for mob in reversed(family):
        if mob not in seen:
            seen.add(mob)
            kept.append(mob)
    kept.reverse()
    return kept


def patches() -> list[Patch]:
    """The family walked once, in place of manim's."""
    return [Patch("manim.mobject.mobject:Mobject", "get_family", lambda _: _fast_get_family, ("self", "recurse"))]
