"""Token × token grids and heat maps: a row per query, a column per key, lightness by value.

A :class:`HeatGrid` is a bracketed lattice of cells with token labels on its rows and,
above its columns, flat or upright (a quarter turn, never staggered). A heat map fills each
cell with one hue, its lightness spread over the grid's colour scale: its own range (from the
smallest number to the largest), so weights of 0.16 and 0.31 look different, widened where it
is narrow so that numbers a few hundredths apart look alike (``attention_math.heat``); a
:class:`Legend` writes the scale's two ends. Numbers, when the cells carry them, are drawn in a
contrasting ink: dark on light cells, light on dark ones (:func:`inks`). Grids hold no numbers of
their own: the scene makes (and records) them.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import cache
from typing import Any

import numpy as np
from manim import DL, DOWN, LEFT, PI, RIGHT, UP, Mobject, Rectangle, SurroundingRectangle, Text, VGroup, VMobject

from scenes.facts import Fact
from scenes.kit.fades import reshade
from scenes.kit.grids import Brackets, right_aligned
from scenes.kit.palette import BACKGROUND, HIGHLIGHT, INK, KEY, MUTED, QUERY
from scenes.kit.text import SMALLEST_SIZE, shorten_token, text, token_text

__all__ = [
    "COLOURS_ONLY",
    "FLAT_LIMIT",
    "HeatFit",
    "HeatGrid",
    "Legend",
    "cell_numbers",
    "column_limit",
    "column_orientation",
    "ends_legend",
    "fill_cells",
    "fit_heat",
    "ink_on",
    "inks",
    "key_column",
    "legend",
    "numbered_columns",
    "numbered_labels_width",
    "opacities",
    "opacity_of",
    "roomier_rows",
    "row_box",
    "stack",
    "text_height",
    "text_width",
    "upright_height",
    "vector_line",
    "vector_width",
    "widest",
]

LOWEST, HIGHEST = 0.07, 0.92  # fill opacity of a grid's smallest and largest number
FLAT_LIMIT = 5  # column labels lie flat when every token, cut to this many characters, fits its cell
LABEL_GAP = 0.12  # between labels and the bracket
NARROW = 0.3  # fills closer than this take one ink (:func:`inks`)
NUMBER_GAP = 0.17  # between the numbers of two columns: closer, "10 11 12" reads as "101112"
COLOURS_ONLY = "colours only"  # the note over the row labels of a grid whose cells carry no numbers


@cache
def _extent26(content: str) -> tuple[float, float]:
    mob = text(content, size=26)
    return float(mob.width), float(mob.height)


def text_width(content: str, size: float) -> float:
    """Width of ``text(content, size=size)``: Pango text scales linearly with its size."""
    return _extent26(content)[0] * size / 26


def widest(strings: Sequence[str], size: float) -> float:
    """The width of the widest of ``strings`` at ``size``, measuring one string per shape.

    Digits are equally wide in the project's font, so numbers of one shape (the same signs,
    points and count of digits: "0.17" and "0.25") are equally wide: a grid of hundreds of
    numbers measures a handful.
    """
    shapes = {re.sub(r"\d", "0", content) for content in strings}
    return max((text_width(shape, size) for shape in shapes), default=0.0)


def text_height(size: float) -> float:
    """Height of a line of digits and letters at ``size``."""
    return _extent26("Ag0")[1] * size / 26


def opacity_of(number: float, low: float, high: float) -> float:
    """Fill opacity of a cell: the grid's smallest number darkest, its largest brightest.

    >>> opacity_of(0.16, 0.16, 0.31), opacity_of(0.31, 0.16, 0.31)
    (0.07, 0.92)
    >>> opacity_of(float("-inf"), 0.0, 1.0), opacity_of(0.5, 0.5, 0.5)  # masked; all equal
    (0.07, 0.495)
    """
    if not np.isfinite(number):
        return LOWEST
    share = 0.5 if high <= low else (number - low) / (high - low)
    return round(LOWEST + (HIGHEST - LOWEST) * float(np.clip(share, 0.0, 1.0)), 4)


def opacities(numbers: np.ndarray, low: float, high: float) -> np.ndarray:
    """:func:`opacity_of` of every number of an array at once (a colour map of thousands of cells).

    >>> opacities(np.array([[0.16, 0.2], [float("-inf"), 0.31]]), 0.16, 0.31).tolist()
    [[0.07, 0.2967], [0.07, 0.92]]
    >>> opacity_of(0.2, 0.16, 0.31)
    0.2967
    """
    numbers = np.asarray(numbers, dtype=float)
    with np.errstate(invalid="ignore"):  # -inf - -inf where a masked number is the smallest
        share = np.full(numbers.shape, 0.5) if high <= low else (numbers - low) / (high - low)
    share = np.where(np.isfinite(numbers), np.clip(share, 0.0, 1.0), 0.0)
    return np.round(LOWEST + (HIGHEST - LOWEST) * share, 4)


def numbered_columns(n: int, size: float, cell_w: float) -> range:
    """The columns of an ``n``-column grid that get their number: every one while two numbers side by
    side stay :data:`NUMBER_GAP` apart, else every other one (the first, the third, …)."""
    return range(0, n, 1 if text_width(str(n), size) + NUMBER_GAP <= cell_w else 2)


def ink_on(opacity: float) -> str:
    """The ink of a number on a cell filled this much: dark on light cells, light on dark ones."""
    return BACKGROUND if opacity > 0.5 else INK


def column_limit(tokens: Sequence[str], room: float, size: float, most: int = 10) -> int:
    """The most characters (up to ``most``) every token may keep to be at most ``room`` long."""
    limit = most
    while limit > 3 and max(text_width(shorten_token(t, limit), size) for t in tokens) > room:
        limit -= 1
    return limit


def upright_height(tokens: Sequence[str], size: float, limit: int) -> float:
    """The height of upright (a quarter turn) column labels cut to ``limit`` characters."""
    return max(text_width(shorten_token(t, limit), size) for t in tokens)


@dataclass(frozen=True)
class HeatFit:
    """How an ``n × n`` token grid is drawn: with its numbers in the cells, or in colour only.

    ``numbers`` false means the grid is too large for legible numbers in every cell: each cell
    shows its colour and the scene writes the numbers of the rows the beat is about elsewhere.
    """

    numbers: bool
    size: float  # type size of the labels (and of the numbers in the cells)
    cell_w: float
    cell_h: float
    row_limit: int  # characters kept of a row label
    column_limit: int
    upright: bool  # column labels read upwards (a quarter turn) rather than lying flat
    numbered: bool = False  # columns are numbered and each row label starts with its number (the key)
    noted: bool = False  # numbered, with the "colours only" note over the row labels (scenes.kit.board.token_grid)

    def grid_width(self, tokens: Sequence[str], columns: int) -> float:
        """Row labels (numbered: "16 token", and no narrower than the note over them where there is one), their
        gap, the brackets and the cells."""
        if self.numbered:
            labels = numbered_labels_width(tokens, self.row_limit, self.size, noted=self.noted)
        else:
            labels = max(text_width(shorten_token(t, self.row_limit), self.size) for t in tokens)
        return labels + LABEL_GAP + 0.2 + columns * self.cell_w

    def column_height(self, tokens: Sequence[str]) -> float:
        """What the column labels take above the bracket."""
        if self.upright and not self.numbered:
            return upright_height(tokens, self.size, self.column_limit) + LABEL_GAP
        return text_height(self.size) + LABEL_GAP


NUMBER_SIZES = (30, 28, 26, 24, 22, SMALLEST_SIZE)
"""Type sizes tried for a grid that carries its numbers, largest first."""

MARGINS = (0.36, 0.22)
"""Room left in a cell beside its widest number: a roomy margin where the layout allows, else a tight one."""


def _cut(tokens: Sequence[str], limit: int, query: int | None) -> tuple[bool, int]:
    """What cutting the labels to ``limit`` characters costs: is the query's token cut, how many tokens are."""
    cut = [shorten_token(t, limit) != shorten_token(t, 10**9) for t in tokens]
    return (query is not None and cut[query], sum(cut))


