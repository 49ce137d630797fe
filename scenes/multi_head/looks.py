"""Where a head looks most, as the multi-head lecture's captions say it (not a scene: its scenes share it)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["looks_most"]


def looks_most(scene: Any, source: str, tops: Sequence[int]) -> str:
    """The keys ``tops`` the scene's query weighs most in ``source``: "'dog' (0.30)", or a tie as shown."""
    q = scene.scenario.query
    names = [scene.quote(j, "key") for j in tops]
    weight = scene.fmt(source, "weights", q, tops[-1])  # said after the last named
    if len(names) == 1:
        return f"{names[0]} ({weight})"
    return f"{', '.join(names[:-1])} and {names[-1]} ({weight} each, as shown)"
