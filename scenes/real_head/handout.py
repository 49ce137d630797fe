"""The real-head lecture's handout and notebook: lecture 6's steps on one head of a real model.

The scenario of a model head carries the head's own numbers in lecture 6's shapes (for all-MiniLM-L6-v2, X with
the always-1 input as its last column, each W with the bias as its last row, ``Scenario.from_model``), so its
tables and notebook are lecture 6's; only the page's top says which model, layer and head. A decoder's head
(SmolLM2-135M-Instruct) turns q and k by RoPE and masks the future: its tables are the model's own (Q and K
turned, the scores masked), and its notebook turns them and masks them too.
"""

from __future__ import annotations

from attention_explainer.escape import markdown_literal
from attention_explainer.outputs.steps import LectureSteps, NotebookCells, PageSummary, QueryRow, Table
from attention_math import Scenario
from attention_math.minilm import ModelHead
from scenes.self_attention.handout import HANDOUT_MATRICES, PROJECTIONS, data_cell, pytorch_cell, trace_table
from scenes.self_attention.handout import notebook as encoder_notebook
from scenes.self_attention.handout import tables as encoder_tables

__all__ = ["REAL_HEAD", "page"]


def page(scenario: Scenario) -> PageSummary:
    """The page's top: which head of which model, its formula with the biases, the query's weights and z."""
    step = scenario.trace(causal=True).query_step(scenario.query)  # a decoder's own weights are masked
    q = scenario.query + 1
    row = QueryRow(
        f"The head's weights of token {q} over every token and its context vector", step.weights,
        (False,) * scenario.n_tokens, (f"z{q}", step.context),
    )
    facts: tuple[str, ...] = ()
    head = None if scenario.model is None else scenario.model_head()
    if isinstance(head, ModelHead):
        facts = (
            f"all-MiniLM-L6-v2, layer {head.layer_number} of {head.n_layers}, head {head.head_number} of "
            f"{head.n_heads} ({head.d_model} = {head.n_heads} × {head.d_head})",
            f"x carries an always-1 input and each W the bias as its row {head.bias_row}: xW + b = [x, 1][W; b]",
        )
    elif head is not None:
        facts = (
            f"SmolLM2-135M-Instruct, layer {head.layer_number} of {head.n_layers}, head {head.head_number} of "
            f"{head.n_heads} ({head.d_model} = {head.n_heads} × {head.d_head}), reading key/value head "
            f"{head.kv_head_number} of {head.n_kv_heads}",
            "q and k turned by RoPE before their dot product; each token sees itself and the tokens before it",
        )
    intro = (
        "One attention head of a real model on your sentence: its tokens, its own W_Q, W_K, W_V "
        + ("and biases" if head is None or isinstance(head, ModelHead) else "with q and k turned by RoPE and the "
           "future masked") + ", and every number the model's own, through lecture 6's steps."
    )
    return PageSummary("A real model's head", intro, "softmax(QKᵀ/√d_k) V", facts, (row,))


def _decoder(scenario: Scenario) -> bool:
    return scenario.model is not None and scenario.model.causal


_DECODER_CAPTIONS = {
    "Q": "Q = X W_Q turned by RoPE, the queries", "K": "K = X W_K turned by RoPE, the keys",
    "scaled_scores": "Q Kᵀ / √d_k, −∞ above the diagonal (the causal mask)",
    "weights": "softmax of the masked scores, the head's own weights",
}


def tables(scenario: Scenario) -> tuple[Table, ...]:
    """Lecture 6's matrices; a decoder's from its own masked trace (Q and K turned, the future masked)."""
    if not _decoder(scenario):
        return encoder_tables(scenario)
    trace = scenario.trace(causal=True)
    return tuple(trace_table(scenario, trace, stem, field, _DECODER_CAPTIONS.get(stem, caption), prefix, rows)
                 for stem, field, caption, rows, prefix in HANDOUT_MATRICES)


