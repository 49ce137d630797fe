"""Lecture 9, inference: generation token by token with a KV cache, and what the cache saves.

The handout holds X and the weight matrices (head 1's, when the scenario has several), the caches
after the last step (``K_cache``, ``V_cache``), each step's weights over the cache as a row
(``step_weights``: row t holds step t's weights of keys 1 … t, 0 after them), each step's context
(``Z``), each step's multiplies with and without the cache, and the cache's memory in published
models (``cache_memory``: 2 × layers × key/value heads × d_head × bytes a number, a token and for
``scenes.inference.CACHE_CONTEXT`` tokens, beside what one key/value head per query head would keep). The
notebook replays the generation with numpy, one token at a time, appending a row to each cache, checks
every step against full masked attention, counts the multiplies both ways and works out the models'
cache sizes from their configurations; its last cell checks every table against the handout's CSVs.
No walkthrough: :func:`attention_math.format_walkthrough` works unmasked attention.
"""

from __future__ import annotations

import numpy as np

from attention_explainer.escape import markdown_literal
from attention_explainer.outputs.steps import LectureSteps, NotebookCells, PageSummary, QueryRow, Table, numbered, table
from attention_math import PUBLISHED_CONFIGS, Scenario, cache_memory, kv_cache_generation
from scenes.inference import CACHE_CONTEXT
from scenes.self_attention.handout import (
    HANDOUT_MATRICES,
    data_cell,
    head_one_fact,
    head_one_note,
    pytorch_cell,
    scores_words,
    trace_table,
)

__all__ = ["INFERENCE", "notebook", "page", "tables"]

_INPUTS = ("X", "W_Q", "W_K", "W_V")


_MEMORY_COLUMNS = ("layers", "query heads", "key/value heads", "d_head", "bytes a number", "KiB a token",
                   f"MiB for {CACHE_CONTEXT} tokens", "KiB a token, a K/V head per query head")


def _memory_table() -> Table:
    """The KV cache of each published model, from :func:`attention_math.cache_memory`: whole numbers all (the context's
    in MiB, which GiB would cut to 0.03 for Falcon-7B's 32 MiB)."""
    rows = []
    for config in PUBLISHED_CONFIGS:
        memory = cache_memory(config, CACHE_CONTEXT)
        rows.append([memory.layers, config.query_heads, memory.kv_heads, memory.d_head, memory.bytes_per_number,
                     memory.kib_per_token, memory.context_bytes / 2**20, memory.multi_head_kib_per_token])
    return table("cache_memory", "the KV cache of published models: 2 (a key and a value) × layers × key/value "
                 f"heads × d_head × bytes a number, for a token and for {CACHE_CONTEXT} tokens",
                 [config.name for config in PUBLISHED_CONFIGS], _MEMORY_COLUMNS, rows, token_rows=False, whole=True)


def tables(scenario: Scenario) -> tuple[Table, ...]:
    """The inference lecture's handout matrices, in the lecture's order."""
    one = scenario.heads[0]
    generation = kv_cache_generation(one.embeddings, one.w_query, one.w_key, one.w_value, scaled=scenario.scaled)
    plain, tokens, n = scenario.trace(), scenario.tokens, scenario.n_tokens
    inputs = [
        trace_table(scenario, plain, stem, field, caption, prefix, token_rows)
        for stem, field, caption, token_rows, prefix in HANDOUT_MATRICES
        if stem in _INPUTS
    ]
    step_weights = np.zeros((n, n))
    for step in generation.steps:
        step_weights[step.index, : step.index + 1] = step.weights
    counts = [[step.multiplies_with_cache, step.multiplies_without_cache] for step in generation.steps]
    return (
        *inputs,
        table("K_cache", "the key cache after the last step: a row per token, k_t = x_t W_K", tokens,
              numbered("k", generation.keys.shape[1]), generation.keys),
        table("V_cache", "the value cache after the last step: a row per token, v_t = x_t W_V", tokens,
              numbered("v", generation.values.shape[1]), generation.values),
        table("step_weights", "step t's weights over the cached keys 1 … t (0 for keys not yet generated)", tokens,
              tokens, step_weights),
        table("Z", "each step's context vector, z_t = weights · cached values", tokens,
              numbered("z", generation.values.shape[1]), np.array([step.context for step in generation.steps])),
        table("multiplies", "each step's multiplies, with the cache and without one", tokens,
              ("with cache", "without cache"), counts, "np.array(multiplies, dtype=float)"),
        _memory_table(),
    )


