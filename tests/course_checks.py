"""What the course tests check of a bundle the course made: whole, as its manifest lists it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from attention_explainer.cli import main

__all__ = ["assert_whole", "course_refusal"]


def assert_whole(bundle: Path) -> None:
    """The bundle's folder holds exactly what its manifest lists (hidden files too), each at its size."""
    manifest = json.loads((bundle / "manifest.json").read_text(encoding="utf-8"))
    listed = {entry["path"]: entry["bytes"] for entry in manifest["files"]}
    for rel, size in listed.items():
        assert (bundle / rel).stat().st_size == size, rel
    present = {p.relative_to(bundle).as_posix() for p in bundle.rglob("*") if p.is_file()}
    assert present - {"manifest.json"} == set(listed)


def course_refusal(tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str) -> str:
    """The one line ``course`` refuses a course file of ``text`` with: exit 2, no traceback, nothing made."""
    course = tmp_path / "course.toml"
    course.write_text(text, encoding="utf-8")
    status = main(["course", str(course), "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert status == 2, err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "out").exists()  # refused before anything was made
    return err.strip()
