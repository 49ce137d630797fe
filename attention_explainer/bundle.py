"""From a scenario to a lecture-ready bundle: clips, full video, subtitles, stills, handout.

A build goes through its rooms once, in order:

1. plan (:func:`plan_bundle`): the previous manifest (:mod:`~attention_explainer.manifest`) and every
   clip's key (:func:`attention_explainer.plan.scene_key`);
2. render what changed (:mod:`~attention_explainer.render_jobs`, each render a manim process of
   :mod:`~attention_explainer.processes`), or take renders made elsewhere (:mod:`~attention_explainer.products`);
3. stage the new files (:mod:`~attention_explainer.staging`): clips, stills and the lecture, then the
   texts (:mod:`~attention_explainer.assembly`), the decks and the page (:mod:`~attention_explainer.outputs`);
4. write the manifest, which vouches for every file, and swap the staged files in, the manifest last.

Every file is written under a temporary name and renamed into place, so an interrupted run
never leaves a truncated file under a final name, and the previous bundle stays whole until
each of its files is replaced. The folder itself (made, locked, left by older versions) is
:mod:`~attention_explainer.out_dir`'s.

The bundle's folder holds what its manifest lists and nothing else: manim's media, the slides,
the caches, the staged files and the lock are in its work folder beside it,
``<parent>/.cache/<name>/`` (:func:`attention_explainer.plan.work_folder`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from attention_math import Scenario

from .assembly import stage_files, stage_texts
from .fingerprint import code_version
from .hooks import hold
from .manifest import MANIFEST, PAGE, file_entries, file_entry, manifest_for, read_manifest
from .out_dir import bundle_lock, forget_old_work, prepare_out_dir
from .outputs.page import lecture_page
from .outputs.pptx import stage_pptx
from .outputs.slides import reveal_package, stage_deck
from .plan import BundlePlan, BundleSettings, SceneSpec, scene_key, work_folder
from .processes import Job, ProgressCallback, hold_requested
from .products import RenderedScenes, rendered_elsewhere
from .render_jobs import render_changed
from .selection import lecture_specs
from .staging import Staging, swap_in

__all__ = ["build_bundle", "bundle_is_current", "plan_bundle"]


def build_bundle(
    scenario: Scenario,
    out: Path,
    settings: BundleSettings,
    scenes: Sequence[SceneSpec] | None = None,
    progress: ProgressCallback | None = None,
    then: Callable[[Path], None] | None = None,
    renders: RenderedScenes | None = None,
) -> dict[str, Any]:
    """Render what changed and (re)assemble the bundle in ``out``; return the manifest.

    ``then(out)`` runs after the bundle is in place, still holding the folder's lock (the slide
    deck is made there, so a second render cannot start in between). ``renders``, if given, is
    asked for the clips of the scenes that changed instead of rendering them here (the course
    command's renders ran on Dask workers: :func:`attention_explainer.products.render_scene_products`,
    :func:`attention_explainer.products.install_products`).
    """
    chosen = list(scenes or lecture_specs())
    if settings.slides:
        reveal_package()  # refuse before rendering anything
    # absolute: the manim processes run inside the work folder and are given paths of the bundle
    out = prepare_out_dir(out).absolute()
    with bundle_lock(out):
        manifest = _build(scenario, out, settings, chosen, progress, renders)
        if then is not None:
            then(out)
        return manifest


def bundle_is_current(scenario: Scenario, out: Path, settings: BundleSettings, scenes: Sequence[SceneSpec]) -> bool:
    """Would :func:`build_bundle` render nothing: is every clip in ``out``, made from this
    scenario, these settings and this code? (Reads only; a few tens of milliseconds.)"""
    if not read_manifest(out):
        return False
    return not plan_bundle(scenario, out.absolute(), settings, scenes).changed()


def plan_bundle(scenario: Scenario, out: Path, settings: BundleSettings, scenes: Sequence[SceneSpec]) -> BundlePlan:
    """The plan of a build of ``scenes`` into ``out``: the previous manifest and every clip's key."""
    code = code_version()  # once per build: it hashes sources and asks fontconfig and TeX
    keys = {spec.name: scene_key(spec, scenario, settings, code) for spec in scenes}
    return BundlePlan(scenario, out, settings, tuple(scenes), code, read_manifest(out), keys, work_folder(out))


def _build(
    scenario: Scenario,
    out: Path,
    settings: BundleSettings,
    chosen: list[SceneSpec],
    progress: ProgressCallback | None,
    renders: RenderedScenes | None = None,
) -> dict[str, Any]:
    """The stages of a build, each once and in order: plan, render what changed (here, or by ``renders``),
    stage the new files (clips, stills, lecture; texts; decks; page), vouch for them, swap them in."""
    plan = plan_bundle(scenario, out, settings, chosen)
    plan.work.mkdir(parents=True, exist_ok=True)
    jobs = [Job(spec) for spec in chosen]
    rendered = render_changed(plan, jobs, progress) if renders is None else rendered_elsewhere(plan, jobs, renders)
    staging = Staging(out, plan.work / "next")
    durations = stage_files(plan, staging, rendered)
    stage_texts(plan, staging, durations)
    stage_deck(plan, staging, rendered)
    stage_pptx(plan, staging, rendered)
    files = file_entries(plan, staging)
    staging.stage(PAGE).write_text(lecture_page(plan, staging, files, durations), encoding="utf-8")
    files.append(file_entry(staging, PAGE, "page"))
    marker = hold_requested("staged")
    if marker is not None:
        hold(marker)
    manifest = manifest_for(plan, rendered, durations, jobs, files)
    staging.stage(MANIFEST).write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    swap_in(staging, last=MANIFEST)
    forget_old_work(out)
    return manifest
