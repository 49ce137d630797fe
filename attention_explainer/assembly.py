"""The bundle's files, staged (:class:`attention_explainer.staging.Staging`) from the plan and the clips.

First the media: each clip that changed with its subtitles and still, then the whole lecture and its contact
sheet; then the texts made from them: the joined subtitles (SubRip and WebVTT), the narration, the handout,
its notebook and the scenario.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import srt

from attention_math import scenario_to_toml

from .media import contact_sheet, join_videos, last_frame, probe
from .outputs.handout import handout_files
from .outputs.narration import narration_markdown
from .outputs.notebook import notebook_json
from .outputs.subtitles import shifted_subtitles, to_webvtt
from .plan import BundlePlan
from .staging import Staging
from .still_hooks import still_path

__all__ = ["stage_files", "stage_texts"]


def stage_files(plan: BundlePlan, staging: Staging, rendered: dict[str, Path]) -> dict[str, float]:
    """Stage the clips that changed with their subtitles and stills, and the lecture and its contact sheet
    where they changed; return each clip's duration."""
    out, chosen = plan.out, plan.chosen
    for spec in chosen:
        if spec.name in rendered:
            clip = rendered[spec.name]
            shutil.copyfile(clip, staging.stage(plan.clip(spec)))
            subtitles, target = clip.with_suffix(".srt"), staging.stage(f"{spec.stem}.srt")
            if subtitles.exists():
                shutil.copyfile(subtitles, target)
            else:
                target.write_text("", encoding="utf-8")
    durations = {}
    for spec in chosen:
        durations[spec.name] = probe(staging.current(plan.clip(spec))).duration
        still = f"stills/{spec.stem}.png"
        if spec.name in rendered and still_path(rendered[spec.name]).is_file():
            shutil.copyfile(still_path(rendered[spec.name]), staging.stage(still))
        elif spec.name in rendered or not (out / still).exists():
            last_frame(staging.current(plan.clip(spec)), staging.stage(still))
    lecture = f"lecture.{plan.settings.extension}"
    if rendered or not (out / lecture).exists() or plan.old.get("scenes_in_lecture") != [s.name for s in chosen]:
        join_videos([staging.current(plan.clip(s)) for s in chosen], staging.stage(lecture))
        stills = [(f"{s.number}. {s.name}", staging.current(f"stills/{s.stem}.png")) for s in chosen]
        contact_sheet(stills, staging.stage("stills/contact-sheet.png"))
    return durations


def stage_texts(plan: BundlePlan, staging: Staging, durations: dict[str, float]) -> None:
    """The subtitles (SubRip and WebVTT), the narration, the handout and its notebook, the scenario."""
    offsets, total = {}, 0.0
    for spec in plan.chosen:
        offsets[spec.name] = total
        total += durations[spec.name]
    parts = [(staging.current(f"{s.stem}.srt"), offsets[s.name]) for s in plan.chosen]
    lecture_srt = srt.compose(shifted_subtitles(parts))
    staging.stage("lecture.srt").write_text(lecture_srt, encoding="utf-8")
    staging.stage("lecture.vtt").write_text(to_webvtt(lecture_srt), encoding="utf-8")
    for spec in plan.chosen:
        clip_srt = staging.current(f"{spec.stem}.srt").read_text(encoding="utf-8")
        staging.stage(f"{spec.stem}.vtt").write_text(to_webvtt(clip_srt), encoding="utf-8")
    scenes = [(s, staging.current(f"{s.stem}.srt"), offsets[s.name]) for s in plan.chosen]
    staging.stage("narration.md").write_text(narration_markdown(plan.scenario, scenes), encoding="utf-8")
    for name, content in handout_files(plan.scenario, plan.lecture).items():
        staging.stage(f"handout/{name}").write_text(content, encoding="utf-8")
    notebook = notebook_json(plan.scenario, plan.lecture)
    staging.stage("handout/notebook.ipynb").write_text(notebook, encoding="utf-8")
    staging.stage("scenario.toml").write_text(scenario_to_toml(plan.scenario), encoding="utf-8")
