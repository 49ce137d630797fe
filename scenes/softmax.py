"""Scene 5: scale the scores by √d_k, then softmax them into weights that add up to one.

A table with one row per key (2 to 16 rows fit, each named): the scores, ÷ √d_k, exp(· − m),
÷ Σ, the weights; then a running total of the weights and the weights as bars.
"""

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
    GrowFromEdge,
    LaggedStart,
    Line,
    RoundedRectangle,
    VGroup,
    VMobject,
)

from attention_math import preset
from scenes.base import ExplainerScene
from scenes.facts import TokenPart, position, size, value
from scenes.kit.bars import BarRows
from scenes.kit.layout import BOTTOM, HALF_WIDTH, TOP
from scenes.kit.motion import arrive, fly_into
from scenes.kit.palette import HIGHLIGHT, INK, KEY, MUTED, WEIGHT
from scenes.kit.text import SMALLEST_SIZE, shorten_token, text

__all__ = ["ScaleAndSoftmax"]

FIELDS = ("scores", "scaled_scores", "exps", "weights", "running_weights")
GAP = 0.38  # between columns
BAR_ROOM = 2.2  # the bars' width, at least


@dataclass
class _Table:
    """The columns of numbers (one row per key), their headers, the Σ under the exps."""

    labels: VGroup
    columns: dict[str, VGroup]
    headers: dict[str, VGroup]
    total: VGroup  # Σ = … under the exps
    rule: Line
    xs: dict[str, float]  # right edges of the columns
    ys: list[float]
    font: float
    bars: BarRows


