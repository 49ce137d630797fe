"""The latent-attention lecture's setting: its MLA weights, drawn from a seed for the scenario's embeddings.

A scenario carries ``X`` and the weights of plain attention; multi-head latent attention needs eight other
matrices. They are the lecture's, not the scenario's, like the masked lecture's dropout ``(p, seed)``:
``attention_math.latent_weights(d_in, **LATENT_SETUP)``, one decimal each, the same for every sentence of that
width. Every scene runs ``attention_math.latent_attention`` on the scenario's own ``X`` with them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from manim import LEFT, RIGHT, UP, Mobject, VGroup

from attention_math import LatentTrace, Scenario, ScenarioError, latent_attention, latent_weights
from scenes.kit.grids import NumberGrid
from scenes.kit.palette import MUTED
from scenes.kit.text import token_text

__all__ = ["LATENT_SETUP", "MAX_TOKENS", "KeyTable", "key_table", "check_latent", "fit", "latent_trace", "register_latent", "slice_grid"]

LATENT_SETUP: dict[str, int] = {"seed": 1, "d_c": 2, "d_c_query": 2, "heads": 2, "d_h": 2, "d_rope": 2}
"""The keyword arguments of ``latent_weights`` after ``d_model``: the seed, ``d_c`` (the latent), ``d_c'`` (the
query's latent), 2 heads of ``d_h`` = 2 content numbers and ``d_R`` = 2 RoPE numbers. Small, so every number fits
on screen: a token keeps ``d_c + d_R`` = 4 numbers where multi-head attention of these heads keeps 8."""


LABEL = 26  # a token's size as a row's label: it reads when a table is shrunk to fit (to 0.75)

MAX_TOKENS = 12
"""The most tokens the lecture's tables draw: a row each, at a size that reads."""


def check_latent(scenario: Scenario) -> Scenario:
    """The scenario, or a ``ScenarioError`` in one line when the lecture cannot draw it (more than 12 tokens)."""
    if scenario.n_tokens > MAX_TOKENS:
        raise ScenarioError(f"tokens: the latent-attention lecture draws at most {MAX_TOKENS} tokens a table, got "
                            f"{scenario.n_tokens}")
    return scenario


def latent_trace(scenario: Scenario) -> LatentTrace:
    """Causal multi-head latent attention of the scenario's embeddings with the lecture's weights."""
    weights = latent_weights(scenario.d_in, **LATENT_SETUP)
    return latent_attention(scenario.embeddings, **weights, causal=True)


def register_latent(scene: Any) -> LatentTrace:
    """Register the trace as ``latent`` (at the scenario's decimals), ``latent_whole`` (sizes, whole) and
    ``latent_tenths`` (the weights, drawn at one decimal)."""
    trace = latent_trace(scene.scenario)
    scene.add_source("latent", trace, scene.scenario.precision)
    scene.add_source("latent_whole", trace, 0)
    scene.add_source("latent_tenths", trace, 1)  # the weights: one decimal each, exactly
    return trace


def slice_grid(scene: Any, field: str, lead: tuple[int, ...], rows: Sequence[int], columns: int, *, color: str,
               row_labels: Sequence[str] | None = None, size: float = 26, h_buff: float = 0.28) -> NumberGrid:
    """Rows ``rows`` of ``latent.field[*lead]`` as a grid, every number recorded (``lead``: a head, for a stack; a
    weight at one decimal); ``columns`` 0: one number a row, ``field[*lead, i]``."""
    source = "latent_tenths" if field.startswith("w_") else "latent"
    entries = [[scene.number(source, field, *lead, i, *((c,) if columns else ()), color=color, size=size)
                for c in range(max(columns, 1))] for i in rows]
    labels = None if row_labels is None else [token_text(token, size=LABEL, color=MUTED) for token in row_labels]
    return NumberGrid(entries, row_labels=labels, color=color, h_buff=h_buff)


def fit(mob: Mobject | VGroup, width: float, height: float) -> float:
    """Shrink ``mob`` (never grow it) to fit ``width`` × ``height``; the factor it was scaled by."""
    factor = min(1.0, width / mob.width, height / mob.height)
    if factor < 1.0:
        mob.scale(factor)
    return factor


@dataclass
class KeyTable:
    """Rows of keys (the query's and those before it), a column of numbers per quantity, a header over each."""

    labels: VGroup  # a token per row
    grids: list[NumberGrid]  # per column
    headers: VGroup  # per column
    group: VGroup

    def column(self, k: int) -> VGroup:
        """Column ``k``: its header and its numbers."""
        return VGroup(self.headers[k], self.grids[k])


def key_table(scene: Any, columns: Sequence[tuple[str, tuple[int, ...], int, str, Mobject]], keys: Sequence[int],
              *, gap: float = 0.4) -> KeyTable:
    """A table of ``latent.field[*lead, j, :width]`` for each key ``j`` of ``keys``, a column per
    ``(field, lead, width, colour, header)``: its rows registered as keys, its columns as the fields'."""
    tokens = scene.scenario.tokens
    labels = VGroup(*(token_text(tokens[j], size=LABEL, color=MUTED) for j in keys))
    grids = [slice_grid(scene, field, lead, keys, width, color=color, h_buff=0.2)
             for field, lead, width, color, _ in columns]
    body = VGroup(*grids).arrange(RIGHT, buff=gap, aligned_edge=UP)
    for grid in grids[1:]:
        grid.shift(UP * (grids[0].cells[0][0].get_y() - grid.cells[0][0].get_y()))
    for label, k in zip(labels, range(len(keys)), strict=True):
        label.next_to(grids[0].brackets, LEFT, buff=0.2).set_y(grids[0].cells[k][0].get_y())
    headers = VGroup()
    for grid, (*_, header) in zip(grids, columns, strict=True):
        header.next_to(grid.brackets, UP, buff=0.15)
        headers.add(header)
    bottom = min(header.get_bottom()[1] for header in headers)
    for header in headers:
        header.shift(UP * (bottom - header.get_bottom()[1]))  # their bottoms on one line
    group = VGroup(labels, body, headers)
    scene.rows("key", dict(zip(keys, labels, strict=True)), *grids)
    scene.fields("column", {f"{_source(field)}.{field}": header for (field, *_), header in zip(columns, headers, strict=True)}, *grids)
    return KeyTable(labels, grids, headers, group)


def _source(field: str) -> str:
    return "latent_tenths" if field.startswith("w_") else "latent"
