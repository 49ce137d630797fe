"""The lectures' scenes as manim-slides presentations: one slide per beat.

Each class here is a thin variant of a lecture scene that also derives from
``manim_slides.Slide``; ``ExplainerScene.beat`` ends a slide after every beat. Render and
present with, for example::

    manim-slides render scenes/slides.py Scores ScaleAndSoftmax
    manim-slides present Scores ScaleAndSoftmax
    manim-slides convert Scores ScaleAndSoftmax deck.html

A render that writes no movie (``manim render -s scenes/slides.py Scores``, a last frame, or a
dry run) makes no slides: manim-slides cuts its slides from the movie's pieces. It renders as
the plain scene does instead, so ``-s`` writes the same last frame as ``scenes/self_attention/scores.py``.

The same scenario settings apply (``ATTENTION_SCENARIO``, ``ATTENTION_QUERY``, manim.cfg).
"""

from __future__ import annotations

from typing import Any

from manim import config
from manim_slides.slide import Slide as ManimSlide

from scenes.kit.slide import Slide  # manim-slides' Slide, made on manim 0.22 too
from scenes.lecture import lecture_scenes
from scenes.registry import lectures

__all__ = [name for lecture in lectures() for name in lecture.scene_names]


def _without_movie() -> bool:
    """Whether this render writes no movie (``-s``: the last frame only; a dry run)."""
    return bool(config.save_last_frame or config.dry_run)


def _init(self: Slide, *args: Any, **kwargs: Any) -> None:
    if _without_movie():
        # past Slide's own __init__ (and manim-slides'), which turns the movie on (it would render every frame)
        super(ManimSlide, self).__init__(*args, **kwargs)
    else:
        Slide.__init__(self, *args, **kwargs)


def _render(self: Slide, *args: Any, **kwargs: Any) -> Any:
    """Slides when manim writes a movie; otherwise the plain scene's render, without slides."""
    if _without_movie():
        return super(ManimSlide, self).render(*args, **kwargs)
    return Slide.render(self, *args, **kwargs)


for _scene in (scene for lecture in lectures() for scene in lecture_scenes(lecture.name)):
    # Slide first, so its play/wait wrap ours; the variant keeps the scene's name.
    members = {"__module__": __name__, "__init__": _init, "render": _render}
    globals()[_scene.__name__] = type(_scene.__name__, (Slide, _scene), members)
