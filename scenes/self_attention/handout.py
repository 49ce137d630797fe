"""Lecture 6, self-attention: softmax(Q Kᵀ / √d_k) V one step at a time.

The handout holds X, the three weight matrices, Q, K, V, the scores, the scaled scores, the
weights and Z (of head 1 when the scenario has several); the notebook computes each in numpy.
"""

from __future__ import annotations

import numpy as np

from attention_explainer.escape import markdown_literal
from attention_explainer.outputs.steps import (
    LectureSteps,
    NotebookCells,
    PageSummary,
    QueryRow,
    Table,
    matrix_literal,
    numbered,
    table,
)
from attention_math import AttentionTrace, Scenario

__all__ = [
    "HANDOUT_MATRICES",
    "PROJECTIONS",
    "SELF_ATTENTION",
    "data_cell",
    "head_one_fact",
    "head_one_note",
    "notebook",
    "page",
    "pytorch_cell",
    "scenario_constants",
    "scores_words",
    "tables",
    "trace_table",
]

# (file stem, trace field, caption, row labels are tokens?, column prefix)
HANDOUT_MATRICES: tuple[tuple[str, str, str, bool, str], ...] = (
    ("X", "embeddings", "X, the input embeddings", True, "x"),
    ("W_Q", "w_query", "W_Q, the query weights", False, "q"),
    ("W_K", "w_key", "W_K, the key weights", False, "k"),
    ("W_V", "w_value", "W_V, the value weights", False, "v"),
    ("Q", "queries", "Q = X W_Q, the queries", True, "q"),
    ("K", "keys", "K = X W_K, the keys", True, "k"),
    ("V", "values", "V = X W_V, the values", True, "v"),
    ("scores", "scores", "Q Kᵀ, the attention scores", True, ""),
    ("scaled_scores", "scaled_scores", "Q Kᵀ / √d_k, the scaled scores", True, ""),
    ("weights", "weights", "softmax(Q Kᵀ / √d_k), the attention weights", True, ""),
    ("Z", "context", "Z = weights V, the context vectors", True, "z"),
)
"""The handout's matrices: each the trace field it holds (the notebook's variable is the stem)."""

_KEY_COLUMNS = frozenset({"scores", "scaled_scores", "weights"})  # a column per key: the tokens


def trace_table(
    scenario: Scenario, trace: AttentionTrace, stem: str, field: str, caption: str, prefix: str, token_rows: bool = True
) -> Table:
    """A trace matrix as a table: rows the tokens (or ``row 1`` … for a weight matrix, whose rows
    are embedding dimensions), columns the tokens for scores and weights, else ``prefix`` numbered."""
    matrix = np.asarray(getattr(trace, field))
    rows = scenario.tokens if token_rows else tuple(f"row {i + 1}" for i in range(matrix.shape[0]))
    columns = scenario.tokens if field in _KEY_COLUMNS else numbered(prefix, matrix.shape[1])
    return table(stem, caption, rows, columns, matrix, stem, token_rows=token_rows)


def tables(scenario: Scenario) -> tuple[Table, ...]:
    """Every matrix of :data:`HANDOUT_MATRICES`, of the scenario's trace (head 1's)."""
    trace = scenario.trace()
    return tuple(
        trace_table(scenario, trace, stem, field, caption, prefix, token_rows)
        for stem, field, caption, token_rows, prefix in HANDOUT_MATRICES
    )


def scenario_constants(scenario: Scenario) -> tuple[str, ...]:
    """The data cell's first lines, every lecture's: the title and tokens as literals, the query, the decimals and
    whether the scores are scaled."""
    return (
        f"TITLE = {scenario.title!r}",
        f"TOKENS = {list(scenario.tokens)!r}",
        f"QUERY = {scenario.query}  # the query token, counted from 0 (from 1 on screen)",
        f"PRECISION = {scenario.precision}  # the decimals the lecture shows",
        f"SCALED = {scenario.scaled!r}  # divide the scores by the square root of d_k",
    )


