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

A decoder's head (``--model smollm2``) gives the model's own run, as the cache scene shows it
(:func:`attention_math.smollm.cached_generation`): the rows are the prompt's tokens and those the model
wrote and read back, X their inputs to the layer (after its RMSNorm), the matrices the head's columns;
the notebook turns each new q and k by RoPE at its position (``turned(M, first)``) as the model does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

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
from attention_math import PUBLISHED_CONFIGS, Scenario, cache_memory, kv_cache_generation
from scenes.inference import CACHE_CONTEXT, new_tokens
from scenes.self_attention.handout import (
    HANDOUT_MATRICES,
    data_cell,
    head_one_fact,
    head_one_note,
    pytorch_cell,
    scores_words,
    trace_table,
)

if TYPE_CHECKING:
    from attention_math.smollm import CachedGeneration

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


def model_run(scenario: Scenario) -> CachedGeneration | None:
    """A decoder's head (SmolLM2): the model's own run as the cache scene shows it; else ``None``."""
    model = scenario.model
    if model is None or not model.causal:
        return None
    from attention_math.smollm import cached_generation

    return cached_generation(model.sentence, layer=model.layer - 1, head=model.head - 1,
                             max_new_tokens=new_tokens(scenario.n_tokens))


@dataclass(frozen=True)
class _Rows:
    """A model's run as the handout's tables: each row's token, the caches, each step's weights and z."""

    tokens: tuple[str, ...]
    keys: np.ndarray
    values: np.ndarray
    step_weights: np.ndarray
    context: np.ndarray
    counts: list[list[int]]


def _run_rows(run: CachedGeneration) -> _Rows:
    from attention_math.smollm import display_token

    n = len(run.steps)
    step_weights = np.zeros((n, n))
    for step in run.steps:
        step_weights[step.index, : step.index + 1] = step.weights
    # the multiplies of the same shapes (576 → 64; RoPE's turns are not multiplies of a matrix product)
    shapes = kv_cache_generation(run.embeddings, run.w_query, run.w_key, run.w_value)
    counts = [[step.multiplies_with_cache, step.multiplies_without_cache] for step in shapes.steps]
    return _Rows(tuple(display_token(token) for token in run.tokens), run.steps[-1].keys, run.steps[-1].values,
                 step_weights, np.array([step.context for step in run.steps]), counts)


def _run_tables(run: CachedGeneration) -> tuple[Table, ...]:
    rows = _run_rows(run)
    tokens, width = rows.tokens, run.w_query.shape[0]
    weight_rows = tuple(f"row {i + 1}" for i in range(width))
    return (
        table("X", "X, each token's input to the layer after its RMSNorm: the prompt's, then each token the model "
              "wrote and read back", tokens, numbered("x", width), run.embeddings),
        table("W_Q", "W_Q, the head's query weights", weight_rows, numbered("q", 64), run.w_query, token_rows=False),
        table("W_K", "W_K, its key/value head's key weights", weight_rows, numbered("k", 64), run.w_key,
              token_rows=False),
        table("W_V", "W_V, its key/value head's value weights", weight_rows, numbered("v", 64), run.w_value,
              token_rows=False),
        table("K_cache", "the key cache after the last step: a row per token, k_t = x_t W_K turned by RoPE at "
              "position t", tokens, numbered("k", 64), rows.keys),
        table("V_cache", "the value cache after the last step: a row per token, v_t = x_t W_V", tokens,
              numbered("v", 64), rows.values),
        table("step_weights", "step t's weights over the cached keys 1 … t (0 for keys not yet written)", tokens,
              tokens, rows.step_weights),
        table("Z", "each step's z, the weights times the cached values", tokens, numbered("z", 64), rows.context),
        table("multiplies", "each step's multiplies, with the cache and without one", tokens,
              ("with cache", "without cache"), rows.counts, "np.array(multiplies, dtype=float)"),
        _memory_table(),
    )


def tables(scenario: Scenario) -> tuple[Table, ...]:
    """The inference lecture's handout matrices, in the lecture's order (a decoder's: of the model's run)."""
    run = model_run(scenario)
    if run is not None:
        return _run_tables(run)
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


