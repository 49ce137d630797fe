"""Scene 6: the matrix form — softmax(Q Kᵀ/√d_k) V computes every context vector at once."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from manim import (
    DOWN,
    LEFT,
    RIGHT,
    UP,
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

from scenes.base import ExplainerScene
from scenes.facts import position
from scenes.kit.formula import formula_title
from scenes.kit.heatmap import TokenGrid, fit_lattice, focus_row, heat_colors, row_box, row_sums, vector_line
from scenes.kit.layout import BOTTOM, TOP
from scenes.kit.palette import CONTEXT, INK, MUTED, VALUE, WEIGHT

__all__ = ["MatrixForm"]

OPERATOR = 1.1  # room for "×" or "→" between the weights and V / Z
Z_LINE = 0.9  # room for the line z_i = (…) under the grids


@dataclass
class _Grids:
    """The score grid (wide cells), the weight grid it becomes, V's grid, and their titles."""

    scores: TokenGrid
    weights: TokenGrid
    values: TokenGrid
    titles: dict[str, MathTex]


class MatrixForm(ExplainerScene):
    """Q Kᵀ as a token × token grid, scaled, softmaxed into a heat map, times V gives Z."""

    def construct(self) -> None:
        self.header("The matrix form")
        grids = self._grids()
        self._formula_large()
        scores = self._score_matrix(grids)
        weights = self._heat_map(grids, scores)
        context = self._times_values(grids)
        self._rows_of_z(grids, weights, context)

    # -- layout from the data -------------------------------------------------------------
    def _grids(self) -> _Grids:
        tokens, n, d_v = self.scenario.tokens, self.scenario.n_tokens, self.scenario.d_v
        titles = {
            "scores": formula_title("Q", "K^{\\top}"),
            "scaled": formula_title("Q", "K^{\\top}", "/\\sqrt{d_k}"),
            "weights": formula_title("\\mathrm{softmax}\\big(", "Q", "K^{\\top}", "/\\sqrt{d_k}", "\\big)"),
        }
        title_h = max(t.height for t in titles.values()) + 0.12
        score_fields = [("trace", "scores"), ("trace", "scaled_scores")]
        weight_fields = [("trace", "weights")]
        value_fields = [("trace", "values"), ("trace", "context")]
        lattice = fit_lattice(
            self, tokens,
            lambda lat: max(
                lat.block_width(tokens, n, score_fields),
                lat.block_width(tokens, n, weight_fields) + OPERATOR + lat.block_width(tokens, d_v, value_fields),
            ),
            height=TOP - BOTTOM - title_h - 0.8 - Z_LINE,
        )
        # the scores need wider cells than the weights: the grid narrows at the softmax
        score_grid = TokenGrid(lattice, tokens, n, lattice.cell_width(score_fields), column_tokens=tokens)
        weights_grid = TokenGrid(lattice, tokens, n, lattice.cell_width(weight_fields), column_tokens=tokens)
        values_grid = TokenGrid(lattice, tokens, d_v, lattice.cell_width(value_fields), row_color=MUTED)
        # centred across the frame, and in the height left by the header and the subtitles
        total = weights_grid.width + OPERATOR + values_grid.width
        spare = (TOP - title_h - weights_grid.height) - (BOTTOM + Z_LINE)
        weights_grid.shift(RIGHT * (-total / 2 - weights_grid.get_left()[0]))
        weights_grid.shift(UP * (TOP - title_h - spare / 2 - weights_grid.get_top()[1]))
        values_grid.next_to(weights_grid, RIGHT, buff=OPERATOR).align_to(weights_grid.cells, UP)
        score_grid.align_to(weights_grid, UP)
        score_grid.shift(RIGHT * (weights_grid.cells.get_left()[0] - score_grid.cells.get_left()[0]))
        score_grid.shift(LEFT * max(0.0, score_grid.get_right()[0] - 6.8))
        for name, title in titles.items():
            grid = weights_grid if name == "weights" else score_grid
            title.next_to(grid, UP, buff=0.12).set_x(grid.cells.get_x())
        return _Grids(score_grid, weights_grid, values_grid, titles)

    # -- the beats ----------------------------------------------------------------------------
    def _formula_large(self) -> None:
        big = self.formula.copy().scale(2.4).move_to(UP * 0.4)
        self.beat("All of self-attention in one line: softmax(Q Kᵀ/√d_k) V.",
                  TransformFromCopy(self.formula, big), run_time=1.5, wait=1.5)
        self.play(ReplacementTransform(big, self.formula), run_time=1)

    def _score_matrix(self, grids: _Grids) -> VGroup:
        """Q Kᵀ, then ÷ √d_k, on the wide grid."""
        grid, titles = grids.scores, grids.titles
        scores = grid.numbers(self, "trace", "scores", WEIGHT)
        self.add(grid.cells)
        self.beat(
            "The score matrix Q Kᵀ: every query against every key, a row per query and a column per key.",
            FadeIn(titles["scores"], grid.brackets, grid.row_labels, grid.column_labels),
            LaggedStart(*(FadeIn(row, shift=DOWN * 0.1) for row in scores), lag_ratio=0.15),
            self._light("query", "key"), run_time=2.5, wait=1.2,
        )
        if not self.trace.scaled:
            return scores
        scaled = grid.numbers(self, "trace", "scaled_scores", WEIGHT)
        self.beat(
            "Divide every score by √d_k.",
            FadeTransform(scores, scaled), TransformMatchingTex(titles["scores"], titles["scaled"]),
            self._light("query", "key", "scale"), run_time=1.5, wait=1.2,
        )
        return scaled

    def _heat_map(self, grids: _Grids, scaled: VGroup) -> VGroup:
        """The row-wise softmax turns the grid into a heat map of weights; each row adds up to one."""
        titles = grids.titles
        weights, _ = heat_colors(self, grids.weights, "trace", animate=False)
        self.beat(
            "A softmax along each row turns the scores into weights: a heat map.",
            # the grid first, so the numbers land on top of the heat-map cells
            ReplacementTransform(grids.scores, grids.weights), FadeTransform(scaled, weights),
            TransformMatchingTex(titles["scaled" if self.trace.scaled else "scores"], titles["weights"]),
            self._light("query", "key", "scale", "softmax"), run_time=2, wait=1.5,
        )
        sums = row_sums(self, grids.weights, "trace")
        self.beat("Each row of weights adds up to one.", LaggedStart(*map(FadeIn, sums), lag_ratio=0.1), run_time=1.5)
        self.play(FadeOut(sums), run_time=0.5)
        return weights

    def _times_values(self, grids: _Grids) -> VGroup:
        """× V, then = Z: each row of Z mixes the value rows by that row's weights."""
        values_grid = grids.values
        values = values_grid.numbers(self, "trace", "values", VALUE)
        times = MathTex("\\times", font_size=40, color=INK).move_to(_between(grids.weights, values_grid))
        v_title = formula_title("V").next_to(values_grid.brackets, UP, buff=0.15)
        self.beat(
            "Multiply the weights by V, the values: a row per token.",
            FadeIn(values_grid.brackets, values_grid.row_labels, values, v_title, times, shift=LEFT * 0.3),
            self._light(), run_time=1.5, wait=1.2,
        )
        context = values_grid.numbers(self, "trace", "context", CONTEXT)
        z_title = formula_title("Z").move_to(v_title)
        arrow = Arrow(LEFT * 0.45, RIGHT * 0.45, buff=0, color=MUTED, stroke_width=3).move_to(times)
        by_v = formula_title("\\times", "V").scale(0.8).next_to(arrow, UP, buff=0.08)
        self.beat(
            "Weights × V = Z: each row of Z mixes the value rows by that row's weights.",
            FadeTransform(values, context), ReplacementTransform(v_title, z_title),
            ReplacementTransform(times, arrow), FadeIn(by_v), run_time=2, wait=1.5,
        )
        return context

    def _rows_of_z(self, grids: _Grids, weights: VGroup, context: VGroup) -> None:
        """The query's row gives its z, as before; then another token's row gives its own."""
        q, other, tokens = self.scenario.query, self.second_query, self.scenario.tokens
        weight_values = np.asarray(self.trace.weights)
        weights_box, z_box = row_box(grids.weights, q), row_box(grids.values, q)
        z_line = self._z_line(q, grids.values)
        said = f"The row of '{tokens[q]}' gives z{self.cite(position(q))} = ("
        said += ", ".join(self.fmt("trace", "context", q, m) for m in range(self.scenario.d_v))
        self.beat(
            said + "), the same as before.",
            *focus_row(grids.weights, weights, weight_values, q), FadeIn(weights_box, z_box),
            TransformFromCopy(context[q], z_line[2::2]), FadeIn(z_line[:2], z_line[3::2]), run_time=2, wait=1.5,
        )
        next_line = self._z_line(other, grids.values)
        weights_box.generate_target().move_to(row_box(grids.weights, other))
        z_box.generate_target().move_to(row_box(grids.values, other))
        self.beat(
            "Every token gets its own context vector, all in one matrix product.",
            *focus_row(grids.weights, weights, weight_values, other), MoveToTarget(weights_box), MoveToTarget(z_box),
            FadeOut(z_line), TransformFromCopy(context[other], next_line[2::2]), FadeIn(next_line[:2], next_line[3::2]),
            run_time=2, wait=2,
        )

    def _light(self, *parts: str) -> MoveToTarget:
        """Light parts of the corner formula (all when none are named)."""
        self.formula.generate_target()
        self.formula.target.light(*parts)
        return MoveToTarget(self.formula)

    def _z_line(self, row: int, grid: TokenGrid) -> VGroup:
        """z_i = (…) under Z, inside the frame."""
        line = vector_line(self, "z", "trace", "context", row, size=max(grid.size, 24), color=CONTEXT)
        line.next_to(grid.cells, DOWN, buff=0.35).set_x(grid.cells.get_x())
        return line.shift(LEFT * max(0.0, line.get_right()[0] - 6.8))


def _between(left: TokenGrid, right: TokenGrid) -> np.ndarray:
    """The point between two grids, at the height of the rows."""
    return np.array([(left.brackets.get_right()[0] + right.row_labels.get_left()[0]) / 2, left.cells.get_y(), 0])
