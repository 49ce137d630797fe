"""Lecture 12, multi-head latent attention: the handout, the notebook and the page's top.

The handout holds X and the lecture's MLA weights (``LATENT_SETUP``, the same for every sentence of X's width: not the
scenario's W_Q, W_K, W_V), the latent ``c_KV``, the RoPE key ``k_R``, the cache ``[c_KV | k_R]``, each head's content
keys, values and weights, head 1's content scores both ways (with keys, and absorbed: no key made), the output, and
DeepSeek-V2's cache per token and layer four ways. The notebook works MLA with numpy from the equations (DeepSeek-V2,
appendix C), a head at a time, shows that the absorbed scores are the usual ones, and counts the cache; its last cell
checks every table against the handout's CSVs. No walkthrough: :func:`attention_math.format_walkthrough` works plain
attention.
"""

from __future__ import annotations

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
from attention_math import DEEPSEEK_V2, LatentTrace, Scenario, latent_attention, latent_weights
from scenes.latent_attention import GQA_GROUPS, LATENT_SETUP

__all__ = ["LATENT", "notebook", "page", "tables"]

_WEIGHTS = (("W_DKV", "w_dkv"), ("W_UK", "w_uk"), ("W_UV", "w_uv"), ("W_KR", "w_kr"), ("W_DQ", "w_dq"),
            ("W_UQ", "w_uq"), ("W_QR", "w_qr"), ("W_O", "w_o"))
"""The lecture's weights: the handout's stem (the notebook's variable) and the trace's field."""


def _trace(scenario: Scenario) -> LatentTrace:
    return latent_attention(scenario.embeddings, **latent_weights(scenario.d_in, **LATENT_SETUP), causal=True)


def _weight_tables(trace: LatentTrace) -> list[Table]:
    return [table(stem, f"{stem}, the lecture's weights (one decimal, drawn from seed {LATENT_SETUP['seed']})",
                  numbered("row ", getattr(trace, field).shape[0]), numbered("c", getattr(trace, field).shape[1]),
                  getattr(trace, field), token_rows=False) for stem, field in _WEIGHTS]


def _sizes_table() -> Table:
    sizes = DEEPSEEK_V2.cache_sizes(n_kv_heads=GQA_GROUPS)
    rows = ("multi-head", f"grouped-query, {GQA_GROUPS} K/V heads", "multi-query", "latent (MLA)")
    return table("cache_sizes", "DeepSeek-V2's cache per token and layer, in numbers: 2·n_h·d_h, 2·n_g·d_h, 2·d_h, "
                 "d_c + d_R", rows, ("numbers",),
                 [[sizes.multi_head], [sizes.grouped_query], [sizes.multi_query], [sizes.latent]], token_rows=False,
                 whole=True)


def tables(scenario: Scenario) -> tuple[Table, ...]:
    """The latent-attention lecture's handout matrices, in the lecture's order."""
    t, tokens = _trace(scenario), scenario.tokens
    heads = []
    for i in range(t.n_heads):
        heads += [
            table(f"k_C_{i + 1}", f"head {i + 1}'s content keys, c_KV W_UK (its columns)", tokens,
                  numbered("k", t.d_h), t.content_keys[i], f"k_C[{i}]"),
            table(f"v_{i + 1}", f"head {i + 1}'s values, c_KV W_UV (its columns)", tokens, numbered("v", t.d_h),
                  t.values[i], f"v[{i}]"),
            table(f"weights_{i + 1}", f"head {i + 1}'s weights: softmax((q_C·k_C + q_R·k_R) / √(d_h + d_R)), causal",
                  tokens, tokens, t.weights[i], f"weights[{i}]"),
        ]
    return (
        table("X", "X, the input embeddings", tokens, numbered("x", t.embeddings.shape[1]), t.embeddings),
        *_weight_tables(t),
        table("c_KV", "c_KV = X W_DKV, the latent", tokens, numbered("c", t.d_c), t.latent),
        table("k_R", "k_R = RoPE(X W_KR), the RoPE key every head shares", tokens, numbered("r", t.d_rope),
              t.rope_keys),
        table("cache", "the cache, [c_KV | k_R]: all a token keeps in a layer", tokens,
              (*numbered("c", t.d_c), *numbered("r", t.d_rope)), t.cache),
        *heads,
        table("content_scores_1", "head 1's content scores q_C·k_C, with the keys made", tokens, tokens,
              t.content_scores[0], "content_scores[0]"),
        table("absorbed_scores_1", "head 1's content scores (q_C W_UKᵀ)·c_KV, absorbed: no key made", tokens, tokens,
              t.absorbed_content_scores[0], "absorbed[0]"),
        table("output", "the output, [o_1 … o_H] W_O", tokens, numbered("u", t.output.shape[1]), t.output),
        _sizes_table(),
    )


