"""Lecture 8, multi-head attention: each head on its own, the heads joined, W_O, and the fused form.

The handout holds X; for each head ``h`` its ``W_Q_h``, ``W_K_h``, ``W_V_h``, ``Q_h``, ``K_h``,
``V_h``, ``scaled_scores_h``, ``weights_h`` and ``Z_h``; the heads' context vectors joined
(``concat``), ``W_O`` and the ``output``; and the efficient form's big matrices (every head's
``W_Q`` side by side) and their products, which the reshape splits back into heads. The notebook
loops over the heads, joins them, multiplies by W_O, then computes it all again the fused way
(one product per role, ``reshape`` and ``transpose``) and checks that the numbers agree.

A one-head scenario has no ``W_O``: its handout and notebook stop at the head's Z.
"""

from __future__ import annotations

import dataclasses

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
    stack_literal,
    table,
)
from attention_math import FusedHeadsTrace, Scenario, fused_multi_head
from scenes.self_attention.handout import HANDOUT_MATRICES, pytorch_cell, scenario_constants, trace_table

__all__ = ["MULTI_HEAD", "notebook", "page", "tables"]

_PER_HEAD = ("W_Q", "W_K", "W_V", "Q", "K", "V", "scaled_scores", "weights", "Z")
"""Lecture 6's steps that each head has (its stem is also the notebook's list of them)."""


def _head_tables(scenario: Scenario, head: Scenario, number: int) -> list[Table]:
    """Head ``number``'s matrices: ``W_Q_1`` …, the notebook's ``W_Q[0]`` …."""
    trace = head.trace()
    return [
        dataclasses.replace(
            trace_table(scenario, trace, stem, field, caption, prefix, token_rows),
            stem=f"{stem}_{number}", caption=f"head {number}: {caption}", variable=f"{stem}[{number - 1}]",
        )
        for stem, field, caption, token_rows, prefix in HANDOUT_MATRICES
        if stem in _PER_HEAD
    ]


def _by_head(prefix: str, heads: int, size: int) -> tuple[str, ...]:
    """Column names of matrices side by side, head by head: ``h1 q1``, ``h1 q2``, ``h2 q1`` …"""
    return tuple(f"h{h} {name}" for h in range(1, heads + 1) for name in numbered(prefix, size))


def _joined_tables(scenario: Scenario, fused: FusedHeadsTrace) -> list[Table]:
    """The heads joined, W_O and the output; the big matrices and their products."""
    tokens, h = scenario.tokens, fused.n_heads
    joined = _by_head("z", h, fused.d_v)
    d_in_rows = tuple(f"row {i + 1}" for i in range(fused.embeddings.shape[1]))
    outputs = numbered("o", fused.output.shape[1])
    multi = scenario.multi_head_trace()
    return [
        table("concat", "concat = [Z_1 … Z_h], each head's context vectors side by side", tokens, joined, multi.concat),
        table("W_O", "W_O, the output weights (a row per joined column)", joined, outputs, multi.w_out,
              token_rows=False),
        table("output", "output = concat W_O", tokens, outputs, multi.output),
        table("W_Q_big", "W_Q_big: every head's W_Q side by side", d_in_rows, _by_head("q", h, fused.d_k),
              fused.w_query_big, token_rows=False),
        table("W_K_big", "W_K_big: every head's W_K side by side", d_in_rows, _by_head("k", h, fused.d_k),
              fused.w_key_big, token_rows=False),
        table("W_V_big", "W_V_big: every head's W_V side by side", d_in_rows, _by_head("v", h, fused.d_v),
              fused.w_value_big, token_rows=False),
        table("Q_big", "Q_big = X W_Q_big: every head's queries in one product", tokens, _by_head("q", h, fused.d_k),
              fused.queries_big),
        table("K_big", "K_big = X W_K_big: every head's keys in one product", tokens, _by_head("k", h, fused.d_k),
              fused.keys_big),
        table("V_big", "V_big = X W_V_big: every head's values in one product", tokens, _by_head("v", h, fused.d_v),
              fused.values_big),
    ]


def _fused(scenario: Scenario) -> FusedHeadsTrace | None:
    """The fused form's trace, or None for a one-head scenario (it has no W_O)."""
    if scenario.w_out is None:
        return None
    return fused_multi_head(
        scenario.embeddings, scenario.w_query, scenario.w_key, scenario.w_value, scenario.w_out, scaled=scenario.scaled
    )


def tables(scenario: Scenario) -> tuple[Table, ...]:
    """The multi-head lecture's handout matrices: X, each head's steps, then the join and the fused form."""
    x = trace_table(scenario, scenario.trace(), "X", "embeddings", "X, the input embeddings (every head's)", "x")
    heads = [t for number, head in enumerate(scenario.heads, start=1) for t in _head_tables(scenario, head, number)]
    fused = _fused(scenario)
    return (x, *heads, *([] if fused is None else _joined_tables(scenario, fused)))


