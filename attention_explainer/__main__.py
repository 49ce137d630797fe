"""``python -m attention_explainer`` is the ``attention-explainer`` command."""

from attention_explainer.cli import entry_point

entry_point()
