"""User text (tokens, titles, the captions that quote them) as data wherever the bundle writes it.

Each place gets the text in the form that shows it literally and runs nothing there:

* HTML (the lecture page, the deck's title): :func:`html.escape`, quotes included.
* Markdown that is rendered to HTML (the deck's speaker notes, the notebook's text cells):
  :func:`markdown_literal`, every ASCII punctuation character backslash-escaped, so no
  character starts markup, a tag, an entity or a link, and then HTML-escaped where the
  Markdown itself sits inside an HTML document (:func:`speaker_notes`).
* Python source (the notebook): :func:`repr` literals only (see :mod:`attention_explainer.outputs.notebook`).
* The voice: plain text (:func:`attention_explainer.voice.spoken`).
"""

from __future__ import annotations

import html
import string
import unicodedata

__all__ = ["markdown_literal", "speaker_notes", "visible"]

_PUNCTUATION = frozenset(string.punctuation)


def visible(text: str) -> str:
    r"""``text`` with its invisible characters (format and control characters) written as escapes.

    Zero-width and direction characters change how the rest of a line looks without showing
    themselves; written as ``\u200b`` they show what is there and leave the line alone.

    >>> visible("a\u200bb \u202eevil")
    'a\\u200bb \\u202eevil'
    """
    shown = []
    for ch in text:
        if unicodedata.category(ch) in {"Cc", "Cf"} and ch not in "\t\n":
            shown.append(f"\\u{ord(ch):04x}" if ord(ch) <= 0xFFFF else f"\\U{ord(ch):08x}")
        else:
            shown.append(ch)
    return "".join(shown)


def markdown_literal(text: str) -> str:
    r"""``text`` as Markdown that renders to exactly ``text``: every ASCII punctuation escaped.

    >>> markdown_literal("<b>*x*</b> & [y](z)")
    '\\<b\\>\\*x\\*\\<\\/b\\> \\& \\[y\\]\\(z\\)'
    """
    return "".join(f"\\{ch}" if ch in _PUNCTUATION else ch for ch in visible(" ".join(text.split())))


def speaker_notes(caption: str) -> str:
    """A caption as the deck's speaker notes: Markdown (which reveal.js renders) inside HTML.

    The deck's template puts notes into its HTML as they are, and reveal.js renders their text
    as Markdown: HTML-escaped, the browser reads back the Markdown, which shows the caption.

    >>> speaker_notes('<script>alert("x")</script>')
    '\\\\&lt;script\\\\&gt;alert\\\\(\\\\&quot;x\\\\&quot;\\\\)\\\\&lt;\\\\/script\\\\&gt;'
    """
    return html.escape(markdown_literal(caption), quote=True)
