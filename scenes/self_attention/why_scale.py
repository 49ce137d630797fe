"""Why scale: for random q and k the spread of q·k grows like √d; divided by √d it stays flat.

Played right after ScaleAndSoftmax. Its numbers are :func:`attention_math.scaling_spread`'s
(seeded), not the scenario's: clouds of q·k for d = 2, 32 and 512; the spread against d on log
scales, rising like √d and flat once divided by √d; one row of scores at d = 512 softmaxed
unscaled (one weight near 1) and scaled. Each idea first takes the frame (the clouds all of it,
then the clouds and the plot a half each) and then steps up into a quarter to make room for the
next; four panels stay: the last frame is the summary. Every point is plotted where its number
says, in every place a panel takes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from manim import (
    DOWN,
    LEFT,
    RIGHT,
    UP,
    Animation,
    AnimationGroup,
    Axes,
    Create,
    DashedLine,
    Dot,
    FadeIn,
    FadeOut,
    GrowFromEdge,
    LaggedStart,
    Line,
    LogBase,
    Rectangle,
    ReplacementTransform,
    Succession,
    VGroup,
    VMobject,
)

from attention_math import scaling_spread
from scenes.base import ExplainerScene
from scenes.facts import value
from scenes.kit.layout import BOTTOM, HALF_WIDTH, TOP
from scenes.kit.palette import HIGHLIGHT, INK, MUTED, WEIGHT
from scenes.kit.text import text

__all__ = ["WhyScale"]

SEED = 0  # the sampler's seed: the tests derive the same numbers from it
CLOUD_DIMS = (2, 32, 512)  # the clouds drawn, as the storyboard has them
TICK_DIMS = (1, 8, 64, 512)  # the sizes written under the plot's axis
SPREADS = (-0.4, 4.6)  # the spread axis, in powers of 2: from about 0.76 to 24
UNSCALED, SCALED = HIGHLIGHT, INK  # q·k and q·k / √d, in the clouds and the plot (weights are WEIGHT, both rows)
MIDDLE = 0.35  # half the gap between the left and the right panels
UPPER_BOTTOM, LOWER_TOP = -0.1, -0.5  # the upper panels end, the lower ones begin (the summary's quarters)


@dataclass(frozen=True)
class _Box:
    """A panel's place: x from ``left`` to ``right``, y from ``bottom`` to ``top``; its type sizes."""

    left: float
    right: float
    bottom: float
    top: float
    title_size: float = 24
    size: float = 22  # labels and numbers

    @property
    def big(self) -> bool:
        """The panel alone or beside one other: larger dots, more air."""
        return self.size > 22


FULL = _Box(-HALF_WIDTH, HALF_WIDTH, BOTTOM, TOP, 30, 26)
LEFT_HALF = _Box(-HALF_WIDTH, -MIDDLE, BOTTOM, TOP, 28, 26)
RIGHT_HALF = _Box(MIDDLE, HALF_WIDTH, BOTTOM, TOP, 28, 26)
UPPER_LEFT, UPPER_RIGHT = _Box(-HALF_WIDTH, -MIDDLE, UPPER_BOTTOM, TOP), _Box(MIDDLE, HALF_WIDTH, UPPER_BOTTOM, TOP)
LOWER_LEFT, LOWER_RIGHT = _Box(-HALF_WIDTH, -MIDDLE, BOTTOM, LOWER_TOP), _Box(MIDDLE, HALF_WIDTH, BOTTOM, LOWER_TOP)


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
    """One row per size d: its q·k as dots, its spread as a bar and a number."""

    title: VMobject
    frame: VGroup  # the zero line, the heads of the dots' column and of the spreads'
    rows: list[VGroup]  # per d: its label, its dots, its spread bar, its spread number
    note: VMobject | None = None  # "zoomed in", when the first cloud has a scale of its own

    def parts(self) -> list[VMobject]:
        return [self.title, self.frame, *self.rows]


@dataclass
class _Plot:
    """The spread against d, both axes log scale."""

    title: VMobject
    axes: VGroup  # the axes, their names, the tick labels
    root: VGroup  # the dashed √d and its name
    raw: VGroup  # the line, the dots, the name, the spreads at the ends, their guides
    scaled: VGroup  # the line, the dots, the name

    def parts(self) -> list[VMobject]:
        return [self.title, self.axes, self.root, self.raw, self.scaled]


