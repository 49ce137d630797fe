"""Scene 2: projection into Q, K, V — X times three learned matrices, one entry built by hand."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from manim import (
    DOWN,
    LEFT,
    RIGHT,
    UP,
    FadeIn,
    FadeOut,
    LaggedStart,
    MathTex,
    ReplacementTransform,
    Text,
    TransformFromCopy,
    VGroup,
)

from scenes.base import ExplainerScene
from scenes.facts import Fact, size
from scenes.kit.grids import NumberGrid
from scenes.kit.layout import BOTTOM, HALF_WIDTH, fit_scale, fit_width
from scenes.kit.palette import DIM, EMBEDDING, HIGHLIGHT, KEY, MUTED, QUERY, VALUE
from scenes.kit.text import text

__all__ = ["Projection"]

ROLES = (("query", "w_query", "queries", "Q", QUERY, "d_k"), ("key", "w_key", "keys", "K", KEY, "d_k"),
         ("value", "w_value", "values", "V", VALUE, "d_v"))
TOP = 2.8
MIN_SCALE = 20 / 26  # numbers drawn at 26 stay at 20 or more


@dataclass
class _Stage:
    """One role's weights (above) and result (beside X, row for row)."""

    w: NumberGrid
    w_tag: VGroup
    m: NumberGrid
    m_tag: VGroup
    size: str  # "d_k" or "d_v"

    @property
    def group(self) -> VGroup:
        return VGroup(self.w, self.w_tag, self.m, self.m_tag)


