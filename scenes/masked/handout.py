"""Lecture 7, masked (causal) self-attention: the mask, its two routes to the same weights, dropout.

The handout holds X and the weight matrices, the scaled scores before the mask, the mask, the
masked scores (``-inf`` above the diagonal), the causal weights, the other route's full softmax,
zeroed rows and row sums, the dropout's kept weights, the weights after dropout and their row
sums (with :data:`scenes.masked.MASKED_DROPOUT`, the dropout scene's ``p`` and seed), V and the
causal Z; the notebook computes each with numpy (``np.triu`` for the mask, ``default_rng(seed)``
replaying the dropout). Of head 1, when the scenario has several. No walkthrough:
:func:`attention_math.format_walkthrough` works unmasked attention.
"""

from __future__ import annotations

from attention_explainer.escape import markdown_literal
from attention_explainer.outputs.steps import LectureSteps, NotebookCells, PageSummary, QueryRow, Table, table
from attention_math import Scenario, attention_dropout, causal_mask, masked_scores, renormalised_weights
from scenes.masked import MASKED_DROPOUT
from scenes.self_attention.handout import (
    HANDOUT_MATRICES,
    data_cell,
    head_one_fact,
    head_one_note,
    pytorch_cell,
    scores_words,
    trace_table,
)

__all__ = ["MASKED", "notebook", "page", "tables"]

_INPUTS = ("X", "W_Q", "W_K", "W_V")


def tables(scenario: Scenario) -> tuple[Table, ...]:
    """The masked lecture's handout matrices, in the lecture's order."""
    plain, causal = scenario.trace(), scenario.trace(causal=True)
    p, seed = MASKED_DROPOUT
    route = renormalised_weights(plain.scaled_scores)
    drop = attention_dropout(causal.weights, p, seed=seed)
    tokens, sums = scenario.tokens, ("row sum",)
    inputs = [
        trace_table(scenario, plain, stem, field, caption, prefix, token_rows)
        for stem, field, caption, token_rows, prefix in HANDOUT_MATRICES
        if stem in _INPUTS
    ]
    return (
        *inputs,
        trace_table(scenario, plain, "scaled_scores", "scaled_scores", "Q Kᵀ / √d_k, the scores before the mask", ""),
        table("mask", "the causal mask: 1 where the key comes after the query (masked), else 0", tokens, tokens,
              causal_mask(scenario.n_tokens), "mask.astype(float)", whole=True),
        table("masked_scores", "the scaled scores with −∞ above the diagonal", tokens, tokens,
              masked_scores(plain.scaled_scores)),
        table("weights", "softmax of the masked scores, the causal weights", tokens, tokens, causal.weights),
        table("full", "the other route: softmax over every key, the future too", tokens, tokens, route.full),
        table("zeroed", "the full softmax with the future set to 0", tokens, tokens, route.zeroed),
        table("row_sums", "what is left of each row (the causal weights are zeroed / row sum)", tokens, sums,
              route.row_sums.reshape(-1, 1), "row_sums.reshape(-1, 1)"),
        table("kept", f"dropout, p = {p}, seed {seed}: 1 for a weight kept, 0 for one dropped", tokens, tokens,
              drop.kept, "kept.astype(float)", whole=True),
        table("dropped", "the causal weights after dropout: kept ones times 1 / (1 − p), dropped ones 0", tokens,
              tokens, drop.weights),
        table("dropped_row_sums", "the row sums after dropout (no longer 1)", tokens, sums,
              drop.row_sums.reshape(-1, 1), "dropped_row_sums.reshape(-1, 1)"),
        trace_table(scenario, plain, "V", "values", "V = X W_V, the values", "v"),
        trace_table(scenario, causal, "Z", "context", "Z = causal weights V, the context vectors", "z"),
    )


_SHOW_MASK = '''
def show_mask(name, mask):
    """Print a matrix of booleans as 1 and 0, one row per token."""
    print(name)
    for token, row in zip(TOKENS, mask):
        print("  " + "  ".join(str(int(m)) for m in row) + "   " + token)
    print()
'''

