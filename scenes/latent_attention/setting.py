"""What the latent-attention lecture's scenes share: its MLA of the scenario, its grids and its tables of keys.

A scenario carries ``X`` and the weights of plain attention; multi-head latent attention needs eight other
matrices. They are the lecture's (:data:`scenes.latent_attention.LATENT_SETUP`), not the scenario's:
``attention_math.latent_weights(d_in, **LATENT_SETUP)``, one decimal each, the same for every sentence of one
width. Every scene runs ``attention_math.latent_attention`` on the scenario's own ``X`` with them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from manim import DOWN, LEFT, RIGHT, UP, Mobject, SurroundingRectangle, VGroup, VMobject

from attention_math import LatentTrace, Scenario, ScenarioError, latent_attention, latent_weights
from scenes.base import READING_PACE, ExplainerScene
from scenes.kit.grids import NumberGrid
from scenes.kit.palette import HIGHLIGHT, MUTED
from scenes.kit.text import token_text
from scenes.latent_attention import LATENT_SETUP, MAX_TOKENS

__all__ = [
    "Column",
    "KeyTable",
    "check_latent",
    "fit",
    "key_table",
    "latent_trace",
    "place_panel",
    "register_latent",
    "side_by_side",
    "slice_grid",
    "source_of",
    "titled_row",
]

LABEL = 26  # a token's size as a row's label: it reads when a table is shrunk to fit (to 0.75)
HEADER = 24  # a column's header


def check_latent(scenario: Scenario) -> Scenario:
    """The scenario, or a ``ScenarioError`` in one line when the lecture cannot draw it (more than
    :data:`~scenes.latent_attention.MAX_TOKENS` tokens: a row each)."""
    if scenario.n_tokens > MAX_TOKENS:
        raise ScenarioError(f"tokens: the latent-attention lecture draws at most {MAX_TOKENS} tokens a table, got "
                            f"{scenario.n_tokens}")
    return scenario


class LatentScene(ExplainerScene):
    """A scene of the latent lecture: paced to read, the scenario checked for MLA, the lecture's MLA of it kept in
    ``self.mla`` (``self.trace`` stays plain attention's, as every scene's)."""

    reading_pace = READING_PACE

    mla: LatentTrace

    @classmethod
    def check_scenario(cls, scenario: Scenario) -> Scenario:
        return check_latent(scenario)


def latent_trace(scenario: Scenario) -> LatentTrace:
    """Causal multi-head latent attention of the scenario's embeddings with the lecture's weights."""
    weights = latent_weights(scenario.d_in, **LATENT_SETUP)
    return latent_attention(scenario.embeddings, **weights, causal=True)


def register_latent(scene: Any) -> LatentTrace:
    """Register the trace as ``latent`` (at the scenario's decimals), ``latent_whole`` (its sizes, whole) and
    ``latent_tenths`` (the weights, one decimal each)."""
    trace = latent_trace(scene.scenario)
    scene.add_source("latent", trace, scene.scenario.precision)
    scene.add_source("latent_whole", trace, 0)
    scene.add_source("latent_tenths", trace, 1)
    return trace


def source_of(field: str) -> str:
    """The source a field's numbers are drawn from: a weight at one decimal, the rest at the scenario's."""
    return "latent_tenths" if field.startswith("w_") else "latent"


def slice_grid(scene: Any, field: str, lead: tuple[int, ...], rows: Sequence[int], columns: int, *, color: str,
               row_labels: Sequence[str] | None = None, size: float = 26, h_buff: float = 0.28,
               v_buff: float = 0.06) -> NumberGrid:
    """Rows ``rows`` of ``latent.field[*lead]`` as a grid, every number recorded (``lead``: a head, for a stack; a
    query, for a row of scores); ``columns`` 0: one number a row, ``field[*lead, i]``. Rows as close as the grid allows
(``v_buff``): 16 of them fit the frame's height at a size that reads."""
    source = source_of(field)
    entries = [[scene.number(source, field, *lead, i, *((c,) if columns else ()), color=color, size=size)
                for c in range(max(columns, 1))] for i in rows]
    labels = None if row_labels is None else [token_text(token, size=LABEL, color=MUTED) for token in row_labels]
    return NumberGrid(entries, row_labels=labels, color=color, h_buff=h_buff, v_buff=v_buff)


def fit(mob: Mobject | VGroup, width: float, height: float, *, most: float = 1.0) -> float:
    """Scale ``mob`` to fit ``width`` × ``height``, growing it to ``most`` at the most; the factor it was scaled by."""
    factor = min(most, width / mob.width, height / mob.height)
    if factor != 1.0:
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

    def box(self, *columns: int) -> SurroundingRectangle:
        """An outline around ``columns``, their headers inside (drawn where the table now stands, at any scale)."""
        return SurroundingRectangle(VGroup(*(self.column(k) for k in columns)), color=HIGHLIGHT, buff=0.1)

    def lit(self, k: int, row: int) -> SurroundingRectangle:
        """A band of colour behind column ``k``'s number in ``row`` (a one-number column), sized from the number as
        it now stands (the kit's ``NumberGrid.row_box`` keeps the cell size the grid was built at)."""
        band = SurroundingRectangle(self.grids[k].cells[row][0], buff=0.05, color=HIGHLIGHT, stroke_width=0,
                                    fill_opacity=0.28, corner_radius=0.05)
        return band.set_z_index(-1)


Column = tuple[str, tuple[int, ...], int, str, VMobject]
"""A table's column: ``(field, lead, width, colour, header)``, ``latent.field[*lead, j, :width]`` for each key ``j``
(``width`` 0: one number, ``field[*lead, j]``)."""


def key_table(scene: Any, columns: Sequence[Column], keys: Sequence[int], *, gap: float = 0.35) -> KeyTable:
    """A table of ``columns`` for each key of ``keys``, each column as wide as its header or its numbers: its rows
    registered as the keys', its columns as their quantities'."""
    tokens = scene.scenario.tokens
    labels = VGroup(*(token_text(tokens[j], size=LABEL, color=MUTED) for j in keys))
    grids = [slice_grid(scene, field, lead, keys, width, color=color, h_buff=0.2)
             for field, lead, width, color, _ in columns]
    headers = VGroup(*(header for *_, header in columns))
    left = 0.0
    for grid, header in zip(grids, headers, strict=True):
        room = max(grid.width, header.width)
        grid.set_x(left + room / 2)
        left += room + gap
    top = grids[0].brackets.get_top()[1]
    for grid, header in zip(grids, headers, strict=True):
        grid.shift(UP * (top - grid.brackets.get_top()[1]))
        header.set_x(grid.get_x()).align_to((0, top + 0.15, 0), DOWN)
    high = max(header.get_top()[1] for header in headers)
    for header in headers:  # their tops on one line
        header.align_to((0, high, 0), UP)
    for label, k in zip(labels, range(len(keys)), strict=True):
        label.next_to(grids[0].brackets, LEFT, buff=0.2).set_y(grids[0].cells[k][0].get_y())
    group = VGroup(labels, VGroup(*grids), headers)
    scene.rows("key", dict(zip(keys, labels, strict=True)), *grids)
    scene.fields("column", {f"{source_of(field)}.{field}": header
                            for (field, *_), header in zip(columns, headers, strict=True)}, *grids)
    return KeyTable(labels, grids, headers, group)


def side_by_side(*mobs: VMobject, buff: float) -> VGroup:
    """``mobs`` in a row, their tops on one line."""
    return VGroup(*mobs).arrange(RIGHT, buff=buff, aligned_edge=UP)


def _panel_columns(parts: Sequence[VMobject], columns: int, gap: float) -> VGroup:
    """``parts`` in ``columns`` columns, in order (the first columns one part longer where they do not divide)."""
    size, extra = divmod(len(parts), columns)
    chunks, start = [], 0
    for k in range(columns):
        end = start + size + (k < extra)
        chunks.append(VGroup(*parts[start:end]).arrange(DOWN, buff=0.3, aligned_edge=LEFT))
        start = end
    return VGroup(*chunks).arrange(RIGHT, buff=gap, aligned_edge=UP)


def place_panel(table: VGroup, headers: Mobject, parts: Sequence[VMobject], *, width: float, height: float,
                gap: float = 0.6) -> VGroup:
    """A table and its panel of ``parts``: the parts in one column beside the table (its top at the headers'), or in
    two or more columns over it, whichever lets the whole be drawn largest in ``width`` × ``height``; the whole."""
    def scale(columns: int) -> float:
        panel = _panel_columns(parts, columns, gap)
        if columns == 1:
            return min(width / (table.width + gap + panel.width), height / max(table.height, panel.height))
        return min(width / max(table.width, panel.width), height / (table.height + 0.4 + panel.height))

    best = max(range(1, len(parts) + 1), key=scale)
    panel = _panel_columns(parts, best, gap)
    if best == 1:
        panel.next_to(table, RIGHT, buff=gap).align_to(headers, UP)
    else:
        panel.next_to(table, UP, buff=0.4)
    return VGroup(table, panel)


def titled_row(grids: Sequence[NumberGrid], titles: Sequence[VMobject], buffs: Sequence[float]) -> VGroup:
    """Grids of the same rows side by side (``buffs[k]`` after grid ``k``), their rows on one line, each title over
    its grid with the titles' tops on one line; a ``VGroup`` of ``(grid, title)`` pairs."""
    left = grids[0].get_left()[0]
    for grid, buff in zip(grids, (*buffs, 0.0), strict=False):
        grid.shift(RIGHT * (left - grid.get_left()[0]) + UP * (grids[0].cells[0][0].get_y() - grid.cells[0][0].get_y()))
        left = grid.get_right()[0] + buff
    line = max(grid.brackets.get_top()[1] for grid in grids) + 0.15
    for grid, title in zip(grids, titles, strict=True):
        title.move_to((grid.get_x(), 0, 0)).align_to((0, line, 0), DOWN)
    top = max(title.get_top()[1] for title in titles)
    for title in titles:  # their tops on one line (a subscript's descender would drop a bottom-aligned title)
        title.align_to((0, top, 0), UP)
    return VGroup(*(VGroup(grid, title) for grid, title in zip(grids, titles, strict=True)))
