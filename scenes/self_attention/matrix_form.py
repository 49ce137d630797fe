"""Scene 7: the matrix form — softmax(Q Kᵀ/√d_k) V computes every context vector at once.

The score matrix is a token × token grid: with its numbers in the cells while they are legible,
else in colour only (columns numbered, each row label its key), the numbers of the query's row
written beside it to the end (the second query's weights at the last). The softmax turns it into
a heat map of weights (lightness over the grid's colour scale, ``attention_math.heat``, a legend
for its ends); × V gives Z, whose rows are the context vectors.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from manim import (
    DOWN,
    LEFT,
    RIGHT,
    UP,
    Animation,
    Arrow,
    FadeIn,
    FadeOut,
    FadeTransform,
    LaggedStart,
    MathTex,
    MoveToTarget,
    ReplacementTransform,
    TransformFromCopy,
    TransformMatchingTex,
    VGroup,
)

from attention_math.heat import Extremes
from scenes.base import ExplainerScene
from scenes.facts import position, query_number, value
from scenes.kit.board import colours_only, token_grid
from scenes.kit.formula import formula_title
from scenes.kit.heatmap import (
    HeatFit,
    HeatGrid,
    Legend,
    cell_numbers,
    fill_cells,
    fit_heat,
    key_column,
    legend,
    opacity_of,
    roomier_rows,
    row_box,
    vector_line,
    vector_width,
    widest,
)
from scenes.kit.layout import BOTTOM, HALF_WIDTH, TOP
from scenes.kit.palette import CONTEXT, DIM, INK, MUTED, QUERY, VALUE, WEIGHT
from scenes.kit.text import SMALLEST_SIZE, shorten_token, text

__all__ = ["MatrixForm"]

OPERATOR = 1.0  # room for "×" or "→" between the weights and V / Z
STRIP_GAP = 0.3  # between a colour-only grid and the column of its query's row
BAND = 0.62  # the band under the grids: the grid's title and legend, the line z_i = (…)
GRID_FIELDS = ("scores", "scaled_scores", "weights")
HUES = {"scores": INK, "scaled_scores": INK, "weights": WEIGHT}


@dataclass
class _Board:
    """The token grid, V's grid (Z takes its place), and how they are drawn."""

    fit: HeatFit
    grid: HeatGrid
    values: HeatGrid
    titles: dict[str, MathTex]
    numbers: VGroup = field(default_factory=VGroup)  # the grid's numbers now (rows), if it carries them
    strip: VGroup = field(default_factory=VGroup)  # colour only: the query row's numbers beside the grid
    legend: VGroup = field(default_factory=VGroup)
    lit: VGroup = field(default_factory=VGroup)  # colour only: an outline on the row the strip writes out
    title: str = "scores"  # the field the grid shows now


