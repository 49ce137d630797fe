"""Subtitles burned into the frames (``render --captions burn``), in the quiet band at the bottom.

The scenes keep the lowest 0.8 of the frame's 8 units free of drawing (``scenes/kit/layout.py``):
a caption is drawn there, light text on a dark translucent box, one line when it fits, else two
(the font shrinks until the caption fits the band); invisible characters in tokens show as escapes
(``\\u200b``), as on screen. The runner draws it into each frame as manim
hands the frame to the encoder, so camera moves and zooms leave it in place and nothing is
encoded twice.
"""

from __future__ import annotations

import textwrap
from functools import lru_cache

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from ..escape import visible
from ..media import caption_font

__all__ = ["BAND", "burn", "caption_band"]

BAND = 0.8 / 8
"""The quiet band's share of the frame's height, at the bottom."""

_INK = (236, 239, 244)
_BOX = (15, 17, 21)
_BOX_ALPHA = 200


def _layout(text: str, width: int, band: int) -> tuple[list[str], ImageFont.FreeTypeFont | ImageFont.ImageFont]:
    """The caption's lines and font: one line if it fits at a comfortable size, else two, shrinking."""
    usable = int(width * 0.94)
    for lines_wanted, share in ((1, 0.46), (2, 0.36)):
        size = max(8, int(band * share))
        while size >= 8:
            font = caption_font(size)
            lines = [text] if lines_wanted == 1 else _two_lines(text)
            if all(font.getlength(line) <= usable for line in lines):
                return lines, font
            if lines_wanted == 1:
                break  # try two lines before shrinking one
            size -= 1
    return _two_lines(text), caption_font(8)


def _two_lines(text: str) -> list[str]:
    """The caption in two lines of about equal length (split at a space)."""
    for width in range(max(1, len(text) // 2), len(text) + 1):
        lines = textwrap.wrap(text, width=width, break_long_words=True)
        if len(lines) <= 2:
            return lines
    return [text]


@lru_cache(maxsize=64)
def caption_band(text: str, width: int, height: int) -> np.ndarray:
    """The band at the bottom of a ``width`` × ``height`` frame with ``text`` drawn in it, as RGBA.

    Transparent where nothing is drawn; the box behind the text is translucent.
    """
    band = max(1, round(height * BAND))
    lines, font = _layout(" ".join(visible(text).split()), width, band)
    image = Image.new("RGBA", (width, band), (0, 0, 0, 0))
    draw = ImageDraw.Draw(image)
    spacing = 2
    boxes = [draw.textbbox((0, 0), line, font=font) for line in lines]
    line_height = max(box[3] - box[1] for box in boxes)
    total = line_height * len(lines) + spacing * (len(lines) - 1)
    widest = max(box[2] - box[0] for box in boxes)
    pad = max(2, band // 12)
    top = (band - total) // 2
    left = (width - widest) // 2
    draw.rectangle((left - 2 * pad, top - pad, left + widest + 2 * pad, top + total + pad), fill=(*_BOX, _BOX_ALPHA))
    for n, (line, box) in enumerate(zip(lines, boxes, strict=True)):
        x = (width - (box[2] - box[0])) // 2 - box[0]
        y = top + n * (line_height + spacing) - box[1]
        draw.text((x, y), line, font=font, fill=(*_INK, 255))
    return np.asarray(image)


def burn(frame: np.ndarray, text: str) -> np.ndarray:
    """A copy of ``frame`` (H × W × 3 or 4, uint8) with ``text`` drawn in its bottom band."""
    height, width = frame.shape[:2]
    overlay = caption_band(text, width, height)
    out = np.array(frame, copy=True)
    band = out[height - overlay.shape[0] :]
    alpha = overlay[..., 3:4].astype(np.float32) / 255
    band[..., :3] = (band[..., :3] * (1 - alpha) + overlay[..., :3] * alpha).round().astype(np.uint8)
    if out.shape[2] == 4:  # transparent clips: the caption is opaque where drawn
        band[..., 3] = np.maximum(band[..., 3], overlay[..., 3])
    return out