_CACHES = ("n, d_in = X.shape\nd_k, d_v = W_K.shape[1], W_V.shape[1]\n"
           "K_cache = np.empty((0, d_k))\nV_cache = np.empty((0, d_v))\n"
           "step_weights = np.zeros((n, n))\nZ = np.zeros((n, d_v))\nmultiplies = []\n"
           "for t in range(n):\n")
"""The generation cell's start: empty caches, then a loop over the tokens (its body each lecture's own)."""

_CACHE_STEP = (
    "    K_cache = np.vstack([K_cache, k])\n    V_cache = np.vstack([V_cache, v])\n"
    "    scores = K_cache @ q / np.sqrt(d_k) if SCALED else K_cache @ q\n"
    "    exps = np.exp(scores - scores.max())\n"
    "    step_weights[t, : t + 1] = exps / exps.sum()\n"
    "    Z[t] = step_weights[t, : t + 1] @ V_cache\n"
    "    attend = (t + 1) * (d_k + d_v)  # the scores and the weighted sum\n"
    "    with_cache = d_in * (2 * d_k + d_v) + attend\n"
    "    without_cache = d_in * d_k + (t + 1) * d_in * (d_k + d_v) + attend  # every key and value again\n"
    "    multiplies.append([with_cache, without_cache])\n"
)
"""A step of the loop once the new token's q, k and v are made: the caches grow a row, the query meets them."""

