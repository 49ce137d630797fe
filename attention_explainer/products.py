"""A scene's render as products that travel (clip, subtitles, still as bytes), for renders made elsewhere.

The course command renders its scenes on Dask workers (:mod:`attention_explainer.course`):
:func:`render_scene_products` renders one there as the bundle would, :func:`install_products` puts what came
back where the bundle's own render would have left it, and a build given such renders
(:data:`RenderedScenes`) takes them for the scenes that changed (:func:`rendered_elsewhere`).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .forkserver import ForkServer
from .out_dir import atomic_write, write_text
from .plan import SLIDES, BundleError, BundlePlan, BundleSettings, SceneSpec
from .processes import TEXTS, Job, Renders, fresh_media, render_scene
from .render_jobs import prune_texts, tex_cache_opened
from .still_hooks import still_path

__all__ = ["RenderedScenes", "SceneProducts", "install_products", "render_scene_products", "rendered_elsewhere"]

RenderedScenes = Callable[[BundlePlan, list[SceneSpec]], dict[str, tuple[Path, float]]]
"""Renders made elsewhere: given the plan and the scenes that changed, each one's clip in the work
folder (its subtitles and still beside it, as :func:`install_products` writes them) and its seconds."""


@dataclass(frozen=True)
class SceneProducts:
    """What the assembly of a bundle needs of one scene's render, as bytes (they travel between machines)."""

    scene: str  # the class name
    key: str  # the clip key it was rendered for
    clip: bytes
    subtitles: bytes  # SubRip; empty when the scene has no captions
    still: bytes  # PNG of the clip's last frame
    seconds: float  # how long the render took
    made_by: str  # host and process that rendered it
    slides: tuple[tuple[str, bytes], ...] = ()  # with slides: the scene's slides, by path in the work folder


def render_scene_products(
    spec: SceneSpec, settings: BundleSettings, scenario_toml: str, key: str, work: Path,
    server: ForkServer | None = None,
) -> SceneProducts:
    """Render one scene as the bundle does, in the work folder ``work`` of the caller's own (its
    TeX and text caches are kept there), and return its products as bytes.

    ``key`` is the clip key the caller planned; it travels with the products. With ``settings.slides``
    the scene renders as its slide variant, as the bundle's own render does, and its slides (manim-slides'
    ``<Scene>.json`` and its pieces of video) travel too: the deck is made where the bundle is assembled.
    """
    import socket

    work.mkdir(parents=True, exist_ok=True)
    scenario_file = work / f"scenario-{os.getpid()}.toml"
    write_text(scenario_file, scenario_toml)
    tex_complete = tex_cache_opened(work)
    prune_texts(work / TEXTS)
    job = Job(spec)
    clip = render_scene(job, settings, work, scenario_file, lambda: None, Renders(), server)
    tex_complete.touch()
    subtitles = clip.with_suffix(".srt")
    slides = _slides_of(spec, work) if settings.slides else ()
    return SceneProducts(
        spec.name, key, clip.read_bytes(), subtitles.read_bytes() if subtitles.is_file() else b"",
        still_path(clip).read_bytes(), job.seconds, f"{socket.gethostname()}:{os.getpid()}", slides,
    )  # fmt: skip


def _slides_of(spec: SceneSpec, work: Path) -> tuple[tuple[str, bytes], ...]:
    """The scene's slides in ``work`` as bytes, each by its path there: the JSON names its pieces by paths
    relative to the work folder, so they are found wherever they are installed in the same places."""
    files = [work / SLIDES / f"{spec.name}.json", *sorted((work / SLIDES / "files" / spec.name).rglob("*"))]
    return tuple((path.relative_to(work).as_posix(), path.read_bytes()) for path in files if path.is_file())


def install_products(plan: BundlePlan, spec: SceneSpec, products: SceneProducts) -> Path:
    """Write a scene's products into the bundle's work folder where its own render would have
    left them (clip, subtitles and still beside it); return the clip's path."""
    if products.key != plan.keys[spec.name]:
        raise BundleError(f"scene {spec.name}: rendered for another clip key than the bundle plans", 1)
    media = fresh_media(spec, plan.work)
    clip = media / "videos" / "elsewhere" / plan.settings.quality / f"{spec.name}.{plan.settings.extension}"
    clip.parent.mkdir(parents=True, exist_ok=True)
    for path, content in ((clip, products.clip), (clip.with_suffix(".srt"), products.subtitles)):
        with atomic_write(path) as tmp:
            tmp.write_bytes(content)
    with atomic_write(still_path(clip)) as tmp:
        tmp.write_bytes(products.still)
    for rel, content in products.slides:  # fresh_media removed the scene's old slides
        target = plan.work / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        with atomic_write(target) as tmp:
            tmp.write_bytes(content)
    if plan.settings.slides and not plan.slides_of(spec).is_file():
        raise BundleError(f"scene {spec.name}: no slides came back with its render", 1)
    (media / ".finished").touch()
    return clip


def rendered_elsewhere(plan: BundlePlan, jobs: list[Job], renders: RenderedScenes) -> dict[str, Path]:
    """The clips ``renders`` made of the scenes that changed; every job marked done or cached."""
    to_render = plan.changed()
    made = renders(plan, to_render)
    missing = [spec.name for spec in to_render if spec.name not in made]
    if missing:
        raise BundleError(f"scenes {', '.join(missing)}: no render was made for them", 1)
    for job in jobs:
        if job.spec.name in made:
            job.status, job.seconds = "done", made[job.spec.name][1]
        else:
            job.status = "cached"
    return {name: clip for name, (clip, _) in made.items() if name in plan.keys}
