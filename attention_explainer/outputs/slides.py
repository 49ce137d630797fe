"""The bundle's slide deck: one HTML page that runs offline, from any folder.

``render --slides`` renders every scene as its slide variant (``scenes/slides.py``, a
``manim_slides.Slide``): one render writes the clip and, in the bundle's work folder
(:func:`attention_explainer.plan.work_folder`), the scene's slides, one per beat, each with its
caption as speaker notes. This module converts them into
``slides.html`` with manim-slides' reveal.js converter, its videos in ``slides_assets/`` and
reveal.js itself (the npm package ``reveal.js`` 6.0.1, MIT, that manim-slides 5.7 expects) copied
into ``reveal.js/`` beside it and named by a relative path: nothing loads from the network.

reveal.js comes from :func:`reveal_package`: ``ATTENTION_REVEAL_JS`` (the unpacked package
folder, holding ``dist/``), else ``.cache/reveal.js-6.0.1`` of this project, where ``make setup``
puts it (``npm pack reveal.js@6.0.1``).

The deck is rebuilt when a clip was rendered or it is missing; a render without ``--slides``
keeps a deck of the same clips and removes one of other clips, so the bundle never holds a deck
that shows something else than its clips.
"""

from __future__ import annotations

import html
import os
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

from ..escape import visible
from ..plan import BundleError, json_hash

if TYPE_CHECKING:
    from ..plan import BundlePlan
    from ..staging import Staging

__all__ = ["ASSETS", "DECK", "LIBRARY", "REVEAL_ENV", "REVEAL_VERSION", "deck_key", "reveal_package", "stage_deck"]

REVEAL_VERSION = "6.0.1"
"""The reveal.js manim-slides 5.7's template is written for."""

REVEAL_ENV = "ATTENTION_REVEAL_JS"
DECK = "slides.html"
ASSETS = "slides_assets"
LIBRARY = "reveal.js"
_KINDS = {"deck", "deck-asset", "deck-library"}


def reveal_package() -> Path:
    """The unpacked npm package reveal.js 6.0.1 (the folder holding ``dist/reveal.js``).

    Raises
    ------
    BundleError
        With status 2, naming where it looked and how to get it, when it is not there.
    """
    project = Path(__file__).resolve().parents[2]
    folder = Path(os.environ.get(REVEAL_ENV) or project / ".cache" / f"reveal.js-{REVEAL_VERSION}")
    if not (folder / "dist" / "reveal.js").is_file():
        raise BundleError(
            f"--slides: reveal.js {REVEAL_VERSION} is not in {folder}; run `make setup` in the project, or "
            f"`npm pack reveal.js@{REVEAL_VERSION}`, unpack it and set {REVEAL_ENV} to its package folder",
            2,
            option="slides",
        )
    return folder


def deck_key(plan: BundlePlan) -> str:
    """What the deck is made of: every clip (its key), in order, the title, reveal.js's version."""
    clips = [plan.keys[spec.name] for spec in plan.chosen]
    return json_hash({"clips": clips, "title": plan.scenario.title, "reveal.js": REVEAL_VERSION})


def stage_deck(plan: BundlePlan, staging: Staging, rendered: dict[str, Path]) -> None:
    """Stage the deck, or keep or remove the previous one; its files go to ``staging.deck``.

    Parameters
    ----------
    plan
        The build: with ``settings.slides`` a deck is made from the scenes' slides in its work folder.
    staging
        Where the new files are written; the deck's files, and their kinds, are listed in ``deck``.
    rendered
        The clips this build rendered (a deck of other clips is made again).

    Raises
    ------
    BundleError
        When a scene's slides or reveal.js are missing.
    """
    out, key = plan.out, deck_key(plan)
    old_files = [entry for entry in plan.old.get("files", []) if isinstance(entry, dict)]
    kept = [(str(e["path"]), str(e["kind"])) for e in old_files if e.get("kind") in _KINDS]
    whole = bool(kept) and all((out / rel).is_file() for rel, _ in kept)
    same = plan.old.get("deck") == key and whole
    if same and not (plan.settings.slides and rendered):
        staging.deck = kept
        return
    if not plan.settings.slides:
        if kept or (out / DECK).exists():
            staging.remove(DECK, ASSETS, LIBRARY)
        return
    _convert(plan, staging.stage(DECK))  # slides_assets/ beside it
    _copy_reveal(staging)
    staging.stage_tree(ASSETS)
    staging.stage_tree(LIBRARY)
    files = sorted(rel for rel in staging.staged if rel.startswith((f"{ASSETS}/", f"{LIBRARY}/")))
    kinds = [(rel, "deck-asset" if rel.startswith(ASSETS) else "deck-library") for rel in files]
    staging.deck = [(DECK, "deck"), *kinds]


def _convert(plan: BundlePlan, deck: Path) -> None:
    """manim-slides' reveal.js converter: the page ``deck`` and ``slides_assets/`` beside it."""
    from manim_slides.config import PresentationConfig
    from manim_slides.convert import RevealJS

    configs = []
    for spec in plan.chosen:
        slides = plan.slides_of(spec)
        if not slides.is_file():
            raise BundleError(f"slides: no slides of {spec.name} in {slides.parent}", 1)
        configs.append(PresentationConfig.from_file(slides))
    # the template writes the title into the page as it is: it gets the title as HTML text
    title = html.escape(visible(plan.scenario.title))
    options = {"presentation_configs": configs, "cdn_url": LIBRARY, "title": title}
    RevealJS.model_validate(options).convert_to(deck)


def _copy_reveal(staging: Staging) -> None:
    """reveal.js's ``dist/`` and its licence, beside the deck."""
    package = reveal_package()
    target = staging.folder / LIBRARY
    shutil.copytree(package / "dist", target / "dist")
    if (package / "LICENSE").is_file():
        shutil.copyfile(package / "LICENSE", target / "LICENSE")
