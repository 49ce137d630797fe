"""attention_math.format_number: the one number formatter of scenes, walkthrough and handout."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attention_math import MINUS, format_number, format_walkthrough, preset


@settings(max_examples=300, deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False, min_value=-1e12, max_value=1e12), st.integers(0, 6))
def test_fixed_decimals_a_true_minus_and_never_a_signed_zero(value: float, precision: int) -> None:
    shown = format_number(value, precision)
    ascii_ = format_number(value, precision, minus="-")
    assert ascii_ == shown.replace(MINUS, "-")
    assert "-" not in shown and shown.count(MINUS) <= 1
    python = f"{value:.{precision}f}"
    if float(python) == 0:
        assert ascii_ == python.lstrip("-")  # "0.00", never "-0.00"
    else:
        assert ascii_ == python
        assert shown.startswith(MINUS) == (value < 0)
    decimals = shown.partition(".")[2]
    assert len(decimals) == precision
    # what is shown is the value to half a unit of the last decimal (and the float's own error)
    assert abs(float(ascii_) - value) <= 0.5 * 10**-precision + 1e-9 * abs(value)


def test_the_cases_people_ask_about() -> None:
    assert format_number(-0.004, 2) == "0.00"
    assert format_number(-0.005, 2) == "−0.01"  # -0.005 is -0.005000000000000000104 in binary
    assert format_number(2.675, 2) == "2.67"  # 2.675 is 2.67499999999999982236431605997495353221893310546875
    assert format_number(-math.inf, 2) == "−∞"
    assert format_number(math.inf, 3) == "∞"
    assert format_number(math.nan, 2) == "NaN"
    assert format_number(np.float64(-1.25), 1) == "−1.2"  # ties to even, on the exact binary value
    assert format_number(np.int64(-3), 0) == "−3"
    assert format_number(7, np.int64(2)) == "7.00"


@pytest.mark.parametrize("precision", [-1, 1.5, True, "2", None])
def test_a_bad_precision_is_refused_naming_it(precision: object) -> None:
    with pytest.raises(ValueError, match=r"^precision: expected a whole number of 0 or more"):
        format_number(1.0, precision)  # type: ignore[arg-type]


def test_the_walkthrough_writes_its_numbers_with_it_and_an_ascii_minus() -> None:
    scenario = preset("dog-chased-ball")
    text = format_walkthrough(scenario)
    step = scenario.query_step()
    negative = format_number(step.scaled_scores[0] - step.max_score, 2, minus="-")
    assert negative.startswith("-")
    assert negative in text
    assert MINUS + "0" not in text and MINUS + "1" not in text  # "− max" in a heading is the only U+2212
    for value in step.weighted_values.flat:
        assert format_number(value, 2, minus="-") in text
