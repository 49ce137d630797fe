"""The temperature lecture's handout, notebook and page top: lecture 6's matrices, then the query's weights
at each temperature (``softmax(s / τ)``)."""

from __future__ import annotations

from attention_explainer.outputs.steps import LectureSteps, NotebookCells, PageSummary, QueryRow, Table, table
from attention_math import Scenario
from attention_temperature.tempering import TEMPERATURES, temper
from scenes.self_attention.handout import data_cell, head_one_fact
from scenes.self_attention.handout import tables as lecture_six_tables

__all__ = ["TEMPERATURE", "notebook", "page", "tables"]


def tables(scenario: Scenario) -> tuple[Table, ...]:
    """Lecture 6's matrices, then the query's weights at each τ (a row per temperature)."""
    tempered = temper(scenario)
    rows = tuple(f"τ = {tau}" for tau in tempered.temperatures)
    return (
        *lecture_six_tables(scenario),
        table("tempered", "the query's weights softmax(s / τ), a row per temperature τ", rows, scenario.tokens,
              tempered.weights, token_rows=False),
    )


_STEP = (
    "## The query's weights at each temperature\n\nDivide the query's scaled scores by τ, then softmax: τ < 1 "
    "sharpens the weights, τ > 1 flattens them; the keys keep their order.",
    "Q, K = X @ W_Q, X @ W_K\n"
    "s = (Q @ K.T / np.sqrt(K.shape[1]) if SCALED else Q @ K.T)[QUERY]\n"
    "rows = []\n"
    "for tau in TEMPERATURES:\n"
    "    e = np.exp(s / tau - (s / tau).max())\n"
    "    rows.append(e / e.sum())\n"
    "tempered = np.array(rows)\n"
    'show("softmax(s / τ), a row per τ", tempered.T, TOKENS)',
)

_TORCH = """\
The same in PyTorch (not run here): `torch.softmax(scores / tau, dim=-1)`; language models sample their next
token from `softmax(logits / temperature)` the same way.
"""


def notebook(scenario: Scenario) -> NotebookCells:
    """The inputs as data, the temperatures as a constant, then the weights at each τ."""
    intro = ("# Softmax temperature\n\nThe query's scaled scores divided by τ before the softmax, for each τ, "
             "computed with numpy. The last cell checks the result against the handout's CSV files.")
    return NotebookCells(intro, data_cell(scenario, f"TEMPERATURES = {TEMPERATURES!r}"), (_STEP,), _TORCH)


def page(scenario: Scenario) -> PageSummary:
    """The page's top: the formula and the query's weights at each τ."""
    tempered = temper(scenario)
    q = scenario.query + 1
    rows = tuple(QueryRow(f"The weights of query {q} at τ = {tau}", weights, (False,) * scenario.n_tokens,
                          (f"s{q} / τ", tempered.scaled_scores / tau))
                 for tau, weights in zip(tempered.temperatures, tempered.weights, strict=True))
    intro = ("Divide the scores by a temperature τ before the softmax: below 1 the weights sharpen, above 1 they "
             "flatten, and the keys keep their order.")
    return PageSummary("A lecture of your own: softmax temperature", intro, "softmax(QKᵀ / (τ √d_k)) V",
                       head_one_fact(scenario), rows)


TEMPERATURE = LectureSteps(tables=tables, notebook=notebook, probe="tempered", page=page, walkthrough=False)
"""The temperature lecture's handout and notebook."""
