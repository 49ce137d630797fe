"""What the course tests check of a bundle the course made: whole, as its manifest lists it."""

from __future__ import annotations

import json
from pathlib import Path

__all__ = ["assert_whole"]


def assert_whole(bundle: Path) -> None:
    """The bundle's folder holds exactly what its manifest lists (hidden files too), each at its size."""
    manifest = json.loads((bundle / "manifest.json").read_text(encoding="utf-8"))
    listed = {entry["path"]: entry["bytes"] for entry in manifest["files"]}
    for rel, size in listed.items():
        assert (bundle / rel).stat().st_size == size, rel
    present = {p.relative_to(bundle).as_posix() for p in bundle.rglob("*") if p.is_file()}
    assert present - {"manifest.json"} == set(listed)
