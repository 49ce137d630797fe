"""The course file: a list of bundles, each a ``render`` of its own, read and checked in one pass.

A course file is TOML::

    title = "Attention, week 3"          # optional: the course page's heading

    [[bundle]]
    lecture = "self-attention"           # optional: the default lecture
    preset = "dog-chased-ball"           # or scenario = "my.toml" (beside the course file) or sentence = "..."
    scenes = ["scores"]                  # optional: names or numbers; default every scene of the lecture
    quality = "l"                        # optional: l (default), m, h, p or k
    fps = 5                              # optional: frames per second, 1 to 120
    slides = true                        # optional: every other option of render, as render names it
    name = "scores-only"                 # optional: the bundle's folder under --out

A ``[[bundle]]`` has a key for every option of ``attention-explainer render`` but ``--out``, ``--jobs``,
``--stock-manim`` and ``--debug`` (:func:`attention_explainer.render_options.course_keys`: ``d-model`` for
``--d-model``, ``slides = true`` for ``--slides``), and ``name``. An entry becomes the arguments ``render``
would be given (:attr:`CourseEntry.argv`), read by render's own parser and checked as render checks them.
Anything else (TOML syntax, an unknown key, a value of the wrong type, options that cannot go together) is
refused in one line naming the file, the entry and the key (:class:`attention_explainer.plan.BundleError`,
status 2), e.g. ``course.toml: bundle 3 (pptx): expected true or false, got a string``, before anything
renders. What a value means (a preset, a scenario file, a sentence, a lecture, a scene) is checked per
bundle later, so that one bad entry does not stop the others.
"""

from __future__ import annotations

import argparse
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .plan import BundleError
from .render_options import (
    check_render_request,
    course_key_argv,
    course_keys,
    lecture_of,
    parse_render_argv,
    value_kind,
)

__all__ = ["NAME", "SOURCES", "Course", "CourseEntry", "bundle_keys", "entry_from_table", "folder_name", "load_course"]

SOURCES = ("preset", "scenario", "sentence")
"""The keys that name a bundle's scenario; at most one per bundle (none: the lecture's preset)."""

NAME = "name"
"""The one key of a bundle that is no option of render: its folder under ``--out``."""

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,79}$")


def bundle_keys() -> tuple[str, ...]:
    """Every key a ``[[bundle]]`` may have: render's options (in render's order), then ``name``."""
    return (*course_keys(), NAME)


@dataclass(frozen=True)
class CourseEntry:
    """One bundle of the course: the arguments ``render`` would be given for it, and as its parser read them."""

    number: int  # from 1, in the file's order
    argv: tuple[str, ...]  # as render would be given them
    args: argparse.Namespace = field(compare=False, repr=False)  # as render's parser reads them
    name: str | None = None  # its folder under --out, if it names one

    @property
    def lecture(self) -> str:
        """The lecture, as render chooses it (a real model's head its own with ``model``)."""
        return lecture_of(self.args)

    @property
    def source(self) -> str | None:
        """Which of :data:`SOURCES` names the scenario; None: the lecture's preset."""
        return next((key for key in SOURCES if getattr(self.args, key, None) is not None), None)

    @property
    def value(self) -> str | None:
        """The preset's name, the scenario file (resolved) or the sentence."""
        return getattr(self.args, self.source) if self.source else None

    def label(self, field: str | None = None) -> str:
        """``bundle 3`` or, naming a field, ``bundle 3 (preset)``: how messages name the entry."""
        return f"bundle {self.number}" + (f" ({field})" if field else "")


@dataclass(frozen=True)
class Course:
    """A course file's title and bundles."""

    title: str
    entries: tuple[CourseEntry, ...]
    path: Path


