"""Causal multi-head attention: the mask of lecture 7 in every head, then the heads joined times W_O.

Each head's weights as a heat map side by side (numbers in the cells while they are legible, else
colour only with the map's range); the causal mask slides over every map and each becomes a lower
triangle (every row still adds up to one). A token before the last loses the tokens after it in
every head, so its rows change (the last token's do not: it saw every earlier token already); each
head's z of that token, the z's joined and times W_O give its output row with the mask, written
beside the row without it: masked attention and multi-head attention meet.

Heads 1 to :data:`MAX_DRAWN` are drawn; a scenario with more says how many it has (its joined row
ends in "…": the rest are in the walkthrough). One head has nothing to join and no W_O: its z with
the mask is written beside its z without. Every number comes from each head's trace, masked and
not (``"causal_head1"``, ``"head1"``, …; ``Scenario.trace(causal=True)``), and from
:func:`attention_math.multi_head_attention` with and without ``causal`` (``"multi_causal"``,
``"multi"``).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any

import numpy as np
from manim import (
    DL,
    DOWN,
    LEFT,
    RIGHT,
    UP,
    FadeIn,
    FadeTransform,
    LaggedStart,
    Polygon,
    Rectangle,
    TransformFromCopy,
    VGroup,
    VMobject,
)

from attention_math import Scenario, ScenarioError, format_number
from attention_math.heat import Extremes
from scenes.base import READING_PACE, ExplainerScene
from scenes.facts import TokenPart, position, size, value
from scenes.kit.blocks import head_color
from scenes.kit.composite import composite_slots
from scenes.kit.fades import fade_in, fade_out, reshade
from scenes.kit.grids import Brackets
from scenes.kit.heatmap import (
    HeatFit,
    HeatGrid,
    cell_numbers,
    column_orientation,
    fill_cells,
    legend,
    row_box,
    text_height,
    text_width,
    vector_line,
    vector_width,
    widest,
)
from scenes.kit.layout import BOTTOM, HALF_WIDTH, TOP
from scenes.kit.mask import future_mask
from scenes.kit.palette import CONTEXT, FAINT, INK, KEY, MUTED, QUERY, WEIGHT
from scenes.kit.stills import StillFirst
from scenes.kit.text import SMALLEST_SIZE, shorten_token, text

__all__ = ["MAX_DRAWN", "CausalHeads", "changed_row"]

MAX_DRAWN = 4  # heads side by side, each map with legible labels
GAP = 0.45  # between the heads' panels
LINE = 0.44  # the pitch of the lines under the maps
NOTE_LINE = 0.34  # a line of note under the heading
LINE_SIZES = (24, 22, SMALLEST_SIZE)  # type sizes tried for the lines under the maps
LEGEND_BESIDE = 4.0  # a panel at least this wide has its legend (colour only) on its title's line


@dataclass
class _Panel:
    """One head: its title, its heat map (numbers or colours), its mask, the changed row's outline, its z."""

    head: int  # from 0
    left: float
    width: float
    title: VMobject
    fit: HeatFit
    grid: HeatGrid
    mask: Polygon
    numbers: VGroup = field(default_factory=VGroup)
    scale: VGroup = field(default_factory=VGroup)  # colour only: the legend
    box: VMobject = field(default_factory=VGroup)
    z: VGroup = field(default_factory=VGroup)

    @property
    def plain(self) -> str:
        return f"head{self.head + 1}"

    @property
    def causal(self) -> str:
        return f"causal_head{self.head + 1}"


def changed_row(scenario: Scenario) -> int:
    """The token whose row the mask changes: the query unless it is the last token (whose row it keeps),
    else token 3, or the first other token where there is no token 3 (as the causal-mask scene takes)."""
    n, q = scenario.n_tokens, scenario.query
    if q != n - 1:
        return q
    other = 2 if n > 2 and q != 2 else next(i for i in range(n) if i != q)
    return other if other != n - 1 else max(n - 2, 0)