class ScaleAndSoftmax(ExplainerScene):
    """The score column → ÷√d_k → exp → ÷ Σ → weights, a running total, then the weights as bars."""

    def construct(self) -> None:
        saturation = preset("softmax-saturation").trace()
        self.add_source("saturation", saturation, 3)  # softmax(500, 505) = (0.007, 0.993)
        self.add_source("saturation_rounded", saturation, 2)  # softmax(5, 6) = (0.27, 0.73)
        self.add_source("saturation_scores", saturation, 0)
        self.header("Scale, then softmax", "scale", "softmax")
        table = self._table()
        self.play(FadeIn(table.labels, table.columns["scores"], table.headers["scores"]), run_time=0.8)
        self._divide(table)
        self._saturation_aside(table)
        self._exponentiate(table)
        self._normalise(table)
        self._running_total(table)
        self._bars(table)
        self._glow(table)

    # -- the table, built once -------------------------------------------------------------------
    def _table(self) -> _Table:
        n = self.scenario.n_tokens
        pitch = float(np.clip((TOP - BOTTOM - 1.45) / n, 0.3, 1.1))
        font = self._fit_font(float(np.clip(pitch * 46, SMALLEST_SIZE, 34)))
        labels = VGroup(*(self.label("k{} {}", position(j), TokenPart(token), size=font,
                                     color=HIGHLIGHT if j == self.scenario.query else KEY)
                          for j, token in enumerate(self.scenario.tokens)))
        columns = {f: VGroup(*(self.number("step", f, j, size=font, color=WEIGHT if f in FIELDS[3:] else INK)
                               for j in range(n))) for f in FIELDS}
        headers = self._headers(font)
        total = VGroup(text("Σ", size=font, color=MUTED), text(self._sum_sign(), size=font, color=MUTED),
                       self.number("step", "exp_sum", size=font)).arrange(RIGHT, buff=0.12)
        widths = {f: max(max(c.width for c in columns[f]), headers[f].width) for f in FIELDS}
        widths["exps"] = max(widths["exps"], total.width)
        block = 0.85 + n * pitch + 0.65  # headers, rows, the sum: centred between the header and the subtitles
        top = TOP - 0.85 - max(0.0, (TOP - BOTTOM - block) / 2)
        ys = [top - pitch * (j + 0.5) for j in range(n)]
        label_width = max(label.width for label in labels)
        x = -HALF_WIDTH + label_width + GAP
        xs = {}
        for f in FIELDS:
            x += widths[f]
            xs[f] = x
            x += GAP + (0.25 if f == "weights" else 0.0)
        for j, label in enumerate(labels):
            label.move_to((-HALF_WIDTH + label_width - label.width / 2, ys[j], 0))
        for f in FIELDS:
            for j, number in enumerate(columns[f]):
                number.move_to((xs[f] - number.width / 2, ys[j], 0))
            headers[f].move_to((xs[f] - widths[f] / 2, top + 0.45, 0))
        rule = Line((xs["exps"] - widths["exps"], ys[-1] - pitch * 0.55, 0), (xs["exps"], ys[-1] - pitch * 0.55, 0),
                    color=MUTED, stroke_width=1.5)
        total.move_to((xs["exps"] - total.width / 2, rule.get_y() - 0.3, 0))
        bars = self._weight_bars(labels, ys, x, pitch)
        return _Table(labels, columns, headers, total, rule, xs, ys, font, bars)

    def _fit_font(self, largest: float) -> float:
        """The largest type size, down to the floor, at which the table leaves the bars room."""
        n = self.scenario.n_tokens
        at26 = sum(max(text(self.text_for(value("step", f, j)), size=26).width for j in range(n)) for f in FIELDS)
        at26 += max(text(shorten_token(token), size=26).width for token in self.scenario.tokens) + 0.6  # labels
        for font in np.arange(largest, SMALLEST_SIZE - 0.1, -2.0):
            if at26 * font / 26 + GAP * (len(FIELDS) + 2) + BAR_ROOM <= 2 * HALF_WIDTH:
                return float(font)
        return float(SMALLEST_SIZE)

    def _headers(self, font: float) -> dict[str, VGroup]:
        """Each column's operation, over it: scores, ÷ √d_k, exp(· − m), ÷ Σ, the running total."""
        small = max(SMALLEST_SIZE, font * 0.85)

        def two(first: VMobject, second: VMobject | None = None) -> VGroup:
            lines = VGroup(first, *([second] if second is not None else []))
            return lines.arrange(DOWN, buff=0.08)

        if self.trace.scaled:
            scale = two(self.label("÷ √{} =", size("d_k"), size=small, color=MUTED),
                        self.number("step", "sqrt_d_k", size=small))
        else:
            scale = two(text("unscaled", size=small, color=MUTED), text("÷ 1", size=small, color=MUTED))
        return {
            "scores": two(text("score", size=small, color=MUTED)),
            "scaled_scores": scale,
            "exps": two(text("exp( · − m)", size=small, color=MUTED),
                        VGroup(text("m =", size=small, color=MUTED),
                               self.number("step", "max_score", size=small)).arrange(RIGHT, buff=0.1)),
            "weights": two(text("÷ Σ", size=small, color=MUTED), text("weight", size=small, color=WEIGHT)),
            "running_weights": two(text("running", size=small, color=MUTED), text("total", size=small, color=MUTED)),
        }

    def _sum_sign(self) -> str:
        n = self.scenario.n_tokens
        return self.equals(value("step", "exp_sum"), [value("step", "exps", j) for j in range(n)])

    def _weight_bars(self, labels: VGroup, ys: list[float], left: float, pitch: float) -> BarRows:
        """The weights as bars, one per row, in the room right of the table."""
        weights = [self.value_of(value("step", "weights", j)) for j in range(self.scenario.n_tokens)]
        width = max(HALF_WIDTH - left - 0.05, 1.0)
        bars = BarRows(None, weights, width=width, pitch=pitch, color=WEIGHT)  # the table's labels name the rows
        bars.shift(RIGHT * (left - bars.zero_line.get_x()) + UP * (ys[0] - bars.row_y(0)))
        for j, bar in enumerate(bars.bars):
            self.plot(bar, bars.axis(j), value("step", "weights", j), anchor=bars.end_side(j))
        return bars

    # -- the beats ------------------------------------------------------------------------------
    def _divide(self, table: _Table) -> None:
        self.beat(
            "Divide by √d_k, the key size, to keep scores from growing with the dimension." if self.trace.scaled
            else "This trace is unscaled: the scores go into the softmax as they are.",
            FadeIn(table.headers["scaled_scores"], shift=DOWN * 0.1),
            LaggedStart(*arrive(table.columns["scores"], table.columns["scaled_scores"]), lag_ratio=0.05),
            run_time=1.8, wait=1.2,
        )

    def _saturation_aside(self, table: _Table) -> None:
        """An aside, while the table steps back: large scores saturate the softmax."""
        shown = VGroup(table.labels, table.columns["scores"], table.columns["scaled_scores"],
                       table.headers["scores"], table.headers["scaled_scores"])
        inset = self._saturation_inset()
        self.play(FadeOut(shown), run_time=0.5)
        self.beat("Unscaled, large scores saturate the softmax.", FadeIn(inset, shift=UP * 0.2), run_time=1.0, wait=2.2)
        self.play(FadeOut(inset), FadeIn(shown), run_time=0.7)

    def _exponentiate(self, table: _Table) -> None:
        self.beat(
            f"Exponentiate each, after subtracting the largest scaled score, {self.fmt('step', 'max_score')}.",
            FadeIn(table.headers["exps"], shift=DOWN * 0.1),
            LaggedStart(*arrive(table.columns["scaled_scores"], table.columns["exps"]), lag_ratio=0.05),
            run_time=1.8, wait=1.0,
        )
        self.beat(f"Add them up: {self.fmt('step', 'exp_sum')}.",
                  fly_into(table.total, *table.columns["exps"]), FadeIn(table.rule), run_time=1.3, wait=0.8)

    def _normalise(self, table: _Table) -> None:
        self.beat(
            "Divided by that sum, the scores become weights that add up to one.",
            FadeIn(table.headers["weights"], shift=DOWN * 0.1),
            LaggedStart(*arrive(table.columns["exps"], table.columns["weights"]), lag_ratio=0.05),
            run_time=1.8, wait=1.2,
        )

    def _running_total(self, table: _Table) -> None:
        """A running total of the weights ticks down the rows to the last: one, up to rounding."""
        n = self.scenario.n_tokens
        for j in range(1, n):
            self.equals(value("step", "running_weights", j),
                        [value("step", "running_weights", j - 1), value("step", "weights", j)])
        note = [FadeIn(self.rounding_note())] if self.rounding_shows else []
        weights, totals = table.columns["weights"], table.columns["running_weights"]
        self.beat(
            f"A running total of the weights ticks up to {self.fmt('step', 'running_weights', n - 1)}."
            + self.said_rounded(),
            FadeIn(table.headers["running_weights"]),
            LaggedStart(*(fly_into(totals[j], weights[j]) for j in range(n)), lag_ratio=0.6), *note,
            run_time=min(4.0, 0.35 * n + 1.0), wait=0.8,
        )

    def _bars(self, table: _Table) -> None:
        bars = table.bars
        self.beat("The weights as bars, one per key.", FadeIn(bars.zero_line),
                  LaggedStart(*(GrowFromEdge(bar, LEFT) for bar in bars.bars), lag_ratio=0.06),
                  run_time=1.6, wait=0.6)

    def _glow(self, table: _Table) -> None:
        best = self.step.top_key
        bar = table.bars.bars[best]
        glow = VGroup(*(
            RoundedRectangle(width=bar.width + pad, height=bar.height + pad, corner_radius=0.06,
                             stroke_color=HIGHLIGHT, stroke_width=width, stroke_opacity=opacity).move_to(bar)
            for pad, width, opacity in ((0.08, 3, 0.9), (0.16, 7, 0.25))
        ))
        tokens = self.scenario.tokens
        self.beat(
            f"The longest bar, '{tokens[best]}' ({self.fmt('step', 'weights', best)}): "
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
        content = VGroup(title, body).arrange(DOWN, buff=0.3, aligned_edge=LEFT).scale(1.3)
        box = RoundedRectangle(width=content.width + 0.7, height=content.height + 0.6, corner_radius=0.15,
                               stroke_color=MUTED, stroke_width=2)
        return VGroup(box.move_to(content), content).move_to((0, (TOP + BOTTOM) / 2, 0))