class Projection(ExplainerScene):
    """X (n × d_in) times W_Q, W_K, W_V (d_in × d_k) gives Q, K, V (n × d_k), laid out as in a hand calculation."""

    def construct(self) -> None:
        self.header("Projection into Q, K, V", "query", "key", "value")
        x_grid, x_tag, stages, scale = self._layout()
        self.beat(f"X: one row per token, each embedded in {self.cite(size('d_in'))} dimensions — "
                  f"{self.cite(size('n_tokens'))} × {self.cite(size('d_in'))}.",
                  FadeIn(x_grid, shift=RIGHT * 0.3), FadeIn(x_tag), wait=1.2)
        shapes = self._first_weights(stages["query"], scale)
        self._one_entry(x_grid, stages["query"], shapes, scale)
        self.play(shapes.animate.set_opacity(DIM), run_time=0.4)
        self.beat("Each query is its embedding times W_Q.",
                  self._fill(x_grid, stages["query"], skip=(self.scenario.query, 0)), run_time=1.8, wait=0.8)
        last = self._keys_and_values(x_grid, stages, shapes)
        self._side_by_side(x_grid, x_tag, last)

    # -- layout: X bottom-left, each W above its result, the result's rows beside X's ----------------
    def _layout(self) -> tuple[NumberGrid, VGroup, dict[str, _Stage], float]:
        x_grid = self.grid("trace", "embeddings", row_labels=self.scenario.tokens, color=EMBEDDING)
        x_tag = self._tag("X", size("d_in"), EMBEDDING).next_to(x_grid.brackets, DOWN, buff=0.15)
        x_tag.set_x(x_grid.body.get_x())
        entries = {f: self._entries(f, role[4]) for role in ROLES for f in role[1:3]}
        stages = self._stages(x_grid, x_tag, entries, labelled=True)
        if fit_scale(VGroup(x_grid, x_tag, *(s.group for s in stages.values()))) < MIN_SCALE:
            # the rows of each result sit on the rows of X, whose labels then name both
            stages = self._stages(x_grid, x_tag, entries, labelled=False)
        everything = VGroup(x_grid, x_tag, *(s.group for s in stages.values()))
        scale = fit_scale(everything, height=TOP - BOTTOM, width=2 * HALF_WIDTH)
        everything.scale(scale).move_to((0, (TOP + BOTTOM) / 2, 0))
        return x_grid, x_tag, stages, scale

    def _stages(self, x_grid: NumberGrid, x_tag: VGroup, entries: dict[str, list[list[Text]]], *,
                labelled: bool) -> dict[str, _Stage]:
        """For each role its W (above) and result (beside X, row for row), sharing one cell width."""
        width = max(e.width for rows in entries.values() for row in rows for e in row)
        stages = {}
        for role, w_field, m_field, name, color, d in ROLES:
            w_grid = _grid(entries[w_field], None, color, width)
            m_grid = _grid(entries[m_field], self.scenario.tokens if labelled else None, color, width)
            m_grid.next_to(x_grid, RIGHT, buff=0.55).align_to(x_grid.brackets, UP)
            w_grid.next_to(m_grid.brackets, UP, buff=0.3).align_to(m_grid.brackets, RIGHT)
            w_tag = VGroup(MathTex(f"W_{name}", color=color, font_size=36),
                           self.label("{} × {}", size("d_in"), size(d), color=MUTED))
            w_tag.arrange(DOWN, buff=0.12).next_to(w_grid.brackets, LEFT, buff=0.3)
            m_tag = self._tag(name, size(d), color).next_to(m_grid.brackets, DOWN, buff=0.15)
            m_tag.set_x(m_grid.body.get_x()).align_to(x_tag, DOWN)
            stages[role] = _Stage(w_grid, w_tag, m_grid, m_tag, d)
        return stages

    def _entries(self, field: str, color: str) -> list[list[Text]]:
        """Every entry of a trace matrix, drawn and recorded."""
        rows, columns = np.asarray(getattr(self.trace, field)).shape
        return [[self.number("trace", field, i, j, color=color) for j in range(columns)] for i in range(rows)]

    def _tag(self, name: str, columns: Fact, color: str) -> VGroup:
        """A matrix's name and shape (n × columns), side by side, for beneath it."""
        shape = self.label("{} × {}", size("n_tokens"), columns, color=MUTED)
        return VGroup(MathTex(name, color=color, font_size=36), shape).arrange(RIGHT, buff=0.25)

    # -- W_Q beside X, and the shapes of the product -----------------------------------------------------
    def _first_weights(self, first: _Stage, scale: float) -> VGroup:
        shapes = VGroup(self.label("{} × {}", size("n_tokens"), size("d_in"), color=EMBEDDING),
                        text("·", color=MUTED), self.label("{} × {}", size("d_in"), size("d_k"), color=QUERY),
                        text("=", color=MUTED),
                        self.label("{} × {}", size("n_tokens"), size("d_k"), color=QUERY)).arrange(RIGHT, buff=0.18)
        shapes.scale(scale)
        right = first.w_tag.get_left()[0] - 0.3  # the lines sit right-aligned above X, left of W_Q
        fit_width(shapes, right + HALF_WIDTH)
        shapes.align_to((right, 0, 0), RIGHT).set_y(min(TOP, first.w.get_top()[1]) - shapes.height / 2)
        said = f"W_Q is {self.cite(size('d_in'))} × {self.cite(size('d_k'))}: "  # cited in the order said
        said += f"{self.cite(size('n_tokens'))} × {self.cite(size('d_in'))} · "
        said += f"{self.cite(size('d_in'))} × {self.cite(size('d_k'))} = "
        said += f"{self.cite(size('n_tokens'))} × {self.cite(size('d_k'))}."
        self.beat(said,
                  FadeIn(VGroup(first.w, first.w_tag), shift=LEFT * 0.4),
                  FadeIn(VGroup(first.m.brackets, first.m.row_labels, first.m_tag)), FadeIn(shapes, shift=UP * 0.2),
                  wait=1.4)
        return shapes

    # -- one entry by hand: the query's row of X times the first column of W_Q ---------------------------
    def _one_entry(self, x_grid: NumberGrid, first: _Stage, shapes: VGroup, scale: float) -> None:
        q, d_in, token = self.scenario.query, self.scenario.d_in, self.scenario.query_token
        row_box = x_grid.row_box(q).set_stroke(width=3)
        column_box = first.w.column_box(0).set_stroke(width=3)
        terms: list[Text] = [self.number("step", "query_terms", 0, 0, color=HIGHLIGHT)]
        for m in range(1, d_in):
            sign = "−" if self.step.query_terms[m, 0] < 0 else "+"  # each later term after its own sign
            terms += [text(sign, color=MUTED), self.number("step", "query_terms", m, 0, color=HIGHLIGHT,
                                                           reduce="magnitude")]
        products = VGroup(*terms).arrange(RIGHT, buff=0.16).scale(scale)
        fit_width(products, first.w_tag.get_left()[0] - 0.3 + HALF_WIDTH)
        products.next_to(shapes, DOWN, buff=0.3 * scale).align_to(shapes, RIGHT)
        total = self.number("trace", "queries", q, 0, color=HIGHLIGHT).scale(scale).move_to(products)
        factor_pairs = [VGroup(x_grid.cells[q][m], first.w.cells[m][0]) for m in range(d_in)]
        self.beat(f"Row '{token}' of X meets the first column of W_Q: {self.cite(size('d_in'))} products, "
                  "one per embedding dimension.",
                  FadeIn(row_box), FadeIn(column_box),
                  *(TransformFromCopy(pair, terms[2 * m]) for m, pair in enumerate(factor_pairs)),
                  *(FadeIn(terms[k]) for k in range(1, len(terms), 2)), run_time=1.5, wait=1.0)
        self.beat(f"They add up to {self.fmt('trace', 'queries', q, 0)}, the first entry of the query of '{token}'.",
                  ReplacementTransform(products, total), run_time=1.0, wait=0.6)
        self.play(ReplacementTransform(total, first.m.cells[q][0]), FadeOut(row_box), FadeOut(column_box),
                  run_time=0.9)

    # -- K and V, the same way, faster ----------------------------------------------------------------------
    def _keys_and_values(self, x_grid: NumberGrid, stages: dict[str, _Stage], shapes: VGroup) -> _Stage:
        previous = stages["query"]
        for role in ("key", "value"):
            stage = stages[role]
            swap = [FadeOut(previous.group, shift=UP * 0.3), FadeIn(VGroup(stage.w, stage.w_tag), shift=LEFT * 0.4),
                    FadeIn(VGroup(stage.m.brackets, stage.m.row_labels, stage.m_tag))]
            self.play(*swap, *([FadeOut(shapes)] if role == "key" else []), run_time=0.7)
            if role == "key":
                self.beat("Keys and values, the same way: three learned matrices, three views of each token.",
                          self._fill(x_grid, stage), run_time=1.4, wait=0.8)
            else:
                self.play(self._fill(x_grid, stage), run_time=1.4)
                self.wait(0.6)
            previous = stage
        return previous

    # -- Q, K, V side by side: the scene's summary ------------------------------------------------------
    def _side_by_side(self, x_grid: NumberGrid, x_tag: VGroup, last: _Stage) -> None:
        mark = len(self.shown)
        final = self._results(labelled=True)
        if fit_scale(final, height=TOP - BOTTOM, width=2 * HALF_WIDTH) < MIN_SCALE:
            del self.shown[mark:]  # that layout is dropped: its numbers are never shown
            final = self._results(labelled=False)  # rows aligned: the token labels on the left name all three
        final.scale(fit_scale(final, height=TOP - BOTTOM, width=2 * HALF_WIDTH)).move_to((0, (TOP + BOTTOM) / 2, 0))
        d_k, d_v = self.scenario.d_k, self.scenario.d_v
        spaces = (f"query/key/value space is {self.cite(size('d_k'))}-d" if d_k == d_v else
                  f"query/key space is {self.cite(size('d_k'))}-d and the value space {self.cite(size('d_v'))}-d")
        self.beat(f"The {spaces}; the embeddings were {self.cite(size('d_in'))}-d.",
                  FadeOut(VGroup(x_grid, x_tag, last.w, last.w_tag)),
                  ReplacementTransform(VGroup(last.m, last.m_tag), final[2]),
                  FadeIn(final[0], shift=RIGHT * 0.3), FadeIn(final[1], shift=RIGHT * 0.3), run_time=1.5, wait=1.5)

    def _results(self, *, labelled: bool) -> VGroup:
        """Q, K and V next to each other, each with its name and shape beneath, rows aligned."""
        groups = []
        for k, (_, _, m_field, name, color, d) in enumerate(ROLES):
            labels = self.scenario.tokens if labelled or k == 0 else None
            grid = NumberGrid(self._entries(m_field, color), row_labels=labels, color=color, h_buff=0.16)
            tag = self._tag(name, size(d), color).next_to(grid.brackets, DOWN, buff=0.15)
            groups.append(VGroup(grid, tag.set_x(grid.body.get_x())))
        return VGroup(*groups).arrange(RIGHT, buff=0.4, aligned_edge=UP)

    @staticmethod
    def _fill(x_grid: NumberGrid, stage: _Stage, skip: tuple[int, int] | None = None) -> LaggedStart:
        """Each row of X flows into the matching row of the result."""
        rows, columns = stage.m.shape
        targets = [(i, [stage.m.cells[i][j] for j in range(columns) if (i, j) != skip]) for i in range(rows)]
        return LaggedStart(*(TransformFromCopy(x_grid.row(i), VGroup(*cells)) for i, cells in targets if cells),
                           lag_ratio=0.15)


def _grid(entries: list[list[Text]], labels: tuple[str, ...] | None, color: str, width: float) -> NumberGrid:
    """A grid whose cells are all ``width`` wide plus padding, so a W and its result share columns."""
    widest = max(e.width for row in entries for e in row)
    return NumberGrid(entries, row_labels=labels, color=color, h_buff=0.28 + width - widest)