def _data_cell(scenario: Scenario) -> str:
    """The scenario as data: the title and tokens as literals, X, each head's matrices and W_O."""
    roles = ("w_query", "w_key", "w_value")
    stacks = {name: np.stack([getattr(head, name) for head in scenario.heads]) for name in roles}
    lines = [
        *scenario_constants(scenario),
        f"H = {scenario.n_heads}  # heads",
        "",
        f"X = {matrix_literal(scenario.embeddings)}  # the embeddings, one row per token, every head's",
        f"W_Q = {stack_literal(stacks['w_query'])}  # a d_in × d_k matrix per head",
        f"W_K = {stack_literal(stacks['w_key'])}",
        f"W_V = {stack_literal(stacks['w_value'])}",
        *([] if scenario.w_out is None else [f"W_O = {matrix_literal(scenario.w_out)}  # H·d_v × d_out"]),
        "",
        "print(TITLE)",
        'print("the query:", TOKENS[QUERY], f"(token {QUERY + 1})")',
        "print()",
        'show("X, the embeddings", X, TOKENS)',
        "for h in range(H):",
        '    show(f"head {h + 1}: W_Q", W_Q[h])',
        '    show(f"head {h + 1}: W_K", W_K[h])',
        '    show(f"head {h + 1}: W_V", W_V[h])',
        *([] if scenario.w_out is None else ['show("W_O", W_O)']),
    ]
    return "\n".join(lines)


_EACH_HEAD: tuple[tuple[str, str], ...] = (
    (
        "## Each head's queries, keys and values\n\nThe same X times each head's own three matrices.",
        "Q = [X @ W_Q[h] for h in range(H)]  # one matrix per head\nK = [X @ W_K[h] for h in range(H)]\n"
        "V = [X @ W_V[h] for h in range(H)]\nfor h in range(H):\n"
        '    show(f"head {h + 1}: Q = X W_Q", Q[h], TOKENS)\n    show(f"head {h + 1}: K = X W_K", K[h], TOKENS)\n'
        '    show(f"head {h + 1}: V = X W_V", V[h], TOKENS)',
    ),
    (
        "## Each head's weights\n\nEach head scores, scales and takes the softmax on its own: its own pattern "
        "of attention.",
        "d_k = W_K.shape[2]\nscaled_scores, weights = [], []\nfor h in range(H):\n    scores = Q[h] @ K[h].T\n"
        "    scaled_scores.append(scores / np.sqrt(d_k) if SCALED else scores)\n"
        "    exps = np.exp(scaled_scores[h] - scaled_scores[h].max(axis=1, keepdims=True))\n"
        "    weights.append(exps / exps.sum(axis=1, keepdims=True))\n"
        '    show(f"head {h + 1}: weights = softmax(Q Kᵀ / √d_k)", weights[h], TOKENS)',
    ),
    (
        "## Each head's context vectors",
        'Z = [weights[h] @ V[h] for h in range(H)]\nfor h in range(H):\n    show(f"head {h + 1}: Z = weights V", Z[h], '
        "TOKENS)",
    ),
)

_JOINED: tuple[tuple[str, str], ...] = (
    (
        "## Join the heads, then W_O\n\nEach token's context vectors of every head side by side, times W_O.",
        "concat = np.concatenate(Z, axis=1)  # row i: [z_i of head 1, z_i of head 2, …]\n"
        'show("concat", concat, TOKENS)\n'
        'output = concat @ W_O\nshow("output = concat W_O", output, TOKENS)\n'
        'print(f"output{QUERY + 1} = (" + ", ".join(number(v) for v in output[QUERY]) + ")")',
    ),
    (
        "## The same in one product: the big W_Q and the reshape\n\nEvery head's W_Q side by side makes one "
        "d_in × H·d_k matrix; X times it holds every head's queries, head h in its own block of columns. "
        "Reshaping to (n, H, d_k) and transposing to (H, n, d_k) gives each head's Q.",
        "W_Q_big = np.concatenate(W_Q, axis=1)  # head h's W_Q in columns h·d_k … (h + 1)·d_k − 1\n"
        "W_K_big = np.concatenate(W_K, axis=1)\nW_V_big = np.concatenate(W_V, axis=1)\n"
        "Q_big, K_big, V_big = X @ W_Q_big, X @ W_K_big, X @ W_V_big\n"
        'show("W_Q_big: every head\'s W_Q side by side", W_Q_big)\nshow("Q_big = X W_Q_big", Q_big, TOKENS)\n'
        "n, d_v = len(TOKENS), W_V.shape[2]\n"
        "Q_split = Q_big.reshape(n, H, d_k).transpose(1, 0, 2)  # (n, H·d_k) → (n, H, d_k) → (H, n, d_k)\n"
        "K_split = K_big.reshape(n, H, d_k).transpose(1, 0, 2)\nV_split = V_big.reshape(n, H, d_v).transpose(1, 0, 2)\n"
        'print("Q_big", Q_big.shape, "→ reshape", (n, H, d_k), "→ transpose", Q_split.shape)\nfor h in range(H):\n'
        "    for split, own in ((Q_split, Q), (K_split, K), (V_split, V)):\n"
        "        np.testing.assert_allclose(split[h], own[h], rtol=1e-9, atol=1e-12)\n"
        'print("Q_split[h], K_split[h] and V_split[h] are head h\'s Q, K and V")',
    ),
    (
        "## Every head at once\n\nOne batched product for every head's scores, then back to a row per token.",
        "fused_scores = Q_split @ K_split.transpose(0, 2, 1)  # (H, n, n)\n"
        "fused_scaled = fused_scores / np.sqrt(d_k) if SCALED else fused_scores\n"
        "exps = np.exp(fused_scaled - fused_scaled.max(axis=2, keepdims=True))\n"
        "fused_weights = exps / exps.sum(axis=2, keepdims=True)\nfused_Z = fused_weights @ V_split  # (H, n, d_v)\n"
        "fused_concat = fused_Z.transpose(1, 0, 2).reshape(n, H * d_v)  # (n, H, d_v), then a row per token\n"
        "fused_output = fused_concat @ W_O\n"
        "np.testing.assert_allclose(fused_weights, np.stack(weights), rtol=1e-9, atol=1e-12)\n"
        "np.testing.assert_allclose(fused_concat, concat, rtol=1e-9, atol=1e-12)\n"
        "np.testing.assert_allclose(fused_output, output, rtol=1e-9, atol=1e-12)\n"
        'show("fused output", fused_output, TOKENS)\n'
        'print("The fused form gives the same weights, the same concat and the same output")',
    ),
)

