"""Lecture 11, FlashAttention: the online softmax of the query's row tile by tile, the whole matrix by tiles, and the
slow-memory traffic of both routes.

The handout holds X, the weight matrices, Q, K, V and the scaled scores (head 1's when the scenario has several);
the query's row walked in tiles of ``B_c`` keys (:data:`FLASH_BLOCKS`): each key's exp(s − m) as its tile
made it (``tile_exps``) and, per tile, the running m, the factor exp(m_old − m), ℓ and the running output
(``online_walk``); the output of FlashAttention's Algorithm 1 over the whole matrix (``Z``); and the numbers read from
and written to slow memory at the lecture's sizes and the paper's (``traffic``, ``traffic_paper``), with Theorem 2's
formulas. The notebook replays the walk and Algorithm 1 with numpy loops, counting the traffic as it goes, and checks
both against the plain softmax; its last cell checks every table against the handout's CSVs.
"""

from __future__ import annotations

import numpy as np

from attention_explainer.escape import markdown_literal
from attention_explainer.outputs.steps import LectureSteps, NotebookCells, PageSummary, QueryRow, Table, numbered, table
from attention_math import MemoryTraffic, Scenario, a100_traffic, flash_attention, memory_traffic, online_softmax_row
from scenes.flash_attention import FLASH_BLOCKS
from scenes.self_attention.handout import (
    HANDOUT_MATRICES,
    PROJECTIONS,
    data_cell,
    head_one_fact,
    head_one_note,
    pytorch_cell,
    trace_table,
)

__all__ = ["FLASH", "notebook", "page", "tables"]

_PLAIN = ("X", "W_Q", "W_K", "W_V", "Q", "K", "V", "scaled_scores")
_TRAFFIC_COLUMNS = ("reads", "writes", "in all", "Theorem 2 without its constant")


def _traffic_rows(traffic: MemoryTraffic) -> list[list[float]]:
    return [[traffic.standard_reads, traffic.standard_writes, traffic.standard_accesses, traffic.standard_formula],
            [traffic.flash_reads, traffic.flash_writes, traffic.flash_accesses, traffic.flash_formula]]


def tables(scenario: Scenario) -> tuple[Table, ...]:
    """The flash-attention lecture's handout matrices, in the lecture's order."""
    one = scenario.heads[0]
    trace, keys, queries = one.trace(), *FLASH_BLOCKS
    walk = online_softmax_row(trace.scaled_scores[scenario.query], trace.values, block_size=keys)
    tiled = flash_attention(trace.queries, trace.keys, trace.values, block_size=keys, query_block_size=queries,
                            scaled=scenario.scaled)
    plain = [trace_table(scenario, trace, stem, field, caption, prefix, token_rows)
             for stem, field, caption, token_rows, prefix in HANDOUT_MATRICES if stem in _PLAIN]
    tiles = tuple(f"tile {t + 1}" for t in range(len(walk.steps)))
    d_v = trace.values.shape[1]
    routes = ("standard attention", "FlashAttention")
    return (
        *plain,
        table("tile_exps", f"the query's exp(s − m), each against the running maximum after its tile of {keys} keys",
              scenario.tokens, ("exp(s - m)",), walk.tile_exps[:, None], "tile_exps[:, None]"),
        table("online_walk", "after each tile: the running maximum m, the factor exp(m_old − m), the running sum ℓ "
              "and the running output o", tiles, ("m", "exp(m_old - m)", "l", *numbered("o", d_v)),
              np.column_stack([walk.maxima, walk.rescales, walk.sums, walk.outputs]), "walk", token_rows=False),
        table("Z", f"FlashAttention's output over the whole matrix, tiles of {queries} queries × {keys} keys",
              scenario.tokens, numbered("z", d_v), tiled.output, "O"),
        table("traffic", f"numbers read from and written to slow memory, n = {scenario.n_tokens}, d = "
              f"{scenario.d_k}", routes, _TRAFFIC_COLUMNS,
              _traffic_rows(memory_traffic(scenario.n_tokens, scenario.d_k, block_size=keys,
                                           query_block_size=queries)), "traffic", token_rows=False),
        table("traffic_paper", "the same at the paper's sizes: n = 1024, d = 64, about 100 KB of SRAM in 2-byte "
              "numbers", routes, _TRAFFIC_COLUMNS, _traffic_rows(a100_traffic()), "traffic_paper", token_rows=False),
    )