_STEP_CELLS: tuple[tuple[str, str], ...] = (
    (
        "## Generation with a cache, one token at a time\n\nEach step projects the new token alone: its query, "
        "one new row of K and one of V, appended to the caches. The new query meets every cached key; its "
        "weights mix the cached values. The earlier rows are read, not computed again.",
        "n, d_in = X.shape\nd_k, d_v = W_K.shape[1], W_V.shape[1]\n"
        "K_cache = np.empty((0, d_k))\nV_cache = np.empty((0, d_v))\n"
        "step_weights = np.zeros((n, n))\nZ = np.zeros((n, d_v))\nmultiplies = []\n"
        "for t in range(n):\n"
        "    x = X[t]\n"
        "    q, k, v = x @ W_Q, x @ W_K, x @ W_V  # the new token's projections, the only ones this step makes\n"
        "    K_cache = np.vstack([K_cache, k])\n    V_cache = np.vstack([V_cache, v])\n"
        "    scores = K_cache @ q / np.sqrt(d_k) if SCALED else K_cache @ q\n"
        "    exps = np.exp(scores - scores.max())\n"
        "    step_weights[t, : t + 1] = exps / exps.sum()\n"
        "    Z[t] = step_weights[t, : t + 1] @ V_cache\n"
        "    attend = (t + 1) * (d_k + d_v)  # the scores and the weighted sum\n"
        "    with_cache = d_in * (2 * d_k + d_v) + attend\n"
        "    without_cache = d_in * d_k + (t + 1) * d_in * (d_k + d_v) + attend  # every key and value again\n"
        "    multiplies.append([with_cache, without_cache])\n"
        '    print(f"step {t + 1} ({TOKENS[t]}): z = (" + ", ".join(number(z) for z in Z[t]) + ")",\n'
        '          f"  multiplies {with_cache} with the cache, {without_cache} without")\n'
        'show("K cache", K_cache, TOKENS)\nshow("V cache", V_cache, TOKENS)',
    ),
    (
        "## The same as masked attention over the whole sentence\n\nStep t's weights and context are row t of "
        "masked self-attention computed all at once.",
        "Q, K, V = X @ W_Q, X @ W_K, X @ W_V\nfull = Q @ K.T / np.sqrt(d_k) if SCALED else Q @ K.T\n"
        "full = np.where(np.triu(np.ones((n, n), dtype=bool), k=1), -np.inf, full)\n"
        "exps = np.exp(full - full.max(axis=1, keepdims=True))\nweights = exps / exps.sum(axis=1, keepdims=True)\n"
        "np.testing.assert_allclose(step_weights, weights, rtol=1e-9, atol=1e-12)\n"
        "np.testing.assert_allclose(Z, weights @ V, rtol=1e-9, atol=1e-12)\n"
        'print("every step equals its row of masked attention")\n'
        "totals = np.array(multiplies).sum(axis=0)\n"
        'print(f"in all: {totals[0]} multiplies with the cache, {totals[1]} without")',
    ),
)

