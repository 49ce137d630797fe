"""Three sentences a reviewer rendered, kept as test scenarios (their bundles' scenario.toml).

``rivers``: 3 tokens, two of them with equal embeddings, numbers in the cells; ``lighthouse``: 8
tokens, d_model 4 and d_k = d_v = 3; ``engineers``: 15 tokens, one of 20 characters, colours only.
The geometry tests of several scenes build them (``tests/test_*_geometry.py``).
"""

from __future__ import annotations

import tomllib
from collections.abc import Callable

from attention_math import Scenario
from attention_math.scenario import scenario_from_mapping

__all__ = ["ENGINEERS_ROWS", "REVIEWED", "REVIEWED_TOML"]

ENGINEERS_ROWS = """\
  [0.6, 0.6, 0.0],
  [-0.4, -0.9, -0.2],
  [-0.2, -0.9, -0.9],
  [1.0, 0.3, -0.5],
  [-0.1, 0.9, 0.8],
  [0.7, -0.2, 0.0],
  [0.4, -0.9, 0.1],
  [-0.5, 0.8, -0.9],
  [0.4, 0.7, -0.5],
  [0.8, 0.7, -1.0],
  [0.4, -1.0, 0.0],
  [-0.1, -0.6, -0.4],
  [0.6, -0.4, -0.7],
  [0.4, -0.1, 0.6],
  [-0.5, -0.4, 0.6],
"""
"""The embeddings of ``engineers``' 15 tokens, a row a line of TOML (a longer sentence may start with them)."""

REVIEWED_TOML: dict[str, str] = {
    "rivers": """
title = "Rivers carve canyons"
tokens = ["Rivers", "carve", "canyons"]
embeddings = [
  [-0.7, 0.0, 0.2],
  [-0.9, -0.7, 0.9],
  [-0.9, -0.7, 0.9],
]
w_query = [
  [0.2, -0.3],
  [0.0, 0.3],
  [-0.4, -0.7],
]
w_key = [
  [0.6, 0.3],
  [0.0, 0.6],
  [0.1, 1.0],
]
w_value = [
  [-0.6, 0.1],
  [0.0, -0.3],
  [0.2, -0.5],
]
query = 3
precision = 2
scaled = true
""",
    "lighthouse": """
title = "Every quiet lighthouse keeper remembers distant winter storms"
tokens = ["Every", "quiet", "lighthouse", "keeper", "remembers", "distant", "winter", "storms"]
embeddings = [
  [0.3, 0.8, 0.6, -0.5],
  [-0.4, 0.7, -1.0, 0.6],
  [0.6, -0.1, -0.4, -0.4],
  [-0.5, -0.1, 0.0, 0.1],
  [1.0, 0.6, 0.2, 1.0],
  [-0.6, -0.7, 0.2, -0.9],
  [-0.9, 0.0, -0.1, 0.8],
  [0.3, 0.0, 0.0, -0.5],
]
w_query = [
  [-1.0, -0.6, 0.4],
  [-0.6, -0.3, -1.0],
  [0.7, -0.7, -0.5],
  [0.8, 0.0, 0.7],
]
w_key = [
  [0.3, 0.5, -0.8],
  [0.1, 0.0, 0.7],
  [-0.3, 0.2, -0.9],
  [-0.2, -0.4, -0.7],
]
w_value = [
  [0.6, -0.2, 1.0],
  [0.2, 0.2, 0.3],
  [0.4, -0.7, -0.1],
  [-0.5, -0.2, -0.8],
]
query = 4
precision = 2
scaled = true
""",
    "engineers": """
title = "Careful internationalisation of software (15 tokens)"
tokens = [
  "Careful", "internationalisation", "of", "software", "requires", "patient", "engineers", "who",
  "understand", "thousands", "of", "different", "writing", "systems", "worldwide",
]
embeddings = [
""" + ENGINEERS_ROWS + """]
w_query = [
  [0.0, 0.0],
  [-0.5, -1.0],
  [0.9, -0.8],
]
w_key = [
  [0.7, -0.3],
  [0.9, -0.2],
  [0.9, 0.1],
]
w_value = [
  [-0.5, 0.5],
  [0.3, 0.4],
  [-0.1, -0.6],
]
query = 7
precision = 2
scaled = true
""",
}

"""Each sentence as its scenario file reads."""


def _from(source: str) -> Callable[[], Scenario]:
    return lambda: scenario_from_mapping(tomllib.loads(source))


REVIEWED: dict[str, Callable[[], Scenario]] = {name: _from(source) for name, source in REVIEWED_TOML.items()}
"""Each sentence's scenario, made when called."""
