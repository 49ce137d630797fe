"""Manim without the accelerator for the length of a block: the accelerator's tests compare against it."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from attention_explainer import accel

__all__ = ["stock_manim"]


@contextmanager
def stock_manim() -> Iterator[None]:
    """Manim as it is inside the block; the accelerator as it was before, after it."""
    was = accel.is_enabled()
    accel.disable()
    try:
        yield
    finally:
        accel.disable()
        if was:
            assert accel.enable()
