"""Arithmetic on numbers as they are shown: does what the screen says add up?

A lecture writes ``0.73×0.72 + 1.70×1.39 = 0.53 + 2.36 = 2.89``. Every number there is rounded to
the scenario's precision, and a student who redoes the sum with the shown numbers must get the
shown result. :func:`adds_up` says whether they do, so a scene writes ``=`` only where it is
true and ``≈`` (with a word that the numbers are rounded) where rounding shows.
"""

from __future__ import annotations

from collections.abc import Sequence
from decimal import ROUND_HALF_UP, Decimal
from typing import Literal, SupportsFloat

from .formatting import format_number

__all__ = ["adds_up", "shown_value"]

Operation = Literal["sum", "product", "dot"]


def shown_value(value: SupportsFloat, precision: int) -> Decimal:
    """The number a viewer reads: ``value`` rounded to ``precision`` decimals, exactly.

    >>> shown_value(0.7 * 0.72, 2), shown_value(-0.004, 2)
    (Decimal('0.50'), Decimal('0.00'))
    """
    return Decimal(format_number(value, precision, minus="-"))


def adds_up(terms: Sequence[SupportsFloat], result: SupportsFloat, precision: int, *, op: Operation = "sum") -> bool:
    """Do the terms, as shown, combine into the result as shown?

    Each number is rounded to ``precision`` decimals as the screen shows it; the shown terms are
    added (exactly) or multiplied (exactly, then rounded to ``precision`` half up, as a student
    rounds by hand), and compared with the shown result.

    Parameters
    ----------
    terms
        The numbers written left of ``=``: the addends of a sum, the factors of a product, or
        the factors of a dot product in pairs (``a1, b1, a2, b2, …`` for ``a1×b1 + a2×b2 + …``).
    result
        The number written right of ``=``.
    precision
        Decimals shown.
    op
        ``"sum"``, ``"product"`` or ``"dot"``.

    Returns
    -------
    bool
        True when a student who redoes the arithmetic with the shown numbers gets the shown result.

    Examples
    --------
    Projection's hand entry of the lecture, q5[0] = 0.7×0.7 + 0.6×0.1 + 0.9×0.2:

    >>> adds_up([0.49, 0.06, 0.18], 0.73, 2)
    True

    The same at one decimal: 0.5 + 0.1 + 0.2 is 0.8, but the true 0.73 shows as 0.7.

    >>> adds_up([0.49, 0.06, 0.18], 0.73, 1)
    False
    >>> adds_up([0.55, 0.2961], 0.55 * 0.2961, 2, op="product")  # 0.55 × 0.30 = 0.165, not 0.16
    False
    >>> adds_up([0.55, 0.2961], 0.55 * 0.2961, 4, op="product")
    True
    >>> adds_up([0.73, 0.72, 1.70, 1.39], 2.8886, 2, op="dot")  # 0.5256 + 2.363 = 2.8886
    True
    """
    shown = [shown_value(term, precision) for term in terms]
    if op == "sum":
        combined = sum(shown, Decimal(0))
    elif op == "product":
        combined = Decimal(1)
        for factor in shown:
            combined *= factor
    elif op == "dot":
        if len(shown) % 2:
            raise ValueError(f"terms: a dot product needs factors in pairs, got {len(shown)}")
        combined = sum((a * b for a, b in zip(shown[::2], shown[1::2], strict=True)), Decimal(0))
    else:
        raise ValueError(f"op: expected 'sum', 'product' or 'dot', got {op!r}")
    quantum = Decimal(1).scaleb(-precision)
    return combined.quantize(quantum, rounding=ROUND_HALF_UP) == shown_value(result, precision)
