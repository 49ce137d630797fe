"""What shapes a frame, as one short hash: the bundle keeps a clip only while it is unchanged.

A clip depends on more than its scenario: the source of the scenes, the math and this package;
the versions of the libraries that draw, encode and typeset; the fonts fontconfig offers (Pango
draws every word with them); and the TeX installation (it typesets the formulas). Each part is
a function here, so a test can change one and see the key change. Computing all of them takes
a few tens of milliseconds (three short subprocesses and a stat of every font file).
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from importlib import metadata
from pathlib import Path

__all__ = ["DISTRIBUTIONS", "code_version", "font_list", "package_versions", "source_files", "tex_installation"]

DISTRIBUTIONS = ("manim", "manim-slides", "manimpango", "pycairo", "av", "numpy", "Pillow", "srt")
"""The installed distributions whose version can change a frame, a clip's container or its subtitles."""


def _package_dir(name: str) -> Path:
    import importlib

    module = importlib.import_module(name)
    return Path(module.__file__ or "").parent


def source_files() -> dict[str, Path]:
    """Every ``.py`` file of ``scenes``, ``attention_math``, ``attention_explainer`` and the packages of other
    lectures' scenes, sub-packages included, by its path from the package's parent (``scenes/kit/text.py``)."""
    from scenes.registry import lectures

    files: dict[str, Path] = {}
    others = sorted({module.split(".")[0] for item in lectures() for module, _ in item.scenes} - {"scenes"})
    for package in ("scenes", "attention_math", "attention_explainer", *others):
        folder = _package_dir(package)
        for path in sorted(folder.rglob("*.py")):
            if "__pycache__" not in path.parts:
                files[path.relative_to(folder.parent).as_posix()] = path
    return files


def package_versions() -> dict[str, str]:
    """The installed version of each of :data:`DISTRIBUTIONS` (``"absent"`` when not installed)."""
    versions = {}
    for name in DISTRIBUTIONS:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "absent"
    return versions


def _output(*command: str) -> str:
    """A command's standard output, or ``""`` when it is missing or fails."""
    try:
        result = subprocess.run(command, capture_output=True, text=True, errors="replace", timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return result.stdout if result.returncode == 0 else ""


def _stat(path: str) -> str:
    try:
        status = os.stat(path)
    except OSError:
        return "missing"
    return f"{status.st_size}:{status.st_mtime_ns}"


def font_list() -> list[str]:
    """The fonts fontconfig offers: file, families, and the file's size and modification time."""
    lines = _output("fc-list", "--format", "%{file}|%{family}\n").splitlines()
    return sorted(f"{line}|{_stat(line.split('|', 1)[0])}" for line in lines if line.strip())


def tex_installation() -> list[str]:
    """The TeX that typesets the formulas: latex's and dvisvgm's versions, and the article class file."""
    article = _output("kpsewhich", "article.cls").strip()
    return [
        _output("latex", "--version").partition("\n")[0],
        _output("dvisvgm", "--version").partition("\n")[0],
        f"{article}|{_stat(article) if article else 'missing'}",
    ]


def code_version() -> str:
    """One hash of everything above; a change of any part re-renders every clip."""
    digest = hashlib.sha256()
    for name, source in source_files().items():
        digest.update(f"{name}\0".encode())
        digest.update(source.read_bytes())
    environment = {"packages": package_versions(), "fonts": font_list(), "tex": tex_installation()}
    digest.update(json.dumps(environment, sort_keys=True).encode())
    return digest.hexdigest()[:16]
