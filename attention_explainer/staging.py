"""Where a build writes the bundle's new files before they replace the old ones.

Every output writes its files into a staging folder beside the bundle (on its file system, so
that moving them in is a rename); the previous bundle stays untouched until the bundle swaps the
staged files in (:func:`swap_in`), the manifest last.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from .interrupts import signals_deferred

__all__ = ["Staging", "swap_in"]


@dataclass
class Staging:
    """New files are written under ``folder``; the previous bundle in ``out`` stays untouched until the swap.

    Attributes
    ----------
    out
        The bundle's folder.
    folder
        The staging folder, emptied when the staging starts.
    staged
        Every new file by its path in the bundle: where it was written.
    whole
        Folders of the bundle that the staged files replace as a whole (the deck's assets): at the
        swap, their files that were not staged go.
    removed
        Files and folders of the previous bundle that go at the swap (a deck of other clips).
    deck
        The deck's files in the new bundle, and their kinds, as the manifest lists them.
    pptx
        The PowerPoint deck in the new bundle, and its kind, as the manifest lists it (none: empty).
    """

    out: Path
    folder: Path
    staged: dict[str, Path] = field(default_factory=dict)
    whole: set[str] = field(default_factory=set)
    removed: set[str] = field(default_factory=set)
    deck: list[tuple[str, str]] = field(default_factory=list)
    pptx: list[tuple[str, str]] = field(default_factory=list)

    def __post_init__(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)
        self.folder.mkdir(parents=True)

    def stage(self, rel: str) -> Path:
        """Where to write the new file ``rel``."""
        path = self.folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        self.staged[rel] = path
        return path

    def stage_tree(self, rel: str) -> None:
        """Take every file written under the staged folder ``rel`` as new; the folder is replaced whole."""
        for path in sorted((self.folder / rel).rglob("*")):
            if path.is_file():
                self.staged[path.relative_to(self.folder).as_posix()] = path
        self.whole.add(rel)

    def remove(self, *rels: str) -> None:
        """Remove the files or folders ``rels`` of the previous bundle at the swap."""
        self.removed.update(rels)

    def current(self, rel: str) -> Path:
        """The file ``rel`` as the new bundle will have it: staged, else the previous one."""
        return self.staged.get(rel, self.out / rel)


def swap_in(staging: Staging, last: str) -> None:
    """Move every staged file into place, ``last`` (the manifest) last; the renames take milliseconds.

    Then the files of replaced folders that the new bundle no longer has, and what it removes, go.
    """
    with signals_deferred():  # Ctrl-C or SIGTERM waits for the last rename (SIGKILL cannot)
        for rel in sorted(staging.staged, key=lambda r: r == last):
            target = staging.out / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            os.replace(staging.staged[rel], target)
    for folder in sorted(staging.whole):
        for path in sorted((staging.out / folder).rglob("*"), reverse=True):
            rel = path.relative_to(staging.out).as_posix()
            if path.is_file() and rel not in staging.staged:
                path.unlink()
            elif path.is_dir() and not any(path.iterdir()):
                path.rmdir()
    for rel in sorted(staging.removed):
        target = staging.out / rel
        if target.is_dir():
            shutil.rmtree(target, ignore_errors=True)
        else:
            target.unlink(missing_ok=True)
