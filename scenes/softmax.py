"""Scene 4: scale the scores by √d_k, then softmax them into weights that sum to 1."""

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
    FadeTransform,
    GrowFromEdge,
    LaggedStart,
    Line,
    MathTex,
    Rectangle,
    RoundedRectangle,
    VGroup,
    there_and_back,
    there_and_back_with_pause,
)

from attention_math import preset
from scenes.base import ExplainerScene
from scenes.common import HIGHLIGHT, INK, MUTED, WEIGHT, text
from scenes.scores import SAFE_WIDTH, fly_into, token_labels

__all__ = ["ScaleAndSoftmax"]

ROWS_Y = (1.75, 1.0, 0.25, -0.5)  # scores, scaled scores, exps, weights
TOKENS_Y, BASELINE, BAR_HEIGHT = 2.4, -2.45, 3.7


class ScaleAndSoftmax(ExplainerScene):
    """The score row → ÷√d_k → exp → ÷ sum → weights, then the weights as bars over the tokens."""

    def construct(self) -> None:
        step, tokens = self.step, self.scenario.tokens
        n, d_k, name = self.scenario.n_tokens, self.scenario.d_k, tokens[step.index]
        saturation = preset("softmax-saturation").trace()
        self.add_source("saturation", saturation, 3)
        self.add_source("saturation_rounded", saturation, 2)
        self.add_source("saturation_scores", saturation, 0)
        self.add_source("running_total", SimpleNamespace(weights=np.cumsum(step.weights)), self.scenario.precision)
        self.header(4, "Scale, then softmax", "scale", "softmax")

        # -- the rows, one column per token, their labels in a column on the left
        if self.trace.scaled:
            scale_label = [MathTex(r"\div\sqrt{d_k}", font_size=32, color=INK), text(f"= √{d_k} =", color=MUTED),
                           self.number("step", "sqrt_d_k")]
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
                number.move_to([x, y, 0])
            label.scale_to_fit_width(min(label.width, label_width)).move_to([left - 0.4, y, 0], aligned_edge=RIGHT)
        names = token_labels(tokens, pitch - 0.15)
        for x, label in zip(xs, names, strict=True):
            label.move_to([x, TOKENS_Y, 0])
        self.add(names, rows[0], labels[0])

        def arrive(source: VGroup, target: VGroup) -> list[FadeTransform]:
            return [FadeTransform(a.copy(), b) for a, b in zip(source, target, strict=True)]

        # -- divide by √d_k
        self.beat(
            "Divide by √d_k, the key size, to keep scores from growing with the dimension." if self.trace.scaled
            else "This trace is unscaled: the scores go into the softmax as they are.",
            FadeIn(labels[1], shift=RIGHT * 0.2), LaggedStart(*arrive(rows[0], rows[1]), lag_ratio=0.1),
            run_time=1.8, wait=1.2,
        )

        # -- aside: large scores saturate the softmax
        inset = self._saturation_inset()
        self.beat("Unscaled, large scores saturate the softmax.", FadeIn(inset, shift=UP * 0.2), run_time=1.0, wait=2.2)
        self.play(FadeOut(inset), run_time=0.5)

        # -- exp, sum, divide
        self.beat(
            f"Exponentiate each, after subtracting the largest scaled score, {self.fmt('step', 'max_score')}.",
            FadeIn(labels[2], shift=RIGHT * 0.2), LaggedStart(*arrive(rows[1], rows[2]), lag_ratio=0.1),
            run_time=1.8, wait=1.0,
        )
        self.beat(
            f"Add them up: {self.fmt('step', 'exp_sum')}.",
            fly_into(sum_number, *rows[2]), FadeIn(labels[3][1]),
            run_time=1.2, wait=0.8,
        )
        self.beat(
            "Softmax turns scores into weights that sum to 1.",
            FadeIn(labels[3][0]), LaggedStart(*arrive(rows[2], rows[3]), lag_ratio=0.1),
            run_time=1.8, wait=1.2,
        )

        # -- the weights as bars over the tokens
        tallest = float(np.max(step.weights))
        bars = VGroup(*(
            Rectangle(width=pitch * 0.55, height=max(w / tallest * BAR_HEIGHT, 0.02), stroke_width=0,
                      fill_color=WEIGHT, fill_opacity=0.7).move_to([x, BASELINE, 0], aligned_edge=DOWN)
            for x, w in zip(xs, step.weights, strict=True)
        ))
        weight_spots = [row.copy().next_to(bar, UP, buff=0.3) for row, bar in zip(rows[3], bars, strict=True)]
        axis = Line([xs[0] - pitch / 2, BASELINE, 0], [xs[-1] + pitch / 2, BASELINE, 0], color=MUTED, stroke_width=2)
        names_below = names.copy()
        for x, name_label in zip(xs, names_below, strict=True):
            name_label.move_to([x, BASELINE - 0.35, 0])
        self.play(FadeOut(*rows[:3], *labels), FadeOut(names, shift=UP * 0.2), run_time=0.6)
        self.beat(
            "The weights as bars over the tokens.",
            *(weight.animate.become(spot) for weight, spot in zip(rows[3], weight_spots, strict=True)),
            FadeIn(axis), FadeIn(names_below, shift=UP * 0.2),
            LaggedStart(*(GrowFromEdge(bar, DOWN) for bar in bars), lag_ratio=0.1),
            run_time=1.8, wait=0.6,
        )

        # -- a running total ticks to 1.00
        spot = [min(left - 0.4 - label_width / 2, xs[0] - pitch / 2 - 1.2), -0.6, 0]
        total_label = text("running total", color=MUTED).move_to(spot).shift(UP * 0.55)
        partials = [self.number("running_total", "weights", j, size=32, color=WEIGHT) for j in range(n - 1)]
        total = self.number("step", "weights", reduce="sum", size=32, color=WEIGHT)
        for number in [*partials, total]:
            number.move_to(spot)
        ticks = [
            [FadeIn(p, rate_func=lambda t: there_and_back_with_pause(t, 0.6), remover=True),
             bars[j].animate(rate_func=there_and_back).set_fill(opacity=1.0)]
            for j, p in enumerate(partials)
        ] + [[FadeIn(total), bars[-1].animate(rate_func=there_and_back).set_fill(opacity=1.0)]]
        self.play(FadeIn(total_label), run_time=0.4)
        self.beat(
            f"A running total of the weights ticks up to {total.text}.",
            LaggedStart(*(LaggedStart(*tick, lag_ratio=0.0) for tick in ticks), lag_ratio=1.0),
            run_time=min(4.0, 0.5 * n + 0.6), wait=0.8,
        )

        # -- the tallest bar glows
        best = int(np.argmax(step.weights))
        glow = VGroup(*(
            RoundedRectangle(width=bars[best].width + pad, height=bars[best].height + pad, corner_radius=0.08,
                             stroke_color=HIGHLIGHT, stroke_width=width, stroke_opacity=opacity).move_to(bars[best])
            for pad, width, opacity in ((0.1, 3, 0.9), (0.2, 8, 0.25), (0.3, 14, 0.1))
        ))
        self.beat(
            f"The tallest bar, '{tokens[best]}' ({self.fmt('step', 'weights', best)}): "
            f"'{name}' attends most to it.",
            FadeIn(glow), bars[best].animate.set_fill(opacity=1.0),
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
        return VGroup(box.move_to(content), content).move_to([0, -1.95, 0])