def column_orientation(tokens: Sequence[str], size: float, cell_w: float, cell_h: float, height: float,
                       upright_most: int, query: int | None = None) -> tuple[bool, int] | None:
    """``(upright, limit)``: column labels over rows of ``cell_h`` within ``height``, or ``None``.

    Flat while every token keeps at least :data:`FLAT_LIMIT` characters in its cell; upright (up to
    ``upright_most`` characters, as many as the height has room for) when that keeps the query's
    token whole where flat labels cut it, or cuts fewer tokens; flat on a tie.
    """
    n = len(tokens)
    flat_limit = column_limit(tokens, cell_w - 0.08, size)
    flat = flat_limit >= FLAT_LIMIT and n * cell_h + text_height(size) + LABEL_GAP <= height
    upright = next((most for most in range(max(upright_most, 6), 5, -1)
                    if n * cell_h + upright_height(tokens, size, most) + LABEL_GAP <= height), None)
    if flat and (upright is None or _cut(tokens, flat_limit, query) <= _cut(tokens, upright, query)):
        return False, flat_limit
    return None if upright is None else (True, upright)


def _fit_with_numbers(tokens: Sequence[str], widest26: float, width: float, height: float,
                      size: float, upright_most: int, query: int | None) -> HeatFit | None:
    n = len(tokens)
    cell_h = text_height(size) + 0.2
    for row_limit, margin in itertools.product((10, 8, 6), MARGINS):
        cell_w = widest26 * size / 26 + margin
        room = width - n * cell_w - LABEL_GAP - 0.2
        if max(text_width(shorten_token(t, row_limit), size) for t in tokens) > room:
            continue
        labels = column_orientation(tokens, size, cell_w, cell_h, height, upright_most, query)
        if labels is not None:
            return HeatFit(True, size, cell_w, cell_h, row_limit, labels[1], labels[0])
    return None


