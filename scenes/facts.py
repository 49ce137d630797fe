"""Facts: where each number on screen, or in a caption, comes from.

A scene never types a digit. It names a :class:`Fact` (a field of a trace, a token's position,
a size of the scenario) and draws or says its text; the scene base records each one, so the
tests can derive every number again from ``attention_math`` and compare.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from manim import Mobject

from scenes.kit.text import MAX_TOKEN_CHARS, shorten_token

__all__ = [
    "Fact", "Plotted", "Relation", "Shown", "TokenPart", "position", "query_number", "scene_number", "size", "value",
]


@dataclass(frozen=True)
class Fact:
    """Where one number on screen (or in a caption) comes from.

    ``source`` is one of:

    - a name the scene registered with :meth:`ExplainerScene.add_source` (``"trace"``,
      ``"step"``, ``"causal"``, ...): the number is ``field[index]`` of that object, summed
      when ``reduce == "sum"``, its size when ``reduce == "magnitude"`` (a term written after
      its own sign);
    - ``"scenario"``: a size of the scenario, ``field`` one of ``n_tokens``, ``d_in``,
      ``d_k``, ``d_v``, or its ``precision``;
    - ``"position"``: the number of a token or a dimension, counted from 1 (``index[0] + 1``);
    - ``"query"``: the query token's number, counted from 1;
    - ``"lecture"``: the number of scene ``field`` in the lecture.
    """

    source: str
    field: str = ""
    index: tuple[int, ...] = ()
    reduce: str | None = None


def value(source: str, field_name: str, *index: int, reduce: str | None = None) -> Fact:
    """A number of a registered source: ``source.field[index]``."""
    return Fact(source, field_name, tuple(int(i) for i in index), reduce)


def position(j: int) -> Fact:
    """The number of token (or dimension) ``j`` (0-based), as shown: ``j + 1``."""
    return Fact("position", "", (int(j),))


def query_number() -> Fact:
    """The query token's number, as shown (from 1)."""
    return Fact("query")


def size(name: str) -> Fact:
    """A size of the scenario: ``n_tokens``, ``d_in``, ``d_k`` or ``d_v``."""
    return Fact("scenario", name)


def scene_number(name: str) -> Fact:
    """The number of scene ``name`` in the lecture."""
    return Fact("lecture", name)


@dataclass(frozen=True)
class TokenPart:
    """A token inside a label: its text as shown (maybe shortened) and the whole token."""

    token: str
    limit: int = MAX_TOKEN_CHARS

    @property
    def shown(self) -> str:
        return shorten_token(self.token, self.limit)


@dataclass(frozen=True)
class Shown:
    """One fact on screen: the text it was drawn as, at what precision, in which mobject."""

    fact: Fact
    text: str
    precision: int | None
    mobject: Mobject | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class Relation:
    """Arithmetic a scene shows: ``result = terms[0] + terms[1] + …`` (or ``×`` for a product).

    ``sign`` is what the scene writes between them: ``"="`` when the shown terms give the shown
    result, ``"≈"`` when rounding shows (then the scene says once that the numbers are rounded).
    """

    result: Fact
    terms: tuple[Fact, ...]
    op: str  # "sum" or "product"
    sign: str


@dataclass(frozen=True)
class Plotted:
    """A point drawn where its numbers say: ``axes.c2p(*coordinates)`` is the mobject's anchor.

    ``anchor`` names the mobject's point that sits there: ``"center"`` (a dot), ``"end"`` (an
    arrow's tip), ``"start"`` (an arrow's tail), or a side (``"right"``, ``"left"``, ``"top"``,
    ``"bottom"``: the end of a bar). ``axes`` is anything with ``c2p`` (manim's
    axes and planes, or the kit's oblique 3-d axes).
    """

    coordinates: tuple[Fact, ...]
    mobject: Mobject = field(compare=False, repr=False)
    axes: Any = field(compare=False, repr=False)
    anchor: str = "center"
