"""The floor: one static shape on screen for a given time.

What Manim and the video encoder cost with nothing to draw. The bench renders it once per
lecture clip, for the clip's duration, at the same quality and with the same parallelism.
``FLOOR_SECONDS`` sets the duration.
"""

from __future__ import annotations

import os

from manim import BLUE, Scene, Square


class Floor(Scene):
    def construct(self) -> None:
        self.add(Square(color=BLUE))
        self.wait(float(os.environ.get("FLOOR_SECONDS", "1")))
