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
    Animation,
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
from scenes.facts import TokenPart, position, value
from scenes.facts import size as size_fact
from scenes.kit.bars import BarRows
from scenes.kit.layout import BOTTOM, HALF_WIDTH, TOP
from scenes.kit.motion import arrive, fly_into
from scenes.kit.palette import DIM, HIGHLIGHT, INK, KEY, MUTED, WEIGHT
from scenes.kit.text import SMALLEST_SIZE, baseline, stand, text

__all__ = ["ScaleAndSoftmax"]

FIELDS = ("scores", "scaled_scores", "exps", "weights", "running_weights")
QUANTITIES = {"scores": ("trace.scores",), "scaled_scores": ("trace.scaled_scores",),
              "exps": ("step.exps", "step.exp_sum"), "weights": ("trace.weights",),
              "running_weights": ("step.running_weights",)}
"""The quantities under each column's header (:func:`scenes.facts.quantity`, as the tests name them): the Σ under
the exps is theirs."""
MEASURED_AT = 26  # every text is made at this size, measured, then scaled to its size
LARGEST, HEAD_LARGEST = 30, 26  # type sizes of the rows and of the headers, at most
GAP, GAP_MOST = 0.4, 0.62  # between columns: at least (at type size 26), and what spare room widens it to
BARS_LEAST, BARS_MOST = 3.0, 5.6  # the bars' width: 0.02 of a weight stays a few pixels at 480p
BARS_GAP = 0.4  # between the table and the bars
OVERHANG = 0.4  # a header may be wider than its column by this share of a gap (reaching into the gaps beside it)
UNDER_HEADERS, AROUND_RULE = 0.18, 0.14  # below the headers; above and below the rule over the Σ (type size 26)
EDGE = 0.18  # the bars end this far inside the safe area: their glow stays clear of the frame's edge
def _reach(mobs: list[VMobject]) -> tuple[float, float]:
    """The most any of ``mobs`` rises above its baseline, and the most it drops below."""
    return (max(float(m.get_top()[1]) - baseline(m) for m in mobs),
            max(baseline(m) - float(m.get_bottom()[1]) for m in mobs))


def _punctuation(content: str, color: str) -> VMobject:
    """Punctuation standing on the baseline y = 0 (where it stands measured beside an "x")."""
    beside = text("x" + content, color=color)
    drop = baseline(beside) - min(float(glyph.get_bottom()[1]) for glyph in beside.submobjects[1:])
    mob = text(content, color=color)
    mob.shift(DOWN * (drop + float(mob.get_bottom()[1])))
    mob.on_baseline = True  # type: ignore[attr-defined]
    return mob


@dataclass
class _Sizes:
    """The table's type sizes and spacing, chosen to fill the frame and leave the bars room."""

    font: float  # the rows
    head: float  # the headers
    pitch: float  # between rows
    gap: float  # between columns
    bars: float  # the bars' width
    rise: float  # the most a row's text rises above its baseline
    drop: float  # and drops below it
    head_rise: float  # the same for the headers
    head_drop: float


@dataclass
class _Table:
    """The columns of numbers (one row per key), their headers, the Σ under the exps."""

    labels: VGroup
    columns: dict[str, VGroup]
    headers: dict[str, VGroup]
    total: VGroup  # Σ = … under the exps
    rule: Line
    xs: dict[str, float]  # right edges of the columns
    ys: list[float]  # the rows' baselines
    font: float
    bars: BarRows


def _head_size(font: float) -> float:
    """The headers' type: a little smaller than large rows, as large as small ones (never below the floor)."""
    return float(max(min(HEAD_LARGEST, 0.85 * font), min(font, 22.0)))


def _gap(font: float) -> float:
    """The least gap between columns at type size ``font``."""
    return GAP * font / MEASURED_AT


