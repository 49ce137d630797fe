"""The bundle's manim process: plain ``manim render``, plus what only the bundle needs.

::

    python -m attention_explainer.runner [--progress] [--last-still] [--tex-dir DIR] [--text-dir DIR]
                                         [--head-dir DIR] [--hold-after N --hold-file PATH] -- MANIM-RENDER-ARGS

installs its hooks into this process, then runs manim's own command line in it
(``manim render MANIM-RENDER-ARGS``) and exits with manim's status, but for a Ctrl-C, which
ends it with 130 (128 + SIGINT), not manim's "Aborted!" and 1: the bundle then knows the render
was interrupted, not failed. The hooks:

``--progress``
    After every ``play``, one line on stderr: ``ATTENTION-PROGRESS <plays so far> <caption>``,
    read by the bundle's progress display.
``--tex-dir DIR``
    Compile TeX into ``DIR``, shared by the bundle's parallel manim processes, so each formula
    is compiled once per bundle rather than once per scene.
``--text-dir DIR``
    Share the Pango texts the scenes make through ``DIR`` (:func:`scenes.kit.text.share_made_texts`):
    the bundle's processes make many of the same numbers and labels, and each is made once.
``--head-dir DIR``
    Read a real model's head from ``DIR`` where the bundle kept it (:func:`attention_math.minilm.share_heads`):
    a scene of the real-head lecture then neither reads the weights nor runs the model again.
``--voice DIR``
    Speak every beat's caption (Piper, the ``voice`` extra; see :mod:`attention_explainer.voice`)
    with its audio cached in ``DIR``: the beat lasts at least as long as the sentence, the audio
    goes into the clip, the subtitle spans the speech, and the clip's audio lasts as long as its
    video (silence after the last sentence).
``--burn-captions``
    Draw each beat's caption into the frames, in the quiet band at the bottom
    (:mod:`attention_explainer.outputs.captions`), while its subtitle shows.
``--forward-slides``
    A slide variant (``scenes/slides.py``) writes no reversed copies of its slides: the HTML
    deck only plays forward, and reversing every slide cost more than the render.
``--slide-notes``
    Each slide of a slide variant carries its beat's caption as speaker notes, escaped so that
    the deck shows it literally (:func:`attention_explainer.escape.speaker_notes`).
``--last-still``
    Save the last frame written to each movie beside it, as ``<movie name>.last.png``
    (:func:`still_path`): the picture as drawn, lossless, for the bundle's stills and the
    lecturer's slides, with no decoding of the clip afterwards (which, with one stream per scene,
    decoded up to six seconds of 1080p video per scene: 1 to 2.5 s each). An opaque frame is
    saved as RGB, a transparent one as RGBA.
``--stock-manim``
    Leave manim's hot paths as manim has them. Without it the runner calls
    :func:`attention_explainer.accel.enable` (the same frames, a quicker render; a test
    compares), which leaves manim as it is where it does not fit the manim installed.
``--hold-after N --hold-file PATH``
    For tests only: after play ``N`` write ``PATH`` and wait, drawing nothing more, until
    ``PATH`` is removed or the process is stopped. A test that must stop a render at a known
    moment waits for ``PATH`` instead of racing the render. (The bundle passes these on from
    ``ATTENTION_HOLD_AT=play:N`` and ``ATTENTION_HOLD_FILE``; see :func:`hold`.)

Each hook is a named group of changes (:mod:`attention_explainer.accel.patching`), installed
once however often it is asked for, and undone with the rest by :func:`remove_hooks`, the last
first; :func:`main` undoes them, and the accelerator, once manim has returned. A hook that
patches manim checks first that what it wraps is there, with the parameters it passes on: the
still, the shared TeX folder and the forward-only slides, which have a fallback, are then left
out with one line on stderr; a hook asked for that has none (the narration, burnt-in captions)
stops the render with an error.

The latex processes manim starts never run programs (``shell_escape=f``). Nothing here runs on
importing :mod:`scenes`: ``manim render scenes/x.py X`` stays plain manim.
"""

from __future__ import annotations

import argparse
import functools
import os
import shutil
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from attention_explainer import accel
from attention_explainer.accel.patching import Patch, PatchError, PatchGroup, Step
from attention_explainer.accel.versions import write_frame_parameters

__all__ = [
    "PROGRESS",
    "hold",
    "install_forward_slides",
    "install_hold",
    "install_last_still",
    "install_narration",
    "install_progress",
    "install_slide_notes",
    "installed_hooks",
    "main",
    "remove_hooks",
    "share_tex_cache",
    "share_texts",
    "still_path",
]

