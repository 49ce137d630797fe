"""What a lecture's handout and notebook are made of: its steps as tables, and its notebook's cells.

Each lecture says (in its folder's ``handout.py``, named by its ``scenes.registry.Lecture``) which matrices its handout
holds, as :class:`Table`, and which cells its notebook runs, as :class:`NotebookCells`; the
handout (:mod:`~attention_explainer.outputs.handout`), the notebook
(:mod:`~attention_explainer.outputs.notebook`) and the page write whatever a lecture lists, the
same way for every lecture. A table names the notebook's expression that computes the same
matrix, so the notebook's last cell checks every table of the handout.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from attention_math import Scenario, format_number

__all__ = [
    "LectureSteps", "NotebookCells", "PageSummary", "QueryRow", "Table", "matrix_literal", "numbered", "stack_literal",
    "table",
]


@dataclass(frozen=True, eq=False)
class Table:
    """One step of a lecture as a handout matrix (``<stem>.csv`` and ``<stem>.tex``).

    Attributes
    ----------
    stem
        The file name without extension, e.g. ``"weights"``; also the check cell's name for it.
    caption
        What it is, in the lecture's words (plain text: it is escaped wherever it goes).
    rows, columns
        The row labels (the tokens, or ``row 1`` …) and the column names.
    values
        The numbers, a read-only float64 matrix of ``len(rows) × len(columns)``; ``-inf`` where a
        masked score is.
    variable
        The notebook's expression whose value is this matrix: the check cell compares it with
        the CSV (a notebook variable, or e.g. ``mask.astype(float)``).
    token_rows
        Whether the rows are the tokens: the check cell compares the CSV's row labels with them.
    whole
        A matrix of whole numbers (a mask: 1 or 0), written without decimals.
    """

    stem: str
    caption: str
    rows: tuple[str, ...]
    columns: tuple[str, ...]
    values: npt.NDArray[np.float64]
    variable: str
    token_rows: bool = True
    whole: bool = False

    def csv_number(self, value: float) -> str:
        """A value as the CSV writes it: ``repr`` (it reads back to the same float64, ``-inf``
        included), or the whole number of a mask."""
        return str(int(value)) if self.whole else repr(float(value))

    def shown(self, value: float, precision: int, minus: str = "−") -> str:
        """A value as the page and the LaTeX table print it: at the lecture's precision."""
        return str(int(value)) if self.whole else format_number(value, precision, minus=minus)


def table(
    stem: str,
    caption: str,
    rows: Sequence[str],
    columns: Sequence[str],
    values: npt.ArrayLike,
    variable: str | None = None,
    *,
    token_rows: bool = True,
    whole: bool = False,
) -> Table:
    """A :class:`Table` of a copy of ``values`` (booleans as 1 and 0), its notebook variable the
    stem unless given.

    >>> t = table("mask", "the mask", ["a", "b"], ["a", "b"], [[False, True], [False, False]],
    ...           "mask.astype(float)", whole=True)
    >>> t.values, t.csv_number(t.values[0, 1]), t.shown(t.values[0, 1], 2)
    (array([[0., 1.],
           [0., 0.]]), '1', '1')
    """
    matrix = np.array(values, dtype=np.float64)
    if matrix.shape != (len(rows), len(columns)):
        raise ValueError(f"{stem}: {matrix.shape} numbers for {len(rows)} rows and {len(columns)} columns")
    matrix.setflags(write=False)
    return Table(stem, caption, tuple(rows), tuple(columns), matrix, variable or stem, token_rows, whole)


def numbered(prefix: str, count: int, start: int = 1) -> tuple[str, ...]:
    """Column names ``prefix`` numbered from 1 (the lecture counts from 1).

    >>> numbered("q", 3)
    ('q1', 'q2', 'q3')
    """
    return tuple(f"{prefix}{j}" for j in range(start, start + count))


@dataclass(frozen=True)
class NotebookCells:
    """A lecture's notebook, but for the cells every lecture shares (the helpers and the check).

    Attributes
    ----------
    intro
        The first Markdown cell: a heading with the title (through
        :func:`attention_explainer.escape.markdown_literal`) and what the notebook does.
    data
        The code cell of the scenario as data: the title and tokens as ``repr`` literals, the
        matrices to the last bit, and their printout.
    steps
        ``(markdown, code)`` for each step of the lecture, in order.
    pytorch
        The last Markdown cell: the same steps in PyTorch, not run.
    """

    intro: str
    data: str
    steps: tuple[tuple[str, str], ...]
    pytorch: str


