"""The bundle's folder: its default name, making it (and its work folder beside it), its lock,
and writing into it so that no file is ever half-written under its final name.

What versions before the work folder kept inside the bundle (``.work/``, ``.lock``) is honoured
while a render holds the folder and removed once one succeeds.
"""

from __future__ import annotations

import os
import re
import shutil
import unicodedata
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from attention_math import Scenario

from .plan import BundleError, work_folder

__all__ = [
    "atomic_write",
    "bundle_lock",
    "default_out_dir",
    "forget_old_work",
    "prepare_out_dir",
    "slug",
    "write_text",
]

OLD_WORK, OLD_LOCK = ".work", ".lock"  # what versions before the work folder kept in the bundle


def slug(title: str) -> str:
    """A folder name for a scenario title: lower-case ASCII words joined by dashes.

    >>> slug("The dog chased the ball")
    'the-dog-chased-the-ball'
    >>> slug("犬がボールを追った")
    'scenario'
    """
    ascii_text = unicodedata.normalize("NFKD", title).encode("ascii", "ignore").decode()
    words = re.findall(r"[a-z0-9]+", ascii_text.lower())
    return "-".join(words)[:60].strip("-") or "scenario"


def default_out_dir(scenario: Scenario, root: Path | None = None, lecture: str | None = None) -> Path:
    """``media/<scenario-slug>/`` under ``root`` (default: the working folder); another lecture than
    the default adds its name, ``media/<scenario-slug>-multi-head/``."""
    from scenes.registry import DEFAULT_LECTURE

    suffix = "" if lecture in (None, DEFAULT_LECTURE) else f"-{lecture}"
    return (root or Path.cwd()) / "media" / (slug(scenario.title) + suffix)


@contextmanager
def atomic_write(path: Path) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; rename it into place only on success."""
    # keep the real suffix last: PyAV and PIL choose the format from it
    tmp = path.with_name(f".{path.stem}.tmp-{os.getpid()}{path.suffix}")
    try:
        yield tmp
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()


def write_text(path: Path, content: str) -> None:
    """Write ``content`` to ``path`` as UTF-8, through :func:`atomic_write`."""
    with atomic_write(path) as tmp:
        tmp.write_text(content, encoding="utf-8")


@contextmanager
def bundle_lock(out: Path) -> Iterator[None]:
    """Hold the bundle's lock (in its work folder) while the build writes, and the lock an older
    version kept in the bundle itself (``.lock``) where there is one, so neither writes over the other."""
    import fcntl

    locks = [work_folder(out) / "lock", *([out / OLD_LOCK] if (out / OLD_LOCK).is_file() else [])]
    handles = []
    try:
        for lock in locks:
            handles.append(open(lock, "w"))
            try:
                fcntl.flock(handles[-1], fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise BundleError(
                    f"--out: another render is writing into {out} (it holds {lock}); "
                    "wait for it to finish or choose another folder",
                    2,
                ) from None
        yield
    finally:
        for handle in handles:
            handle.close()


def prepare_out_dir(out: Path) -> Path:
    """Create the bundle folder and its work folder beside it (:func:`work_folder`), or say in
    one line why they cannot be used."""
    if out.exists() and not out.is_dir():
        raise BundleError(f"--out: {out} is a file, expected a folder", 2)
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe_file = out / f".write-test-{os.getpid()}"
        probe_file.write_bytes(b"")
        probe_file.unlink()
    except OSError as error:
        raise BundleError(f"--out: cannot write into {out} ({error.strerror or error})", 2) from None
    work = work_folder(out)
    try:
        work.mkdir(parents=True, exist_ok=True)
        apart = os.stat(work).st_dev != os.stat(out).st_dev
    except OSError as error:
        raise BundleError(
            f"--out: cannot make the render's work folder {work} beside {out} ({error.strerror or error}); "
            "choose a folder inside one you can write to",
            2,
        ) from None
    if apart:  # a mount point: the finished files could not be renamed into the bundle
        raise BundleError(
            f"--out: {out} is on another file system than the folder it is in, where the render keeps its work "
            f"({work}); choose a folder inside it",
            2,
        )
    return out


def forget_old_work(out: Path) -> None:
    """Remove what an older version kept inside the bundle (``.work/``, ``.lock``): its work
    folder is beside the bundle now."""
    shutil.rmtree(out / OLD_WORK, ignore_errors=True)
    (out / OLD_LOCK).unlink(missing_ok=True)
