"""One check for every test of a bad input: a one-line :class:`attention_math.ScenarioError` naming the field."""

from __future__ import annotations

import warnings
from collections.abc import Callable

import pytest

from attention_math import ScenarioError

__all__ = ["assert_scenario_error"]


def assert_scenario_error(call: Callable[[], object], field: str, *words: str) -> str:
    """``call`` raises a one-line ScenarioError (a ValueError) that starts with ``field:`` and holds ``words``,
    and warns nothing on the way; returns the message."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ScenarioError) as info:
            call()
    assert isinstance(info.value, ValueError)
    message = str(info.value)
    assert message.startswith(f"{field}:"), message
    assert "\n" not in message
    for word in words:
        assert word in message, (word, message)
    return message
