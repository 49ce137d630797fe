"""Why scale: for random q and k the spread of q·k grows like √d; divided by √d it stays flat.

Played right after ScaleAndSoftmax. Its numbers are :func:`attention_math.scaling_spread`'s
(seeded), not the scenario's: clouds of q·k for d = 2, 32 and 512; the spread against d on log
scales, rising like √d and flat once divided by √d; one row of scores at d = 512 softmaxed
unscaled (one weight near 1) and scaled. Four panels build up and stay: the last frame is the
summary. Every point is plotted where its number says.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from manim import (
    DOWN,
    LEFT,
    RIGHT,
    UP,
    Axes,
    Create,
    DashedLine,
    Dot,
    FadeIn,
    GrowFromEdge,
    LaggedStart,
    Line,
    LogBase,
    Rectangle,
    VGroup,
    VMobject,
)

from attention_math import scaling_spread
from scenes.base import ExplainerScene
from scenes.facts import value
from scenes.kit.layout import BOTTOM, HALF_WIDTH, TOP
from scenes.kit.palette import HIGHLIGHT, INK, MUTED, WEIGHT
from scenes.kit.text import SMALLEST_SIZE, text

__all__ = ["WhyScale"]

SEED = 0  # the sampler's seed: the tests derive the same numbers from it
CLOUD_DIMS = (2, 32, 512)  # the clouds drawn, as the storyboard has them
TICK_DIMS = (1, 8, 64, 512)  # the sizes written under the plot's axis
LEFT_PANEL, RIGHT_PANEL = (-HALF_WIDTH, -0.35), (0.35, HALF_WIDTH)  # x from, to
UPPER_TITLE_Y, LOWER_TITLE_Y = TOP - 0.15, -0.45
UNSCALED, SCALED = HIGHLIGHT, WEIGHT  # one colour each, in every panel
TITLE_SIZE, LABEL_SIZE = 24, 22


class _Strip:
    """``c2p(x)``: the point of ``x`` on a cloud's line, lifted off it by ``lift`` (a cloud's spread)."""

    def __init__(self, line: Line, low: float, high: float, lift: float = 0.0) -> None:
        self.line, self.low, self.high, self.lift = line, low, high, lift

    def c2p(self, x: float, *_: float) -> np.ndarray:
        start, end = self.line.get_start(), self.line.get_end()
        share = (x - self.low) / (self.high - self.low)
        return np.asarray(start + share * (end - start) + self.lift * UP)


class _Columns:
    """``c2p(w)``: the top of column ``j``'s bar for weight ``w`` (bars stand on ``base``)."""

    def __init__(self, base: Line, column: int, columns: int, unit: float) -> None:
        self.base, self.column, self.columns, self.unit = base, column, columns, unit

    def x(self) -> float:
        start, end = self.base.get_start(), self.base.get_end()
        return float(start[0] + (self.column + 0.5) * (end[0] - start[0]) / self.columns)

    def c2p(self, weight: float, *_: float) -> np.ndarray:
        return np.array([self.x(), self.base.get_start()[1] + weight * self.unit, 0.0])


@dataclass
class _Clouds:
    """Upper left: one row per size d, its q·k as dots, its spread as a bar and a number."""

    title: VMobject
    frame: VGroup  # the zero line, the axis name, the spread column's head
    rows: list[VGroup]  # per d: its label, its dots, its spread bar, its spread number


@dataclass
class _Plot:
    """Upper right: the spread against d, both axes log scale."""

    title: VMobject
    axes: VGroup  # the axes, their names, the tick labels
    root: VGroup  # the dashed √d and its name
    raw: VGroup  # the dots, the line through them, the name
    scaled: VGroup


@dataclass
class _Row:
    """Lower half: one row of scores at d = 512 softmaxed, as bars with their weights and scores."""

    title: VMobject
    base: Line
    bars: VGroup
    weights: VGroup
    scores: VGroup  # the scores under the bars, and their name


