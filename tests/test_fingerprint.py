"""The clips' code key (``attention_explainer.fingerprint``): everything that shapes a frame.

A change of any source of ``scenes`` (sub-packages included), ``attention_math`` or
``attention_explainer``, of an installed library's version, of the fonts fontconfig offers or
of the TeX installation changes the key, so the bundle re-renders; nothing else does.
"""

from __future__ import annotations

import shutil
import time
from importlib import metadata
from pathlib import Path

import manim
import pytest

from attention_explainer import fingerprint
from attention_explainer.plan import BundleSettings, scene_key
from attention_explainer.selection import SCENES
from attention_math import preset


@pytest.fixture
def copies(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Copies of the three packages the key hashes, which the key then reads instead."""
    real = fingerprint._package_dir
    for package in ("scenes", "attention_math", "attention_explainer"):
        shutil.copytree(real(package), tmp_path / package, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(fingerprint, "_package_dir", lambda package: tmp_path / package)
    return tmp_path


def test_the_key_is_stable_and_quick() -> None:
    started = time.monotonic()
    first = fingerprint.code_version()
    assert time.monotonic() - started < 5  # computed once per bundle build
    assert fingerprint.code_version() == first
    assert len(first) == 16


@pytest.mark.parametrize(
    "path", ["attention_explainer/media.py", "attention_math/__init__.py", "scenes/base.py", "scenes/plan.py"]
)
def test_a_changed_source_file_changes_the_key(copies: Path, path: str) -> None:
    before = fingerprint.code_version()
    source = copies / path
    source.write_text(source.read_text(encoding="utf-8") + "\n# one more line\n", encoding="utf-8")
    assert fingerprint.code_version() != before


def test_a_new_file_in_a_sub_package_changes_the_key(copies: Path) -> None:
    before = fingerprint.code_version()
    (copies / "scenes" / "kit").mkdir(exist_ok=True)
    (copies / "scenes" / "kit" / "new_idea.py").write_text("WIDTH = 3\n", encoding="utf-8")
    assert "scenes/kit/new_idea.py" in fingerprint.source_files()
    assert fingerprint.code_version() != before


def test_a_byte_code_cache_does_not_change_the_key(copies: Path) -> None:
    before = fingerprint.code_version()
    (copies / "scenes" / "__pycache__").mkdir(exist_ok=True)
    (copies / "scenes" / "__pycache__" / "base.cpython-311.pyc").write_bytes(b"\0" * 16)
    (copies / "scenes" / "notes.txt").write_text("not source\n", encoding="utf-8")
    assert fingerprint.code_version() == before


def test_the_parts_read_this_machine() -> None:
    versions = fingerprint.package_versions()
    assert set(versions) == set(fingerprint.DISTRIBUTIONS)
    assert versions["manim"] == manim.__version__
    assert versions["av"] == metadata.version("av")
    assert any("DejaVu Sans" in font for font in fingerprint.font_list())  # the scenes' own font
    latex, dvisvgm, article = fingerprint.tex_installation()
    assert "TeX" in latex and "dvisvgm" in dvisvgm
    assert article.split("|")[0].endswith("article.cls") and "missing" not in article


@pytest.mark.parametrize(
    ("part", "changed"),
    [
        ("package_versions", lambda real: {**real, "manim": "0.21.1"}),
        ("package_versions", lambda real: {**real, "manimpango": "absent"}),
        ("font_list", lambda real: real[1:]),  # one font fewer
        ("font_list", lambda real: [*real, "/usr/share/fonts/new.ttf|New Sans|1024:1"]),
        ("tex_installation", lambda real: ["pdfTeX 3.2 (TeX Live 2030)", *real[1:]]),
    ],
    ids=["manim version", "manimpango uninstalled", "a font removed", "a font added", "another TeX"],
)
def test_another_library_font_or_tex_changes_the_key(part: str, changed, monkeypatch: pytest.MonkeyPatch) -> None:
    before = fingerprint.code_version()
    real = getattr(fingerprint, part)()
    monkeypatch.setattr(fingerprint, part, lambda: changed(real))
    after = fingerprint.code_version()
    assert after != before
    # and so does every clip's key
    scenario, spec, settings = preset("dog-chased-ball"), SCENES[2], BundleSettings()
    assert scene_key(spec, scenario, settings, after) != scene_key(spec, scenario, settings, before)


def test_without_fontconfig_or_tex_on_the_path_the_key_still_comes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # a broken installation: the render then fails in one line
    assert fingerprint.font_list() == []
    assert fingerprint.tex_installation() == ["", "", "|missing"]
    assert len(fingerprint.code_version()) == 16
