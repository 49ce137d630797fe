"""Pango text in the project's font: labels, numbers and tokens, never through TeX.

User text (tokens, titles) is drawn with Pango ``Text`` only, so it never reaches TeX, and
numbers need no TeX compile. Tokens are shown as typed, shortened with an ellipsis, with
invisible characters as escapes and right-to-left scripts kept on Pango's canvas.
"""

from __future__ import annotations

import os
import unicodedata
from collections.abc import Sequence
from pathlib import Path
from typing import TypeVar

import numpy as np
from manim import UP, Mobject, Text, VGroup, VMobject

from scenes.kit.palette import INK, MUTED

__all__ = [
    "BLANK_CHARACTERS",
    "FONT",
    "LABEL_SIZE",
    "MAX_TOKEN_CHARS",
    "NUMBER_SIZE",
    "SMALLEST_SIZE",
    "TokenBox",
    "baseline",
    "drop_svg_paths",
    "share_made_texts",
    "shorten_token",
    "stand",
    "text",
    "token_labels",
    "token_text",
]

M = TypeVar("M", bound=Mobject)

FONT = "DejaVu Sans"
NUMBER_SIZE = 26  # reads at 480p: about 14 px tall digits
LABEL_SIZE = 24
SMALLEST_SIZE = 20  # the font floor: 20 still reads at 480p (digits about 11 px tall)
MAX_TOKEN_CHARS = 10

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
_MADE_AT = 26  # every text is made once at this size; Pango's outlines scale linearly (within 0.001 units)
_SHARED: list[tuple[Path, str]] = []  # the folder texts are shared in, and what else names them


def share_made_texts(folder: Path | None) -> None:
    """Share the texts this process makes with other processes, through ``folder``.

    The bundle's manim processes (one per scene, :mod:`attention_explainer.runner`) make many of
    the same texts: the numbers of the scenario, the tokens, the labels. Once this is called,
    a text not yet made here is read from ``folder`` when another process made it (a pickle of
    the made text, named by a hash of what it depends on: the content and options, the font, the
    size it is made at, this module's code and manim's version), else made and written there
    (whole, then renamed: a reader never finds half a file). Only the bundle's own processes
    write the folder; a file that does not load is made again. ``None`` stops sharing.
    """
    import hashlib

    import manim

    code = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()
    _SHARED[:] = [] if folder is None else [(folder, repr((FONT, _MADE_AT, code, manim.__version__)))]


def _shared_file(key: tuple[object, ...]) -> Path | None:
    if not _SHARED:
        return None
    import hashlib

    folder, salt = _SHARED[0]
    return folder / f"{hashlib.sha256(repr((key, salt)).encode()).hexdigest()[:32]}.pickle"


def _made(key: tuple[object, ...], content: str, color: str, kwargs: dict[str, object]) -> Text:
    """The text for ``key``: from the shared folder if another process made it, else made now."""
    import pickle

    shared = _shared_file(key)
    if shared is not None and shared.is_file():
        try:
            made = pickle.loads(shared.read_bytes())
            if isinstance(made, _PangoText):
                return made
        except Exception:  # a file that does not load is made again
            pass
    made = drop_svg_paths(_PangoText(content, font=FONT, font_size=_MADE_AT, color=color, **kwargs))  # type: ignore[arg-type]
    if shared is not None:
        shared.parent.mkdir(parents=True, exist_ok=True)
        partial = shared.with_name(f"{shared.stem}.{os.getpid()}.partial")
        partial.write_bytes(pickle.dumps(made, protocol=pickle.HIGHEST_PROTOCOL))
        os.replace(partial, shared)
    return made


def text(content: str, *, size: float = LABEL_SIZE, color: str = INK, **kwargs: object) -> Text:
    """Pango text in the project's font (never TeX: safe for user text).

    Made once per process for each content (and options; colour too when they colour parts of
    it) at one size, then copied, scaled and coloured: Pango, an SVG file and its parsing cost
    30 times a copy, and a scene measures many a text at one size before drawing it at another.
    The bundle's processes share what they made (:func:`share_made_texts`).
    """
    plain = not kwargs
    key = (content, None if plain else color, *sorted((name, repr(value)) for name, value in kwargs.items()))
    made = _TEXTS.get(key)
    if made is None:
        made = _TEXTS[key] = _made(key, content, color, kwargs)
    copy: Text = made.copy()
    if size != _MADE_AT:
        copy.scale(size / _MADE_AT)
    if plain:
        copy.set_color(color)
    return copy