class WhyScale(ExplainerScene):
    """Random q·k spread like √d; ÷ √d they do not; so the softmax of a scaled row does not saturate."""

    def construct(self) -> None:
        self.spread = scaling_spread(seed=SEED)
        self.add_source("scaling", self.spread, 2)  # spreads and weights
        self.add_source("scaling_whole", self.spread, 0)  # sizes d, the row's scores
        self.add_source("scaling_tenths", self.spread, 1)  # the row's scores ÷ √d
        self.header("Why scale by √d", "scale")
        clouds = self._clouds()
        plot = self._plot()
        unscaled = self._row("unscaled", "q·k", "unscaled_weights", "scaling_whole", "row_scores", LEFT_PANEL, UNSCALED)
        scaled = self._row("scaled", "q·k / √d", "scaled_weights", "scaling_tenths", "row_scaled_scores", RIGHT_PANEL,
                           SCALED)
        self._first_cloud(clouds)
        self._more_clouds(clouds)
        self._rising(plot)
        self._flat(plot)
        self._saturated(unscaled)
        self._spread_out(scaled)

    def _dim(self, d: int) -> int:
        """The index of size ``d`` among the sampler's sizes."""
        return self.spread.dims.index(d)

    # -- upper left: the clouds ------------------------------------------------------------------
    def _clouds(self) -> _Clouds:
        title = text("q·k of random q, k with d entries", size=TITLE_SIZE, color=INK)
        title.move_to((0, UPPER_TITLE_Y, 0)).align_to((LEFT_PANEL[0], 0, 0), LEFT)
        head = text("spread", size=SMALLEST_SIZE, color=MUTED)
        labels = [self.label("d = {}", value("scaling_whole", "dims", self._dim(d)), size=LABEL_SIZE, color=MUTED)
                  for d in CLOUD_DIMS]
        label_w = max(label.width for label in labels)
        left, right = LEFT_PANEL[0] + label_w + 0.3, LEFT_PANEL[1] - head.width - 0.3
        top, pitch = UPPER_TITLE_Y - 0.75, 0.78
        reach = float(np.max(np.abs(self.spread.kept_products))) * 1.05
        rows = []
        for k, (d, label) in enumerate(zip(CLOUD_DIMS, labels, strict=True)):
            y = top - k * pitch
            line = Line((left, y, 0), (right, y, 0), stroke_width=0)
            label.move_to((LEFT_PANEL[0] + label_w - label.width / 2, y, 0))
            rows.append(VGroup(label, *self._cloud(self._dim(d), line, reach)))
        zero = DashedLine((0.0, top + 0.35, 0), (0.0, top - 2 * pitch - 0.4, 0), color=MUTED, stroke_width=1.5)
        zero.set_x((left + right) / 2)
        head.move_to((LEFT_PANEL[1] - head.width / 2, top + 0.38, 0))
        name = text("q·k", size=LABEL_SIZE, color=MUTED).move_to((0, top - 2 * pitch - 0.3, 0))
        name.align_to((right, 0, 0), RIGHT)
        return _Clouds(title, VGroup(zero, name, head), rows)

    def _cloud(self, i: int, line: Line, reach: float) -> tuple[VGroup, VMobject, VMobject]:
        """Row ``i``'s dots (plotted), its spread as a bar from −σ to σ (its end plotted), and σ."""
        dots = VGroup()
        for s in range(self.spread.kept_products.shape[1]):
            lift = 0.15 * (((s * 7) % 11) / 5 - 1)  # a steady scatter across the row, so dots stay apart
            axis = _Strip(line, -reach, reach, lift)
            fact = value("scaling", "kept_products", i, s)
            dot = Dot(axis.c2p(self.value_of(fact)), radius=0.03, color=UNSCALED, fill_opacity=0.8)
            dots.add(self.plot(dot, axis, fact))
        sigma = value("scaling", "raw_std", i)
        axis = _Strip(line, -reach, reach, -0.3)
        bar = Line(axis.c2p(-self.value_of(sigma)), axis.c2p(self.value_of(sigma)), color=INK, stroke_width=3)
        self.plot(bar, axis, sigma, anchor="end")
        number = self.number("scaling", "raw_std", i, size=LABEL_SIZE, color=INK)
        number.move_to((LEFT_PANEL[1] - number.width / 2, line.get_y(), 0))
        return dots, bar, number

    def _first_cloud(self, clouds: _Clouds) -> None:
        label, dots, bar, number = clouds.rows[0]
        d = self._dim(CLOUD_DIMS[0])
        self.beat(
            f"Random queries and keys with d = {self.fmt('scaling_whole', 'dims', d)} entries each: "
            "their dot products q·k.",
            FadeIn(clouds.title, clouds.frame, label), LaggedStart(*(FadeIn(dot) for dot in dots), lag_ratio=0.02),
            run_time=1.5, wait=0.5,
        )
        self.beat(f"Their spread, the standard deviation: {self.fmt('scaling', 'raw_std', d)}.",
                  Create(bar), FadeIn(number), run_time=1.0, wait=0.6)

    def _more_clouds(self, clouds: _Clouds) -> None:
        said = [self.fmt("scaling_whole", "dims", self._dim(d)) for d in CLOUD_DIMS[1:]]
        spreads = [self.fmt("scaling", "raw_std", self._dim(d)) for d in CLOUD_DIMS[1:]]
        self.beat(
            f"Unscaled, dot products spread out as the size grows: at d = {said[0]} and {said[1]}, "
            f"spreads {spreads[0]} and {spreads[1]}.",
            *(LaggedStart(FadeIn(label), LaggedStart(*(FadeIn(dot) for dot in dots), lag_ratio=0.02),
                          Create(bar), FadeIn(number), lag_ratio=0.3) for label, dots, bar, number in clouds.rows[1:]),
            run_time=2.5, wait=1.0,
        )

    # -- upper right: the spread against d ----------------------------------------------------
    def _plot(self) -> _Plot:
        title = text("the spread against d, log scales", size=TITLE_SIZE, color=INK)
        title.move_to((0, UPPER_TITLE_Y, 0)).align_to((RIGHT_PANEL[0], 0, 0), LEFT)
        names = {"raw": text("q·k", size=LABEL_SIZE, color=UNSCALED),
                 "scaled": text("q·k / √d", size=LABEL_SIZE, color=SCALED)}
        ends = [self.number("scaling", "raw_std", i, size=SMALLEST_SIZE, color=MUTED) for i in (0, -1)]
        left = RIGHT_PANEL[0] + max(end.width for end in ends) + 0.2
        x_length = RIGHT_PANEL[1] - left - max(name.width for name in names.values()) - 0.3
        exponents = int(np.log2(max(self.spread.dims)))
        axes = Axes(x_range=[0, exponents, 1], y_range=[-1, 5, 1], x_length=x_length, y_length=1.8, tips=False,
                    x_axis_config={"scaling": LogBase(2)},
                    y_axis_config={"scaling": LogBase(2), "include_ticks": False},
                    axis_config={"color": MUTED, "stroke_width": 2})
        axes.shift(RIGHT * (left - axes.c2p(1, 0.5)[0]) + UP * (0.3 - axes.c2p(1, 0.5)[1]))
        ticks = VGroup(*(self.label("{}", value("scaling_whole", "dims", self._dim(d)), size=SMALLEST_SIZE,
                                    color=MUTED).next_to(axes.c2p(d, 0.5), DOWN, buff=0.12) for d in TICK_DIMS))
        d_name = text("d", size=LABEL_SIZE, color=MUTED).next_to(ticks[-1], RIGHT, buff=0.25)
        spread_name = text("spread", size=SMALLEST_SIZE, color=MUTED).next_to(axes.y_axis, UP, buff=0.12)
        raw = self._series(axes, "raw_std", UNSCALED, names["raw"])
        scaled = self._series(axes, "scaled_std", SCALED, names["scaled"])
        guides = VGroup()
        for end, dot in zip(ends, (raw[1][0], raw[1][-1]), strict=True):
            end.next_to((axes.y_axis.get_x(), dot.get_y(), 0), LEFT, buff=0.12)
            guides.add(DashedLine((axes.y_axis.get_x(), dot.get_y(), 0), dot.get_center(), color=MUTED,
                                  stroke_width=1, dash_length=0.06))
        raw.add(VGroup(*ends), guides[1:])
        return _Plot(title, VGroup(axes, ticks, d_name, spread_name), self._root(axes), raw, scaled)

    def _series(self, axes: Axes, field: str, color: str, name: VMobject) -> VGroup:
        """One spread per d as dots (plotted) on a line, named at its right end: (line, dots, name)."""
        dots = VGroup()
        for i in range(len(self.spread.dims)):
            facts = (value("scaling_whole", "dims", i), value("scaling", field, i))
            dot = Dot(axes.c2p(*(self.value_of(f) for f in facts)), radius=0.05, color=color)
            dots.add(self.plot(dot, axes, *facts))
        line = VMobject(stroke_color=color, stroke_width=2.5).set_points_as_corners([dot.get_center() for dot in dots])
        name.next_to(dots[-1], RIGHT, buff=0.2)
        return VGroup(line, dots, name)

    def _root(self, axes: Axes) -> VGroup:
        """√d, dashed: the spread the raw dot products should have."""
        points = [axes.c2p(self.value_of(value("scaling_whole", "dims", i)),
                           self.value_of(value("scaling", "sqrt_dims", i))) for i in range(len(self.spread.dims))]
        dashed = DashedLine(points[0], points[-1], color=INK, stroke_width=2, dash_length=0.1)
        name = text("√d", size=LABEL_SIZE, color=INK)
        middle = points[len(points) // 2]
        name.move_to(middle + np.array([-0.35, 0.35, 0]))
        return VGroup(dashed, name)

    def _rising(self, plot: _Plot) -> None:
        raw_line, raw_dots, raw_name, ends, guides = plot.raw
        self.beat(
            f"The spread against d, both axes on a log scale: from {self.fmt('scaling', 'raw_std', 0)} it rises "
            f"to {self.fmt('scaling', 'raw_std', -1)}, like √d, the dashed line.",
            FadeIn(plot.title, plot.axes), Create(raw_line),
            LaggedStart(*(FadeIn(dot, scale=0.5) for dot in raw_dots), lag_ratio=0.1), FadeIn(raw_name, ends, guides),
            Create(plot.root[0]), FadeIn(plot.root[1]), run_time=2.2, wait=1.0,
        )

    def _flat(self, plot: _Plot) -> None:
        line, dots, name = plot.scaled
        self.beat("Dividing by √d keeps the spread the same at every size: a flat line.",
                  LaggedStart(*(FadeIn(dot, scale=0.5) for dot in dots), lag_ratio=0.1), Create(line), FadeIn(name),
                  run_time=1.8, wait=1.2)

    # -- the lower half: one row softmaxed -----------------------------------------------------
    def _row(self, how: str, argument: str, field: str, source: str, scores: str, panel: tuple[float, float],
             color: str) -> _Row:
        """The row at the largest d, ``how`` softmaxed: ``softmax(argument)`` as bars, the scores under them."""
        title = self.label(f"d = {{}}, {how}: softmax({argument})", value("scaling_whole", "row_dim"),
                           size=TITLE_SIZE, color=INK)
        title.move_to((0, LOWER_TITLE_Y, 0)).align_to((panel[0], 0, 0), LEFT)
        keys = len(self.spread.row_scores)
        base_y, unit = BOTTOM + 0.85, 1.35
        base = Line((panel[0], base_y, 0), (panel[1], base_y, 0), color=MUTED, stroke_width=2)
        bars, weights, numbers = VGroup(), VGroup(), VGroup()
        for j in range(keys):
            axis = _Columns(base, j, keys, unit)
            fact = value("scaling", field, j)
            height = max(self.value_of(fact) * unit, 0.01)
            bar = Rectangle(width=0.42, height=height, stroke_width=0, fill_color=color, fill_opacity=0.85)
            bar.move_to((axis.x(), base_y + height / 2, 0))
            bars.add(self.plot(bar, axis, fact, anchor="top"))  # a bar of 0.01 tall is within the tolerance
            weights.add(self.number("scaling", field, j, size=SMALLEST_SIZE, color=color)
                        .next_to(bar, UP, buff=0.08))
            numbers.add(self.number(source, scores, j, size=SMALLEST_SIZE, color=MUTED)
                        .move_to((axis.x(), base_y - 0.3, 0)))
        name = text(f"the scores, {argument}", size=SMALLEST_SIZE, color=MUTED)
        name.move_to(((panel[0] + panel[1]) / 2, base_y - 0.62, 0))
        return _Row(title, base, bars, weights, VGroup(numbers, name))

    def _saturated(self, row: _Row) -> None:
        top = self.spread.top_key
        self.beat(
            f"One row of scores at d = {self.fmt('scaling_whole', 'row_dim')}, unscaled: the softmax gives one key "
            f"{self.fmt('scaling', 'unscaled_weights', top)} and the others almost nothing.",
            FadeIn(row.title, row.base, row.scores), LaggedStart(*(GrowFromEdge(bar, DOWN) for bar in row.bars),
                                                                 lag_ratio=0.08),
            FadeIn(row.weights), run_time=2.2, wait=1.2,
        )

    def _spread_out(self, row: _Row) -> None:
        top = self.spread.top_key
        self.beat(
            f"Scaled, the largest weight is {self.fmt('scaling', 'scaled_weights', top)}: the softmax keeps "
            "choosing, instead of saturating.",
            FadeIn(row.title, row.base, row.scores), LaggedStart(*(GrowFromEdge(bar, DOWN) for bar in row.bars),
                                                                 lag_ratio=0.08),
            FadeIn(row.weights), run_time=2.2, wait=2.0,
        )