def load_course(path: Path) -> Course:
    """Read and check a course file; :class:`BundleError` (status 2) in one line naming the field."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise BundleError(f"COURSE: cannot read {path} ({error.strerror or error})", 2) from None
    except UnicodeDecodeError:
        raise BundleError(f"COURSE: {path} is not UTF-8 text", 2) from None
    except tomllib.TOMLDecodeError as error:
        raise BundleError(f"COURSE: {path} is not valid TOML: {error}", 2) from None
    unknown = sorted(set(data) - {"title", "bundle"})
    if unknown:
        raise BundleError(f"{unknown[0]}: unknown key in {path.name}; expected title and [[bundle]] tables", 2)
    title = data.get("title", path.stem)
    if not isinstance(title, str):
        raise BundleError(f"title: expected a string, got {value_kind(title)}", 2)
    bundles = data.get("bundle")
    if not isinstance(bundles, list) or not bundles or not all(isinstance(b, dict) for b in bundles):
        raise BundleError(f"bundle: expected one [[bundle]] table or more in {path.name}", 2)
    try:
        entries = tuple(entry_from_table(number, table, path.parent) for number, table in enumerate(bundles, start=1))
        _check_names(entries)
    except BundleError as error:
        raise BundleError(f"{path.name}: {error}", 2) from None
    return Course(title, entries, path)


def entry_from_table(number: int, table: Mapping[str, Any], base: Path) -> CourseEntry:
    """One [[bundle]] table, checked key by key, as the arguments render would be given; a scenario file
    is named relative to ``base`` (the course file's folder)."""
    where = f"bundle {number}"
    keys = course_keys()
    unknown = sorted(set(table) - set(keys) - {NAME})
    if unknown:
        raise BundleError(f"{where} ({unknown[0]}): unknown key; expected {', '.join(bundle_keys())}", 2)
    named = [key for key in SOURCES if key in table]
    if len(named) > 1:
        raise BundleError(f"{where} ({named[1]}): give one of {', '.join(SOURCES)}, not both {named[0]} and {named[1]}",
                          2)
    argv: list[str] = []
    for key, spec in keys.items():
        if key not in table:
            continue
        value = table[key]
        if key == "scenario" and isinstance(value, str):
            value = str(base / value)  # beside the course file
        try:
            argv += course_key_argv(spec, value)
        except ValueError as error:
            raise BundleError(f"{where} ({key}): {error}", 2) from None
    name = _name(table, where)
    try:
        args = parse_render_argv(argv)
        check_render_request(args)
    except BundleError as error:
        field_name = error.option or "options"
        raise BundleError(f"{where} ({field_name}): {str(error).removeprefix(f'--{field_name}: ')}", 2) from None
    return CourseEntry(number, tuple(argv), args, name)


def _name(table: Mapping[str, Any], where: str) -> str | None:
    """The entry's folder name, if it gives one."""
    name = table.get(NAME)
    if name is None:
        return None
    if not isinstance(name, str) or not _NAME.match(name):
        raise BundleError(f"{where} (name): expected a folder name (letters, digits, '.', '_', '-'), got {name!r}", 2)
    return name


def _check_names(entries: tuple[CourseEntry, ...]) -> None:
    """Two bundles cannot share a folder."""
    seen: dict[str, int] = {}
    for entry in entries:
        name = folder_name(entry)
        if name in seen:
            raise BundleError(f"{entry.label('name')}: its folder {name!r} is bundle {seen[name]}'s too", 2)
        seen[name] = entry.number


def folder_name(entry: CourseEntry) -> str:
    """The bundle's folder under ``--out``: its ``name``, else its number, lecture and scenario.

    >>> from attention_explainer.render_options import parse_render_argv
    >>> folder_name(CourseEntry(3, ("--preset=two-heads",), parse_render_argv(["--preset=two-heads"])))
    '03-self-attention-two-heads'
    """
    if entry.name:
        return entry.name
    what = entry.value or ""
    if entry.source == "scenario":
        what = Path(what).stem
    words = re.findall(r"[a-z0-9]+", what.lower())
    return "-".join([f"{entry.number:02d}", entry.lecture, *words[:8]])