_STEP_CELLS: tuple[tuple[str, str], ...] = (
    (
        "## The latent and the RoPE key: what the cache keeps\n\nEach token goes down to a latent c_KV = x W_DKV "
        "of d_c numbers, and to a RoPE key k_R = RoPE(x W_KR) of d_R numbers, one for every head: RoPE turns each "
        "pair (2j, 2j+1) of a row at position m by m·θ_j, θ_j = BASE^(−2j/d_R). The cache keeps [c_KV | k_R].",
        "def rope(matrix, base=BASE):\n"
        "    turned = matrix.copy()\n"
        "    d = matrix.shape[1]\n"
        "    for m in range(matrix.shape[0]):  # the position, from 0\n"
        "        for j in range(d // 2):\n"
        "            angle = m * base ** (-2 * j / d)\n"
        "            a, b = matrix[m, 2 * j], matrix[m, 2 * j + 1]\n"
        "            turned[m, 2 * j] = a * np.cos(angle) - b * np.sin(angle)\n"
        "            turned[m, 2 * j + 1] = a * np.sin(angle) + b * np.cos(angle)\n"
        "    return turned\n\n"
        "c_KV = X @ W_DKV\nk_R = rope(X @ W_KR)\ncache = np.hstack([c_KV, k_R])\n"
        'show("c_KV = X W_DKV", c_KV, TOKENS)\nshow("k_R = RoPE(X W_KR)", k_R, TOKENS)\n'
        'print(f"the cache keeps {cache.shape[1]} numbers a token; multi-head attention of these heads would keep "\n'
        '      f"{2 * HEADS * D_H}")',
    ),
    (
        "## Each head's keys, values and queries\n\nHead i takes its own d_h columns of W_UK and W_UV: "
        "k_C,i = c_KV W_UK,i and v_i = c_KV W_UV,i. Its queries come from a query latent c_Q = x W_DQ: "
        "q_C,i = c_Q W_UQ,i and q_R,i = RoPE(c_Q W_QR,i).",
        "def head(matrix, i, width):\n    return matrix[:, i * width:(i + 1) * width]\n\n"
        "c_Q = X @ W_DQ\n"
        "k_C = np.stack([c_KV @ head(W_UK, i, D_H) for i in range(HEADS)])\n"
        "v = np.stack([c_KV @ head(W_UV, i, D_H) for i in range(HEADS)])\n"
        "q_C = np.stack([c_Q @ head(W_UQ, i, D_H) for i in range(HEADS)])\n"
        "q_R = np.stack([rope(c_Q @ head(W_QR, i, D_R)) for i in range(HEADS)])\n"
        "for i in range(HEADS):\n"
        '    show(f"head {i + 1}: k_C", k_C[i], TOKENS)\n    show(f"head {i + 1}: v", v[i], TOKENS)',
    ),
    (
        "## Scores, the causal softmax, the output\n\nHead i scores (q_C,i·k_C,i + q_R,i·k_R) / √(d_h + d_R), hides "
        "the later keys, takes the softmax of each row and mixes its values; the heads' outputs side by side times "
        "W_O are the output.",
        "n = len(TOKENS)\nfuture = np.triu(np.ones((n, n), dtype=bool), k=1)\n"
        "content_scores = q_C @ k_C.transpose(0, 2, 1)\n"
        "scores = (content_scores + q_R @ k_R.T) / np.sqrt(D_H + D_R)\n"
        "scores = np.where(future, -np.inf, scores)\n"
        "exps = np.exp(scores - scores.max(axis=2, keepdims=True))\n"
        "weights = exps / exps.sum(axis=2, keepdims=True)\n"
        "o = weights @ v\noutput = np.hstack(list(o)) @ W_O\n"
        'for i in range(HEADS):\n    show(f"head {i + 1}: weights", weights[i], TOKENS)\n'
        'show("output", output, TOKENS)',
    ),
    (
        "## Absorption: the same scores without the keys\n\nq_C,i·(c_KV W_UK,i) = (q_C,i W_UK,iᵀ)·c_KV: move W_UK "
        "to the query once, and score the cached latents directly. No key is made.",
        "absorbed = np.stack([(q_C[i] @ head(W_UK, i, D_H).T) @ c_KV.T for i in range(HEADS)])\n"
        "np.testing.assert_allclose(absorbed, content_scores, rtol=1e-9, atol=1e-12)\n"
        'print("the absorbed scores are the content scores")\nshow("head 1, absorbed", absorbed[0], TOKENS)',
    ),
    (
        "## The cache per token and layer, four ways (DeepSeek-V2)\n\nMulti-head attention keeps 2·n_h·d_h "
        "numbers, grouped-query 2·n_g·d_h, multi-query 2·d_h, MLA d_c + d_R.",
        "n_h, d_h, d_c, d_R = DEEPSEEK_V2  # heads, head size, latent, RoPE key (its config.json)\n"
        "cache_sizes = np.array([[2 * n_h * d_h], [2 * GROUPS * d_h], [2 * d_h], [d_c + d_R]], dtype=float)\n"
        "for name, size in zip(['multi-head', 'grouped-query', 'multi-query', 'latent'], cache_sizes[:, 0]):\n"
        '    print(f"{name}: {size:g} numbers a token and layer")\n'
        'print(f"MLA keeps {cache_sizes[0, 0] / cache_sizes[3, 0]:.1f} times less than multi-head attention")',
    ),
)