def _line_widths(scenario: Scenario, font: float) -> tuple[float, float]:
    """The widths of the joined row and of the output lines at ``font``, measured from the shown numbers."""
    p, row, h = scenario.precision, changed_row(scenario), scenario.n_heads
    drawn = min(h, MAX_DRAWN)
    masked, plain = scenario.multi_head_trace(causal=True), scenario.multi_head_trace()

    def numbers(values: np.ndarray) -> float:
        return widest([format_number(float(v), p) for v in np.ravel(values)], font)

    joined = drawn * scenario.d_v
    bars = (drawn - 1 + (1 if h > drawn else 0)) * (text_width("|", font) + 0.4) + (0.6 if h > drawn else 0.0)
    concat = text_width("concat00 =", font) + 0.25 + joined * (numbers(masked.concat[row, :joined]) + 0.2) + bars + 0.3
    names = max(text_width("concat00 × W_O =", font), text_width("without the mask:", font)) + 0.25
    d_out = masked.output.shape[1]
    cell = numbers(np.concatenate([masked.output[row], plain.output[row]])) + 0.28
    return concat, names + d_out * cell + 0.3


class CausalHeads(StillFirst, ExplainerScene):
    """Every head masked: lower triangles side by side; a row that changes; the heads' z joined times W_O."""

    reading_pace = READING_PACE

    panels: list[_Panel]  # the geometry tests look at these
    lines: VGroup

    @classmethod
    def check_scenario(cls, scenario: Scenario) -> Scenario:
        """The joined row (of the heads drawn) and the output rows fit the frame at the font floor."""
        if scenario.n_heads > 1:
            concat, output = _line_widths(scenario, SMALLEST_SIZE)
            if concat > 2 * HALF_WIDTH:
                raise ScenarioError(f"d_v: the causal heads' scene joins the heads' z in one line, and "
                                    f"{min(scenario.n_heads, MAX_DRAWN)} × {scenario.d_v} numbers do not fit it "
                                    "(use fewer heads, a smaller d_v or fewer decimals)")
            if output > 2 * HALF_WIDTH:
                raise ScenarioError(f"w_out: the output row of {scenario.w_out.shape[1]} numbers "  # type: ignore[union-attr]
                                    "does not fit the frame (use fewer output columns or decimals)")
        return scenario

    def construct(self) -> None:
        self._sources()
        self.header("Causal multi-head attention: {} " + ("heads" if self.scenario.n_heads > 1 else "head"), "query",
                    "key", "scale", "softmax", parts=[size("n_heads")])
        self.notes = self._notes()
        panels = self.panels = self._panels()
        self._every_head(panels)
        self._masked(panels)
        self._rows_change(panels)
        self._contexts(panels)
        if self.h == 1:
            self._one_head(panels[0])
        else:
            self._joined(panels)

    # -- the numbers --------------------------------------------------------------------------------
    def _sources(self) -> None:
        s, precision = self.scenario, self.scenario.precision
        self.h, self.drawn, self.row = s.n_heads, min(s.n_heads, MAX_DRAWN), changed_row(s)
        for k, head in enumerate(s.heads[: self.drawn]):
            plain, masked = head.trace(), head.trace(causal=True)
            self.add_source(f"head{k + 1}", plain, precision)
            self.add_source(f"head{k + 1}_extremes", Extremes(plain), precision)
            self.add_source(f"causal_head{k + 1}", masked, precision)
            self.add_source(f"causal_head{k + 1}_extremes", Extremes(masked), precision)
        if self.h > 1:
            self.add_source("multi", s.multi_head_trace(), precision)
            self.add_source("multi_causal", s.multi_head_trace(causal=True), precision)

    def _notes(self) -> VGroup:
        """Under the heading: how many heads are drawn, when not all of them."""
        notes = VGroup()
        if self.h > self.drawn:
            notes.add(self.label("{} heads: heads {} to {} drawn, the rest in the walkthrough", size("n_heads"),
                                 position(0), position(self.drawn - 1), size=SMALLEST_SIZE, color=MUTED))
            notes.next_to(self.heading, DOWN, buff=0.08, aligned_edge=LEFT)
        notes.is_furniture = True  # type: ignore[attr-defined]
        self.add(notes)
        return notes

    # -- the panels, one per head -------------------------------------------------------------------
    def _panels(self) -> list[_Panel]:
        """One map per head side by side, the tokens named once (left of the first: the rows are the same)."""
        self.title_y = TOP - 0.2 - (NOTE_LINE if len(self.notes) else 0.0)
        top = self.title_y - 0.35
        # under the maps: z, then the joined row and the two outputs (one head: its z without the mask)
        below = LINE + (self._joined_height() if self.h > 1 else LINE) + 0.2
        fit = self._fit(top - BOTTOM - below)
        if not fit.numbers and self._legend_under(fit):  # the legends under the maps: one line more
            fit = self._fit(top - BOTTOM - below - LINE)
        grids = [self._grid(k, fit) for k in range(self.drawn)]
        x = -HALF_WIDTH + grids[0].brackets.get_left()[0] - grids[0].get_left()[0]
        for grid in grids:
            grid.shift(RIGHT * (x - grid.brackets.get_left()[0]) + UP * (top - grid.get_top()[1]))
            x = grid.brackets.get_right()[0] + GAP
        spare = HALF_WIDTH - grids[-1].get_right()[0]
        for grid in grids:  # the maps in the middle of the frame
            grid.shift(RIGHT * spare / 2)
        panels = [self._panel(k, fit, grid) for k, grid in enumerate(grids)]
        # every number of a head in its own panel (each panel's extent a mark that draws nothing)
        extents = {p.head: Rectangle(width=p.width, height=self.title_y - BOTTOM, stroke_width=0, fill_opacity=0)
                   .move_to((p.left + p.width / 2, (self.title_y + BOTTOM) / 2, 0)) for p in panels}
        self.columns("head", extents, *extents.values(), *(p.title for p in panels))
        return panels

    def _joined_height(self) -> float:
        """The joined row and the two output rows, at the type they will take."""
        font = self._joined_size(2 * HALF_WIDTH)
        return 3 * text_height(font) + 2 * (LINE - text_height(font)) + 0.3

    def _joined_size(self, room: float) -> float:
        """The largest of :data:`LINE_SIZES` at which the joined row and the output rows fit the width and ``room``
        in height."""
        return next((s for s in LINE_SIZES if max(_line_widths(self.scenario, s)) <= 2 * HALF_WIDTH
                     and 3 * text_height(s) + 2 * (LINE - text_height(s)) + 0.3 <= room), SMALLEST_SIZE)

    def _fit(self, height: float) -> HeatFit:
        """The maps' drawing: numbers in the cells at the largest type that fits every map side by side (the
        tokens once, left of the first), the cells widened to fill the frame; else colour only."""
        n, tokens, drawn = self.scenario.n_tokens, self.scenario.tokens, self.drawn
        texts = [self.text_for(value(f"{name}{k + 1}", "weights", i, j)) for name in ("head", "causal_head")
                 for k in range(drawn) for i in range(n) for j in range(n)]
        for font in (26, 24, 22, SMALLEST_SIZE):
            cell_w, cell_h = widest(texts, font) + 0.3, text_height(font) + 0.2
            for row_limit in (10, 8, 6):
                labels = max(text_width(shorten_token(t, row_limit), font) for t in tokens) + 0.15
                room = (2 * HALF_WIDTH - labels - (drawn - 1) * GAP - drawn * 0.2) / (drawn * n)
                wider = min(2 * cell_w, room)  # the cells widened to fill the frame, their labels over them
                columns = column_orientation(tokens, font, wider, cell_h, height, 6, self.row)
                if cell_w > room or columns is None:
                    continue
                fit = HeatFit(True, font, wider, cell_h, row_limit, columns[1], columns[0])
                return replace(fit, cell_h=max(cell_h, min(1.0, 0.75 * wider, (height - fit.column_height(tokens))
                                                           / n)))
        labels = max(text_width(f"{n} " + shorten_token(t, 8), SMALLEST_SIZE) for t in tokens) + 0.15
        cell_w = min(0.6, (2 * HALF_WIDTH - labels - (drawn - 1) * GAP - drawn * 0.2) / (drawn * n))
        cell_h = min(0.5, (height - text_height(SMALLEST_SIZE) - 0.15) / n)
        return HeatFit(False, SMALLEST_SIZE, cell_w, min(cell_h, max(cell_w, 0.3)), 8, 0, False, numbered=True)

    def _legend_under(self, fit: HeatFit) -> bool:
        """Colour only: is a map too narrow for its legend on its title's line (so it goes under the map)?"""
        return self.scenario.n_tokens * fit.cell_w < LEGEND_BESIDE

    def _grid(self, k: int, fit: HeatFit) -> HeatGrid:
        """Head ``k``'s map; the first names the tokens of the rows (numbered, in colour only)."""
        n, tokens = self.scenario.n_tokens, self.scenario.tokens
        rows = tokens if k == 0 and not fit.numbered else None
        grid = HeatGrid(n, n, cell_w=fit.cell_w, cell_h=fit.cell_h, size=fit.size, row_tokens=rows,
                        row_limit=fit.row_limit, column_tokens=None if fit.numbered else tokens,
                        column_limit=fit.column_limit, upright=fit.upright)
        if fit.numbered:  # every column numbered while the numbers fit their cells, else every other one
            step = 1 if text_width(str(n), fit.size) + 0.12 <= fit.cell_w else 2
            columns = list(range(0, n, step))
            grid.label_columns([self.label("{}", position(j), size=fit.size, color=KEY) for j in columns], columns)
            if k == 0:  # every row named while the names fit their rows, else every other one
                step = 1 if fit.cell_h >= text_height(fit.size) + 0.04 else 2
                named = [i for i in range(n) if i % step == self.row % step]  # the changed row among them
                grid.label_rows([self.label("{} {}", position(i), TokenPart(tokens[i], fit.row_limit), size=fit.size,
                                            color=QUERY) for i in named])
                for label, i in zip(grid.row_labels, named, strict=True):
                    label.set_y(grid.row_y(i))
        self.rows("query", grid)  # each cell's number in its query's row and key's column
        self.columns("key", grid)
        return grid

    def _panel(self, k: int, fit: HeatFit, grid: HeatGrid) -> _Panel:
        left = grid.brackets.get_left()[0]
        title = self.label("head {}", position(k, "head"), size=26, color=head_color(k))
        title.move_to((left + title.width / 2, self.title_y, 0))
        panel = _Panel(k, left, grid.brackets.get_right()[0] - left, title, fit, grid, future_mask(grid))
        fill_cells(self, grid, panel.plain, "weights", f"{panel.plain}_extremes", WEIGHT, animate=False)
        if fit.numbers:
            panel.numbers = cell_numbers(self, grid, panel.plain, "weights", f"{panel.plain}_extremes", size=fit.size)
        else:
            panel.scale = self._legend(panel, panel.plain)
        return panel

    def _legend(self, panel: _Panel, source: str) -> VGroup:
        """Colour only: the map's range, on the title's line where the map is wide, else under the map."""
        scale = legend(self, f"{source}_extremes", "weights", WEIGHT)
        if not self._legend_under(panel.fit):
            return scale.move_to((panel.left + panel.width - scale.width / 2, self.title_y, 0))
        return scale.move_to((panel.left + scale.width / 2, panel.grid.get_bottom()[1] - LINE * 0.7, 0))

    # -- the beats ----------------------------------------------------------------------------------
    def _every_head(self, panels: list[_Panel]) -> None:
        """Each head's weights without the mask, as the heads computed them."""
        animations: list[Any] = []
        for p in panels:
            rows = [p.grid.row(i) for i in range(len(p.grid.squares))]
            animations += [fade_in(p.title, p.grid.brackets, p.grid.row_labels, p.grid.column_labels, p.scale),
                           LaggedStart(*(fade_in(row) for row in rows), lag_ratio=0.3 / len(rows)),
                           *([fade_in(p.numbers)] if len(p.numbers) else [])]
        said = (f"{self.cite(size('n_heads'))} heads, each with its own weights: every token looks at every token."
                if self.h > 1 else "One head and its weights: every token looks at every token.")
        self.beat(said, *animations, *([fade_in(self._colours_note(panels))] if self._colours(panels) else []),
                  run_time=1.4, wait=1.6)

    def _colours(self, panels: list[_Panel]) -> bool:
        return any(not p.fit.numbers for p in panels)

    def _colours_note(self, panels: list[_Panel]) -> VMobject:
        """"Colours only" under the heading (and the note of the heads left out), when a map shows no numbers."""
        note = text("colours only: each map's range in its legend", size=SMALLEST_SIZE, color=MUTED)
        note.next_to(self.notes if len(self.notes) else self.heading, DOWN, buff=0.06, aligned_edge=LEFT)
        note.is_furniture = True  # type: ignore[attr-defined]
        _ = panels
        return note

    def _masked(self, panels: list[_Panel]) -> None:
        """The mask slides over every map; after the softmax each is a lower triangle, every row adding up to one."""
        animations: list[Any] = []
        for p in panels:
            # every cell refilled in one animation (not one per cell), the numbers crossfaded in place
            animations.append(reshade(p.grid.cells, partial(fill_cells, self, p.grid, p.causal, "weights",
                                                            f"{p.causal}_extremes", WEIGHT, animate=False)))
            animations.append(FadeIn(p.mask, shift=DL * 0.4))
            if p.fit.numbers:
                old, p.numbers = p.numbers, cell_numbers(self, p.grid, p.causal, "weights", f"{p.causal}_extremes",
                                                         size=p.fit.size)
                animations += [fade_out(old), fade_in(p.numbers)]
            else:
                old_scale, p.scale = p.scale, self._legend(p, p.causal)
                animations.append(FadeTransform(old_scale, p.scale))
        where = " in every head" if self.h > 1 else ""
        self.beat(f"The causal mask{where}: the keys after each query are hidden, and each row still adds up to one.",
                  *animations, run_time=1.6, wait=1.6)
        self.play(*(p.mask.animate.set_fill(opacity=FAINT) for p in panels), run_time=0.5)

    def _rows_change(self, panels: list[_Panel]) -> None:
        """The changed token's row outlined in every map: it lost the tokens after it."""
        tokens, row, last = self.scenario.tokens, self.row, self.scenario.n_tokens - 1
        for p in panels:
            p.box = row_box(p.grid, row, color=QUERY)
        lost = f"'{tokens[row]}' loses the tokens after it in every head: its rows change."
        if self.scenario.query == last and row != last:
            lost = f"'{tokens[last]}' saw every token before it already, so its rows stay; " + lost
        if self.h == 1:
            lost = lost.replace(" in every head: its rows change", ": its row changes").replace("its rows stay",
                                                                                                "its row stays")
        self.beat(lost, *(FadeIn(p.box) for p in panels), run_time=1.0, wait=1.5)

    def _contexts(self, panels: list[_Panel]) -> None:
        """Each head's z of the changed token, with the mask, under its map (one head: named "with the mask")."""
        for p in panels:
            if self.h == 1:
                p.z = self._named_z(p, p.causal, "with the mask:", CONTEXT)
            else:
                room = p.width + (GAP - 0.25 if p.head < self.drawn - 1 else 0.3)
                p.z = vector_line(self, "z", p.causal, "context", self.row, size=self._line_size(p.causal, room),
                                  color=CONTEXT)
            top = min(p.grid.get_bottom()[1], (p.scale.get_bottom()[1] if len(p.scale) and p.scale.get_y()
                                                < p.grid.get_bottom()[1] else p.grid.get_bottom()[1]))
            p.z.move_to((p.left + p.z.width / 2, top - LINE * 0.7, 0))
        said = (f"Each head mixes its values by its masked weights: a z{self.cite(position(self.row))} per head."
                if self.h > 1 else f"Its masked weights mix the values: z{self.cite(position(self.row))}.")
        self.beat(said, *(FadeIn(p.z, shift=DOWN * 0.1) for p in panels), run_time=1.2, wait=1.2)

    def _named_z(self, panel: _Panel, source: str, name: str, color: str) -> VGroup:
        """One head: "with the mask: z3 = (…)" or "without the mask: …", the z's starting at one x."""
        names = ("with the mask:", "without the mask:")
        room = panel.width - max(text_width(n, LINE_SIZES[0]) for n in names) - 0.25
        font = min(self._line_size(s, room) for s in (panel.causal, panel.plain))
        tags = [text(n, size=font, color=MUTED) for n in names]
        tag = tags[names.index(name)]
        line = vector_line(self, "z", source, "context", self.row, size=font, color=color)
        line.next_to(tag, RIGHT, buff=0.2 + max(t.width for t in tags) - tag.width)
        line.align_to(tag, DOWN)
        return VGroup(tag, line)

    def _line_size(self, source: str, room: float) -> float:
        """The largest of :data:`LINE_SIZES` at which ``z3 = (…)`` of ``source`` fits ``room``."""
        return next((s for s in LINE_SIZES if vector_width(self, "z", source, "context", self.row, s) <= room),
                    SMALLEST_SIZE)

    def _one_head(self, panel: _Panel) -> None:
        """One head: nothing to join, no W_O; its z with the mask over its z without."""
        line = self._named_z(panel, panel.plain, "without the mask:", INK)
        line.move_to((panel.left + line.width / 2, panel.z.get_y() - LINE, 0))
        self.lines = VGroup(line)
        self.beat(f"One head has nothing to join and no W_O: its z{self.cite(position(self.row))} with the mask, "
                  "over the one without.", FadeIn(line, shift=UP * 0.1), run_time=1.2, wait=2.0)

    def _joined(self, panels: list[_Panel]) -> None:
        """The heads' z joined, times W_O: the output row with the mask, and the one without under it."""
        top = min(p.z.get_bottom()[1] for p in panels) - 0.3
        font = self._joined_size(top - BOTTOM)
        concat = self._concat(font)
        masked, plain = self._outputs(font)
        lines = VGroup(concat[0], masked, plain).arrange(DOWN, buff=LINE - text_height(font), aligned_edge=LEFT)
        self._align(concat[0], masked, plain)
        lines.move_to((0, top - lines.height / 2, 0))
        lines.shift(UP * max(0.0, BOTTOM + 0.02 - lines.get_bottom()[1]))
        self.lines = lines
        d_v = self.scenario.d_v
        flights = [TransformFromCopy(p.z[2 + 2 * m], concat[1][p.head * d_v + m]) for p in panels for m in range(d_v)]
        self.beat(f"The heads' z{self.cite(position(self.row))} are joined: concat{self.cite(position(self.row))}.",
                  FadeIn(concat[2]), *flights, run_time=1.6, wait=1.0)
        self.beat(f"Times W_O: the output row of '{self.scenario.tokens[self.row]}' with the mask, beside the one "
                  "without. Masked attention and multi-head attention meet.",
                  FadeIn(masked, shift=UP * 0.1), FadeIn(plain, shift=UP * 0.1), run_time=1.6, wait=2.5)

    def _concat(self, font: float) -> tuple[VGroup, VGroup, VGroup]:
        """``concat3 = [ … | … | … ]`` (the drawn heads' z, "…" after them when some are left out): the line,
        its numbers, and what fades in around them."""
        d_v, row = self.scenario.d_v, self.row
        entries = [self.number("multi_causal", "concat", row, c, size=font, color=CONTEXT)
                   for c in range(self.drawn * d_v)]
        parts: list[VMobject] = []
        for c, entry in enumerate(entries):
            if c and c % d_v == 0:
                parts.append(text("|", size=font, color=MUTED))
            parts.append(entry)
        if self.h > self.drawn:
            parts += [text("|", size=font, color=MUTED), text("…", size=font, color=MUTED)]
        body = VGroup(*parts).arrange(RIGHT, buff=0.2)
        for part in parts:
            part.set_y(body.get_y())
        body.add(composite_slots(self, entries, d_v))
        name = self.label("concat{} =", position(row, "query"), size=font, color=MUTED)
        brackets = Brackets(body, buff=0.1)
        line = VGroup(name, VGroup(brackets, body)).arrange(RIGHT, buff=0.25)
        around = VGroup(name, brackets, *(p for p in parts if p not in entries))
        return line, VGroup(*entries), around

    def _outputs(self, font: float) -> tuple[VGroup, VGroup]:
        """``with the mask: concat3 × W_O = [ … ]`` and ``without the mask: [ … ]``, their numbers in columns."""
        row = self.row
        d_out = int(np.shape(self.sources["multi"][0].output)[1])
        rows = []
        for source, color in (("multi_causal", CONTEXT), ("multi", INK)):
            rows.append([self.number(source, "output", row, m, size=font, color=color) for m in range(d_out)])
        cell = max(e.width for r in rows for e in r) + 0.28
        lines = []
        for numbers, name in zip(rows, (self.label("concat{} × W_O =", position(row), size=font, color=MUTED),
                                        text("without the mask:", size=font, color=MUTED)), strict=True):
            for m, entry in enumerate(numbers):
                entry.move_to((m * cell, 0, 0)).align_to((m * cell + cell / 2, 0, 0), RIGHT)
            body = VGroup(*numbers)
            lines.append(VGroup(name, Brackets(body, buff=0.1), body))
        for line in lines:
            line[0].next_to(line[1], LEFT, buff=0.25)
        return lines[0], lines[1]

    def _align(self, concat: VGroup, masked: VGroup, plain: VGroup) -> None:
        """The output rows' brackets one under the other, their names right-aligned before them; the joined row
        starts where the names do."""
        x = masked[1].get_left()[0]
        plain.shift(RIGHT * (x - plain[1].get_left()[0]))
        names_left = min(masked[0].get_left()[0], plain[0].get_left()[0], concat.get_left()[0])
        concat.shift(RIGHT * (names_left - concat.get_left()[0]))
        _ = UP
