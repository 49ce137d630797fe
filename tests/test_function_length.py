"""No function longer than 60 lines (decorators and docstring included): long ones are split
into named stages. Checked here for the packages whose owners have split theirs."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LIMIT = 60
CHECKED = ("attention_math", "attention_explainer", "bench", "tools")


def long_functions(path: Path, root: Path = ROOT) -> list[str]:
    """``file:line name (N lines)`` for each function of ``path`` of ``LIMIT`` lines or more."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            length = (node.end_lineno or node.lineno) - first + 1
            if length >= LIMIT:
                found.append(f"{path.relative_to(root)}:{node.lineno} {node.name} ({length} lines)")
    return found


@pytest.mark.parametrize("folder", CHECKED)
def test_every_function_is_under_60_lines(folder: str) -> None:
    files = sorted((ROOT / folder).rglob("*.py"))
    assert files
    assert [entry for path in files for entry in long_functions(path)] == []


def test_the_check_finds_a_long_function(tmp_path: Path) -> None:
    body = "".join(f"    x{i} = {i}\n" for i in range(LIMIT - 2))
    sample = tmp_path / "sample.py"
    sample.write_text(f"def short():\n    pass\n\n@staticmethod\ndef long():\n{body}", encoding="utf-8")
    assert long_functions(sample, tmp_path) == [f"sample.py:5 long ({LIMIT} lines)"]
    sample.write_text(f"def short():\n    pass\n\ndef long():\n{body}", encoding="utf-8")
    assert long_functions(sample, tmp_path) == []
