"""The accelerator: faster versions of manim's hot paths, the same frames with less CPU.

The bundle's manim processes (:mod:`attention_explainer.runner`) call :func:`enable`; a plain
``manim render scenes/x.py X``, ``attention-explainer render --stock-manim`` or
``ATTENTION_STOCK_MANIM=1`` runs manim as it is. Each idea is a module here, and each gives
manim's own result (the tests compare frames pixel for pixel, path elements, interpolated
values bit for bit, the pictures given to the encoder):

:mod:`.family`
    ``Mobject.get_family`` walking the tree once.
:mod:`.cairo_paths`
    a glyph's path handed to Cairo as its own path data in one call, kept by its points.
:mod:`.drawing`
    the kind of drawing found once per type; the same Cairo calls with less Python around
    them, none for a mobject faded out but left in the scene.
:mod:`.encoding`
    x264 ``veryfast`` in one thread; frames converted to YUV from their own memory, a held
    frame once, a moving one only where it changed; the voice encoded at its own rate.
:mod:`.frame_pool`
    the frame drawn handed to the encoder without a copy, the next drawn into an array the
    encoder has let go of.
:mod:`.transforms`
    a Transform's submobjects interpolated in one batch.
:mod:`.still_frames`
    still mobjects drawn after moving ones drawn once per play, into its still frame.
:mod:`.background_rows`
    a frame started from the still frame by copying back only the rows drawn over since.
:mod:`.one_stream`
    a scene's plays encoded into one stream, not a partial movie each.
:mod:`.memory`
    freed frames kept by glibc's ``malloc``.

They replace private parts of manim, so :func:`enable` first checks the manim it finds: its
version must be one of :data:`TESTED_MANIM`, and every attribute replaced must be there with
the parameters it had there (:mod:`.patching`). Manim 0.22 rebuilt the file writer: the encoding
and the one stream patch its segment encoder and its new signatures there, 0.21's encode job
here (:mod:`.versions` tells which); the frames compared are the same on both. On any
mismatch nothing is replaced, one line says why on stderr (once per process; ``attention-explainer
render`` shows it once for all its scenes), and the render runs on manim as it is: slower, the
same frames.
"""

from __future__ import annotations

import sys

from . import (
    background_rows,
    cairo_paths,
    drawing,
    encoding,
    family,
    frame_pool,
    memory,
    one_stream,
    still_frames,
    transforms,
)
from .patching import PatchGroup

__all__ = ["TESTED_MANIM", "disable", "enable", "is_enabled"]

TESTED_MANIM = ("0.21.0", "0.22.0")
"""The manim versions the accelerator was tested on (its frames compared with manim's own)."""

_ENABLED: list[PatchGroup] = []  # applied, in the order applied
_WARNED: list[str] = []  # the one line said, once per process


def _groups() -> list[PatchGroup]:
    """Every idea's patches, in the order they are applied (one stream wraps the encoder's
    stream opener, so it comes after the encoding's)."""
    return [
        PatchGroup("the family walk", family.patches()),
        PatchGroup("Cairo paths", cairo_paths.patches()),
        PatchGroup("drawing", drawing.patches()),
        PatchGroup("encoding", encoding.patches()),
        PatchGroup("the frame pool", frame_pool.patches()),
        PatchGroup("transforms", transforms.patches()),
        PatchGroup("still frames", still_frames.patches()),
        PatchGroup("background rows", background_rows.patches()),
        PatchGroup("one stream", one_stream.patches()),
        PatchGroup("memory", memory.patches()),
    ]


def _manim_version() -> str | None:
    try:
        import manim
    except ImportError:
        return None
    return str(getattr(manim, "__version__", "unknown"))


def _problems(groups: list[PatchGroup]) -> list[str]:
    """Why the accelerator does not fit the manim installed, one line each (none: it fits)."""
    version = _manim_version()
    if version is None:
        return ["manim is not installed"]
    if version not in TESTED_MANIM:
        return [f"manim {version} is installed, the accelerator was tested on {', '.join(TESTED_MANIM)}"]
    return [f"{group.name}: {problem}" for group in groups for problem in group.problems()]


def _warn_once(problems: list[str]) -> None:
    if _WARNED:
        return
    more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
    line = f"attention-explainer: rendering with manim as it is (slower, the same frames): {problems[0]}{more}"
    _WARNED.append(line)
    print(line, file=sys.stderr, flush=True)


def enable() -> bool:
    """Put the accelerator in place of manim's own hot paths; ``True`` when it is in place.

    Nothing is replaced, and ``False`` returned, when the installed manim is not one it was
    tested on or any attribute it replaces is missing or takes other parameters: one line on
    stderr says why, once per process. A second call changes nothing.
    """
    if _ENABLED:
        return True
    groups = _groups()
    problems = _problems(groups)
    if problems:
        _warn_once(problems)
        return False
    try:
        for group in groups:
            group.apply(checked=True)  # all checked above, against manim as it is
            _ENABLED.append(group)
    except BaseException:
        disable()
        raise
    return True


def disable() -> None:
    """Put manim's own back, the last patch first (the allocator's settings stay: :mod:`.memory`)."""
    while _ENABLED:
        _ENABLED.pop().undo()


def is_enabled() -> bool:
    """Is the accelerator in place?"""
    return bool(_ENABLED)
