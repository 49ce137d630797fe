"""The handout's notebook, ``handout/notebook.ipynb``: the lecture's arithmetic to run and change.

The scenario's matrices, then numpy cells that compute the lecture's steps one by one
(its folder's ``handout.py`` says which: lecture 6's Q, K and V, the scores, ÷ √d_k,
the weights and the context vectors; the masked lecture's mask, renormalised route and dropout;
the multi-head lecture's heads, their join, W_O and the fused form), each printed at the
lecture's precision; a last cell checks every step against the handout's CSV files beside the
notebook; the same steps in PyTorch close it as a Markdown code block (not run: torch is no
dependency). A decoder's head (``--model smollm2``) turns Q and K by RoPE as the model does: every lecture's
``X @ W_Q`` and ``X @ W_K`` become ``turned(X @ W_Q)`` and ``turned(X @ W_K)``, ``turned`` defined after the data.

User text (the title, the tokens) enters the code only as :func:`repr` literals, which Python
reads back as the same string whatever it holds (quotes, ``"); import os #``, braces,
right-to-left or zero-width characters), and the Markdown cells only through
:func:`attention_explainer.escape.markdown_literal`. No comment or name is made from it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from attention_math import Scenario
from attention_math.smollm import SmolHead
from scenes.registry import DEFAULT_LECTURE

from .lectures import lecture_steps
from .steps import NotebookCells, Table

__all__ = ["check_cell", "notebook", "notebook_json"]

_HELPERS = '''\
import csv
from pathlib import Path

import numpy as np


def number(value):
    """A number at the lecture's precision, as the handout prints it (never "-0.00")."""
    text = f"{value:.{PRECISION}f}"
    return text[1:] if text.startswith("-") and float(text) == 0 else text


def show(name, matrix, rows=None):
    """Print a matrix at the lecture's precision, one row per line, its token after it."""
    matrix = np.atleast_2d(matrix)
    width = max(len(number(v)) for v in matrix.ravel())
    print(name)
    for i, row in enumerate(matrix):
        label = "" if rows is None else "   " + rows[i]
        print("  " + "  ".join(number(v).rjust(width) for v in row) + label)
    print()
'''

_CHECK = '''\
HANDOUT = Path(".") if Path("{PROBE}.csv").exists() else Path("handout")


def read_handout(name):
    """A handout CSV: its row labels and its numbers (written to the last bit)."""
    with open(HANDOUT / f"{name}.csv", newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))[1:]
    return [row[0] for row in rows], np.array([[float(v) for v in row[1:]] for row in rows])


steps = {STEPS}
for name, ours in steps.items():
    labels, theirs = read_handout(name)
    np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=1e-12, err_msg=name)
    if name not in {NOT_TOKENS}:
        assert labels == TOKENS, name
print("Every step matches the handout's CSV files:", ", ".join(steps))
'''


def check_cell(tables: Sequence[Table], probe: str) -> str:
    """The last code cell: every table's notebook variable against its CSV, the labels of token rows
    against the tokens; ``probe``'s CSV beside the notebook says the CSV files are there."""
    steps = "{" + ", ".join(f"{t.stem!r}: {t.variable}" for t in tables) + "}"
    others = [f'"{t.stem}"' for t in tables if not t.token_rows]  # stems are the lectures' own names
    not_tokens = "(" + ", ".join(others) + ("," if len(others) == 1 else "") + ")"
    return _CHECK.replace("{PROBE}", probe).replace("{NOT_TOKENS}", not_tokens).replace("{STEPS}", steps)


_TURNED = '''

ROPE_BASE = {base!r}  # RoPE's base, as the model's file gives it (llama.rope.freq_base)


def turned(M, first=0):
    """RoPE as the model turns its q and k: pair (2i, 2i+1) of the row at position m (from 0; the first row's
    is ``first``) by m·θ_i, θ_i = ROPE_BASE^(−2i/d)."""
    d = M.shape[1]
    angles = np.arange(first, first + M.shape[0])[:, None] * ROPE_BASE ** (-np.arange(0, d, 2) / d)
    out = np.empty_like(M)
    out[:, 0::2] = M[:, 0::2] * np.cos(angles) - M[:, 1::2] * np.sin(angles)
    out[:, 1::2] = M[:, 0::2] * np.sin(angles) + M[:, 1::2] * np.cos(angles)
    return out
'''


def decoder_cells(scenario: Scenario, own: NotebookCells) -> NotebookCells:
    """``own`` for a decoder's head: ``turned`` defined after the data, and every ``X @ W_Q`` and ``X @ W_K`` of
    the steps turned (the cells unchanged for any other scenario, or where the lecture turns them itself)."""
    if scenario.model is None or not scenario.model.causal or any("def turned" in code for _, code in own.steps):
        return own
    head = scenario.model_head()
    assert isinstance(head, SmolHead)
    base = head.config.rope_base
    steps = tuple((text, code.replace("X @ W_Q", "turned(X @ W_Q)").replace("X @ W_K", "turned(X @ W_K)"))
                  for text, code in own.steps)
    return replace(own, data=own.data + _TURNED.format(base=base), steps=steps)


def notebook(scenario: Scenario, lecture: str = DEFAULT_LECTURE) -> Any:
    """The lecture's notebook for ``scenario`` (an ``nbformat`` v4 notebook node)."""
    import nbformat

    v4: Any = nbformat.v4  # nbformat has no type hints
    steps = lecture_steps(lecture)
    own = decoder_cells(scenario, steps.notebook(scenario))
    cells = [v4.new_markdown_cell(own.intro), v4.new_code_cell(_HELPERS), v4.new_code_cell(own.data)]
    for text, code in own.steps:
        cells += [v4.new_markdown_cell(text), v4.new_code_cell(code)]
    check = check_cell(steps.tables(scenario), steps.probe)
    cells += [v4.new_markdown_cell("## Check against the handout"), v4.new_code_cell(check)]
    cells.append(v4.new_markdown_cell(own.pytorch))
    kernel = {"name": "python3", "display_name": "Python 3", "language": "python"}
    return v4.new_notebook(cells=cells, metadata={"kernelspec": kernel, "language_info": {"name": "python"}})


def notebook_json(scenario: Scenario, lecture: str = DEFAULT_LECTURE) -> str:
    """The lecture's notebook as the text of an ``.ipynb`` file.

    Parameters
    ----------
    scenario
        The scenario whose matrices the notebook holds (its first head, when it has several and
        the lecture follows one head).
    lecture
        A lecture's name (``--lecture``, :func:`scenes.registry.lecture_names`).

    Returns
    -------
    str
        The notebook's JSON (nbformat 4, validated), not yet run.
    """
    import nbformat

    node = notebook(scenario, lecture)
    nbformat.validate(node)
    writes: Any = nbformat.writes  # nbformat has no type hints
    text: str = writes(node)
    return text + "\n"