@dataclass(frozen=True, eq=False)
class QueryRow:
    """One row of weights the page shows at its top: the query's weight on each key, and the vector
    they make.

    Attributes
    ----------
    heading
        What the row is, in the lecture's words (plain text: the page escapes it).
    weights
        One weight per key (the scenario's tokens), a read-only float64 vector.
    masked
        For each key, whether the mask hides it from the query (its weight is 0 because it is masked).
    vector
        ``(name, values)``: the vector the weights make, e.g. ``("z3", context)``.
    """

    heading: str
    weights: npt.NDArray[np.float64]
    masked: tuple[bool, ...]
    vector: tuple[str, npt.NDArray[np.float64]]


@dataclass(frozen=True, eq=False)
class PageSummary:
    """What the lecture page says at its top, for one scenario: the lecture's own words and numbers.

    Attributes
    ----------
    lecture
        The lecture's name as a heading, e.g. ``"Lecture 7: masked self-attention"``.
    intro
        A sentence or two: what the lecture explains.
    formula
        The lecture's formula in plain text (``softmax(mask(QKᵀ/√d_k)) V``).
    facts
        Lines about the scenario's sizes that are the lecture's own (heads, W_O), after the common ones.
    rows
        The query's rows of weights, each with its vector (one per head for multi-head attention).
    vectors
        Further vectors of the query, ``(name, values)`` (the heads joined, the output).
    sizes, scaling
        The common lines' sizes and scaling, when the lecture's are not the scenario's ``W_Q``, ``W_K`` and ``W_V``
        (``"d_in = 3, d_h = 2, d_R = 2"``, ``"scaled by √(d_h + d_R)"``); empty: ``d_in``, ``d_k``, ``d_v`` and
        ``√d_k``.
    """

    lecture: str
    intro: str
    formula: str
    facts: tuple[str, ...]
    rows: tuple[QueryRow, ...]
    vectors: tuple[tuple[str, npt.NDArray[np.float64]], ...] = ()
    sizes: str = ""
    scaling: str = ""


@dataclass(frozen=True)
class LectureSteps:
    """One lecture's handout and notebook, as a lecture's folder declares it (``scenes/<folder>/handout.py``).

    Attributes
    ----------
    tables
        The handout's matrices for a scenario, in the lecture's order.
    notebook
        The notebook's own cells for a scenario.
    probe
        A table's stem: the check cell reads the CSV files from the notebook's folder when that
        one's CSV is there, else from ``handout/`` below it.
    page
        The lecture page's top for a scenario: the lecture's name, intro, formula and the query's numbers.
    walkthrough
        Whether the handout has ``walkthrough.md``, one query worked by hand
        (:func:`attention_math.format_walkthrough`, which works unmasked attention).
    """

    tables: Callable[[Scenario], tuple[Table, ...]]
    notebook: Callable[[Scenario], NotebookCells]
    probe: str
    page: Callable[[Scenario], PageSummary]
    walkthrough: bool = True


def matrix_literal(matrix: Any) -> str:
    """A float64 matrix as a numpy literal, one row per line, every value to the last bit.

    >>> print(matrix_literal([[0.1, 2.0]]))
    np.array([
        [0.1, 2.0],
    ])
    """
    rows = [f"    [{', '.join(repr(float(v)) for v in row)}]," for row in np.asarray(matrix)]
    return "np.array([\n" + "\n".join(rows) + "\n])"


def stack_literal(stack: Any) -> str:
    """Matrices of one shape (one per head) as a numpy literal of ``heads × rows × columns``.

    >>> print(stack_literal([[[1.0]], [[0.5]]]))
    np.array([
        [  # head 1
            [1.0],
        ],
        [  # head 2
            [0.5],
        ],
    ])
    """
    blocks = []
    for number, matrix in enumerate(np.asarray(stack), start=1):
        rows = "\n".join(f"        [{', '.join(repr(float(v)) for v in row)}]," for row in matrix)
        blocks.append(f"    [  # head {number}\n{rows}\n    ],")
    return "np.array([\n" + "\n".join(blocks) + "\n])"
