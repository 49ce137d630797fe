"""A bundle of another lecture than lecture 6 is that lecture's: its handout, notebook, page and deck.

Two small renders at -ql and 5 frames a second. The multi-head lecture, all its scenes: the bundle's
handout is the multi-head lecture's, file for file, the manifest and the page list every file of it,
and its notebook (the multi-head one) runs in the bundle and passes its check. The masked lecture, one
scene, as a lecturer runs it (``--slides --pptx --voice``): its manifest, deck and PowerPoint deck hold
that scene with its voice. Each page, opened offline in headless Chromium, is its lecture's: its name,
intro and formula, and the query's numbers as that lecture computes them (the masked lecture's causal
weights; every head's weights, the heads joined and the output), checked here against numpy loops.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import srt
from browser import CHROMIUM, Chromium, blank
from scene_helpers import clean_environment

from attention_explainer.media import probe
from attention_explainer.outputs.handout import handout_files
from attention_explainer.outputs.notebook import notebook_json
from attention_math import Scenario, format_number, load_scenario
from scenes.registry import lecture

pytestmark = pytest.mark.render
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("lectures") / "multi-head"
    result = subprocess.run(
        [sys.executable, "-m", "attention_explainer", "render", "--lecture", "multi-head", "--quality", "l",
         "--fps", "5", "--out", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=900,
    )
    assert result.returncode == 0, result.stderr
    return out


MASKED_SCENE = "06-triangular-map"  # the masked lecture's last scene: its summary, and cheap to render


@pytest.fixture(scope="module")
def masked(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("lectures") / "masked"
    result = subprocess.run(
        [sys.executable, "-m", "attention_explainer", "render", "--lecture", "masked", "--scenes", "6", "--slides",
         "--pptx", "--voice", "--quality", "l", "--fps", "5", "--out", str(out)],
        cwd=ROOT, env=clean_environment(), capture_output=True, text=True, timeout=900,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return out


def test_the_bundles_handout_is_the_multi_head_lectures(bundle: Path) -> None:
    scenario = load_scenario(bundle / "scenario.toml")
    assert scenario.n_heads == 2
    expected = handout_files(scenario, "multi-head")
    assert {"W_Q_big.csv", "concat.csv", "W_O.tex", "weights_2.csv"} <= set(expected)
    written = {path.name: path.read_text(encoding="utf-8") for path in (bundle / "handout").iterdir()}
    notebook = written.pop("notebook.ipynb")
    assert written == expected
    cells = ["".join(c["source"]) for c in json.loads(notebook)["cells"]]
    fresh = ["".join(c["source"]) for c in json.loads(notebook_json(scenario, "multi-head"))["cells"]]
    assert cells == fresh  # cell ids aside (nbformat draws them)
    manifest = json.loads((bundle / "manifest.json").read_text(encoding="utf-8"))
    listed = {e["path"] for e in manifest["files"] if e["kind"] in {"handout", "notebook"}}
    assert listed == {f"handout/{name}" for name in [*expected, "notebook.ipynb"]}
    page = (bundle / "index.html").read_text(encoding="utf-8")
    section = page[page.index('<section id="handout">') :]
    assert set(re.findall(r'href="handout/([^"]+)"', section)) == {*expected, "notebook.ipynb"}


def test_the_bundles_notebook_runs_and_matches_its_handout(bundle: Path) -> None:
    import nbformat
    from nbclient import NotebookClient

    book = nbformat.read(str(bundle / "handout" / "notebook.ipynb"), as_version=4)
    NotebookClient(book, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(bundle)}}).execute()
    printed = "".join(o.get("text", "") for c in book.cells if c.cell_type == "code" for o in c.get("outputs", []))
    assert "The fused form gives the same weights, the same concat and the same output" in printed
    assert "Every step matches the handout's CSV files: X, W_Q_1, " in printed


def _manifest(out: Path) -> dict:
    return json.loads((out / "manifest.json").read_text(encoding="utf-8"))


def test_the_masked_bundle_holds_its_scene_with_voice_deck_and_powerpoint(masked: Path) -> None:
    from pptx import Presentation

    manifest = _manifest(masked)
    assert [(scene["number"], scene["name"]) for scene in manifest["scenes"]] == [(6, lecture("masked").scene_names[5])]
    assert manifest["rendered"] == ["TriangularMap"]
    assert manifest["settings"]["voice"] and manifest["deck"] and manifest["pptx"]
    kinds = {entry["path"]: entry["kind"] for entry in manifest["files"]}
    for rel, kind in {"index.html": "page", "slides.html": "deck", "lecture.pptx": "pptx",
                      f"{MASKED_SCENE}.vtt": "webvtt", "handout/notebook.ipynb": "notebook",
                      "handout/masked_scores.csv": "handout"}.items():
        assert kinds.get(rel) == kind and (masked / rel).is_file(), rel
    assert "handout/walkthrough.md" not in kinds  # the walkthrough works unmasked attention
    cues = list(srt.parse((masked / f"{MASKED_SCENE}.srt").read_text(encoding="utf-8")))
    deck = (masked / "slides.html").read_text(encoding="utf-8")
    assert len(re.findall(r"<section\b", deck)) == len(cues)  # a slide per caption
    assert len(Presentation(str(masked / "lecture.pptx")).slides) >= 1
    for clip in (MASKED_SCENE, "lecture"):
        info = probe(masked / f"{clip}.mp4")
        assert info.audio_duration is not None and info.audio_duration == pytest.approx(info.duration, abs=0.25)


_TOP = """(() => {
  const text = selector => Array.from(document.querySelectorAll(selector)).map(e => e.textContent);
  return {lecture: text("p.lecture"), h1: text("h1"), title: document.title, intro: text("p.intro"),
          formula: text("p.formula code"), facts: text(".facts li"), headings: text(".weights h3"),
          rows: Array.from(document.querySelectorAll(".weights dl")).map(dl => Array.from(dl.children).map(d => ({
            key: d.querySelector("dt").textContent, weight: d.querySelector("dd").textContent,
            masked: d.classList.contains("masked")}))),
          vectors: text(".weights > p, .vectors p"), header: document.querySelector("header").textContent};
})()"""


def _page_top(out: Path, tmp_path: Path) -> tuple[dict, list[str]]:
    """The page's top as Chromium, offline, lays it out; and every URL the page asked for."""
    with Chromium(tmp_path / "profile") as browser:
        browser.open((out / "index.html").as_uri())
        top = browser.evaluate(_TOP)
        picture = browser.screenshot()
        requests = list(browser.requests)
    assert not blank(picture)
    return top, requests


