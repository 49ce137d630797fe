"""A real head's Q, K and V: ``x·W + b``, with the bias as the weight of an input that is always 1.

The query token's input ``x`` has 384 numbers: the scene shows entries 1 to 6 (named as a slice,
with its range), then the appended 1. The head's ``W_Q``, ``W_K``, ``W_V`` are 385 × 32 each (the
384 rows of the layer's weights that feed this head's 32 columns, and the bias as row 385): far too
many numbers, so they are drawn as colours only, and the screen says so, with each map's colour
scale. Then the products: entries 1 to 6 of the token's ``q``, ``k`` and ``v`` (of 32), with the
biases that went into them. Every number is the model's own (:mod:`attention_math.minilm`).
"""

from __future__ import annotations

import functools
from typing import Any, cast

import numpy as np
from manim import (
    DOWN,
    LEFT,
    RIGHT,
    UP,
    Dot,
    MathTex,
    Mobject,
    UpdateFromAlphaFunc,
    VGroup,
    VMobject,
    config,
)

from attention_math.minilm import ModelHead
from scenes.facts import Fact, position
from scenes.kit.fades import fade_in
from scenes.kit.grids import NumberGrid
from scenes.kit.heatmap import ends_legend, opacities
from scenes.kit.layout import HALF_WIDTH, TOP
from scenes.kit.palette import EMBEDDING, INK, KEY, MUTED, QUERY, VALUE
from scenes.kit.text import SMALLEST_SIZE, drop_svg_paths, text, token_text
from scenes.real_head.common import RealHeadScene

__all__ = ["RealProjection"]

SLICE = 6  # entries of a long vector written out: they fit one line at the smallest type size
MATRICES = (("w_query", "W_Q", "b_Q", QUERY), ("w_key", "W_K", "b_K", KEY), ("w_value", "W_V", "b_V", VALUE))
MAP_WIDTH, MAP_HEIGHT, BIAS_HEIGHT, BIAS_GAP = 0.9, 2.0, 0.14, 0.1
MAPS_TOP = 0.2  # the maps' top edge (their names above it)
MAP_PITCH = 2.15  # between the maps' centres: room for each colour scale under its map
MAPS_LEFT = -HALF_WIDTH + 0.6  # the first map's left edge (its colour scale reaches further left)
SIZE = SMALLEST_SIZE  # the numbers of x's slice: eight columns and their note on one line
TABLE_SIZE = SMALLEST_SIZE  # the numbers of q, k, v and the biases: six rows beside the maps
SHADES = 32  # steps of opacity a colour map's pixels are drawn with
NAME_SIZE = 30  # the names are typeset at this size, then scaled (TeX's outlines scale linearly)


NAMES = ("W_Q", "W_K", "W_V", "b_Q", "b_K", "b_V")
"""The matrices' and biases' names the scene writes (TeX: our own, never user text)."""


@functools.cache
def _names() -> MathTex:
    """The six names as the parts of one formula: one TeX file, where six cost a latex and a dvisvgm run each."""
    return drop_svg_paths(MathTex(*NAMES, font_size=NAME_SIZE, color=INK))


def math_name(name: str, size: float, color: str) -> VMobject:
    """A copy of ``name`` (one of :data:`NAMES`) at ``size`` in ``color``, as ``MathTex(name)`` would draw it."""
    part = cast(VMobject, _names()[NAMES.index(name)]).copy()
    return part.scale(size / NAME_SIZE).set_color(color)


