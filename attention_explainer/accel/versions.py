"""The manim series the accelerator and the runner's hooks are written for: 0.21 and 0.22.

Manim 0.22 rebuilt its file writer: a play's frames go to ``write_frame(pixels, *, repeat)``
(0.21: ``write_frame(frame_or_renderer, num_frames)``), each partial movie is encoded by a
:class:`manim.scene.video_segment_encoder.VideoSegmentEncoder` (0.21: by the encode job itself,
``_PartialMovieEncodeJob._encode_and_write_frame``), the writer is made from resolved settings
(``CairoRenderer.init_scene(scene, session_spec, file_writer_settings)``) and a partial movie is
opened by its play's number (``open_partial_movie_stream(*, animation_index, file_path)``). The
rest of what the accelerator replaces is the same in both. Each module asks :func:`segment_encoder`
which of its two sets of patches fits the manim installed; ``accel.enable`` still checks the
version against ``TESTED_MANIM`` and every parameter, so a third manim gets nothing.
"""

from __future__ import annotations

import importlib.util

__all__ = ["WRITE_FRAME_021", "WRITE_FRAME_022", "segment_encoder", "write_frame_parameters"]

WRITE_FRAME_021 = ("self", "frame_or_renderer", "num_frames")
WRITE_FRAME_022 = ("self", "pixels", "repeat")
"""``SceneFileWriter.write_frame``'s parameters in manim 0.21 and in 0.22 (``repeat`` keyword-only)."""


def segment_encoder() -> bool:
    """Is this manim's file writer 0.22's, whose partial movies a ``VideoSegmentEncoder`` encodes?
    Told by the module being there, not by the version's number (which a test may fake)."""
    try:
        return importlib.util.find_spec("manim.scene.video_segment_encoder") is not None
    except ImportError:  # no manim
        return False


def write_frame_parameters() -> tuple[str, ...]:
    """``SceneFileWriter.write_frame``'s parameter names in the manim installed (as tested)."""
    return WRITE_FRAME_022 if segment_encoder() else WRITE_FRAME_021
