"""The bundle's PowerPoint deck, ``lecture.pptx``: the lecture for the lecture hall's own computer.

``render --pptx`` writes it with python-pptx from the bundle's own files: a title slide (the
scenario's title, the formula softmax(Q Kᵀ / √d_k) V, the tokens and the query), then one slide per
scene, its clip embedded (the very bytes of the bundle's clip) under a small title and sized to the
slide, with the scene's still as the poster frame (what shows before it plays, in print and in the
slide sorter) and the scene's captions, one paragraph each, as the slide's speaker notes; last, the
contact sheet. Every video and picture is inside the file: nothing is linked from outside it.

Slides are 16:9 (PowerPoint's widescreen, 13.333 × 7.5 in) on the scenes' dark background; each clip
is set to start when its slide opens, as manim-slides' PowerPoint converter sets it. Only H.264 mp4
is embedded (``--format mp4`` without ``--transparent``; the command refuses ``--pptx`` otherwise):
what PowerPoint, Keynote and LibreOffice all play.

User text (the title, the tokens, the captions that quote them) is text: python-pptx writes it as
XML text, escaped, and nothing in a slide reads it as markup; invisible characters show as escapes
(``\\u200b``), as on screen and on the page (:func:`attention_explainer.escape.visible`).

The deck is made again when a clip was rendered, the scenes or the title slide changed, or it is
missing; a render without ``--pptx`` keeps a deck of the same clips (and title slide) and removes
one of other clips, as it does the HTML deck, so the bundle never holds a deck that shows
something else than its clips.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

import srt
from pptx import Presentation
from pptx.dml.color import RGBColor
from pptx.enum.text import PP_ALIGN
from pptx.util import Emu, Inches, Pt

from scenes.kit.palette import BACKGROUND, INK, KEY, MUTED, QUERY, VALUE

from ..escape import visible
from ..media import probe
from ..plan import json_hash
from .page import scene_words

if TYPE_CHECKING:
    from pptx.presentation import Presentation as PresentationType
    from pptx.shapes.base import BaseShape
    from pptx.slide import Slide
    from pptx.text.text import TextFrame

    from attention_math import Scenario

    from ..plan import BundlePlan, SceneSpec
    from ..staging import Staging

__all__ = [
    "FORMULA",
    "KIND",
    "PPTX",
    "SLIDE_HEIGHT",
    "SLIDE_WIDTH",
    "pptx_key",
    "pptx_text",
    "stage_pptx",
    "write_pptx",
]

PPTX = "lecture.pptx"
KIND = "pptx"
"""The deck's kind in the manifest."""
FORMULA = "softmax(Q Kᵀ / √d_k) V"
SLIDE_WIDTH, SLIDE_HEIGHT = Inches(40 / 3), Inches(7.5)
"""PowerPoint's widescreen slide, 16:9."""
LAYOUT = 1
"""The deck's layout version: a change of the slides' make-up makes every deck again."""
_TITLE_BAND = Inches(0.75)  # the scene slides' small title above the clip
_MARGIN = Inches(0.25)
_TITLE_SLIDE, _TITLE_ONLY = 0, 5  # python-pptx's default template's layouts
_FORMULA_RUNS = (("softmax(", INK), ("Q", QUERY), (" K", KEY), ("ᵀ / √d_k) ", INK), ("V", VALUE))


def _colour(hex_colour: str) -> RGBColor:
    red, green, blue = bytes.fromhex(hex_colour.lstrip("#"))
    return RGBColor(red, green, blue)  # type: ignore[no-untyped-call]  # python-pptx leaves it unannotated


def pptx_text(text: str) -> str:
    r"""User text as a slide shows it: invisible characters as escapes, and what XML cannot hold too.

    XML 1.0 has no place for control characters, lone surrogates or U+FFFE and U+FFFF; python-pptx
    would refuse them. Tabs and line feeds stay.

    >>> pptx_text('<b>"x"</b>\u200b\ufffe{{ y }}')
    '<b>"x"</b>\\u200b\\ufffe{{ y }}'
    """

    def allowed(ch: str) -> bool:
        code = ord(ch)
        return ch in "\t\n" or 0x20 <= code <= 0xD7FF or 0xE000 <= code <= 0xFFFD or code >= 0x10000

    return "".join(ch if allowed(ch) else f"\\u{ord(ch):04x}" for ch in visible(text))


