"""Palette, type sizes, layout helpers and the shared mobjects of every scene.

One colour per role in every scene (Okabe–Ito, colour-blind safe), always with a label too.
Numbers and tokens are drawn with Pango ``Text``: no user text ever reaches TeX, and numbers
need no TeX compile. Formulas, fixed strings of our own, use ``MathTex``.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from typing import TypeVar

import numpy as np
from manim import (
    LEFT,
    RIGHT,
    UP,
    Mobject,
    RoundedRectangle,
    Text,
    VGroup,
    VMobject,
)

__all__ = [
    "BACKGROUND",
    "DIM",
    "FONT",
    "HIGHLIGHT",
    "INK",
    "KEY",
    "MUTED",
    "QUERY",
    "VALUE",
    "WEIGHT",
    "AttentionFormula",
    "Brackets",
    "NumberGrid",
    "TokenBox",
    "drop_svg_paths",
    "format_number",
    "shorten_token",
]

M = TypeVar("M", bound=Mobject)

# -- palette: one colour per role ---------------------------------------------------------
QUERY = "#E69F00"  # orange: queries, q_i, W_Q
KEY = "#56B4E9"  # sky blue: keys, k_j, W_K
VALUE = "#009E73"  # bluish green: values, v_j, W_V
WEIGHT = "#F0E442"  # yellow: attention weights and scores turned into weights
HIGHLIGHT = "#D55E00"  # vermillion: "look here" (a glow, a mask)
EMBEDDING = "#CC79A7"  # reddish purple: input embeddings X
CONTEXT = "#FFFFFF"  # white: the context vector z
INK = "#ECEFF4"  # ordinary text
MUTED = "#9AA3AF"  # labels and shapes of matrices
BACKGROUND = "#0F1115"
DIM = 0.3  # opacity of what is not being explained

FONT = "DejaVu Sans"
NUMBER_SIZE = 26  # reads at 480p: about 14 px tall digits
LABEL_SIZE = 24
MAX_TOKEN_CHARS = 10


def format_number(value: float, precision: int) -> str:
    """A number as shown on screen: fixed decimals, a true minus sign, no "−0.00".

    ``-inf`` (a masked score) shows as "−∞".
    """
    if value == -np.inf:
        return "−∞"
    text = f"{value:.{precision}f}"
    if text.startswith("-"):
        return text[1:] if float(text) == 0 else "−" + text[1:]
    return text


BLANK_CHARACTERS = frozenset("\u115f\u1160\u3164\uffa0\u2800\ufffc\U0001d159")
"""Printable characters that draw nothing: the Hangul fillers, the blank braille pattern, the
object replacement character, the null notehead (every printable character was rendered alone
in the fonts of ``make setup``; these, and some combining marks, came out empty)."""


def _escape(ch: str) -> str:
    """A character as Python writes it in a string literal (the space as itself)."""
    if ch == " ":
        return ch
    if not ch.isprintable():
        return repr(ch)[1:-1]
    return f"\\u{ord(ch):04x}" if ord(ch) <= 0xFFFF else f"\\U{ord(ch):08x}"


def _draws(ch: str) -> bool:
    """Does the character draw something of its own (not a space, a mark, a blank, a control)?"""
    marks = ("Mn", "Me")
    return ch.isprintable() and ch != " " and ch not in BLANK_CHARACTERS and unicodedata.category(ch) not in marks


def shorten_token(token: str, limit: int = MAX_TOKEN_CHARS) -> str:
    """A token as shown on screen: whole if short, else its start and an ellipsis.

    Control, format and separator characters (but the space) and :data:`BLANK_CHARACTERS`
    become escapes as Python writes them (``\\n``, ``\\u200b``), and so does every character of
    a token with nothing but marks (which need a letter to sit on) and spaces: a label is never
    blank. The limit counts characters (code points) of this visible form.

    >>> shorten_token("ball"), shorten_token("extraordinarily"), shorten_token("a\\tb\\u2800")
    ('ball', 'extraordi…', 'a\\\\tb\\\\u2800')
    >>> shorten_token("\\u0301"), shorten_token("e\\u0301") == "e\\u0301"
    ('\\\\u0301', True)
    """
    bare = not any(_draws(ch) for ch in token)
    visible = "".join(_escape(ch) if bare or not ch.isprintable() or ch in BLANK_CHARACTERS else ch for ch in token)
    return visible if len(visible) <= limit else visible[: limit - 1] + "…"


_LEFT_TO_RIGHT_SAFE = frozenset(("L", "EN", "ES", "ET", "CS", "WS", "ON", "B", "S"))


class _PangoText(Text):
    """manim's ``Text``, with right-to-left text kept on the canvas.

    manimpango lays each line out in a paragraph as wide as the frame, and Pango aligns a
    paragraph it takes for right to left (Hebrew, Arabic, a lone mark of an RTL script) to the
    right edge, off the SVG canvas: a token such as "שלום" came out with no glyphs at all. A
    left-to-right mark and a first-strong isolate around each such line keep it left-aligned;
    inside the isolate Pango's bidi still orders the text right to left (and an override a
    title may hold ends there). The marks go to Pango only, not to ``text``.
    """

    def _text2svg(self, color: object) -> str:
        given = self.text
        if any(unicodedata.bidirectional(ch) not in _LEFT_TO_RIGHT_SAFE for ch in given):
            self.text = "\n".join(f"\u200e\u2068{line}\u2069" for line in given.split("\n"))
        try:
            return str(super()._text2svg(color))  # type: ignore[arg-type]
        finally:
            self.text = given


_TEXTS: dict[tuple[object, ...], Text] = {}


def text(content: str, *, size: float = LABEL_SIZE, color: str = INK, **kwargs: object) -> Text:
    """Pango text in the project's font (never TeX: safe for user text).

    Made once per process for each content, size, colour and options (Pango, an SVG file and
    its parsing cost 30 times a copy); every call returns a fresh copy.
    """
    key = (content, size, color, *sorted((name, repr(value)) for name, value in kwargs.items()))
    made = _TEXTS.get(key)
    if made is None:
        made = drop_svg_paths(_PangoText(content, font=FONT, font_size=size, color=color, **kwargs))  # type: ignore[arg-type]
        _TEXTS[key] = made
    return made.copy()


def drop_svg_paths(mob: M) -> M:
    """Forget the parsed SVG path each glyph keeps after its points are made; returns ``mob``.

    Nothing reads it again, but every copy deep-copies it: a number copied without it costs a
    quarter as much, and animations copy mobjects all the time (bench/, profiled).
    """
    for part in mob.get_family():
        if getattr(part, "path_obj", None) is not None:
            part.path_obj = None
    return mob


class Brackets(VGroup):
    """Square brackets around a block, drawn as lines (no TeX)."""

    def __init__(self, block: VMobject, *, color: str = MUTED, buff: float = 0.12, serif: float = 0.12) -> None:
        top, bottom = block.get_top()[1] + buff, block.get_bottom()[1] - buff
        left, right = block.get_left()[0] - buff, block.get_right()[0] + buff

        def bracket(x: float, direction: int) -> VMobject:
            points = [
                [x + direction * serif, top, 0],
                [x, top, 0],
                [x, bottom, 0],
                [x + direction * serif, bottom, 0],
            ]
            return VMobject(stroke_color=color, stroke_width=2.5).set_points_as_corners(points)

        super().__init__(bracket(left, 1), bracket(right, -1))


class NumberGrid(VGroup):
    """A matrix of numbers in brackets, with optional row labels (tokens) and column labels.

    ``cells[i][j]`` are the number mobjects; ``row_labels`` and ``column_labels`` the labels.
    Cell widths come from the widest entry, so every scenario lays out the same way.
    """

    def __init__(
        self,
        entries: Sequence[Sequence[Text]],
        *,
        row_labels: Sequence[str] | None = None,
        column_labels: Sequence[str] | None = None,
        color: str = INK,
        label_color: str = MUTED,
        h_buff: float = 0.28,
        v_buff: float = 0.16,
        label_size: float = LABEL_SIZE,
    ) -> None:
        super().__init__()
        rows = len(entries)
        columns = len(entries[0]) if rows else 0
        cell_w = max(e.width for row in entries for e in row) + h_buff
        cell_h = max(e.height for row in entries for e in row) + v_buff
        cell_h = max(cell_h, 0.42)
        self.cells: list[list[Text]] = []
        body = VGroup()
        for i, row in enumerate(entries):
            cell_row = []
            for j, entry in enumerate(row):
                entry.set_color(color)
                entry.move_to(np.array([j * cell_w, -i * cell_h, 0.0]))
                # right-align numbers so decimal points line up
                entry.align_to(np.array([j * cell_w + cell_w / 2 - h_buff / 2, 0.0, 0.0]), RIGHT)
                cell_row.append(entry)
                body.add(entry)
            self.cells.append(cell_row)
        self.cell_width, self.cell_height = cell_w, cell_h
        self.body = body
        self.brackets = Brackets(body, color=label_color)
        self.add(body, self.brackets)
        self.row_labels = VGroup()
        if row_labels is not None:
            for i, label in enumerate(row_labels):
                mob = text(shorten_token(label), size=label_size, color=label_color)
                mob.move_to(np.array([0.0, -i * cell_h, 0.0]))
                mob.next_to(self.brackets, LEFT, buff=0.2).set_y(-i * cell_h)
                self.row_labels.add(mob)
            self.add(self.row_labels)
        self.column_labels = VGroup()
        if column_labels is not None:
            for j, label in enumerate(column_labels):
                mob = text(label, size=label_size * 0.85, color=label_color)
                mob.move_to(np.array([j * cell_w, 0.0, 0.0]))
                mob.next_to(self.brackets, UP, buff=0.12).set_x(j * cell_w)
                self.column_labels.add(mob)
            self.add(self.column_labels)
        self.shape = (rows, columns)

    def row(self, i: int) -> VGroup:
        """The numbers of row ``i``."""
        return VGroup(*self.cells[i])

    def column(self, j: int) -> VGroup:
        """The numbers of column ``j``."""
        return VGroup(*(row[j] for row in self.cells))

    def row_box(self, i: int, *, color: str = HIGHLIGHT, buff: float = 0.08) -> RoundedRectangle:
        """A rounded outline around row ``i`` (numbers only)."""
        return _outline(self.row(i), color=color, buff=buff)

    def column_box(self, j: int, *, color: str = HIGHLIGHT, buff: float = 0.08) -> RoundedRectangle:
        """A rounded outline around column ``j``."""
        return _outline(self.column(j), color=color, buff=buff)


def _outline(mob: VMobject, *, color: str, buff: float) -> RoundedRectangle:
    box = RoundedRectangle(
        width=mob.width + 2 * buff, height=mob.height + 2 * buff, corner_radius=0.08,
        stroke_color=color, stroke_width=3,
    )
    return box.move_to(mob)


class TokenBox(VGroup):
    """A token in a rounded box, as tokens appear everywhere in the lecture."""

    def __init__(self, token: str, *, color: str = MUTED, size: float = LABEL_SIZE) -> None:
        label = text(shorten_token(token), size=size)
        box = RoundedRectangle(
            width=label.width + 0.3, height=max(label.height, 0.3) + 0.24, corner_radius=0.1,
            stroke_color=color, stroke_width=2,
        )
        super().__init__(box.move_to(label), label)
        self.label, self.box = label, box


class AttentionFormula(VGroup):
    """softmax(Q Kᵀ / √d_k) V, with each part addressable so a scene can light it up.

    Parts: ``softmax``, ``query``, ``key``, ``scale``, ``close``, ``value``.
    """

    PARTS = ("softmax", "query", "key", "scale", "close", "value")

    def __init__(self, *, font_size: float = 34) -> None:
        from manim import MathTex

        tex = MathTex(
            r"\mathrm{softmax}\Big(", "Q", r"K^{\top}", r"/\sqrt{d_k}", r"\Big)", "V",
            font_size=font_size, color=INK,
        )
        super().__init__(drop_svg_paths(tex))
        self.tex = tex
        self.part = dict(zip(self.PARTS, tex, strict=True))
        self.part["query"].set_color(QUERY)
        self.part["key"].set_color(KEY)
        self.part["value"].set_color(VALUE)
