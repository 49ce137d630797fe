"""The lecture's scenes as manim-slides presentations: one slide per beat.

Each class here is a thin variant of a lecture scene that also derives from
``manim_slides.Slide``; ``ExplainerScene.beat`` ends a slide after every beat. Render and
present with, for example::

    manim-slides render scenes/slides.py Scores ScaleAndSoftmax
    manim-slides present Scores ScaleAndSoftmax
    manim-slides convert Scores ScaleAndSoftmax deck.html

The same scenario settings apply (``ATTENTION_SCENARIO``, ``ATTENTION_QUERY``, manim.cfg).
"""

from __future__ import annotations

from manim_slides import Slide

from scenes.lecture import LECTURE, lecture_scenes

__all__ = [name for _, name in LECTURE]

for _scene in lecture_scenes():
    # Slide first, so its play/wait wrap ours; the variant keeps the scene's name.
    globals()[_scene.__name__] = type(_scene.__name__, (Slide, _scene), {"__module__": __name__})
