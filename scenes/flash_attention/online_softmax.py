"""Scene 2 of the flash-attention lecture: one query's row of scores walked tile by tile, the online softmax.

On the left a row per key, grouped in tiles of ``B_c`` keys (``scenes.flash_attention.FLASH_BLOCKS``): its scaled score
s, its exp(s − m) as its tile made it (m the largest score seen so far) and its value v. On the right a row
per tile, beside its keys: the running maximum m, the factor exp(m_old − m) that shrinks what came before when
the tile raises m, the running sum ℓ and the running output o = Σ exp(s − m)·v. At the end o / ℓ stands over
softmax(s)·V computed the plain way: the same numbers. Every number is ``attention_math.online_softmax_row``'s
(source ``online``); the plain result is the query step's context (``step``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from manim import DOWN, LEFT, RIGHT, UP, FadeIn, Line, MathTex, Mobject, Rectangle, Transform, VGroup, VMobject

from attention_math import online_softmax_row
from scenes.base import READING_PACE, ExplainerScene
from scenes.facts import TokenPart, position, value
from scenes.flash_attention import FLASH_BLOCKS
from scenes.kit.layout import BOTTOM, HALF_WIDTH, TOP
from scenes.kit.palette import CONTEXT, HIGHLIGHT, INK, KEY, MUTED, QUERY, VALUE, WEIGHT
from scenes.kit.text import SMALLEST_SIZE, drop_svg_paths, text

__all__ = ["OnlineSoftmax"]

MADE_AT = 26  # every text is made at this size, measured, then scaled
HEAD = 26  # the headers' words (as the rows: at the font floor when the rows are)
GAP = 0.34  # between columns, at size 26
MIDDLE = 0.7  # between the keys' table and the tiles' table, at size 26
PITCH = 0.42  # a row's height at size 26 (the type shrinks to keep it, down to the floor)
HEAD_ROOM = 0.95  # the headers over the tables (two lines), at size 26
MOST_PITCH = 0.85  # a short row of keys spreads over the height, this far apart at most
FOOT_LINES = 2  # o / ℓ and softmax(s)·V under the tables
FOOT_STEP = 0.62  # between the foot lines, at size 26 (the first this far below the last row, and a half)
SPELLED = 2  # tiles told one beat each at the start (the rest run on in one beat, then the last)


@dataclass
class _Table:
    """The two tables: their columns of texts (one entry per key, or per tile), headers, and marks."""

    labels: list[VMobject]  # "k1 The", one per key
    scores: list[VMobject]
    exps: list[VMobject]
    values: list[list[VMobject]]  # per key, per dimension (empty when the values do not fit)
    maxima: list[VMobject]  # one per tile
    rescales: list[VMobject]
    sums: list[VMobject]
    outputs: list[list[VMobject]]  # per tile, per dimension
    heads: dict[str, Mobject]
    bands: list[Rectangle] = field(default_factory=list)  # one per tile, behind its keys' rows
    rules: list[Line] = field(default_factory=list)  # between tiles
    finals: list[VMobject] = field(default_factory=list)  # o / ℓ, per dimension
    plains: list[VMobject] = field(default_factory=list)  # softmax(s)·V, per dimension
    foot: list[VMobject] = field(default_factory=list)  # the foot lines' names


class OnlineSoftmax(ExplainerScene):
    """One query's scores walked in tiles: the running m, the rescale, ℓ and the output, then o / ℓ = softmax·V."""

    reading_pace = READING_PACE

    table: _Table  # what the beats fill (the geometry tests look at it)
    summary: VGroup  # the last frame's rule
    cursor: Rectangle  # the tile being read

    def construct(self) -> None:
        q = self.scenario.query
        walk = online_softmax_row(self.trace.scaled_scores[q], self.trace.values, block_size=FLASH_BLOCKS[0])
        self.add_source("online", walk, self.scenario.precision)
        self.add_source("online_count", walk, 0)  # the tile's size, a whole number
        self.walk = walk
        self.header("The online softmax, tile by tile", "softmax", "value")
        self.table = self._table()
        self._scores()
        for t in self._told_tiles():
            if isinstance(t, int):
                self._tile(t)
            else:
                self._tiles_run_on(t)
        self._result()
        self._summary()

    # -- layout ----------------------------------------------------------------------------------------
    def _tile_of(self, j: int) -> int:
        return j // FLASH_BLOCKS[0]

    def _table(self) -> _Table:
        n, tiles, d_v = self.scenario.n_tokens, len(self.walk.steps), self.scenario.d_v
        tokens, q = self.scenario.tokens, self.scenario.query
        table = _Table(
            labels=[self.label("k{} {}", position(j, "key"), TokenPart(tokens[j], 8), size=MADE_AT, color=KEY)
                    for j in range(n)],
            scores=[self.number("online", "scores", j, size=MADE_AT) for j in range(n)],
            exps=[self.number("online", "tile_exps", j, size=MADE_AT, color=WEIGHT) for j in range(n)],
            values=[[text(self.text_for(value("trace", "values", j, c)), size=MADE_AT, color=VALUE)
                     for c in range(d_v)] for j in range(n)],  # measured only: recorded below if they fit
            maxima=[self.number("online", "maxima", t, size=MADE_AT, color=HIGHLIGHT) for t in range(tiles)],
            rescales=[self.number("online", "rescales", t, size=MADE_AT, color=HIGHLIGHT) for t in range(tiles)],
            sums=[self.number("online", "sums", t, size=MADE_AT, color=WEIGHT) for t in range(tiles)],
            outputs=[[self.number("online", "outputs", t, c, size=MADE_AT, color=CONTEXT) for c in range(d_v)]
                     for t in range(tiles)],
            heads={
                "labels": VGroup(self.label("q{} {}", position(q, "query"), TokenPart(tokens[q], 8), size=HEAD,
                                            color=QUERY),
                                 self.label("keys, {} a tile", value("online_count", "block_size"), size=HEAD,
                                            color=MUTED)).arrange(DOWN, buff=0.12, aligned_edge=LEFT),
                "scores": self._head("score", "s"),
                "exps": self._head("its tile's", "exp(s − m)", WEIGHT),
                "values": self._head("value", "v", VALUE),
                "maxima": self._head("max", "m", HIGHLIGHT),
                "rescales": self._head("rescale", r"\times e^{m_{\text{old}}-m}", HIGHLIGHT, tex=True),
                "sums": self._head("sum", "ℓ", WEIGHT),
                "outputs": self._head("running output", "o", CONTEXT),
            },
            finals=[self.number("online", "output", c, size=MADE_AT, color=CONTEXT) for c in range(d_v)],
            plains=[self.number("step", "context", c, size=MADE_AT, color=CONTEXT) for c in range(d_v)],
            foot=[text("o / ℓ =", size=MADE_AT, color=INK), text("softmax(s) · V =", size=MADE_AT, color=MUTED)],
        )
        self._place(table)
        return table

    @staticmethod
    def _head(word: str, formula: str, color: str = MUTED, tex: bool = False) -> VGroup:
        """A column's header: a word over its symbol (our own TeX for the one that needs a subscript)."""
        symbol = drop_svg_paths(MathTex(formula, font_size=HEAD * 1.3, color=color)) if tex else \
            text(formula, size=HEAD, color=color)
        return VGroup(text(word, size=HEAD, color=MUTED), symbol).arrange(DOWN, buff=0.1)

    def _columns(self, table: _Table, with_values: bool) -> list[tuple[str, list[list[VMobject]]]]:
        """The columns left to right, each a name and its cells (a list per column of dimensions)."""
        d_v = self.scenario.d_v
        left: list[tuple[str, list[list[VMobject]]]] = [
            ("labels", [table.labels]), ("scores", [table.scores]), ("exps", [table.exps])]
        if with_values:
            left.append(("values", [[row[c] for row in table.values] for c in range(d_v)]))
        right: list[tuple[str, list[list[VMobject]]]] = [
                 ("maxima", [table.maxima]), ("rescales", [table.rescales]), ("sums", [table.sums]),
                 ("outputs", [[row[c] for row in table.outputs] + [table.finals[c], table.plains[c]]
                              for c in range(d_v)])]
        return left + right

    def _widths(self, table: _Table, with_values: bool, gap: float = GAP,
                middle: float = MIDDLE) -> tuple[list[tuple[str, list[float]]], float]:
        """Each column's sub-column widths at size 26 (a header wider than its numbers widens the last), and
        the whole width with its gaps."""
        found = []
        for name, columns in self._columns(table, with_values):
            widths = [max(cell.width for cell in column) for column in columns]
            inner = sum(widths) + gap * (len(widths) - 1)
            widths[-1] += max(0.0, table.heads[name].width - inner)
            found.append((name, widths))
        total = sum(sum(w) + gap * len(w) for _, w in found) - gap + middle - gap
        return found, total

    def _fit(self, table: _Table) -> tuple[bool, float, float]:
        """Whether the values are shown, the scale of every text, and the rows' pitch."""
        n = self.scenario.n_tokens
        height = TOP - BOTTOM
        floor = SMALLEST_SIZE / MADE_AT
        for with_values in (True, False):
            _, width = self._widths(table, with_values)
            by_height = height / (n * PITCH + HEAD_ROOM + (FOOT_LINES + 0.3) * FOOT_STEP)
            scale = min(1.1, 2 * HALF_WIDTH / width, by_height)
            if scale >= floor:
                break
        scale = max(scale, floor)
        pitch = min(MOST_PITCH, (height - (HEAD_ROOM + (FOOT_LINES + 0.3) * FOOT_STEP) * scale) / n)
        return with_values, scale, pitch

    def _place(self, table: _Table) -> None:
        n, d_v = self.scenario.n_tokens, self.scenario.d_v
        with_values, scale, pitch = self._fit(table)
        table.values = [[self.number("trace", "values", j, c, size=MADE_AT, color=VALUE) for c in range(d_v)]
                        for j in range(n)] if with_values else []
        for mob in self._texts(table):
            mob.scale(scale)
        gap, middle = GAP * scale, MIDDLE * scale
        widths, total = self._widths(table, with_values, gap, middle)  # measured again, at their size now
        x = -total / 2
        block = (HEAD_ROOM + (FOOT_LINES + 0.3) * FOOT_STEP) * scale + n * pitch
        top = TOP - HEAD_ROOM * scale - max(0.0, (TOP - BOTTOM - block) / 2)
        ys = [top - (j + 0.5) * pitch for j in range(n)]
        tile_ys = [sum(ys[j] for j in step.keys) / len(step.keys) for step in self.walk.steps]
        foot_ys = [ys[-1] - pitch * 0.5 - (k + 0.8) * FOOT_STEP * scale for k in range(FOOT_LINES)]
        self.marks: dict[str, list[Rectangle]] = {}
        for name, sub in widths:
            cells = self._cells_of(table, name)
            marks = []
            for c, w in enumerate(sub):
                right = x + w
                for k, cell in enumerate(cells[c]):
                    y = (ys if name in ("labels", "scores", "exps", "values") else tile_ys + foot_ys)[k]
                    if name == "labels":
                        cell.move_to((x + cell.width / 2, y, 0))
                    else:
                        cell.move_to((right - cell.width / 2, y, 0))
                marks.append(Rectangle(width=w, height=0.1, stroke_width=0, fill_opacity=0).move_to(
                    (x + w / 2, top, 0)))
                x = right + gap
            head = table.heads[name]
            head.move_to(((marks[0].get_left()[0] + marks[-1].get_right()[0]) / 2, top + HEAD_ROOM * scale / 2, 0))
            if name == "labels":
                head.align_to(marks[0], LEFT)
            self.marks[name] = marks
            if name == "exps" or (name == "values" and with_values):
                x += middle - gap if (name == "values" or not with_values) else 0.0
        left_edge = table.labels[0].get_left()[0] if n else 0.0
        right_edge = self.marks["values" if with_values else "exps"][-1].get_right()[0]
        for step, y in zip(self.walk.steps, tile_ys, strict=True):
            height = len(step.keys) * pitch - 0.06
            band = Rectangle(width=right_edge - left_edge + 0.3, height=height, stroke_width=0, fill_color=INK,
                             fill_opacity=0.07 if step.keys.start // FLASH_BLOCKS[0] % 2 == 0 else 0.0)
            table.bands.append(band.move_to(((left_edge + right_edge) / 2, y, 0)))
        for step in self.walk.steps[1:]:
            y = ys[step.keys.start] + pitch / 2
            table.rules.append(Line((left_edge - 0.15, y, 0), (self.marks["outputs"][-1].get_right()[0], y, 0),
                                    color=MUTED, stroke_width=1.2, stroke_opacity=0.6))
        for foot, y in zip(table.foot, foot_ys, strict=True):
            foot.move_to((self.marks["sums"][0].get_right()[0] - foot.width / 2, y, 0))
        self._register(table, with_values, d_v)

    def _cells_of(self, table: _Table, name: str) -> list[list[VMobject]]:
        return next(columns for column, columns in self._columns(table, bool(table.values)) if column == name)

    def _texts(self, table: _Table) -> list[Mobject]:
        rows = [*table.labels, *table.scores, *table.exps, *(v for row in table.values for v in row), *table.maxima,
                *table.rescales, *table.sums, *(o for row in table.outputs for o in row), *table.finals,
                *table.plains, *table.foot]
        return [*rows, *table.heads.values()]

    def _register(self, table: _Table, with_values: bool, d_v: int) -> None:
        """Each number in its key's row, its tile's row, its dimension's column (checked by the tests)."""
        keys = VGroup(*table.labels, *table.scores, *table.exps, *(v for row in table.values for v in row))
        self.rows("key", dict(enumerate(table.labels)), keys)
        running = VGroup(*table.maxima, *table.rescales, *table.sums, *(o for row in table.outputs for o in row))
        self.rows("tile", dict(enumerate(table.bands)), running)
        self.columns("d_v", dict(enumerate(self.marks["outputs"])),
                     VGroup(*(o for row in table.outputs for o in row), *table.finals, *table.plains))
        if with_values:
            self.columns("d_v", dict(enumerate(self.marks["values"])),
                         VGroup(*(v for row in table.values for v in row)))
        # each number under its own quantity's column (the column as laid out, whatever its cells hold)
        quantities = {"scores": ("online.scores",), "exps": ("online.tile_exps",), "values": ("trace.values",),
                      "maxima": ("online.maxima",), "rescales": ("online.rescales",), "sums": ("online.sums",),
                      "outputs": ("online.outputs", "online.output", "trace.context")}
        self.fields("column", {name: VGroup(*self.marks[column]) for column, names in quantities.items()
                               if column in self.marks for name in names}, keys, running, *table.finals, *table.plains)

    # -- the beats ------------------------------------------------------------------------------------------
    def _told_tiles(self) -> list[int | range]:
        """The tiles told one beat each (the first ones and the last), the rest as one run."""
        count = len(self.walk.steps)
        if count <= SPELLED + 1:
            return list(range(count))
        return [*range(SPELLED), range(SPELLED, count - 1), count - 1]

    def _scores(self) -> None:
        t, s = self.table, self.scenario
        values = [v for row in t.values for v in row]
        said = (f"Query {self.cite(position(s.query, 'query'))}, {self.quote(s.query, 'query')}, against every key: "
                "its scaled scores, "
                f"read {self.fmt('online_count', 'block_size')} keys at a time, as FlashAttention reads them from "
                "slow memory. The whole row is never held at once.")
        self.add(*t.bands)
        self.beat(said, FadeIn(*t.labels, *t.rules, t.heads["labels"], t.heads["scores"], *t.scores,
                               *([t.heads["values"], *values] if values else [])),
                  FadeIn(t.heads["exps"], t.heads["maxima"], t.heads["rescales"], t.heads["sums"],
                         t.heads["outputs"]), run_time=1.6, wait=1.6)

    def _cursor(self, t: int) -> Rectangle:
        band = self.table.bands[t]
        right = self.marks["outputs"][-1].get_right()[0] + 0.12
        box = Rectangle(width=right - band.get_left()[0], height=band.height, stroke_color=HIGHLIGHT,
                        stroke_width=2.5, fill_opacity=0)
        return box.move_to(((right + band.get_left()[0]) / 2, band.get_y(), 0))

    def _tile_cells(self, t: int) -> list[Mobject]:
        table, step = self.table, self.walk.steps[t]
        return [*(table.exps[j] for j in step.keys), table.maxima[t], table.rescales[t], table.sums[t],
                *table.outputs[t]]

    def _move_cursor(self, t: int) -> list[object]:
        box = self._cursor(t)
        if t == 0 or not hasattr(self, "cursor"):
            self.cursor = box
            return [FadeIn(box)]
        return [Transform(self.cursor, box)]

    def _dim_before(self, t: int) -> list[object]:
        """The tile rows before ``t`` step back: they are history once a new row holds the running values."""
        table, dimmed = self.table, getattr(self, "dimmed", 0)
        older = [mob for k in range(dimmed, t) for mob in (table.maxima[k], table.rescales[k], table.sums[k],
                                                           *table.outputs[k])]
        self.dimmed = max(dimmed, t)
        return [mob.animate.set_opacity(0.45) for mob in older]

    def _tile(self, t: int) -> None:
        step = self.walk.steps[t]
        name = f"Tile {self.cite(position(t, 'tile'))}"
        if t == 0:
            said = (f"{name}: the largest score so far is m = {self.fmt('online', 'maxima', 0)}. Nothing came before, "
                    f"so the factor is {self.fmt('online', 'rescales', 0)}. Each key gives exp(s − m); their sum is "
                    f"ℓ = {self.fmt('online', 'sums', 0)}, and the output adds up exp(s − m) times each value.")
        elif step.max_after > step.max_before:
            said = (f"{name} raises m from {self.fmt('online', 'maxima', t - 1)} to {self.fmt('online', 'maxima', t)}: "
                    f"ℓ and the output so far are multiplied by {self.fmt('online', 'rescales', t)}, then the tile's "
                    f"own exps are added: ℓ = {self.fmt('online', 'sums', t)}.")
        else:
            said = (f"{name} does not raise m ({self.fmt('online', 'maxima', t)}): the factor is "
                    f"{self.fmt('online', 'rescales', t)}, and its exps are simply added: "
                    f"ℓ = {self.fmt('online', 'sums', t)}.")
        self.beat(said, *self._move_cursor(t), *self._dim_before(t),
                  *(FadeIn(mob, shift=RIGHT * 0.1) for mob in self._tile_cells(t)), run_time=1.4, wait=2.2)

    def _tiles_run_on(self, tiles: range) -> None:
        cells = [mob for t in tiles for mob in self._tile_cells(t)]
        said = (f"Tiles {self.cite(position(tiles.start, 'tile'))} to {self.cite(position(tiles.stop - 1, 'tile'))}, "
                "the same way: "
                "whenever a tile raises m, everything so far shrinks by exp(m_old − m).")
        dims = self._dim_before(tiles.start)  # the rows already on screen step back
        table = self.table
        for t in tiles[:-1]:  # the run's own rows but its last arrive as history (a FadeIn ends where they stand)
            for mob in (table.maxima[t], table.rescales[t], table.sums[t], *table.outputs[t]):
                mob.set_opacity(0.45)
        self.dimmed = tiles.stop - 1
        self.beat(said, *self._move_cursor(tiles.stop - 1), *dims, *(FadeIn(mob) for mob in cells), run_time=1.6,
                  wait=1.6)

    def _result(self) -> None:
        table, last = self.table, len(self.walk.steps) - 1
        said = (f"At the end, the output divided by ℓ = {self.fmt('online', 'sums', last)} gives ("
                + ", ".join(self.fmt("online", "output", c) for c in range(self.scenario.d_v))
                + "): exactly softmax(s) · V computed the plain way, ("
                + ", ".join(self.fmt("step", "context", c) for c in range(self.scenario.d_v)) + ").")
        self.beat(said, FadeIn(table.foot[0], *table.finals, shift=DOWN * 0.1),
                  FadeIn(table.foot[1], *table.plains, shift=DOWN * 0.1), run_time=1.4, wait=2.4)

    def _summary(self) -> None:
        """The rule, on the foot lines left of the result: what each tile does to ℓ and o."""
        table = self.table
        rule = [drop_svg_paths(MathTex(line, font_size=HEAD * 1.45, color=INK)) for line in (
            r"\ell \leftarrow \ell\, e^{m_{\text{old}} - m} + \textstyle\sum_{\text{tile}} e^{s - m}",
            r"o \leftarrow o\, e^{m_{\text{old}} - m} + \textstyle\sum_{\text{tile}} e^{s - m}\, v",
        )]
        left, right = table.labels[0].get_left()[0], min(foot.get_left()[0] for foot in table.foot) - 0.4
        widest = max(line.width for line in rule)
        for line, foot in zip(rule, table.foot, strict=True):
            if widest > right - left:
                line.scale((right - left) / widest)
            line.move_to((left + line.width / 2, foot.get_y(), 0))
        self.summary = VGroup(*rule)
        self.beat("So a tile needs only its own keys and values: the row's running maximum, sum and output are all "
                  "it carries on. No exp ever sees a positive number, and none overflows.",
                  FadeIn(self.summary, shift=UP * 0.1), self.cursor.animate.set_stroke(opacity=0.0), run_time=1.2,
                  wait=2.6)
