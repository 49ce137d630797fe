"""A two-beat scene for the narration tests: quick to render, with a number, a root and a pause."""

from __future__ import annotations

from manim import RIGHT, FadeIn, Square

from scenes.base import ExplainerScene


class Narrated(ExplainerScene):
    """Two short beats, then a second of silence without a caption."""

    def construct(self) -> None:
        square = Square(side_length=2, color="#56B4E9")
        self.beat("q5 · k1 = 0.73×0.72 + 1.70×1.39 = 2.89.", FadeIn(square), wait=0.2)
        self.beat("Divide by √2.", square.animate.shift(RIGHT), wait=0.2)
        self.wait(1.0)
