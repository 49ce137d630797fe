"""Lecture 10, rotary position embeddings (RoPE): each query and key turned by its position, pair by pair.

The handout holds X and the weight matrices, Q and K, each pair's frequency θ_i = base^(−2i/d_k), the
angle of every pair at every position (positions 0, 1, … as in RoFormer's m), the turned queries and
keys, the scaled scores and weights without positions and with RoPE, V and the context vectors with
RoPE. The notebook turns each pair (2i, 2i+1) with cos and sin, then checks what the lecture says: a
shift of every position leaves the scores alone, and the "rotate half" layout gives the same scores up to
a fixed reordering of the dimensions. Of head 1, when the scenario has several; RoPE needs an even d_k.
"""

from __future__ import annotations

from attention_explainer.escape import markdown_literal
from attention_explainer.outputs.steps import LectureSteps, NotebookCells, PageSummary, QueryRow, Table, numbered, table
from attention_math import RopeTrace, Scenario, rope_attention
from scenes.self_attention.handout import (
    HANDOUT_MATRICES,
    data_cell,
    head_one_fact,
    head_one_note,
    pytorch_cell,
    scores_words,
    trace_table,
)

__all__ = ["ROPE", "notebook", "page", "tables"]

_PLAIN = ("X", "W_Q", "W_K", "W_V", "Q", "K")


def _rope(scenario: Scenario) -> RopeTrace:
    """Head 1's attention with RoPE, positions 0 … n − 1 (the lecture's)."""
    head = scenario.heads[0] if scenario.w_out is not None else scenario
    return rope_attention(head.embeddings, head.w_query, head.w_key, head.w_value, scaled=scenario.scaled)


