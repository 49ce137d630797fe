"""The plan of a bundle: what one build of it works from, as the outputs read it.

A build of a bundle (:func:`attention_explainer.bundle.build_bundle`) renders the scenes that
changed, then writes its files through :class:`attention_explainer.staging.Staging`. The
outputs (the page, the slide deck, the handout, the notebook, the subtitles) read the build from
a :class:`BundlePlan`: the scenario, the settings, the scenes chosen and where their clips go,
the previous manifest and every clip's key. Nothing here renders or writes a file.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from attention_math import Scenario

__all__ = [
    "CAPTIONS",
    "FORMATS",
    "QUALITIES",
    "SLIDES",
    "BundleError",
    "BundlePlan",
    "BundleSettings",
    "SceneSpec",
    "json_hash",
    "scene_key",
    "scenes_folder",
    "work_folder",
]

QUALITIES = ("l", "m", "h", "p", "k")
FORMATS = ("mp4", "webm", "gif", "mov")
CAPTIONS = ("soft", "burn")
"""``soft``: subtitle files beside the clips (players show them); ``burn``: drawn into the frames too."""

SLIDES = "slides"
"""The folder of the bundle's work folder where manim-slides writes each scene's slides
(``<Scene>.json``, ``files/<Scene>/``)."""


class BundleError(Exception):
    """A failure to report in one line; ``status`` is the exit code (2 bad input, 1 internal); ``option``,
    if any, the option of ``render`` (without ``--``) the message begins with."""

    def __init__(self, message: str, status: int = 1, option: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.option = option


def work_folder(out: Path) -> Path:
    """Where the build of the bundle ``out`` keeps its work: ``<parent>/.cache/<name>/``, beside it.

    Manim's media, the slides, the TeX, text and voice caches, the staged files and the lock live
    there, never in the bundle, which holds only what its manifest lists. Beside the bundle, so
    on its file system: the staged files move in by renames. The path is the bundle's real one
    (links resolved), so two spellings of one folder share one work folder and one lock.

    >>> work_folder(Path("/talks/media/the-dog-chased-the-ball")).as_posix()
    '/talks/media/.cache/the-dog-chased-the-ball'
    """
    folder = out.resolve()
    return folder.parent / ".cache" / (folder.name or "root")


def scenes_folder() -> Path:
    """The folder of the ``scenes`` package (its ``__init__`` defines nothing: a cheap import)."""
    import scenes

    return Path(scenes.__file__ or "").parent


@dataclass(frozen=True)
class SceneSpec:
    """One scene of the lecture, as the bundle names and renders it."""

    number: int
    name: str  # the class name
    module: str  # e.g. "scenes.self_attention.scores"
    uses_scenario: bool = True  # scene 1 always shows its own preset

    @property
    def file(self) -> Path:
        """Its module's file, wherever the lecture is installed (a lecture of another package too)."""
        import importlib.util

        spec = importlib.util.find_spec(self.module)
        if spec is None or spec.origin is None:
            return scenes_folder().parent.joinpath(*self.module.split(".")).with_suffix(".py")
        return Path(spec.origin)

    @property
    def stem(self) -> str:
        """``NN-kebab-name``, the file name of its clip without extension."""
        words = re.sub(r"(?<!^)(?=[A-Z])", "-", self.name).lower()
        return f"{self.number:02d}-{words}"


@dataclass(frozen=True)
class BundleSettings:
    """How to render: quality flag, container format, transparency, parallel jobs, decks, voice, captions."""

    quality: str = "l"
    fps: int | None = None  # frames per second; None: the quality's
    fmt: str = "mp4"
    transparent: bool = False
    jobs: int = field(default_factory=lambda: os.cpu_count() or 1)
    slides: bool = False
    pptx: bool = False  # the PowerPoint deck, lecture.pptx (made from the clips: no render of its own)
    voice: bool = False  # speak every caption (Piper, the voice extra)
    captions: str = "soft"  # one of CAPTIONS
    stock_manim: bool = False  # render on manim as it is, without the accelerator (attention_explainer.accel)

    @property
    def extension(self) -> str:
        # manim writes transparent mp4 as .mov (QuickTime Animation keeps alpha)
        return "mov" if self.transparent and self.fmt == "mp4" else self.fmt

    def key(self) -> dict[str, Any]:
        """What of the settings shapes a clip (the voice by its Piper and voice versions).

        Slides are not in it: a scene rendered as a slide deck writes the same clip; nor is the
        PowerPoint deck, which is made from the clips. Nor is ``stock_manim``: the accelerator
        draws manim's own frames, pixel for pixel (a standing test compares every scene of the
        lecture), and whether it is in place is settled in each render, by the manim installed
        (whose version is in the key already), not here.
        """
        key: dict[str, Any] = {
            "quality": self.quality,
            "fps": self.fps,
            "format": self.fmt,
            "transparent": self.transparent,
        }
        if self.voice:
            from .voice import voice_id

            key["voice"] = voice_id()
        if self.captions != "soft":
            key["captions"] = self.captions
        return key


