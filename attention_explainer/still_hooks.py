"""The runner's last-still hook (``--last-still``): each movie's last frame saved beside it as drawn.

The bundle takes its stills from there (:func:`still_path`), lossless and with no decoding of the clip.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .accel.patching import Patch
from .hooks import WRITER, frame_writer, install

__all__ = ["install_last_still", "still_path"]


def still_path(movie: Path) -> Path:
    """Where ``--last-still`` saves ``movie``'s last frame: beside it, ``<name>.last.png``."""
    return movie.with_name(f"{movie.stem}.last.png")


def install_last_still() -> None:
    """Save the last frame each movie is given beside it (:func:`still_path`) once it is finished.

    Installed before the caption hook, so the frame kept is the one the encoder got, captions
    burnt in. Only a reference is kept: the frame is read after the movie is finished, when
    nothing is drawn any more.
    """

    def kept(write: Callable[[Any, Any, int], None], writer: Any, frame: Any, num_frames: int) -> None:
        write(writer, frame, num_frames)
        if getattr(frame, "ndim", 0) == 3 and num_frames > 0:
            writer.__dict__[_LAST_FRAME] = frame

    def saved_stills(finish: Callable[..., None]) -> Callable[..., None]:
        @functools.wraps(finish)  # a later hook checks the parameters of what it wraps
        def finished(self: Any) -> None:
            finish(self)
            frame = self.__dict__.pop(_LAST_FRAME, None)
            movie = Path(self.movie_file_path) if getattr(self, "movie_file_path", None) else None
            if frame is not None and movie is not None and movie.is_file():
                _save_still(frame, still_path(movie))

        return finished

    install("last still", lambda: [
        frame_writer(kept),
        Patch(WRITER, "finish", saved_stills, ("self",)),
    ])


_LAST_FRAME = "_attention_last_frame"


def _save_still(frame: Any, png: Path) -> None:
    """``frame`` (RGBA rows) as a PNG at ``png``: RGB where it is opaque throughout; written
    beside and renamed, so a stopped render leaves no half a picture."""
    from PIL import Image

    image = Image.fromarray(frame[..., :3] if frame.shape[2] == 4 and frame[..., 3].min() == 255 else frame)
    partial = png.with_name(f".{png.name}.partial")
    image.save(partial, format="PNG")
    partial.replace(png)
