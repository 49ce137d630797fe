"""Where W comes from, "Learned, not given": the training run, then the learned matrices through the pipeline.

The handout holds the training run of :data:`scenes.learned.LEARNED_TRAINING` (the one the lecture's scenes
show, whatever the scenario): the loss at every step and each "it"'s attention row at every step; then the
scenario's W_Q and W_K (the ``learned`` preset's are that run's last step), its values, scores, scaled
scores, weights and context vectors. The notebook trains the same run in plain numpy (the same draw of the
start, the same gradient, the same steps: the same numbers to the last bit), prints the loss and the rows at
the steps the scenes stop at, then runs the scenario's matrices through scores, ÷ √d_k, the softmax and the
weighted sum. Of head 1, when the scenario has several. No walkthrough: :func:`attention_math.format_walkthrough`
works one query of lecture 6.
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
    table,
)
from attention_math import Scenario, TrainingTrace, train_attention
from scenes.learned import LEARNED_TRAINING, learned_keyframes
from scenes.self_attention.handout import (
    HANDOUT_MATRICES,
    data_cell,
    head_one_fact,
    head_one_note,
    pytorch_cell,
    scores_words,
    trace_table,
)

__all__ = ["LEARNED", "notebook", "page", "tables", "training_run"]

_PIPELINE = ("W_Q", "W_K", "V", "scores", "scaled_scores", "weights", "Z")


def training_run() -> TrainingTrace:
    """The lecture's training run (:data:`scenes.learned.LEARNED_TRAINING`), as its scenes show it."""
    seed, steps, rate = LEARNED_TRAINING
    return train_attention(seed, steps=steps, learning_rate=rate)


def tables(scenario: Scenario) -> tuple[Table, ...]:
    """The learned lecture's handout: the run's losses and rows at every step, then the scenario's pipeline."""
    run = training_run()
    steps = tuple(f"step {t}" for t in range(run.steps + 1))
    training = [table("step_losses", "the loss at every step (step 0: the random start)", steps, ("loss",),
                      run.step_losses.reshape(-1, 1), "step_losses.reshape(-1, 1)", token_rows=False)]
    for m, (name, query) in enumerate(zip(("first", "second"), run.queries, strict=True)):
        training.append(table(f"rows_{name}", f"the {name} 'it' (token {query + 1})'s attention at every step",
                              steps, run.tokens, run.rows[:, m, :], f"rows[:, {m}, :]", token_rows=False))
    plain = scenario.trace()
    pipeline = [
        trace_table(scenario, plain, stem, field, caption, prefix, token_rows)
        for stem, field, caption, token_rows, prefix in HANDOUT_MATRICES
        if stem in _PIPELINE
    ]
    return (*training, *pipeline)


_TRAINING = '''\
rng = np.random.default_rng(TRAIN_SEED)
d_in, d_k = TRAIN_X.shape[1], 2
bound = 1 / np.sqrt(d_in)  # as PyTorch's nn.Linear starts a weight
w_q = rng.uniform(-bound, bound, (d_in, d_k))  # W_Q first, then W_K
w_k = rng.uniform(-bound, bound, (d_in, d_k))
targets = np.eye(len(TRAIN_X))[TRAIN_REFERENTS]  # all the attention on the noun
x_q, m = TRAIN_X[TRAIN_QUERIES], len(TRAIN_QUERIES)
losses, rows = [], []
for step in range(TRAIN_STEPS + 1):
    q, k = x_q @ w_q, TRAIN_X @ w_k
    scaled = q @ k.T / np.sqrt(d_k)
    shifted = scaled - scaled.max(axis=1, keepdims=True)
    log_rows = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    losses.append(0.0 - float(np.sum(targets * log_rows)) / m)  # the mean cross-entropy
    rows.append(np.exp(log_rows))
    if step < TRAIN_STEPS:
        g = (np.exp(log_rows) - targets) / m / np.sqrt(d_k)  # dL/d(q kᵀ), the softmax's and the scale's parts
        w_q, w_k = w_q - TRAIN_RATE * (x_q.T @ (g @ k)), w_k - TRAIN_RATE * (TRAIN_X.T @ (g.T @ q))
step_losses, rows = np.array(losses), np.array(rows)
for step in KEYFRAMES:
    print(f"step {step}: loss", number(step_losses[step]))
    show("  each 'it''s attention over " + ", ".join(TRAIN_TOKENS), rows[step], ["first it", "second it"])
show("the learned W_Q", w_q)
show("the learned W_K", w_k)
print("the scenario's W_Q and W_K are these:", bool(np.array_equal(w_q, W_Q) and np.array_equal(w_k, W_K)))'''

