"""The bundle's manifest: what vouches for every file of a bundle, and what the next build reads back.

A build writes it last (:func:`attention_explainer.staging.swap_in` moves it in after every other file), so a
bundle whose manifest is in place is whole; a build reads the previous one to keep every clip still made from
what it would be made from now.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .media import probe
from .outputs.handout import handout_names
from .outputs.pptx import KIND as PPTX_KIND
from .outputs.pptx import pptx_key
from .outputs.slides import deck_key
from .plan import BundlePlan, SceneSpec, json_hash
from .staging import Staging

if TYPE_CHECKING:
    from .processes import Job

__all__ = ["MANIFEST", "PAGE", "file_entries", "file_entry", "manifest_for", "read_manifest"]

MANIFEST = "manifest.json"
PAGE = "index.html"


def file_entry(staging: Staging, rel: str, kind: str, scene: str | None = None) -> dict[str, Any]:
    """One file of the manifest: path, kind, scene, size, and for videos their shape and sound."""
    path = staging.current(rel)
    entry: dict[str, Any] = {"path": rel, "kind": kind, "scene": scene}
    if kind in {"clip", "lecture"}:
        info = probe(path)
        entry.update(duration=info.duration, width=info.width, height=info.height, fps=info.fps)
        entry["audio"] = info.audio_duration is not None
    entry["bytes"] = path.stat().st_size
    return entry


def file_entries(plan: BundlePlan, staging: Staging) -> list[dict[str, Any]]:
    """The manifest's list of files (but the page and the manifest itself), in the page's order."""
    listed: list[tuple[str, str, str | None]] = []
    for spec in plan.chosen:
        listed += [(plan.clip(spec), "clip", spec.name), (f"{spec.stem}.srt", "subtitles", spec.name)]
        listed += [(f"{spec.stem}.vtt", "webvtt", spec.name), (f"stills/{spec.stem}.png", "still", spec.name)]
    listed += [(f"lecture.{plan.settings.extension}", "lecture", None), ("lecture.srt", "subtitles", None)]
    listed += [("lecture.vtt", "webvtt", None), ("narration.md", "narration", None)]
    listed.append(("stills/contact-sheet.png", "contact-sheet", None))
    listed += [(f"handout/{name}", "handout", None) for name in handout_names(plan.scenario, plan.lecture)]
    listed += [("handout/notebook.ipynb", "notebook", None), ("scenario.toml", "scenario", None)]
    listed += [(rel, kind, None) for rel, kind in staging.deck]
    listed += [(rel, kind, None) for rel, kind in staging.pptx]
    return [file_entry(staging, rel, kind, scene) for rel, kind, scene in listed]


def manifest_for(
    plan: BundlePlan,
    rendered: dict[str, Path],
    durations: dict[str, float],
    jobs: list[Job],
    files: list[dict[str, Any]],
) -> dict[str, Any]:
    """The manifest: it vouches for every file of the new bundle, and is moved into place last."""
    seconds = {job.spec.name: job.seconds for job in jobs}
    old_scenes = plan.old_scenes

    def slides(spec: SceneSpec) -> str | None:
        """The clip key the scene's slides in the work folder were made with, if they are this clip's."""
        made = plan.settings.slides if spec.name in rendered else plan.has_slides(spec)
        return plan.keys[spec.name] if made else None

    scenes = [
        {
            "number": s.number,
            "name": s.name,
            "key": plan.keys[s.name],
            "render_s": seconds[s.name] or old_scenes.get(s.name, {}).get("render_s"),
            "quality": plan.settings.quality,
            "clip": plan.clip(s),
            "duration": durations[s.name],
            "slides": slides(s),
        }
        for s in plan.chosen
    ]
    return {
        "tool": "attention-explainer",
        "scenario": {"title": plan.scenario.title, "hash": json_hash(plan.scenario.to_dict())},
        "settings": plan.settings.key(),
        "settings_hash": json_hash(plan.settings.key()),
        "code": plan.code,
        "scenes_in_lecture": [s.name for s in plan.chosen],
        "rendered": sorted(rendered),
        "deck": deck_key(plan) if any(entry["kind"] == "deck" for entry in files) else None,
        PPTX_KIND: pptx_key(plan) if any(entry["kind"] == PPTX_KIND for entry in files) else None,
        "scenes": scenes,
        "files": files,
    }


def read_manifest(out: Path) -> dict[str, Any]:
    """The previous run's manifest; anything unreadable or malformed counts as none (re-render)."""
    try:
        data = json.loads((out / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    scenes = data.get("scenes")
    scenes = scenes if isinstance(scenes, list) else []
    data["scenes"] = [entry for entry in scenes if isinstance(entry, dict) and isinstance(entry.get("name"), str)]
    return data
