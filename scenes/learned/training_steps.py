"""Scene 1: training — the loss falls as each "it" moves its attention onto the noun it means.

Left, the loss against the step (``TrainingTrace.step_losses``), drawn as far as the step shown, its
point marked and its value written; right, each "it"'s attention row (``TrainingTrace.rows``) as bars
over the sentence's four tokens, its noun outlined. The scene stops at a few steps
(``scenes.learned.learned_keyframes``: 0, 5, 20, 60 for the lecture's run) rather than at every one:
spread evenly over dog and ball at first, each "it" ends on its own noun. The training run is the
lecture's (``scenes.learned.LEARNED_TRAINING``), whatever the scenario: the scene shows none of it.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
from manim import (
    DOWN,
    LEFT,
    RIGHT,
    UP,
    UR,
    Axes,
    Create,
    Dot,
    FadeIn,
    Rectangle,
    ReplacementTransform,
    SurroundingRectangle,
    VGroup,
    VMobject,
)

from attention_math import TrainingTrace, train_attention
from scenes import learned as lecture_run
from scenes.base import READING_PACE, ExplainerScene
from scenes.facts import TokenPart, position, value
from scenes.kit.bars import BarRows
from scenes.kit.layout import BOTTOM, HALF_WIDTH, TOP
from scenes.kit.palette import HIGHLIGHT, INK, KEY, MUTED, WEIGHT
from scenes.kit.text import text, token_text

__all__ = ["TrainingSteps"]

SIZE = 22  # the charts' labels and numbers, the plot's
UNIT = 3.0  # a bar's length for weight 1: one scale for every step, so the bars' growth shows
PITCH = 0.42  # between a chart's rows
PLOT_LEFT, PLOT_RIGHT = -5.9, -1.8  # the loss axes' ends
PLOT_BOTTOM, PLOT_TOP = -2.5, 2.0
CHARTS_LEFT = 0.2  # where the right half starts
CHART_GAP = 0.35  # between the first chart and the second's title
ORDINALS = ("first", "second")


@dataclass
class _Row:
    """One "it"'s chart at one step: its bars (a ``BarRows``) and the numbers beside them."""

    chart: BarRows
    numbers: VGroup