class ColourMap(VGroup):
    """Every entry of ``matrix`` as a cell of ``hue`` at the heat maps' opacity for its number
    (:func:`~scenes.kit.heatmap.opacities`), ``width × height`` from the top-left ``corner``, row 0 on top.

    A map of W has 384 rows of 32 cells, its rows thinner than a pixel: drawn cell by cell, Cairo
    filled twelve thousand rectangles each frame, most of the scene's render, to blend them into a
    few thousand pixels. Here each pixel of the frame the map covers is one square, its shade the
    cells' opacities averaged over its area (what antialiasing made of the cells, without their
    seams), rounded to :data:`SHADES` steps; the map's corner sits on a pixel's corner. The squares
    of one shade are one path, a row's neighbours of one shade one rectangle. ``cells`` keeps each
    cell's opacity and :meth:`cell_center` its place, for the tests.
    """

    def __init__(self, matrix: np.ndarray, low: float, high: float, hue: str, width: float, height: float,
                 corner: tuple[float, float]) -> None:
        super().__init__()
        self.cells = opacities(matrix, low, high)
        rows, columns = self.cells.shape
        pixel = config.frame_width / config.pixel_width
        across, down = max(1, round(width / pixel)), max(1, round(height / pixel))
        shades = _area_shares(down, rows) @ self.cells @ _area_shares(across, columns).T
        level = np.round(shades * SHADES).astype(int)
        # the corner on the pixel grid (the frame's left and top edges are pixel edges)
        left = -config.frame_width / 2 + round((corner[0] + config.frame_width / 2) / pixel) * pixel
        top = config.frame_height / 2 - round((config.frame_height / 2 - corner[1]) / pixel) * pixel
        starts = np.ones((down, across), dtype=bool)
        starts[:, 1:] = level[:, 1:] != level[:, :-1]  # where a run of one shade begins along its row
        row, first = np.nonzero(starts)
        ends = np.append(first[1:], across)
        ends[np.append(row[1:] != row[:-1], True)] = across  # a row's last run reaches its end
        run_level = level[row, first]
        for shade in np.unique(run_level):
            pick = run_level == shade
            boxes = np.stack([left + first[pick] * pixel, left + ends[pick] * pixel, top - row[pick] * pixel,
                              top - (row[pick] + 1) * pixel], axis=1)
            self.add(_rectangles(boxes, hue, float(shade) / SHADES))
        self.frame = (left, left + across * pixel, top - down * pixel, top)

    def fade_in(self) -> UpdateFromAlphaFunc:
        """Its shades from none to their own, every square left where it is (``FadeIn`` would move
        every point of every square to where it already is, each frame, and Cairo take each square's
        path afresh: three times the drawing)."""
        shades = [path.get_fill_opacity() for path in self]

        def shade(group: Mobject, alpha: float) -> None:
            for path, opacity in zip(group.submobjects, shades, strict=True):
                path.set_fill(opacity=opacity * alpha)

        return UpdateFromAlphaFunc(self, cast(Any, shade))  # manim types the update as taking the mobject alone

    def cell_center(self, row: int, column: int) -> np.ndarray:
        """The centre of the cell of ``matrix[row, column]`` where the map is now."""
        rows, columns = self.cells.shape
        left, right, bottom, top = self.frame
        return np.array([left + (column + 0.5) * (right - left) / columns, top - (row + 0.5) * (top - bottom) / rows])


def _rectangles(boxes: np.ndarray, hue: str, opacity: float) -> VMobject:
    """One path of the rectangles ``(left, right, top, bottom)``, each of four straight cubic pieces."""
    left, right, top, bottom = boxes.T
    corners = np.stack([np.stack([left, top], -1), np.stack([right, top], -1), np.stack([right, bottom], -1),
                        np.stack([left, bottom], -1)], 1)
    starts, ends = corners, np.roll(corners, -1, axis=1)
    thirds = np.linspace(0.0, 1.0, 4)[None, None, :, None]  # straight cubic pieces: a, a + d/3, a + 2d/3, b
    points = (starts[:, :, None, :] + thirds * (ends - starts)[:, :, None, :]).reshape(-1, 2)
    path = VMobject(stroke_width=0, fill_color=hue, fill_opacity=opacity)
    path.set_points(np.concatenate([points, np.zeros((len(points), 1))], axis=1))
    return path


