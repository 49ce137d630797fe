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
    (:func:`attention_explainer.still_hooks.still_path`): the picture as drawn, lossless, for the
    bundle's stills and the lecturer's slides, with no decoding of the clip afterwards (which,
    with one stream per scene, decoded up to six seconds of 1080p video per scene: 1 to 2.5 s each). An opaque frame is
    saved as RGB, a transparent one as RGBA.
``--stock-manim``
    Leave manim's hot paths as manim has them. Without it the runner calls
    :func:`attention_explainer.accel.enable` (the same frames, a quicker render; a test
    compares), which leaves manim as it is where it does not fit the manim installed.
``--hold-after N --hold-file PATH``
    For tests only: after play ``N`` write ``PATH`` and wait, drawing nothing more, until
    ``PATH`` is removed or the process is stopped. A test that must stop a render at a known
    moment waits for ``PATH`` instead of racing the render. (The bundle passes these on from
    ``ATTENTION_HOLD_AT=play:N`` and ``ATTENTION_HOLD_FILE``; see :func:`attention_explainer.hooks.hold`.)

Each hook is a named group of changes (:mod:`attention_explainer.accel.patching`), installed
once however often it is asked for, and undone with the rest by
:func:`attention_explainer.hooks.remove_hooks`, the last first. The registry and the small hooks
(progress, hold, slides) are in :mod:`attention_explainer.hooks`, the others in
:mod:`~attention_explainer.narration_hooks`, :mod:`~attention_explainer.still_hooks` and
:mod:`~attention_explainer.sharing_hooks`; this module is the command line that installs them.
:func:`main` undoes them, and the accelerator, once manim has returned. A hook that patches manim
checks first that what it wraps is there, with the parameters it passes on: the still, the
shared TeX folder and the forward-only slides, which have a fallback, are then left out with
one line on stderr; a hook asked for that has none (the narration, burnt-in captions)
stops the render with an error.

The latex processes manim starts never run programs (``shell_escape=f``). Nothing here runs on
importing :mod:`scenes`: ``manim render scenes/x.py X`` stays plain manim.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from attention_explainer import accel
from attention_explainer.accel.patching import PatchError
from attention_explainer.hooks import (
    install_forward_slides,
    install_hold,
    install_progress,
    install_slide_notes,
    remove_hooks,
)
from attention_explainer.narration_hooks import install_narration
from attention_explainer.sharing_hooks import share_model_heads, share_tex_cache, share_texts
from attention_explainer.still_hooks import install_last_still

__all__ = ["INTERRUPTED", "main"]


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
