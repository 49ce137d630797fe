"""Visual regression: the last frame of every scene, default scenario, against committed control data.

``manim.utils.testing.frames_comparison`` renders the scene at 854 × 480 with manim's own test
configuration (``manim.cfg`` is ignored: the scenes set their background in code) and compares
the last frame with ``tests/control_data/scenes/<Scene>.npz``. Write or refresh the control data
once a scene is final, then commit it::

    .venv/bin/python -m pytest tests/test_scenes_frames.py --set_test            # every scene
    .venv/bin/python -m pytest tests/test_scenes_frames.py --set_test -k Scores  # one scene

``--show_diff`` shows a picture of a mismatch. The control data was made with Cairo 1.16 (see
``conftest.py``); other Cairo versions may anti-alias slightly differently.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from manim import Scene
from manim.utils.testing.frames_comparison import frames_comparison
from scene_helpers import SCENES, load_scene_class, with_scenario

from attention_math import DEFAULT_PRESET, preset

__module_test__ = "scenes"  # control data folder: tests/control_data/scenes/

CONTROL_DIR = Path(__file__).resolve().parent / "control_data" / __module_test__


@pytest.mark.parametrize("scene", [pytest.param(scene, id=scene[1]) for scene in SCENES])
def test_last_frame(scene: tuple[str, str], request: pytest.FixtureRequest, tmp_path: Path) -> None:
    module, name = scene
    cls = load_scene_class(module, name)
    control = CONTROL_DIR / f"{name}.npz"
    if not request.config.getoption("--set_test") and not control.is_file():
        pytest.fail(
            f"no control frame for {name}: {control} is missing. Once the scene is final, write it with\n"
            f"    .venv/bin/python -m pytest tests/test_scenes_frames.py --set_test -k {name}\n"
            "look at it (--show_diff shows mismatches later), and commit it.",
            pytrace=False,
        )

    def draw(scene: Scene) -> None:
        # ``scene`` is an instance of a subclass of ``cls`` (base_scene) whose setup() has run:
        # the scenario, the trace and the background are in place; draw the scene's construct.
        cls.construct(scene)  # type: ignore[arg-type]

    draw.__name__ = f"test_{name}"  # frames_comparison names the control file after it: <name>.npz
    compare = frames_comparison(base_scene=with_scenario(cls, preset(DEFAULT_PRESET)))(draw)
    compare(request=request, tmp_path=tmp_path)
