"""A composite row: the heads' numbers side by side in one row (``concat = [z of head 1 | z of head 2 | …]``).

The row's order is part of what it says: slot ``c`` is column ``c`` of the joined row, so head ``c // d``'s
dimension ``c % d``. :func:`composite_slots` marks each slot where the layout put it (an invisible box per
slot, moving with the row) and registers the slots with the scene as the joined row's columns and the heads'
segments, so every number must stand in its own slot and its own head's segment: a row joined in another order
fails the tests, though each number in it is true.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from manim import Rectangle, VGroup, VMobject

__all__ = ["composite_slots"]


def composite_slots(scene: Any, entries: Sequence[VMobject], width: int) -> VGroup:
    """Invisible boxes where ``entries`` (laid out, slot by slot) stand, registered with ``scene`` as the columns
    of the joined row (``"concat"``) and, ``width`` slots each, the heads' (``"head"``). Add the returned group
    to the row, so the marks move with it."""
    slots = [Rectangle(width=entry.width, height=entry.height, stroke_width=0, fill_opacity=0).move_to(entry)
             for entry in entries]
    scene.columns("concat", dict(enumerate(slots)), *entries)
    heads = {h: VGroup(*slots[h * width:(h + 1) * width]) for h in range(len(slots) // width)}
    scene.columns("head", heads, *entries)
    return VGroup(*slots)
