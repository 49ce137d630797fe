"""Every lecture, each declared once in its own folder and found through an entry point.

A lecture is one folder of ``scenes/`` whose :class:`Lecture` says all the rest of the project needs of it:
its name on the command line, its scenes in order, its preset, what each scene shows, what each costs to
render, its handout and notebook. It registers itself as a third party would, in ``pyproject.toml``::

    [project.entry-points."attention_explainer.lectures"]
    masked = "scenes.masked:LECTURE"

:func:`lectures` reads the entry-point group :data:`GROUP`, checks every declaration and keeps them;
:func:`lecture` gives one by name. No manim here, and no lecture imported until asked for: the command
line reads this before any render.

>>> [item.name for item in lectures()][:3]
['self-attention', 'masked', 'multi-head']
>>> lecture("masked").scenes[0]
('scenes.masked.generation_order', 'GenerationOrder')
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from typing import Any

__all__ = [
    "BUILT_IN",
    "DEFAULT_LECTURE",
    "GROUP",
    "Lecture",
    "LectureChecks",
    "LectureError",
    "PlantedFault",
    "check_lectures",
    "decoder_lectures",
    "lecture",
    "lecture_names",
    "lecture_of_scene",
    "lectures",
    "load",
    "model_lecture",
    "render_cost",
]

GROUP = "attention_explainer.lectures"
"""The entry-point group every lecture registers in, the project's own included."""

BUILT_IN = (
    "self-attention", "masked", "multi-head", "real-head", "learned", "rope", "inference", "flash-attention",
    "latent-attention",
)
"""The project's own lectures in the course's order; lectures of other packages follow, by name."""

DEFAULT_LECTURE = BUILT_IN[0]
"""The lecture shown when none is named (``--lecture``)."""


class LectureError(ValueError):
    """A lecture's declaration that cannot be used; the message names the lecture and the fault."""


@dataclass(frozen=True, eq=False)
class Lecture:
    """One lecture, declared once in its folder (``LECTURE = Lecture(...)``).

    Attributes
    ----------
    name
        Its name on the command line (``--lecture masked``) and of its entry point.
    title
        What it teaches, in a line.
    scenes
        ``(module, class)`` of each scene, in order; a class name belongs to one lecture only.
    preset
        The preset it shows when no scenario is named.
    shows
        Each scene's trace fields (``AttentionTrace`` attribute names) it draws or computes from: the
        bundle keeps a scene's clip while these are unchanged.
    cost
        Each scene's render time relative to lecture 6's Scores, by quality: ``"l"`` for -ql, ``"h"`` for
        the others. A scene missing counts 1.
    steps
        Its handout and notebook, ``"module:attribute"`` of a ``LectureSteps``, imported when asked for.
    own_preset
        The scenes that show no number of the scenario: their clip is kept whatever it is.
    all_heads
        The scenes that show every head of a multi-head scenario and its ``W_O``.
    model
        Whether its scenes draw a real model's head (``render --model``): such a lecture is the one
        a scenario with a model shows.
    bench_limit
        The most its wall seconds per video second may be in ``bench`` as a multiple of the first
        lecture's (``None``: no limit, the yardstick itself).
    bench_flags
        What its bench bundle needs besides ``--lecture`` (a model, a sentence).
    storyboard, stills
        Its storyboard (``docs/lectures/<name>.md``) and its folder of stills, from the repository's root.
    position_kinds, band_kinds
        Kinds of thing of its own beyond ``scenes.facts.POSITION_KINDS`` and ``BAND_KINDS`` (a latent dimension),
        each with what it is: its scenes may number them (``position(j, of=kind)``) and register bands of them.
    checks
        ``"module:attribute"`` of its :class:`LectureChecks` (its number proof and planted faults), where it
        declares them; the project's tests read them (``None``: the project's own tests hold its checks).

    Examples
    --------
    >>> toy = Lecture(name="toy", title="A toy", scenes=(("toy.scenes", "Toy"),), preset="raw-dot-product",
    ...               shows={"Toy": frozenset()}, cost={"l": {"Toy": 0.5}}, steps="toy.handout:STEPS")
    >>> toy.scene_names, toy.render_cost("Toy", "l"), toy.render_cost("Toy", "h")
    (('Toy',), 0.5, 1.0)
    """

    name: str
    title: str
    scenes: tuple[tuple[str, str], ...]
    preset: str
    shows: Mapping[str, frozenset[str]]
    cost: Mapping[str, Mapping[str, float]]
    steps: str
    own_preset: frozenset[str] = frozenset()
    all_heads: frozenset[str] = frozenset()
    model: bool = False
    bench_limit: float | None = 1.2
    bench_flags: tuple[str, ...] = ()
    storyboard: str | None = None
    stills: str | None = None
    position_kinds: Mapping[str, str] = field(default_factory=dict)
    band_kinds: Mapping[str, str] = field(default_factory=dict)
    checks: str | None = None

    @property
    def scene_names(self) -> tuple[str, ...]:
        """Its scene classes' names, in order."""
        return tuple(name for _, name in self.scenes)

    def render_cost(self, scene: str, quality: str) -> float:
        """Scene ``scene``'s render time relative to Scores at ``quality`` (``"l"``, else -qh's)."""
        return self.cost.get("l" if quality == "l" else "h", {}).get(scene, 1.0)

    def load_steps(self) -> Any:
        """Its handout and notebook, imported now (a ``LectureSteps``)."""
        return load(self.steps)

    def load_checks(self) -> LectureChecks | None:
        """Its number proof, imported now; ``None`` where it declares none."""
        if self.checks is None:
            return None
        found = load(self.checks)
        if not isinstance(found, LectureChecks):
            kind = type(found).__name__
            raise LectureError(f"lecture {self.name!r}: its checks are a {kind}, not a scenes.registry.LectureChecks")
        return found


