"""A sentence written one token at a time: a row of token boxes, and arrows back to what a token reads.

A decoder writes left to right, so while it writes token ``i`` the tokens after it do not exist yet,
and token ``i`` may read only tokens ``1 … i``. :class:`TokenRow` lays a sentence out in one row that
fits a width (the largest type that keeps the most of every token), each token in a box of one
height on one baseline; :meth:`TokenRow.ghost` is a token's place before it is written (a dashed
box); :func:`reading_arrows` draws, from one token, an arrow back to every token it may read, itself
included (a loop over its own box). Lecture 7 shows why the causal mask exists this way, lecture 9
writes the tokens that fill its cache.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TypeVar

import numpy as np
from manim import DOWN, LEFT, RIGHT, UP, CurvedArrow, DashedVMobject, Mobject, RoundedRectangle, VGroup

from scenes.kit.heatmap import text_height, text_width
from scenes.kit.palette import INK, KEY, MUTED
from scenes.kit.text import SMALLEST_SIZE, shorten_token, stand, token_text

M = TypeVar("M", bound=Mobject)

__all__ = ["ROW_LIMITS", "ROW_SIZES", "TokenRow", "reading_arrows", "row_fit"]

ROW_SIZES = (30, 28, 26, 24, 22, SMALLEST_SIZE)
"""Type sizes tried for a row of tokens, largest first."""
ROW_LIMITS = (10, 8, 7, 6, 5, 4, 3)
"""Characters a token keeps, most first: a smaller type is tried before a token is cut further."""
PADS = ((0.3, 0.16), (0.16, 0.08))
"""(room inside a box beside its token, gap between boxes) at a type size of 26: roomy, then tight."""


def _row_width(tokens: Sequence[str], size: float, limit: int, pad: float, gap: float) -> float:
    scale = size / 26
    boxes = sum(text_width(shorten_token(token, limit), size) + pad * scale for token in tokens)
    return boxes + gap * scale * (len(tokens) - 1)


def row_fit(tokens: Sequence[str], width: float,
            sizes: Sequence[float] = ROW_SIZES) -> tuple[float, int, float, float] | None:
    """``(size, limit, pad, gap)`` of the row that fits ``width``: the most characters of every token
    first (:data:`ROW_LIMITS`), then the largest of ``sizes``, then roomy boxes; ``None`` when even the
    tightest row does not fit."""
    for limit in ROW_LIMITS:
        for size in sizes:
            for pad, gap in PADS:
                if _row_width(tokens, size, limit, pad, gap) <= width:
                    return float(size), limit, pad, gap
    return None


class TokenRow(VGroup):
    """The tokens side by side in boxes of one height, their labels on one baseline, centred at the origin.

    Parameters
    ----------
    tokens
        The sentence's tokens, in order.
    width
        The most the row may take; see :func:`row_fit` (a row that does not fit at all is drawn at
        the tightest fit, wider than ``width``: check with :func:`row_fit` first).
    sizes
        The type sizes tried, largest first (the last at least the font floor).
    color
        The boxes' outline.

    ``boxes[j]`` is token ``j``'s box and ``labels[j]`` its text; ``tokens[j]`` the two together.
    """

    def __init__(self, tokens: Sequence[str], *, width: float, sizes: Sequence[float] = ROW_SIZES,
                 color: str = MUTED) -> None:
        super().__init__()
        size, limit, pad, gap = row_fit(tokens, width, sizes) or (float(sizes[-1]), ROW_LIMITS[-1], *PADS[-1])
        scale = size / 26
        self.size, self.limit = size, limit
        self.labels = VGroup(*(token_text(token, limit=limit, size=size, color=INK) for token in tokens))
        height = text_height(size) + 0.26 * scale
        cap = float(token_text("H", size=size).height)  # capitals centred in the box
        self.boxes = VGroup()
        x = 0.0
        for label in self.labels:
            box = RoundedRectangle(width=label.width + pad * scale, height=height, corner_radius=0.08,
                                   stroke_color=color, stroke_width=2)
            box.move_to((x + box.width / 2, 0.0, 0.0))
            stand(label.move_to(box), -cap / 2)
            self.boxes.add(box)
            x += box.width + gap * scale
        self.tokens = VGroup(*(VGroup(box, label) for box, label in zip(self.boxes, self.labels, strict=True)))
        self.add(self.tokens)
        self.shift(LEFT * self.get_x())

    def ghost(self, j: int, *, color: str = MUTED) -> DashedVMobject:
        """Token ``j``'s place before it is written: its box, dashed."""
        box = self.boxes[j]
        dashes = max(6, int(2 * (box.width + box.height) / 0.12))
        return DashedVMobject(box.copy().set_stroke(color, width=2, opacity=0.8), num_dashes=dashes)

    def under(self, j: int, mob: M, buff: float = 0.12) -> M:
        """Put ``mob`` (token ``j``'s number, say) under token ``j``'s box; returns it."""
        return mob.next_to(self.boxes[j], DOWN, buff=buff)


def reading_arrows(row: TokenRow, reader: int, *, color: str = KEY, rise: float = 0.9,
                   stroke_width: float = 3.0) -> VGroup:
    """From token ``reader``, an arrow back to each token ``0 … reader`` it may read, in that order.

    The arrows leave the top of the reader's box and land on the top of each earlier box, arcing
    over the boxes between (a farther token, a higher arc, up to ``rise`` above the row); the last
    is a loop over the reader's own box: a token reads itself too.
    """
    start = row.boxes[reader].get_top()
    top = float(start[1])
    arrows = VGroup()
    farthest = max(float(start[0] - row.boxes[0].get_top()[0]), 1e-6)
    for j in range(reader):
        end = row.boxes[j].get_top()
        chord = float(start[0] - end[0])
        # a farther token, a higher arc; never more than a half circle
        height = min(rise, 0.45 * chord, 0.3 + (rise - 0.3) * chord / farthest)
        angle = 4 * math.atan(2 * height / chord)  # an arc of this angle over the chord rises ``height``
        arrows.add(CurvedArrow(start + LEFT * 0.04, end + RIGHT * 0.04, angle=angle, color=color,
                               stroke_width=stroke_width, tip_length=0.16))
    arrows.add(_loop(row, reader, top, color, stroke_width))
    return arrows


def _loop(row: TokenRow, j: int, top: float, color: str, stroke_width: float) -> CurvedArrow:
    """An arrow from the top of box ``j`` back onto it: the token reads itself."""
    box = row.boxes[j]
    half = min(0.22, box.width / 3)
    start = np.array([box.get_x() + half, top, 0.0])
    end = np.array([box.get_x() - half, top, 0.0])
    return CurvedArrow(start + UP * 0.02, end + UP * 0.02, angle=1.6 * math.pi, color=color,
                       stroke_width=stroke_width, tip_length=0.14)
