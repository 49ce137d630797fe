"""The handout's notebook, ``handout/notebook.ipynb``: the lecture's arithmetic to run and change.

The scenario's matrices, then numpy cells that compute Q, K and V, the scores, ÷ √d_k, the
weights and the context vectors step by step, each printed at the lecture's precision; a last
cell checks every step against the handout's CSV files beside the notebook; the same steps in
PyTorch close it as a Markdown code block (not run: torch is no dependency).

User text (the title, the tokens) enters the code only as :func:`repr` literals, which Python
reads back as the same string whatever it holds (quotes, ``"); import os #``, braces,
right-to-left or zero-width characters), and the Markdown cells only through
:func:`attention_explainer.escape.markdown_literal`. No comment or name is made from it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from attention_math import Scenario

from ..escape import markdown_literal

__all__ = ["STEPS", "notebook", "notebook_json"]

STEPS: tuple[tuple[str, str], ...] = (
    ("X", "X"),
    ("W_Q", "W_Q"),
    ("W_K", "W_K"),
    ("W_V", "W_V"),
    ("Q", "Q"),
    ("K", "K"),
    ("V", "V"),
    ("scores", "scores"),
    ("scaled_scores", "scaled_scores"),
    ("weights", "weights"),
    ("Z", "Z"),
)
"""``(handout CSV stem, the notebook's variable)`` for every step the last cell checks (every
matrix of :data:`attention_explainer.outputs.handout.HANDOUT_MATRICES`)."""

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
HANDOUT = Path(".") if Path("weights.csv").exists() else Path("handout")


def read_handout(name):
    """A handout CSV: its row labels and its numbers (written to the last bit)."""
    with open(HANDOUT / f"{name}.csv", newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))[1:]
    return [row[0] for row in rows], np.array([[float(v) for v in row[1:]] for row in rows])


steps = {STEPS}
for name, ours in steps.items():
    labels, theirs = read_handout(name)
    np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=1e-12, err_msg=name)
    if name not in ("W_Q", "W_K", "W_V"):
        assert labels == TOKENS, name
print("Every step matches the handout's CSV files:", ", ".join(steps))
'''

_TORCH = '''\
The same steps in PyTorch (not run here; `pip install torch`), from the arrays above:

```python
import torch

X, W_Q, W_K, W_V = (torch.from_numpy(m) for m in (X, W_Q, W_K, W_V))  # float64, as above
Q, K, V = X @ W_Q, X @ W_K, X @ W_V
scores = Q @ K.T
scaled_scores = scores / K.shape[-1] ** 0.5 if SCALED else scores
weights = torch.softmax(scaled_scores, dim=-1)  # each row adds up to 1
Z = weights @ V
print(Z[QUERY])  # the query's context vector

# all of it in one call (PyTorch 2):
Z = torch.nn.functional.scaled_dot_product_attention(Q, K, V, scale=None if SCALED else 1.0)
```
'''


def _matrix_literal(matrix: Any) -> str:
    """A float64 matrix as a numpy literal, one row per line, every value to the last bit."""
    rows = [f"    [{', '.join(repr(float(v)) for v in row)}]," for row in np.asarray(matrix)]
    return "np.array([\n" + "\n".join(rows) + "\n])"


def _data_cell(scenario: Scenario) -> str:
    """The scenario as data: the title and tokens as literals, the matrices to the last bit."""
    trace = scenario.trace()
    lines = [
        f"TITLE = {scenario.title!r}",
        f"TOKENS = {list(scenario.tokens)!r}",
        f"QUERY = {scenario.query}  # the query token, counted from 0 (from 1 on screen)",
        f"PRECISION = {scenario.precision}  # the decimals the lecture shows",
        f"SCALED = {scenario.scaled!r}  # divide the scores by the square root of d_k",
        "",
        f"X = {_matrix_literal(trace.embeddings)}  # the embeddings, one row per token",
        f"W_Q = {_matrix_literal(trace.w_query)}",
        f"W_K = {_matrix_literal(trace.w_key)}",
        f"W_V = {_matrix_literal(trace.w_value)}",
        "",
        "print(TITLE)",
        'print("the query:", TOKENS[QUERY], f"(token {QUERY + 1})")',
        "print()",
        'show("X, the embeddings", X, TOKENS)',
        'show("W_Q", W_Q)',
        'show("W_K", W_K)',
        'show("W_V", W_V)',
    ]
    return "\n".join(lines)


_STEP_CELLS: tuple[tuple[str, str], ...] = (
    (
        "## Queries, keys and values\n\nEach token's embedding times three learned matrices.",
        'Q = X @ W_Q\nK = X @ W_K\nV = X @ W_V\nshow("Q = X W_Q", Q, TOKENS)\nshow("K = X W_K", K, TOKENS)\n'
        'show("V = X W_V", V, TOKENS)',
    ),
    (
        "## Scores\n\nEvery query against every key: a row per query, a column per key.",
        'scores = Q @ K.T\nshow("scores = Q Kᵀ", scores, TOKENS)',
    ),
    (
        "## Divide by √d_k\n\nSo the scores do not grow with the size of the keys.",
        "d_k = K.shape[1]\nscaled_scores = scores / np.sqrt(d_k) if SCALED else scores\n"
        'print("d_k =", d_k, "  √d_k =", number(np.sqrt(d_k)), "  scaled:", SCALED)\n'
        'show("scaled scores = scores / √d_k", scaled_scores, TOKENS)',
    ),
    (
        "## Softmax, row by row\n\nExponentiate (after subtracting each row's largest score), "
        "then divide by the row's sum: weights that add up to 1.",
        "exps = np.exp(scaled_scores - scaled_scores.max(axis=1, keepdims=True))\n"
        "weights = exps / exps.sum(axis=1, keepdims=True)\n"
        'show("weights = softmax(scaled scores)", weights, TOKENS)\n'
        'print("each row adds up to", number(weights.sum(axis=1).min()), "to", number(weights.sum(axis=1).max()))',
    ),
    (
        "## The weighted sum\n\nEach token's context vector mixes the value rows by its weights.",
        'Z = weights @ V\nshow("Z = weights V", Z, TOKENS)\n'
        'print(f"z{QUERY + 1} = (" + ", ".join(number(v) for v in Z[QUERY]) + ")")',
    ),
)


def notebook(scenario: Scenario) -> Any:
    """The notebook for ``scenario`` (an ``nbformat`` v4 notebook node)."""
    import nbformat

    v4: Any = nbformat.v4  # nbformat has no type hints
    heads = f" It follows head 1 of the scenario's {scenario.n_heads}." if scenario.n_heads > 1 else ""
    intro = (
        f"# Self-attention, step by step: {markdown_literal(scenario.title)}\n\n"
        "Every number of the lecture computed with numpy and printed at its "
        f"{scenario.precision} decimals, softmax(Q Kᵀ / √d_k) V one step per cell. The last cell "
        f"checks each step against the handout's CSV files beside this notebook.{heads}"
    )
    cells = [v4.new_markdown_cell(intro), v4.new_code_cell(_HELPERS), v4.new_code_cell(_data_cell(scenario))]
    for text, code in _STEP_CELLS:
        cells += [v4.new_markdown_cell(text), v4.new_code_cell(code)]
    steps = "{" + ", ".join(f"{stem!r}: {name}" for stem, name in STEPS) + "}"
    cells += [v4.new_markdown_cell("## Check against the handout"), v4.new_code_cell(_CHECK.replace("{STEPS}", steps))]
    cells.append(v4.new_markdown_cell(_TORCH))
    kernel = {"name": "python3", "display_name": "Python 3", "language": "python"}
    return v4.new_notebook(cells=cells, metadata={"kernelspec": kernel, "language_info": {"name": "python"}})


def notebook_json(scenario: Scenario) -> str:
    """The notebook as the text of an ``.ipynb`` file.

    Parameters
    ----------
    scenario
        The scenario whose matrices the notebook holds (its first head, when it has several).

    Returns
    -------
    str
        The notebook's JSON (nbformat 4, validated), not yet run.
    """
    import nbformat

    node = notebook(scenario)
    nbformat.validate(node)
    writes: Any = nbformat.writes  # nbformat has no type hints
    text: str = writes(node)
    return text + "\n"