def numbered_labels_width(tokens: Sequence[str], limit: int, size: float, *, noted: bool = False) -> float:
    """The room a colour-only grid's row labels take ("16 token", ``limit`` characters of each token kept): the
    widest label; ``noted``, the note over them (:data:`COLOURS_ONLY`) where that is wider (very short tokens)."""
    n = len(tokens)
    labels = max(text_width(f"{n} " + shorten_token(t, limit), size) for t in tokens)
    return max(labels, text_width(COLOURS_ONLY, size)) if noted else labels


def fit_heat(tokens: Sequence[str], widest26: float, *, width: float, height: float,
             fill: float = 0.0, upright_most: int = 6, query: int | None = None, noted: bool = False) -> HeatFit:
    """The largest legible drawing of an ``n × n`` grid of these tokens in ``width × height``.

    ``widest26`` is the width of the widest number the cells must carry, at size 26; each cell
    leaves a margin beside it (:data:`MARGINS`). When no type size down to the floor fits every
    cell's number, the grid is drawn in colour only, its cells as large as fit. ``fill``: stretch
    the cells (up to twice their width) until the grid is that wide, so a small grid fills its
    part of the frame. ``upright_most``: the most characters an upright column label keeps where
    the height has room for them. ``query``: the row whose token the column labels should keep
    whole (:func:`column_orientation`). ``noted``: in colour only, the "colours only" note over the row labels
    (:func:`scenes.kit.board.token_grid` keeps its place) takes room beside the cells where they are narrower.
    """
    n = len(tokens)
    for size in NUMBER_SIZES:
        fit = _fit_with_numbers(tokens, widest26, width, height, size, upright_most, query)
        if fit is not None:
            spare = fill - fit.grid_width(tokens, n)
            wider = min(fit.cell_w * 2.0, fit.cell_w + spare / n) if spare > 0 else fit.cell_w
            # the labels again, over the widened cells (flat ones may keep their tokens whole now)
            upright, limit = column_orientation(tokens, size, wider, fit.cell_h, height, upright_most, query) \
                or (fit.upright, fit.column_limit)
            fit = replace(fit, upright=upright, column_limit=limit)
            # a few rows grow taller too, so a small grid is not a sliver
            taller = max(fit.cell_h, min(1.0, 0.75 * wider, (height - fit.column_height(tokens)) / n))
            return replace(fit, cell_w=wider, cell_h=taller)
    # colour only: columns numbered 1…n, each row label "j token" is the key
    floor = float(SMALLEST_SIZE)
    labels = numbered_labels_width(tokens, 8, floor, noted=noted)
    cell_h = min(0.5, (height - text_height(floor) - LABEL_GAP) / n)
    cell_w = min(0.6, max(cell_h, (width - labels - LABEL_GAP - 0.2) / n))  # room for two-digit numbers
    return HeatFit(False, floor, cell_w, cell_h, 8, 0, False, numbered=True, noted=noted)


