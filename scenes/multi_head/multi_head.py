"""The next lecture: multi-head attention — h heads side by side, their z joined, times W_O.

Each head has its own W_Q, W_K, W_V, so its own weights: a heat map per head (numbers in the
cells while they are legible, else colour only with its range), the query's row outlined and
the key it attends to most named, then its z for the query. The heads' z are concatenated and
multiplied by W_O into the output row; from there on only the query's row of each heat map stays,
and the screen says so. A scenario with one head is drawn as one head, and says it has no W_O.

Heads 1 to :data:`MAX_DRAWN` are drawn; a scenario with more says on screen and in a caption how
many it has and that the rest are in the walkthrough: its joined row ends in "| …" and W_O is named
by its shape (its rows would multiply numbers not shown), the output still of every head.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
from manim import (
    DOWN,
    LEFT,
    RIGHT,
    UP,
    Animation,
    FadeIn,
    FadeOut,
    LaggedStart,
    MathTex,
    Rectangle,
    ReplacementTransform,
    SurroundingRectangle,
    Transform,
    TransformFromCopy,
    VGroup,
    VMobject,
)

from attention_math import Scenario, ScenarioError, format_number
from attention_math.heat import Extremes
from scenes.base import READING_PACE, ExplainerScene
from scenes.facts import TokenPart, position, query_number, size, value
from scenes.kit.composite import composite_slots
from scenes.kit.fades import fade_in, fade_out
from scenes.kit.grids import Brackets
from scenes.kit.heatmap import (
    HeatFit,
    HeatGrid,
    cell_numbers,
    column_limit,
    fill_cells,
    fit_heat,
    legend,
    row_box,
    text_height,
    text_width,
    vector_line,
    vector_width,
    widest,
)
from scenes.kit.layout import BOTTOM, HALF_WIDTH, TOP
from scenes.kit.palette import CONTEXT, INK, KEY, MUTED, QUERY, VALUE, WEIGHT
from scenes.kit.stills import StillFirst
from scenes.kit.text import SMALLEST_SIZE, drop_svg_paths, shorten_token, text, token_text

__all__ = ["MAX_DRAWN", "MultiHead"]

MAX_DRAWN = 4  # heads side by side, each heat map with legible labels; a scenario with more says the rest
MAX_JOINED = 8  # numbers in the concatenated row (drawn heads × d_v): it shares one line with W_O and the output
GAP = 0.45  # between the heads' panels
TITLE_Y = TOP - 0.2
NOTE_LINE = 0.34  # a line of note under the heading (the heads drawn, when not all)
LINE = 0.42  # the pitch of the lines under a heat map
BAND_SIZES = (24, 22, SMALLEST_SIZE)  # type sizes tried for the lines concat = … and concat × W_O = …
ONE_HEAD_NOTE = 5.0  # the width of the note beside a single head
WEIGHTS = ("w_query", "w_key", "w_value")
LEGEND_BESIDE = 4.0  # a panel at least this wide has its legend (colour only) on its title's line


@dataclass(frozen=True)
class _BandSizes:
    """How wide the two lines under the heads are at one type size.

    ``joined``: ``concat5 = [ … | … ]``; ``product``: ``concat5 × W_O = [ … ]`` with W_O's numbers;
    ``shape``: the same with W_O named by its shape only.
    """

    joined: float
    product: float
    shape: float


def _band_sizes(scenario: Scenario, font: float) -> _BandSizes:
    """The widths of the lines under the heads at ``font`` (measured from the shown numbers: the drawn heads')."""
    trace, q, p = scenario.multi_head_trace(), scenario.query, scenario.precision

    def numbers(values: np.ndarray) -> float:
        return widest([format_number(float(v), p) for v in np.ravel(values)], font)

    name = text_width("concat00 =", font) + 0.3
    drawn = min(scenario.n_heads, MAX_DRAWN)
    columns, d_out = drawn * scenario.d_v, trace.output.shape[1]
    more = 2 * (0.35 + text_width("…", font)) if scenario.n_heads > drawn else 0.0  # "| …" after the drawn heads
    joined = name + columns * numbers(trace.concat[q, :columns]) + (columns - 1) * 0.2 + 0.35 * (drawn - 1) + 0.5
    joined += more
    output = d_out * numbers(trace.output[q]) + (d_out - 1) * 0.28 + 0.5 + text_width("=", font) + 0.3
    matrix = d_out * (numbers(trace.w_out) + 0.3) + 0.4
    shape = text_width("W_O", font) + 0.3
    return _BandSizes(joined, name + matrix + output + 0.6, name + shape + output + 0.6)


def _matrix_layout(numbers: list[str], columns: tuple[int, ...], rows: int, width: float,
                   height: float) -> tuple[float, bool] | None:
    """The largest type size at which a head's three matrices fit ``width × height``, and whether side
    by side (names over them) rather than one above another (names left of them); ``None``: they do not."""
    for font in BAND_SIZES:
        cell = widest(numbers, font) + 0.22
        widths = [count * cell + 0.3 for count in columns]
        tall = rows * max(text_height(font) + 0.16, 0.42) + 0.3
        if sum(widths) + 0.7 <= width and tall + 0.5 <= height:
            return font, True
        if max(widths) + 1.2 <= width and 3 * tall + 0.4 <= height:
            return font, False
    return None


@dataclass
class _Panel:
    """One head: its title, its matrices, its heat map and the lines under it."""

    head: int  # from 0
    left: float
    width: float
    title: VMobject
    matrices: VGroup  # W_Q, W_K, W_V (or their shapes), before the heat map
    fit: HeatFit
    grid: HeatGrid
    numbers: VGroup  # the cells' numbers (rows), if they carry them
    marks: VGroup  # the query's row outlined, its largest weight outlined
    scale: VGroup  # colour only: the legend
    most: VMobject  # "ball → dog: 0.30"
    z: VGroup = field(default_factory=VGroup)

    @property
    def source(self) -> str:
        return f"head{self.head + 1}"

    @property
    def centre(self) -> float:
        return self.left + self.width / 2


class MultiHead(StillFirst, ExplainerScene):
    """The sentence through h heads side by side; their z for the query joined; × W_O gives the output."""

    reading_pace = READING_PACE

    @classmethod
    def check_scenario(cls, scenario: Scenario) -> Scenario:
        """Any number of heads (the first :data:`MAX_DRAWN` drawn), and a joined row of the drawn heads of at
        most :data:`MAX_JOINED` numbers that fits."""
        h, drawn = scenario.n_heads, min(scenario.n_heads, MAX_DRAWN)
        if h > 1 and drawn * scenario.d_v > MAX_JOINED:
            raise ScenarioError(f"d_v: the multi-head scene joins at most {MAX_JOINED} numbers (drawn heads × d_v), "
                                f"this scenario has {drawn} × {scenario.d_v}")
        if h > 1 and _band_sizes(scenario, SMALLEST_SIZE).shape > 2 * HALF_WIDTH:
            d_out = scenario.multi_head_trace().output.shape[1]
            raise ScenarioError(f"w_out: the output row of {d_out} numbers does not fit the frame "
                                "at this precision (use fewer output columns or decimals)")
        return scenario

    def construct(self) -> None:
        precision = self.scenario.precision
        self.heads = [head.trace() for head in self.scenario.heads[:MAX_DRAWN]]  # the drawn heads
        self.more = self.scenario.n_heads > len(self.heads)
        for k, trace in enumerate(self.heads):
            self.add_source(f"head{k + 1}", trace, precision)
            self.add_source(f"head{k + 1}_extremes", Extremes(trace), precision)
        several = self.scenario.n_heads > 1
        if several:
            self.add_source("multi", self.scenario.multi_head_trace(), precision)
        self.header("Multi-head attention: {} " + ("heads" if several else "head"), parts=[size("n_heads")])
        self._drawn_note = self._more_heads_note()
        self.title_y = TITLE_Y - (NOTE_LINE if self.more else 0.0)  # under the note of the heads drawn
        panels = self._panels()
        self._projections(panels)
        self._looking(panels)
        self._contexts(panels)
        if not several:
            self._one_head(panels[0])
            return
        self._query_rows(panels)
        self._joined(panels)

    def _more_heads_note(self) -> VGroup:
        """Under the heading, for more heads than :data:`MAX_DRAWN`: how many, and where the rest are; the
        other notes follow it on its line."""
        note = VGroup()
        if self.more:
            note.add(self.label("heads {}–{} of {} drawn, the rest in the walkthrough", position(0, "head"),
                                position(len(self.heads) - 1), size("n_heads"), size=SMALLEST_SIZE, color=MUTED))
            note.next_to(self.heading, DOWN, buff=0.08, aligned_edge=LEFT)
        note.is_furniture = True  # type: ignore[attr-defined]
        self.add(note)
        return note

    # -- the panels, one per head ----------------------------------------------------------------
    def _panels(self) -> list[_Panel]:
        h = len(self.heads)
        if h == 1:
            panels = [self._panel(0, -HALF_WIDTH, 2 * HALF_WIDTH - ONE_HEAD_NOTE - GAP)]
        else:
            width = (2 * HALF_WIDTH - (h - 1) * GAP) / h
            panels = [self._panel(k, -HALF_WIDTH + k * (width + GAP), width) for k in range(h)]
        # every number of a head in its own panel (each panel's extent a mark that draws nothing)
        extents = {p.head: Rectangle(width=p.width, height=TOP - BOTTOM, stroke_width=0, fill_opacity=0)
                   .move_to((p.centre, (TOP + BOTTOM) / 2, 0)) for p in panels}
        self.columns("head", extents, *extents.values(), *(p.title for p in panels))
        return panels

    def _panel(self, k: int, left: float, width: float) -> _Panel:
        source, q = f"head{k + 1}", self.scenario.query
        title = self.label("head {}", position(k, "head"), size=26, color=INK)
        title.move_to((left + title.width / 2, self.title_y, 0))
        fit, grid = self._grid(k, left, width)
        numbers = cell_numbers(self, grid, source, "weights", f"{source}_extremes", size=fit.size) if fit.numbers \
            else VGroup()
        fill_cells(self, grid, source, "weights", f"{source}_extremes", WEIGHT, animate=False)
        top = self.heads[k].query_step(q).top_key
        marks = VGroup(row_box(grid, q, color=QUERY),
                       SurroundingRectangle(grid.squares[q][top], color=INK, buff=0.02, stroke_width=4))
        scale = VGroup()
        y = grid.get_bottom()[1] - LINE * 0.7
        if not fit.numbers:  # colour only: the legend on the title's line, else under the grid
            scale = legend(self, f"{source}_extremes", "weights", WEIGHT)
            if width >= LEGEND_BESIDE:
                scale.move_to((left + width - scale.width / 2, self.title_y, 0))
            else:
                scale.move_to((left + scale.width / 2, y, 0))
                y -= LINE
        tokens = self.scenario.tokens
        limit = 8 if width > 4 else 6
        most = self.label("{} → {}: {}", TokenPart(tokens[q], limit), TokenPart(tokens[top], limit),
                          value(source, "weights", q, top), size=22 if width > 4 else SMALLEST_SIZE, color=INK)
        most.move_to((left + most.width / 2, y, 0))
        matrices = self._matrices(k, left, width, grid.get_top()[1])
        return _Panel(k, left, width, title, matrices, fit, grid, numbers, marks, scale, most)

    def _grid(self, k: int, left: float, width: float) -> tuple[HeatFit, HeatGrid]:
        """Head ``k``'s heat map, as large as its panel allows above its lines (two, three in colour only)."""
        n, tokens, source = self.scenario.n_tokens, self.scenario.tokens, f"head{k + 1}"
        texts = [self.text_for(value(source, "weights", i, j)) for i in range(n) for j in range(n)]
        top = self.title_y - 0.35
        fit = fit_heat(tokens, widest(texts, 26), width=width, height=top - BOTTOM - 2 * LINE - 0.15, fill=width)
        if not fit.numbers and width < LEGEND_BESIDE:  # room for the legend under the grid
            fit = fit_heat(tokens, widest(texts, 26), width=width, height=top - BOTTOM - 3 * LINE - 0.15, fill=width)
        if not fit.numbers:  # colour only: the numbered row labels and the cells within the panel
            labels = max(text_width(f"{n} " + shorten_token(t, fit.row_limit), fit.size) for t in tokens)
            cell = min(fit.cell_w, (width - labels - 0.35) / n)
            # narrow panels (four heads, many tokens): cells taller than wide, so the row labels stay apart
            fit = replace(fit, cell_w=cell, cell_h=min(fit.cell_h, max(cell, text_height(fit.size) + 0.04)))
        grid = HeatGrid(n, n, cell_w=fit.cell_w, cell_h=fit.cell_h, size=fit.size,
                        row_tokens=None if fit.numbered else tokens,
                        row_limit=fit.row_limit, column_tokens=None if fit.numbered else tokens,
                        column_limit=fit.column_limit, upright=fit.upright)
        if fit.numbered:  # every column numbered while the numbers fit their cells, else every second, third …
            step = next(k for k in range(1, n + 1) if text_width(str(n), fit.size) + 0.06 <= k * fit.cell_w or k == n)
            grid.column_labels.submobjects = []
            for j in range(0, n, step):
                label = self.label("{}", position(j), size=fit.size, color=KEY)
                grid.column_labels.add(label.next_to(grid.brackets, UP, buff=0.12).set_x(grid.cell_center(0, j)[0]))
            grid.label_rows([self.label("{} {}", position(i), TokenPart(t, fit.row_limit), size=fit.size,
                                        color=QUERY) for i, t in enumerate(tokens)])
        grid.shift(RIGHT * (left - grid.get_left()[0]) + UP * (top - grid.get_top()[1]))
        self.rows("query", grid)  # each cell's number in its query's row and key's column
        self.columns("key", grid)
        return fit, grid

    def _matrices(self, k: int, left: float, width: float, top: float) -> VGroup:
        """Head ``k``'s W_Q, W_K, W_V side by side, else one above another, else their shapes only."""
        d_in, columns = self.scenario.d_in, (self.scenario.d_k, self.scenario.d_k, self.scenario.d_v)
        source = f"head{k + 1}"
        numbers = [self.text_for(value(source, name, i, j)) for name, count in zip(WEIGHTS, columns, strict=True)
                   for i in range(d_in) for j in range(count)]
        fits = _matrix_layout(numbers, columns, d_in, width, top - BOTTOM)
        if fits is None:
            note: VMobject = text("(their numbers: in the walkthrough)", size=SMALLEST_SIZE, color=MUTED)
            if note.width > width:  # a narrow panel (four heads): on two lines
                note = VGroup(text("(their numbers:", size=SMALLEST_SIZE, color=MUTED),
                              text("in the walkthrough)", size=SMALLEST_SIZE, color=MUTED)
                              ).arrange(DOWN, buff=0.1, aligned_edge=LEFT)
            shapes = VGroup(
                self.label("W_Q, W_K: {} × {}", size("d_in"), size("d_k"), size=SMALLEST_SIZE, color=INK),
                self.label("W_V: {} × {}", size("d_in"), size("d_v"), size=SMALLEST_SIZE, color=INK),
                note,
            ).arrange(DOWN, buff=0.15, aligned_edge=LEFT)
            return shapes.move_to((left + shapes.width / 2, top - shapes.height / 2, 0))
        font, beside = fits
        grids = []
        for name, field_name, color in zip("QKV", WEIGHTS, (QUERY, KEY, VALUE), strict=True):
            grid = self.grid(source, field_name, color=color, size=font, h_buff=0.22)
            name_tex = drop_svg_paths(MathTex(f"W_{{{name}}}" + ("" if beside else " ="), font_size=font + 8,
                                              color=color))
            if beside:
                grids.append(VGroup(name_tex.next_to(grid, UP, buff=0.12), grid))
            else:
                grids.append(VGroup(name_tex.next_to(grid, LEFT, buff=0.2), grid))
        if beside:
            block = VGroup(*grids).arrange(RIGHT, buff=0.35, aligned_edge=UP)
        else:
            block = VGroup(*grids).arrange(DOWN, buff=0.2)
            for group in grids:  # the grids' left edges line up
                group.shift(RIGHT * (grids[0][1].get_left()[0] - group[1].get_left()[0]))
        return block.move_to((left + block.width / 2, top - block.height / 2, 0))

    # -- the beats --------------------------------------------------------------------------------
    def _projections(self, panels: list[_Panel]) -> None:
        h = len(panels)
        said = (f"{self.cite(size('n_heads'))} heads, each with its own W_Q, W_K and W_V: the same sentence, "
                "looked at in different ways." if h > 1 else
                "This scenario has one head, with its W_Q, W_K and W_V.")
        self.beat(said, *(FadeIn(p.title, p.matrices, shift=DOWN * 0.1) for p in panels), run_time=1.5, wait=1.5)

    def _looking(self, panels: list[_Panel]) -> None:
        """Each head's weights as a heat map: the query's row outlined, its largest weight named."""
        q = self.scenario.query
        looks, asking = [], self.quote(q, "query")  # named before each head's weight, as said
        for p in panels:
            top = self.heads[p.head].query_step(q).top_key
            looks.append(f"head {self.cite(position(p.head, 'head'))} looks most at {self.quote(top, 'key')} "
                         f"({self.fmt(p.source, 'weights', q, top)})")
        said = (f"Each head learns its own way of looking: for {asking}, " + ", ".join(looks) + "."
                if len(panels) > 1 else f"Its weights: for {asking}, " + looks[0] + ".")
        if self.more:
            said += f" The first {self.cite(position(len(panels) - 1))} are drawn; the rest are in the walkthrough."
        animations: list[Animation] = []
        for p in panels:
            grid = p.grid
            rows = [grid.row(i) for i in range(len(grid.squares))]  # row by row: one animation per row, not per cell
            animations += [fade_out(p.matrices), fade_in(grid.brackets, grid.row_labels, grid.column_labels),
                           LaggedStart(*(fade_in(row) for row in rows), lag_ratio=0.3 / len(rows)),
                           fade_in(p.numbers, p.scale, p.marks, p.most)]
        self._note = self._heading_note("colours only: each map's range in its legend", panels)
        self.beat(said, *animations, fade_in(self._note), run_time=1.6, wait=2.4)

    def _heading_note(self, content: str, panels: list[_Panel]) -> VMobject:
        """A note under the heading, furniture like the rounding note; "colours only" where a map is
        drawn in colour only (only that, when ``content`` says nothing else)."""
        colours = any(not p.fit.numbers for p in panels)
        if not content.startswith("colours only"):
            content = ("colours only; " if colours else "") + content
        elif not colours:
            return VGroup()
        note: VMobject = self.label(content, TokenPart(self.scenario.query_token), size=SMALLEST_SIZE,
                                    color=MUTED) if "{}" in content else text(content, size=SMALLEST_SIZE, color=MUTED)
        if len(self._drawn_note):  # under the note of the heads drawn
            note.next_to(self._drawn_note, DOWN, buff=0.06, aligned_edge=LEFT)
        else:
            note.next_to(self.heading, DOWN, buff=0.08, aligned_edge=LEFT)
        note.is_furniture = True  # type: ignore[attr-defined]
        return note

    def _contexts(self, panels: list[_Panel]) -> None:
        """Each head's z for the query, under its heat map."""
        q = self.scenario.query
        for p in panels:
            room = p.width
            font = next((s for s in (24, 22) if vector_width(self, "z", p.source, "context", q, s) <= room),
                        SMALLEST_SIZE)
            p.z = vector_line(self, "z", p.source, "context", q, size=font, color=CONTEXT)
            p.z.move_to((p.left + p.z.width / 2, p.most.get_y() - LINE, 0))
        self.beat(f"Each head mixes its own values by its own weights: a z{self.cite(query_number())} per head.",
                  *(FadeIn(p.z, shift=DOWN * 0.1) for p in panels), run_time=1.2, wait=1.2)

    def _one_head(self, panel: _Panel) -> None:
        """One head: nothing to join, no W_O; said beside it."""
        lines = VGroup(
            text("One head:", size=26, color=INK),
            self.label("its z{} is the output.", query_number(), size=24, color=CONTEXT),
            text("Several heads join their z", size=22, color=MUTED),
            text("and multiply them by W_O.", size=22, color=MUTED),
        ).arrange(DOWN, buff=0.22, aligned_edge=LEFT)
        lines.move_to((panel.grid.get_right()[0] + 0.8 + lines.width / 2, panel.grid.get_y(), 0))
        self.beat(f"With one head there is nothing to join and no W_O: z{self.cite(query_number())} is the output.",
                  FadeIn(lines, shift=LEFT * 0.2), run_time=1.2, wait=2.0)

    def _query_rows(self, panels: list[_Panel]) -> None:
        """Only the query's row of each heat map stays, under flat column labels; the lines follow."""
        animations: list[Any] = []
        for p in panels:
            animations += self._to_query_row(p)
        self.play(*animations, run_time=1.2)
        self._next_note = self._heading_note("only the row of '{}' from here on", panels)

    def _to_query_row(self, p: _Panel) -> list[Any]:
        """Panel ``p`` keeps the query's row of its heat map: the others fade, the row and its lines rise."""
        grid, q = p.grid, self.scenario.query
        others = [i for i in range(len(grid.squares)) if i != q]
        animations: list[Any] = [fade_out(VGroup(*(grid.row(i) for i in others),
                                                      *(grid.row_labels[i] for i in others),
                                                      *(p.numbers[i] for i in others if p.fit.numbers)))]
        labels_y = self.title_y - 0.42
        if p.fit.upright:  # upright token labels lie down, cut to the cell's width (or staggered, to two cells')
            flat = self._flat_labels(grid, labels_y, min(p.fit.size, 24.0))
            animations.append(ReplacementTransform(grid.column_labels, flat))
            labels_bottom = flat.get_bottom()[1]
        else:
            animations.append(grid.column_labels.animate.shift(UP * (labels_y - grid.column_labels.get_y())))
            labels_bottom = labels_y - grid.column_labels.height / 2
        lift = labels_bottom - 0.2 - grid.cell_h / 2 - grid.row_y(q)
        kept = VGroup(grid.row(q), grid.row_labels[q], p.marks, *([p.numbers[q]] if p.fit.numbers else []))
        animations.append(kept.animate.shift(UP * lift))
        target = Brackets(grid.row(q).copy().shift(UP * lift), buff=0.06, serif=min(0.12, grid.cell_w / 3))
        animations.append(Transform(grid.brackets, target))
        lines = [line for line in (p.scale, p.most, p.z) if len(line) and line.get_y() < grid.get_bottom()[1]]
        if p.fit.numbers:  # the row says it: its largest weight is outlined in its cell
            animations.append(FadeOut(p.most))
            lines.remove(p.most)
        drop = target.get_bottom()[1] - LINE * 0.7 - lines[0].get_y()
        animations.append(VGroup(*lines).animate.shift(UP * drop))
        if p.most in lines and lines[-1] is p.z and p.most.width + p.z.width + 0.5 <= p.width:
            # room for z beside "ball → dog: 0.30": one line less
            animations[-1] = VGroup(*lines[:-1]).animate.shift(UP * drop)
            beside = p.most.get_center() + UP * drop + RIGHT * (p.most.width / 2 + 0.5 + p.z.width / 2)
            animations.append(p.z.animate.move_to(beside))
        return animations

    def _flat_labels(self, grid: Any, y: float, font: float) -> VGroup:
        """The tokens lying down over their columns at ``y``, each cut to its cell's width; where that cuts one,
        every other label a line lower, so that each may take two cells' width."""
        tokens = self.scenario.tokens
        one, two = column_limit(tokens, grid.cell_w - 0.08, font), column_limit(tokens, 2 * grid.cell_w - 0.2, font)
        stagger = two > one  # two cells' width shows more of some token
        limit = two if stagger else one
        line = text("Xg", size=font).height + 0.08
        return VGroup(*(token_text(t, limit=limit, size=font, color=KEY).move_to(
            (label.get_x(), y - (line if stagger and j % 2 else 0.0), 0))
            for j, (t, label) in enumerate(zip(tokens, grid.column_labels, strict=True))))

    def _joined(self, panels: list[_Panel]) -> None:
        """concat = [z of head 1 | z of head 2 | …], then concat × W_O = the output row."""
        d_v = self.scenario.d_v
        top = min(p.z.get_bottom()[1] for p in panels) - 0.2
        font = next((s for s in BAND_SIZES if _band_sizes(self.scenario, s).joined <= 2 * HALF_WIDTH), SMALLEST_SIZE)
        joined = self._concat_line(font, top - 0.25)
        product = self._product(joined[4].get_bottom()[1] - 0.12)
        left = min(joined[4].get_left()[0], product[0].get_left()[0])  # the two lines start together
        joined[4].shift(RIGHT * (left - joined[4].get_left()[0]))
        product.shift(RIGHT * (left - product[0].get_left()[0]))
        spare = product.get_bottom()[1] - BOTTOM  # the two lines in the middle of the room they have
        VGroup(joined[4], product).shift(DOWN * max(spare, 0.0) / 2)
        flights = [TransformFromCopy(p.z[2 + 2 * m], joined[1][p.head * d_v + m]) for p in panels for m in range(d_v)]
        said = f"The heads' z{self.cite(query_number())} are joined side by side: concat{self.cite(query_number())}."
        notes = [ReplacementTransform(self._note, self._next_note)] if len(self._note) else [FadeIn(self._next_note)]
        self.beat(said, FadeIn(joined[0], joined[2], joined[3]), *flights, *notes, run_time=1.8, wait=1.2)
        # the rounding note beside the ≈ it explains, under the output row
        note = [FadeIn(self.rounding_note().next_to(product[2], DOWN, buff=0.12).align_to(product[0][3], LEFT))] \
            if self.rounding_shows else []
        self.beat("One more matrix, W_O, mixes the heads back into the model's size: the output row for "
                  f"'{self.scenario.query_token}'." + self.said_rounded(),
                  FadeIn(product, shift=UP * 0.1), *note, run_time=1.8, wait=2.2)

    def _concat_line(self, font: float, y: float) -> VGroup:
        """``concat5 = [ … | … ]`` centred on the line ``y``: (brackets, numbers, bars between heads and "| …" after
        the drawn heads when there are more, name)."""
        q, d_v = self.scenario.query, self.scenario.d_v
        columns = len(self.heads) * d_v  # the drawn heads' z
        entries = [self.number("multi", "concat", q, c, size=font, color=CONTEXT) for c in range(columns)]
        bars = [text("|", size=font, color=MUTED) for _ in range(columns // d_v - 1)]
        row = VGroup(*(part for c, entry in enumerate(entries)
                       for part in ([bars[c // d_v - 1]] if c and c % d_v == 0 else []) + [entry]))
        if self.more:  # the other heads' z: elided
            bars += [text("|", size=font, color=MUTED), text("…", size=font, color=MUTED)]
            row.add(*bars[-2:])
        row.arrange(RIGHT, buff=0.2)
        for bar in bars:
            bar.set_y(row.get_y())
        row.add(composite_slots(self, entries, d_v))
        name = self.label("concat{} =", query_number(), size=font, color=MUTED)
        brackets = Brackets(row, buff=0.1)
        line = VGroup(name, VGroup(brackets, row)).arrange(RIGHT, buff=0.25).move_to((0, y, 0))
        return VGroup(brackets, VGroup(*entries), VGroup(*bars), name, line)

    def _product(self, top: float) -> VGroup:
        """``concat5 × W_O = [output]`` under the joined row: W_O's numbers while they fit, else its shape."""
        q = self.scenario.query
        trace = self.sources["multi"][0]
        rows, d_out = (int(n) for n in np.shape(trace.w_out))
        room = top - BOTTOM - 0.45  # W_O's name under it
        # W_O's rows multiply every head's z: written only when every head is drawn
        font = None if self.more else next((s for s in BAND_SIZES if _band_sizes(self.scenario, s).product
                                            <= 2 * HALF_WIDTH and rows * max(text_height(s) * 0.8 + 0.16, 0.42)
                                            <= room), None)
        size_of = font or next((s for s in BAND_SIZES if _band_sizes(self.scenario, s).shape <= 2 * HALF_WIDTH),
                               SMALLEST_SIZE)
        name = self.label("concat{} ×", query_number(), size=size_of, color=MUTED)
        if font is not None:
            matrix: VMobject = self.grid("multi", "w_out", size=font, h_buff=0.3)
            title: VMobject = drop_svg_paths(MathTex("W_{O}", font_size=font + 8, color=INK))
            signs = {self.equals(value("multi", "output", q, m), [f for c in range(rows) for f in (
                value("multi", "concat", q, c), value("multi", "w_out", c, m))], op="dot") for m in range(d_out)}
            sign = "≈" if "≈" in signs else "="
        else:  # too many rows or columns to write: W_O by its shape, its numbers said to be elsewhere
            matrix = drop_svg_paths(MathTex("W_{O}", font_size=size_of + 8, color=INK))
            title = text("(W_O's numbers: in the walkthrough)", size=SMALLEST_SIZE, color=MUTED)
            sign = "="  # the definition, not a sum of shown numbers
        values = VGroup(*(self.number("multi", "output", q, m, size=size_of, color=CONTEXT) for m in range(d_out)))
        values.arrange(RIGHT, buff=0.28)
        result = VGroup(Brackets(values, buff=0.1), values)
        line = VGroup(name, matrix, text(sign, size=size_of + 4, color=INK), result).arrange(RIGHT, buff=0.3)
        line.move_to((0, top - matrix.height / 2, 0))
        label = self.label("output{}", query_number(), size=SMALLEST_SIZE, color=MUTED).next_to(result, DOWN, buff=0.15)
        if font is not None:
            title.next_to(matrix, DOWN, buff=0.08)
        else:  # the note is wider than W_O's name: under the whole line
            title.next_to(label, DOWN, buff=0.12).align_to(name, LEFT)
        return VGroup(line, title, label)
