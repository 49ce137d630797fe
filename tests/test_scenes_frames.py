"""Visual regression: the last frame of every scene, its lecture's preset, against committed control data.

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

from collections.abc import Callable
from pathlib import Path
from types import FunctionType, SimpleNamespace

import manim.utils.testing.frames_comparison as frames_comparison_module
import pytest
from manim import RIGHT, MovingCamera, MovingCameraScene, Scene, Square
from manim.utils.testing.frames_comparison import frames_comparison
from scene_helpers import MODEL_SCENARIOS, SCENES, load_scene_class, with_scenario

from attention_math import preset
from scenes.registry import lecture_of_scene

MODEL_FRAME = "minilm-eight"
"""The real-head scenes' scenario (they show a real model's head, never a preset): 8 WordPieces, layer 3, head 4."""

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
    with pytest.MonkeyPatch.context() as patch:
        if issubclass(cls, MovingCameraScene):
            patch.setattr(frames_comparison_module, "_make_test_renderer_class", _with_moving_camera)
        scenario = MODEL_SCENARIOS[MODEL_FRAME]() if cls.shows_model else preset(lecture_of_scene(name).preset)
        compare = frames_comparison(base_scene=with_scenario(cls, scenario))(draw)
        try:
            compare(request=request, tmp_path=tmp_path)
        except pytest.skip.Exception as skipped:  # the Cairo version check: never skip silently
            pytest.fail(f"frames_comparison skipped instead of comparing: {skipped}")


_MAKE_RENDERER = frames_comparison_module._make_test_renderer_class


def _with_moving_camera(renderer_class: type) -> type:
    """frames_comparison gives its renderer a plain camera (a 3-d one only for ThreeDScene)."""
    made = _MAKE_RENDERER(renderer_class)

    class _MovingCameraRenderer(made):  # type: ignore[misc, valid-type]
        def __init__(self, **options: object) -> None:
            super().__init__(camera_class=MovingCamera, **options)

    return _MovingCameraRenderer


# -- the comparison itself: it runs here (no Cairo skip) and it fails on a changed frame --------------


def _frame_test(folder: Path, draw: Callable[[Scene], None], set_test: bool) -> None:
    """Run frames_comparison on ``draw`` with control data under ``folder``/control_data/meta/."""
    options = {"--set_test": set_test, "--show_diff": False}
    request = SimpleNamespace(config=SimpleNamespace(getoption=options.__getitem__))
    globals_ = {**draw.__globals__, "__file__": str(folder / "test_meta.py"), "__module_test__": "meta"}
    test = FunctionType(draw.__code__, globals_, "test_square", None, draw.__closure__)
    try:
        frames_comparison(test)(request=request, tmp_path=folder)
    except pytest.skip.Exception as skipped:  # e.g. the Cairo version check: frame tests must run
        pytest.fail(f"frames_comparison skipped instead of comparing: {skipped}")


def test_frame_comparison_runs_and_catches_a_change(tmp_path: Path) -> None:
    (tmp_path / "control_data").mkdir()

    def square(scene: Scene) -> None:
        scene.add(Square(2, fill_opacity=1))

    def moved(scene: Scene) -> None:
        scene.add(Square(2, fill_opacity=1).shift(0.5 * RIGHT))

    _frame_test(tmp_path, square, set_test=True)
    assert (tmp_path / "control_data" / "meta" / "square.npz").is_file()
    _frame_test(tmp_path, square, set_test=False)  # the same frame passes (and is not skipped)
    with pytest.raises(AssertionError, match="Frame no -1"):
        _frame_test(tmp_path, moved, set_test=False)