def roomier_rows(fit: HeatFit, tokens: Sequence[str], width: float, most: int = 12) -> HeatFit:
    """``fit`` with colour-only row labels ("12 token") keeping up to ``most`` characters of their
    token where ``width`` has room for them beside the cells (a grid with numbers is returned as is)."""
    if fit.numbers:
        return fit
    n = len(tokens)
    for limit in range(most, fit.row_limit, -1):
        if numbered_labels_width(tokens, limit, fit.size, noted=fit.noted) + LABEL_GAP + 0.2 + n * fit.cell_w <= width:
            return replace(fit, row_limit=limit)
    return fit


class _UprightMixin:
    """A text turned a quarter turn: its type size is measured across it, not along its height."""

    width: float
    initial_height: float
    _font_size: float

    @property
    def font_size(self) -> float:
        # manim measures a text's size by its height; turned upright, that is its width
        return self.width / self.initial_height * self._font_size


def _upright(label: Text) -> Text:
    """``label`` turned to read upwards, still knowing its type size."""
    label.rotate(PI / 2)
    label.__class__ = type("Upright" + type(label).__name__, (_UprightMixin, type(label)), {})
    return label


class HeatGrid(VGroup):
    """``rows × columns`` cells in brackets, token labels left of the rows and above the columns.

    ``squares[i][j]`` are the cells (unfilled until a scene fills them); row ``i`` sits at
    ``y = -i · cell_h`` before the grid is moved. Column labels lie flat when ``upright`` is
    false, else they read upwards; either way one label per column, never staggered.
    """

    def __init__(
        self, rows: int, columns: int, *, cell_w: float, cell_h: float, size: float,
        row_tokens: Sequence[str] | None = None, row_limit: int = 10, row_color: str = QUERY,
        column_tokens: Sequence[str] | None = None, column_limit: int = 10, upright: bool = False,
        column_color: str = KEY, gap: float = 0.05,
    ) -> None:
        super().__init__()
        self.size, self.cell_w, self.cell_h = size, cell_w, cell_h
        self.squares = [
            [Rectangle(width=cell_w - gap, height=cell_h - gap, stroke_width=0, fill_opacity=0)
             .move_to((j * cell_w, -i * cell_h, 0)) for j in range(columns)]
            for i in range(rows)
        ]
        self.cells = VGroup(*(square for row in self.squares for square in row))
        self.brackets = Brackets(self.cells, buff=0.06, serif=min(0.12, cell_w / 3))
        self.row_labels = VGroup(*(token_text(t, limit=row_limit, size=size, color=row_color)
                                   for t in row_tokens or ()))
        for i, label in enumerate(self.row_labels):
            label.next_to(self.brackets, LEFT, buff=LABEL_GAP).set_y(-i * cell_h)
        self.column_labels = VGroup()
        for j, token in enumerate(column_tokens or ()):
            label = token_text(token, limit=column_limit, size=size, color=column_color)
            if upright:
                _upright(label)
            self.column_labels.add(label.next_to(self.brackets, UP, buff=LABEL_GAP).set_x(j * cell_w))
        if upright:  # upright labels start at one line, just above the bracket
            for label in self.column_labels:
                label.align_to(self.brackets, DOWN).shift(UP * (self.brackets.height + LABEL_GAP))
        self.add(self.cells, self.brackets, self.row_labels, self.column_labels)

    def cell_center(self, i: int, j: int) -> np.ndarray:
        return self.squares[i][j].get_center()

    def label_rows(self, labels: Sequence[VMobject]) -> None:
        """Put labels the scene made (numbered ones, say) left of the rows, right-aligned."""
        self.row_labels.submobjects = []
        for i, label in enumerate(labels):
            label.next_to(self.brackets, LEFT, buff=LABEL_GAP).set_y(self.row_y(i))
            self.row_labels.add(label)

    def label_columns(self, labels: Sequence[VMobject], columns: Sequence[int] | None = None) -> None:
        """Put labels the scene made over the columns (``columns``: which, all by default), lying flat."""
        self.column_labels.submobjects = []
        for j, label in zip(columns if columns is not None else range(len(labels)), labels, strict=True):
            label.next_to(self.brackets, UP, buff=LABEL_GAP).set_x(self.cell_center(0, j)[0])
            self.column_labels.add(label)

    def row_y(self, i: int) -> float:
        return float(self.squares[i][0].get_y())

    def row_anchors(self) -> dict[int, Mobject]:
        """Row ``i``'s cells: the band of its numbers (see :class:`scenes.facts.Bands`); a row faded out
        no longer counts, cells never filled (nor added) still do."""
        return {i: VGroup(*row) for i, row in enumerate(self.squares)}

    def column_anchors(self) -> dict[int, Mobject]:
        """Column ``j``'s cells (as :meth:`row_anchors`)."""
        return {j: VGroup(*(row[j] for row in self.squares)) for j in range(len(self.squares[0]))}

    def band_region(self) -> tuple[Mobject, ...]:
        """The cells and brackets (not the labels around them)."""
        return (self.cells, self.brackets)

    def row(self, i: int) -> VGroup:
        """The cells of row ``i``."""
        return VGroup(*self.squares[i])

    def place(self, entries: Sequence[Sequence[VMobject]]) -> VGroup:
        """Put numbers in the cells, right-aligned so decimal points line up; rows of a VGroup."""
        right_aligned(entries, self.cell_center)
        return VGroup(*(VGroup(*row) for row in entries))

    def fill(self, values: np.ndarray, low: float, high: float, hue: str, *, animate: bool = True,
             only: Callable[[int, int], bool] | None = None) -> list[Any]:
        """Fill every cell (``only`` those of rows ``i`` and columns ``j`` where ``only(i, j)``) by its number;
        the animations (none with ``animate=False``).

        Animated, the cells are one :class:`~scenes.kit.fades.Reshade`: their fills blended, their points
        left alone (one ``square.animate`` per cell copied and moved every point of n² squares).
        """

        def paint() -> None:
            for i, row in enumerate(self.squares):
                for j, square in enumerate(row):
                    if only is None or only(i, j):
                        square.set_fill(hue, opacity=opacity_of(float(values[i, j]), low, high))

        if not animate:
            paint()
            return []
        return [reshade(self.cells, paint)]