def _line(text: str) -> str:
    """User text on one line of a slide (a title with line breaks, a token with a tab)."""
    return " ".join(pptx_text(text).split())


def pptx_key(plan: BundlePlan) -> str:
    """What the deck is made of: every clip (its key), in order, what the title slide shows, the layout."""
    scenario = plan.scenario
    return json_hash(
        {
            "clips": [plan.keys[spec.name] for spec in plan.chosen],
            "title": scenario.title,
            "tokens": list(scenario.tokens),
            "query": scenario.query,
            "layout": LAYOUT,
        }
    )


def stage_pptx(plan: BundlePlan, staging: Staging, rendered: dict[str, Path]) -> None:
    """Stage the deck, or keep or remove the previous one; it goes to ``staging.pptx``.

    Parameters
    ----------
    plan
        The build: with ``settings.pptx`` a deck is made from the bundle's new clips, stills and subtitles.
    staging
        Where the new files are written (the clips, stills, subtitles and contact sheet are staged
        already); the deck, and its kind, are listed in ``pptx``.
    rendered
        The clips this build rendered (a deck of other clips is made again).
    """
    out = plan.out
    same = plan.old.get(KIND) == pptx_key(plan) and (out / PPTX).is_file()
    if same and not (plan.settings.pptx and rendered):
        staging.pptx = [(PPTX, KIND)]
        return
    if not plan.settings.pptx:
        if (out / PPTX).exists():
            staging.remove(PPTX)
        return
    write_pptx(plan, staging, staging.stage(PPTX))
    staging.pptx = [(PPTX, KIND)]


def write_pptx(plan: BundlePlan, staging: Staging, target: Path) -> None:
    """Write the deck of the bundle being staged to ``target``."""
    deck = Presentation()
    deck.slide_width, deck.slide_height = SLIDE_WIDTH, SLIDE_HEIGHT
    deck.slide_master.background.fill.solid()
    deck.slide_master.background.fill.fore_color.rgb = _colour(BACKGROUND)
    properties = deck.core_properties  # python-pptx's template names its own author and date (2013)
    properties.title, properties.subject = _line(plan.scenario.title), FORMULA
    properties.author = properties.last_modified_by = "attention-explainer"
    now = datetime.now(UTC).replace(tzinfo=None, microsecond=0)  # naive UTC, as python-pptx writes it
    properties.created = properties.modified = now
    _title_slide(deck, plan.scenario)
    for spec in plan.chosen:
        clip, still = staging.current(plan.clip(spec)), staging.current(f"stills/{spec.stem}.png")
        subtitles = srt.parse(staging.current(f"{spec.stem}.srt").read_text(encoding="utf-8"))
        _scene_slide(deck, spec, clip, still, [cue.content for cue in subtitles])
    sheet = staging.current("stills/contact-sheet.png")
    _picture_slide(deck, "Every scene's last frame", sheet, "contact sheet")
    deck.save(str(target))


def _write(frame: TextFrame, lines: list[list[tuple[str, str]]], size: float, align: PP_ALIGN) -> None:
    """Fill ``frame`` with paragraphs, each a list of (text, colour) runs."""
    frame.text = "\n" * (len(lines) - 1)  # one empty paragraph a line
    frame.word_wrap = True
    for n, (runs, paragraph) in enumerate(zip(lines, frame.paragraphs, strict=True)):
        paragraph.alignment = align
        for text, colour in runs:
            run = paragraph.add_run()
            run.text = text
            run.font.size = Pt(size if n == 0 else size * 0.55)
            run.font.color.rgb = _colour(colour)


