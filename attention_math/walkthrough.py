"""The by-hand walkthrough of one query: every number a lecturer writes on the board.

Tokens count from 1 here, as on slides. Numbers are written by
:func:`attention_math.format_number` at the scenario's precision, with an ASCII ``-``: the
walkthrough (and the handout's ``walkthrough.md``) is text to copy numbers from into Python,
a spreadsheet or a CSV, where U+2212 is not a minus sign. The scenes draw a true minus.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np

from ._core import FloatArray, QueryStep
from .formatting import format_number
from .scenario import Scenario

__all__ = ["FORMATS", "format_walkthrough", "walkthrough_data"]

Format = Literal["text", "json", "markdown"]
FORMATS: tuple[Format, ...] = ("text", "json", "markdown")


def walkthrough_data(scenario: Scenario) -> dict[str, Any]:
    """Every number of the scenario's walkthrough, full precision, as plain Python data.

    Examples
    --------
    >>> from attention_math import preset
    >>> data = walkthrough_data(preset("dog-chased-ball"))
    >>> data["query"]["token"], data["query"]["number"], round(data["query"]["weights"][4], 2)
    ('ball', 5, 0.31)
    """
    trace = scenario.trace()
    step = scenario.query_step()
    return {
        "title": scenario.title,
        "tokens": list(scenario.tokens),
        "d_k": trace.d_k,
        "scaled": trace.scaled,
        "matrices": {
            name: getattr(trace, name).tolist()
            for name in (
                "embeddings", "w_query", "w_key", "w_value", "queries", "keys", "values",
                "scores", "scaled_scores", "weights", "context",
            )
        },
        "query": {
            "number": step.index + 1,
            "token": scenario.query_token,
            "query": step.query.tolist(),
            "products": step.products.tolist(),
            "scores": step.scores.tolist(),
            "sqrt_d_k": step.sqrt_d_k,
            "scaled_scores": step.scaled_scores.tolist(),
            "max_score": step.max_score,
            "exps": step.exps.tolist(),
            "exp_sum": step.exp_sum,
            "weights": step.weights.tolist(),
            "weighted_values": step.weighted_values.tolist(),
            "context": step.context.tolist(),
        },
    }


class _Writer:
    """Aligned tables and headings, in plain text or Markdown."""

    def __init__(self, markdown: bool, precision: int) -> None:
        self.markdown = markdown
        self.precision = precision
        self.lines: list[str] = []

    def num(self, value: float, precision: int | None = None) -> str:
        """``value`` at the scenario's precision (or ``precision``), with an ASCII minus."""
        return format_number(value, self.precision if precision is None else precision, minus="-")

    def heading(self, text: str) -> None:
        if self.lines:
            self.lines.append("")
        if self.markdown:
            self.lines.append(f"## {text}")
            self.lines.append("")
        else:
            self.lines.append(text)
            self.lines.append("-" * len(text))

    def line(self, text: str) -> None:
        self.lines.append(f"- {text}" if self.markdown else text)

    def table(self, header: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
        if self.markdown:
            escape = _markdown_cell
            self.lines.append("| " + " | ".join(escape(h) for h in header) + " |")
            self.lines.append("|" + "|".join(":---" if i == 0 else "---:" for i in range(len(header))) + "|")
            for row in rows:
                self.lines.append("| " + " | ".join(escape(c) for c in row) + " |")
            return
        widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
        for row in [header, *rows]:
            cells = [
                str(c).ljust(w) if i == 0 else str(c).rjust(w)
                for i, (c, w) in enumerate(zip(row, widths, strict=True))
            ]
            self.lines.append("  ".join(cells).rstrip())

    def matrix(self, title: str, matrix: FloatArray, row_labels: Sequence[str], column: str) -> None:
        self.heading(title)
        header = ["", *(f"{column}{c + 1}" for c in range(matrix.shape[1]))]
        self.table(header, [[label, *map(self.num, row)] for label, row in zip(row_labels, matrix, strict=True)])


def _markdown_cell(text: str) -> str:
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def _labels(tokens: Sequence[str]) -> list[str]:
    return [f"{i} {token}" for i, token in enumerate(tokens, start=1)]


def format_walkthrough(scenario: Scenario, fmt: Format = "text") -> str:
    """The walkthrough of the scenario's query as ``text`` tables, ``markdown`` or ``json``.

    Examples
    --------
    >>> from attention_math import preset
    >>> text = format_walkthrough(preset("dog-chased-ball"))
    >>> "q5 · k1 (The) = 0.73×0.72 + 1.70×1.39 = 0.53 + 2.36 = 2.89" in text
    True
    >>> print(text.splitlines()[0])
    The dog chased the ball: the context vector for 'ball' (token 5)
    """
    if fmt == "json":
        return json.dumps(walkthrough_data(scenario), indent=2, ensure_ascii=False)
    if fmt not in FORMATS:
        raise ValueError(f"format: expected one of {', '.join(FORMATS)}, got {fmt!r}")
    w = _Writer(markdown=fmt == "markdown", precision=scenario.precision)
    step = scenario.query_step()
    heading = f"{scenario.title}: the context vector for {scenario.query_token!r} (token {step.index + 1})"
    w.lines.append(f"# {heading}" if w.markdown else heading)
    w.lines.append("")
    w.lines.append(
        "Q = X W_Q, K = X W_K, V = X W_V; weights = softmax(Q Kᵀ / √d_k) row by row; "
        "Z = weights V. Tokens count from 1."
    )
    _matrices(w, scenario)
    _scores(w, scenario, step)
    _softmax(w, scenario, step)
    _context(w, scenario, step)
    return "\n".join(w.lines) + "\n"


def _matrices(w: _Writer, scenario: Scenario) -> None:
    """X, the three weight matrices, and Q, K, V."""
    trace = scenario.trace()
    labels = _labels(scenario.tokens)
    w.matrix(f"X, the input embeddings ({trace.n_tokens} × {scenario.d_in})", trace.embeddings, labels, "x")
    rows = [f"row {d + 1}" for d in range(scenario.d_in)]
    for name, matrix in (("W_Q", trace.w_query), ("W_K", trace.w_key), ("W_V", trace.w_value)):
        w.matrix(f"{name} ({matrix.shape[0]} × {matrix.shape[1]})", matrix, rows, "col ")
    for name, matrix, column in (
        ("Q = X W_Q, the queries", trace.queries, "q"),
        ("K = X W_K, the keys", trace.keys, "k"),
        ("V = X W_V, the values", trace.values, "v"),
    ):
        w.matrix(f"{name} ({matrix.shape[0]} × {matrix.shape[1]})", matrix, labels, column)


def _scores(w: _Writer, scenario: Scenario, step: QueryStep) -> None:
    """Each score of the query, term by term."""
    q = f"q{step.index + 1}"
    w.heading(f"Scores: {q} · k_j, term by term")
    for j, token in enumerate(scenario.tokens):
        factors = " + ".join(f"{w.num(step.query[m])}×{w.num(step.keys[j, m])}" for m in range(step.d_k))
        terms = " + ".join(w.num(p) for p in step.products[j])
        w.line(f"{q} · k{j + 1} ({token}) = {factors} = {terms} = {w.num(step.scores[j])}")


def _softmax(w: _Writer, scenario: Scenario, step: QueryStep) -> None:
    """The scaling and the stable softmax, key by key (exps at 3 decimals or more)."""
    exp_precision = max(scenario.precision, 3)
    rows = [
        [
            label,
            w.num(step.scores[j]),
            w.num(step.scaled_scores[j]),
            w.num(step.scaled_scores[j] - step.max_score),
            w.num(step.exps[j], exp_precision),
            w.num(step.weights[j]),
        ]
        for j, label in enumerate(_labels(scenario.tokens))
    ]
    divisor = f"√{step.d_k} = {w.num(step.sqrt_d_k)}" if scenario.scaled else "1 (unscaled)"
    w.heading(f"Scale by {divisor}, then softmax")
    w.table(["key", "score", "÷√d_k", "− max", "exp(· − max)", "weight"], rows)
    w.line(
        f"Stable softmax: subtract the largest scaled score ({w.num(step.max_score)}) before exp; "
        f"the exps sum to {w.num(step.exp_sum, exp_precision)}, "
        f"and each weight is its exp over that sum. The weights sum to {w.num(float(np.sum(step.weights)))}."
    )


def _context(w: _Writer, scenario: Scenario, step: QueryStep) -> None:
    """z as the weighted sum of the values, term by term."""
    z = f"z{step.index + 1}"
    n = scenario.n_tokens
    w.heading(f"{z} = Σ_j w_j v_j, the context vector")
    w.line(f"{z} = " + " + ".join(f"{w.num(step.weights[j])}·v{j + 1}" for j in range(n)))
    w.table(
        ["term", *(f"dim {d + 1}" for d in range(step.context.shape[0]))],
        [
            [f"{w.num(step.weights[j])} × v{j + 1} ({scenario.tokens[j]})", *map(w.num, step.weighted_values[j])]
            for j in range(n)
        ]
        + [[f"= {z}", *map(w.num, step.context)]],
    )
