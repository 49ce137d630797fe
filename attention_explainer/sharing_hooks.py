"""The runner's sharing hooks: what the bundle's parallel manim processes make once for all of them.

One TeX cache (``--tex-dir``), the Pango texts the scenes make (``--text-dir``) and a real model's head
(``--head-dir``), each kept in a folder of the bundle's work folder.
"""

from __future__ import annotations

import functools
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .accel.patching import Patch, Step
from .hooks import install

__all__ = ["share_model_heads", "share_tex_cache", "share_texts"]


def share_tex_cache(folder: Path) -> None:
    """Compile TeX into ``folder``, shared by the bundle's parallel manim processes.

    Each formula is then compiled once per bundle, not once per scene. Manim checks only that
    a cached SVG exists and clears the folder's other files after each compile, so processes
    take turns (a file lock beside the folder) to compile or reuse; each then reads its own
    copy of the SVG in its own TeX folder (manim writes a scratch file beside the SVG it loads).
    """

    def shared_by_processes(compile_one: Callable[..., Any]) -> Callable[..., Path]:
        folder.mkdir(parents=True, exist_ok=True)
        return _compiled_in(folder, compile_one)

    # manim imports tex_to_svg_file into tex_mobject, where it is called (it passes every argument on)
    install("TeX cache", lambda: [Patch("manim.mobject.text.tex_mobject", "tex_to_svg_file", shared_by_processes)])


def _compiled_in(folder: Path, compile_one: Callable[..., Any]) -> Callable[..., Path]:
    """``compile_one`` (manim's ``tex_to_svg_file``) compiling into ``folder``, one process at a time."""
    import fcntl

    from manim import config

    lock = folder.with_name(folder.name + ".lock")

    @functools.wraps(compile_one)  # a later hook checks the parameters of what it wraps
    def shared(*args: Any, **kwargs: Any) -> Path:
        own = config.get_dir("tex_dir")  # this process's TeX folder, as the command line set it
        own.mkdir(parents=True, exist_ok=True)
        previous = config.tex_dir
        with open(lock, "a") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)  # released when the file closes
            config.tex_dir = str(folder)
            try:
                svg = Path(compile_one(*args, **kwargs))
            finally:
                config.tex_dir = previous
            copy = own / svg.name
            if not copy.exists():
                shutil.copyfile(svg, copy)
        return copy

    return shared


def share_texts(folder: Path) -> None:
    """Share the Pango texts this process makes through ``folder`` (:func:`scenes.kit.text.share_made_texts`)."""
    from scenes.kit.text import share_made_texts

    install("text sharing", lambda: [
        Step("made texts shared", lambda: share_made_texts(folder), lambda: share_made_texts(None))
    ])


def share_model_heads(folder: Path) -> None:
    """Read a real model's head kept in ``folder`` rather than running the model, and keep it there when
    this process computes it (:func:`attention_math.minilm.share_heads`): each scene of the real-head
    lecture shows the head the bundle computed once."""
    from attention_math.minilm import share_heads

    install("model heads", lambda: [
        Step("model heads shared", lambda: share_heads(folder), lambda: share_heads(None))
    ])
