"""Scene 2: projection into Q, K, V — X times three learned matrices, one entry built by hand."""

from __future__ import annotations

from types import SimpleNamespace

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
from scenes.common import DIM, EMBEDDING, HIGHLIGHT, KEY, MUTED, QUERY, VALUE, NumberGrid, text

__all__ = ["Projection"]

ROLES = (("query", "w_query", "queries", "Q", QUERY), ("key", "w_key", "keys", "K", KEY),
         ("value", "w_value", "values", "V", VALUE))
TOP, BOTTOM, HALF_WIDTH = 2.8, -3.1, 6.65
MIN_SCALE = 20 / 26  # numbers drawn at 26 stay at 20 or more


class Projection(ExplainerScene):
    """X (n × d_in) times W_Q, W_K, W_V (d_in × d_k) gives Q, K, V (n × d_k), laid out as in a hand calculation."""

    def construct(self) -> None:
        scenario, trace = self.scenario, self.trace
        n, d_in, q = scenario.n_tokens, scenario.d_in, scenario.query
        tokens = scenario.tokens
        column = trace.w_query[:, 0]
        self.add_source("entry", SimpleNamespace(products=trace.embeddings[q] * column,
                                                 magnitudes=np.abs(trace.embeddings[q] * column)), scenario.precision)
        self.header(2, "Projection into Q, K, V", "query", "key", "value")

        # -- layout: X bottom-left, each W above its result, the result's rows beside X's ------------------
        x_grid = self.grid("trace", "embeddings", row_labels=tokens, color=EMBEDDING)
        x_tag = self._tag("X", f"{n} × {d_in}", EMBEDDING).next_to(x_grid.brackets, DOWN, buff=0.15)
        x_tag.set_x(x_grid.body.get_x())
        entries = {f: self._entries(f, c) for _, w_f, m_f, _, c in ROLES for f in (w_f, m_f)}
        stages = self._stages(x_grid, x_tag, entries, labelled=True)
        if _fit_scale(VGroup(x_grid, x_tag, *stages.values())) < MIN_SCALE:
            # the rows of each result sit on the rows of X, whose labels then name both
            stages = self._stages(x_grid, x_tag, entries, labelled=False)
        everything = VGroup(x_grid, x_tag, *stages.values())
        scale = _fit_scale(everything)
        everything.scale(scale).move_to([0, (TOP + BOTTOM) / 2, 0])

        # -- X and its shape ------------------------------------------------------------------------------
        self.beat(f"X: one row per token, each embedded in {d_in} dimensions — {n} × {d_in}.",
                  FadeIn(x_grid, shift=RIGHT * 0.3), FadeIn(x_tag), wait=1.2)

        # -- W_Q beside it, and the shapes of the product -----------------------------------------------------
        first = stages["query"]
        shapes = VGroup(text(f"{n} × {d_in}", color=EMBEDDING), text("·", color=MUTED),
                        text(f"{d_in} × {first.d}", color=QUERY), text("=", color=MUTED),
                        text(f"{n} × {first.d}", color=QUERY)).arrange(RIGHT, buff=0.18).scale(scale)
        right = first.w_tag.get_left()[0] - 0.3  # the lines sit right-aligned above X, left of W_Q
        _fit(shapes, right + HALF_WIDTH)
        shapes.align_to([right, 0, 0], RIGHT).set_y(min(TOP, first.w.get_top()[1]) - shapes.height / 2)
        self.beat(f"W_Q is {d_in} × {first.d}: {n} × {d_in} · {d_in} × {first.d} = {n} × {first.d}.",
                  FadeIn(VGroup(first.w, first.w_tag), shift=LEFT * 0.4),
                  FadeIn(VGroup(first.m.brackets, first.m.row_labels, first.m_tag)), FadeIn(shapes, shift=UP * 0.2),
                  wait=1.4)

        # -- one entry by hand: row of the query times the first column ------------------------------------------
        row_box = x_grid.row_box(q).set_stroke(width=3)
        column_box = first.w.column_box(0).set_stroke(width=3)
        terms = [self.number("entry", "products", 0, color=HIGHLIGHT)]
        for m in range(1, d_in):
            sign = "−" if self.value_of("entry", "products", (m,)) < 0 else "+"
            terms += [text(sign, color=MUTED), self.number("entry", "magnitudes", m, color=HIGHLIGHT)]
        products = VGroup(*terms).arrange(RIGHT, buff=0.16).scale(scale)
        _fit(products, right + HALF_WIDTH)
        products.next_to(shapes, DOWN, buff=0.3 * scale).align_to(shapes, RIGHT)
        total = self.number("trace", "queries", q, 0, color=HIGHLIGHT).scale(scale).move_to(products)
        factor_pairs = [VGroup(x_grid.cells[q][m], first.w.cells[m][0]) for m in range(d_in)]
        self.beat(f"Row '{tokens[q]}' of X meets column 1 of W_Q: {d_in} products, one per embedding dimension.",
                  FadeIn(row_box), FadeIn(column_box),
                  *(TransformFromCopy(pair, terms[2 * m]) for m, pair in enumerate(factor_pairs)),
                  *(FadeIn(terms[k]) for k in range(1, len(terms), 2)), run_time=1.5, wait=1.0)
        cell = first.m.cells[q][0]
        self.beat(f"They add up to {total.text}, the first entry of the query of '{tokens[q]}'.",
                  ReplacementTransform(products, total), run_time=1.0, wait=0.6)
        self.play(ReplacementTransform(total, cell), run_time=0.9)

        # -- the rest of Q, quickly -----------------------------------------------------------------------------
        self.play(FadeOut(row_box), FadeOut(column_box), shapes.animate.set_opacity(DIM), run_time=0.4)
        self.beat("Each query is its embedding times W_Q.", self._fill(x_grid, first, skip=(q, 0)),
                  run_time=1.8, wait=0.8)

        # -- K and V, the same way, faster ----------------------------------------------------------------------
        previous = first
        for role in ("key", "value"):
            stage = stages[role]
            swap = [FadeOut(VGroup(previous.w, previous.w_tag, previous.m, previous.m_tag), shift=UP * 0.3),
                    FadeIn(VGroup(stage.w, stage.w_tag), shift=LEFT * 0.4),
                    FadeIn(VGroup(stage.m.brackets, stage.m.row_labels, stage.m_tag))]
            self.play(*swap, *([FadeOut(shapes)] if role == "key" else []), run_time=0.7)
            if role == "key":
                self.beat("Keys and values, the same way: three learned matrices, three views of each token.",
                          self._fill(x_grid, stage), run_time=1.4, wait=0.8)
            else:
                self.play(self._fill(x_grid, stage), run_time=1.4)
                self.wait(0.6)
            previous = stage

        # -- Q, K, V side by side -----------------------------------------------------------------------------------
        mark = len(self.shown)
        final = self._side_by_side(labelled=True)
        if _fit_scale(final) < MIN_SCALE:
            del self.shown[mark:]  # that layout is dropped: its numbers are never shown
            final = self._side_by_side(labelled=False)  # rows aligned: the token labels on the left name all three
        final.scale(_fit_scale(final)).move_to([0, (TOP + BOTTOM) / 2, 0])
        d_k, d_v = scenario.d_k, scenario.d_v
        spaces = f"query/key/value space is {d_k}-d" if d_k == d_v else \
            f"query/key space is {d_k}-d and the value space {d_v}-d"
        self.beat(f"The {spaces}; the embeddings were {d_in}-d.",
                  FadeOut(VGroup(x_grid, x_tag, previous.w, previous.w_tag)),
                  ReplacementTransform(VGroup(previous.m, previous.m_tag), final[2]),
                  FadeIn(final[0], shift=RIGHT * 0.3), FadeIn(final[1], shift=RIGHT * 0.3), run_time=1.5, wait=1.5)

    # -- helpers ----------------------------------------------------------------------------------------------------
    def _stages(self, x_grid: NumberGrid, x_tag: VGroup, entries: dict, *, labelled: bool) -> dict[str, VGroup]:
        """For each role its W (above) and result (beside X, row for row), sharing one cell width."""
        n, d_in = self.scenario.n_tokens, self.scenario.d_in
        width = max(e.width for rows in entries.values() for row in rows for e in row)
        stages = {}
        for role, w_field, m_field, name, color in ROLES:
            w_grid = _grid(entries[w_field], None, color, width)
            m_grid = _grid(entries[m_field], self.scenario.tokens if labelled else None, color, width)
            m_grid.next_to(x_grid, RIGHT, buff=0.55).align_to(x_grid.brackets, UP)
            w_grid.next_to(m_grid.brackets, UP, buff=0.3).align_to(m_grid.brackets, RIGHT)
            d = m_grid.shape[1]
            w_tag = VGroup(MathTex(f"W_{name}", color=color, font_size=36), text(f"{d_in} × {d}", color=MUTED))
            w_tag.arrange(DOWN, buff=0.12).next_to(w_grid.brackets, LEFT, buff=0.3)
            m_tag = self._tag(name, f"{n} × {d}", color).next_to(m_grid.brackets, DOWN, buff=0.15)
            m_tag.set_x(m_grid.body.get_x()).align_to(x_tag, DOWN)
            stages[role] = VGroup(w_grid, w_tag, m_grid, m_tag)
            stages[role].w, stages[role].w_tag, stages[role].m, stages[role].m_tag = w_grid, w_tag, m_grid, m_tag
            stages[role].d, stages[role].name = d, name
        return stages

    def _entries(self, field: str, color: str) -> list[list[Text]]:
        """Every entry of a trace matrix, drawn and recorded."""
        rows, columns = np.asarray(getattr(self.trace, field)).shape
        return [[self.number("trace", field, i, j, color=color) for j in range(columns)] for i in range(rows)]

    def _side_by_side(self, *, labelled: bool) -> VGroup:
        """Q, K and V next to each other, each with its name and shape beneath, rows aligned."""
        groups = []
        for k, (_, _, m_field, name, color) in enumerate(ROLES):
            labels = self.scenario.tokens if labelled or k == 0 else None
            grid = NumberGrid(self._entries(m_field, color), row_labels=labels, color=color, h_buff=0.16)
            d = grid.shape[1]
            tag = self._tag(name, f"{self.scenario.n_tokens} × {d}", color).next_to(grid.brackets, DOWN, buff=0.15)
            groups.append(VGroup(grid, tag.set_x(grid.body.get_x())))
        return VGroup(*groups).arrange(RIGHT, buff=0.4, aligned_edge=UP)

    def _tag(self, name: str, shape: str, color: str) -> VGroup:
        """A matrix's name and shape, side by side, for beneath it."""
        return VGroup(MathTex(name, color=color, font_size=36), text(shape, color=MUTED)).arrange(RIGHT, buff=0.25)

    @staticmethod
    def _fill(x_grid: NumberGrid, stage: VGroup, skip: tuple[int, int] | None = None) -> LaggedStart:
        """Each row of X flows into the matching row of the result."""
        rows, columns = stage.m.shape
        targets = [(i, [stage.m.cells[i][j] for j in range(columns) if (i, j) != skip]) for i in range(rows)]
        return LaggedStart(*(TransformFromCopy(x_grid.row(i), VGroup(*cells)) for i, cells in targets if cells),
                           lag_ratio=0.15)


def _grid(entries: list[list[Text]], labels: tuple[str, ...] | None, color: str, width: float) -> NumberGrid:
    """A grid whose cells are all ``width`` wide plus padding, so a W and its result share columns."""
    widest = max(e.width for row in entries for e in row)
    return NumberGrid(entries, row_labels=labels, color=color, h_buff=0.28 + width - widest)


def _fit_scale(mob: VGroup) -> float:
    """The scale that fits ``mob`` between the header and the subtitles (up to a little larger than drawn)."""
    return min(1.15, 2 * HALF_WIDTH / mob.width, (TOP - BOTTOM) / mob.height)


def _fit(mob: VGroup, width: float) -> None:
    """Shrink ``mob`` if it is wider than ``width``."""
    if mob.width > width:
        mob.scale(width / mob.width)