def stack(entries: Sequence[VMobject], *, right: float, top: float, pitch: float) -> VGroup:
    """Numbers in a column, right-aligned at ``right``, the first centred at ``top``."""
    for k, entry in enumerate(entries):
        entry.move_to((0, top - k * pitch, 0)).align_to((right, 0, 0), RIGHT)
    return VGroup(*entries)


def row_box(grid: HeatGrid, row: int, color: str = HIGHLIGHT) -> SurroundingRectangle:
    """An outline around the cells of row ``row``."""
    return SurroundingRectangle(grid.row(row), color=color, buff=0.03, stroke_width=3)


class Legend(VGroup):
    """A small colour scale: the smallest number, a bar from dark to bright, the largest number.

    The end numbers are made (and recorded) by the scene; :meth:`ends` places a new pair.
    """

    def __init__(self, low: Text, high: Text, hue: str, *, width: float, height: float, steps: int = 8) -> None:
        super().__init__()
        self.bar = VGroup(*(
            Rectangle(width=width / steps, height=height, stroke_width=0)
            .set_fill(hue, opacity=LOWEST + (HIGHEST - LOWEST) * k / (steps - 1))
            for k in range(steps)
        )).arrange(RIGHT, buff=0)
        self.frame = SurroundingRectangle(self.bar, buff=0, stroke_width=1, color=INK, stroke_opacity=0.4)
        self.add(self.bar, self.frame)
        self.low, self.high = self.ends(low, high)
        self.add(self.low, self.high)
        # the scale's two sides, marks that draw nothing (within the legend's extent, moving with it): the low end's
        # number stands left of the bar's middle, the high end's right of it (scene.columns("end", …))
        middle, y = self.bar.get_center()[0], self.bar.get_center()[1]
        left = self.bar.get_left()[0] - 0.12 - low.width  # the sides by the bar and the ends' sizes, not by where
        right = self.bar.get_right()[0] + 0.12 + high.width  # the ends were put
        self.sides = VGroup(*(Rectangle(width=max(b - a, 0.01), height=height, stroke_width=0, fill_opacity=0)
                              .move_to(((a + b) / 2, y, 0)) for a, b in ((left, middle), (middle, right))))
        self.add(self.sides)

    def ends(self, low: Text, high: Text) -> tuple[Text, Text]:
        """Place ``low`` left of the bar and ``high`` right of it; returns them."""
        low.next_to(self.bar, LEFT, buff=0.12)
        high.next_to(self.bar, RIGHT, buff=0.12)
        return low, high

    def recolor(self, hue: str) -> list[Any]:
        """Animations turning the bar to another hue."""
        return [step.animate.set_fill(hue) for step in self.bar]