def _softmax(scores: np.ndarray) -> np.ndarray:
    exps = np.exp(scores - scores.max())
    return exps / exps.sum()


def _shown(values: np.ndarray, precision: int) -> list[str]:
    return [format_number(float(v), precision) for v in values]


@pytest.mark.skipif(CHROMIUM is None, reason="make setup installs Debian's chromium")
def test_the_masked_page_is_the_masked_lectures(masked: Path, tmp_path: Path) -> None:
    s = load_scenario(masked / "scenario.toml")
    top, requests = _page_top(masked, tmp_path)
    assert top["lecture"] == ["Lecture 7: masked self-attention"] and top["h1"] == [s.title]
    assert top["title"] == f"{s.title} · Lecture 7: masked self-attention"
    assert top["formula"] == ["softmax(mask(QKᵀ/√d_k)) V"] and "−∞" in top["intro"][0]
    assert "head 1" not in top["header"]
    # the query's causal weights, from a loop over keys 1 … i (the paper's masked softmax)
    i, x = s.query, s.embeddings
    query, keys, values = x[i] @ s.w_query, x @ s.w_key, x @ s.w_value
    past = _softmax(np.array([query @ keys[j] / np.sqrt(s.d_k) for j in range(i + 1)]))
    weights = np.concatenate([past, np.zeros(s.n_tokens - i - 1)])
    [row] = top["rows"]
    assert [cell["key"] for cell in row] == list(s.tokens)
    assert [cell["weight"] for cell in row] == _shown(weights, s.precision)
    assert [cell["masked"] for cell in row] == [j > i for j in range(s.n_tokens)]
    assert top["vectors"] == [f"z{i + 1} = ({', '.join(_shown(weights @ values, s.precision))})"]
    assert requests and all(url.startswith(("file:", "data:")) for url in requests), requests


@pytest.mark.skipif(CHROMIUM is None, reason="make setup installs Debian's chromium")
def test_the_multi_head_page_is_the_multi_head_lectures(bundle: Path, tmp_path: Path) -> None:
    s: Scenario = load_scenario(bundle / "scenario.toml")
    top, requests = _page_top(bundle, tmp_path)
    assert top["lecture"] == ["Lecture 8: multi-head attention"] and top["h1"] == [s.title]
    assert top["formula"] == ["concat(head_1, …, head_h) W_O, where head_i = softmax(Q_i K_iᵀ/√d_k) V_i"]
    assert "head 1)" not in top["header"] and "2 heads, joined by W_O (4 × 3)" in top["facts"]
    i, p = s.query, s.precision
    joined = []
    for h, (head, row) in enumerate(zip(s.heads, top["rows"], strict=True), start=1):
        keys, values = head.embeddings @ head.w_key, head.embeddings @ head.w_value
        weights = _softmax(keys @ (head.embeddings[i] @ head.w_query) / np.sqrt(s.d_k))
        assert [cell["weight"] for cell in row] == _shown(weights, p), f"head {h}"
        assert not any(cell["masked"] for cell in row)
        joined.append(weights @ values)
    assert len(top["rows"]) == s.n_heads == 2
    concat = np.concatenate(joined)
    z = [f"z{i + 1} of head {h} = ({', '.join(_shown(v, p))})" for h, v in enumerate(joined, start=1)]
    assert top["vectors"] == [*z, f"concat{i + 1} = ({', '.join(_shown(concat, p))})",
                              f"output{i + 1} = concat{i + 1} W_O = ({', '.join(_shown(concat @ s.w_out, p))})"]
    assert requests and all(url.startswith(("file:", "data:")) for url in requests), requests