def data_cell(scenario: Scenario, *extra: str) -> str:
    """The scenario as data: the title and tokens as literals, the matrices to the last bit
    (head 1's), each printed; ``extra`` lines of constants after the matrices."""
    trace = scenario.trace()
    lines = [
        *scenario_constants(scenario),
        *extra,
        "",
        f"X = {matrix_literal(trace.embeddings)}  # the embeddings, one row per token",
        f"W_Q = {matrix_literal(trace.w_query)}",
        f"W_K = {matrix_literal(trace.w_key)}",
        f"W_V = {matrix_literal(trace.w_value)}",
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


PROJECTIONS = (
    "## Queries, keys and values\n\nEach token's embedding times three learned matrices.",
    'Q = X @ W_Q\nK = X @ W_K\nV = X @ W_V\nshow("Q = X W_Q", Q, TOKENS)\nshow("K = X W_K", K, TOKENS)\n'
    'show("V = X W_V", V, TOKENS)',
)

_STEP_CELLS: tuple[tuple[str, str], ...] = (
    PROJECTIONS,
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

def pytorch_cell(what: str, code: str, *, source: str = ", from the arrays above", inputs: bool = True) -> str:
    """The notebook's last cell, Markdown: ``what`` in PyTorch (not run: torch is no dependency of the notebook),
    ``source`` after the note; ``code`` in a Python block after ``import torch`` and, with ``inputs``, the
    scenario's X, W_Q, W_K and W_V as tensors."""
    tensors = "X, W_Q, W_K, W_V = (torch.from_numpy(m) for m in (X, W_Q, W_K, W_V))  # float64, as above\n"
    return (f"{what} (not run here; `pip install torch`){source}:\n\n```python\nimport torch\n\n"
            f"{tensors if inputs else ''}{code}```\n")


_TORCH = pytorch_cell("The same steps in PyTorch", '''\
Q, K, V = X @ W_Q, X @ W_K, X @ W_V
scores = Q @ K.T
scaled_scores = scores / K.shape[-1] ** 0.5 if SCALED else scores
weights = torch.softmax(scaled_scores, dim=-1)  # each row adds up to 1
Z = weights @ V
print(Z[QUERY])  # the query's context vector

# all of it in one call (PyTorch 2):
Z = torch.nn.functional.scaled_dot_product_attention(Q, K, V, scale=None if SCALED else 1.0)
''')


def head_one_note(scenario: Scenario) -> str:
    """The intro's last sentence for a scenario of several heads (the notebook follows head 1)."""
    return f" It follows head 1 of the scenario's {scenario.n_heads}." if scenario.n_heads > 1 else ""


def notebook(scenario: Scenario) -> NotebookCells:
    """The notebook's cells: X, W_Q, W_K, W_V as data, then Q, K, V, the scores, ÷ √d_k, the softmax, Z."""
    intro = (
        f"# Self-attention, step by step: {markdown_literal(scenario.title)}\n\n"
        "Every number of the lecture computed with numpy and printed at its "
        f"{scenario.precision} decimals, softmax(Q Kᵀ / √d_k) V one step per cell. The last cell "
        f"checks each step against the handout's CSV files beside this notebook.{head_one_note(scenario)}"
    )
    return NotebookCells(intro, data_cell(scenario), _STEP_CELLS, _TORCH)


def scores_words(scenario: Scenario) -> str:
    """The scores as the formulas write them: ``QKᵀ/√d_k``, or ``QKᵀ`` for an unscaled scenario."""
    return "QKᵀ/√d_k" if scenario.scaled else "QKᵀ"


def head_one_fact(scenario: Scenario) -> tuple[str, ...]:
    """The page's line for a scenario of several heads in a lecture whose clips show head 1."""
    return (f"{scenario.n_heads} heads (the clips show head 1)",) if scenario.n_heads > 1 else ()


def page(scenario: Scenario) -> PageSummary:
    """The page's top: self-attention's formula, the query's weights over every key and its z."""
    step = scenario.query_step()
    q = scenario.query + 1
    row = QueryRow(
        f"The weights of query {q} and its context vector", step.weights, (False,) * scenario.n_tokens,
        (f"z{q}", step.context),
    )
    intro = (
        "Every token asks with its query, answers with its key and offers its value: a query's weights, "
        "the softmax of its scores against every key, mix the values into its context vector."
    )
    return PageSummary(
        "Lecture 6: self-attention", intro, f"softmax({scores_words(scenario)}) V", head_one_fact(scenario), (row,)
    )


SELF_ATTENTION = LectureSteps(tables=tables, notebook=notebook, probe="weights", page=page)
"""Lecture 6's handout and notebook."""
