"""Every lecture after lecture 6 leaves a subtitle up long enough to read it, at lecture 6's pace.

Lecture 6's waits set the pace (22.6 characters of caption a second at -ql); the later lectures' captions
say more a beat, and at their written waits some ran at 40 to 60 characters a second. A paced scene
(``reading_pace``) holds each beat for ``len(caption) / READING_PACE`` seconds, at most
``LONGEST_READING``. Read from the dry runs the other scene tests share, for every scenario each scene is
built with: a beat's seconds against its own caption's length.
"""

from __future__ import annotations

import pytest
from scene_helpers import NUMBER_SCENARIOS, built, load_scene_class, scenarios_of

from scenes.base import LONGEST_READING, READING_PACE
from scenes.registry import DEFAULT_LECTURE, lecture, lectures

FRAME = 0.1  # a beat's wait is whole frames: at most one short of its reading at any frame rate above 10
PACED = [scene for item in lectures() if item.name != DEFAULT_LECTURE for scene in item.scenes]


@pytest.mark.parametrize("scene", PACED, ids=[name for _, name in PACED])
def test_every_beat_of_a_later_lecture_lasts_long_enough_to_read_its_caption(scene_builds, scene) -> None:
    assert load_scene_class(*scene).reading_pace == READING_PACE
    for scenario in scenarios_of(scene[1], NUMBER_SCENARIOS):
        build = built(scene_builds, scene, scenario)
        assert build.beats, (scene[1], scenario)
        for beat in build.beats:
            needed = min(len(beat.caption) / READING_PACE, LONGEST_READING)
            assert beat.end - beat.start >= needed - FRAME, (scene[1], scenario, beat.number, beat.caption)


@pytest.mark.parametrize("scene", lecture(DEFAULT_LECTURE).scenes, ids=lecture(DEFAULT_LECTURE).scene_names)
def test_lecture_6_keeps_its_waits_as_written(scene) -> None:
    assert load_scene_class(*scene).reading_pace is None