PROGRESS = "ATTENTION-PROGRESS"
"""The first word of a progress line."""

HOLD_AT = "ATTENTION_HOLD_AT"
HOLD_FILE = "ATTENTION_HOLD_FILE"
"""Test hooks, read by the bundle: hold at ``play:N`` (in the manim process, after play ``N``)
or at ``staged`` (in the bundle, once the new files are staged and before any is swapped in),
with ``ATTENTION_HOLD_FILE`` as the marker. Never set them outside tests."""

_INSTALLED: dict[str, PatchGroup] = {}  # the hooks in place in this process, by name, in the order installed
_WRITER = "manim.scene.scene_file_writer:SceneFileWriter"


def hold(marker: Path) -> None:
    """Write ``marker`` and wait until it is removed (or this process is stopped); tests only."""
    marker.parent.mkdir(parents=True, exist_ok=True)
    marker.write_text(f"{os.getpid()}\n", encoding="utf-8")
    while marker.exists():
        time.sleep(0.02)


def _after_play_hooks() -> list[Callable[[Any], None]]:
    # the scenes' own switches for these hooks are the runner's flags, never the environment
    for name in ("ATTENTION_PROGRESS", "ATTENTION_TEX_DIR"):
        os.environ.pop(name, None)
    from scenes.base import AFTER_PLAY_HOOKS

    return AFTER_PLAY_HOOKS


def _install(name: str, changes: Callable[[], Sequence[Patch | Step]]) -> None:
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


def _listed(name: str, hooks: list[Any], hook: Any) -> Step:
    """``hook`` added to the list ``hooks`` (the scenes' after-play or beat hooks), and taken out again."""
    return Step(name, lambda: hooks.append(hook), lambda: hooks.remove(hook))


def _beat_hooks() -> list[Callable[[Any, str], float]]:
    from scenes.base import BEAT_HOOKS

    return BEAT_HOOKS


class _Narration:
    """The beat being narrated: its caption, where it started, how long it is spoken."""

    def __init__(self, voice_cache: Path | None, burn: bool) -> None:
        self.voice: Any = None
        if voice_cache is not None:
            from .voice import Voice

            self.voice = Voice(voice_cache)
        self.burn = burn
        self.scene: Any = None
        self.caption = ""
        self.start = 0.0
        self.until: float | None = None  # the end of the speech; None: the end of the beat
        self.beats_before = 0

    def begin_beat(self, scene: Any, caption: str) -> float:
        """A beat starts: speak its caption (the audio goes in at this moment); return its seconds."""
        self.scene, self.caption, self.start = scene, caption, scene.renderer.time
        self.beats_before = len(scene.beats)
        spoken = 0.0
        if self.voice is not None:
            said = self.voice.say(caption)
            if said is not None:
                path, spoken = said
                scene.add_sound(str(path))
        self.until = self.start + spoken if spoken else None
        return spoken

    def shown_at(self, time: float) -> str | None:
        """The caption the frame starting at ``time`` shows, if any (while its subtitle shows)."""
        if self.scene is None or len(self.scene.beats) > self.beats_before:
            return None  # no beat yet, or the last one ended
        if time < self.start - 1e-9 or (self.until is not None and time >= self.until - 1e-9):
            return None
        return self.caption


def install_narration(voice_cache: Path | None, burn: bool) -> None:
    """Speak each beat's caption (``voice_cache``: Piper's audio cache) and/or burn it into the frames."""

    def changes() -> list[Patch | Step]:
        narration = _Narration(voice_cache, burn)

        def narrate(scene: Any, caption: str) -> float:
            return narration.begin_beat(scene, caption)

        made: list[Patch | Step] = [_listed("each beat narrated", _beat_hooks(), narrate)]
        if voice_cache is not None:
            made.append(_pad_audio_to_video())
        if burn:
            made.append(_burn_captions(narration))
        return made

    _install("narration", changes)


def _pad_audio_to_video() -> Patch:
    """Every clip gets an audio track as long as its video: silence up to the last frame."""

    def padded(finished: Callable[..., None]) -> Callable[..., None]:
        from pydub import AudioSegment

        @functools.wraps(finished)  # a later hook checks the parameters of what it wraps
        def scene_finished(self: Any, scene: Any) -> None:
            if self.num_plays:
                self.file_writer.add_audio_segment(AudioSegment.silent(0), time=self.time)
            finished(self, scene)

        return scene_finished

    return Patch("manim.renderer.cairo_renderer:CairoRenderer", "scene_finished", padded, ("self", "scene"))


