"""Texts standing on one line: a row's label, numbers and header on a common baseline.

A text is centred by its box, so a token with a descender ("dog") would sit higher than a number
beside it ("0.30"), and a header with one ("q5 · k") higher than one without ("softmax"). Rows and
headers stand on their baselines instead: where their glyphs without descenders stand.
"""

from __future__ import annotations

from functools import cache

from manim import UP, MathTex, VMobject

from scenes.kit.text import baseline as text_baseline
from scenes.kit.text import text

__all__ = ["baseline", "digit_height", "row_baseline", "stand"]


def baseline(mob: VMobject) -> float:
    """The y of a text's baseline: where its glyphs without descenders stand.

    Pango texts: glyphs follow the characters (spaces left out) up to the first that may join others
    ("f" ligatures) or is not ASCII (or a sign of ours). A ``MathTex``: its first glyph's bottom (our
    formulas start with a capital: "K = X W_K"). Anything else: its bottom.
    """
    if isinstance(mob, MathTex):
        glyphs = [glyph for part in mob.submobjects for glyph in part.submobjects] or [mob]
        return float(glyphs[0].get_bottom()[1])
    return text_baseline(mob, signs="−÷√Σ≈·→")


def stand(mob: VMobject, y: float) -> VMobject:
    """Move ``mob`` up or down so that its baseline is at ``y``; returns it."""
    return mob.shift(UP * (y - baseline(mob)))


@cache
def _digits26() -> float:
    return float(text("0123456789", size=26).height)


def digit_height(size: float) -> float:
    """The height of a digit at type size ``size`` (measured once, at 26: Pango's outlines scale linearly)."""
    return _digits26() * size / 26


def row_baseline(y: float, size: float) -> float:
    """The baseline of a row whose digits are centred on ``y``."""
    return y - digit_height(size) / 2