_WALK = (
    "## The online softmax of the query's row, tile by tile\n\nKeep the largest score so far m, the sum ℓ of "
    "exp(s − m) and the output o = Σ exp(s − m)·v. When a tile raises m, multiply ℓ and o by exp(m_old − m) first.",
    "scaled_scores = Q @ K.T / np.sqrt(K.shape[1]) if SCALED else Q @ K.T  # for the check only: never in the loop\n"
    "s = scaled_scores[QUERY]\n"
    "m, l, o = -np.inf, 0.0, np.zeros(V.shape[1])\nrows, tile_exps = [], []\n"
    "for start in range(0, len(s), B_C):\n"
    "    tile = s[start : start + B_C]\n"
    "    m_new = max(m, tile.max())\n"
    "    factor = np.exp(m - m_new)  # 0 at the first tile, where m is -inf\n"
    "    exps = np.exp(tile - m_new)\n"
    "    l = factor * l + exps.sum()\n"
    "    o = factor * o + exps @ V[start : start + B_C]\n"
    "    m = m_new\n"
    "    tile_exps += list(exps)\n"
    "    rows.append([m, factor, l, *o])\n"
    '    print(f"tile {len(rows)}: m = {number(m)}, factor {number(factor)}, l = {number(l)}, o = ("\n'
    '          + ", ".join(number(x) for x in o) + ")")\n'
    "walk, tile_exps = np.array(rows), np.array(tile_exps)\n"
    "weights = np.exp(s - s.max()) / np.exp(s - s.max()).sum()\n"
    "np.testing.assert_allclose(o / l, weights @ V, rtol=1e-12, atol=1e-12)\n"
    'print("o / l = (" + ", ".join(number(x) for x in o / l) + "), the same as softmax(s) @ V")',
)

_TILES = (
    "## The whole matrix by tiles (FlashAttention's Algorithm 1), counting slow memory\n\nKey blocks in the outer "
    "loop (K_j and V_j read once), query blocks in the inner one: read Q_i, O_i, ℓ_i, m_i, fold in the tile, write "
    "O_i, ℓ_i, m_i back. The n × n matrix is never stored.",
    "n, d_k, d_v = Q.shape[0], Q.shape[1], V.shape[1]\n"
    "O, L, M = np.zeros((n, d_v)), np.zeros(n), np.full(n, -np.inf)\n"
    "reads, writes = 0, n * (d_v + 2)  # O, l, m set up in slow memory\n"
    "for j in range(0, n, B_C):\n"
    "    Kj, Vj = K[j : j + B_C], V[j : j + B_C]\n"
    "    reads += Kj.size + Vj.size\n"
    "    for i in range(0, n, B_R):\n"
    "        rows = slice(i, i + B_R)\n"
    "        reads += Q[rows].size + O[rows].size + L[rows].size + M[rows].size\n"
    "        S = Q[rows] @ Kj.T / np.sqrt(d_k) if SCALED else Q[rows] @ Kj.T\n"
    "        m_new = np.maximum(M[rows], S.max(axis=1))\n"
    "        factor, P = np.exp(M[rows] - m_new), np.exp(S - m_new[:, None])\n"
    "        l_new = factor * L[rows] + P.sum(axis=1)\n"
    "        O[rows] = ((factor * L[rows])[:, None] * O[rows] + P @ Vj) / l_new[:, None]\n"
    "        L[rows], M[rows] = l_new, m_new\n"
    "        writes += O[rows].size + L[rows].size + M[rows].size\n"
    "full = Q @ K.T / np.sqrt(d_k) if SCALED else Q @ K.T\n"
    "plain = np.exp(full - full.max(axis=1, keepdims=True))\n"
    "np.testing.assert_allclose(O, (plain / plain.sum(axis=1, keepdims=True)) @ V, rtol=1e-9, atol=1e-12)\n"
    'show("O, by tiles (the same as softmax(QKᵀ/√d_k) V)", O, TOKENS)\n'
    'print(f"slow memory, d = d_k: {reads} numbers read, {writes} written")',
)