def json_hash(data: Any) -> str:
    """A short fingerprint of JSON data (keys sorted): what a clip, a deck or a scenario is made of.

    >>> json_hash({"b": 1, "a": [2, 3]}) == json_hash({"a": [2, 3], "b": 1})
    True
    >>> len(json_hash("anything"))
    16
    """
    return hashlib.sha256(json.dumps(data, sort_keys=True, ensure_ascii=False).encode()).hexdigest()[:16]


@dataclass(frozen=True, eq=False)
class BundlePlan:
    """What one build works from: the request, the previous manifest and every clip's key.

    Attributes
    ----------
    scenario, settings
        What to show and how to render it.
    out
        The bundle's folder (absolute).
    chosen
        The scenes of the bundle, in the lecture's order.
    code
        The code's version (:func:`attention_explainer.fingerprint.code_version`).
    old
        The previous build's manifest (empty when there is none or it is unreadable).
    keys
        Every chosen scene's clip key by class name: what its clip is made of.
    work
        The folder of the build's work: manim's media, the slides, the caches.
    """

    scenario: Scenario
    out: Path
    settings: BundleSettings
    chosen: tuple[SceneSpec, ...]
    code: str
    old: Mapping[str, Any]
    keys: Mapping[str, str]
    work: Path

    @property
    def lecture(self) -> str:
        """The lecture the chosen scenes belong to (``--lecture``): it chooses the handout's and the
        notebook's steps (:mod:`attention_explainer.outputs.lectures`)."""
        from scenes.plan import lecture_of
        from scenes.registry import DEFAULT_LECTURE

        return lecture_of(self.chosen[0].name) if self.chosen else DEFAULT_LECTURE

    @property
    def old_scenes(self) -> dict[str, Any]:
        """The previous manifest's entry of every scene, by class name."""
        return {entry["name"]: entry for entry in self.old.get("scenes", [])}

    def clip(self, spec: SceneSpec) -> str:
        """The clip's path in the bundle, relative to it."""
        return f"{spec.stem}.{self.settings.extension}"

    def slides_of(self, spec: SceneSpec) -> Path:
        """The slides manim-slides wrote for the scene (``<Scene>.json`` in the work folder)."""
        return self.work / SLIDES / f"{spec.name}.json"

    def has_slides(self, spec: SceneSpec) -> bool:
        """Whether the work folder holds the slides of the scene's current clip (made with its key)."""
        made_with = self.old_scenes.get(spec.name, {}).get("slides")
        return made_with == self.keys[spec.name] and self.slides_of(spec).is_file()

    def changed(self) -> list[SceneSpec]:
        """The scenes whose clip is missing or was made from something else (or, for a deck, lacks slides)."""
        old_scenes = self.old_scenes
        return [
            spec
            for spec in self.chosen
            if old_scenes.get(spec.name, {}).get("key") != self.keys[spec.name]
            or not (self.out / self.clip(spec)).exists()
            or (self.settings.slides and not self.has_slides(spec))
        ]


def scene_key(spec: SceneSpec, scenario: Scenario, settings: BundleSettings, code: str) -> str:
    """What a clip depends on: the scene, what it shows of the scenario, settings and code.

    A scenario change that leaves everything a scene shows bit-equal (say a value weight, for
    the scores scene) keeps that scene's clip.
    """
    from scenes.plan import scene_view

    return json_hash(
        {
            "scene": spec.name,
            "view": scene_view(spec.name, scenario),
            "settings": settings.key(),
            "code": code,
        }
    )