_ROPE_CELL = (
    "## RoPE: q and k turned by their token's place\n\nPair i (dimensions 2i, 2i+1) of the token at position m "
    "(counted from 0) turns by the angle m·θ_i, θ_i = 100000^(−2i/d_k); V is not turned.",
    "def turned(M):\n"
    "    d = M.shape[1]\n"
    "    angles = np.arange(M.shape[0])[:, None] * ROPE_BASE ** (-np.arange(0, d, 2) / d)\n"
    "    out = np.empty_like(M)\n"
    "    out[:, 0::2] = M[:, 0::2] * np.cos(angles) - M[:, 1::2] * np.sin(angles)\n"
    "    out[:, 1::2] = M[:, 0::2] * np.sin(angles) + M[:, 1::2] * np.cos(angles)\n"
    "    return out\n\n"
    "Q, K = turned(Q), turned(K)\n"
    'show("Q, turned", Q, TOKENS)\nshow("K, turned", K, TOKENS)',
)
_DECODER_STEPS = (
    PROJECTIONS,
    _ROPE_CELL,
    ("## Scores, and the mask\n\nEvery query against every key, ÷ √d_k; the keys after the query get −∞.",
     "scores = Q @ K.T\nd_k = K.shape[1]\nscaled_scores = scores / np.sqrt(d_k)\n"
     "scaled_scores[np.triu(np.ones(scores.shape, dtype=bool), k=1)] = -np.inf\n"
     'show("scores = Q Kᵀ", scores, TOKENS)\nshow("scaled scores, masked", scaled_scores, TOKENS)'),
    ("## Softmax, row by row\n\nThe masked keys get weight 0; each row adds up to 1.",
     "exps = np.exp(scaled_scores - scaled_scores.max(axis=1, keepdims=True))\n"
     "weights = exps / exps.sum(axis=1, keepdims=True)\n"
     'show("weights", weights, TOKENS)'),
    ("## The weighted sum\n\nEach token's context vector mixes the value rows of its past.",
     'Z = weights @ V\nshow("Z = weights V", Z, TOKENS)'),
)
_DECODER_TORCH = pytorch_cell("The same steps in PyTorch", """\
def turned(M):
    d = M.shape[-1]
    angles = torch.arange(M.shape[0], dtype=M.dtype)[:, None] * ROPE_BASE ** (-torch.arange(0, d, 2) / d)
    out = torch.empty_like(M)
    out[:, 0::2] = M[:, 0::2] * angles.cos() - M[:, 1::2] * angles.sin()
    out[:, 1::2] = M[:, 0::2] * angles.sin() + M[:, 1::2] * angles.cos()
    return out

Q, K, V = turned(X @ W_Q), turned(X @ W_K), X @ W_V
Z = torch.nn.functional.scaled_dot_product_attention(Q, K, V, is_causal=True)
print(Z[QUERY])  # the query's context vector
""")


def notebook(scenario: Scenario) -> NotebookCells:
    """Lecture 6's notebook; a decoder's turns Q and K by RoPE and masks the future."""
    if not _decoder(scenario):
        return encoder_notebook(scenario)
    intro = (
        f"# A real decoder's head, step by step: {markdown_literal(scenario.title)}\n\n"
        "The head's own X (its layer's input after RMSNorm) and W_Q, W_K, W_V, then Q, K, V, RoPE's turn, the "
        "masked scores, the softmax and Z, computed with numpy. The last cell checks each step against the "
        "handout's CSV files beside this notebook."
    )
    head = scenario.model_head()
    assert not isinstance(head, ModelHead)
    base = f"ROPE_BASE = {head.config.rope_base!r}  # RoPE's base (llama.rope.freq_base of the model's file)"
    return NotebookCells(intro, data_cell(scenario, base), _DECODER_STEPS, _DECODER_TORCH)


REAL_HEAD = LectureSteps(tables=tables, notebook=notebook, probe="weights", page=page, walkthrough=False)
"""The real-head lecture's handout and notebook (lecture 6's steps on the model's numbers)."""