_STEP_CELLS: tuple[tuple[str, str], ...] = (
    (
        "## Training W_Q and W_K\n\nStart from random weights; the loss asks each \"it\" to put its attention on "
        "the noun it means (the cross-entropy of its row against that noun); each step moves W_Q and W_K a little "
        "against the loss's exact gradient. W_V is not trained: the loss reads only the weights.",
        _TRAINING,
    ),
    (
        "## The learned matrices through the pipeline\n\nScores, ÷ √d_k, softmax and the weighted sum of the "
        "values, as in lecture 6 (W_V as it was: the loss never changed it).",
        "Q, K, V = X @ W_Q, X @ W_K, X @ W_V\nscores = Q @ K.T\nd_k = K.shape[1]\n"
        "scaled_scores = scores / np.sqrt(d_k) if SCALED else scores\n"
        "exps = np.exp(scaled_scores - scaled_scores.max(axis=1, keepdims=True))\n"
        "weights = exps / exps.sum(axis=1, keepdims=True)\n"
        'show("scores = Q Kᵀ", scores, TOKENS)\nshow("scaled scores = scores / √d_k", scaled_scores, TOKENS)\n'
        'show("weights = softmax(scaled scores)", weights, TOKENS)\n'
        'print("the query\'s weights:",\n'
        '      ", ".join(f"{token} {number(w)}" for token, w in zip(TOKENS, weights[QUERY])))\n'
        'Z = weights @ V\nshow("V = X W_V", V, TOKENS)\nshow("Z = weights V", Z, TOKENS)',
    ),
)

_TORCH = pytorch_cell("The same training in PyTorch", '''\
x = torch.from_numpy(TRAIN_X)
w_q = torch.empty(x.shape[1], 2, dtype=torch.float64).uniform_(-0.5, 0.5).requires_grad_()
w_k = torch.empty(x.shape[1], 2, dtype=torch.float64).uniform_(-0.5, 0.5).requires_grad_()
optimiser = torch.optim.SGD([w_q, w_k], lr=TRAIN_RATE)
target = torch.tensor(TRAIN_REFERENTS)
for step in range(TRAIN_STEPS):
    scores = (x[TRAIN_QUERIES] @ w_q) @ (x @ w_k).T / 2 ** 0.5
    loss = torch.nn.functional.cross_entropy(scores, target)  # log-softmax and the mean, in one
    optimiser.zero_grad()
    loss.backward()
    optimiser.step()
''', source=", autograd computing the gradient", inputs=False)


def notebook(scenario: Scenario) -> NotebookCells:
    """The notebook's cells: the scenario and the run's settings as data, the training, then the pipeline."""
    run = training_run()
    intro = (
        f"# Learned, not given: {markdown_literal(scenario.title)}\n\n"
        "Where W_Q and W_K come from: gradient descent, in plain numpy, the same run as the lecture's, its "
        f"numbers printed at the lecture's {scenario.precision} decimals; then the learned matrices through the "
        "pipeline. The last cell checks each step against the handout's CSV files beside this notebook."
        f"{head_one_note(scenario)}"
    )
    seed, steps, rate = LEARNED_TRAINING
    constants = (
        f"TRAIN_SEED, TRAIN_STEPS, TRAIN_RATE = {seed!r}, {steps!r}, {rate!r}  # the lecture's run",
        f"TRAIN_TOKENS = {list(run.tokens)!r}  # the words of the sentence that matter",
        f"TRAIN_QUERIES = {list(run.queries)!r}  # the rows of the two 'it's, from 0",
        f"TRAIN_REFERENTS = {list(run.referents)!r}  # the noun each means: dog, ball",
        f"KEYFRAMES = {list(learned_keyframes(steps))!r}  # the steps the lecture stops at",
        f"TRAIN_X = {matrix_literal(run.embeddings)}  # animal, thing, shared, role",
    )
    return NotebookCells(intro, data_cell(scenario, *constants), _STEP_CELLS, _TORCH)


def page(scenario: Scenario) -> PageSummary:
    """The page's top: where W comes from (the run's settings), then the scenario's query through the
    learned matrices: its weights over every key and its z."""
    step = scenario.query_step()
    q = scenario.query + 1
    row = QueryRow(
        f"The weights of query {q} through the learned W_Q and W_K, and its context vector", step.weights,
        (False,) * scenario.n_tokens, (f"z{q}", step.context),
    )
    intro = (
        "W_Q and W_K begin as random matrices; gradient descent on a small loss moves them until each 'it' "
        "attends to the noun it refers to. The learned matrices then run through lecture 6's steps."
    )
    seed, steps, rate = LEARNED_TRAINING
    facts = (*head_one_fact(scenario), f"the training run: seed {seed}, {steps} steps, learning rate {rate}")
    return PageSummary(
        "Where W comes from: learned, not given", intro, f"softmax({scores_words(scenario)}) V", facts, (row,)
    )


LEARNED = LectureSteps(tables=tables, notebook=notebook, probe="weights", page=page, walkthrough=False)
"""The learned lecture's handout and notebook."""