def tables(scenario: Scenario) -> tuple[Table, ...]:
    """The rope lecture's handout matrices, in the lecture's order."""
    plain, rope = scenario.trace(), _rope(scenario)
    tokens, pairs = scenario.tokens, numbered("pair ", rope.d_k // 2)
    inputs = [trace_table(scenario, plain, stem, field, caption, prefix, token_rows)
              for stem, field, caption, token_rows, prefix in HANDOUT_MATRICES if stem in _PLAIN]
    return (
        *inputs,
        table("theta", f"θ_i = {rope.base:g}^(−2i/d_k), each pair's angle per position", ("theta",), pairs,
              rope.frequencies.reshape(1, -1), "theta.reshape(1, -1)", token_rows=False),
        table("angles", "the angle of each pair at each token's position m (0, 1, …): m θ_i, in radians", tokens,
              pairs, rope.angles),
        table("Q_rot", "the queries turned: pair i of q_m turned by m θ_i", tokens, numbered("q", rope.d_k),
              rope.rotated_queries),
        table("K_rot", "the keys turned: pair i of k_m turned by m θ_i", tokens, numbered("k", rope.d_k),
              rope.rotated_keys),
        trace_table(scenario, plain, "scaled_scores", "scaled_scores", "Q Kᵀ / √d_k, without positions", ""),
        table("rope_scaled_scores", "Q_rot K_rotᵀ / √d_k, the scaled scores with RoPE", tokens, tokens,
              rope.scaled_scores),
        trace_table(scenario, plain, "weights", "weights", "softmax(Q Kᵀ / √d_k), the weights without positions", ""),
        table("rope_weights", "softmax(Q_rot K_rotᵀ / √d_k), the weights with RoPE", tokens, tokens, rope.weights),
        trace_table(scenario, plain, "V", "values", "V = X W_V, the values (never turned)", "v"),
        table("Z", "Z = weights with RoPE times V, the context vectors", tokens, numbered("z", rope.values.shape[1]),
              rope.context),
    )


_STEP_CELLS: tuple[tuple[str, str], ...] = (
    (
        "## Without positions\n\nAs in lecture 6: queries, keys, values, the scaled scores and their softmax. "
        "Nothing here depends on the order of the tokens.",
        "Q = X @ W_Q\nK = X @ W_K\nV = X @ W_V\nd_k = K.shape[1]\n"
        "scaled_scores = Q @ K.T / np.sqrt(d_k) if SCALED else Q @ K.T\n"
        "exps = np.exp(scaled_scores - scaled_scores.max(axis=1, keepdims=True))\n"
        "weights = exps / exps.sum(axis=1, keepdims=True)\n"
        'show("scaled scores = Q Kᵀ / √d_k", scaled_scores, TOKENS)\nshow("weights", weights, TOKENS)',
    ),
    (
        "## Each pair's frequency, each position's angle\n\nRoFormer splits q and k into pairs of dimensions "
        "(2i, 2i+1) and turns pair i at position m by m θ_i, θ_i = base^(−2i/d_k): the first pair fast, the "
        "last slow.",
        "positions = np.arange(len(TOKENS))  # m = 0, 1, …\n"
        "theta = BASE ** (-2 * np.arange(d_k // 2) / d_k)\n"
        "angles = positions[:, np.newaxis] * theta[np.newaxis, :]  # angles[m, i] = m θ_i\n"
        'show("θ_i", theta.reshape(1, -1))\nshow("angles m θ_i", angles, TOKENS)',
    ),
    (
        "## Turn each pair\n\n(a, b) turned by φ is (a cos φ − b sin φ, a sin φ + b cos φ): lengths are kept.",
        "def turned(M, angles):\n"
        '    """Each row\'s pairs (2i, 2i+1) turned by its row of angles."""\n'
        "    a, b = M[:, 0::2], M[:, 1::2]\n    out = np.empty_like(M)\n"
        "    out[:, 0::2] = a * np.cos(angles) - b * np.sin(angles)\n"
        "    out[:, 1::2] = a * np.sin(angles) + b * np.cos(angles)\n    return out\n\n\n"
        "Q_rot, K_rot = turned(Q, angles), turned(K, angles)\n"
        "np.testing.assert_allclose(np.linalg.norm(Q_rot, axis=1), np.linalg.norm(Q, axis=1), rtol=1e-12)\n"
        'show("Q turned", Q_rot, TOKENS)\nshow("K turned", K_rot, TOKENS)',
    ),
    (
        "## Scores and weights with RoPE\n\nOn the diagonal nothing changes (a query and a key at one position "
        "turn by one angle); elsewhere the score depends on how far apart the two tokens stand.",
        "rope_scaled_scores = Q_rot @ K_rot.T / np.sqrt(d_k) if SCALED else Q_rot @ K_rot.T\n"
        "exps = np.exp(rope_scaled_scores - rope_scaled_scores.max(axis=1, keepdims=True))\n"
        "rope_weights = exps / exps.sum(axis=1, keepdims=True)\nZ = rope_weights @ V  # values are not turned\n"
        'show("scaled scores with RoPE", rope_scaled_scores, TOKENS)\nshow("weights with RoPE", rope_weights, TOKENS)\n'
        'show("Z = weights V", Z, TOKENS)\n'
        "np.testing.assert_allclose(np.diag(rope_scaled_scores), np.diag(scaled_scores), rtol=1e-9, atol=1e-12)",
    ),
    (
        "## Only m − n counts; and the other layout\n\nShift every position by the same amount: the same scores. "
        "Many implementations pair dimension i with i + d_k/2 ('rotate half'): the same scores once the "
        "dimensions are reordered (0, d_k/2, 1, d_k/2 + 1, …).",
        "shifted = positions[:, np.newaxis] + 7\n"
        "np.testing.assert_allclose(turned(Q, shifted * theta) @ turned(K, shifted * theta).T,\n"
        "                           Q_rot @ K_rot.T, rtol=1e-9, atol=1e-9)\n"
        "half = d_k // 2\n\n\ndef turned_half(M, angles):\n"
        '    """Dimension i turned with dimension i + d_k/2 (the \'rotate half\' layout)."""\n'
        "    a, b = M[:, :half], M[:, half:]\n"
        "    return np.hstack([a * np.cos(angles) - b * np.sin(angles), a * np.sin(angles) + b * np.cos(angles)])\n\n\n"
        "order = np.ravel(np.column_stack([np.arange(half), np.arange(half) + half]))  # 0, d_k/2, 1, d_k/2 + 1, …\n"
        "np.testing.assert_allclose(turned_half(Q, angles)[:, order], turned(Q[:, order], angles), rtol=1e-12,\n"
        "                           atol=1e-15)\n"
        'print("Shifted positions, the same scores; the half layout is the pairs layout of reordered dimensions")',
    ),
)

_TORCH = pytorch_cell("The same steps in PyTorch", '''\
Q, K, V = X @ W_Q, X @ W_K, X @ W_V
d_k = Q.shape[-1]
theta = BASE ** (-torch.arange(0, d_k, 2, dtype=torch.float64) / d_k)
angles = torch.outer(torch.arange(Q.shape[0], dtype=torch.float64), theta)
turn = torch.polar(torch.ones_like(angles), angles)  # e^(i m θ_i): a turn is a complex product
Q_rot = torch.view_as_real(torch.view_as_complex(Q.reshape(-1, d_k // 2, 2)) * turn).reshape(Q.shape)
K_rot = torch.view_as_real(torch.view_as_complex(K.reshape(-1, d_k // 2, 2)) * turn).reshape(K.shape)
Z = torch.nn.functional.scaled_dot_product_attention(Q_rot, K_rot, V, scale=None if SCALED else 1.0)
print(Z[QUERY])  # the query's context vector with RoPE
''')


def notebook(scenario: Scenario) -> NotebookCells:
    """The notebook's cells: the inputs and RoPE's base as data, then the plain attention, the angles, the turned
    queries and keys, the scores and weights with RoPE, and the checks of what the lecture says."""
    intro = (
        f"# Rotary position embeddings, step by step: {markdown_literal(scenario.title)}\n\n"
        "RoPE (RoFormer, arXiv 2104.09864) computed with numpy and printed at the lecture's "
        f"{scenario.precision} decimals, one step per cell. The last cell checks each step against the "
        f"handout's CSV files beside this notebook.{head_one_note(scenario)}"
    )
    base = f"BASE = {_rope(scenario).base!r}  # RoPE's base: θ_i = BASE^(−2i/d_k) (RoFormer's 10000)"
    return NotebookCells(intro, data_cell(scenario, base), _STEP_CELLS, _TORCH)


def page(scenario: Scenario) -> PageSummary:
    """The page's top: RoPE's formula, the query's weights without positions and with RoPE (an odd d_k has no
    pairs to turn: without positions only, as OrderBlind alone shows), each with its z."""
    head, q = scenario.heads[0] if scenario.w_out is not None else scenario, scenario.query + 1
    step = head.query_step()
    plain = QueryRow(f"The weights of query {q} without positions, and its context vector", step.weights,
                     (False,) * scenario.n_tokens, (f"z{q}", step.context))
    if scenario.d_k % 2:
        return PageSummary("Lecture 10: rotary position embeddings (RoPE)", "Without positions, attention gives "
                           "the same scores whatever the order of the tokens.", f"softmax({scores_words(scenario)}) V",
                           head_one_fact(scenario), (plain,))
    rope = _rope(scenario)
    turned = QueryRow(f"The weights of query {q} with RoPE (positions 0 … {scenario.n_tokens - 1}), and its context "
                      "vector", rope.weights[scenario.query], (False,) * scenario.n_tokens,
                      (f"z{q}", rope.context[scenario.query]))
    intro = (
        "Without positions, attention gives the same scores whatever the order of the tokens. RoPE turns each "
        "pair of dimensions of every query and key by its position times θ_i = base^(−2i/d_k), so a score "
        "depends on how far apart two tokens are."
    )
    facts = (*head_one_fact(scenario), f"RoPE's base {rope.base:g}, {scenario.d_k // 2} pairs of dimensions")
    formula = f"softmax((R_m q_m)·(R_n k_n){scores_words(scenario)[3:]}) V"
    return PageSummary("Lecture 10: rotary position embeddings (RoPE)", intro, formula, facts, (plain, turned))


ROPE = LectureSteps(tables=tables, notebook=notebook, probe="rope_weights", page=page, walkthrough=False)
"""Lecture 10's handout and notebook."""