# -- the numbers of a grid, made and recorded by the scene ------------------------------------------


def inks(opacities: np.ndarray, shown: np.ndarray | None = None) -> list[list[str]]:
    """The ink of each cell's number: :func:`ink_on` its fill, but one ink (that of their mean) for the
    cells of a grid whose fills all lie within :data:`NARROW` of each other, lest the ink alone flip
    between cells that look alike (a widened scale puts a near-uniform grid at the middle, where the
    ink turns). ``shown``: the cells that show a number of the scale (not a masked ``−∞``; those keep
    :func:`ink_on` their fill), all by default.

    >>> inks(np.array([[0.46, 0.53]])) == [[ink_on(0.495)] * 2], inks(np.array([[0.2, 0.8]]))[0] == [INK, BACKGROUND]
    (True, True)
    """
    shown = np.ones(opacities.shape, dtype=bool) if shown is None else shown
    ink = [[ink_on(float(o)) for o in row] for row in opacities]
    if shown.any() and float(np.ptp(opacities[shown])) < NARROW:
        one = ink_on(float(opacities[shown].mean()))
        ink = [[one if shown[i, j] else ink[i][j] for j in range(len(row))] for i, row in enumerate(ink)]
    return ink


def cell_numbers(scene: Any, grid: HeatGrid, source: str, field: str, ranges: str, *, size: float) -> VGroup:
    """Every cell's number of ``source.field``, in the ink that reads on its fill (:func:`inks`), placed (rows)."""
    matrix = np.asarray(getattr(scene.sources[source][0], field))
    low, high = (scene.value_of(Fact(ranges, field, (k,))) for k in (0, 1))
    rows, columns = matrix.shape
    opacities = np.array([[opacity_of(float(matrix[i, j]), low, high) for j in range(columns)] for i in range(rows)])
    ink = inks(opacities, np.isfinite(matrix))
    return grid.place([[scene.number(source, field, i, j, size=size, color=ink[i][j])
                        for j in range(columns)] for i in range(rows)])


def fill_cells(scene: Any, grid: HeatGrid, source: str, field: str, ranges: str, hue: str, *,
               animate: bool, only: Callable[[int, int], bool] | None = None) -> list[Any]:
    """Fill the cells (``only`` some: see :meth:`HeatGrid.fill`) by ``source.field`` over its colour scale
    (``ranges`` names its ends)."""
    matrix = np.asarray(getattr(scene.sources[source][0], field))
    low, high = (scene.value_of(Fact(ranges, field, (k,))) for k in (0, 1))
    return grid.fill(matrix, low, high, hue, animate=animate, only=only)


def legend(scene: Any, ranges: str, field: str, hue: str, *, size: float = SMALLEST_SIZE) -> Legend:
    """The colour scale of a grid showing ``field``: its two ends, recorded, around a bar."""
    low = scene.number(ranges, field, 0, size=size, color=MUTED)
    high = scene.number(ranges, field, 1, size=size, color=MUTED)
    return ends_legend(scene, low, high, hue)


def ends_legend(scene: Any, low: Text, high: Text, hue: str, *, width: float = 0.9,
                height: float = 0.2) -> Legend:
    """A colour scale around a bar from two numbers the scene recorded, its ends registered as facts of their side
    (``scene.columns("end", …)``): the low end's number must stand left of the bar's middle, the high end's right."""
    made = Legend(low, high, hue, width=width, height=height)
    scene.columns("end", dict(enumerate(made.sides)), *made.sides)
    return made


