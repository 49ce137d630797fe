"""Numbers as people read them: fixed decimals, a real minus sign, never "−0.00".

One formatter serves the scenes (a true minus, U+2212), the walkthrough and the handout (an
ASCII ``-``, for numbers that are copied into code, spreadsheets and LaTeX).
"""

from __future__ import annotations

import math
import numbers
from typing import SupportsFloat

__all__ = ["MINUS", "format_number"]

MINUS = "\N{MINUS SIGN}"
"""U+2212, the minus sign of typeset mathematics (as wide as ``+``; a hyphen is shorter)."""


def format_number(value: SupportsFloat, precision: int, *, minus: str = MINUS) -> str:
    """``value`` with ``precision`` decimals, as shown on screen.

    Rounded as Python's ``format`` rounds the binary value (to nearest, ties to even on the
    exact binary number: 2.675 is 2.67499… in binary, so it shows as "2.67"). A value that
    rounds to zero shows without a sign ("0.00", never "−0.00", which reads as a mistake).
    ``-inf`` (a masked score) is "−∞", ``inf`` is "∞" and NaN is "NaN".

    Parameters
    ----------
    value
        A real number (a Python or numpy float or int).
    precision
        Decimals, 0 or more.
    minus
        The sign written before negative numbers: U+2212 by default, ``"-"`` for text meant
        to be pasted into code.

    Returns
    -------
    str
        The number as text.

    Raises
    ------
    ValueError
        If ``precision`` is not a whole number of 0 or more.

    Examples
    --------
    >>> format_number(-0.5, 2), format_number(-0.004, 2), format_number(-0.0, 0)
    ('−0.50', '0.00', '0')
    >>> format_number(2.675, 2), format_number(0.125, 2), format_number(2.5, 0)
    ('2.67', '0.12', '2')
    >>> format_number(float("-inf"), 2), format_number(-1.234, 1, minus="-")
    ('−∞', '-1.2')
    """
    if isinstance(precision, bool) or not isinstance(precision, numbers.Integral) or precision < 0:
        raise ValueError(f"precision: expected a whole number of 0 or more, got {precision!r}")
    number = float(value)
    if math.isnan(number):
        return "NaN"
    if math.isinf(number):
        return "∞" if number > 0 else f"{minus}∞"
    text = f"{number:.{int(precision)}f}"
    if not text.startswith("-"):
        return text
    return text[1:] if float(text) == 0 else minus + text[1:]