def _area_shares(pixels: int, cells: int) -> np.ndarray:
    """``pixels × cells``: the share of each pixel's length that each cell covers (rows sum to 1)."""
    pixel_edges, cell_edges = np.linspace(0.0, 1.0, pixels + 1), np.linspace(0.0, 1.0, cells + 1)
    overlap = (np.minimum(pixel_edges[1:, None], cell_edges[None, 1:])
               - np.maximum(pixel_edges[:-1, None], cell_edges[None, :-1]))
    shares: np.ndarray = np.clip(overlap, 0.0, None) * pixels
    return shares


class RealProjection(RealHeadScene):
    """x for the query token (a slice), the bias as an always-1 input, W as colours, q, k, v (slices); for a
    decoder (SmolLM2: no bias, RoPE), x, W as colours, and q and k before and after their turn, v."""

    def construct(self) -> None:
        self.open_head()
        self.encoder = isinstance(self.head_found, ModelHead)
        self.header("Head {} of layer {}: Q, K, V = x·W + b" if self.encoder else
                    "Head {} of layer {}: Q, K, V = x·W, q and k turned", "query", "key", "value",
                    parts=[Fact("place", "head_number"), Fact("place", "layer_number")])
        x_row, always_one, note = self._input()
        self.beat(
            f"Head {self.cite(Fact('place', 'head_number'))} of layer {self.cite(Fact('place', 'layer_number'))} "
            f"reads '{self.scenario.query_token}' as {self.cite(Fact('place', 'd_model'))} numbers: "
            f"here entries {self.cite(position(0, 'd_in'))} to {self.cite(position(SLICE - 1, 'd_in'))}.",
            fade_in(x_row), fade_in(note[0]), wait=1.2,
        )
        if self.encoder:
            self._encoder_beats(x_row, always_one, note)
        else:
            self._decoder_beats(x_row)

    def _encoder_beats(self, x_row: NumberGrid, always_one: VGroup, note: VGroup) -> None:
        """The bias as an always-1 input, the maps with the bias row apart, q, k, v with the biases."""
        bias = self._bias_note(x_row)
        self.beat(
            "BERT's projections add a bias, x·W + b. So x gets one more input that is always one, "
            f"and b becomes row {self.cite(Fact('place', 'bias_row'))} of each W.",
            fade_in(always_one), fade_in(note[1]), fade_in(bias), wait=1.5,
        )
        maps = self._maps(bias)
        self.beat(
            f"W_Q, W_K, W_V: {self.cite(Fact('place', 'bias_row'))} × {self.cite(Fact('place', 'd_head'))} "
            "each, too many numbers to print: colours only, the bias the row set apart at the bottom.",
            *(part.fade_in() for group in maps[0] for part in group[:2]),
            *(fade_in(part) for group in maps[0] for part in group[2:]), fade_in(maps[1]), wait=1.5,
        )
        table, title = self._products(maps, self.scenario.query)
        self.maps, self.table = maps, table  # for the geometry tests
        self.beat(
            f"The products: q, k and v of '{self.scenario.query_token}', {self.cite(Fact('place', 'd_head'))} "
            f"numbers each; entries {self.cite(position(0, 'd_k'))} to {self.cite(position(SLICE - 1, 'd_k'))} shown, "
            "with the biases added in.",
            fade_in(title), fade_in(table), wait=1.8,
        )

    def _decoder_beats(self, x_row: NumberGrid) -> None:
        """No bias; the maps whole; x·W_Q and x·W_K, then q and k turned by RoPE at the token's place; v."""
        note = VGroup(
            self.label("x: the layer's input after its RMSNorm; no bias: q = x·W_Q", size=SMALLEST_SIZE, color=MUTED),
            self.label("W_K, W_V: key/value head {} of {}, shared by three query heads",
                       Fact("place", "kv_head_number"), Fact("place", "n_kv_heads"), size=SMALLEST_SIZE, color=KEY),
        ).arrange(DOWN, buff=0.1, aligned_edge=LEFT).next_to(x_row, DOWN, buff=0.3).to_edge(LEFT, buff=0.4)
        maps = self._maps(note)
        self.beat(
            f"No bias in this decoder. W_Q, W_K, W_V: {self.cite(Fact('place', 'd_model'))} × "
            f"{self.cite(Fact('place', 'd_head'))} each, colours only; W_K and W_V are those of the key/value head "
            f"{self.cite(Fact('place', 'kv_head_number'))}, shared.",
            fade_in(note), *(part.fade_in() for group in maps[0] for part in group[:1]),
            *(fade_in(part) for group in maps[0] for part in group[1:]), fade_in(maps[1]), wait=1.5,
        )
        table, title = self._turned_products(self.scenario.query)
        self.maps, self.table = maps, table  # for the geometry tests
        self.beat(
            f"The products x·W_Q and x·W_K of '{self.scenario.query_token}', then RoPE turns each pair of q and k "
            f"by its token's place: the turned q and k score. Entries {self.cite(position(0, 'd_k'))} to "
            f"{self.cite(position(SLICE - 1, 'd_k'))} of {self.cite(Fact('place', 'd_head'))}.",
            fade_in(title), fade_in(table), wait=1.8,
        )

    # -- x, a slice and the always-1 input ---------------------------------------------------
    def _input(self) -> tuple[NumberGrid, VGroup, VGroup]:
        """Entries 1 to 6 of the query's x, "…", then entry 385 (the 1), in one row under its column numbers."""
        q = self.scenario.query
        if not self.encoder:
            return self._decoder_input(q)
        entries = [self.number("model", "embeddings", q, m, size=SIZE, color=EMBEDDING) for m in range(SLICE)]
        entries += [text("…", size=SIZE, color=MUTED),
                    self.number("model", "embeddings", q, self.head_found.d_model, size=SIZE, color=INK)]
        columns: list[Any] = [self.label("{}", position(m, "d_in"), size=SMALLEST_SIZE, color=MUTED)
                              for m in range(SLICE)]
        one = self.label("{}", position(self.head_found.d_model, "d_in"), size=SMALLEST_SIZE, color=MUTED)
        columns += [Dot(radius=0.0, fill_opacity=0.0, stroke_opacity=0.0), one]
        name = token_text(self.scenario.query_token, size=24, color=EMBEDDING)
        grid = NumberGrid([entries], row_labels=[name], column_labels=columns, h_buff=0.28)
        grid.to_edge(LEFT, buff=0.35).set_y(TOP - 0.55)
        self.rows("token", {q: name}, grid)
        self.columns("d_in", {m: columns[m] for m in range(SLICE)} | {self.head_found.d_model: columns[-1]}, grid)
        grid.body.remove(entries[-1])  # the always-1 input: in place, shown in the second beat
        grid.column_labels.remove(columns[-1])
        first = self._x_note()
        extra = self.label("+ input {}, always one", position(self.head_found.d_model, "d_in"), size=SMALLEST_SIZE,
                           color=MUTED)
        first.next_to(grid, RIGHT, buff=0.4).align_to(grid.body, UP).shift(DOWN * 0.05)
        extra.next_to(first, DOWN, buff=0.12, aligned_edge=LEFT)
        return grid, VGroup(entries[-1], columns[-1]), VGroup(first, extra)

    def _x_note(self) -> VMobject:
        return self.label("x: entries {} to {} of {}", position(0, "d_in"), position(SLICE - 1, "d_in"),
                          Fact("place", "d_model"), size=SMALLEST_SIZE, color=MUTED)

    def _decoder_input(self, q: int) -> tuple[NumberGrid, VGroup, VGroup]:
        """Entries 1 to 6 of the query's x, then "…" (no always-1 input: SmolLM2 has no bias)."""
        entries = [self.number("model", "embeddings", q, m, size=SIZE, color=EMBEDDING) for m in range(SLICE)]
        entries.append(text("…", size=SIZE, color=MUTED))
        columns: list[Any] = [self.label("{}", position(m, "d_in"), size=SMALLEST_SIZE, color=MUTED)
                              for m in range(SLICE)]
        columns.append(Dot(radius=0.0, fill_opacity=0.0, stroke_opacity=0.0))
        name = token_text(self.scenario.query_token, size=24, color=EMBEDDING)
        grid = NumberGrid([entries], row_labels=[name], column_labels=columns, h_buff=0.28)
        grid.to_edge(LEFT, buff=0.35).set_y(TOP - 0.55)
        self.rows("token", {q: name}, grid)
        self.columns("d_in", {m: columns[m] for m in range(SLICE)}, grid)
        first = self._x_note()
        first.next_to(grid, RIGHT, buff=0.4).align_to(grid.body, UP).shift(DOWN * 0.05)
        return grid, VGroup(), VGroup(first)

    def _bias_note(self, x_row: NumberGrid) -> VGroup:
        """[x, 1] · [W; b] = x·W + b, and where b sits."""
        # the always-1 input written as a word: its number is the model's, in x's row above
        formula = drop_svg_paths(MathTex(r"x W + b \;=\; [\,x,\ \text{one}\,] \begin{bmatrix} W \\ b \end{bmatrix}",
                                         font_size=30, color=INK))
        where = self.label("b: row {} of each W, the weight of the input always one", Fact("place", "bias_row"),
                           size=SMALLEST_SIZE, color=MUTED)
        group = VGroup(formula, where).arrange(RIGHT, buff=0.4)
        group.next_to(x_row, DOWN, buff=0.3).to_edge(LEFT, buff=0.4)
        return group

    # -- the weights, as colours -------------------------------------------------------------
    def _maps(self, above: Mobject) -> VGroup:
        """W_Q, W_K, W_V as pictures (a cell per number), the bias row apart; their shapes and scales."""
        top = MAPS_TOP
        maps = VGroup()
        for k, (field, name, bias_name, hue) in enumerate(MATRICES):
            matrix = np.asarray(getattr(self.head_found.trace, field), dtype=float)
            low, high = (self.value_of(Fact("model_extremes", field, (end,))) for end in (0, 1))
            left = MAPS_LEFT + k * MAP_PITCH
            title = math_name(name, 30, hue)
            title.move_to((left + MAP_WIDTH / 2, top + 0.12 + title.height / 2, 0))
            scale = ends_legend(self, self.number("model_extremes", field, 0, size=SMALLEST_SIZE, color=MUTED),
                                self.number("model_extremes", field, 1, size=SMALLEST_SIZE, color=MUTED), hue,
                                width=0.3, height=0.16)
            if not self.encoder:  # no bias: the whole matrix, as tall as a map and its bias
                body = ColourMap(matrix, low, high, hue, MAP_WIDTH, MAP_HEIGHT + BIAS_GAP + BIAS_HEIGHT, (left, top))
                maps.add(VGroup(body, title, scale.next_to(body, DOWN, buff=0.22)))
                continue
            body = ColourMap(matrix[:-1], low, high, hue, MAP_WIDTH, MAP_HEIGHT, (left, top))
            bias = ColourMap(matrix[-1:], low, high, hue, MAP_WIDTH, BIAS_HEIGHT, (left, top - MAP_HEIGHT - BIAS_GAP))
            bias_label = math_name(bias_name, 26, hue).next_to(bias, RIGHT, buff=0.1)
            scale.next_to(bias, DOWN, buff=0.22)
            maps.add(VGroup(body, bias, title, bias_label, scale))
        rows = Fact("place", "bias_row") if self.encoder else Fact("place", "d_model")
        note = self.label("each {} × {}, colours only: dark = smallest, bright = largest", rows,
                          Fact("place", "d_head"), size=SMALLEST_SIZE, color=MUTED)
        note.move_to((MAPS_LEFT - 0.3 + note.width / 2, scale.get_bottom()[1] - 0.18 - note.height / 2, 0))
        return VGroup(maps, note)

    # -- a decoder's q, k (before and after RoPE) and v: slices ------------------------------------
    def _turned_products(self, q: int) -> tuple[NumberGrid, VMobject]:
        """Entries 1 to 6 of x·W_Q, q (turned), x·W_K, k (turned) and v for the query token."""
        fields = (("unrotated_queries", "x·W_Q", QUERY), ("queries", "q{} turned", QUERY),
                  ("unrotated_keys", "x·W_K", KEY), ("keys", "k{} turned", KEY), ("values", "v{}", VALUE))
        rows, names = [], []
        for field, name, hue in fields:
            rows.append([self.number("model", field, q, m, size=TABLE_SIZE, color=hue) for m in range(SLICE)])
            names.append(self.label(name, *([position(q, "query")] if "{}" in name else []), size=22, color=hue))
        columns: list[Any] = [self.label("{}", position(m, "d_k"), size=SMALLEST_SIZE, color=MUTED)
                              for m in range(SLICE)]
        table = NumberGrid(rows, row_labels=names, column_labels=columns, h_buff=0.24, v_buff=0.1)
        title = self.label("entries {} to {} of {}", position(0, "d_k"), position(SLICE - 1, "d_k"),
                           Fact("place", "d_head"), size=SMALLEST_SIZE, color=MUTED)
        table.align_to((HALF_WIDTH, 0, 0), RIGHT).align_to((0, MAPS_TOP + 0.1, 0), UP)
        title.next_to(table, UP, buff=0.15).align_to(table.brackets, RIGHT)
        self.rows("query", {q: VGroup(names[0], names[1])}, table)
        self.rows("key", {q: VGroup(names[2], names[3], names[4])}, table)
        self.columns("d_k", dict(enumerate(columns)), table)
        self.columns("d_v", dict(enumerate(columns)), table)
        return table, title

    # -- q, k, v: slices, and the biases in them -------------------------------------------------
    def _products(self, maps: VGroup, q: int) -> tuple[NumberGrid, VMobject]:
        """Entries 1 to 6 of q, k, v for the query token, and of b_Q, b_K, b_V, under their column numbers."""
        fields = (("queries", "q", QUERY, "model"), ("keys", "k", KEY, "model"), ("values", "v", VALUE, "model"),
                  ("bias_query", "b_Q", QUERY, "bias"), ("bias_key", "b_K", KEY, "bias"),
                  ("bias_value", "b_V", VALUE, "bias"))
        rows, names = [], []
        for field, name, hue, source in fields:
            index = (q,) if source == "model" else ()
            rows.append([self.number(source, field, *index, m, size=TABLE_SIZE, color=hue) for m in range(SLICE)])
            names.append(self.label(name + "{}", position(q, "query"), size=24, color=hue) if source == "model"
                         else math_name(name, 28, hue))
        columns: list[Any] = [self.label("{}", position(m, "d_k"), size=SMALLEST_SIZE, color=MUTED)
                              for m in range(SLICE)]
        table = NumberGrid(rows, row_labels=names, column_labels=columns, h_buff=0.24, v_buff=0.1)
        title = self.label("entries {} to {} of {}", position(0, "d_k"), position(SLICE - 1, "d_k"),
                           Fact("place", "d_head"),
                           size=SMALLEST_SIZE, color=MUTED)
        table.align_to((HALF_WIDTH, 0, 0), RIGHT).align_to((0, MAPS_TOP + 0.1, 0), UP)
        title.next_to(table, UP, buff=0.15).align_to(table.brackets, RIGHT)
        self.rows("query", {q: names[0]}, table)
        self.rows("key", {q: VGroup(names[1], names[2])}, table)
        self.columns("d_k", dict(enumerate(columns)), table)
        self.columns("d_v", dict(enumerate(columns)), table)
        return table, title

