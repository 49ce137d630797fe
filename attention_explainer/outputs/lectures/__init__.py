"""Each lecture's handout and notebook: which steps it writes as tables, which cells its notebook runs.

One module per lecture builds its :class:`~attention_explainer.outputs.steps.LectureSteps`;
:data:`LECTURE_STEPS` holds them by the lecture's name (``--lecture``, the names of
:data:`scenes.plan.LECTURES`). The handout, the notebook and the page read a lecture's steps from
here and write them the same way for every lecture. A new lecture adds its module and its line.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from ..steps import LectureSteps
from .flash_attention import FLASH
from .inference import INFERENCE
from .learned import LEARNED
from .masked import MASKED
from .multi_head import MULTI_HEAD
from .real_head import REAL_HEAD
from .rope import ROPE
from .self_attention import SELF_ATTENTION

__all__ = ["LECTURE_STEPS", "lecture_steps"]

LECTURE_STEPS: Mapping[str, LectureSteps] = MappingProxyType(
    {
        "self-attention": SELF_ATTENTION,
        "masked": MASKED,
        "multi-head": MULTI_HEAD,
        "learned": LEARNED,
        "real-head": REAL_HEAD,
        "rope": ROPE,
        "inference": INFERENCE,
        "flash-attention": FLASH,
    }
)
"""Every lecture's handout and notebook, by the lecture's name; read-only."""


def lecture_steps(lecture: str) -> LectureSteps:
    """The handout and notebook of ``lecture``; a ``KeyError`` naming the lectures that have one.

    >>> from attention_math import preset
    >>> [table.stem for table in lecture_steps("self-attention").tables(preset("raw-dot-product"))][:4]
    ['X', 'W_Q', 'W_K', 'W_V']
    """
    try:
        return LECTURE_STEPS[lecture]
    except KeyError:
        raise KeyError(f"lecture: no handout for {lecture!r}; expected one of {', '.join(LECTURE_STEPS)}") from None
