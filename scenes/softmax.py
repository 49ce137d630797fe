"""Scene 4: scale the scores by √d_k, then softmax them into weights that sum to 1."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from manim import (
    DOWN,
    LEFT,
    RIGHT,
    UP,
    FadeIn,
    FadeOut,
    GrowFromEdge,
    LaggedStart,
    Line,
    MathTex,
    Rectangle,
    RoundedRectangle,
    Text,
    VGroup,
    there_and_back,
    there_and_back_with_pause,
)

from attention_math import preset
from scenes.base import ExplainerScene
from scenes.facts import size
from scenes.kit.layout import SAFE_WIDTH
from scenes.kit.motion import animate_with, arrive, fly_into
from scenes.kit.palette import HIGHLIGHT, INK, MUTED, WEIGHT
from scenes.kit.text import text, token_labels

__all__ = ["ScaleAndSoftmax"]

ROWS_Y = (1.75, 1.0, 0.25, -0.5)  # scores, scaled scores, exps, weights
TOKENS_Y, BASELINE, BAR_HEIGHT = 2.4, -2.45, 3.7


@dataclass
class _Columns:
    """The four rows of numbers, one column per token, their labels on the left."""

    rows: list[VGroup]  # scores, scaled scores, exps, weights
    labels: list[VGroup]
    names: VGroup  # the tokens over the columns
    sum_number: Text
    xs: list[float]
    pitch: float
    left: float
    label_width: float


class ScaleAndSoftmax(ExplainerScene):
    """The score row → ÷√d_k → exp → ÷ sum → weights, then the weights as bars over the tokens."""

    def construct(self) -> None:
        saturation = preset("softmax-saturation").trace()
        self.add_source("saturation", saturation, 3)  # softmax(500, 505) = (0.007, 0.993)
        self.add_source("saturation_rounded", saturation, 2)  # softmax(5, 6) = (0.27, 0.73)
        self.add_source("saturation_scores", saturation, 0)
        self.header("Scale, then softmax", "scale", "softmax")
        columns = self._columns()
        self.add(columns.names, columns.rows[0], columns.labels[0])
        self._divide(columns)
        self._saturation_aside()
        self._softmax(columns)
        bars = self._bars(columns)
        self._running_total(columns, bars)
        self._glow(bars)

    # -- layout ---------------------------------------------------------------------------------
    def _columns(self) -> _Columns:
        n = self.scenario.n_tokens
        if self.trace.scaled:
            scale_label = [MathTex(r"\div\sqrt{d_k}", font_size=32, color=INK),
                           self.label("= √{} =", size("d_k"), color=MUTED), self.number("step", "sqrt_d_k")]
        else:
            scale_label = [text("÷", color=MUTED), self.number("step", "sqrt_d_k"), text("(unscaled)", color=MUTED)]
        sum_number = self.number("step", "exp_sum")
        labels = [
            VGroup(text("scores", color=MUTED)),
            VGroup(*scale_label),
            VGroup(text("exp( · −", color=MUTED), self.number("step", "max_score"), text(")", color=MUTED)),
            VGroup(text("÷", color=MUTED), text("Σ =", color=MUTED), sum_number),
        ]
        for label in labels:
            label.arrange(RIGHT, buff=0.15)
        label_width = min(max(label.width for label in labels), 3.4)
        fields = ("scores", "scaled_scores", "exps", "weights")
        rows = [VGroup(*(self.number("step", f, j, color=WEIGHT if f == "weights" else INK) for j in range(n)))
                for f in fields]
        widest = max(number.width for row in rows for number in row)
        pitch = min(max(1.5, widest + 0.4), (SAFE_WIDTH - label_width - 0.5) / n)
        left = (label_width + 0.5 - n * pitch) / 2  # the labels and the columns, centred together
        xs = [left + pitch * (j + 0.5) for j in range(n)]
        for y, row, label in zip(ROWS_Y, rows, labels, strict=True):
            for x, number in zip(xs, row, strict=True):
                number.move_to((x, y, 0))
            label.scale_to_fit_width(min(label.width, label_width)).move_to((left - 0.4, y, 0), aligned_edge=RIGHT)
        names = token_labels(self.scenario.tokens, pitch - 0.15)
        for x, name in zip(xs, names, strict=True):
            name.move_to((x, TOKENS_Y, 0))
        return _Columns(rows, labels, names, sum_number, xs, pitch, left, label_width)

    # -- the beats ------------------------------------------------------------------------------
    def _divide(self, columns: _Columns) -> None:
        rows, labels = columns.rows, columns.labels
        self.beat(
            "Divide by √d_k, the key size, to keep scores from growing with the dimension." if self.trace.scaled
            else "This trace is unscaled: the scores go into the softmax as they are.",
            FadeIn(labels[1], shift=RIGHT * 0.2), LaggedStart(*arrive(rows[0], rows[1]), lag_ratio=0.1),
            run_time=1.8, wait=1.2,
        )

    def _saturation_aside(self) -> None:
        inset = self._saturation_inset()
        self.beat("Unscaled, large scores saturate the softmax.", FadeIn(inset, shift=UP * 0.2), run_time=1.0, wait=2.2)
        self.play(FadeOut(inset), run_time=0.5)

    def _softmax(self, columns: _Columns) -> None:
        rows, labels = columns.rows, columns.labels
        self.beat(
            f"Exponentiate each, after subtracting the largest scaled score, {self.fmt('step', 'max_score')}.",
            FadeIn(labels[2], shift=RIGHT * 0.2), LaggedStart(*arrive(rows[1], rows[2]), lag_ratio=0.1),
            run_time=1.8, wait=1.0,
        )
        self.beat(
            f"Add them up: {self.fmt('step', 'exp_sum')}.",
            fly_into(columns.sum_number, *rows[2]), FadeIn(labels[3][1]),
            run_time=1.2, wait=0.8,
        )
        self.beat(
            "Divided by that sum, the scores become weights that add up to one.",
            FadeIn(labels[3][0]), LaggedStart(*arrive(rows[2], rows[3]), lag_ratio=0.1),
            run_time=1.8, wait=1.2,
        )

    def _bars(self, columns: _Columns) -> VGroup:
        """The weights as bars over the tokens, each weight riding on its bar."""
        step, xs, pitch = self.step, columns.xs, columns.pitch
        tallest = float(max(step.weights))
        bars = VGroup(*(
            Rectangle(width=pitch * 0.55, height=max(w / tallest * BAR_HEIGHT, 0.02), stroke_width=0,
                      fill_color=WEIGHT, fill_opacity=0.7).move_to((x, BASELINE, 0), aligned_edge=DOWN)
            for x, w in zip(xs, step.weights, strict=True)
        ))
        weights = columns.rows[3]
        spots = [row.copy().next_to(bar, UP, buff=0.3) for row, bar in zip(weights, bars, strict=True)]
        axis = Line((xs[0] - pitch / 2, BASELINE, 0), (xs[-1] + pitch / 2, BASELINE, 0), color=MUTED, stroke_width=2)
        names_below = columns.names.copy()
        for x, name_label in zip(xs, names_below, strict=True):
            name_label.move_to((x, BASELINE - 0.35, 0))
        self.play(FadeOut(*columns.rows[:3], *columns.labels), FadeOut(columns.names, shift=UP * 0.2), run_time=0.6)
        self.beat(
            "The weights as bars over the tokens.",
            *(weight.animate.become(spot) for weight, spot in zip(weights, spots, strict=True)),
            FadeIn(axis), FadeIn(names_below, shift=UP * 0.2),
            LaggedStart(*(GrowFromEdge(bar, DOWN) for bar in bars), lag_ratio=0.1),
            run_time=1.8, wait=0.6,
        )
        return bars

    def _running_total(self, columns: _Columns, bars: VGroup) -> None:
        """A running total of the weights ticks up, bar by bar, to the last one's: one."""
        n = self.scenario.n_tokens
        spot = (min(columns.left - 0.4 - columns.label_width / 2, columns.xs[0] - columns.pitch / 2 - 1.2), -0.6, 0.0)
        total_label = text("running total", color=MUTED).move_to(spot).shift(UP * 0.55)
        partials = [self.number("step", "running_weights", j, size=32, color=WEIGHT).move_to(spot) for j in range(n)]
        ticks: list[list[Any]] = [
            [FadeIn(p, rate_func=lambda t: there_and_back_with_pause(t, 0.6), remover=True),
             animate_with(bars[j], rate_func=there_and_back).set_fill(opacity=1.0)]
            for j, p in enumerate(partials[:-1])
        ]
        ticks.append([FadeIn(partials[-1]), animate_with(bars[-1], rate_func=there_and_back).set_fill(opacity=1.0)])
        self.play(FadeIn(total_label), run_time=0.4)
        self.beat(
            f"A running total of the weights ticks up to {self.fmt('step', 'running_weights', n - 1)}.",
            LaggedStart(*(LaggedStart(*tick, lag_ratio=0.0) for tick in ticks), lag_ratio=1.0),
            run_time=min(4.0, 0.5 * n + 0.6), wait=0.8,
        )

    def _glow(self, bars: VGroup) -> None:
        best = self.step.top_key
        bar = bars[best]
        glow = VGroup(*(
            RoundedRectangle(width=bar.width + pad, height=bar.height + pad, corner_radius=0.08,
                             stroke_color=HIGHLIGHT, stroke_width=width, stroke_opacity=opacity).move_to(bar)
            for pad, width, opacity in ((0.1, 3, 0.9), (0.2, 8, 0.25), (0.3, 14, 0.1))
        ))
        tokens = self.scenario.tokens
        self.beat(
            f"The tallest bar, '{tokens[best]}' ({self.fmt('step', 'weights', best)}): "
            f"'{self.scenario.query_token}' attends most to it.",
            FadeIn(glow), bar.animate.set_fill(opacity=1.0),
            run_time=1.2, wait=1.8,
        )

    def _saturation_inset(self) -> VGroup:
        """softmax(5, 6) = (0.27, 0.73) against softmax(500, 505) = (0.007, 0.993), in a box."""
        lines = []
        for row, weights_source in ((0, "saturation_rounded"), (1, "saturation")):
            lines.append(VGroup(
                text("softmax(", color=MUTED), self.number("saturation_scores", "scores", row, 0),
                text(",", color=MUTED), self.number("saturation_scores", "scores", row, 1),
                text(")  =  (", color=MUTED),
                self.number(weights_source, "weights", row, 0, color=WEIGHT), text(",", color=MUTED),
                self.number(weights_source, "weights", row, 1, color=WEIGHT), text(")", color=MUTED),
            ).arrange(RIGHT, buff=0.1))
            for comma in lines[-1][2::4]:
                comma.align_to(lines[-1][1], DOWN).shift(DOWN * 0.06)
        body = VGroup(*lines).arrange(DOWN, buff=0.3, aligned_edge=LEFT)
        lines[1].shift(RIGHT * (lines[0][4].get_x() - lines[1][4].get_x()))  # line up the "="
        title = text("aside: without the scaling", size=22, color=MUTED)
        content = VGroup(title, body).arrange(DOWN, buff=0.3, aligned_edge=LEFT)
        box = RoundedRectangle(width=content.width + 0.6, height=content.height + 0.5, corner_radius=0.15,
                               stroke_color=MUTED, stroke_width=2)
        return VGroup(box.move_to(content), content).move_to((0, -1.95, 0))