_TRAFFIC = (
    "## The traffic of both routes, in closed form\n\nStandard attention reads Q, K, V and writes the n × n scores S "
    "and weights P, reads both back and writes O. FlashAttention reads K and V once and, per key block, every "
    "query's Q, O, ℓ, m. Theorem 2: Θ(n·d + n²) against Θ(n²·d²/M).",
    "def counts(n, d, b_c, sram):\n"
    "    passes = -(-n // b_c)\n"
    "    standard = [3 * n * d + 2 * n * n, 2 * n * n + n * d]\n"
    "    flash = [2 * n * d + passes * n * (2 * d + 2), (passes + 1) * n * (d + 2)]\n"
    "    return np.array([[*standard, sum(standard), n * d + n * n],\n"
    "                     [*flash, sum(flash), n * n * d * d / sram]], dtype=float)\n"
    "n, d = len(TOKENS), W_K.shape[1]\n"
    "traffic = counts(n, d, B_C, 4 * d * B_C)  # M: what tiles of B_C keys need (Q_i, K_j, V_j, O_i)\n"
    "paper_sram = 100 * 1024 // 2  # about 100 KB of SRAM, 2-byte numbers\n"
    "traffic_paper = counts(1024, 64, -(-paper_sram // (4 * 64)), paper_sram)\n"
    'show("these sizes: reads, writes, in all, n·d + n² or n²·d²/M", traffic)\n'
    'show("the paper\'s sizes", traffic_paper)',
)

_TORCH = pytorch_cell("PyTorch computes attention this way on a GPU", '''\
Q, K, V = (torch.from_numpy(m)[None, None] for m in (Q, K, V))  # batch and head dimensions of 1
# on a CUDA device with fp16 or bf16 tensors, this call may run a FlashAttention kernel
Z = torch.nn.functional.scaled_dot_product_attention(Q, K, V, scale=None if SCALED else 1.0)
print(Z[0, 0, QUERY])
''', source="", inputs=False)


def notebook(scenario: Scenario) -> NotebookCells:
    """The notebook's cells: the inputs as data, Q, K, V, the query's row walked in tiles, the whole matrix by tiles
    with its memory traffic counted, and the traffic of both routes in closed form."""
    intro = (
        f"# FlashAttention and the online softmax, step by step: {markdown_literal(scenario.title)}\n\n"
        "Attention computed tile by tile with numpy, never holding a whole row of weights, and checked against the "
        f"plain softmax; numbers printed at the lecture's {scenario.precision} decimals. The last cell checks each "
        f"step against the handout's CSV files beside this notebook.{head_one_note(scenario)}"
    )
    blocks = f"B_C, B_R = {FLASH_BLOCKS[0]}, {FLASH_BLOCKS[1]}  # keys per tile, queries per block"
    return NotebookCells(intro, data_cell(scenario, blocks), (PROJECTIONS, _WALK, _TILES, _TRAFFIC), _TORCH)


def page(scenario: Scenario) -> PageSummary:
    """The page's top: the query's weights as the online softmax ends with them (exp(s − m) / ℓ with the final m and
    ℓ) and its output o / ℓ; the traffic of both routes at the lecture's sizes and the paper's."""
    trace, keys = scenario.heads[0].trace(), FLASH_BLOCKS[0]
    walk = online_softmax_row(trace.scaled_scores[scenario.query], trace.values, block_size=keys)
    q = scenario.query + 1
    row = QueryRow(f"Query {q}'s weights, walked in {len(walk.steps)} tiles of {keys} keys, and its output o / ℓ",
                   walk.weights, (False,) * scenario.n_tokens, (f"z{q}", walk.output))
    ours = memory_traffic(scenario.n_tokens, scenario.d_k, block_size=keys, query_block_size=FLASH_BLOCKS[1])
    paper = a100_traffic()
    facts = (*head_one_fact(scenario),
             f"slow-memory numbers read and written at n = {ours.n}, d = {ours.d}: {ours.standard_accesses} standard, "
             f"{ours.flash_accesses} FlashAttention",
             f"at the paper's n = {paper.n}, d = {paper.d}, M = {paper.sram}: {paper.standard_accesses} standard, "
             f"{paper.flash_accesses} FlashAttention ({paper.ratio:.2f} times fewer)")
    intro = (
        "FlashAttention computes exact attention tile by tile in the GPU's small, fast memory. Each query keeps a "
        "running maximum m, sum ℓ and output o; a tile that raises m shrinks what came before by exp(m_old − m). "
        "The n × n matrix of scores is never written to slow memory."
    )
    formula = "o ← o·exp(m_old − m) + Σ exp(s − m)·v,  ℓ ← ℓ·exp(m_old − m) + Σ exp(s − m),  z = o / ℓ"
    return PageSummary("Lecture 11: FlashAttention and the online softmax", intro, formula, facts, (row,))


FLASH = LectureSteps(tables=tables, notebook=notebook, probe="online_walk", page=page, walkthrough=False)
"""Lecture 11's handout and notebook."""
