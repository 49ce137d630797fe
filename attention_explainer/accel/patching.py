"""Changes to other modules made all together or not at all, and undone the last first.

A :class:`Patch` replaces one attribute of a class or module, named by its import path
(``"manim.camera.camera:Camera"``), with what its ``make`` builds from the attribute as it is;
it may record the attribute's parameter names where it was tested. A :class:`Step` is any
other change, given with its undo (a hook added to a list, a switch turned on). A
:class:`PatchGroup` checks every patch first (the owner can be imported and has the attribute,
with the recorded parameters), then applies them in order, and undoes them in reverse: an
attribute that was the owner's own gets its object back (the very object, not a copy), one it
inherited is deleted, so it is inherited again.

The accelerator (:mod:`attention_explainer.accel`) and the runner's hooks
(:mod:`attention_explainer.runner`) are both made of these.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["Patch", "PatchError", "PatchGroup", "Step", "parameter_names"]


class PatchError(RuntimeError):
    """A change that does not fit what it changes: nothing of its group was applied."""


def parameter_names(function: Any) -> tuple[str, ...] | None:
    """The names of ``function``'s parameters, ``*args`` and ``**kwargs`` with their stars;
    ``None`` when it has no signature to read."""
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):
        return None
    return tuple(_starred(parameter) for parameter in signature.parameters.values())


def _starred(parameter: inspect.Parameter) -> str:
    if parameter.kind is inspect.Parameter.VAR_POSITIONAL:
        return f"*{parameter.name}"
    if parameter.kind is inspect.Parameter.VAR_KEYWORD:
        return f"**{parameter.name}"
    return parameter.name


def resolve(path: str) -> Any:
    """The object at ``"package.module:Class.Nested"`` (or a module, ``"package.module"``)."""
    module, _, qualified = path.partition(":")
    found: Any = importlib.import_module(module)
    for part in qualified.split(".") if qualified else ():
        found = getattr(found, part)
    return found


_MISSING = object()


@dataclass(frozen=True)
class Patch:
    """``owner``'s attribute ``name`` replaced by ``make(the attribute as it is)``.

    ``parameters``: the attribute's parameter names where this was tested (as
    :func:`parameter_names` gives them), checked before anything is applied; ``None`` checks
    only that the attribute is there.
    """

    owner: str
    name: str
    make: Callable[[Any], Any]
    parameters: tuple[str, ...] | None = None

    @property
    def label(self) -> str:
        return f"{self.owner.replace(':', '.')}.{self.name}"

    def problem(self) -> str | None:
        """Why this patch does not fit what is installed, in a few words; ``None`` when it does."""
        try:
            owner = resolve(self.owner)
        except (ImportError, AttributeError):
            return f"{self.owner.replace(':', '.')} is missing"
        attribute = getattr(owner, self.name, _MISSING)
        if attribute is _MISSING:
            return f"{self.label} is missing"
        if self.parameters is not None:
            found = parameter_names(attribute)
            if found != self.parameters:
                shown = "no signature" if found is None else f"({', '.join(found)})"
                return f"{self.label} takes {shown}, expected ({', '.join(self.parameters)})"
        return None

    def apply(self) -> Callable[[], None]:
        """Replace the attribute; return what puts it back."""
        owner = resolve(self.owner)
        own = vars(owner).get(self.name, _MISSING)  # the owner's own object (a descriptor as it is), if any
        setattr(owner, self.name, self.make(getattr(owner, self.name)))

        def undo() -> None:
            if own is _MISSING:
                delattr(owner, self.name)  # inherited again
            else:
                setattr(owner, self.name, own)

        return undo


@dataclass(frozen=True)
class Step:
    """Any other change, ``do``, with what undoes it."""

    name: str
    do: Callable[[], None]
    undo: Callable[[], None]

    def problem(self) -> str | None:
        return None

    def apply(self) -> Callable[[], None]:
        self.do()
        return self.undo


class PatchGroup:
    """Changes applied in order, all or none, and undone in reverse (applying twice changes nothing)."""

    def __init__(self, name: str, changes: Sequence[Patch | Step]) -> None:
        self.name = name
        self.changes = tuple(changes)
        self._undo: list[Callable[[], None]] = []

    def __repr__(self) -> str:
        return f"PatchGroup({self.name!r}, {len(self.changes)} changes, {'applied' if self.applied else 'not applied'})"

    @property
    def applied(self) -> bool:
        return bool(self._undo)

    def problems(self) -> list[str]:
        """Why the changes do not fit, one line each (none: they do)."""
        return [problem for change in self.changes if (problem := change.problem()) is not None]

    def apply(self, *, checked: bool = False) -> None:
        """Check every change, then apply them in order; :class:`PatchError` (nothing applied)
        when one does not fit; a change that fails as it is applied undoes the ones before it.

        ``checked``: the caller checked the changes already, with others that patch the same
        attributes before these (which would no longer see what they were tested on).
        """
        if self._undo:
            return
        problems = [] if checked else self.problems()
        if problems:
            more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
            raise PatchError(f"{self.name}: {problems[0]}{more}")
        try:
            for change in self.changes:
                self._undo.append(change.apply())
        except BaseException:
            self.undo()
            raise

    def undo(self) -> None:
        """Undo what was applied, the last change first."""
        while self._undo:
            self._undo.pop()()
