"""Subtitles for the web: the clips' SubRip (``.srt``) as WebVTT (``.vtt``), which ``<track>`` reads.

Cue text is text, not markup: WebVTT reads ``<`` as the start of a tag and ``&`` as the start of
an entity, so both (and ``>``) are escaped, and a token such as ``<script>`` or ``-->`` shows as
typed; invisible characters (a zero-width space, a right-to-left override) show as escapes, as
on screen (:func:`attention_explainer.escape.visible`).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path

import srt

from ..escape import visible

__all__ = ["cue_text", "shifted_subtitles", "timestamp", "to_webvtt"]


def timestamp(moment: timedelta) -> str:
    """A WebVTT timestamp, ``hh:mm:ss.ttt``.

    >>> timestamp(timedelta(seconds=3725.5))
    '01:02:05.500'
    """
    millis = round(moment.total_seconds() * 1000)
    hours, rest = divmod(millis, 3_600_000)
    minutes, rest = divmod(rest, 60_000)
    seconds, millis = divmod(rest, 1000)
    return f"{hours:02d}:{minutes:02d}:{seconds:02d}.{millis:03d}"


def cue_text(text: str) -> str:
    """A caption as WebVTT cue text that shows it literally (no blank lines: a blank line ends a cue).

    >>> cue_text("a <b> & c --> d\u200b")
    'a &lt;b&gt; &amp; c --&gt; d\\\\u200b'
    """
    escaped = visible(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return "\n".join(line for line in escaped.splitlines() if line.strip())


def to_webvtt(subrip: str) -> str:
    """SubRip text as a WebVTT file (the same cues, numbered the same).

    Parameters
    ----------
    subrip
        The text of an ``.srt`` file.

    Returns
    -------
    str
        The text of the ``.vtt`` file: ``WEBVTT``, then each cue, its text escaped (:func:`cue_text`).

    >>> print(to_webvtt("1\\n00:00:01,000 --> 00:00:02,500\\nq5 · k1 < 3\\n"))
    WEBVTT
    <BLANKLINE>
    1
    00:00:01.000 --> 00:00:02.500
    q5 · k1 &lt; 3
    <BLANKLINE>
    """
    lines = ["WEBVTT", ""]
    for cue in srt.parse(subrip):
        lines += [str(cue.index), f"{timestamp(cue.start)} --> {timestamp(cue.end)}", cue_text(cue.content), ""]
    return "\n".join(lines)


def shifted_subtitles(parts: Sequence[tuple[Path, float]]) -> list[srt.Subtitle]:
    """The subtitles of several files (a missing one has none) as one list, each file's moved later by its
    offset in seconds and all numbered anew: the clips' subtitles joined into the lecture's."""
    merged: list[srt.Subtitle] = []
    for path, offset in parts:
        if not path.exists():
            continue
        for sub in srt.parse(path.read_text(encoding="utf-8")):
            merged.append(
                srt.Subtitle(
                    index=len(merged) + 1,
                    start=sub.start + timedelta(seconds=offset),
                    end=sub.end + timedelta(seconds=offset),
                    content=sub.content,
                )
            )
    return merged