def key_column(scene: Any, grid: HeatGrid, columns: Sequence[tuple[str, str, int | None, str]], *, left: float,
               heads: Sequence[VMobject], size: float = SMALLEST_SIZE, gap: float = 0.3,
               names: Sequence[str] = ()) -> VGroup:
    """One row per key beside a grid (each at its row's height): "k_j", then a number per column.

    ``columns`` are ``(source, field, row, colour)``: entry ``j`` of a column is ``field[row, j]`` (``field[j]``
    where ``row`` is ``None``: a query step's own row, such as its exps).
    ``heads`` sit over the columns; ``names``, the quantity each head names (``"causal.weights"``), as the
    scene's words say it: a table of two or more columns registers them (``scene.fields``), so each number
    must stand under the head of its own quantity. Returns ``VGroup(heads, keys, *columns)``, its rows
    registered with the scene as the keys' (``scene.rows("key", …)``: each number stands in its key's row).
    """
    n = len(grid.squares)
    keys = VGroup(*(scene.label("k{}", Fact("position", "key", (j,)), size=size, color=KEY) for j in range(n)))
    made = [VGroup(*(scene.number(source, field, *([] if row is None else [row]), j, size=size, color=color)
                     for j in range(n))) for source, field, row, color in columns]
    x = left + max(k.width for k in keys) + gap
    for k, column in enumerate(made):
        x += max(max(e.width for e in column), heads[k].width if k < len(heads) else 0.0)
        for j, entry in enumerate(column):
            entry.move_to((0, grid.row_y(j), 0)).align_to((x, 0, 0), RIGHT)
        if k < len(heads):
            heads[k].next_to(column, UP, buff=0.16).align_to(column, RIGHT)
        x += gap
    for j, key in enumerate(keys):
        key.move_to((left + key.width / 2, grid.row_y(j), 0))
    table = VGroup(VGroup(*heads), keys, *made)
    scene.rows("key", dict(enumerate(keys)), table)  # each number in its key's row (checked by the tests)
    if names:  # each number under its own quantity's head
        scene.fields("column", dict(zip(names, heads, strict=True)), *made)
    return table


def _vector_texts(scene: Any, name: str, source: str, field: str, row: int, limit: int | None = None) -> list[str]:
    """The parts of ``z3 = (a, b)`` as :func:`vector_line` writes them: name, "= (", each number and
    what follows it (", " or ")"); with ``limit``, of a longer row only the first ``limit``, the last followed
    by ", …)"."""
    width = np.shape(getattr(scene.sources[source][0], field))[1]
    columns = width if limit is None else min(limit, width)
    texts = [f"{name}{row + 1}", " = ("]
    for m in range(columns):
        texts += [scene.text_for(Fact(source, field, (row, m))),
                  ", " if m < columns - 1 else (")" if columns == width else ", …)")]
    return texts


def _typeset(parts: Sequence[VMobject], whole: VMobject) -> bool:
    """Put each part's glyphs where ``whole`` (the same text set in one piece) has them: one line
    spaced and on one baseline as Pango sets it. False (nothing moved) if the glyphs do not match."""
    glyphs = whole.submobjects
    if sum(len(part.submobjects) for part in parts) != len(glyphs) or not all(p.submobjects for p in parts):
        return False
    k = 0
    for part in parts:
        part.shift(glyphs[k].get_corner(DL) - part.submobjects[0].get_corner(DL))
        k += len(part.submobjects)
    return True


def vector_line(scene: Any, name: str, source: str, field: str, row: int, *, size: float,
                color: str = INK, limit: int | None = None) -> VGroup:
    """``z3 = (a, b, …)``: row ``row`` of a matrix field as a vector named ``name``, set as one line of text
    (parentheses and commas in the numbers' ink, ", " between them). The parts: the name, "= (", then
    each number and what follows it, so ``line[2 + 2 m]`` is number ``m``. ``limit``: at most that many
    numbers, then "…" (a real model's 64)."""
    texts = _vector_texts(scene, name, source, field, row, limit)
    columns = (len(texts) - 2) // 2
    parts: list[VMobject] = [scene.label(name + "{}", Fact("position", "token", (row,)), size=size, color=color),
                            text(texts[1].strip(), size=size, color=color)]
    for m in range(columns):
        parts += [scene.number(source, field, row, m, size=size, color=color),
                  text(texts[3 + 2 * m].strip(), size=size, color=color)]
    line = VGroup(*parts)
    if not _typeset(parts, text("".join(texts), size=size)):
        line.arrange(RIGHT, buff=0.1)
    return line


def vector_width(scene: Any, name: str, source: str, field: str, row: int, size: float,
                 limit: int | None = None) -> float:
    """The width :func:`vector_line` will take (measured without making or recording anything)."""
    return text_width("".join(_vector_texts(scene, name, source, field, row, limit)), size)
