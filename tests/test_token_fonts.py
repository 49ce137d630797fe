"""Tokens in any script are drawn: CJK, emoji, Hebrew and Arabic glyphs, not boxes, in reading order.

The scenes draw text in DejaVu Sans; fontconfig falls back to Noto (CJK and the other scripts) and
Symbola (outline emoji) from ``make setup`` for what DejaVu lacks. Pango draws a character that no
font has as a box with its code in hex digits (several outlines for one character), so a glyph
count per character tells a real glyph from a box without rendering a frame.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator

import numpy as np
import pytest
from manim import Text, tempconfig
from scene_helpers import text_of

from scenes.kit.text import shorten_token, text

SCRIPTS = {
    "cjk": "猫",
    "cjk-word": "中文字符",
    "hangul": "한국어",
    "emoji": "😀",
    "emoji-pair": "🎉🐍",
    "hebrew": "שלום",
    "arabic": "مرحبا",
}


@pytest.fixture(scope="module", autouse=True)
def media_dir() -> Iterator[None]:
    with tempfile.TemporaryDirectory(prefix="attention-fonts-") as folder, tempconfig({"media_dir": folder}):
        yield


def glyphs(mob: Text) -> list[np.ndarray]:
    """The outline points of each glyph, left to right as drawn."""
    parts = [np.asarray(part.points) for part in mob.submobjects if len(part.points)]
    return sorted(parts, key=lambda points: float(points[:, 0].mean()))


def same_glyph(a: np.ndarray, b: np.ndarray) -> bool:
    """The same outline, wherever it stands."""
    return a.shape == b.shape and np.allclose(a - a.min(axis=0), b - b.min(axis=0), atol=1e-3)


@pytest.mark.parametrize("token", list(SCRIPTS.values()), ids=list(SCRIPTS))
def test_token_is_drawn_in_glyphs_not_boxes(token: str) -> None:
    label = text(shorten_token(token))
    assert text_of(label) == token
    drawn = glyphs(label)
    # one outline per character at most (Arabic joins letters); a box would add its hex digits
    assert 1 <= len(drawn) <= len(token), f"{token!r}: {len(drawn)} outlines for {len(token)} characters"
    assert len(label.submobjects) == len(drawn), "a glyph without outline"
    assert label.width > 0.1 and label.height > 0.1


def test_a_missing_glyph_would_show_as_a_box_with_hex_digits() -> None:
    """What the test above tells apart: U+10FFFD (private use) is in no font."""
    box = text("\U0010fffd")
    assert len(glyphs(box)) > 1


def test_hebrew_reads_right_to_left_and_its_ellipsis_ends_on_the_left() -> None:
    first, ellipsis = glyphs(text("ש"))[0], glyphs(text("…"))
    word = glyphs(text("שלום"))
    assert same_glyph(word[-1], first), "ש, the first letter, is not the rightmost glyph"
    assert not same_glyph(word[0], first)
    long_token = "שלוםשלוםשלום"
    shown = shorten_token(long_token)
    assert shown == "שלוםשלוםש…"
    drawn = glyphs(text(shown))
    assert same_glyph(drawn[-1], first), "the shortened token does not start on the right"
    assert len(ellipsis) == 1
    assert same_glyph(drawn[0], ellipsis[0]), "the ellipsis, the end of a right-to-left token, is not on the left"


def test_left_to_right_text_draws_as_before() -> None:
    """The bidi marks go only around text with right-to-left characters: numbers and Latin are untouched."""
    for content in ("0.25", "−0.19", "The dog", "q5 · k1 ="):
        ours, plain = text(content), Text(content, font="DejaVu Sans", font_size=24)
        assert len(ours.submobjects) == len(plain.submobjects)
        for a, b in zip(ours.submobjects, plain.submobjects, strict=True):
            # text() makes each text at one size and scales it: the same outlines to a third of a pixel at 1080p
            assert np.allclose(a.points, b.points, atol=2.5e-3)


def test_a_right_to_left_token_inside_left_to_right_text_keeps_its_place() -> None:
    """A label such as "q3 (שלום)" starts with q3 on the left, the word in its own order after it."""
    label = glyphs(text("q3 (שלום)"))
    assert same_glyph(label[0], glyphs(text("q"))[0])
    assert same_glyph(label[-2], glyphs(text("ש"))[0])  # then ")" on the far right
