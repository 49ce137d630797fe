"""The lecture in order: one scene class per step, imported lazily.

Each lecture lists its ``(module, class)`` pairs in its :class:`scenes.registry.Lecture`;
:func:`lecture_scenes` imports them. Render the whole lecture scene by scene with ``manim render -ql scenes/lecture.py
Explainer`` (one video) or one scene at a time with its own file.
"""

from __future__ import annotations

import importlib

from manim import FadeOut, Group, Scene

from scenes.base import ExplainerScene
from scenes.registry import DEFAULT_LECTURE, lecture

__all__ = ["Explainer", "lecture_scenes"]


def lecture_scenes(name: str = DEFAULT_LECTURE) -> list[type[Scene]]:
    """The scene classes of a lecture (by default self-attention), in order."""
    return [getattr(importlib.import_module(module), scene) for module, scene in lecture(name).scenes]


class Explainer(ExplainerScene):
    """The whole default lecture as one video: every scene of it in order.

    Each scene's ``construct`` runs on a view of this scene that shares its state (renderer,
    mobjects, recorded numbers, beats) but has the scene's own methods, so scenes need no
    changes to be chained.
    """

    def construct(self) -> None:
        for scene_class in lecture_scenes():
            # what a scene says once (that its numbers are rounded) it says once per scene, as when alone
            self.relations, self._rounding_said = [], False
            view = scene_class.__new__(scene_class)
            view.__dict__ = self.__dict__  # one state, the scene's own methods
            scene_class.construct(view)
            # -- a calm cut to the next scene
            if self.mobjects:
                self.play(FadeOut(Group(*self.mobjects)), run_time=0.6)
            self.clear()
