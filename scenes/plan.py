"""Which numbers of the trace each scene shows, and so which clips a changed scenario invalidates.

Each lecture declares its scenes and what each shows in its own folder (:class:`scenes.registry.Lecture`);
this turns a scene and a scenario into the plain data its clip depends on. No manim here: the bundle
command reads this, and it should start quickly. ``tests/test_scene_plan.py`` builds every scene and
checks that it reads nothing outside what its lecture's ``shows`` declares.
"""

from __future__ import annotations

from typing import Any

from scenes.registry import lecture_of_scene

__all__ = ["INPUTS", "STRUCTURE", "depends_on", "lecture_of", "scene_view"]

INPUTS = frozenset({"embeddings", "w_query", "w_key", "w_value"})
"""The scenario's numbers; everything else in a trace is computed from them."""

STRUCTURE = ("tokens", "query", "precision", "scaled", "d_in", "d_k", "d_v")
"""What shapes every scene's layout and captions: a change re-renders every scene."""

_STEP = {
    "index": set(),
    "embedding": {"embeddings"},
    "w_query": {"w_query"},
    "query_terms": {"embeddings", "w_query"},
    "running_weights": {"weights"},
    "running_context": {"weights", "values", "context"},
    "top_key": {"weights"},
    "d_k": set(),
    "sqrt_d_k": set(),
    "query": {"queries"},
    "keys": {"keys"},
    "products": {"queries", "keys"},
    "scores": {"scores"},
    "scaled_scores": {"scaled_scores"},
    "max_score": {"scaled_scores"},
    "exps": {"scaled_scores"},
    "exp_sum": {"scaled_scores"},
    "weights": {"weights"},
    "values": {"values"},
    "weighted_values": {"weights", "values"},
    "context": {"context"},
}
_TRACE_STRUCTURE = {"d_k", "scaled", "causal", "n_tokens", "sqrt_d_k"}
_ALL_TRACE = frozenset(INPUTS | {"queries", "keys", "values", "scores", "scaled_scores", "weights", "context"})


def depends_on(source: str, name: str) -> frozenset[str]:
    """The trace fields that ``source.name`` is computed from.

    ``source`` is ``"scenario"``, ``"trace"`` or ``"step"`` (a query step); ``name`` an
    attribute or method of it. Layout structure (tokens, sizes, the query) depends on nothing
    here: it is always part of a scene's view.

    >>> sorted(depends_on("step", "weighted_values"))
    ['values', 'weights']
    >>> sorted(depends_on("scenario", "w_key"))
    ['w_key']
    """
    if source == "step":
        return frozenset(_STEP[name]) if name in _STEP else _ALL_TRACE
    if source == "trace":
        if name in _TRACE_STRUCTURE:
            return frozenset()
        return frozenset({name}) if name in _ALL_TRACE else _ALL_TRACE  # query_step(...) and such
    if source == "scenario":
        if name in STRUCTURE or name in {"n_tokens", "n_heads", "query_token", "title"}:
            return frozenset()
        return frozenset({name}) if name in INPUTS else frozenset(INPUTS)  # trace(), query_step()
    raise ValueError(f"unknown source {source!r}")


def scene_view(name: str, scenario: Any) -> dict[str, Any] | None:
    """Everything scene ``name`` shows of ``scenario``, as plain data (``None``: nothing).

    Two scenarios with equal views give the same clip, so the bundle keeps the clip it has.
    """
    declared = lecture_of_scene(name)
    if name in declared.own_preset:
        return None
    trace = scenario.trace()
    view: dict[str, Any] = {key: _plain(getattr(scenario, key)) for key in STRUCTURE}
    view.update(_fields(declared.shows[name], trace))
    if scenario.model is not None:  # a real model's head: which model, sentence, layer and head
        view["model"] = scenario.model.to_dict()
    if name in declared.all_heads:
        view["heads"] = [_fields(declared.shows[name], head.trace()) for head in scenario.heads]
        view["w_out"] = None if scenario.w_out is None else _floats(scenario.w_out)
    return view


def _fields(shown: frozenset[str], trace: Any) -> dict[str, Any]:
    """The trace fields ``shown`` of ``trace``, every float as its repr (equal views: bit-equal numbers)."""
    return {field: _floats(getattr(trace, field)) for field in sorted(shown)}


def _floats(matrix: Any) -> list[list[str]]:
    return [[repr(float(x)) for x in row] for row in matrix.tolist()]


def lecture_of(name: str) -> str:
    """The lecture scene ``name`` belongs to.

    >>> lecture_of("Scores"), lecture_of("MultiHead")
    ('self-attention', 'multi-head')
    """
    return lecture_of_scene(name).name


def _plain(value: Any) -> Any:
    if isinstance(value, tuple):
        return list(value)
    return value