_STEP_CELLS: tuple[tuple[str, str], ...] = (
    (
        "## Queries, keys, values and the scaled scores\n\nAs in lecture 6: every query against every key, "
        "divided by √d_k.",
        "Q = X @ W_Q\nK = X @ W_K\nV = X @ W_V\nd_k = K.shape[1]\n"
        "scaled_scores = Q @ K.T / np.sqrt(d_k) if SCALED else Q @ K.T\n"
        'show("scaled scores = Q Kᵀ / √d_k", scaled_scores, TOKENS)',
    ),
    (
        "## The causal mask\n\nA decoder writes left to right: query i may use keys 1 … i only. The mask is "
        "1 above the diagonal, where the key comes after the query; a token always sees itself.",
        "n = len(TOKENS)\nmask = np.triu(np.ones((n, n), dtype=bool), k=1)  # True: the key comes after the query\n"
        f"{_SHOW_MASK}\n\n"
        'show_mask("mask (1: a future key, masked)", mask)',
    ),
    (
        "## −∞ above the diagonal\n\nBefore the softmax every future key's score becomes −∞.",
        'masked_scores = np.where(mask, -np.inf, scaled_scores)\nshow("masked scores", masked_scores, TOKENS)',
    ),
    (
        "## Softmax, row by row\n\nexp(−∞) = 0: the future gets weight 0, and each row still adds up to 1, "
        "over the past.",
        "exps = np.exp(masked_scores - masked_scores.max(axis=1, keepdims=True))\n"
        "weights = exps / exps.sum(axis=1, keepdims=True)\n"
        'show("weights = softmax(masked scores)", weights, TOKENS)\n'
        'print("each row adds up to", number(weights.sum(axis=1).min()), "to", number(weights.sum(axis=1).max()))',
    ),
    (
        "## The other route: softmax everything, zero the future, renormalise\n\nDividing each row by what is "
        "left of it cancels the full softmax's denominator: the same weights.",
        "exps = np.exp(scaled_scores - scaled_scores.max(axis=1, keepdims=True))\n"
        "full = exps / exps.sum(axis=1, keepdims=True)\nzeroed = np.where(mask, 0.0, full)\n"
        "row_sums = zeroed.sum(axis=1)\nrenormalised = zeroed / np.where(row_sums > 0, row_sums, 1.0)[:, np.newaxis]\n"
        "# a row whose future outscores its past by ~708 or more keeps a share float64 cannot hold: there,\n"
        "# divide exp(s − m) over the past by its sum (m the largest past score), the same ratio\n"
        "for i in np.flatnonzero(row_sums < np.finfo(float).tiny):\n"
        "    past = np.exp(masked_scores[i] - masked_scores[i].max())\n"
        "    renormalised[i] = past / past.sum()\n"
        'show("full = softmax(scaled scores), the future too", full, TOKENS)\n'
        'show("zeroed: the future set to 0", zeroed, TOKENS)\n'
        'show("row sums: what is left of each row", row_sums[:, np.newaxis], TOKENS)\n'
        'show("renormalised = zeroed / row sums", renormalised, TOKENS)\n'
        "np.testing.assert_allclose(renormalised, weights, rtol=1e-9, atol=1e-12)\n"
        'print(f"The same weights by both routes (they differ by {np.abs(renormalised - weights).max():.1e} at most)")',
    ),
    (
        "## Dropout, in training only\n\nEach weight is kept with probability 1 − p and scaled by 1 / (1 − p), "
        "the others set to 0: the rows no longer add up to 1, on purpose. The draw replays the lecture's: "
        "numpy's default_rng(seed), one number in [0, 1) per weight, row by row.",
        "kept = np.random.default_rng(DROPOUT_SEED).random(weights.shape) >= DROPOUT_P\n"
        "scale = 1 / (1 - DROPOUT_P)\ndropped = np.where(kept, weights * scale, 0.0)\n"
        "dropped_row_sums = dropped.sum(axis=1)\n"
        'print("p =", DROPOUT_P, "  seed =", DROPOUT_SEED, "  a kept weight times 1 / (1 − p) =", number(scale))\n'
        "print()\n"
        'show_mask("kept (1) and dropped (0)", kept)\n'
        'show("dropped = weights × kept / (1 − p)", dropped, TOKENS)\n'
        'show("their row sums", dropped_row_sums[:, np.newaxis], TOKENS)',
    ),
    (
        "## The context vectors\n\nEach token's context vector mixes the values of its past only (the "
        "weights without dropout, as at inference).",
        'Z = weights @ V\nshow("V = X W_V", V, TOKENS)\nshow("Z = weights V", Z, TOKENS)\n'
        'print(f"z{QUERY + 1} = (" + ", ".join(number(v) for v in Z[QUERY]) + ")")',
    ),
)

