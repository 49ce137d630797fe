"""What the property tests of ``attention_math`` share: how many examples a property draws, and the numbers it draws."""

from __future__ import annotations

from hypothesis import settings
from hypothesis import strategies as st

__all__ = ["FAST", "MODERATE"]

FAST = settings(max_examples=80, deadline=None)
"""80 examples a property, no deadline (a shared machine is slow at times)."""

MODERATE = st.floats(min_value=-5.0, max_value=5.0, allow_nan=False, allow_infinity=False)
"""A finite number in [−5, 5]: a matrix entry whose products stay far from overflow."""
