"""Each lecture's handout and notebook: which steps it writes as tables, which cells its notebook runs.

A lecture declares its :class:`~attention_explainer.outputs.steps.LectureSteps` in its own folder
(``scenes/<folder>/handout.py``) and names it in its ``Lecture`` (:mod:`scenes.registry`); the handout,
the notebook and the page read it from here and write it the same way for every lecture.
"""

from __future__ import annotations

from scenes.registry import lecture

from .steps import LectureSteps

__all__ = ["lecture_steps"]


def lecture_steps(name: str) -> LectureSteps:
    """The handout and notebook of lecture ``name``; a ``KeyError`` naming the known lectures.

    >>> from attention_math import preset
    >>> [table.stem for table in lecture_steps("self-attention").tables(preset("raw-dot-product"))][:4]
    ['X', 'W_Q', 'W_K', 'W_V']
    """
    declared = lecture(name)
    steps = declared.load_steps()
    if not isinstance(steps, LectureSteps):  # a third party's declaration naming something else
        raise TypeError(f"lecture {name!r}: {declared.steps} is a {type(steps).__name__}, not a LectureSteps")
    return steps