_MEMORY = (
    "## The cache's memory in published models\n\nEvery token keeps a key and a value in every layer, for every "
    "key/value head: 2 × layers × key/value heads × d_head × bytes a number. Grouped-query attention (fewer key/value "
    "heads than query heads) and multi-query attention (one) shrink it by the group's size.",
    "rows = []\n"
    "for name, layers, query_heads, kv_heads, d_head, size in MODELS:\n"
    "    per_token = 2 * layers * kv_heads * d_head * size  # bytes\n"
    "    multi_head = 2 * layers * query_heads * d_head * size  # a key/value head per query head\n"
    "    rows.append([layers, query_heads, kv_heads, d_head, size, per_token / 1024, per_token * CONTEXT / 2**20,\n"
    "                 multi_head / 1024])\n"
    '    print(f"{name}: {per_token / 1024:g} KiB a token, {per_token * CONTEXT / 2**30:g} GiB for {CONTEXT} tokens "\n'
    '          f"({multi_head / 1024:g} KiB a token with a key/value head per query head)")\n'
    "cache_memory = np.array(rows, dtype=float)",
)

_TORCH = pytorch_cell("The same generation in PyTorch", '''\
K_cache, V_cache = X[:0] @ W_K, X[:0] @ W_V  # empty caches
for t in range(len(TOKENS)):
    q, k, v = X[t] @ W_Q, X[t] @ W_K, X[t] @ W_V
    K_cache, V_cache = torch.cat([K_cache, k[None]]), torch.cat([V_cache, v[None]])
    z = torch.nn.functional.scaled_dot_product_attention(q[None], K_cache, V_cache, scale=None if SCALED else 1.0)
    print(TOKENS[t], z[0])
''')


def notebook(scenario: Scenario) -> NotebookCells:
    """The notebook's cells: the inputs as data, the generation step by step with its caches, then the check
    against masked attention over the whole sentence."""
    intro = (
        f"# Generation with a KV cache, step by step: {markdown_literal(scenario.title)}\n\n"
        "The sentence generated one token at a time, keys and values kept in a cache, computed with numpy and "
        f"printed at the lecture's {scenario.precision} decimals. The last cell checks each step against the "
        f"handout's CSV files beside this notebook.{head_one_note(scenario)}"
    )
    models = ", ".join(f"({c.name!r}, {c.layers}, {c.query_heads}, {c.kv_heads}, {c.d_head}, {c.bytes_per_number})"
                       for c in PUBLISHED_CONFIGS)
    constants = (f"MODELS = [{models}]  # name, layers, query heads, key/value heads, d_head, bytes a number "
                 "(each model's config.json)", f"CONTEXT = {CACHE_CONTEXT}  # the long context's tokens")
    return NotebookCells(intro, data_cell(scenario, *constants), (*_STEP_CELLS, _MEMORY), _TORCH)


def page(scenario: Scenario) -> PageSummary:
    """The page's top: the query's step of generation with a KV cache (its weights over the cache, the keys
    after it not yet written) and its z, and the multiplies of the whole generation with and without the cache."""
    one = scenario.heads[0]
    generation = kv_cache_generation(one.embeddings, one.w_query, one.w_key, one.w_value, scaled=scenario.scaled)
    step, q, n = generation.steps[scenario.query], scenario.query + 1, scenario.n_tokens
    weights = np.zeros(n)
    weights[: q] = step.weights
    row = QueryRow(
        f"Step {q}: the weights of token {q} over the cache (keys 1 … {q}; the later ones not written yet) and its "
        "context vector", weights, tuple(j >= q for j in range(n)), (f"z{q}", step.context),
    )
    intro = (
        "A decoder writes one token at a time. Each step computes only the new token's query, key and value; "
        "the keys and values of the tokens before it are read from the cache, not computed again."
    )
    with_cache = sum(s.multiplies_with_cache for s in generation.steps)
    without = sum(s.multiplies_without_cache for s in generation.steps)
    facts = (*head_one_fact(scenario), f"multiplies of the whole generation: {with_cache} with the cache, "
             f"{without} without")
    formula = f"z_t = softmax(q_t K_1…tᵀ{scores_words(scenario)[3:]}) V_1…t"
    return PageSummary("Lecture 9: inference with a KV cache", intro, formula, facts, (row,))


INFERENCE = LectureSteps(tables=tables, notebook=notebook, probe="step_weights", page=page, walkthrough=False)
"""Lecture 9's handout and notebook."""