def _frame_writer(around: Callable[[Callable[[Any, Any, int], None], Any, Any, int], None]) -> Patch:
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

    return Patch(_WRITER, "write_frame", wrap, parameters)


def _burn_captions(narration: _Narration) -> Patch:
    """Draw the narrated caption into each frame as it goes to the encoder."""
    return _frame_writer(lambda write, writer, frame, times: _caption_burnt(narration, write, writer, frame, times))


def _caption_burnt(narration: _Narration, write: Callable[[Any, Any, int], None], writer: Any, frame: Any,
                   num_frames: int) -> None:
    """``frame``, shown ``num_frames`` times, written by ``write`` with the caption shown at each of those times."""
    from .outputs.captions import burn

    scene = narration.scene
    if scene is None or not hasattr(frame, "shape"):
        write(writer, frame, num_frames)
        return
    dt = 1 / scene.camera.frame_rate
    first = scene.renderer.time - num_frames * dt  # the renderer counts the frames before writing
    runs: list[tuple[str | None, int]] = []
    for n in range(num_frames):
        shown = narration.shown_at(first + n * dt)
        if runs and runs[-1][0] == shown:
            runs[-1] = (shown, runs[-1][1] + 1)
        else:
            runs.append((shown, 1))
    for shown, count in runs:
        write(writer, frame if shown is None else burn(frame, shown), count)


def install_forward_slides() -> None:
    """Slide variants skip their reversed slides (the HTML deck never plays backwards)."""
    _install("forward slides", lambda: [Patch("manim_slides.slide.base:BaseSlide", "skip_reversing", lambda _: True)])


def install_slide_notes() -> None:
    """Each slide carries its beat's caption as speaker notes (the deck shows them literally)."""
    from .escape import speaker_notes

    def note(scene: Any, caption: str) -> float:
        # the slide the beat plays in is the one manim-slides closes at the beat's end
        pending = getattr(scene, "_base_slide_config", None)
        if pending is not None:
            scene._base_slide_config = pending.model_copy(update={"notes": speaker_notes(caption)})
        return 0.0

    _install("slide notes", lambda: [_listed("each slide's notes its caption", _beat_hooks(), note)])


