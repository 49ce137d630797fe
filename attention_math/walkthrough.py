"""The by-hand walkthrough of one query: every number a lecturer writes on the board.

Tokens count from 1 here, as on slides. Numbers are written by
:func:`attention_math.format_number` at the scenario's precision, with an ASCII ``-``: the
walkthrough (and the handout's ``walkthrough.md``) is text to copy numbers from into Python,
a spreadsheet or a CSV, where U+2212 is not a minus sign. The scenes draw a true minus.
When the scenario is :attr:`~attention_math.Scenario.rounded`, the walkthrough says so once.
A multi-head scenario's walkthrough has each head's, then the heads joined and ``× W_O``.
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

    A multi-head scenario's data has ``heads`` (each head's data, as a one-head scenario's),
    ``w_out``, ``concat`` and ``output``, and the query's rows of the last two.

    Examples
    --------
    >>> from attention_math import preset
    >>> data = walkthrough_data(preset("dog-chased-ball"))
    >>> data["query"]["token"], data["query"]["number"], round(data["query"]["weights"][4], 2)
    ('ball', 5, 0.31)
    >>> data["precision"], data["rounded"]
    (2, False)
    >>> two = walkthrough_data(preset("two-heads"))
    >>> len(two["heads"]), [round(w, 2) for w in two["heads"][1]["query"]["weights"]]
    (2, [0.2, 0.19, 0.31, 0.18, 0.12])
    """
    if scenario.w_out is not None:
        return _multi_head_data(scenario)
    trace = scenario.trace()
    step = scenario.query_step()
    return {
        "title": scenario.title,
        "tokens": list(scenario.tokens),
        "d_k": trace.d_k,
        "scaled": trace.scaled,
        "precision": scenario.precision,
        "rounded": scenario.rounded,
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


def _multi_head_data(scenario: Scenario) -> dict[str, Any]:
    trace = scenario.multi_head_trace()
    return {
        "title": scenario.title,
        "tokens": list(scenario.tokens),
        "precision": scenario.precision,
        "rounded": scenario.rounded,
        "heads": [walkthrough_data(head) for head in scenario.heads],
        "w_out": trace.w_out.tolist(),
        "concat": trace.concat.tolist(),
        "output": trace.output.tolist(),
        "query": {
            "number": scenario.query + 1,
            "token": scenario.query_token,
            "concat": trace.concat[scenario.query].tolist(),
            "output": trace.output[scenario.query].tolist(),
        },
    }


class _Writer:
    """Aligned tables and headings, in plain text or Markdown."""

    def __init__(self, markdown: bool, precision: int) -> None:
        self.markdown = markdown
        self.precision = precision
        self.depth = 0  # 1 inside a head of a multi-head walkthrough: its sections one level down
        self.lines: list[str] = []

    def num(self, value: float, precision: int | None = None) -> str:
        """``value`` at the scenario's precision (or ``precision``), with an ASCII minus."""
        return format_number(value, self.precision if precision is None else precision, minus="-")

    def factor(self, value: float) -> str:
        """:meth:`num` after an operator: in parentheses when negative, 0.77×(-0.46) + (-1.07)×0.5."""
        shown = self.num(value)
        return f"({shown})" if shown.startswith("-") else shown

    def heading(self, text: str, *, top: bool = False) -> None:
        """A section heading; ``top`` for a head of a multi-head walkthrough (one level up)."""
        if self.lines:
            self.lines.append("")
        if self.markdown:
            self.lines.append("#" * (2 if top else 2 + self.depth) + f" {text}")
            self.lines.append("")
        else:
            self.lines.append(text)
            self.lines.append(("=" if top else "-") * len(text))

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
    >>> print(format_walkthrough(preset("your-journey")).splitlines()[4][:66])
    Numbers are rounded to 4 decimals (products of the inputs have 6):
    """
    if fmt == "json":
        return json.dumps(walkthrough_data(scenario), indent=2, ensure_ascii=False)
    if fmt not in FORMATS:
        raise ValueError(f"format: expected one of {', '.join(FORMATS)}, got {fmt!r}")
    w = _Writer(markdown=fmt == "markdown", precision=scenario.precision)
    if scenario.w_out is not None:
        _multi_head(w, scenario)
        return "\n".join(w.lines) + "\n"
    step = scenario.query_step()
    _title(w, f"{scenario.title}: the context vector for {scenario.query_token!r} (token {step.index + 1})")
    w.lines.append(
        "Q = X W_Q, K = X W_K, V = X W_V; weights = softmax(Q Kᵀ / √d_k) row by row; "
        "Z = weights V. Tokens count from 1."
    )
    _rounded_note(w, scenario)
    _matrices(w, scenario)
    _one_head(w, scenario, step)
    return "\n".join(w.lines) + "\n"


def _title(w: _Writer, heading: str) -> None:
    w.lines.append(f"# {heading}" if w.markdown else heading)
    w.lines.append("")


def _rounded_note(w: _Writer, scenario: Scenario) -> None:
    """Say once that the numbers are rounded, when they are (see ``Scenario.rounded``)."""
    if scenario.rounded:
        w.lines.append("")
        w.lines.append(
            f"Numbers are rounded to {scenario.precision} decimal{'' if scenario.precision == 1 else 's'} "
            "(products of the inputs have "
            f"{scenario.exact_decimals}): a sum of shown numbers may differ from the shown total in the last digit."
        )


def _one_head(w: _Writer, scenario: Scenario, step: QueryStep) -> None:
    """From the weight matrices to z: the projections, scores, softmax and weighted sum."""
    _projections(w, scenario)
    _scores(w, scenario, step)
    _softmax(w, scenario, step)
    _context(w, scenario, step)


def _multi_head(w: _Writer, scenario: Scenario) -> None:
    """Each head's walkthrough (X once, at the top), then the heads joined and times W_O."""
    token = scenario.query + 1
    _title(w, f"{scenario.title}: the multi-head output for {scenario.query_token!r} (token {token})")
    w.lines.append(
        "Each head h: Q = X W_Q^h, K = X W_K^h, V = X W_V^h, Z^h = softmax(Q Kᵀ / √d_k) V; then "
        "concat = [Z^1 … Z^h] row by row, and output = concat W_O. Tokens count from 1."
    )
    _rounded_note(w, scenario)
    trace = scenario.multi_head_trace()
    w.matrix(f"X, the input embeddings ({scenario.n_tokens} × {scenario.d_in})", trace.heads[0].embeddings,
             _labels(scenario.tokens), "x")
    for number, head in enumerate(scenario.heads, start=1):
        w.heading(f"Head {number}", top=True)
        w.depth = 1
        _weights(w, head)
        _one_head(w, head, head.query_step())
        w.depth = 0
    _joined(w, scenario)


def _matrices(w: _Writer, scenario: Scenario) -> None:
    """X and the three weight matrices."""
    trace = scenario.trace()
    w.matrix(f"X, the input embeddings ({trace.n_tokens} × {scenario.d_in})", trace.embeddings,
             _labels(scenario.tokens), "x")
    _weights(w, scenario)


def _weights(w: _Writer, scenario: Scenario) -> None:
    """W_Q, W_K and W_V."""
    trace = scenario.trace()
    rows = [f"row {d + 1}" for d in range(scenario.d_in)]
    for name, matrix in (("W_Q", trace.w_query), ("W_K", trace.w_key), ("W_V", trace.w_value)):
        w.matrix(f"{name} ({matrix.shape[0]} × {matrix.shape[1]})", matrix, rows, "col ")


def _projections(w: _Writer, scenario: Scenario) -> None:
    """Q, K and V."""
    trace = scenario.trace()
    labels = _labels(scenario.tokens)
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
        factors = " + ".join(f"{w.factor(step.query[m]) if m else w.num(step.query[m])}×{w.factor(step.keys[j, m])}"
                             for m in range(step.d_k))
        terms = " + ".join(w.factor(p) if m else w.num(p) for m, p in enumerate(step.products[j]))
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


def _joined(w: _Writer, scenario: Scenario) -> None:
    """concat = [z of each head], W_O, and the query's output term by term."""
    trace = scenario.multi_head_trace()
    labels = _labels(scenario.tokens)
    d_v = scenario.d_v
    w.heading("Join the heads", top=True)
    w.depth = 1
    columns = [f"h{h + 1}.{c + 1}" for h in range(scenario.n_heads) for c in range(d_v)]
    w.heading(f"concat = [Z^1 … Z^{scenario.n_heads}] ({trace.concat.shape[0]} × {trace.concat.shape[1]})")
    w.table(["", *columns], [[label, *map(w.num, row)] for label, row in zip(labels, trace.concat, strict=True)])
    w.matrix(f"W_O ({trace.w_out.shape[0]} × {trace.w_out.shape[1]})", trace.w_out, columns, "col ")
    w.matrix(f"output = concat W_O ({trace.output.shape[0]} × {trace.output.shape[1]})", trace.output, labels, "o")
    i = scenario.query
    w.heading(f"o{i + 1} = concat{i + 1} W_O, term by term")
    for c in range(trace.output.shape[1]):
        pairs = enumerate(zip(trace.concat[i], trace.w_out[:, c], strict=True))
        terms = " + ".join(f"{w.factor(a) if m else w.num(a)}×{w.factor(b)}" for m, (a, b) in pairs)
        w.line(f"o{i + 1}[{c + 1}] = {terms} = {w.num(trace.output[i, c])}")
    w.depth = 0
