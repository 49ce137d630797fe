"""Scene 5: the weighted sum gives z_i — each value shrinks by its weight, and the pieces add up.

Right, the numbers: w_j · (v_j1, …) = (…) for every token, all of z's components, in columns
that stand over z_i. Left, value space (dimensions 1 and 2): every value as an arrow; each
shrinks to w_j v_j; the view closes in on the small arrows (the whole frame is theirs while the
table steps out), they are laid tip to tail and end at z_i; the view pulls back beside the table,
and z_i is drawn from the origin to the chain's end.

The close-up is drawn, not filmed: value space is redrawn at each scale (:mod:`scenes.kit.zoom`), so text
keeps its size and lines their width at every zoom, and nothing enters the subtitles' band. A plane
never collapses to a strip (its shorter side is at least half its longer). The query's arrow is
always named; a name shown in one view is placed first in the next; a name sits nearer its own
arrow than any other. At the end, every row whose shown weight is the top one as shown glows.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np
from manim import (
    LEFT,
    RIGHT,
    UP,
    Animation,
    Arrow,
    Create,
    Dot,
    FadeIn,
    FadeOut,
    GrowArrow,
    LaggedStart,
    Line,
    MathTex,
    Mobject,
    Rectangle,
    ReplacementTransform,
    RoundedRectangle,
    Text,
    UpdateFromAlphaFunc,
    VGroup,
    VMobject,
    Write,
    linear,
    smooth,
)

from scenes.base import ExplainerScene
from scenes.facts import Fact, position, query_number, size, value
from scenes.kit.labels import Box, Obstacles, box_of, name_arrow, place_at_tip, place_near, shaft_boxes
from scenes.kit.layout import BOTTOM, HALF_WIDTH, TOP
from scenes.kit.palette import CONTEXT, DIM, INK, MUTED, VALUE, WEIGHT
from scenes.kit.text import NUMBER_SIZE, SMALLEST_SIZE, text, token_text
from scenes.kit.vectors import arrow
from scenes.kit.zoom import PlanePanel, View, fit_view

__all__ = ["WeightedSum"]

SHOWN_DIMS = 2  # value space shows dimensions 1 and 2; the table shows every component
PLANE_LEAST = 4.2  # the plane keeps at least this much of the width while the table's text can shrink
PLANE_SMALLEST = 2.5  # and this much when the table's numbers are too wide for the frame at the font floor
NEAR = 0.06  # labels keep this clear of arrows and axes
LABEL_PAD = 0.14  # and this much more clear of each other
TAG_ROOM = 0.08  # z's name keeps this much further clear of axes and arrows than a token's name
GLOW_FILL, GLOW_LINE = 0.05, 1.5  # the most-attended rows' band: faint enough that their text keeps its contrast
Z_WIDTH = 6  # z under the chain (drawn 4 wide): the chain stays seen where it runs along z
ON_BASELINE = frozenset("abcdefhiklmnorstuvwxzABCDEFGHIKLMNOPRSTUVWXYZ0123456789")


def _window(start: float, end: float) -> Callable[[float], float]:
    """A rate function that moves (smoothly) only between ``start`` and ``end`` of its play."""
    return lambda t: float(smooth(float(np.clip((t - start) / max(end - start, 1e-9), 0.0, 1.0))))


def _travel(mob: Mobject, shapes: Sequence[Mobject], windows: Sequence[tuple[float, float]]) -> UpdateFromAlphaFunc:
    """``mob`` takes the shapes in turn: from shapes[k] to shapes[k + 1] during windows[k] of the play."""

    def update(m: Mobject, t: float) -> None:
        k, local = len(windows) - 1, 1.0
        for index, (start, end) in enumerate(windows):
            if t < end:
                k, local = index, _window(start, end)(t)
                break
        for part, a, b in zip(m.get_family(), shapes[k].get_family(), shapes[k + 1].get_family(), strict=True):
            part.interpolate(a, b, local)

    return UpdateFromAlphaFunc(mob, cast(Any, update), rate_func=linear)


# -- rows of text on one baseline ---------------------------------------------------------------------
@functools.cache
def _marks() -> dict[str, float]:
    """Where a parenthesis, a comma or a sign sits beside digits: its bottom over the baseline, in digit heights."""
    sample = "0(,)·=≈"
    glyphs = text(sample, size=SMALLEST_SIZE).submobjects
    zero = glyphs[0]
    return {ch: (g.get_bottom()[1] - zero.get_bottom()[1]) / zero.height for ch, g in zip(sample, glyphs, strict=True)}


def _baseline(part: Text) -> float:
    """The y of a text's baseline: where its letters without descenders stand. Where Pango joined letters into one
    glyph (the "fi" of "jellyfish"), so that glyphs and letters do not pair up: the highest bottom of its glyphs of
    some height (a descender's is lower; dots and dashes are left out). Else its bottom."""
    chars = str(getattr(part, "text", ""))
    if len(chars) == len(part.submobjects):
        bottoms = [g.get_bottom()[1] for ch, g in zip(chars, part.submobjects, strict=True) if ch in ON_BASELINE]
        if bottoms:
            return float(np.median(bottoms))
    elif part.submobjects:
        tallest = max(g.height for g in part.submobjects)
        return float(max(g.get_bottom()[1] for g in part.submobjects if g.height >= 0.5 * tallest))
    return float(part.get_bottom()[1])


def _seat(part: Mobject, baseline: float, digit: float) -> None:
    """Put one piece of a row on the row's baseline (``digit``: the height of its digits)."""
    content = getattr(part, "text", None)
    if isinstance(part, MathTex):
        part.set_y(baseline + digit / 2)
    elif isinstance(content, str) and content in _marks():
        part.shift(UP * (baseline + _marks()[content] * digit - part.get_bottom()[1]))
    elif isinstance(part, Text):
        part.shift(UP * (baseline - _baseline(part)))
    else:
        for sub in part.submobjects:
            _seat(sub, baseline, digit)


def _vector(entries: list[Text], font: float) -> VGroup:
    """( a , b , … ): parentheses, entries and commas, laid out later in columns (:func:`_columns`)."""
    parts: list[VMobject] = [text("(", size=font, color=MUTED)]
    for c, entry in enumerate(entries):
        parts += [entry] + ([text(",", size=font, color=MUTED)] if c < len(entries) - 1 else [])
    parts.append(text(")", size=font, color=MUTED))
    return VGroup(*parts)


def _columns(vectors: Sequence[Mobject], x: float, gap: float) -> float:
    """Lay vectors out from ``x`` with each component in a column of its own, right-aligned (the terms' over
    z's): returns where the closing parentheses end."""
    count = (len(vectors[0]) - 1) // 2
    widths = [max(v[1 + 2 * c].width for v in vectors) for c in range(count)]
    for v in vectors:
        v[0].set_x(x + v[0].width / 2)
        right = x + v[0].width + 0.03
        for c in range(count):
            right += widths[c]
            v[1 + 2 * c].set_x(right - v[1 + 2 * c].width / 2)
            if c < count - 1:
                v[2 + 2 * c].set_x(right + 0.02 + v[2 + 2 * c].width / 2)
                right += gap
        v[-1].set_x(right + 0.03 + v[-1].width / 2)
    return float(max(v[-1].get_right()[0] for v in vectors))


def _right_at(parts: Iterable[Mobject], x: float) -> None:
    for part in parts:
        part.set_x(x - part.width / 2)


def _left_at(parts: Iterable[Mobject], x: float) -> None:
    for part in parts:
        part.set_x(x + part.width / 2)


@dataclass
class _Table:
    """w_j · (v_j1, …) = (t_j1, …) for every token; under a rule, z_i = Σ_j w_ij v_j = (z_1, …)."""

    rows: list[VGroup]  # [token, weight, "·", values, sign, terms]
    total: VGroup  # [formula, sign, sums]
    rule: Line = field(default_factory=Line)
    heads: VGroup = field(default_factory=VGroup)
    marks: VGroup = field(default_factory=VGroup)  # the columns' extents as laid out: weight, values, terms (and z)
    pitch: float = 0.4

    @property
    def words(self) -> VGroup:
        """What steps out while the view is close: the rows, their heads, the formula."""
        return VGroup(*self.rows, self.heads, self.total[0])


@dataclass
class _Space:
    """Value space beside the table: its box, the view it is seen through, grid and axes, arrows, labels."""

    area: Box  # beside the table (the note's line in it)
    box: Box  # where the view is now fitted
    view: View
    panel: PlanePanel
    note: VMobject | None
    arrows: list[Arrow]
    labels: dict[int, Text] = field(default_factory=dict)  # token j's label, where it fits
    ghosts: VGroup = field(default_factory=VGroup)  # the values at full length, dimmed, once they shrink
    dot: Dot | None = None  # the chain's end
    z_arrow: Arrow | None = None  # z_i from the origin, and its name, made as the view pulls back
    z_tag: Mobject | None = None


class WeightedSum(ExplainerScene):
    """z_i = Σ_j w_ij v_j: the formula, the terms with their numbers, the arrows in value space."""

    _stacked = False  # the table above value space (else beside it)

    def construct(self) -> None:
        self.header("The weighted sum gives z{}", "softmax", "value", parts=[query_number()])
        table = self._table()
        box = self._arrange(table)
        self._formula(table)
        space = self._value_space(box)
        self._shrink(space, table)
        self._close_in(space, table)
        readout = self._chain(space)
        self._pull_back(space, table, readout)
        self._context(space, table)

    @property
    def _dims(self) -> int:
        return min(SHOWN_DIMS, self.scenario.d_v)

    # -- the table of terms ---------------------------------------------------------------------
    def _table(self) -> _Table:
        d, s = self.scenario.d_v, SMALLEST_SIZE  # made at the floor, then scaled up to what fits
        rows = []
        for j, token in enumerate(self.scenario.tokens):
            values = [self.number("step", "values", j, c, size=s, color=VALUE) for c in range(d)]
            terms = [self.number("step", "weighted_values", j, c, size=s, color=VALUE) for c in range(d)]
            rows.append(VGroup(token_text(token, size=s, color=VALUE),
                               self.number("step", "weights", j, size=s, color=WEIGHT),
                               text("·", size=s, color=MUTED), _vector(values, s),
                               text(self._row_sign(j), size=s, color=MUTED), _vector(terms, s)))
        sums = [self.number("step", "context", c, size=s, color=CONTEXT) for c in range(d)]
        total = VGroup(self._sum_formula(s * 1.25), text(self._sum_sign(), size=s, color=MUTED), _vector(sums, s))
        table = _Table(rows, total)
        table.pitch = float(np.clip((TOP - BOTTOM - 1.4) / len(rows), 0.3, 0.5))
        self._lay_out(table)
        self.rows("key", {j: row[0] for j, row in enumerate(rows)}, *rows)  # each weight and term in its token's row
        # each number under its own quantity's column (the column as laid out, whatever its cells hold); z is the terms'
        marks = dict(zip(("trace.weights", "trace.values", "step.weighted_values"), table.marks, strict=True))
        self.fields("column", {**marks, "trace.context": marks["step.weighted_values"]}, *rows, table.total)
        return table

    def _arrange(self, table: _Table) -> Box:
        """The table right of value space, or above it when the plane is much larger that way (few tokens, a
        flat picture); the table's text as large as fits without costing the plane more than a fifth, and not
        below the floor (but where the numbers are too wide for the frame even there). Returns value space's box."""
        whole = VGroup(*table.rows, table.heads, table.rule, table.total, table.marks)
        width, height = whole.width, whole.height

        def beside(grow: float) -> Box:
            return (-HALF_WIDTH, HALF_WIDTH - grow * width - 0.5, BOTTOM + 0.1, TOP - 0.05)

        # at the font floor, unless the numbers are too wide for the frame even so (d_v = 4 at 4 decimals): then
        # the plane keeps its smallest width and the table shrinks below the floor rather than leave the frame
        floor = min(1.0, (2 * HALF_WIDTH - PLANE_SMALLEST - 0.5) / width, (TOP - BOTTOM - 0.1) / height)
        most = max(min(NUMBER_SIZE / SMALLEST_SIZE, (2 * HALF_WIDTH - PLANE_LEAST - 0.5) / width,
                       (TOP - BOTTOM - 0.1) / height), floor)
        steps = [most - k * 0.05 for k in range(int((most - floor) / 0.05) + 1)] or [floor]
        best = self._room(beside(steps[-1]))
        side = next(grow for grow in steps if self._room(beside(grow)) >= 0.8 * best)
        top = max(min(NUMBER_SIZE / SMALLEST_SIZE, 2 * HALF_WIDTH / width, (TOP - BOTTOM - 2.6) / height), floor)
        below: Box = (-HALF_WIDTH, HALF_WIDTH, BOTTOM + 0.1, TOP - 0.05 - top * height - 0.4)
        self._stacked = below[3] - below[2] > 2.2 and self._room(below) > 1.3 * self._room(beside(side))
        grow = top if self._stacked else side
        whole.scale(grow, about_point=np.zeros(3))
        table.pitch *= grow
        if self._stacked:  # the table top right, value space under it from the left edge
            whole.shift(RIGHT * (HALF_WIDTH - whole.get_right()[0]) + UP * (TOP - 0.05 - whole.get_top()[1]))
            return below
        whole.shift(RIGHT * (HALF_WIDTH - whole.get_right()[0]) + UP * ((TOP + BOTTOM) / 2 - whole.get_y()))
        return beside(side)

    def _room(self, box: Box) -> float:
        """How large value space is drawn in ``box``: the unit of the values' view and of the chain's, together
        (d_v = 1: rows closer than 0.4 apart count as no room)."""
        if self.scenario.d_v != 2:
            box = (box[0], box[1], box[2], box[3] - 0.45)  # the note's line
        if self._rows and (box[3] - box[2]) / self._rows < 0.4:
            return 0.0
        units = [fit_view(self._points(name), box, self._rows).unit for name in ("values", "running_context")]
        return float(np.sqrt(units[0] * units[1]))

    def _lay_out(self, table: _Table) -> None:
        """Columns from the left: token and weight right-aligned, ·, the values, the sign, the terms (and z
        under the terms, column by column); every piece on its row's baseline."""
        rows, pitch = table.rows, table.pitch
        digit = text("0", size=SMALLEST_SIZE).height
        x = max(row[0].width for row in rows)
        _right_at((row[0] for row in rows), x)
        x += 0.2 + max(row[1].width for row in rows)
        spans = [(x - max(row[1].width for row in rows), x)]  # the columns' extents, as laid out
        _right_at((row[1] for row in rows), x)
        _left_at((row[2] for row in rows), x + 0.12)
        start = x + 0.26 + rows[0][2].width
        x = _columns([row[3] for row in rows], start, 0.22)
        spans.append((start, x))
        x += 0.2
        _left_at([*(row[4] for row in rows), table.total[1]], x)
        x += max(row[4].width for row in rows) + 0.2
        spans.append((x, _columns([*(row[5] for row in rows), table.total[2]], x, 0.22)))
        table.marks = VGroup(*(Rectangle(width=right - left, height=0.1, stroke_width=0, fill_opacity=0).move_to(
            ((left + right) / 2, 0, 0)) for left, right in spans))
        for j, row in enumerate(rows):
            _seat(row, -j * pitch, digit)
        last = -(len(rows) - 1) * pitch
        terms = VGroup(*(row[5] for row in rows))
        rule_y = last - 0.24
        table.rule = Line((terms.get_left()[0], rule_y, 0), (terms.get_right()[0], rule_y, 0), color=MUTED,
                          stroke_width=1.5)
        formula = table.total[0]
        baseline = rule_y - 0.16 - max(formula.height / 2 + digit / 2, 1.3 * digit)
        _seat(table.total, baseline, digit)
        formula.set_x(table.total[1].get_left()[0] - 0.2 - formula.width / 2)
        table.heads = self._heads(rows, pitch, digit)

    def _heads(self, rows: list[VGroup], pitch: float, digit: float) -> VGroup:
        """"weight" over its column's right edge, "value" and "weight × value" over their vectors' starts, all
        on one baseline."""
        s = SMALLEST_SIZE
        heads = VGroup(text("weight", size=s, color=WEIGHT), text("value", size=s, color=VALUE),
                       text("weight × value", size=s, color=VALUE))
        _seat(heads, max(pitch, 1.9 * digit), digit)
        _right_at([heads[0]], max(row[1].get_right()[0] for row in rows))
        _left_at([heads[1]], rows[0][3].get_left()[0])
        _left_at([heads[2]], rows[0][5].get_left()[0])
        return heads

    def _sum_formula(self, font: float) -> MathTex:
        """z_i = Σ_j w_ij v_j, each symbol in its role's colour."""
        i = self.text_for(query_number())
        colors = {f"z_{{{i}}}": CONTEXT, f"w_{{{i}j}}": WEIGHT, "v_j": VALUE}
        formula = self.label(r"\textstyle z_{{{}}} = \sum_j w_{{{}j}} v_j", query_number(), query_number(), tex=True,
                             size=font, color=MUTED, tex_to_color_map=colors)
        assert isinstance(formula, MathTex)
        return formula

    def _row_sign(self, j: int) -> str:
        """"=" when w_j times each entry of v_j gives the shown term, else "≈"."""
        signs = [self.equals(value("step", "weighted_values", j, c),
                             [value("step", "weights", j), value("step", "values", j, c)], "product")
                 for c in range(self.scenario.d_v)]
        return "=" if all(sign == "=" for sign in signs) else "≈"

    def _sum_sign(self) -> str:
        """"=" when each column of shown terms adds up to the shown entry of z_i, else "≈"."""
        n = self.scenario.n_tokens
        signs = [self.equals(value("step", "context", c), [value("step", "weighted_values", j, c) for j in range(n)])
                 for c in range(self.scenario.d_v)]
        return "=" if all(sign == "=" for sign in signs) else "≈"

    # -- the formula, then its numbers ---------------------------------------------------------------
    def _formula(self, table: _Table) -> None:
        big = self._sum_formula(SMALLEST_SIZE * 2.6).move_to(UP * 0.4)
        self.beat(f"z{self.cite(query_number())}, the context vector of '{self.scenario.query_token}', "
                  "is a weighted sum of the values.", Write(big), run_time=2)
        parts = [VGroup(row[0], row[1], row[2], row[3]) for row in table.rows]
        self.beat("The weights from the softmax multiply the value vectors, one weight per token.",
                  ReplacementTransform(big, table.total[0]), FadeIn(table.heads[:2]),
                  LaggedStart(*(FadeIn(p, shift=LEFT * 0.2) for p in parts), lag_ratio=0.08), run_time=2.5)

    # -- value space: every value as an arrow -------------------------------------------------
    def _value_space(self, area: Box) -> _Space:
        note, box = self._note(area)
        view = fit_view(self._points("values"), box, self._rows, flush=self._stacked)
        panel = PlanePanel(view)
        space = _Space(area, box, view, panel, note, [])
        for j in range(self.scenario.n_tokens):
            facts = self._facts("values", j)
            space.arrows.append(self.plot(arrow(view.point((0, 0), j), view.point(self._values(facts), j)),
                                          view.axis(j), *facts, anchor="end"))
        space.labels = self._labels(view, [a.get_start() for a in space.arrows], [a.get_end() for a in space.arrows],
                                    self._taken(space, space.arrows), box)
        self.beat("In value space each token's value is an arrow from the origin.", Create(panel, run_time=1),
                  *([FadeIn(note)] if note else []),
                  LaggedStart(*(GrowArrow(a) for a in space.arrows), lag_ratio=0.1, run_time=1.5),
                  LaggedStart(*(FadeIn(lab) for lab in space.labels.values()), lag_ratio=0.1, run_time=1.5))
        return space

    @property
    def _rows(self) -> int:
        """d_v = 1: a row per token and one for z; else 0 (a plane)."""
        return self.scenario.n_tokens + 1 if self.scenario.d_v == 1 else 0

    def _note(self, box: Box) -> tuple[VMobject | None, Box]:
        """What the plane shows of value space, when it is not all of it, at the top of ``box`` (on two lines
        when one is too wide), and the box left under it."""
        if self.scenario.d_v == 2:
            return None, box
        parts: tuple[Fact, ...] = (size("d_v"),)
        template = "d_v = {}: a line,|a row per token"
        if self.scenario.d_v > 2:
            parts, template = (position(0, "d_v"), position(1, "d_v"), size("d_v")), "dimensions {} and {}|of d_v = {}"
        shown = template.replace("|", " ").format(*(self.text_for(part) for part in parts))
        wide = text(shown, size=SMALLEST_SIZE).width > box[1] - box[0] - 0.2
        note = self.label(template.replace("|", "\n" if wide else " "), *parts, color=MUTED, size=SMALLEST_SIZE)
        note.move_to(((box[0] + box[1]) / 2, box[3] - note.height / 2, 0))
        return note, (box[0], box[1], box[2], box[3] - note.height - 0.2)

    def _points(self, *fields: str) -> np.ndarray:
        """The rows of these step fields (dimensions shown) and the origin: what a view must hold."""
        step = self.step
        return np.vstack([*(np.asarray(getattr(step, name))[:, : self._dims] for name in fields),
                          np.zeros((1, self._dims))])

    def _facts(self, field_name: str, *row: int) -> list[Fact]:
        return [value("step", field_name, *row, c) for c in range(self._dims)]

    def _values(self, facts: list[Fact]) -> np.ndarray:
        return np.array([self.value_of(fact) for fact in facts] + [0.0] * (2 - len(facts)))

    def _taken(self, space: _Space, arrows: Iterable[Arrow], view: View | None = None) -> Obstacles:
        """What labels keep clear of: arrows, the axes, the note."""
        boxes = [b for a in arrows for b in shaft_boxes(a, spacing=0.08, size=0.06)] + (view or space.view).axis_boxes()
        taken = Obstacles(boxes, box_pad=NEAR)
        if space.note:
            taken.add_box(box_of(space.note), room=LABEL_PAD)
        return taken

    def _labels(self, view: View, tails: list[np.ndarray], tips: list[np.ndarray], taken: Obstacles, area: Box,
                font: float = SMALLEST_SIZE, middle: bool = False, keep: Iterable[int] = ()) -> dict[int, Text]:
        """Token j's name beside arrow j (off its tip, or off its middle), nearer its own arrow than any other: the
        query's first (the scene is about it: it is always named), then the names shown before (``keep``), then
        the longest arrows'; any other name with no clear place is left out (the table names every token)."""
        placed: dict[int, Text] = {}
        segments = list(zip(tails, tips, strict=True))
        lengths = [float(np.linalg.norm(tip - tail)) for tail, tip in segments]
        centre = np.mean([*tails, *tips], axis=0)
        kept, query = set(keep), self.scenario.query
        for j in sorted(range(len(segments)), key=lambda k: (k != query, k not in kept, -lengths[k])):
            label = token_text(self.scenario.tokens[j], size=font, color=VALUE)
            spots = _spots(*segments[j], centre, rows=bool(view.rows), middle=middle)
            if name_arrow(label, j, segments, spots, taken, area, must=j == query, room=LABEL_PAD):
                label.names_token = j  # type: ignore[attr-defined]  # which arrow it names (for the tests)
                placed[j] = label
        return placed

    # -- each arrow shrinks to w_j v_j --------------------------------------------------------------
    def _shrink(self, space: _Space, table: _Table) -> None:
        space.ghosts = VGroup(*(a.copy().set_opacity(DIM) for a in space.arrows))  # the full values stay, dimmed
        self.add(space.ghosts)
        view = space.view
        weighted = self._weighted_arrows(view)
        note = [FadeIn(self.rounding_note())] if self.rounding_shows else []
        self.beat("Each arrow shrinks to its weight times its value; the terms, in numbers." + self.said_rounded(),
                  *(ReplacementTransform(a, w) for a, w in zip(space.arrows, weighted, strict=True)),
                  *(FadeIn(VGroup(row[4], row[5])) for row in table.rows), FadeIn(table.heads[2]), *note,
                  *(label.animate.set_opacity(0.6) for label in space.labels.values()), run_time=2.5)
        space.arrows = weighted

    def _weighted_arrows(self, view: View, *, width: float = 6, tip: float = 0.22,
                         rows: Sequence[int] | None = None) -> list[Arrow]:
        """w_j v_j from the origin, for every token (or the tokens of ``rows``, drawn as shapes only: unrecorded)."""
        arrows = []
        for j in range(self.scenario.n_tokens) if rows is None else rows:
            facts = self._facts("weighted_values", j)
            shape = arrow(view.point((0, 0), j), view.point(self._values(facts), j), width=width, tip=tip)
            arrows.append(shape if rows is not None else self.plot(shape, view.axis(j), *facts, anchor="end"))
        return arrows

    # -- closer: the small arrows fill the frame -----------------------------------------------------
    def _close_in(self, space: _Space, table: _Table) -> None:
        note, box = self._note((-HALF_WIDTH, HALF_WIDTH, BOTTOM + 0.1, TOP - 0.05))
        view = fit_view(self._points("weighted_values"), box, self._rows)
        arrows = self._weighted_arrows(view, width=5, tip=0.2)
        taken = self._taken(space, arrows, view)
        if note:
            taken.add_box(box_of(note), room=LABEL_PAD)
        labels = self._labels(view, [a.get_start() for a in arrows], [a.get_end() for a in arrows], taken, box,
                              font=24, keep=space.labels)
        moves = _relabel({0: space.note} if space.note else {}, {0: note} if note else {})
        self.beat("Closer in: each small arrow is one token's weight times its value.",
                  space.panel.zoom(view, space.view), *(ReplacementTransform(a, b) for a, b in
                                                             zip(space.arrows, arrows, strict=True)),
                  *_relabel(space.labels, labels), FadeOut(space.ghosts), FadeOut(table.words), *moves,
                  run_time=1.8, wait=0.6)
        space.panel.draw(view)
        space.box, space.view, space.arrows, space.labels, space.note = box, view, arrows, labels, note or space.note

    def _chain(self, space: _Space) -> VGroup:
        """Tip to tail, in token order (the view first widening to hold the chain); they end at one point, z_i,
        written there with every component."""
        start, n = space.view, self.scenario.n_tokens
        view = fit_view(self._points("weighted_values", "running_context"), space.box, self._rows)
        chain = self._chain_arrows(view, width=5, tip=0.2)
        z_facts = self._facts("context")
        space.dot = self.plot(Dot(view.point(self._values(z_facts), n), radius=0.08, color=CONTEXT), view.axis(n),
                              *z_facts).set_z_index(2)
        taken = self._taken(space, chain, view)
        taken.add_box(box_of(space.dot), room=0.05)
        labels = self._labels(view, [a.get_start() for a in chain], [a.get_end() for a in chain], taken, space.box,
                              font=24, middle=True, keep=space.labels)
        readout = self._readout()
        self._place_readout(readout, space, taken)
        # one play of flat animations, each in its window of time (no groups: they would keep the arrows replaced)
        widen, laying, landing = (1.0 if view != start else 0.4), min(4.0, 1.0 + 0.22 * n), 0.8
        whole = widen + laying + landing
        each = laying / (1 + 0.35 * (n - 1))
        windows = [((widen + 0.35 * each * j) / whole, (widen + 0.35 * each * j + each) / whole) for j in range(n)]
        moves: list[Animation] = [space.panel.zoom(view, start, rate_func=_window(0, widen / whole))]
        moves += [FadeOut(label, rate_func=_window(0, widen / whole)) for label in space.labels.values()]
        for j, a in enumerate(space.arrows):
            self.remove(a)
            self.add(chain[j])
            stops = [a.copy(), self._weighted_arrows(view, width=5, tip=0.2, rows=[j])[0], chain[j].copy()]
            moves.append(_travel(chain[j], stops, [(0.0, widen / whole), windows[j]]))
            moves += [FadeIn(labels[j], rate_func=_window(*windows[j]))] if j in labels else []
        land = _window(1 - landing / whole, 1.0)
        self.beat("Laid tip to tail, in token order, the shrunken arrows end at one point: z"
                  f"{self.cite(query_number())}.", *moves, FadeIn(space.dot, scale=0.5, rate_func=land),
                  FadeIn(readout, rate_func=land), run_time=whole, wait=1.0)
        space.panel.draw(view)
        space.view, space.arrows, space.labels = view, chain, labels
        return readout

    def _chain_arrows(self, view: View, *, width: float, tip: float) -> list[Arrow]:
        """w_j v_j from the running sum before it to the running sum after it."""
        chain = []
        for j in range(self.scenario.n_tokens):
            end = self._facts("running_context", j)
            start = self._values(self._facts("running_context", j - 1)) if j else np.zeros(2)
            chain.append(self.plot(arrow(view.point(start, j), view.point(self._values(end), j), width=width, tip=tip),
                                   view.axis(j), *end, anchor="end").set_z_index(1))
        return chain

    def _readout(self) -> VGroup:
        """z_i = (z_1, …): every component, though the plane shows two."""
        sums = [self.number("step", "context", c, size=24, color=CONTEXT) for c in range(self.scenario.d_v)]
        vector = _vector(sums, 24)
        _columns([vector], 0.0, 0.22)
        digit = text("0", size=24).height
        tag = self.label("z_{{{}}}", query_number(), tex=True, size=34, color=CONTEXT)
        readout = VGroup(tag, text("=", size=24, color=MUTED), vector)
        _seat(readout, 0.0, digit)
        tag.next_to(readout[1], LEFT, buff=0.12)
        tag.shift(UP * (0.0 - tag[0][0].get_bottom()[1]))  # z on the baseline
        readout[2].next_to(readout[1], RIGHT, buff=0.12)
        return readout

    def _place_readout(self, readout: VGroup, space: _Space, taken: Obstacles) -> None:
        """As near the chain's end as it is free (else at the top left of the view)."""
        assert space.dot is not None
        if not place_near(readout, space.dot.get_center(), taken, space.box):
            left, _, _, top = space.box
            readout.move_to((left + readout.width / 2, top - readout.height / 2, 0))

    # -- back beside the table: the columns add up --------------------------------------------------
    def _pull_back(self, space: _Space, table: _Table, readout: VGroup) -> None:
        note, box = self._note(space.area)
        view = fit_view(self._points("running_context"), box, self._rows, flush=self._stacked)
        n = self.scenario.n_tokens
        chain = self._chain_arrows(view, width=4, tip=0.16)
        z_facts = self._facts("context")
        dot = self.plot(Dot(view.point(self._values(z_facts), n), radius=0.06, color=CONTEXT), view.axis(n),
                        *z_facts).set_z_index(2)
        z_arrow = arrow(view.point((0, 0), n), dot.get_center(), color=CONTEXT, width=Z_WIDTH, tip=0.24)
        space.z_arrow = self.plot(z_arrow, view.axis(n), *z_facts, anchor="end")
        space.z_tag = self.label("z_{{{}}}", query_number(), tex=True, size=32, color=CONTEXT)
        taken = self._taken(space, [*chain, space.z_arrow], view)
        self._place_tag(space.z_tag, view, taken, box)
        labels = self._labels(view, [a.get_start() for a in chain], [a.get_end() for a in chain], taken, box,
                              middle=True, keep=space.labels)
        moves = _relabel({0: space.note} if space.note else {}, {0: note} if note else {})
        said = f"The columns add up to z{self.cite(query_number())} = ("
        said += ", ".join(self.fmt("step", "context", c) for c in range(self.scenario.d_v)) + ")."
        assert space.dot is not None
        self.beat(said, space.panel.zoom(view, space.view),
                  *(ReplacementTransform(a, b) for a, b in zip(space.arrows, chain, strict=True)),
                  ReplacementTransform(space.dot, dot), *_relabel(space.labels, labels), *moves,
                  FadeIn(table.words), Create(table.rule), FadeIn(table.total[1]),
                  ReplacementTransform(readout[2], table.total[2]), FadeOut(readout[:2]), run_time=2.2, wait=1.2)
        space.panel.draw(view)
        space.box, space.view, space.arrows, space.labels, space.dot = box, view, chain, labels, dot

    def _place_tag(self, tag: Mobject, view: View, taken: Obstacles, area: Box) -> None:
        """z's name off its tip, where it is free and well clear of the axes and arrows (it is placed before the
        token names)."""
        n = self.scenario.n_tokens
        tip, origin = view.point(self._values(self._facts("context")), n), view.point((0, 0), n)
        direction = tip - origin if not view.rows else (RIGHT if tip[0] >= origin[0] else LEFT)
        if not (place_at_tip(tag, tip, direction, taken, area, margin=TAG_ROOM, room=LABEL_PAD)
                or place_near(tag, tip, taken, area, margin=TAG_ROOM, room=LABEL_PAD)):
            tag.next_to(tip, UP, buff=0.12)
            taken.add_box(box_of(tag), room=LABEL_PAD)

    # -- z from the origin -------------------------------------------------------------------------
    def _context(self, space: _Space, table: _Table) -> None:
        """z_i from the origin to the chain's end, under the chain; the most-attended tokens' rows glow (every row
        whose shown weight is the top one: shown numbers that tie name no single winner)."""
        top = self._most_attended()
        glows = _glows(table.rows, top) if len(top) < self.scenario.n_tokens else []  # all tie: none leads
        q = self.scenario.query_token
        if len(top) == self.scenario.n_tokens > 1:
            said = (f"The context vector for '{q}' is a mixture of values; every weight shows as "
                    f"{self.fmt('step', 'weights', top[0])}, so no token leads.")
        else:
            said = f"The context vector for '{q}' is a mixture of values, leaning toward the most-attended tokens."
        assert space.z_arrow is not None and space.z_tag is not None
        self.beat(said, GrowArrow(space.z_arrow), FadeIn(space.z_tag), *(FadeIn(glow) for glow in glows),
                  run_time=2.0, wait=2)

    def _most_attended(self) -> list[int]:
        """The tokens whose shown weight is the top weight as shown (more than one where the shown numbers tie)."""
        shown = [self.text_for(value("step", "weights", j)) for j in range(self.scenario.n_tokens)]
        return [j for j, weight in enumerate(shown) if weight == shown[self.step.top_key]]


def _glows(rows: Sequence[VGroup], chosen: Sequence[int]) -> list[RoundedRectangle]:
    """A band behind each run of neighbouring rows of ``chosen``, with a margin but 0.02 clear of the rows above and
    below; faint (the rows' colours keep their contrast on it) and outlined."""
    runs: list[list[int]] = []
    for j in chosen:
        if runs and runs[-1][-1] == j - 1:
            runs[-1].append(j)
        else:
            runs.append([j])
    glows = []
    for run in runs:
        top, bottom = rows[run[0]].get_top()[1] + 0.05, rows[run[-1]].get_bottom()[1] - 0.05
        if run[0] > 0:
            top = min(top, rows[run[0] - 1].get_bottom()[1] - 0.02)
        if run[-1] < len(rows) - 1:
            bottom = max(bottom, rows[run[-1] + 1].get_top()[1] + 0.02)
        left = min(rows[j].get_left()[0] for j in run) - 0.12
        right = max(rows[j].get_right()[0] for j in run) + 0.12
        # in ink: orange marks the query's own token throughout the lecture, which need not lead
        glow = RoundedRectangle(corner_radius=0.05, width=right - left, height=top - bottom, stroke_color=INK,
                                stroke_width=GLOW_LINE, stroke_opacity=0.8, fill_color=INK, fill_opacity=GLOW_FILL)
        glows.append(glow.move_to(((left + right) / 2, (top + bottom) / 2, 0)).set_z_index(-1))
    return glows


def _spots(tail: np.ndarray, tip: np.ndarray, centre: np.ndarray, *, rows: bool, middle: bool
           ) -> list[tuple[np.ndarray, np.ndarray]]:
    """Where the name of the arrow ``tail``→``tip`` is tried, best first: (anchor, direction away from it).

    Off the tip (a fan of arrows from the origin), beside the middle away from the chain's ``centre`` (a chain),
    beside the tail (d_v = 1: the rows); then beside other points of the shaft."""
    run = tip - tail
    normal = np.array([-run[1], run[0], 0.0])
    if np.dot(normal, (tail + tip) / 2 - centre) < 0:
        normal = -normal
    side = LEFT if run[0] >= 0 else RIGHT
    first = (tail, side) if rows else ((tail + tip) / 2, normal) if middle else (tip, run)
    more = [(tip, -side), (tail, side)] if rows else [(tail + t * run, normal) for t in (0.5, 0.3, 0.7)]
    return [first, *more, (tip, run), (tail, -run)]


def _relabel(old: dict[int, Any], new: dict[int, Any]) -> list[Any]:
    """Labels (or notes) to their places in a new view: the old fade out early in the play, the new fade in
    late (a label sliding across the frame while the view moves would cross everything on its way)."""
    return [*(FadeOut(label, rate_func=_window(0.0, 0.35)) for label in old.values()),
            *(FadeIn(label, rate_func=_window(0.65, 1.0)) for label in new.values())]