def token_text(token: str, *, limit: int = MAX_TOKEN_CHARS, size: float = LABEL_SIZE, color: str = MUTED) -> Text:
    """A token as a label: shortened to ``limit`` characters, marked as the token it shows.

    The mark (``source_token``) lets the number checks tell a token that holds digits ("2024")
    from a number drawn without being recorded.
    """
    label = text(shorten_token(token, limit), size=size, color=color)
    label.source_token = token  # type: ignore[attr-defined]
    return label


def token_labels(tokens: Sequence[str], width: float, *, size: float = 26, color: str = MUTED) -> VGroup:
    """One label per token, all in one type size, each no wider than ``width``.

    The largest size from ``size`` down to :data:`SMALLEST_SIZE` at which every token fits;
    at the smallest size, long tokens are shortened further.
    """
    sizes = [s for s in (size, 22, SMALLEST_SIZE) if s <= size]
    for font_size in sizes:
        labels = VGroup(*(token_text(token, size=font_size, color=color) for token in tokens))
        if max(label.width for label in labels) <= width:
            return labels
    for k, token in enumerate(tokens):
        for limit in range(MAX_TOKEN_CHARS - 1, 2, -1):
            if labels[k].width <= width:
                break
            labels[k] = token_text(token, limit=limit, size=sizes[-1], color=color)
    return labels


def drop_svg_paths(mob: M) -> M:
    """Forget what parsing the SVG left behind once the points are made; returns ``mob``.

    Each glyph keeps its parsed SVG path, and each Pango ``Text`` an index of the SVG's groups
    and a second group of its characters: nothing reads them after construction, but every
    copy deep-copies them. A number copied without them costs a fifth as much (the groups alone
    were three quarters of a copy), and animations copy mobjects all the time (bench/,
    profiled). A ``MathTex`` keeps its index: its parts are found by it.
    """
    for part in mob.get_family():
        if getattr(part, "path_obj", None) is not None:
            setattr(part, "path_obj", None)  # noqa: B010  (an attribute of SVG glyphs only)
        if isinstance(part, Text):
            part.id_to_vgroup_dict = {}
            part.chars = VGroup()
    return mob


_ON_BASELINE = frozenset("abcdehiklmnorstuvwxzABCDEFGHIJKLMNOPRSTUVWXYZ0123456789Σ")


def baseline(mob: VMobject, signs: str = "−÷√Σ≈·") -> float:
    """The y of a Pango text's baseline: where its glyphs without descenders stand.

    A text is centred by its box, so "canyons" (a descender) would sit higher than "0.33" beside
    it; rows and headers stand on their baselines instead. Glyphs follow the characters (spaces
    left out) up to the first that may join others ("f" ligatures) or is neither ASCII nor one of
    ``signs``.
    """
    chars = [ch for ch in getattr(mob, "text", "") if not ch.isspace()]
    bottoms = []
    for ch, glyph in zip(chars, mob.submobjects, strict=False):
        if ch == "f" or not (ch.isascii() or ch in signs):
            break
        if ch in _ON_BASELINE:
            bottoms.append(float(glyph.get_bottom()[1]))
    return float(np.median(bottoms)) if bottoms else float(mob.get_bottom()[1])


def stand(mob: VMobject, y: float) -> VMobject:
    """Move ``mob`` up or down so that its baseline is at ``y``; returns it."""
    return mob.shift(UP * (y - baseline(mob)))


class TokenBox(VGroup):
    """A token in a rounded box, as tokens appear everywhere in the lecture."""

    def __init__(self, token: str, *, color: str = MUTED, size: float = LABEL_SIZE) -> None:
        from manim import RoundedRectangle

        label = token_text(token, size=size, color=INK)
        box = RoundedRectangle(
            width=label.width + 0.3, height=max(label.height, 0.3) + 0.24, corner_radius=0.1,
            stroke_color=color, stroke_width=2,
        )
        super().__init__(box.move_to(label), label)
        self.label, self.box = label, box