_TORCH = '''\
The latent and the absorbed scores in PyTorch (not run here; `pip install torch`), from the arrays above:

```python
import torch

X_, W_DKV_, W_UK_ = (torch.from_numpy(m) for m in (X, W_DKV, W_UK))  # float64, as above
c_KV_ = X_ @ W_DKV_
q = torch.from_numpy(q_C[0])
usual = q @ (c_KV_ @ W_UK_[:, :D_H]).T
absorbed_ = (q @ W_UK_[:, :D_H].T) @ c_KV_.T
torch.testing.assert_close(usual, absorbed_)
```
'''


def _data(scenario: Scenario) -> str:
    """The scenario's X and the lecture's weights as data, to the last bit, each printed."""
    t = _trace(scenario)
    config = DEEPSEEK_V2
    lines = [
        f"TITLE = {scenario.title!r}",
        f"TOKENS = {list(scenario.tokens)!r}",
        f"QUERY = {scenario.query}  # the query token, counted from 0 (from 1 on screen)",
        f"PRECISION = {scenario.precision}  # the decimals the lecture shows",
        f"HEADS, D_H, D_R, BASE = {t.n_heads}, {t.d_h}, {t.d_rope}, {t.base!r}  # the lecture's heads and RoPE",
        f"DEEPSEEK_V2 = ({config.n_heads}, {config.d_head}, {config.d_c}, {config.d_rope})",
        f"GROUPS = {GQA_GROUPS}  # the grouped-query attention's key/value heads",
        "",
        f"X = {matrix_literal(t.embeddings)}  # the embeddings, one row per token",
        *(f"{stem} = {matrix_literal(getattr(t, field))}" for stem, field in _WEIGHTS),
        "",
        "print(TITLE)",
        'print("the query:", TOKENS[QUERY], f"(token {QUERY + 1})")',
        "print()",
        'show("X, the embeddings", X, TOKENS)',
        'show("W_DKV", W_DKV)',
    ]
    return "\n".join(lines)


def notebook(scenario: Scenario) -> NotebookCells:
    """The notebook's cells: X and the weights as data, the latent and the RoPE key, the heads, the scores and the
    output, absorption, the cache four ways."""
    intro = (
        f"# Multi-head latent attention, step by step: {markdown_literal(scenario.title)}\n\n"
        "DeepSeek-V2's MLA on the scenario's embeddings with the lecture's own weights, computed with numpy and "
        f"printed at the lecture's {scenario.precision} decimals. The last cell checks each step against the "
        "handout's CSV files beside this notebook."
    )
    return NotebookCells(intro, _data(scenario), _STEP_CELLS, _TORCH)


def page(scenario: Scenario) -> PageSummary:
    """The page's top: each head's weights for the query (the later keys masked) and its output o_i, the query's row
    of the cache and its output."""
    t, q, n = _trace(scenario), scenario.query, scenario.n_tokens
    rows = tuple(QueryRow(f"Head {i + 1}: the weights of query {q + 1} (keys after it masked) and its o",
                          t.weights[i, q], tuple(j > q for j in range(n)), (f"o{i + 1}", t.context[i, q]))
                 for i in range(t.n_heads))
    intro = ("Multi-head latent attention (DeepSeek-V2) caches one small latent a token, c_KV, and a shared RoPE key "
             "k_R; each head makes its keys and values from the latent, and absorption scores the latents directly.")
    facts = (f"the lecture's weights: {t.n_heads} heads of d_h = {t.d_h}, a latent of d_c = {t.d_c}, a RoPE key of "
             f"d_R = {t.d_rope} (seed {LATENT_SETUP['seed']})",
             f"the cache: {t.cache_width} numbers a token and layer, against {t.multi_head_cache_width} for "
             "multi-head attention")
    formula = "o_i = softmax((q_C,i·k_C,i + q_R,i·k_R) / √(d_h + d_R)) v_i,  k_C,i = c_KV W_UK,i,  c_KV = x W_DKV"
    vectors = ((f"cache row of token {q + 1}", t.cache[q]), (f"output u{q + 1}", t.output[q]))
    # the scenario's W_Q, W_K, W_V (its d_k, d_v) play no part: the sizes and the scaling are MLA's
    return PageSummary("Lecture 12: multi-head latent attention", intro, formula, facts, rows, vectors,
                       sizes=f"d_in = {scenario.d_in}",
                       scaling=f"scaled by √(d_h + d_R) = √{t.d_h + t.d_rope}")


LATENT = LectureSteps(tables=tables, notebook=notebook, probe="cache", page=page, walkthrough=False)
"""Lecture 12's handout and notebook."""
