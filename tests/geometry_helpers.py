"""What the geometry tests share: a point inside a polygon, and each test scenario built once with a watcher."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import pytest
from scene_helpers import SCENARIOS, build_watched

from attention_math import Scenario
from scenes.base import ExplainerScene

__all__ = ["Watch", "inside_polygon", "watch_cases"]


class Watch(Protocol):
    """Called after every play; keeps what it saw in ``looks``."""

    looks: list[Any]

    def __call__(self, scene: ExplainerScene) -> None: ...


def inside_polygon(point: np.ndarray, corners: np.ndarray) -> bool:
    """Is ``point`` inside the polygon of ``corners`` (in order; x and y read)? Even–odd rule, a ray to the right."""
    x, y, inside = float(point[0]), float(point[1]), False
    corners = np.asarray(corners)[:, :2]
    for (x1, y1), (x2, y2) in zip(corners, np.roll(corners, -1, axis=0), strict=True):
        if (y1 > y) != (y2 > y) and x < x1 + (y - y1) * (x2 - x1) / (y2 - y1):
            inside = not inside
    return inside


def watch_cases(scene: tuple[str, str], cases: Sequence[str], tmp_path_factory: pytest.TempPathFactory,
                watch: Callable[[], Watch]) -> dict[str, tuple[Scenario, list[Any]]]:
    """Each case's scenario and what a fresh ``watch()`` saw of ``scene`` (module, class) built with it."""
    done = {}
    for case in cases:
        scenario, watcher = SCENARIOS[case](), watch()
        build_watched(*scene, scenario, Path(tmp_path_factory.mktemp(case)), watcher)
        done[case] = scenario, watcher.looks
    return done