_TORCH = pytorch_cell("The same steps in PyTorch", '''\
Q, K, V = X @ W_Q, X @ W_K, X @ W_V
scaled_scores = Q @ K.T / K.shape[-1] ** 0.5 if SCALED else Q @ K.T
n = len(TOKENS)
mask = torch.triu(torch.ones(n, n, dtype=torch.bool), diagonal=1)  # True above the diagonal
weights = torch.softmax(scaled_scores.masked_fill(mask, float("-inf")), dim=-1)
Z = weights @ V
print(Z[QUERY])  # the query's context vector

# dropout in training (torch draws its own random numbers: other weights than numpy's are dropped)
dropped = torch.nn.Dropout(p=DROPOUT_P).train()(weights)

# all of it in one call (PyTorch 2):
Z = torch.nn.functional.scaled_dot_product_attention(Q, K, V, is_causal=True, scale=None if SCALED else 1.0)
''')


def notebook(scenario: Scenario) -> NotebookCells:
    """The notebook's cells: the inputs and the dropout's p and seed as data, then the scaled scores,
    the mask, the masked softmax, the renormalised route, dropout and Z."""
    p, seed = MASKED_DROPOUT
    intro = (
        f"# Masked self-attention, step by step: {markdown_literal(scenario.title)}\n\n"
        "The causal mask, its two routes to the same weights, and dropout on them, computed with numpy "
        f"and printed at the lecture's {scenario.precision} decimals, one step per cell. The last cell "
        f"checks each step against the handout's CSV files beside this notebook.{head_one_note(scenario)}"
    )
    constants = (
        f"DROPOUT_P = {p!r}  # the probability that dropout drops a weight (the lecture's)",
        f"DROPOUT_SEED = {seed!r}  # the seed of numpy's default_rng that draws which weights stay",
    )
    return NotebookCells(intro, data_cell(scenario, *constants), _STEP_CELLS, _TORCH)


def page(scenario: Scenario) -> PageSummary:
    """The page's top: the masked formula, the query's causal weights (the future's masked, 0) and its z."""
    step = scenario.trace(causal=True).query_step(scenario.query)
    q = scenario.query + 1
    future = tuple(bool(m) for m in causal_mask(scenario.n_tokens)[scenario.query])
    row = QueryRow(
        f"The causal weights of query {q} (keys 1 … {q}; the keys after it masked) and its context vector",
        step.weights, future, (f"z{q}", step.context),
    )
    intro = (
        "A decoder writes left to right, so query i may read keys 1 … i only: the scores of the keys after "
        "it become −∞ before the softmax, their weights 0, and each row still adds up to 1. In training, "
        "dropout then drops some weights at random."
    )
    p, seed = MASKED_DROPOUT
    facts = (*head_one_fact(scenario), f"dropout (training only): p = {p}, seed {seed}")
    return PageSummary(
        "Lecture 7: masked self-attention", intro, f"softmax(mask({scores_words(scenario)})) V", facts, (row,)
    )


MASKED = LectureSteps(tables=tables, notebook=notebook, probe="weights", page=page, walkthrough=False)
"""Lecture 7's handout and notebook."""
