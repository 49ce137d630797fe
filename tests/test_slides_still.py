"""``manim render -s scenes/slides.py Scores``: a slide variant asked for its last frame only writes
the same picture as the plain scene, without manim-slides' traceback (it has no movie to cut
slides from). The slide deck itself is tested in ``tests/test_bundle.py``.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest
from PIL import Image
from scene_helpers import REPO, clean_environment, manim_command

pytestmark = pytest.mark.render

TIMEOUT = 600


def test_a_slide_scenes_last_frame_is_the_plain_scenes(tmp_path: Path) -> None:
    runs = {}
    for script, path in (("slides", "scenes/slides.py"), ("scores", "scenes/self_attention/scores.py")):
        media = tmp_path / script
        command = manim_command("-s", "-ql", "--media_dir", str(media), path, "Scores")
        process = subprocess.Popen(
            command, cwd=REPO, env=clean_environment(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        runs[script] = (process, media)  # both at once
    pictures = {}
    for script, (process, media) in runs.items():
        output, _ = process.communicate(timeout=TIMEOUT)
        assert process.returncode == 0, output
        assert "Traceback" not in output and "Error" not in output, output
        (png,) = (media / "images" / script).glob("Scores*.png")
        pictures[script] = np.asarray(Image.open(png))
        assert not list(media.rglob("*.mp4"))  # a still, no movie
    assert pictures["slides"].shape[:2] == (480, 854)
    np.testing.assert_array_equal(pictures["slides"], pictures["scores"])