def _title_slide(deck: PresentationType, scenario: Scenario) -> None:
    """The scenario's title; the formula, the tokens and the query under it."""
    slide = deck.slides.add_slide(deck.slide_layouts[_TITLE_SLIDE])
    title, subtitle = slide.placeholders[0], slide.placeholders[1]
    width = SLIDE_WIDTH - 2 * Inches(0.6)
    title.left, title.top, title.width, title.height = Inches(0.6), Inches(1.2), width, Inches(2.6)
    subtitle.left, subtitle.top, subtitle.width, subtitle.height = Inches(0.6), Inches(4.0), width, Inches(2.8)
    text = _line(scenario.title)
    size = 40 if len(text) <= 40 else 32 if len(text) <= 90 else 24
    _write(title.text_frame, [[(text, INK)]], size, PP_ALIGN.CENTER)
    tokens = " · ".join(_line(token) for token in scenario.tokens)
    query = f"query: token {scenario.query + 1}, {_line(scenario.query_token)}"
    lines = [list(_FORMULA_RUNS), [(f"{scenario.n_tokens} tokens: {tokens}", MUTED)], [(query, MUTED)]]
    _write(subtitle.text_frame, lines, 36, PP_ALIGN.CENTER)


def _heading(deck: PresentationType, text: str) -> Slide:
    """A slide with a small title at the top; the rest of it is free."""
    slide: Slide = deck.slides.add_slide(deck.slide_layouts[_TITLE_ONLY])
    title = slide.placeholders[0]
    title.left, title.top, title.width, title.height = _MARGIN, Emu(0), SLIDE_WIDTH - 2 * _MARGIN, _TITLE_BAND
    _write(title.text_frame, [[(text, INK)]], 24, PP_ALIGN.LEFT)
    return slide


def _fitted(width: int, height: int) -> tuple[Emu, Emu, Emu, Emu]:
    """Left, top, width and height of a ``width`` × ``height`` picture as large as fits under the
    title band, centred."""
    box_width, box_height = SLIDE_WIDTH - 2 * _MARGIN, SLIDE_HEIGHT - _TITLE_BAND
    scale = min(box_width / width, box_height / height)
    shown_width, shown_height = round(width * scale), round(height * scale)
    left = (SLIDE_WIDTH - shown_width) // 2
    top = _TITLE_BAND + (box_height - shown_height) // 2
    return Emu(left), Emu(top), Emu(shown_width), Emu(shown_height)


def _scene_slide(deck: PresentationType, spec: SceneSpec, clip: Path, still: Path, captions: list[str]) -> None:
    """The scene's clip with its still as the poster frame; its captions as speaker notes."""
    slide = _heading(deck, f"{spec.number}. {scene_words(spec.name)}")
    info = probe(clip)
    movie = slide.shapes.add_movie(
        str(clip), *_fitted(info.width, info.height), poster_frame_image=str(still), mime_type="video/mp4"
    )
    _describe(movie, f"{spec.stem} clip", f"the clip of scene {spec.number}, {scene_words(spec.name)}")
    # python-pptx starts a movie on a click on it; this starts it as the slide opens
    for condition in slide.element.xpath(f"./p:timing//p:video[.//p:spTgt/@spid='{movie.shape_id}']//p:cond"):
        condition.set("delay", "0")
    notes = [_line(caption) for caption in captions]
    frame = slide.notes_slide.notes_text_frame
    assert frame is not None  # python-pptx's notes master has the notes placeholder
    frame.text = "\n".join(notes)  # a paragraph a caption


def _picture_slide(deck: PresentationType, heading: str, picture: Path, name: str) -> None:
    """``picture`` as large as fits under a small title."""
    from PIL import Image

    slide = _heading(deck, heading)
    with Image.open(picture) as image:
        size = image.size
    _describe(slide.shapes.add_picture(str(picture), *_fitted(*size)), name, heading)


def _describe(shape: BaseShape, name: str, description: str) -> None:
    """Name a shape (the selection pane shows it) and give it alternative text (screen readers read it)."""
    shape.name = name
    shape.element.xpath("./*[1]/p:cNvPr")[0].set("descr", description)