@dataclass(frozen=True, eq=False)
class PlantedFault:
    """A wrong number planted in one of a lecture's scenes: the number checks must fail where it is planted.

    Attributes
    ----------
    name
        What is wrong, in a few words ("legend ends swapped"); unique across lectures.
    scene
        The scene class it is planted in (one of the lecture's).
    plant
        Called with pytest's ``monkeypatch`` before the scene is built: changes how the scene gets, formats,
        places or says a number (never the core).
    scenarios
        The test scenarios (names of :attr:`LectureChecks.scenarios`) the fault is tried with.
    """

    name: str
    scene: str
    plant: Callable[[Any], None]
    scenarios: tuple[str, ...]


@dataclass(frozen=True, eq=False)
class LectureChecks:
    """A lecture's number proof, declared in its folder beside its scenes (``Lecture.checks``).

    Every number a scene shows is a fact ``(source, field, index)``; the tests derive each source from the
    scenario alone, through these, and compare.

    Attributes
    ----------
    derived
        Each source the lecture's scenes register → a function of the scenario giving ``(result, decimals)``:
        the core's result computed here, never taken from the scene.
    belongs
        Each source → each field → what each of its indexes names (``("head", "query", "key")``: see
        ``scenes.facts.BAND_KINDS``): a number must stand in the bands of those.
    positions
        Position kinds of its own (``"latent_head"``) → how many the scenario has.
    scenarios
        Its test scenarios by name (several sizes, one nobody has seen): every scene is built with each,
        unless :attr:`scene_scenarios` names fewer.
    scene_scenarios
        A scene → the names of :attr:`scenarios` it is built with.
    key_numbers
        Each scene → ``(source, field, indexes)`` of the numbers it must show at some point, ``indexes`` a
        function of the scenario (every weight of the query's row: ``lambda s: [(t, j) for ...]``).
    faults
        Its planted faults.
    read_back
        ``(scene, scenario, least)``: the scene whose last frame an OCR engine reads back, with that test scenario (a
        name of :attr:`scenarios`) and the fewest numbers it showed at review (``tests/test_frames_read_back.py``);
        ``None``: the project's tests choose.

    Examples
    --------
    >>> from attention_math import preset
    >>> checks = LectureChecks(derived={"trace": lambda s: (s.trace(), s.precision)},
    ...                        scenarios={"dog": lambda: preset("dog-chased-ball")})
    >>> checks.scenarios_of("Toy")
    ('dog',)
    """

    derived: Mapping[str, Callable[[Any], tuple[Any, int]]]
    belongs: Mapping[str, Mapping[str, tuple[str, ...]]] = field(default_factory=dict)
    positions: Mapping[str, Callable[[Any], int]] = field(default_factory=dict)
    scenarios: Mapping[str, Callable[[], Any]] = field(default_factory=dict)
    scene_scenarios: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    key_numbers: Mapping[str, tuple[tuple[str, str, Callable[[Any], Iterable[tuple[int, ...]]]], ...]] = field(
        default_factory=dict)
    faults: tuple[PlantedFault, ...] = ()
    read_back: tuple[str, str, int] | None = None

    def scenarios_of(self, scene: str) -> tuple[str, ...]:
        """The test scenarios scene ``scene`` is built with."""
        return tuple(self.scene_scenarios.get(scene, tuple(self.scenarios)))


