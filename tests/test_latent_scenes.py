"""The latent-attention lecture's scenes, built before the lecture is registered (``latent_checks.registered``):
each scene with each of its scenarios, its numbers against the core, nothing outside the frame, no two texts
overlapping, nothing below the font floor, the last frame filling it."""

from __future__ import annotations

import importlib

import pytest
from latent_checks import LATENT_SCENARIOS, registered
from scene_helpers import Build, build_scene, number_problems

from scenes.latent_attention import SCENES

CASES = [pytest.param(module, name, scenario, id=f"{name}-{scenario}")
         for module, name in SCENES for scenario in LATENT_SCENARIOS]


def build(module: str, name: str, scenario: str, tmp_path, monkeypatch) -> Build:  # type: ignore[no-untyped-def]
    registered(monkeypatch)
    cls = getattr(importlib.import_module(module), name)
    built = build_scene(cls, LATENT_SCENARIOS[scenario](), tmp_path, name)
    assert built.error is None, built.error
    return built


@pytest.mark.parametrize(("module", "name", "scenario"), CASES)
def test_scene_numbers_and_layout(module: str, name: str, scenario: str, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    built = build(module, name, scenario, tmp_path, monkeypatch)
    problems = number_problems(built)
    for play in built.plays:
        problems += [f"play {play.number}: {p}" for kind in ("outside", "overlaps", "small") for p in getattr(play, kind)]
    width, height = built.plays[-1].extent
    if width < 0.7 * 14.22 or height < 0.4 * (4 + 2.85):
        problems.append(f"the last frame's drawing is only {width:.2f} × {height:.2f}")
    assert not problems, "\n".join(dict.fromkeys(problems))