def install_progress() -> None:
    """Print ``ATTENTION-PROGRESS <plays> <caption>`` on stderr after every play."""

    def report_progress(scene: Any) -> None:
        step = str(scene.current_step).replace("\n", " ")
        print(f"{PROGRESS} {scene.renderer.num_plays} {step}", file=sys.stderr, flush=True)

    _install("progress", lambda: [_listed("a progress line after every play", _after_play_hooks(), report_progress)])


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

    _install("last still", lambda: [
        _frame_writer(kept),
        Patch(_WRITER, "finish", saved_stills, ("self",)),
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

    _install("hold", lambda: [_listed("the render held after a play", _after_play_hooks(), hold_render)])


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
    _install("TeX cache", lambda: [Patch("manim.mobject.text.tex_mobject", "tex_to_svg_file", shared_by_processes)])


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

    _install("text sharing", lambda: [
        Step("made texts shared", lambda: share_made_texts(folder), lambda: share_made_texts(None))
    ])


def share_model_heads(folder: Path) -> None:
    """Read a real model's head kept in ``folder`` rather than running the model, and keep it there when
    this process computes it (:func:`attention_math.minilm.share_heads`): each scene of the real-head
    lecture shows the head the bundle computed once."""
    from attention_math.minilm import share_heads

    _install("model heads", lambda: [
        Step("model heads shared", lambda: share_heads(folder), lambda: share_heads(None))
    ])


def _parse(argv: Sequence[str]) -> tuple[argparse.Namespace, list[str]]:
    parser = argparse.ArgumentParser(
        prog="python -m attention_explainer.runner",
        description="manim render, with the attention-explainer bundle's hooks installed",
    )
    parser.add_argument("--progress", action="store_true", help="a progress line on stderr after every play")
    parser.add_argument("--tex-dir", metavar="DIR", type=Path, help="a TeX folder shared by parallel renders")
    parser.add_argument("--text-dir", metavar="DIR", type=Path, help="a folder of made texts shared by renders")
    parser.add_argument("--head-dir", metavar="DIR", type=Path, help="a folder of model heads shared by renders")
    parser.add_argument("--voice", metavar="DIR", type=Path, help="speak every caption; audio cached in DIR")
    parser.add_argument("--burn-captions", action="store_true", help="draw every caption into the frames")
    parser.add_argument("--forward-slides", action="store_true", help="slide variants write no reversed slides")
    parser.add_argument("--slide-notes", action="store_true", help="each slide's speaker notes are its caption")
    parser.add_argument("--last-still", action="store_true", help="save each movie's last frame beside it")
    parser.add_argument("--stock-manim", action="store_true", help="leave manim's hot paths as they are (no accel)")
    parser.add_argument("--hold-after", metavar="N", type=int, help="tests only: hold the render after play N")
    parser.add_argument("--hold-file", metavar="PATH", type=Path, help="tests only: the hold's marker file")
    argv = list(argv)
    if "--" not in argv:
        parser.error("expected -- before the arguments for manim render")
    split = argv.index("--")
    options = parser.parse_args(argv[:split])
    if (options.hold_after is None) != (options.hold_file is None):
        parser.error("--hold-after and --hold-file go together")
    return options, argv[split + 1 :]


def _optional(install: Callable[[], None]) -> None:
    """``install()``; where its hook does not fit this manim, one line on stderr and the render
    goes on without it (each has a fallback: the bundle decodes the still from the clip, TeX
    compiles in each process, slides are reversed too)."""
    try:
        install()
    except PatchError as error:
        print(f"attention-explainer: the runner's hook left out: {error}", file=sys.stderr, flush=True)


def _install_hooks(options: argparse.Namespace) -> None:
    """The hooks the options ask for; :class:`PatchError` where one that has no fallback does not fit."""
    if options.last_still:  # before the captions' hook, which then gives it the frames with captions
        _optional(install_last_still)
    if options.progress:
        install_progress()
    if options.tex_dir is not None:
        tex = options.tex_dir.absolute()
        _optional(lambda: share_tex_cache(tex))
    if options.text_dir is not None:
        share_texts(options.text_dir.absolute())
    if options.head_dir is not None:
        share_model_heads(options.head_dir.absolute())
    if options.voice is not None or options.burn_captions:
        install_narration(options.voice.absolute() if options.voice else None, options.burn_captions)
    if options.forward_slides:
        _optional(install_forward_slides)
    if options.slide_notes:
        install_slide_notes()
    if options.hold_after is not None:
        install_hold(options.hold_after, options.hold_file.absolute())


INTERRUPTED = 130
"""The runner's status after a Ctrl-C: 128 + SIGINT, the shell's convention (manim's own is 1)."""


def _manim_render(manim_args: Sequence[str]) -> int:
    """``manim render MANIM-ARGS`` in this process; manim's status, or :data:`INTERRUPTED`.

    Click, run standalone, reports a Ctrl-C as a failure ("Aborted!", exit 1), which the bundle
    cannot tell from a failure of the scene; run with ``standalone_mode=False`` it hands the
    Ctrl-C back, and its other outcomes are reported here as click would report them.
    """
    import click
    from manim.__main__ import main as manim_main

    try:
        status = manim_main(["render", *manim_args], prog_name="manim", standalone_mode=False)
    except click.Abort as abort:  # click's Ctrl-C, or the end of an input it prompted for
        if isinstance(abort.__cause__, KeyboardInterrupt):
            return INTERRUPTED
        print("Aborted!", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return INTERRUPTED
    except click.ClickException as error:  # a usage error: shown as click shows it
        error.show()
        return error.exit_code
    except SystemExit as stop:  # manim's own exit (a failed scene: 1)
        if stop.code is None or isinstance(stop.code, int):
            return stop.code or 0
        raise
    return status if isinstance(status, int) else 0  # an int from ``--help`` and the like; else manim's return


def main(argv: Sequence[str] | None = None) -> int:
    """Install the hooks the options ask for (and the accelerator, unless ``--stock-manim``), run
    ``manim render`` in-process, undo them, return manim's status."""
    options, manim_args = _parse(sys.argv[1:] if argv is None else argv)
    # TeX typesets only the scenes' own formulas, and never runs programs: kpathsea takes this
    # from the environment before texmf.cnf, and the latex processes manim starts inherit it.
    os.environ["shell_escape"] = "f"
    enabled_here = not options.stock_manim and not accel.is_enabled() and accel.enable()
    try:
        _install_hooks(options)
        status = _manim_render(manim_args)
    except PatchError as error:
        status = 1
        print(f"error: {error}", file=sys.stderr, flush=True)
    # once manim has returned (an interrupted render's encoder threads may still be at work: left as they are)
    remove_hooks()
    if enabled_here:
        accel.disable()
    return status


if __name__ == "__main__":
    sys.exit(main())
