"""Numbers that travel: the viewer sees a value move from where it is made to where it is used."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from manim import AnimationGroup, FadeIn, FadeOut, FadeTransform, Mobject, VMobject

__all__ = ["animate_with", "arrive", "fly_into"]


def fly_into(target: VMobject, *sources: VMobject) -> AnimationGroup:
    """Copies of ``sources`` fly into ``target``'s place and fade out as ``target`` fades in."""
    flights = [FadeOut(source.copy(), target_position=target, scale=0.6) for source in sources]
    return AnimationGroup(AnimationGroup(*flights), FadeIn(target), lag_ratio=0.5)


def animate_with(mob: Mobject, **options: Any) -> Any:
    """``mob.animate(**options)``: an animation builder with its own rate function or run time."""
    return mob.animate(**options)  # type: ignore[operator]  # manim types .animate as a property only


def arrive(sources: Iterable[VMobject], targets: Iterable[VMobject]) -> list[FadeTransform]:
    """Each target grows out of a copy of its source (the source stays)."""
    return [FadeTransform(a.copy(), b) for a, b in zip(sources, targets, strict=True)]