def _line_step(head: float) -> float:
    """From one header line's baseline to the next's."""
    return 0.46 * head / MEASURED_AT


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
        """Every text made at one size, the sizes chosen by measuring them, then all put in place."""
        n = self.scenario.n_tokens
        labels = VGroup(*(self.label("k{} {}", position(j), TokenPart(token), size=MEASURED_AT,
                                     color=HIGHLIGHT if j == self.scenario.query else KEY)
                          for j, token in enumerate(self.scenario.tokens)))
        columns = {f: VGroup(*(self.number("step", f, j, size=MEASURED_AT, color=WEIGHT if f in FIELDS[3:] else INK)
                               for j in range(n))) for f in FIELDS}
        headers = self._headers()
        total = self._total()
        sizes = self._sizes(labels, columns, headers, total)
        for part in (*labels, *(number for column in columns.values() for number in column), total):
            part.scale(sizes.font / MEASURED_AT)
        for lines in headers.values():
            for line in lines:
                line.scale(sizes.head / MEASURED_AT)
        table = self._place(labels, columns, headers, total, sizes)
        self.rows("key", dict(enumerate(labels)), labels, *columns.values())  # each column's numbers in their key's row
        # each number under the header of its own quantity (the header placed by the column's place, whatever the
        # column's cells hold); a header counts once it is on screen, so the aside where later columns will stand
        # is no column's
        self.fields("column", {name: headers[f] for f in FIELDS for name in QUANTITIES[f]}, *columns.values(), total)
        return table

    @staticmethod
    def _widths(labels: VGroup, columns: dict[str, VGroup], headers: dict[str, VGroup], font: float, head: float,
                now: tuple[float, float] = (MEASURED_AT, MEASURED_AT)) -> tuple[float, dict[str, float]]:
        """The labels' width and each column's, at type sizes ``font`` and ``head`` (the texts' sizes are
        ``now``). A header wider than its numbers may reach a little into the gaps beside it; the Σ under
        the exps may reach left under the columns before it, which end above it."""
        grow, head_grow = font / now[0], head / now[1]
        widths = {f: max(max(c.width for c in columns[f]) * grow,
                         max(h.width for h in headers[f]) * head_grow - OVERHANG * _gap(font)) for f in FIELDS}
        return max(label.width for label in labels) * grow, widths

    def _sizes(self, labels: VGroup, columns: dict[str, VGroup], headers: dict[str, VGroup],
               total: VGroup) -> _Sizes:
        """The largest type at which the rows fit the frame's height and the table leaves the bars room."""
        n = self.scenario.n_tokens
        rise, drop = _reach([*labels, *(c for f in FIELDS for c in columns[f])])
        head_rise, head_drop = _reach([line for lines in headers.values() for line in lines])
        total_h = total.height
        room = 2 * HALF_WIDTH - EDGE - BARS_GAP
        for font in np.arange(LARGEST, SMALLEST_SIZE - 0.5, -1.0):
            head = _head_size(font)
            scale, head_scale = font / MEASURED_AT, head / MEASURED_AT
            fixed = ((head_rise + head_drop) * head_scale + _line_step(head) + UNDER_HEADERS  # the headers
                     + (rise + drop + total_h + 2 * AROUND_RULE) * scale)  # the first row, the rule, the Σ
            pitch = (TOP - BOTTOM - fixed) / (n - 1)
            label_w, widths = self._widths(labels, columns, headers, font, head)
            table_w = label_w + sum(widths.values()) + _gap(font) * len(FIELDS)
            if pitch >= (rise + drop) * scale + 0.03 and table_w + BARS_LEAST <= room:
                break
        spare = room - table_w - BARS_LEAST
        least = _gap(font)
        gap = least + min(spare / len(FIELDS), GAP_MOST - least) if spare > 0 else least
        bars = BARS_LEAST + max(0.0, min(spare - (gap - least) * len(FIELDS), BARS_MOST - BARS_LEAST))
        return _Sizes(float(font), head, float(min(pitch, 1.7, 6 * (rise + drop) * scale)), float(gap),
                      float(bars), rise * scale, drop * scale, head_rise * head_scale, head_drop * head_scale)

    def _place(self, labels: VGroup, columns: dict[str, VGroup], headers: dict[str, VGroup], total: VGroup,
               sizes: _Sizes) -> _Table:
        """Rows on their baselines, headers in two lines over their columns, the Σ under the exps."""
        n = self.scenario.n_tokens
        label_w, widths = self._widths(labels, columns, headers, sizes.font, sizes.head, (sizes.font, sizes.head))
        header_h = sizes.head_rise + _line_step(sizes.head) + sizes.head_drop + UNDER_HEADERS
        around = AROUND_RULE * sizes.font / MEASURED_AT
        block = header_h + sizes.rise + (n - 1) * sizes.pitch + sizes.drop + 2 * around + total.height
        top = TOP - max(0.0, (TOP - BOTTOM - block) / 2)  # centred between the header and the subtitles
        heads = (top - sizes.head_rise, top - sizes.head_rise - _line_step(sizes.head))
        ys = [heads[1] - sizes.head_drop - UNDER_HEADERS - sizes.rise - j * sizes.pitch for j in range(n)]
        width = label_w + sum(widths.values()) + sizes.gap * len(FIELDS) + BARS_GAP + sizes.bars
        x = -HALF_WIDTH + max(0.0, (2 * HALF_WIDTH - EDGE - width) / 2) + label_w  # centred when there is room
        for j, label in enumerate(labels):
            stand(label.move_to((x - label.width / 2, 0, 0)), ys[j])
        xs = {}
        for f in FIELDS:
            x += sizes.gap + widths[f]
            xs[f] = x
            for j, number in enumerate(columns[f]):
                stand(number.move_to((x - number.width / 2, 0, 0)), ys[j])
            for line, y in zip(headers[f], heads[2 - len(headers[f]):], strict=True):
                stand(line.move_to((x - widths[f] / 2, 0, 0)), y)
        rule_y = ys[-1] - sizes.drop - around
        rule_w = max(widths["exps"], total.width)
        rule = Line((xs["exps"] - rule_w, rule_y, 0), (xs["exps"], rule_y, 0), color=MUTED, stroke_width=1.5)
        total.move_to((xs["exps"] - total.width / 2, rule_y - around - total.height / 2, 0))
        middle = float(np.mean([number.get_y() for number in columns["weights"]])) - float(np.mean(ys))
        bars = self._weight_bars([y + middle for y in ys], x + BARS_GAP, sizes)
        return _Table(labels, columns, headers, total, rule, xs, ys, sizes.font, bars)

    def _headers(self) -> dict[str, VGroup]:
        """Each column's operation over it, in one or two lines: score, ÷ √d_k, exp(· − m), ÷ Σ, the total."""
        size = MEASURED_AT
        if self.trace.scaled:
            scale = VGroup(self.label("÷ √{}", size_fact("d_k"), size=size, color=MUTED),
                           self.label("= {}", value("step", "sqrt_d_k"), size=size, color=MUTED))
        else:
            scale = VGroup(text("unscaled", size=size, color=MUTED), text("÷ 1", size=size, color=MUTED))
        return {
            "scores": VGroup(text("score", size=size, color=MUTED)),
            "scaled_scores": scale,
            "exps": VGroup(text("exp(· − m)", size=size, color=MUTED),
                           self.label("m = {}", value("step", "max_score"), size=size, color=MUTED)),
            "weights": VGroup(text("÷ Σ", size=size, color=MUTED), text("weight", size=size, color=WEIGHT)),
            "running_weights": VGroup(text("running", size=size, color=MUTED), text("total", size=size, color=MUTED)),
        }

    def _total(self) -> VGroup:
        """Σ = … (or ≈), on one baseline, the sign given room."""
        n = self.scenario.n_tokens
        sign = self.equals(value("step", "exp_sum"), [value("step", "exps", j) for j in range(n)])
        parts = VGroup(text("Σ", size=MEASURED_AT, color=MUTED), text(sign, size=MEASURED_AT, color=MUTED),
                       self.number("step", "exp_sum", size=MEASURED_AT)).arrange(RIGHT, buff=0.2)
        for part in (parts[0], parts[2]):
            stand(part, baseline(parts[2]))
        return parts

    def _weight_bars(self, ys: list[float], left: float, sizes: _Sizes) -> BarRows:
        """The weights as bars, one per row, in the room right of the table (its labels name the rows);
        ``ys``: the rows' middles."""
        weights = [self.value_of(value("step", "weights", j)) for j in range(self.scenario.n_tokens)]
        bars = BarRows(None, weights, width=sizes.bars, pitch=sizes.pitch, color=WEIGHT,
                       thickness=min(0.62, 0.7 / sizes.pitch))
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
        """An aside, in the room the next columns will take, while the table steps back: large scores
        saturate the softmax. Where that room is too narrow for the aside's type, the table makes way."""
        shown = VGroup(table.labels, table.columns["scores"], table.columns["scaled_scores"],
                       table.headers["scores"], table.headers["scaled_scores"])
        inset = self._saturation_inset()
        left = table.xs["scaled_scores"] + 0.6
        scale = min(1.3, (HALF_WIDTH - left) / inset.width, (TOP - BOTTOM) / inset.height)
        if scale * 22 >= SMALLEST_SIZE + 1:  # the title's type (the smallest in it) stays above the floor
            inset.scale(scale).move_to(((left + HALF_WIDTH) / 2, (TOP + BOTTOM) / 2, 0))
            away: Animation = shown.animate.set_opacity(DIM).build()
            back: Animation = shown.animate.set_opacity(1.0).build()
        else:
            inset.scale(min(1.3, 2 * HALF_WIDTH / inset.width)).move_to((0, (TOP + BOTTOM) / 2, 0))
            away, back = FadeOut(shown), FadeIn(shown)
        self.play(away, run_time=0.5)
        self.beat("Unscaled, large scores saturate the softmax.", FadeIn(inset, shift=UP * 0.2), run_time=1.0, wait=2.2)
        self.play(FadeOut(inset), back, run_time=0.7)

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
        """The longest bar glows; every bar that shows the same weight glows with it (a tie as shown)."""
        best, n = self.step.top_key, self.scenario.n_tokens
        shown = self.text_for(value("step", "weights", best))
        ties = [j for j in range(n) if self.text_for(value("step", "weights", j)) == shown]
        bars = [table.bars.bars[j] for j in ties]
        glow = VGroup(*(
            RoundedRectangle(width=bar.width + pad, height=bar.height + pad, corner_radius=0.06,
                             stroke_color=INK, stroke_width=width, stroke_opacity=opacity).move_to(bar)
            for bar in bars for pad, width, opacity in ((0.08, 3, 0.9), (0.16, 7, 0.25))
        ))
        q = self.scenario.query
        if len(ties) == 1:
            said = f"The longest bar, {self.quote(best, 'key')} ({self.fmt('step', 'weights', best)}): "
            said += f"{self.quote(q, 'query')} attends most to it."
        else:
            names = ", ".join(self.quote(j, "key") for j in ties[:-1]) + f" and {self.quote(ties[-1], 'key')}"
            said = (f"The longest bars, {names}, {self.fmt('step', 'weights', ties[-1])} each as shown: "
                    f"{self.quote(q, 'query')} attends to them about equally.")
        self.beat(said, FadeIn(glow), *(bar.animate.set_fill(opacity=1.0) for bar in bars), run_time=1.2, wait=1.8)

    def _saturation_inset(self) -> VGroup:
        """softmax(5, 6) = (0.27, 0.73) against softmax(500, 505) = (0.007, 0.993), in a box."""
        lines = [self._inset_line(0, "saturation_rounded"), self._inset_line(1, "saturation")]
        lines[1].shift(DOWN * 0.62 + RIGHT * (lines[0][4].get_x() - lines[1][4].get_x()))  # line up the "="
        title = text("aside: without the scaling", size=22, color=MUTED)
        stand(title.align_to(lines[1], LEFT), baseline(lines[0][0]) + 0.62)
        content = VGroup(title, *lines)
        box = RoundedRectangle(width=content.width + 0.7, height=content.height + 0.6, corner_radius=0.15,
                               stroke_color=MUTED, stroke_width=2)
        return VGroup(box.move_to(content), content)

    def _inset_line(self, row: int, weights_source: str) -> VGroup:
        """softmax(a, b) = (w, v) on one baseline, the punctuation spaced as it is written."""
        score, weight = "saturation_scores", weights_source
        parts: list[tuple[VMobject, float]] = [
            (text("softmax(", color=MUTED), 0.0), (self.number(score, "scores", row, 0), 0.04),
            (_punctuation(",", MUTED), 0.03), (self.number(score, "scores", row, 1), 0.16),
            (_punctuation(")  =  (", MUTED), 0.04), (self.number(weight, "weights", row, 0, color=WEIGHT), 0.04),
            (_punctuation(",", MUTED), 0.03), (self.number(weight, "weights", row, 1, color=WEIGHT), 0.16),
            (_punctuation(")", MUTED), 0.04),
        ]
        x = 0.0
        for part, buff in parts:
            part.shift(RIGHT * (x + buff - part.get_left()[0]))
            if not getattr(part, "on_baseline", False):
                stand(part, 0.0)
            x = float(part.get_right()[0])
        return VGroup(*(part for part, _ in parts))
