"""The runner's hooks: named groups of changes to manim and the scenes, installed once, undone the last first.

Each hook is a :class:`attention_explainer.accel.patching.PatchGroup`: what it patches is checked first (it
is there, with the parameters the hook passes on), and either all of it goes in or none. Here are the
registry (:func:`install`, :func:`installed_hooks`, :func:`remove_hooks`), what the hooks are built from
(the scenes' after-play and beat hook lists, a wrapped ``write_frame``) and the small hooks: the progress
lines, the tests' hold, the slide variants' forward-only slides and speaker notes. The others have modules
of their own: :mod:`~attention_explainer.narration_hooks`, :mod:`~attention_explainer.still_hooks`,
:mod:`~attention_explainer.sharing_hooks`. :mod:`attention_explainer.runner` installs what its flags ask for.
"""

from __future__ import annotations

import functools
import os
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from .accel.patching import Patch, PatchGroup, Step
from .accel.versions import write_frame_parameters

__all__ = [
    "HOLD_AT",
    "HOLD_FILE",
    "PROGRESS",
    "WRITER",
    "after_play_hooks",
    "beat_hooks",
    "frame_writer",
    "hold",
    "install",
    "install_forward_slides",
    "install_hold",
    "install_progress",
    "install_slide_notes",
    "installed_hooks",
    "listed",
    "remove_hooks",
]

PROGRESS = "ATTENTION-PROGRESS"
"""The first word of a progress line."""

HOLD_AT = "ATTENTION_HOLD_AT"
HOLD_FILE = "ATTENTION_HOLD_FILE"
"""Test hooks, read by the bundle: hold at ``play:N`` (in the manim process, after play ``N``)
or at ``staged`` (in the bundle, once the new files are staged and before any is swapped in),
with ``ATTENTION_HOLD_FILE`` as the marker. Never set them outside tests."""

_INSTALLED: dict[str, PatchGroup] = {}  # the hooks in place in this process, by name, in the order installed
WRITER = "manim.scene.scene_file_writer:SceneFileWriter"
"""The class whose ``write_frame`` the frame hooks wrap."""


def hold(marker: Path) -> None:
    """Write ``marker`` and wait until it is removed (or this process is stopped); tests only."""
    marker.parent.mkdir(parents=True, exist_ok=True)
    marker.write_text(f"{os.getpid()}\n", encoding="utf-8")
    while marker.exists():
        time.sleep(0.02)


def after_play_hooks() -> list[Callable[[Any], None]]:
    """The scenes' list of what runs after every play (:data:`scenes.base.AFTER_PLAY_HOOKS`)."""
    # the scenes' own switches for these hooks are the runner's flags, never the environment
    for name in ("ATTENTION_PROGRESS", "ATTENTION_TEX_DIR"):
        os.environ.pop(name, None)
    from scenes.base import AFTER_PLAY_HOOKS

    return AFTER_PLAY_HOOKS


def install(name: str, changes: Callable[[], Sequence[Patch | Step]]) -> None:
    """The hook ``name``, made of ``changes()``, unless it is in place already; :class:`PatchError`
    (nothing of it installed) where it does not fit the manim installed."""
    if name in _INSTALLED:
        return
    group = PatchGroup(name, changes())
    group.apply()
    _INSTALLED[name] = group


def installed_hooks() -> list[str]:
    """The names of the hooks in place, in the order installed."""
    return list(_INSTALLED)


def remove_hooks() -> None:
    """Undo every hook installed here, the last first."""
    while _INSTALLED:
        _INSTALLED.pop(next(reversed(_INSTALLED))).undo()


def listed(name: str, hooks: list[Any], hook: Any) -> Step:
    """``hook`` added to the list ``hooks`` (the scenes' after-play or beat hooks), and taken out again."""
    return Step(name, lambda: hooks.append(hook), lambda: hooks.remove(hook))


def beat_hooks() -> list[Callable[[Any, str], float]]:
    """The scenes' list of what runs as every beat starts (:data:`scenes.base.BEAT_HOOKS`)."""
    from scenes.base import BEAT_HOOKS

    return BEAT_HOOKS


def frame_writer(around: Callable[[Callable[[Any, Any, int], None], Any, Any, int], None]) -> Patch:
    """``SceneFileWriter.write_frame`` replaced by ``around(write, writer, frame, times)``, where
    ``write(writer, frame, times)`` calls what was there. manim 0.21's takes ``(frame_or_renderer,
    num_frames)``, 0.22's ``(pixels, *, repeat)`` (:mod:`attention_explainer.accel.versions`): the
    replacement takes the installed manim's parameters, and passes the count on by its name."""
    parameters = write_frame_parameters()
    count = parameters[2]

    def wrap(write: Callable[..., None]) -> Callable[..., None]:
        def call(writer: Any, frame: Any, times: int) -> None:
            write(writer, frame, **{count: times})

        @functools.wraps(write)  # a later hook checks the parameters of what it wraps
        def write_frame(self: Any, frame: Any, *args: Any, **kwargs: Any) -> None:
            times = args[0] if args else kwargs.get(count, 1)
            around(call, self, frame, times)

        return write_frame

    return Patch(WRITER, "write_frame", wrap, parameters)


def install_forward_slides() -> None:
    """Slide variants skip their reversed slides (the HTML deck never plays backwards)."""
    install("forward slides", lambda: [Patch("manim_slides.slide.base:BaseSlide", "skip_reversing", lambda _: True)])


def install_slide_notes() -> None:
    """Each slide carries its beat's caption as speaker notes (the deck shows them literally)."""
    from .escape import speaker_notes

    def note(scene: Any, caption: str) -> float:
        # the slide the beat plays in is the one manim-slides closes at the beat's end
        pending = getattr(scene, "_base_slide_config", None)
        if pending is not None:
            scene._base_slide_config = pending.model_copy(update={"notes": speaker_notes(caption)})
        return 0.0

    install("slide notes", lambda: [listed("each slide's notes its caption", beat_hooks(), note)])


def install_progress() -> None:
    """Print ``ATTENTION-PROGRESS <plays> <caption>`` on stderr after every play."""

    def report_progress(scene: Any) -> None:
        step = str(scene.current_step).replace("\n", " ")
        print(f"{PROGRESS} {scene.renderer.num_plays} {step}", file=sys.stderr, flush=True)

    install("progress", lambda: [listed("a progress line after every play", after_play_hooks(), report_progress)])


def install_hold(after: int, marker: Path) -> None:
    """Hold the render once ``after`` plays are done (tests only; see :func:`hold`).

    A scene's waits count as plays but run no hooks, so the hold comes at the first hook
    that sees at least ``after`` plays.
    """
    held: list[bool] = []

    def hold_render(scene: Any) -> None:
        if not held and scene.renderer.num_plays >= after:
            held.append(True)
            hold(marker)

    install("hold", lambda: [listed("the render held after a play", after_play_hooks(), hold_render)])
