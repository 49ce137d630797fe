"""Scene 3 of the flash-attention lecture: the whole matrix in tiles, and the slow-memory traffic counted.

The n × n matrix of scores as a grid cut into blocks of ``B_r`` queries × ``B_c`` keys
(``scenes.flash_attention.FLASH_BLOCKS``), lit in the order FlashAttention's Algorithm 1 visits them: key blocks in
the outer loop (K_j and V_j loaded once), query blocks in the inner one (Q_i, O_i, ℓ_i, m_i read, then
O_i, ℓ_i, m_i written back). Then the numbers read from and written to slow memory by the plain route
and the tiled one, counted by ``attention_math.memory_traffic`` for the lecture's sizes (source
``traffic``) and by ``attention_math.a100_traffic`` for the paper's (n 1024, d 64, about 100 KB of SRAM
in half-precision numbers; source ``a100``), with Theorem 2's formulas beside them: Θ(n·d + n²) and
Θ(n²·d²/M), their constants left out.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from manim import LEFT, UP, FadeIn, LaggedStart, Mobject, Rectangle, VGroup, VMobject

from attention_math import a100_traffic, memory_traffic
from scenes.base import READING_PACE, ExplainerScene
from scenes.facts import position, value
from scenes.flash_attention import FLASH_BLOCKS
from scenes.kit.grids import Brackets
from scenes.kit.layout import BOTTOM, HALF_WIDTH, TOP
from scenes.kit.palette import HIGHLIGHT, INK, KEY, MUTED, QUERY, WEIGHT
from scenes.kit.text import SMALLEST_SIZE, text

__all__ = ["TiledTraffic"]

GRID_MOST = 4.2  # the matrix's side, at most
LABELS = 1.0  # what the block labels and names take beside and over the matrix
GRID_LEAST = 3.6  # the room the matrix and its labels keep beside the table, at least
GAP = 0.5  # between the matrix and the table
SIZE = 24  # the table's type, before fitting
COLUMN_GAP = 0.38
ROW_STEP = 0.46  # between the table's lines, at size 24


def _blocks(n: int, size: int) -> list[range]:
    return [range(start, min(start + size, n)) for start in range(0, n, size)]


class TiledTraffic(ExplainerScene):
    """The matrix in blocks of queries × blocks of keys, visited as Algorithm 1 does; the traffic of both routes."""

    reading_pace = READING_PACE

    matrix: VGroup  # the cells, brackets and block labels
    tiles: list[list[Rectangle]]  # [query block][key block]
    table: VGroup  # the counts (the last frame's right half)
    lines: list[list[VMobject]]  # the table's rows, cell by cell

    def construct(self) -> None:
        s = self.scenario
        keys, queries = FLASH_BLOCKS
        ours = memory_traffic(s.n_tokens, s.d_k, block_size=keys, query_block_size=queries)
        self.add_source("traffic", ours, 0)  # counts: whole numbers
        self.add_source("traffic_exact", ours, 2)  # n²d²/M and the ratio
        self.add_source("a100", a100_traffic(), 0)
        self.add_source("a100_exact", a100_traffic(), 2)
        self.header("The whole matrix in tiles", "query", "key")
        self.table = self._table()
        self.matrix = self._matrix()
        self._blocks_beat()
        self._order_beat()
        self._ours_beat()
        self._a100_beat()

    # -- the matrix ---------------------------------------------------------------------------------------
    def _matrix(self) -> VGroup:
        n = self.scenario.n_tokens
        keys, queries = FLASH_BLOCKS
        room = self.table.get_left()[0] - GAP + HALF_WIDTH
        cell = min(GRID_MOST, room - LABELS, TOP - BOTTOM - LABELS) / n
        self.tiles = []
        for rows in _blocks(n, queries):
            self.tiles.append([Rectangle(width=len(cols) * cell - 0.05, height=len(rows) * cell - 0.05,
                                         stroke_color=MUTED, stroke_width=1.5, fill_color=WEIGHT, fill_opacity=0.0)
                               .move_to(((cols.start + len(cols) / 2) * cell, -(rows.start + len(rows) / 2) * cell, 0))
                               for cols in _blocks(n, keys)])
        cells = VGroup(*(tile for row in self.tiles for tile in row))
        brackets = Brackets(cells, buff=0.08, serif=0.12)
        size = max(SMALLEST_SIZE, min(24.0, 60 * cell * min(keys, queries)))
        row_labels = VGroup(*(self.label("Q{}", position(i, "block"), size=size, color=QUERY).next_to(
            brackets, LEFT, buff=0.12).set_y(self.tiles[i][0].get_y()) for i in range(len(self.tiles))))
        widest = text(f"K{len(self.tiles[0])}", size=size).width
        every = 1 if widest + 0.12 <= keys * cell else 2  # every other block's name where they would touch
        column_labels = VGroup(*(self.label("K{}", position(j, "block"), size=size, color=KEY).next_to(
            brackets, UP, buff=0.1).set_x(self.tiles[0][j].get_x()) for j in range(0, len(self.tiles[0]), every)))
        names = VGroup(self.label("blocks of {} queries", value("traffic", "query_block_size"), size=SMALLEST_SIZE,
                                  color=QUERY),
                       self.label("blocks of {} keys", value("traffic", "block_size"), size=SMALLEST_SIZE, color=KEY))
        grid = VGroup(cells, brackets, row_labels, column_labels)
        names[0].rotate(1.5708).next_to(row_labels, LEFT, buff=0.12)
        names[1].next_to(column_labels, UP, buff=0.08)
        grid.add(names)
        if grid.width > room or grid.height > TOP - BOTTOM:
            grid.scale(min(room / grid.width, (TOP - BOTTOM) / grid.height))
        grid.move_to((-HALF_WIDTH + room / 2, (TOP + BOTTOM) / 2, 0))
        return grid

    def _blocks_beat(self) -> None:
        keys, queries = FLASH_BLOCKS
        n = self.scenario.n_tokens
        said = (f"The whole matrix of scores, cut into tiles of {self.fmt('traffic', 'query_block_size')} queries × "
                f"{self.fmt('traffic', 'block_size')} keys; the last ones are smaller where the blocks do not divide "
                "the tokens." if n % keys or n % queries else
                f"The whole matrix of scores, cut into tiles of {self.fmt('traffic', 'query_block_size')} queries × "
                f"{self.fmt('traffic', 'block_size')} keys.")
        self.beat(said, FadeIn(self.matrix), run_time=1.4, wait=1.8)

    def _order_beat(self) -> None:
        n_rows, n_columns = len(self.tiles), len(self.tiles[0])
        lit: list[Any] = [self.tiles[i][j].animate.set_fill(WEIGHT, opacity=0.45)
                          for j in range(n_columns) for i in range(n_rows)]  # key blocks outer, query blocks inner
        self.beat("FlashAttention takes a block of keys and values in the outer loop, loaded once, and passes every "
                  "block of queries by it: read Q, O, ℓ and m, update them, write them back. No tile of scores is ever "
                  "written.", LaggedStart(*lit, lag_ratio=min(0.5, 3.0 / len(lit))), run_time=2.4, wait=1.4)

    # -- the counts ---------------------------------------------------------------------------------------
    def _row(self, name: str, source: str, prefix: str, formula: str, color: str) -> list[VMobject]:
        exact = f"{source}_exact"
        return [text(name, size=SIZE, color=color),
                self.number(source, f"{prefix}_reads", size=SIZE), self.number(source, f"{prefix}_writes", size=SIZE),
                self.number(source, f"{prefix}_accesses", size=SIZE, color=color),
                self.label(formula, value(exact if prefix == "flash" else source, f"{prefix}_formula"), size=SIZE,
                           color=MUTED)]

    def _table(self) -> VGroup:
        heads: list[VMobject] = [text(word, size=SIZE, color=MUTED)
                                 for word in ("", "reads", "writes", "in all", "the paper's bound")]
        sections = []
        for source in ("traffic", "a100"):
            words = ("n = {}, d = {}, SRAM M = {} numbers" if source == "traffic" else
                     "the paper's GPU: n = {}, d = {}, M = {} numbers")
            title = self.label(words, value(source, "n"), value(source, "d"), value(source, "sram"), size=SIZE,
                               color=INK)
            rows = [self._row("standard", source, "standard", "n·d + n² = {}", INK),
                    self._row("FlashAttention", source, "flash", "n²·d²/M = {}", WEIGHT)]
            ratio = self.label("standard ÷ FlashAttention = {}", value(f"{source}_exact", "ratio"), size=SIZE,
                               color=HIGHLIGHT)
            sections.append((title, rows, ratio))
        self.heading_lines = [VGroup(*heads)]
        self.lines = [heads]
        columns = len(heads)
        all_rows: list[list[VMobject]] = [heads, *(row for _, rows, _ in sections for row in rows)]
        widths = [max(row[c].width for row in all_rows) for c in range(columns)]
        y = 0.0
        placed = VGroup()
        self.sections: list[VGroup] = []
        for title, rows, ratio in sections:
            section = VGroup()
            title.move_to((title.width / 2, y, 0))
            section.add(title)
            y -= ROW_STEP * 1.1
            if not placed:  # the column heads, once, under the first title
                self._put(heads, widths, y)
                y -= ROW_STEP
            for row in rows:
                self._put(row, widths, y)
                section.add(*row)
                y -= ROW_STEP
            ratio.move_to((ratio.width / 2, y, 0))
            section.add(ratio)
            y -= ROW_STEP * 1.6
            placed.add(section)
            self.sections.append(section)
        marks = self._marks(widths)
        table = VGroup(VGroup(*heads), *self.sections, marks)
        room = 2 * HALF_WIDTH - GRID_LEAST - GAP
        if table.width > room:
            table.scale(max(room / table.width, SMALLEST_SIZE / SIZE))
        table.move_to((HALF_WIDTH - table.width / 2, (TOP + BOTTOM) / 2 + 0.1, 0))
        self.heading_lines = [VGroup(*heads)]
        self._register_fields(marks, [rows for _, rows, _ in sections])
        return table

    @staticmethod
    def _marks(widths: list[float]) -> VGroup:
        """The columns of numbers as :meth:`_put` lays them out (marks that draw nothing): reads, writes, in all, the
        paper's bound."""
        marks, x = VGroup(), widths[0] + COLUMN_GAP
        for width in widths[1:]:
            marks.add(Rectangle(width=width, height=0.1, stroke_width=0, fill_opacity=0).move_to((x + width / 2, 0, 0)))
            x += width + COLUMN_GAP
        return marks

    def _register_fields(self, marks: VGroup, sections: list[list[list[VMobject]]]) -> None:
        """Each count under its own column, a set per section (its two rows: the titles and ratios across the table
        between them are no column's)."""
        for source, rows in zip(("traffic", "a100"), sections, strict=True):
            anchors: dict[str, Mobject] = {}
            for prefix in ("standard", "flash"):
                formula = f"{source}_exact.flash_formula" if prefix == "flash" else f"{source}.standard_formula"
                names = (*(f"{source}.{prefix}_{count}" for count in ("reads", "writes", "accesses")), formula)
                anchors |= dict(zip(names, marks, strict=True))
            self.fields("column", anchors, *(cell for row in rows for cell in row[1:]))

    @staticmethod
    def _put(row: Sequence[VMobject], widths: list[float], y: float) -> None:
        """A row of the table: its name left-aligned, numbers right-aligned in their columns."""
        x = 0.0
        for k, (cell, width) in enumerate(zip(row, widths, strict=True)):
            if k == 0 or k == len(row) - 1:
                cell.move_to((x + cell.width / 2, y, 0))
            else:
                cell.move_to((x + width - cell.width / 2, y, 0))
            x += width + COLUMN_GAP

    def _ours_beat(self) -> None:
        said = (f"Counted at these sizes: the plain route reads and writes {self.fmt('traffic', 'standard_accesses')} "
                f"numbers of slow memory, the tiled one {self.fmt('traffic', 'flash_accesses')}: ")
        said += ("with so few tokens, reading Q, O, ℓ and m again for every block of keys costs more than the scores "
                 "it saves." if self.value_of(value("traffic_exact", "ratio")) < 1 else
                 "the scores it never writes outweigh the blocks it reads again.")
        self.beat(said, FadeIn(self.heading_lines[0], self.sections[0], shift=LEFT * 0.1), run_time=1.4, wait=2.6)

    def _a100_beat(self) -> None:
        said = (f"At the paper's sizes, {self.fmt('a100', 'n')} tokens and a head of {self.fmt('a100', 'd')}, the n² "
                f"scores dominate: {self.fmt('a100', 'standard_accesses')} against "
                f"{self.fmt('a100', 'flash_accesses')}, {self.fmt('a100_exact', 'ratio')} times fewer, as the paper's "
                "bounds say: n·d + n² against n²·d²/M.")
        self.beat(said, FadeIn(self.sections[1], shift=LEFT * 0.1),
                  *(tile.animate.set_fill(opacity=0.25) for row in self.tiles for tile in row), run_time=1.4, wait=3.0)
