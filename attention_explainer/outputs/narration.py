"""The narration: every caption of the lecture under its scene, with its time in the whole lecture video
(``narration.md``), for a lecturer who reads along or speaks over the video.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import srt

from attention_math import Scenario

from ..plan import SceneSpec

__all__ = ["narration_markdown"]


def _timestamp(seconds: float) -> str:
    minutes, rest = divmod(seconds, 60)
    return f"{int(minutes):02d}:{rest:04.1f}"


def narration_markdown(scenario: Scenario, scenes: Sequence[tuple[SceneSpec, Path, float]]) -> str:
    """The narration in Markdown: each scene (its subtitles' file, its start in the lecture) a section of
    captions, each stamped with its time in the lecture."""
    lines = [f"# Narration: {scenario.title}", "", "Timestamps are in the full lecture video.", ""]
    for spec, srt_path, offset in scenes:
        lines.append(f"## {spec.number}. {spec.name} (starts at {_timestamp(offset)})")
        lines.append("")
        if srt_path.exists():
            for sub in srt.parse(srt_path.read_text(encoding="utf-8")):
                start = offset + sub.start.total_seconds()
                lines.append(f"- [{_timestamp(start)}] {sub.content}")
        lines.append("")
    return "\n".join(lines)
