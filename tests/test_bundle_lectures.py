"""A bundle of another lecture than lecture 6 carries that lecture's handout and notebook.

One small render (the multi-head lecture, its one scene at -ql and 5 frames a second): the bundle's
handout is the multi-head lecture's, file for file, the manifest and the page list every file of it,
and its notebook (the multi-head one) runs in the bundle and passes its check. The masked lecture's
scenes are not on this branch: its handout and notebook are tested through their functions
(``tests/test_handout_lectures.py``, ``tests/test_notebook.py``).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from attention_explainer.outputs.handout import handout_files
from attention_explainer.outputs.notebook import notebook_json
from attention_math import load_scenario

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