class TrainingSteps(ExplainerScene):
    """The loss curve and each "it"'s attention row, at a few steps of the training run."""

    reading_pace = READING_PACE

    run: TrainingTrace
    axes: Axes  # the loss axes (the geometry test reads them)
    rows_now: list[_Row]  # the charts on screen now
    loss_label: VMobject  # the current step's loss, by its point

    def construct(self) -> None:
        seed, steps, rate = lecture_run.LEARNED_TRAINING
        self.run = train_attention(seed, steps=steps, learning_rate=rate)
        self.add_source("training", self.run, 2)
        self.add_source("training_whole", self.run, 0)
        self.header("Learned, not given: the loss falls", "query", "key", "softmax")
        keyframes = lecture_run.learned_keyframes(self.run.steps)
        self._goal(keyframes[0])
        for before, step in itertools.pairwise(keyframes):
            self._step(before, step)
        self._summary()

    # -- layout ------------------------------------------------------------------------------------------
    def _axes(self) -> VGroup:
        """The loss against the step: no numbers on the axes but the steps shown, each under its point."""
        top = float(np.max(self.run.step_losses)) * 1.12
        axes = Axes(x_range=[0, self.run.steps, self.run.steps], y_range=[0, top, top],
                    x_length=PLOT_RIGHT - PLOT_LEFT, y_length=PLOT_TOP - PLOT_BOTTOM, tips=False,
                    axis_config={"color": MUTED, "stroke_width": 2, "include_ticks": False})
        axes.shift(np.array([PLOT_LEFT, PLOT_BOTTOM, 0.0]) - axes.c2p(0, 0))
        self.axes = axes
        loss = text("loss", size=SIZE, color=INK).next_to(axes.c2p(0, top), UP, buff=0.15)
        step = text("step", size=SIZE, color=MUTED).next_to(axes.c2p(self.run.steps, 0), DOWN, buff=0.15)
        step.shift(RIGHT * (step.width / 2 + 0.45))  # beyond the last step's number, under the axis
        return VGroup(axes, loss, step)

    def _point(self, step: int) -> Dot:
        facts = (value("training_whole", "step_numbers", step), value("training", "step_losses", step))
        dot = Dot(self.axes.c2p(*(self.value_of(fact) for fact in facts)), radius=0.07, color=HIGHLIGHT)
        return self.plot(dot, self.axes, *facts)

    def _curve(self, start: int, end: int) -> VMobject:
        """The loss from step ``start`` to ``end``, a line through every step's point."""
        points = [self.axes.c2p(t, float(self.run.step_losses[t])) for t in range(start, end + 1)]
        return VMobject(stroke_color=INK, stroke_width=3).set_points_as_corners(points)

    def _tick(self, step: int) -> VMobject:
        mark = self.number("training_whole", "step_numbers", step, size=SIZE, color=MUTED)
        return mark.next_to(self.axes.c2p(step, 0), DOWN, buff=0.15)

    def _loss_label(self, step: int, dot: Dot) -> VMobject:
        label = self.label("loss {}", value("training", "step_losses", step), size=SIZE, color=HIGHLIGHT)
        return label.next_to(dot, UR, buff=0.08)

    def _chart(self, step: int, m: int, top: float) -> _Row:
        """The ``m``-th "it"'s attention over the tokens at ``step``, its top at ``top``."""
        run = self.run
        values = run.rows[step, m]
        labels = [token_text(token, size=SIZE, color=KEY) for token in run.tokens]
        chart = BarRows(labels, values, width=UNIT * float(np.max(values)), pitch=PITCH, color=WEIGHT)
        chart.move_to((0, 0, 0)).align_to((CHARTS_LEFT + 0.3, top, 0), LEFT + UP)
        numbers = VGroup()
        for j in range(len(values)):
            fact = value("training", "rows", step, m, j)
            number = self.number("training", "rows", step, m, j, size=SIZE)
            chart.number_spot(j, number)
            numbers.add(number)
            self.plot(chart.bars[j], chart.axis(j), fact, anchor=chart.end_side(j))
        self.rows("key", chart)
        return _Row(chart, numbers)

    def _titles(self) -> tuple[VGroup, list[float]]:
        """Each "it"'s title, its noun outlined under it later; and the top of each chart. Each title and chart
        is one referrer's band (an unfilled box over both: the charts change at every step, the box stays)."""
        run, titles, tops, boxes = self.run, VGroup(), [], {}
        y = TOP - 0.1
        for m, (query, referent) in enumerate(zip(run.queries, run.referents, strict=True)):
            title = self.label("'{}', token {}, means '{}'", TokenPart(run.tokens[query]), position(query),
                               TokenPart(run.tokens[referent]), size=SIZE, color=INK)
            titles.add(title.move_to((0, y - title.height / 2, 0)).align_to((CHARTS_LEFT, 0, 0), LEFT))
            tops.append(y - title.height - 0.2)
            height = title.height + 0.2 + PITCH * len(run.tokens)
            boxes[m] = Rectangle(width=HALF_WIDTH - CHARTS_LEFT, height=height, stroke_width=0, fill_opacity=0)
            boxes[m].move_to(((CHARTS_LEFT + HALF_WIDTH) / 2, y - height / 2, 0))
            y -= height + CHART_GAP
        self.rows("referrer", boxes)
        self.add(*boxes.values())  # on screen (drawing nothing), so the bands count
        return titles, tops

    def _charts(self, step: int) -> list[_Row]:
        return [self._chart(step, m, top) for m, top in enumerate(self._tops)]

    def _targets(self) -> VGroup:
        """Each chart's noun: its label outlined."""
        return VGroup(*(SurroundingRectangle(row.chart.labels[referent], color=HIGHLIGHT, buff=0.06)
                        for row, referent in zip(self.rows_now, self.run.referents, strict=True)))

    # -- the beats -----------------------------------------------------------------------------------------
    def _goal(self, step: int) -> None:
        """The goal, and the random start: each "it" spread over the tokens."""
        run = self.run
        plot = self._axes()
        self._titles_group, self._tops = self._titles()
        self.rows_now = self._charts(step)
        self.targets = self._targets()
        first, second = (run.tokens[r] for r in run.referents)
        self.beat(f"The loss asks each 'it' to look at the noun it means: the first at '{first}', the second at "
                  f"'{second}'.", FadeIn(plot, self._titles_group),
                  *(FadeIn(row.chart) for row in self.rows_now), FadeIn(self.targets), run_time=1.5, wait=1.5)
        dot = self.dot = self._point(step)
        self.loss_label = self._loss_label(step, dot)
        tick = self._tick(step)
        at = self.fmt('training_whole', 'step_numbers', step)
        each = self.quote(self.run.queries[0], "referrer", self.run.tokens, index=0)  # said first: named first
        said = self._row_said(step)
        self.beat(f"Step {at}: W_Q and W_K are random, so each {each} spreads its attention, {said} for the first; "
                  f"the loss is {self.fmt('training', 'step_losses', step)}.",
                  FadeIn(dot, tick, self.loss_label), *(FadeIn(row.numbers) for row in self.rows_now),
                  run_time=1.2, wait=1.8)

    def _row_said(self, step: int) -> str:
        """What a caption says of the first "it"'s row: its weights of both nouns."""
        run = self.run
        dog, ball = run.referents
        return (f"{self.quote(dog, 'key', run.tokens)} {self.fmt('training', 'rows', step, 0, dog)} and "
                f"{self.quote(ball, 'key', run.tokens)} {self.fmt('training', 'rows', step, 0, ball)}")

    def _step(self, before: int, step: int) -> None:
        """From one keyframe to the next: the curve drawn on, the point moved, the bars grown."""
        old_dot, old_rows = self.dot, self.rows_now
        self.rows_now = self._charts(step)
        dot = self.dot = self._point(step)
        label = self._loss_label(step, dot)
        moves = [ReplacementTransform(old.chart, new.chart) for old, new in zip(old_rows, self.rows_now, strict=True)]
        moves += [ReplacementTransform(old.numbers, new.numbers) for old, new in zip(old_rows, self.rows_now,
                                                                                     strict=True)]
        targets = self._targets()
        moves.append(ReplacementTransform(self.targets, targets))
        self.targets = targets
        words = self._words(step)
        self.beat(words, Create(self._curve(before, step)), old_dot.animate.scale(0.6).set_color(MUTED),
                  FadeIn(dot, self._tick(step)), ReplacementTransform(self.loss_label, label), *moves,
                  run_time=2.0, wait=1.5)
        self.loss_label = label

    def _words(self, step: int) -> str:
        run, last = self.run, step == self.run.steps
        dog, ball = run.referents
        at = f"Step {self.fmt('training_whole', 'step_numbers', step)}"
        loss = self.fmt("training", "step_losses", step)
        it = self.quote(run.queries[0], "referrer", run.tokens, index=0)
        if not last:
            return f"{at}: the loss is {loss}; the first {it} gives {self._row_said(step)}."
        return (f"{at}, the last: the loss is {loss}. The first {it} puts {self.fmt('training', 'rows', step, 0, dog)}"
                f" on {self.quote(dog, 'key', run.tokens)}, the second "
                f"{self.quote(run.queries[1], 'referrer', run.tokens, index=1)} "
                f"{self.fmt('training', 'rows', step, 1, ball)} on {self.quote(ball, 'key', run.tokens)}.")

    def _summary(self) -> None:
        """The last frame: the whole curve, each "it" on its noun, and what it means."""
        lines = VGroup(text("Nobody typed these weights: gradient", size=SIZE, color=INK),
                       text("descent found them, one small step", size=SIZE, color=INK),
                       text("down the loss at a time.", size=SIZE, color=INK))
        lines.arrange(DOWN, aligned_edge=LEFT, buff=0.12)
        under = min(row.chart.get_bottom()[1] for row in self.rows_now) - 0.25
        lines.move_to((0, (under + BOTTOM) / 2, 0)).align_to((CHARTS_LEFT + 0.3, 0, 0), LEFT)
        self.summary = lines
        self.beat("Nobody typed these weights: gradient descent found them, one small step down the loss at a time.",
                  FadeIn(lines, shift=UP * 0.1), run_time=1.2, wait=2.5)