_STEP_CELLS: tuple[tuple[str, str], ...] = (
    (
        "## Generation with a cache, one token at a time\n\nEach step projects the new token alone: its query, "
        "one new row of K and one of V, appended to the caches. The new query meets every cached key; its "
        "weights mix the cached values. The earlier rows are read, not computed again.",
        _CACHES + "    x = X[t]\n"
        "    q, k, v = x @ W_Q, x @ W_K, x @ W_V  # the new token's projections, the only ones this step makes\n"
        + _CACHE_STEP + '    print(f"step {t + 1} ({TOKENS[t]}): z = (" + ", ".join(number(z) for z in Z[t]) + ")",\n'
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


_RUN_STEP = (
    "## The model's run, one token at a time\n\nThe prompt goes through the model at once; then each token it "
    "writes goes through alone. Either way, each token's q and k are turned by RoPE at its own position, its key "
    "and value appended to the caches, and its query meets every cached key. Replayed here token by token: the same "
    "numbers, since a token never reads the ones after it.",
    _CACHES + "    x = X[t : t + 1]  # the token's row, as a 1 × d_in matrix\n"
    "    q, k = turned(x @ W_Q, t)[0], turned(x @ W_K, t)[0]  # turned at the token's position t\n"
    "    v = (x @ W_V)[0]\n" + _CACHE_STEP + "    read = \"prompt\" if t < PROMPT else \"written\"\n"
    '    print(f"step {t + 1} ({TOKENS[t]}, {read}): z starts (" + ", ".join(number(z) for z in Z[t, :4]) + ", …)")\n'
    'print("the model wrote:", repr(WRITTEN))',
)

_RUN_TORCH = pytorch_cell("The same run in PyTorch", '''\
Q = torch.from_numpy(turned(X.numpy() @ W_Q.numpy()))  # each row turned at its position, as above
K = torch.from_numpy(turned(X.numpy() @ W_K.numpy()))
V = X @ W_V
for t in range(len(TOKENS)):  # the cache: the rows 0 … t
    z = torch.nn.functional.scaled_dot_product_attention(Q[t : t + 1], K[: t + 1], V[: t + 1])
    print(TOKENS[t], z[0, :4])
''')


def _run_notebook(scenario: Scenario, run: CachedGeneration) -> NotebookCells:
    """A decoder's notebook: its run's rows as data, replayed token by token, checked against masked attention."""
    rows = _run_rows(run)
    model = scenario.model
    assert model is not None
    intro = (
        f"# The KV cache of a real decoder, step by step: {markdown_literal(scenario.title)}\n\n"
        f"SmolLM2-135M-Instruct, layer {model.layer}, head {model.head}: the prompt's {run.prompt_length} tokens, "
        "then the tokens the model wrote and read back, each token's key and value kept in the cache. Computed with "
        "numpy from the head's matrices and each token's input to the layer; the last cell checks each step against "
        "the handout's CSV files beside this notebook."
    )
    lines = (
        f"TITLE = {scenario.title!r}",
        f"TOKENS = {list(rows.tokens)!r}  # the prompt's, then those the model wrote and read back",
        f"PROMPT = {run.prompt_length}  # the prompt's tokens",
        f"WRITTEN = {run.generation.text!r}  # all the model wrote (greedy)",
        f"PRECISION = {scenario.precision}  # the decimals the lecture shows",
        "SCALED = True  # the model divides its scores by the square root of d_k",
        *_memory_constants(),
        "",
        f"X = {matrix_literal(run.embeddings)}  # each token's input to the layer, after its RMSNorm",
        f"W_Q = {matrix_literal(run.w_query)}",
        f"W_K = {matrix_literal(run.w_key)}",
        f"W_V = {matrix_literal(run.w_value)}",
        "",
        "print(TITLE)",
        'show("X, each token\'s input (its first 6 of 576 numbers)", X[:, :6], TOKENS)',
    )
    return NotebookCells(intro, "\n".join(lines), (_RUN_STEP, _STEP_CELLS[1], _MEMORY), _RUN_TORCH)


def _memory_constants() -> tuple[str, str]:
    models = ", ".join(f"({c.name!r}, {c.layers}, {c.query_heads}, {c.kv_heads}, {c.d_head}, {c.bytes_per_number})"
                       for c in PUBLISHED_CONFIGS)
    return (f"MODELS = [{models}]  # name, layers, query heads, key/value heads, d_head, bytes a number "
            "(each model's config.json)", f"CONTEXT = {CACHE_CONTEXT}  # the long context's tokens")


def notebook(scenario: Scenario) -> NotebookCells:
    """The notebook's cells: the inputs as data, the generation step by step with its caches, then the check
    against masked attention over the whole sentence."""
    run = model_run(scenario)
    if run is not None:
        return _run_notebook(scenario, run)
    intro = (
        f"# Generation with a KV cache, step by step: {markdown_literal(scenario.title)}\n\n"
        "The sentence generated one token at a time, keys and values kept in a cache, computed with numpy and "
        f"printed at the lecture's {scenario.precision} decimals. The last cell checks each step against the "
        f"handout's CSV files beside this notebook.{head_one_note(scenario)}"
    )
    return NotebookCells(intro, data_cell(scenario, *_memory_constants()), (*_STEP_CELLS, _MEMORY), _TORCH)


def page(scenario: Scenario) -> PageSummary:
    """The page's top: the query's step of generation with a KV cache (its weights over the cache, the keys
    after it not yet written) and its z, and the multiplies of the whole generation with and without the cache."""
    run = model_run(scenario)
    if run is not None:
        return _run_page(scenario, run)
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


def _run_page(scenario: Scenario, run: CachedGeneration) -> PageSummary:
    """A decoder's page: the query's step of the model's run (its prompt's tokens as keys), what the model wrote,
    and the multiplies of the run with and without the cache."""
    step, q, n = run.steps[scenario.query], scenario.query + 1, scenario.n_tokens
    weights = np.zeros(n)
    weights[: q] = step.weights
    row = QueryRow(
        f"Step {q}: the weights of token {q} over the cache (keys 1 … {q}; the later ones not read yet) and its z",
        weights, tuple(j >= q for j in range(n)), (f"z{q}", step.context),
    )
    intro = (
        "A decoder writes one token at a time. The prompt goes through at once; then each token the model writes "
        "goes through alone: only its query, key and value are computed, the keys and values before it are read "
        "from the cache."
    )
    counts = np.array(_run_rows(run).counts).sum(axis=0)
    facts = (f"the model wrote: {run.generation.text!r} (greedy, {len(run.generation.new_tokens)} tokens)",
             f"rows of the cache: {len(run.steps)} ({run.prompt_length} of the prompt, the rest written and read "
             "back)", f"multiplies of the whole run: {counts[0]} with the cache, {counts[1]} without")
    formula = "z_t = softmax(q_t K_1…tᵀ/√d_k) V_1…t, q and k turned by RoPE at their positions"
    return PageSummary("Lecture 9: inference with a KV cache", intro, formula, facts, (row,))


INFERENCE = LectureSteps(tables=tables, notebook=notebook, probe="step_weights", page=page, walkthrough=False)
"""Lecture 9's handout and notebook."""
