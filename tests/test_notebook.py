"""The handout's notebook as code: user text only as literals, every step the handout has, and a
run of it for a scenario at 4 decimals (the bundle's own notebook runs in test_lecture_hall)."""

from __future__ import annotations

import ast
import dataclasses
import io
import json
import tokenize
from pathlib import Path

import pytest

from attention_explainer.outputs.handout import HANDOUT_MATRICES, handout_files
from attention_explainer.outputs.notebook import notebook_json
from attention_math import Scenario, format_number, preset

HOSTILE_TITLE = '"); import os # {{ x }} \'\'\' """ \\ \u202eevil\u200b <script>x</script>'
HOSTILE_SENTENCE = '"); import {{x}} \'\'\' \\n \u202eevil a\u200bb'


def _code_cells(text: str) -> list[str]:
    return ["".join(cell["source"]) for cell in json.loads(text)["cells"] if cell["cell_type"] == "code"]


def test_every_handout_matrix_is_a_step_the_notebook_checks() -> None:
    cells = _code_cells(notebook_json(preset("your-journey")))
    steps = ", ".join(f"{stem!r}: {stem}" for stem, *_ in HANDOUT_MATRICES)
    assert f"steps = {{{steps}}}" in cells[-1]


def test_user_text_is_only_ever_a_literal_never_source_or_a_comment() -> None:
    scenario = dataclasses.replace(Scenario.from_sentence(HOSTILE_SENTENCE, seed=1), title=HOSTILE_TITLE)
    cells = _code_cells(notebook_json(scenario))
    assignments: dict[str, object] = {}
    for cell in cells:
        tree = ast.parse(cell)  # every cell is valid Python
        for node in tree.body:
            if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
                if node.targets[0].id in {"TITLE", "TOKENS"}:
                    assignments[node.targets[0].id] = ast.literal_eval(node.value)
        lexed = tokenize.generate_tokens(io.StringIO(cell).readline)
        comments = [t.string for t in lexed if t.type == tokenize.COMMENT]
        assert not [c for c in comments for word in scenario.tokens if len(word) > 2 and word in c]
        assert all(ch.isprintable() for ch in cell.replace("\n", "")), "no invisible character in the source"
    assert assignments == {"TITLE": HOSTILE_TITLE, "TOKENS": list(scenario.tokens)}
    markdown = [cell for cell in json.loads(notebook_json(scenario))["cells"] if cell["cell_type"] == "markdown"]
    assert "<script>" not in "".join("".join(cell["source"]) for cell in markdown)


@pytest.mark.render  # starts a Jupyter kernel: with the slow tests, on their worker
def test_the_notebook_runs_and_prints_every_step_at_four_decimals(tmp_path: Path) -> None:
    import nbformat
    from nbclient import NotebookClient

    scenario = preset("your-journey")
    for name, content in handout_files(scenario).items():
        (tmp_path / name).write_text(content, encoding="utf-8")
    (tmp_path / "notebook.ipynb").write_text(notebook_json(scenario), encoding="utf-8")
    book = nbformat.read(str(tmp_path / "notebook.ipynb"), as_version=4)
    NotebookClient(book, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    printed = "".join(o.get("text", "") for c in book.cells if c.cell_type == "code" for o in c.get("outputs", []))
    trace, p = scenario.trace(), scenario.precision
    for row, token in zip(trace.weights, scenario.tokens, strict=True):  # each row, as the handout shows it
        assert "  ".join(format_number(v, p, minus="-") for v in row) + f"   {token}" in printed
    z = ", ".join(format_number(v, p, minus="-") for v in trace.context[scenario.query])
    assert f"z{scenario.query + 1} = ({z})" in printed
    assert "Every step matches the handout's CSV files" in printed
