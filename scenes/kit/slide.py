"""manim-slides' ``Slide`` on manim 0.21 and 0.22: what manim-slides 5.7.0 needs of manim that 0.22 took away.

manim-slides 5.7.0 (the last release) was written for manim 0.21. Its ``Slide.__init__`` does one
thing before ``Scene.__init__``: ``config["write_to_movie"] = True``, for the OpenGL renderer,
which writes no movie by default. Manim 0.22 removed that setting (a render writes a movie when
its output is a video): setting it raises ``AttributeError``, so no slide could even be made.
Its ``render`` reads ``config["flush_cache"]``, which 0.22 removed too; and it sets
``config["max_files_cached"]`` to ``float("inf")`` while it renders, so manim keeps every
partial movie it cuts the slides from: 0.22 refuses anything but an integer
(``ValueError``; -1 is its "no limit"), and reads the setting as the scene is made (into the file
writer's settings), before ``render``, so it would prune past 100 partial movies (the default)
before manim-slides copied them.

:class:`Slide` is manim-slides' own, but on a manim without ``write_to_movie``: there
``__init__`` passes the setting by and makes the scene with an unlimited partial-movie cache (-1;
put back once the scene is made), and ``render`` is manim-slides' own without the infinity and manim's flush: the
scene rendered, then its slides saved as manim-slides saves them. Everything else, slides, notes,
reversing, is manim-slides' as it is. Remove it once manim-slides supports manim 0.22
(``tests/test_slides_shim.py`` says when it is no longer needed).
"""

from __future__ import annotations

from typing import Any

from manim import config
from manim_slides.slide import Slide as ManimSlide

__all__ = ["NEEDS_SHIM", "Slide"]

NEEDS_SHIM = not hasattr(type(config), "write_to_movie")
"""Does this manim lack ``config["write_to_movie"]`` (0.22), which manim-slides 5.7.0 sets?"""


class Slide(ManimSlide):
    """manim-slides' ``Slide``, made on manim 0.22 too (see the module)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if not NEEDS_SHIM:
            super().__init__(*args, **kwargs)
            return
        kept = config.max_files_cached
        config.max_files_cached = -1  # keep every partial movie: manim-slides cuts the slides from them
        try:
            super(ManimSlide, self).__init__(*args, **kwargs)  # past manim-slides' config["write_to_movie"]
        finally:
            config.max_files_cached = kept

    def render(self, *args: Any, **kwargs: Any) -> None:  # type: ignore[override]  # manim-slides' own signature
        if not NEEDS_SHIM:
            super().render(*args, **kwargs)
            return
        # manim-slides 5.7.0's Slide.render, but for max_files_cached = inf (the cache is unlimited already)
        # and config["flush_cache"], which manim 0.22 removed with its --flush_cache
        super(ManimSlide, self).render(*args, **kwargs)  # the scene's own render, as manim-slides calls it
        self._save_slides(
            use_cache=not (config["disable_caching"] or self.disable_caching),
            flush_cache=self.flush_cache,
            skip_reversing=self.skip_reversing,
        )
