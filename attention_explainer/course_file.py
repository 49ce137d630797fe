"""The course file: a list of bundles, each a lecture with a scenario, read and checked in one pass.

A course file is TOML::

    title = "Attention, week 3"          # optional: the course page's heading

    [[bundle]]
    lecture = "self-attention"           # optional: the default lecture
    preset = "dog-chased-ball"           # or scenario = "my.toml" (beside the course file) or sentence = "..."
    scenes = ["scores"]                  # optional: names or numbers; default every scene of the lecture
    quality = "l"                        # optional: l (default), m, h, p or k
    fps = 5                              # optional: frames per second, 1 to 120
    name = "scores-only"                 # optional: the bundle's folder under --out

Anything else (TOML syntax, an unknown key, a value of the wrong type) is refused in one line
naming the field (:class:`attention_explainer.plan.BundleError`, status 2) before anything
renders. What a value means (a preset, a scenario file, a sentence, a lecture, a scene) is
checked per bundle later, so that one bad entry does not stop the others.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scenes.registry import DEFAULT_LECTURE

from .plan import BundleError

__all__ = ["BUNDLE_KEYS", "SOURCES", "Course", "CourseEntry", "folder_name", "load_course"]

SOURCES = ("preset", "scenario", "sentence")
"""The keys that name a bundle's scenario; at most one per bundle (none: the lecture's preset)."""

BUNDLE_KEYS = ("lecture", *SOURCES, "seed", "query", "scenes", "quality", "fps", "name")
QUALITIES = ("l", "m", "h", "p", "k")  # as render's --quality (plan.QUALITIES; the course file imports no numpy)
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,79}$")


@dataclass(frozen=True)
class CourseEntry:
    """One bundle of the course, as the file states it (values checked for type, not meaning)."""

    number: int  # from 1, in the file's order
    lecture: str | None
    source: str | None  # one of SOURCES, or None for the lecture's preset
    value: str | None  # the preset's name, the scenario file (resolved), or the sentence
    seed: int
    query: str | None
    scenes: str | None  # comma-joined, as render's --scenes
    quality: str
    fps: int | None
    name: str | None

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
        raise BundleError(f"title: expected a string, got {_kind(title)}", 2)
    bundles = data.get("bundle")
    if not isinstance(bundles, list) or not bundles or not all(isinstance(b, dict) for b in bundles):
        raise BundleError(f"bundle: expected one [[bundle]] table or more in {path.name}", 2)
    entries = tuple(_entry(number, table, path.parent) for number, table in enumerate(bundles, start=1))
    _check_names(entries)
    return Course(title, entries, path)


def _entry(number: int, table: Mapping[str, Any], base: Path) -> CourseEntry:
    """One [[bundle]] table, checked key by key."""
    where = f"bundle {number}"
    unknown = sorted(set(table) - set(BUNDLE_KEYS))
    if unknown:
        raise BundleError(f"{where} ({unknown[0]}): unknown key; expected {', '.join(BUNDLE_KEYS)}", 2)
    named = [key for key in SOURCES if key in table]
    if len(named) > 1:
        raise BundleError(f"{where} ({named[1]}): give one of {', '.join(SOURCES)}, not both {named[0]} and {named[1]}",
                          2)
    strings = {key: _typed(table, key, str, where, "a string") for key in ("lecture", *SOURCES, "name")}
    source = named[0] if named else None
    value = strings[source] if source else None
    if source == "scenario" and value is not None:
        value = str(base / value)  # beside the course file
    quality = _typed(table, "quality", str, where, "a string") or "l"
    if quality not in QUALITIES:
        raise BundleError(f"{where} (quality): expected one of {', '.join(QUALITIES)}, got {quality!r}", 2)
    fps = _typed(table, "fps", int, where, "a whole number")
    if fps is not None and not 1 <= fps <= 120:
        raise BundleError(f"{where} (fps): expected a whole number from 1 to 120, got {fps}", 2)
    name = strings["name"]
    if name is not None and not _NAME.match(name):
        raise BundleError(f"{where} (name): expected a folder name (letters, digits, '.', '_', '-'), got {name!r}", 2)
    query = table.get("query")
    if query is not None and (isinstance(query, bool) or not isinstance(query, (str, int))):
        raise BundleError(f"{where} (query): expected a token's text or its number, got {_kind(query)}", 2)
    return CourseEntry(
        number, strings["lecture"], source, value, _typed(table, "seed", int, where, "a whole number") or 0,
        None if query is None else str(query), _scenes(table, where), quality, fps, name,
    )


def _typed(table: Mapping[str, Any], key: str, kind: type, where: str, expected: str) -> Any:
    """``table[key]`` if it is of ``kind`` (booleans are no numbers here), None if absent."""
    value = table.get(key)
    if value is None:
        return None
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise BundleError(f"{where} ({key}): expected {expected}, got {_kind(value)}", 2)
    return value


def _scenes(table: Mapping[str, Any], where: str) -> str | None:
    """The scenes as render's ``--scenes`` list; names or numbers."""
    scenes = table.get("scenes")
    if scenes is None:
        return None
    if not isinstance(scenes, list) or not scenes or any(
        isinstance(s, bool) or not isinstance(s, (str, int)) or "," in str(s) for s in scenes
    ):
        raise BundleError(f"{where} (scenes): expected a list of scene names or numbers, got {_kind(scenes)}", 2)
    return ",".join(str(s) for s in scenes)


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

    >>> folder_name(CourseEntry(3, None, "preset", "two-heads", 0, None, None, "l", None, None))
    '03-self-attention-two-heads'
    """
    if entry.name:
        return entry.name
    what = entry.value or ""
    if entry.source == "scenario":
        what = Path(what).stem
    words = re.findall(r"[a-z0-9]+", what.lower())
    return "-".join([f"{entry.number:02d}", entry.lecture or DEFAULT_LECTURE, *words[:8]])


def _kind(value: Any) -> str:
    """How a TOML value is named in a message."""
    names = {bool: "a boolean", int: "a number", float: "a number", str: "a string", list: "a list", dict: "a table"}
    return next((name for kind, name in names.items() if isinstance(value, kind)), type(value).__name__)
