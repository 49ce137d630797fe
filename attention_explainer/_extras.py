"""The ``video`` extra: what the bundle needs beyond numpy, and the one-line refusal without it.

``pip install attention-explainer`` (or ``pip install .``) installs ``attention_math`` with numpy
alone; the scenes and this command need ``pip install "attention-explainer[video]"``.
"""

from __future__ import annotations

import importlib.util
import sys

__all__ = ["INSTALL_VIDEO", "VIDEO_MODULES", "missing_video_modules", "require_video_extra"]

VIDEO_MODULES = ("manim", "manim_slides", "av", "PIL", "rich", "srt")
"""The import names of the ``video`` extra's packages (``pyproject.toml``)."""

INSTALL_VIDEO = "pip install 'attention-explainer[video]'"


def missing_video_modules() -> list[str]:
    """The modules of the ``video`` extra that cannot be imported here (found, not imported)."""
    return [name for name in VIDEO_MODULES if importlib.util.find_spec(name) is None]


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
