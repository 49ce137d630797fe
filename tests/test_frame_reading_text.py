"""What the read-back makes of Tesseract's text (no render, no Tesseract): a ``−∞`` read as letters counts as ``−∞``,
a number read in its place does not."""

from __future__ import annotations

import pytest
from frame_reading import NumberBox, found_in

from scenes.facts import Fact

MINUS_INFINITY = NumberBox((Fact("causal", "scaled_scores", (2, 3)),), ("−∞",), "−∞", (), (0, 0, 10, 10), True)


@pytest.mark.parametrize("read", ["—o", "— oo", "—0oo", "-co", "−∞"])
def test_a_minus_infinity_read_as_letters_is_minus_infinity(read: str) -> None:
    assert found_in(MINUS_INFINITY, read) == ("−∞",)


@pytest.mark.parametrize("read", ["-0.05", "—0", "0", "-0.0o"])
def test_a_number_in_the_place_of_minus_infinity_is_not_it(read: str) -> None:
    assert found_in(MINUS_INFINITY, read) != ("−∞",)


LONE_DIGIT = NumberBox((Fact("position", "query", (3,)),), ("4",), "z_{4}", (), (0, 0, 10, 10), True)


@pytest.mark.parametrize(("read", "found"), [("4,", "4"), ("·4.", "4"), ("4", "4"), ("il", ""), ("1", "1")])
def test_a_lone_digit_keeps_only_what_the_whitelist_would(read: str, found: str) -> None:
    assert found_in(LONE_DIGIT, read) == (found,)
