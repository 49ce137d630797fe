"""The one error type of :mod:`attention_math`."""

from __future__ import annotations

__all__ = ["ScenarioError"]


class ScenarioError(ValueError):
    """Invalid input to :mod:`attention_math`.

    The message names the offending field and says what was expected, in one line, so a
    command-line tool can print it as it is.

    Examples
    --------
    >>> from attention_math import preset
    >>> preset("no-such-preset")
    Traceback (most recent call last):
    ...
    attention_math._errors.ScenarioError: preset: unknown name 'no-such-preset'; expected one of dog-chased-ball, grouped-dog, latent-dog, learned, masked-dog, raw-dot-product, rope-dog, softmax-saturation, two-heads, your-journey
    """