_TORCH = '''\
X = torch.from_numpy(X)  # float64, as above
W_Q_big, W_K_big, W_V_big = (torch.from_numpy(np.concatenate(m, axis=1)) for m in (W_Q, W_K, W_V))
n, d_k, d_v = X.shape[0], W_Q.shape[2], W_V.shape[2]
Q = (X @ W_Q_big).view(n, H, d_k).transpose(0, 1)  # (H, n, d_k)
K = (X @ W_K_big).view(n, H, d_k).transpose(0, 1)
V = (X @ W_V_big).view(n, H, d_v).transpose(0, 1)
Z = torch.nn.functional.scaled_dot_product_attention(Q, K, V, scale=None if SCALED else 1.0)  # every head at once
'''

_TORCH_JOINED = '''\
output = Z.transpose(0, 1).reshape(n, H * d_v) @ torch.from_numpy(W_O)  # the heads joined, times W_O
print(output[QUERY])
'''

_TORCH_ONE_HEAD = '''\
print(Z[0, QUERY])  # the query's context vector
'''


def notebook(scenario: Scenario) -> NotebookCells:
    """The notebook's cells: X and each head's matrices (and W_O) as data, each head on its own, the
    heads joined and times W_O, then the fused form and its equality checks."""
    joined = scenario.w_out is not None
    what = ("each head on its own, the heads joined and times W_O, then the fused form (one product per role, "
            "reshaped into heads)") if joined else "its one head (it has no W_O to join heads with)"
    intro = (
        f"# Multi-head attention, step by step: {markdown_literal(scenario.title)}\n\n"
        f"Every number of the lecture computed with numpy and printed at its {scenario.precision} decimals: "
        f"{what}. The last cell checks each step against the handout's CSV files beside this notebook."
    )
    steps = _EACH_HEAD + (_JOINED if joined else ())
    torch = pytorch_cell("The same steps in PyTorch", _TORCH + (_TORCH_JOINED if joined else _TORCH_ONE_HEAD),
                         source=", the fused way, from the arrays above", inputs=False)
    return NotebookCells(intro, _data_cell(scenario), steps, torch)


def page(scenario: Scenario) -> PageSummary:
    """The page's top: the multi-head formula, each head's weights of the query and its z, the heads
    joined and the output (concat W_O)."""
    q, n = scenario.query + 1, scenario.n_tokens
    rows = tuple(
        QueryRow(f"Head {h}: the weights of query {q} and its context vector", step.weights, (False,) * n,
                 (f"z{q} of head {h}", step.context))
        for h, step in enumerate((head.query_step() for head in scenario.heads), start=1)
    )
    intro = (
        "Several heads attend side by side, each with its own W_Q, W_K and W_V, so each weighs the tokens "
        "its own way; each token's context vectors of every head are joined (concat) and mixed by W_O."
    )
    scores = "Q_i K_iᵀ/√d_k" if scenario.scaled else "Q_i K_iᵀ"
    formula = f"concat(head_1, …, head_h) W_O, where head_i = softmax({scores}) V_i"
    if scenario.w_out is None:
        return PageSummary("Lecture 8: multi-head attention", intro, formula, ("1 head (no W_O to join heads with)",),
                           rows)
    multi = scenario.multi_head_trace()
    facts = (f"{scenario.n_heads} heads, joined by W_O ({multi.w_out.shape[0]} × {multi.w_out.shape[1]})",)
    i = scenario.query
    vectors = ((f"concat{q}", multi.concat[i]), (f"output{q} = concat{q} W_O", multi.output[i]))
    return PageSummary("Lecture 8: multi-head attention", intro, formula, facts, rows, vectors)


MULTI_HEAD = LectureSteps(tables=tables, notebook=notebook, probe="X", page=page)
"""Lecture 8's handout and notebook."""