class MatrixForm(ExplainerScene):
    """Q Kᵀ as a token × token grid, scaled, softmaxed into a heat map, times V gives Z."""

    board: _Board  # what the beats draw on (the geometry tests look at it)

    def construct(self) -> None:
        self.add_source("extremes", Extremes(self.trace), self.scenario.precision)
        self.header("The matrix form")
        board = self.board = self._board()
        self._formula_large()
        self._score_matrix(board)
        self._heat_map(board)
        self._row_sums(board)
        self._times_values(board)
        self._rows_of_z(board)

    # -- layout from the data -------------------------------------------------------------
    def _texts(self, name: str, rows: int, columns: int) -> list[str]:
        return [self.text_for(value("trace", name, i, j)) for i in range(rows) for j in range(columns)]

    def _fit(self) -> HeatFit:
        """The grid's drawing, with room right of it for V (or Z) after the operator and, beside a
        colour-only grid, for the column of the query's row between them (:meth:`_strip`)."""
        n, d_v, tokens, q = self.scenario.n_tokens, self.scenario.d_v, self.scenario.tokens, self.scenario.query
        grid_numbers = [t for name in GRID_FIELDS for t in self._texts(name, n, n)]
        value_w = widest(self._texts("values", n, d_v) + self._texts("context", n, d_v), 26)
        most = max(10, len(shorten_token(tokens[q], 10**9)))  # the query's column label whole, if it fits
        fit = HeatFit(True, 0, 0, 0, 0, 0, False)
        with_numbers = d_v * (value_w * 24 / 26 + 0.25) + 0.3
        colour_only = d_v * (value_w * SMALLEST_SIZE / 26 + 0.25) + 0.3 + STRIP_GAP + self._strip_width()
        for right_w in (with_numbers, max(with_numbers, colour_only)):
            width = 2 * HALF_WIDTH - OPERATOR - right_w
            # 0.25 kept free under the header (its rounding note)
            fit = fit_heat(tokens, widest(grid_numbers, 26), width=width, height=TOP - BOTTOM - BAND - 0.25,
                           fill=min(width, 10.6 - OPERATOR - right_w), upright_most=most, query=q,
                           noted=True)
            if fit.numbers:
                return fit
        return roomier_rows(fit, tokens, width)

    def _strip_width(self) -> float:
        """The column of the query's row beside a colour-only grid: "k16", a gap, the widest number."""
        n = self.scenario.n_tokens
        numbers = [t for name in GRID_FIELDS for t in self._texts(name, n, n)]
        return widest([f"k{n}"], SMALLEST_SIZE) + 0.3 + max(widest(numbers, SMALLEST_SIZE),
                                                            widest([f"row {n}"], SMALLEST_SIZE))

    def _board(self) -> _Board:
        n, d_v, tokens = self.scenario.n_tokens, self.scenario.d_v, self.scenario.tokens
        fit = self._fit()
        value_w = widest(self._texts("values", n, d_v) + self._texts("context", n, d_v), 26)
        grid = token_grid(self, fit, tokens)
        value_size = fit.size if fit.numbers else SMALLEST_SIZE
        values = HeatGrid(n, d_v, cell_w=value_w * value_size / 26 + 0.25, cell_h=fit.cell_h, size=value_size)
        strip = 0.0 if fit.numbers else STRIP_GAP + self._strip_width()
        total = grid.width + strip + OPERATOR + values.width
        grid.shift(RIGHT * (-total / 2 - grid.get_left()[0]))
        grid.shift(UP * ((TOP + BOTTOM + BAND) / 2 - 0.125 - grid.get_y()))
        values.shift(RIGHT * (grid.get_right()[0] + strip + OPERATOR - values.get_left()[0]))
        values.shift(UP * (grid.row_y(0) - values.row_y(0)))
        titles = {
            "scores": formula_title("Q", "K^{\\top}", font_size=28),
            "scaled_scores": formula_title("Q", "K^{\\top}", "/\\sqrt{d_k}", font_size=28),
            "weights": formula_title("\\mathrm{softmax}\\big(", "Q", "K^{\\top}", "/\\sqrt{d_k}", "\\big)",
                                     font_size=28),
        }
        for title in titles.values():
            title.next_to(grid.brackets, DOWN, buff=0.18).align_to(grid, LEFT)
        # every number in its place: a cell's in its query's row and key's column; V's rows are the keys',
        # Z's the queries'
        self.rows("query", grid)
        self.columns("key", grid)
        self.rows("key", values)
        self.rows("query", values)
        return _Board(fit, grid, values, titles)

    # -- numbers on the grid --------------------------------------------------------------
    def _grid_numbers(self, board: _Board, name: str) -> VGroup:
        """The grid's cells' numbers (ink against each cell's fill), placed; nothing if colour only."""
        if not board.fit.numbers:
            return VGroup()
        return cell_numbers(self, board.grid, "trace", name, "extremes", size=board.fit.size)

    def _fill(self, board: _Board, name: str, *, animate: bool) -> list[Any]:
        """The cells filled by ``name`` over its colour scale (the animations, or at once)."""
        board.title = name
        return fill_cells(self, board.grid, "trace", name, "extremes", HUES[name], animate=animate)

    def _strip(self, board: _Board, name: str, row: int) -> VGroup:
        """Colour only: row ``row`` of ``name`` as a column beside the grid, a line per key."""
        if board.fit.numbers:
            return VGroup()
        head = self.label("row {}", position(row), size=SMALLEST_SIZE, color=QUERY)
        left = board.grid.get_right()[0] + STRIP_GAP
        return key_column(self, board.grid, [("trace", name, row, HUES[name])], left=left, heads=[head])

    def _legend(self, board: _Board, name: str) -> Legend:
        scale = legend(self, "extremes", name, HUES[name])
        return scale.next_to(board.titles[name], RIGHT, buff=0.35)

    def _note(self, board: _Board) -> list[Animation]:
        """Colour only: say so, in the corner above the row labels and left of the column numbers."""
        if board.fit.numbers:
            return []
        return [FadeIn(colours_only(board.grid))]

    # -- the beats ----------------------------------------------------------------------------
    def _formula_large(self) -> None:
        big = self.formula.copy().scale(2.4).move_to(UP * 0.4)
        self.beat("All of self-attention in one line: softmax(Q Kᵀ/√d_k) V.",
                  TransformFromCopy(self.formula, big), run_time=1.5, wait=1.5)
        self.play(ReplacementTransform(big, self.formula), run_time=1)

    def _score_matrix(self, board: _Board) -> None:
        """Q Kᵀ, then ÷ √d_k: the numbers in the cells, or the colours and the query's row."""
        grid, q = board.grid, self.scenario.query
        self._fill(board, "scores", animate=False)
        cells = [square for row in grid.squares for square in row]
        board.numbers = self._grid_numbers(board, "scores")
        board.strip = self._strip(board, "scores", q)
        board.lit = VGroup(row_box(grid, q)) if len(board.strip) else VGroup()
        board.legend = self._legend(board, "scores")
        self.beat(
            "The score matrix Q Kᵀ: every query against every key, a row per query and a column per key.",
            FadeIn(grid.brackets, grid.row_labels, grid.column_labels, board.titles["scores"]),
            LaggedStart(*(FadeIn(c) for c in cells), lag_ratio=0.2 / len(cells)),
            *(FadeIn(row, shift=DOWN * 0.1) for row in board.numbers), FadeIn(board.legend), *self._note(board),
            FadeIn(board.strip, board.lit), self._light("query", "key"), run_time=2.5, wait=1.2,
        )
        if self.trace.scaled:
            self._change_numbers(board, "scaled_scores", "Divide every score by √d_k.", "query", "key", "scale")

    def _change_numbers(self, board: _Board, name: str, caption: str, *lit: str, **options: float) -> None:
        """The grid (colours, numbers, strip, legend, title) turns from its current field to ``name``."""
        old, numbers, strip, legend = board.title, board.numbers, board.strip, board.legend
        fills = self._fill(board, name, animate=True)
        board.numbers = self._grid_numbers(board, name)
        board.strip = self._strip(board, name, self.scenario.query)
        board.legend = self._legend(board, name)
        self.beat(
            caption, *fills,
            *([FadeTransform(numbers, board.numbers)] if board.fit.numbers else []),
            *([FadeTransform(strip[2], board.strip[2]), ReplacementTransform(strip[:2], board.strip[:2])]
              if not board.fit.numbers else []),
            FadeTransform(legend, board.legend), TransformMatchingTex(board.titles[old], board.titles[name]),
            self._light(*lit), run_time=options.get("run_time", 1.5), wait=options.get("wait", 1.2),
        )

    def _heat_map(self, board: _Board) -> None:
        """The row-wise softmax turns the grid into a heat map of weights."""
        self._change_numbers(board, "weights", "A softmax along each row turns the scores into weights: a heat map.",
                             "query", "key", "scale", "softmax", run_time=2.0, wait=1.5)

    def _row_sums(self, board: _Board) -> None:
        """Each row of weights adds up to one: the sums beside the rows, where V will come."""
        n = self.scenario.n_tokens
        size = board.fit.size if board.fit.numbers else SMALLEST_SIZE
        sums = VGroup()
        for i in range(n):
            terms = [value("trace", "weights", i, j) for j in range(n)]
            sign = self.equals(value("trace", "weights", i, reduce="sum"), terms)
            line = VGroup(text(f"Σ {sign}", size=size, color=MUTED),
                          self.number("trace", "weights", i, reduce="sum", size=size, color=WEIGHT))
            sums.add(line.arrange(RIGHT, buff=0.12).move_to((0, board.grid.row_y(i), 0)))
        sums.align_to(board.values, LEFT)
        self.rows("query", board.grid, sums)  # each row's sum level with its row
        self.beat("Each row of weights adds up to one." + self.said_rounded(),
                  LaggedStart(*(FadeIn(s) for s in sums), lag_ratio=0.1), *self._rounding(), run_time=1.5)
        self.play(FadeOut(sums), run_time=0.5)

    def _rounding(self) -> list[Animation]:
        """The rounding note, the first time a ``≈`` is written."""
        if not self.rounding_shows or getattr(self, "_noted", False):
            return []
        self._noted = True
        return [FadeIn(self.rounding_note())]

    def _times_values(self, board: _Board) -> None:
        """× V, then = Z: each row of Z mixes the value rows by that row's weights."""
        grid, values_grid, n, d_v = board.grid, board.values, self.scenario.n_tokens, self.scenario.d_v
        size = values_grid.size
        values = values_grid.place([[self.number("trace", "values", j, m, size=size, color=VALUE)
                                     for m in range(d_v)] for j in range(n)])
        left = board.strip.get_right()[0] if len(board.strip) else grid.brackets.get_right()[0]
        between = np.array([(left + values_grid.get_left()[0]) / 2, grid.cells.get_y(), 0])
        times = MathTex("\\times", font_size=44, color=INK).move_to(between)
        v_title = formula_title("V", font_size=40).next_to(values_grid.brackets, UP, buff=0.15)
        self.beat("Multiply the weights by V, the values: a row per token.",
                  FadeIn(values_grid.brackets, values, v_title, times, shift=LEFT * 0.3), self._light(),
                  run_time=1.5, wait=1.2)
        context = values_grid.place([[self.number("trace", "context", i, m, size=size, color=CONTEXT)
                                      for m in range(d_v)] for i in range(n)])
        z_title = formula_title("Z", font_size=40).move_to(v_title)
        arrow = Arrow(LEFT * 0.4, RIGHT * 0.4, buff=0, color=MUTED, stroke_width=3).move_to(times)
        by_v = formula_title("\\times", "V", font_size=34).next_to(arrow, UP, buff=0.1)
        self.beat("Weights × V = Z: each row of Z mixes the value rows by that row's weights.",
                  FadeTransform(values, context), ReplacementTransform(v_title, z_title),
                  ReplacementTransform(times, arrow), FadeIn(by_v), run_time=2, wait=1.5)
        self.context = context

    def _rows_of_z(self, board: _Board) -> None:
        """The query's row gives its z, as before; then another token's row gives its own (beside a
        colour-only grid, its weights in the column the query's had)."""
        q, other = self.scenario.query, self.second_query
        weights_box = board.lit[0] if len(board.lit) else row_box(board.grid, q)
        z_box = row_box(board.values, q)
        z_line = self._z_line(board, q)
        said = f"The row of {self.quote(q, 'query')} gives z{self.cite(query_number())} = ("
        said += ", ".join(self.fmt("trace", "context", q, m) for m in range(self.scenario.d_v))
        arriving = VGroup(z_box) if len(board.lit) else VGroup(weights_box, z_box)
        self.beat(said + "), the same as before.", *self._focus(board, q), FadeIn(arriving),
                  TransformFromCopy(self.context[q], z_line[2::2]), FadeIn(z_line[:2], z_line[3::2]),
                  run_time=2, wait=1.5)
        next_line = self._z_line(board, other)
        weights_box.generate_target().move_to(row_box(board.grid, other))
        z_box.generate_target().move_to(row_box(board.values, other))
        strip = self._strip(board, "weights", other)
        moves = [FadeTransform(board.strip[2], strip[2]), ReplacementTransform(board.strip[:2], strip[:2])] \
            if len(strip) else []
        self.beat("Every token gets its own context vector, all in one matrix product.",
                  *self._focus(board, other), MoveToTarget(weights_box), MoveToTarget(z_box), FadeOut(z_line),
                  TransformFromCopy(self.context[other], next_line[2::2]), FadeIn(next_line[:2], next_line[3::2]),
                  *moves, run_time=2, wait=2)
        board.strip = strip

    def _focus(self, board: _Board, row: int) -> list[object]:
        """Light row ``row`` of the heat map (cells, numbers, label) and dim the others."""
        matrix = np.asarray(self.trace.weights)
        low, high = (self.value_of(value("extremes", "weights", k)) for k in (0, 1))
        animations: list[object] = []
        for i, squares in enumerate(board.grid.squares):
            share = 1.0 if i == row else DIM
            animations += [s.animate.set_fill(opacity=opacity_of(float(matrix[i, j]), low, high) * share)
                           for j, s in enumerate(squares)]
            animations.append(board.grid.row_labels[i].animate.set_opacity(share))
            if board.fit.numbers:
                animations.append(board.numbers[i].animate.set_opacity(share))
        return animations

    def _light(self, *parts: str) -> MoveToTarget:
        """Light parts of the corner formula (all when none are named)."""
        self.formula.generate_target()
        self.formula.target.light(*parts)
        return MoveToTarget(self.formula)

    def _z_line(self, board: _Board, row: int) -> VGroup:
        """z_i = (…) in the band under Z, inside the frame and clear of the legend."""
        room = HALF_WIDTH - board.legend.get_right()[0] - 0.3
        size = next((s for s in (24, 22) if vector_width(self, "z", "trace", "context", row, s) <= room),
                    SMALLEST_SIZE)
        line = vector_line(self, "z", "trace", "context", row, size=size, color=CONTEXT)
        line.next_to(board.values.brackets, DOWN, buff=0.18)
        x = min(board.values.brackets.get_x(), HALF_WIDTH - line.width / 2)
        x = max(x, board.legend.get_right()[0] + 0.3 + line.width / 2)
        return line.shift(RIGHT * (x - line.get_x()))
