"""The temperature lecture's number proof, read by the project's tests (``Lecture.checks``).

Every weight the scene shows is derived again here by a plain loop over the keys from the scenario's
own X, W_Q and W_K (never :func:`attention_temperature.tempering.temper`, never the scene's objects); a
weight stands in the column of its temperature and the row of its key. Two planted faults must fail.
"""

from __future__ import annotations

import importlib
import math
from types import SimpleNamespace
from typing import Any

from attention_math import Scenario, preset
from scenes.registry import LectureChecks, PlantedFault

__all__ = ["CHECKS"]

TEMPERATURES = (0.5, 1.0, 2.0)  # the lecture's, written again from its storyboard


def _plain(scenario: Scenario) -> SimpleNamespace:
    """softmax(s / τ) of the query's row, one key at a time."""
    x, wq, wk = scenario.embeddings, scenario.heads[0].w_query, scenario.heads[0].w_key
    q = scenario.query
    d_k = len(wq[0])
    query = [sum(x[q][a] * wq[a][c] for a in range(len(x[q]))) for c in range(d_k)]
    keys = [[sum(x[j][a] * wk[a][c] for a in range(len(x[j]))) for c in range(d_k)] for j in range(len(x))]
    scale = math.sqrt(d_k) if scenario.scaled else 1.0
    scores = [sum(qc * kc for qc, kc in zip(query, key, strict=True)) / scale for key in keys]
    weights = []
    for tau in TEMPERATURES:
        top = max(s / tau for s in scores)
        exps = [math.exp(s / tau - top) for s in scores]
        weights.append([e / sum(exps) for e in exps])
    return SimpleNamespace(temperatures=list(TEMPERATURES), weights=weights)


def _columns_swapped(monkeypatch: Any) -> None:
    """τ = 0.5's weights drawn in τ = 2's column and back (true numbers, under the other temperature)."""
    module = importlib.import_module("attention_temperature.temperature")
    column = module.Temperature._column

    def planted(self: Any, t: int, font: float, pitch: float, bars: float) -> Any:
        made = column(self, {0: 2, 2: 0}.get(t, t), font, pitch, bars)
        made.index = t
        return made

    monkeypatch.setattr(module.Temperature, "_column", planted)


def _no_temperature(monkeypatch: Any) -> None:
    """Every column shows the plain weights (τ ignored): softmax(s), not softmax(s / τ)."""
    module = importlib.import_module("attention_temperature.temperature")
    temper = module.temper

    def planted(scenario: Scenario, temperatures: tuple[float, ...] = TEMPERATURES) -> Any:
        plain = temper(scenario, (1.0,) * len(temperatures))
        return type(plain)(temperatures, plain.scaled_scores, plain.weights, plain.top)

    monkeypatch.setattr(module, "temper", planted)


CHECKS = LectureChecks(
    derived={"tempered": lambda s: (_plain(s), s.precision), "taus": lambda s: (_plain(s), 1)},
    belongs={"tempered": {"weights": ("temperature", "key")}, "taus": {"temperatures": ("temperature",)}},
    scenarios={
        "temperature-dog": lambda: preset("dog-chased-ball"),
        "temperature-two": lambda: Scenario.from_sentence("Hello world", seed=4, precision=3),
        "temperature-twelve": lambda: Scenario.from_sentence(
            "The quick brown fox jumps over the extraordinarily lazy dog near water", seed=12, query=8),
    },
    key_numbers={"Temperature": (
        ("tempered", "weights", lambda s: [(t, j) for t in range(len(TEMPERATURES)) for j in range(s.n_tokens)]),
        ("taus", "temperatures", lambda s: [(t,) for t in range(len(TEMPERATURES))]),
    )},
    faults=(
        PlantedFault("temperature columns swapped", "Temperature", _columns_swapped,
                     ("temperature-dog", "temperature-two")),
        PlantedFault("temperature ignored", "Temperature", _no_temperature, ("temperature-dog",)),
    ),
)
"""The lecture's proof: its sources, where their numbers stand, its test scenarios, its planted faults."""
