"""Facts: where each number on screen, or in a caption, comes from.

A scene never types a digit. It names a :class:`Fact` (a field of a trace, a token's position,
a size of the scenario) and draws or says its text; the scene base records each one, so the
tests can derive every number again from ``attention_math`` and compare.

A number of an indexed thing (key j's score, row i of a matrix, dimension c of z) must also stand
where that thing is drawn: beside its key's bar, in its token's row, under its column. A scene
registers the rows and columns it lays numbers out by as :class:`Bands` (``scene.rows(kind, …)``,
``scene.columns(kind, …)``: the kit's grids and bars give theirs); the tests derive from the fact
alone which thing a number belongs to (``trace.weights[i, j]``: query i's row, key j's column) and
check, at the end of every play, that it stands in that thing's band and no other's.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from manim import Mobject

from scenes.kit.text import MAX_TOKEN_CHARS, shorten_token
from scenes.registry import lectures

__all__ = [
    "BAND_KINDS", "POSITION_KINDS", "Bands", "Fact", "Named", "Plotted", "Relation", "Shown", "TokenPart",
    "known_kinds", "position", "quantity", "query_number", "scene_number", "size", "value",
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
    - ``"position"``: the number of a thing, counted from 1 (``index[0] + 1``); ``field`` names the kind of
      thing (one of :data:`POSITION_KINDS`: a token, a key, a dimension of the keys, a head, a step, a tile…),
      so the tests know how many there are and whose band the number stands in;
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


POSITION_KINDS: dict[str, str] = {
    "token": "a token of the sentence", "query": "a token as the query", "key": "a token as a key",
    "d_in": "a dimension of the embeddings", "d_k": "a dimension of queries and keys", "d_v": "a dimension of values",
    "head": "a query head", "kv_head": "a key/value head (grouped-query attention)",
    "step": "a step of generation: the token it writes",
    "tile": "a tile of keys (the online softmax)", "block": "a block of queries or keys (FlashAttention's tiling)",
    "pair": "a pair of dimensions that RoPE turns together", "layer": "a layer of a real model",
}
"""What a shown position counts (``position(j, of=kind)``): the tests check it is one of the scenario's."""


def known_kinds(what: str) -> dict[str, str]:
    """The kinds of ``what`` (``"position"``: :data:`POSITION_KINDS`; ``"band"``: :data:`BAND_KINDS`) and those
    the lectures declare of their own (``Lecture.position_kinds``, ``Lecture.band_kinds``), each with its meaning.

    >>> known_kinds("position")["pair"]
    'a pair of dimensions that RoPE turns together'
    """
    own = {"position": POSITION_KINDS, "band": BAND_KINDS}[what]
    declared = (item.position_kinds if what == "position" else item.band_kinds for item in lectures())
    return {**own, **{kind: meaning for kinds in declared for kind, meaning in kinds.items()}}


def position(j: int, of: str = "token") -> Fact:
    """The number of thing ``j`` (0-based) of kind ``of`` (:data:`POSITION_KINDS`), as shown: ``j + 1``."""
    kinds = known_kinds("position")
    if of not in kinds:
        raise ValueError(f"of: expected one of {', '.join(kinds)}, got {of!r}")
    return Fact("position", of, (int(j),))


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


def quantity(fact: Fact) -> str:
    """The quantity a fact is a number of, as a table's column names it: ``"source.field"`` (``"online.maxima"``)."""
    return f"{fact.source}.{fact.field}"


@dataclass(frozen=True)
class Named:
    """A thing a caption names in words: a token quoted (``'dog'``) as ``kind`` (``"token"``, ``"query"``,
    ``"key"``) with its index from 0. A number cited in the same sentence is tied to what it names
    (``scene.quote``): a weight said after ``'dog'`` is dog's."""

    kind: str
    index: int
    text: str


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


BAND_KINDS: dict[str, str] = {
    "token": "a token as such: a row of X (its embedding)",
    "query": "a token as the query: a row of Q, of the scores and weights, of Z",
    "key": "a token as a key: a row of K and V, a column of the scores and weights; its score, weight, w·v",
    "d_in": "a dimension of the embeddings: a column of X, a row of W_Q, W_K, W_V",
    "d_k": "a dimension of queries and keys: a column of Q, K, W_Q, W_K",
    "d_v": "a dimension of values: a column of V, W_V, Z",
    "concat": "a column of the heads' z joined (a row of W_O)",
    "output": "a column of the output (of W_O)",
    "head": "a head: its panel",
    "pair": "a pair of dimensions of queries and keys that RoPE turns together: its θ_i, its angle",
    "size": "one size d of the scaling sampler (why scale)",
    "sample": "one key of the sampler's row softmaxed (why scale)",
    "step": "a step of a training run (the learned lecture): its keyframe, its point on the loss curve",
    "referrer": "one of a training run's queries (an \"it\"), by its place among them: its chart of weights",
    "route": "generation with the cache (0) or without one (1): its chart (what the cache saves)",
    "config": "a published model's configuration (the cache's memory): its row, its bars",
    "tile": "a tile of keys in the online softmax (FlashAttention): its running maximum, rescale, sum and output",
    "end": "an end of a colour scale (a legend): 0 its low end, left of the bar; 1 its high end, right of it",
    "field": "a quantity (a column of a table, a legend's entry, a panel of one matrix): its numbers, keyed by "
             "``quantity(fact)`` (``\"online.maxima\"``); several quantities may share one band",
}
"""The things numbers belong to, by the name a :class:`Bands` gives them. The tests map every field
to these (``tests/number_checks.BELONGS``: ``trace.weights[i, j]`` is query i's and key j's)."""


@dataclass(frozen=True, eq=False)
class Bands:
    """Where the numbers of one kind of indexed thing stand: a row (or a column) per index.

    ``kind`` is one of :data:`BAND_KINDS`; for ``"field"`` the keys of ``anchors`` are quantities
    (:func:`quantity`, ``"online.maxima"``) rather than indices, and a number of a quantity the bands
    do not name, standing within the region, stands in another quantity's band. ``axis``: ``"row"``,
    each index a band across the frame
    at the height of its anchor (the numbers of key j share key j's row), or ``"column"``, a band at
    its anchor's x. ``anchors`` maps an index to the mobject whose extent is its band (a row label, a
    bar, a row of cells: never the numbers checked by it); an anchor counts while it, or a part of it,
    is on screen. ``region``: what the bands reach across (a table's body, a chart and its numbers;
    by default the anchors): a number is held to these bands only where it stands within it.

    A number whose fact belongs to a thing of this kind, standing within the region, must stand in
    its own index's band (the band that holds it, else the nearest) and not another's; where several
    registered sets of one kind hold a number, the nearest across holds it.
    """

    kind: str
    axis: str
    anchors: Mapping[Any, Mobject]
    region: tuple[Mobject, ...] = ()

    def __post_init__(self) -> None:
        kinds = known_kinds("band")
        if self.kind not in kinds:
            raise ValueError(f"kind: expected one of {', '.join(kinds)}, got {self.kind!r}")
        if self.axis not in ("row", "column"):
            raise ValueError(f"axis: expected 'row' or 'column', got {self.axis!r}")