@dataclass
class _Row:
    """One row of scores at d = 512 softmaxed, as bars with their weights and scores."""

    title: VMobject
    base: Line
    bars: VGroup
    weights: VGroup
    scores: VGroup  # the scores under the bars, and their name


def _move(old: list[VMobject], new: list[VMobject]) -> list[Animation]:
    """Each part of a panel to its place in the panel's next place."""
    return [ReplacementTransform(a, b) for a, b in zip(old, new, strict=True)]


class WhyScale(ExplainerScene):
    """Random q·k spread like √d; ÷ √d they do not; so the softmax of a scaled row does not saturate."""

    def construct(self) -> None:
        self.spread = scaling_spread(seed=SEED)
        self.add_source("scaling", self.spread, 2)  # spreads and weights
        self.add_source("scaling_whole", self.spread, 0)  # sizes d, the row's scores
        self.add_source("scaling_tenths", self.spread, 1)  # the row's scores ÷ √d
        self.header("Why scale by √d", "scale")
        self.reach = float(np.max(np.abs(self.spread.kept_products))) * 1.05  # one scale for every cloud
        first = self._dim(CLOUD_DIMS[0])
        zoomed = self._clouds(FULL, zoom=float(np.max(np.abs(self.spread.kept_products[first]))) * 1.05)
        clouds = self._clouds(FULL)
        self._first_cloud(zoomed)
        self._more_clouds(zoomed, clouds)
        halves = self._clouds(LEFT_HALF)
        plot = self._plot(RIGHT_HALF)
        self._rising(clouds, halves, plot)
        self._flat(plot)
        unscaled = self._row("unscaled", "q·k", "unscaled_weights", "scaling_whole", "row_scores", LOWER_LEFT)
        scaled = self._row("scaled", "q·k / √d", "scaled_weights", "scaling_tenths", "row_scaled_scores", LOWER_RIGHT)
        self._saturated(halves, plot, unscaled)
        self._spread_out(scaled)

    def _dim(self, d: int) -> int:
        """The index of size ``d`` among the sampler's sizes."""
        return self.spread.dims.index(d)

    # -- the clouds ------------------------------------------------------------------------------
    def _clouds(self, box: _Box, zoom: float | None = None) -> _Clouds:
        """The clouds in ``box``, all on one scale (q·k from −reach to reach); with ``zoom``,
        the first on a scale of its own (±``zoom``), to see it before the larger ones arrive."""
        title = text("q·k of random q, k with d entries", size=box.title_size, color=INK)
        title.move_to((box.left + title.width / 2, box.top - title.height / 2, 0))
        heads = (text("q·k", size=box.size, color=UNSCALED), text("spread", size=box.size, color=MUTED))
        shown = CLOUD_DIMS[:1] if zoom is not None else CLOUD_DIMS  # zoomed: the first cloud alone
        labels = [self.label("d = {}", value("scaling_whole", "dims", self._dim(d)), size=box.size, color=MUTED)
                  for d in shown]
        label_w = max(text(f"d = {self.text_for(value('scaling_whole', 'dims', self._dim(d)))}", size=box.size).width
                      for d in CLOUD_DIMS)  # the widest label, shown or not: the clouds' line stays where it is
        number_w = max(heads[1].width, 1.0 * box.size / 22)
        left, right = box.left + label_w + 0.4, box.right - number_w - 0.4
        head_y = title.get_bottom()[1] - (0.45 if box.big else 0.3)
        pitch = (head_y - 0.25 - box.bottom) / len(CLOUD_DIMS)
        rows, note = [], None
        for k, (d, label) in enumerate(zip(shown, labels, strict=True)):
            y = head_y - 0.25 - pitch * (k + 0.45 if zoom is None else 1.45)  # zoomed: alone, in the middle
            line = Line((left, y, 0), (right, y, 0), stroke_width=0)
            label.move_to((box.left + label_w - label.width / 2, y, 0))
            scale, air = (self.reach, pitch) if zoom is None else (zoom, 1.6 * pitch)
            rows.append(VGroup(label, *self._cloud(self._dim(d), line, scale, air, box)))
        self.rows("size", {self._dim(d): row[0] for d, row in zip(shown, rows, strict=True)}, *rows)  # σ beside its d
        if zoom is not None:
            note = text("zoomed in", size=box.size - 4, color=MUTED).next_to(rows[0][0], DOWN, buff=0.2)
            note.align_to(rows[0][0], RIGHT)
        zero = DashedLine(((left + right) / 2, head_y - 0.2, 0), ((left + right) / 2, box.bottom + 0.05, 0),
                          color=MUTED, stroke_width=1.5)
        heads[0].move_to(((left + right) / 2, head_y, 0))
        heads[1].move_to((box.right - heads[1].width / 2, head_y, 0))
        return _Clouds(title, VGroup(zero, *heads), rows, note)

    def _cloud(self, i: int, line: Line, reach: float, pitch: float, box: _Box) -> tuple[VGroup, VMobject, VMobject]:
        """Row ``i``'s dots (plotted), its spread as a bar from −σ to σ (its end plotted), and σ."""
        dots = VGroup()
        for s in range(self.spread.kept_products.shape[1]):
            lift = min(0.2 * pitch, 0.28) * (((s * 7) % 11) / 5 - 1)  # a steady scatter across the row, dots apart
            axis = _Strip(line, -reach, reach, lift)
            fact = value("scaling", "kept_products", i, s)
            dot = Dot(axis.c2p(self.value_of(fact)), radius=0.045 if box.big else 0.03, color=UNSCALED,
                      fill_opacity=0.8)
            dots.add(self.plot(dot, axis, fact))
        sigma = value("scaling", "raw_std", i)
        axis = _Strip(line, -reach, reach, -0.33 * pitch)
        bar = Line(axis.c2p(-self.value_of(sigma)), axis.c2p(self.value_of(sigma)), color=INK, stroke_width=3)
        self.plot(bar, axis, sigma, anchor="end")
        number = self.number("scaling", "raw_std", i, size=box.size, color=INK)
        number.move_to((box.right - number.width / 2, line.get_y(), 0))
        return dots, bar, number

    def _first_cloud(self, clouds: _Clouds) -> None:
        label, dots, bar, number = clouds.rows[0]
        d = self._dim(CLOUD_DIMS[0])
        self.beat(
            f"Random queries and keys with d = {self.fmt('scaling_whole', 'dims', d)} entries each: "
            "their dot products q·k.",
            FadeIn(clouds.title, clouds.frame, label, *([clouds.note] if clouds.note else [])),
            LaggedStart(*(FadeIn(dot) for dot in dots), lag_ratio=0.02),
            run_time=1.5, wait=0.5,
        )
        self.beat(f"Their spread, the standard deviation: {self.fmt('scaling', 'raw_std', d)}.",
                  Create(bar), FadeIn(number), run_time=1.0, wait=0.6)

    def _more_clouds(self, zoomed: _Clouds, clouds: _Clouds) -> None:
        """The first cloud shrinks onto the scale of the larger ones as they arrive."""
        said = [self.fmt("scaling_whole", "dims", self._dim(d)) for d in CLOUD_DIMS[1:]]
        spreads = [self.fmt("scaling", "raw_std", self._dim(d)) for d in CLOUD_DIMS[1:]]
        self.beat(
            f"Unscaled, dot products spread out as the size grows: on one scale, d = {said[0]} and {said[1]} "
            f"spread {spreads[0]} and {spreads[1]}.",
            Succession(  # first onto the common scale and up into its row, then the larger clouds
                AnimationGroup(*_move([zoomed.title, zoomed.frame, zoomed.rows[0]],
                                      [clouds.title, clouds.frame, clouds.rows[0]]),
                               *([FadeOut(zoomed.note)] if zoomed.note else []), run_time=1.2),
                AnimationGroup(*(LaggedStart(FadeIn(label), LaggedStart(*(FadeIn(dot) for dot in dots), lag_ratio=0.02),
                                             Create(bar), FadeIn(number), lag_ratio=0.3)
                                 for label, dots, bar, number in clouds.rows[1:]), run_time=1.8),
            ),
            run_time=3.0, wait=1.0,
        )

    # -- the spread against d -----------------------------------------------------------------
    def _plot(self, box: _Box) -> _Plot:
        title = text("the spread against d, log scales", size=box.title_size, color=INK)
        title.move_to((box.left + title.width / 2, box.top - title.height / 2, 0))
        small = box.size
        names = {"raw": text("q·k", size=box.size, color=UNSCALED), "scaled": text("q·k / √d", size=box.size,
                                                                                  color=SCALED)}
        ends = [self.number("scaling", "raw_std", i, size=small, color=MUTED) for i in (0, -1)]
        ticks = [self.label("{}", value("scaling_whole", "dims", self._dim(d)), size=small, color=MUTED)
                 for d in TICK_DIMS]
        d_name = text("d", size=box.size, color=MUTED)
        left = box.left + max(end.width for end in ends) + 0.25
        right = box.right - max(max(name.width for name in names.values()) + 0.3, d_name.width + ticks[-1].width / 2
                                + 0.35)
        top = title.get_bottom()[1] - 0.35
        bottom = box.bottom + ticks[0].height + 0.3
        exponents = int(np.log2(max(self.spread.dims)))
        axes = Axes(x_range=[0, exponents, 1], y_range=[*SPREADS, 1], x_length=right - left, y_length=top - bottom,
                    tips=False, x_axis_config={"scaling": LogBase(2)},
                    y_axis_config={"scaling": LogBase(2), "include_ticks": False},
                    axis_config={"color": MUTED, "stroke_width": 2})
        low = 2.0 ** SPREADS[0]  # the foot of the spread axis
        axes.shift(RIGHT * (left - axes.c2p(1, low)[0]) + UP * (bottom - axes.c2p(1, low)[1]))
        for tick, d in zip(ticks, TICK_DIMS, strict=True):
            tick.next_to(axes.c2p(d, low), DOWN, buff=0.12)
        d_name.next_to(ticks[-1], RIGHT, buff=0.3)
        raw = self._series(axes, "raw_std", UNSCALED, names["raw"], box)
        scaled = self._series(axes, "scaled_std", SCALED, names["scaled"], box)
        guides = VGroup()
        for end, dot in zip(ends, (raw[1][0], raw[1][-1]), strict=True):
            end.next_to((axes.y_axis.get_x(), dot.get_y(), 0), LEFT, buff=0.2)  # clear of the dot on the axis
            guides.add(DashedLine((axes.y_axis.get_x(), dot.get_y(), 0), dot.get_center(), color=MUTED,
                                  stroke_width=1, dash_length=0.06))
        raw.add(VGroup(*ends), guides[1:])
        return _Plot(title, VGroup(axes, *ticks, d_name), self._root(axes, box), raw, scaled)

    def _series(self, axes: Axes, field: str, color: str, name: VMobject, box: _Box) -> VGroup:
        """One spread per d as dots (plotted) on a line, named at its right end: (line, dots, name)."""
        dots = VGroup()
        for i in range(len(self.spread.dims)):
            facts = (value("scaling_whole", "dims", i), value("scaling", field, i))
            dot = Dot(axes.c2p(*(self.value_of(f) for f in facts)), radius=0.065 if box.big else 0.05, color=color)
            dots.add(self.plot(dot, axes, *facts))
        line = VMobject(stroke_color=color, stroke_width=2.5).set_points_as_corners([dot.get_center() for dot in dots])
        name.next_to(dots[-1], RIGHT, buff=0.2)
        return VGroup(line, dots, name)

    def _root(self, axes: Axes, box: _Box) -> VGroup:
        """√d, dashed: the spread the raw dot products should have; named above its middle."""
        points = [axes.c2p(self.value_of(value("scaling_whole", "dims", i)),
                           self.value_of(value("scaling", "sqrt_dims", i))) for i in range(len(self.spread.dims))]
        dashed = DashedLine(points[0], points[-1], color=INK, stroke_width=2, dash_length=0.1)
        name = text("√d", size=box.size, color=INK)
        slope = (points[-1] - points[0]) / np.linalg.norm(points[-1] - points[0])
        normal = np.array([-slope[1], slope[0], 0.0])
        name.move_to(points[len(points) // 2] + normal * (0.3 + name.height / 2))
        return VGroup(dashed, name)

    def _rising(self, clouds: _Clouds, halves: _Clouds, plot: _Plot) -> None:
        """The clouds make room, to the left half; the spread against d rises in the right half."""
        raw_line, raw_dots, raw_name, ends, guides = plot.raw
        self.beat(
            f"The spread against d, both axes on a log scale: from {self.fmt('scaling', 'raw_std', 0)} it rises "
            f"to {self.fmt('scaling', 'raw_std', -1)}, like √d, the dashed line.",
            AnimationGroup(
                AnimationGroup(*_move(clouds.parts(), halves.parts()), run_time=1.0),
                AnimationGroup(FadeIn(plot.title, plot.axes), Create(raw_line),
                               LaggedStart(*(FadeIn(dot, scale=0.5) for dot in raw_dots), lag_ratio=0.1),
                               FadeIn(raw_name, ends, guides), Create(plot.root[0]), FadeIn(plot.root[1])),
                lag_ratio=1.0),
            run_time=2.8, wait=1.0,
        )

    def _flat(self, plot: _Plot) -> None:
        line, dots, name = plot.scaled
        self.beat("Dividing by √d keeps the spread the same at every size: a flat line.",
                  LaggedStart(*(FadeIn(dot, scale=0.5) for dot in dots), lag_ratio=0.1), Create(line), FadeIn(name),
                  run_time=1.8, wait=1.2)

    # -- one row softmaxed -----------------------------------------------------------------------
    def _row(self, how: str, argument: str, field: str, source: str, scores: str, box: _Box) -> _Row:
        """The row at the largest d, ``how`` softmaxed: ``softmax(argument)`` as bars, the scores under them."""
        title = self.label(f"d = {{}}, {how}: softmax({argument})", value("scaling_whole", "row_dim"),
                           size=box.title_size, color=INK)
        title.move_to((box.left + title.width / 2, box.top - title.height / 2, 0))
        keys = len(self.spread.row_scores)
        name = text(f"the scores, {argument}", size=box.size, color=MUTED)
        name.move_to(((box.left + box.right) / 2, box.bottom + name.height / 2, 0))
        base_y = name.get_top()[1] + 0.55
        unit = title.get_bottom()[1] - 0.45 - base_y  # a weight of 1: the bar as tall as the room
        base = Line((box.left, base_y, 0), (box.right, base_y, 0), color=MUTED, stroke_width=2)
        bars, weights, numbers = VGroup(), VGroup(), VGroup()
        for j in range(keys):
            axis = _Columns(base, j, keys, unit)
            fact = value("scaling", field, j)
            height = max(self.value_of(fact) * unit, 0.01)
            bar = Rectangle(width=0.45, height=height, stroke_width=0, fill_color=WEIGHT, fill_opacity=0.85)
            bar.move_to((axis.x(), base_y + height / 2, 0))
            bars.add(self.plot(bar, axis, fact, anchor="top"))  # a bar of 0.01 tall is within the tolerance
            weights.add(self.number("scaling", field, j, size=box.size, color=WEIGHT).next_to(bar, UP, buff=0.1))
            numbers.add(self.number(source, scores, j, size=box.size, color=INK)
                        .move_to((axis.x(), base_y - 0.27, 0)))
        self.columns("sample", dict(enumerate(bars)), bars, weights, numbers)  # each key's weight and score at its bar
        return _Row(title, base, bars, weights, VGroup(numbers, name))

    def _saturated(self, halves: _Clouds, plot: _Plot, row: _Row) -> None:
        """The clouds and the plot step up into the upper quarters; the unscaled row comes in below."""
        clouds, small = halves, self._plot(UPPER_RIGHT)
        upper = self._clouds(UPPER_LEFT)
        top = self.spread.top_key
        self.beat(
            f"One row of scores at d = {self.fmt('scaling_whole', 'row_dim')}, unscaled: the softmax gives one key "
            f"{self.fmt('scaling', 'unscaled_weights', top)} and the others almost nothing.",
            AnimationGroup(
                AnimationGroup(*_move(clouds.parts(), upper.parts()), *_move(plot.parts(), small.parts()),
                               run_time=1.0),
                AnimationGroup(FadeIn(row.title, row.base, row.scores),
                               LaggedStart(*(GrowFromEdge(bar, DOWN) for bar in row.bars), lag_ratio=0.08),
                               FadeIn(row.weights)),
                lag_ratio=1.0),
            run_time=3.0, wait=1.2,
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
