"""The real-head lecture's handout and notebook: lecture 6's steps on one head of all-MiniLM-L6-v2.

The scenario of a model head carries the head's own numbers in lecture 6's shapes (X with the
always-1 input as its last column, each W with the bias as its last row, ``Scenario.from_model``),
so its tables and notebook are lecture 6's; only the page's top says which model, layer and head.
"""

from __future__ import annotations

from attention_explainer.outputs.steps import LectureSteps, PageSummary, QueryRow
from attention_math import Scenario
from scenes.self_attention.handout import notebook, tables

__all__ = ["REAL_HEAD", "page"]


def page(scenario: Scenario) -> PageSummary:
    """The page's top: which head of which model, its formula with the biases, the query's weights and z."""
    step = scenario.query_step()
    q = scenario.query + 1
    row = QueryRow(
        f"The head's weights of token {q} over every token and its context vector", step.weights,
        (False,) * scenario.n_tokens, (f"z{q}", step.context),
    )
    facts: tuple[str, ...] = ()
    if scenario.model is not None:
        head = scenario.model_head()
        facts = (
            f"all-MiniLM-L6-v2, layer {head.layer_number} of {head.n_layers}, head {head.head_number} of "
            f"{head.n_heads} ({head.d_model} = {head.n_heads} × {head.d_head})",
            f"x carries an always-1 input and each W the bias as its row {head.bias_row}: xW + b = [x, 1][W; b]",
        )
    intro = (
        "One attention head of a real model on your sentence: its WordPiece tokens, its own W_Q, W_K, W_V "
        "and biases, and every number the model's own, through lecture 6's steps."
    )
    return PageSummary("A real model's head", intro, "softmax(QKᵀ/√d_k) V", facts, (row,))


REAL_HEAD = LectureSteps(tables=tables, notebook=notebook, probe="weights", page=page, walkthrough=False)
"""The real-head lecture's handout and notebook (lecture 6's steps on the model's numbers)."""