def load(reference: str) -> Any:
    """What ``"module:attribute"`` names, importing the module.

    >>> load("scenes.registry:GROUP")
    'attention_explainer.lectures'
    """
    module, _, attribute = reference.partition(":")
    if not attribute:
        raise LectureError(f"{reference!r}: expected 'module:attribute'")
    return getattr(importlib.import_module(module), attribute)


def check_lectures(found: Iterable[tuple[str, object]]) -> tuple[Lecture, ...]:
    """``(entry point's name, what it loaded)`` pairs checked and put in order: built-ins first, in
    :data:`BUILT_IN`'s order, then the others by name.

    >>> check_lectures([("toy", "not a lecture")])
    Traceback (most recent call last):
    ...
    scenes.registry.LectureError: lecture 'toy': its entry point gives a str, not a scenes.registry.Lecture
    """
    checked: list[Lecture] = []
    owner: dict[str, str] = {}
    for name, declared in found:
        if not isinstance(declared, Lecture):
            kind = type(declared).__name__
            raise LectureError(f"lecture {name!r}: its entry point gives a {kind}, not a scenes.registry.Lecture")
        if declared.name != name:
            raise LectureError(f"lecture {name!r}: its declaration is named {declared.name!r}; the two must match")
        _check_scenes(declared, owner)
        checked.append(declared)
    rank = {name: index for index, name in enumerate(BUILT_IN)}
    return tuple(sorted(checked, key=lambda item: (rank.get(item.name, len(rank)), item.name)))


def _check_scenes(declared: Lecture, owner: dict[str, str]) -> None:
    """Scenes there, each in one lecture only, each with its fields shown (``owner``: scene → lecture so far)."""
    if not declared.scenes:
        raise LectureError(f"lecture {declared.name!r}: it has no scenes")
    for scene in declared.scene_names:
        if scene in owner:
            raise LectureError(f"lecture {declared.name!r}: scene {scene} is already lecture {owner[scene]!r}'s")
        if scene not in declared.shows:
            raise LectureError(f"lecture {declared.name!r}: scene {scene} is missing from its shows")
        owner[scene] = declared.name


@functools.cache
def lectures() -> tuple[Lecture, ...]:
    """Every lecture of the entry-point group :data:`GROUP`, checked, in the course's order (kept)."""
    return check_lectures((point.name, point.load()) for point in entry_points(group=GROUP))


def lecture_names() -> tuple[str, ...]:
    """Every lecture's name, in order.

    >>> lecture_names()[-1] != ""
    True
    """
    return tuple(item.name for item in lectures())


def lecture(name: str) -> Lecture:
    """The lecture called ``name``; a ``KeyError`` naming the known ones.

    >>> lecture("nope")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    KeyError: "unknown lecture 'nope'; expected one of self-attention, masked, ...
    """
    for item in lectures():
        if item.name == name:
            return item
    raise KeyError(f"unknown lecture {name!r}; expected one of {', '.join(lecture_names())}")


def lecture_of_scene(scene: str) -> Lecture:
    """The lecture scene class ``scene`` belongs to; a ``KeyError`` when none.

    >>> lecture_of_scene("MultiHead").name
    'multi-head'
    """
    for item in lectures():
        if scene in item.scene_names:
            return item
    raise KeyError(f"{scene} is not a scene of any lecture")


def model_lecture() -> str:
    """The lecture a scenario with a real model shows (``render --model``): the one whose scenes draw one.

    >>> model_lecture()
    'real-head'
    """
    found = [item.name for item in lectures() if item.model]
    if not found:
        raise KeyError("no lecture draws a real model's head")
    return found[0]


def decoder_lectures() -> tuple[str, ...]:
    """The lectures that draw a decoder's head (``render --model smollm2``): every scene of theirs draws one
    (``draws_decoder``) or a real model's head (``shows_model``). Imports their scenes.

    >>> decoder_lectures()
    ('masked', 'real-head', 'rope', 'inference')
    """
    found = []
    for item in lectures():
        classes = [getattr(importlib.import_module(module), name) for module, name in item.scenes]
        if all(getattr(cls, "draws_decoder", False) or getattr(cls, "shows_model", False) for cls in classes):
            found.append(item.name)
    return tuple(found)


def render_cost(scene: str, quality: str) -> float:
    """Scene ``scene``'s render time relative to Scores at ``quality``; 1 for a scene of no lecture.

    >>> render_cost("MatrixForm", "l"), render_cost("NoSuchScene", "h")
    (2.4, 1.0)
    """
    try:
        return lecture_of_scene(scene).render_cost(scene, quality)
    except KeyError:
        return 1.0
