"""Scene 1 of the masked lecture: a decoder writes one token at a time, so a token may read only the past.

The sentence is written token by token, each numbered. While the decoder writes the token the
lecture follows, the tokens after it do not exist yet (dashed places): it reads itself and the
tokens before it, arrows back, never forward; then every token in turn, as it is written. The rule,
query i reads keys 1 … i, becomes a grid of who reads whom (a row per query, a column per key, the
past filled) and the future above the diagonal goes under the mask the next scene applies.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from manim import (
    DOWN,
    LEFT,
    RIGHT,
    UP,
    AnimationGroup,
    Create,
    FadeIn,
    FadeOut,
    FadeTransform,
    LaggedStart,
    Rectangle,
    Succession,
    SurroundingRectangle,
    Transform,
    VGroup,
    VMobject,
)

from attention_math import Scenario, ScenarioError
from scenes.base import READING_PACE, ExplainerScene
from scenes.facts import TokenPart, position
from scenes.kit.board import token_grid
from scenes.kit.heatmap import (
    HeatFit,
    HeatGrid,
    column_orientation,
    fit_heat,
    numbered_columns,
    roomier_rows,
    row_box,
    text_height,
    text_width,
)
from scenes.kit.layout import BOTTOM, HALF_WIDTH, TOP
from scenes.kit.mask import fill_past, future_mask
from scenes.kit.palette import DIM, HIGHLIGHT, INK, KEY, MUTED, QUERY
from scenes.kit.sequence import TokenRow, reading_arrows, row_fit
from scenes.kit.text import SMALLEST_SIZE, shorten_token, text

__all__ = ["GenerationOrder"]

ROW_Y = -0.5  # the sentence's middle: room above it for the arrows, below for the numbers and the query's tag
ROW_SIZES = (40, 36, 32, 30, 28, 26, 24, 22, SMALLEST_SIZE)  # a short sentence large, a long one in one row
RISE = 2.0  # the highest arrow's arc above the row
LINE_GAP = 0.45  # between the query's tag and the line under it that says what the query reads
RULE_SIZES = (34, 32, 30, 28, 26, 24, 22)  # the rule beside the grid, as large as its room allows
GRID_WIDTH = 7.6  # the most the grid of who reads whom takes; the rule has the rest
GAP = 0.6  # between the grid and the rule
CELL_MOST = 1.3  # the largest cell of the grid (it carries no number)


@dataclass
class _Board:
    """The grid of who reads whom, how it is drawn, and the rule beside it."""

    fit: HeatFit
    grid: HeatGrid
    rule: VGroup
    room: float  # the rule's width: from the grid's right (and the gap) to the frame's


class GenerationOrder(ExplainerScene):
    """Token by token, each reading only itself and the tokens before it: query i reads keys 1 … i."""

    reading_pace = READING_PACE

    board: _Board  # what the last beats draw on (the geometry tests look at it)
    row: TokenRow  # the sentence (and the tests)

    @classmethod
    def check_scenario(cls, scenario: Scenario) -> Scenario:
        tokens = scenario.tokens
        if row_fit(tokens, 2 * HALF_WIDTH, ROW_SIZES) is None:
            raise ScenarioError(
                f"tokens: the generation-order scene writes the sentence in one row; these {len(tokens)} tokens "
                "do not fit it even cut to 3 characters each (use shorter tokens or fewer)")
        return scenario

    def construct(self) -> None:
        self.header("A decoder writes one token at a time", "query", "key")
        row = self.row = TokenRow(self.scenario.tokens, width=2 * HALF_WIDTH, sizes=ROW_SIZES).shift(UP * ROW_Y)
        numbers = VGroup(*(row.under(j, self.label("{}", position(j), size=self._number_size(row), color=MUTED))
                           for j in range(self.scenario.n_tokens)))
        self._write(row, numbers)
        ghosts, marker, note = self._before_the_query(row, numbers)
        arrows, line = self._reads_back(row)
        arrows = self._every_token(row, numbers, VGroup(ghosts, note), marker, VGroup(arrows, line))
        board = self.board = self._board()
        self._as_a_grid(board, row, numbers, marker, arrows)
        self._the_future(board)

    @staticmethod
    def _number_size(row: TokenRow) -> float:
        return max(float(SMALLEST_SIZE), 0.8 * row.size)

    # -- the sentence, written ----------------------------------------------------------------
    def _write(self, row: TokenRow, numbers: VGroup) -> None:
        n = self.scenario.n_tokens
        self.beat(
            "A decoder writes a sentence one token at a time, left to right.",
            LaggedStart(*(AnimationGroup(FadeIn(row.tokens[j], shift=RIGHT * 0.15), FadeIn(numbers[j]))
                          for j in range(n)), lag_ratio=1.0),
            run_time=min(4.0, 0.4 * n + 0.4), wait=0.6,
        )

    def _before_the_query(self, row: TokenRow, numbers: VGroup) -> tuple[VGroup, VMobject, VMobject]:
        """Back to the moment the decoder writes the token followed: the later ones are only places."""
        q, n = self.earlier_query, self.scenario.n_tokens
        ghosts = VGroup(*(row.ghost(j) for j in range(n)))
        future = range(q + 1, n)
        note = text("not written yet", size=max(float(SMALLEST_SIZE), 0.8 * row.size), color=MUTED)
        note.next_to(VGroup(*(row.boxes[j] for j in future)), UP, buff=0.3)
        # right of the token followed (its own arrows rise there), inside the frame
        note.shift(RIGHT * max(0.0, row.boxes[q].get_right()[0] + 0.2 - note.get_left()[0]))
        note.shift(LEFT * max(0.0, note.get_right()[0] - HALF_WIDTH))
        marker = self._marker(row, q)
        self.beat(
            f"While it writes '{self.scenario.tokens[q]}', the tokens after it do not exist yet.",
            *(FadeOut(row.tokens[j]) for j in future), *(FadeIn(ghosts[j]) for j in future),
            *(numbers[j].animate.set_opacity(DIM) for j in future), Create(marker), FadeIn(note),
            run_time=1.5, wait=1.0,
        )
        return ghosts, marker, note

    def _marker(self, row: TokenRow, j: int) -> VMobject:
        """The token being written, the query: an outline in the query's colour, "query" under its number."""
        outline = SurroundingRectangle(row.boxes[j], color=QUERY, buff=0.06, stroke_width=4, corner_radius=0.1)
        tag = text("query", size=self._number_size(row), color=QUERY)
        tag.next_to(row.boxes[j], DOWN, buff=0.2 + text_height(self._number_size(row)))
        return VGroup(outline, tag)

    def _reads_back(self, row: TokenRow) -> tuple[VGroup, VMobject]:
        q, token = self.earlier_query, self.scenario.tokens[self.earlier_query]
        arrows = reading_arrows(row, q, color=KEY, rise=RISE)
        line = self._reads_line(row, q)
        said = (f"So '{token}' can read itself and the tokens before it: arrows go back, never forward." if q
                else f"So '{token}', the first token, can read only itself: nothing comes before it.")
        self.beat(said, LaggedStart(*(Create(arrow) for arrow in arrows), lag_ratio=0.3), FadeIn(line, shift=UP * 0.1),
                  run_time=1.6, wait=1.2)
        return arrows, line

    def _reads_line(self, row: TokenRow, i: int) -> VMobject:
        """'chased' reads tokens 1 … 3, under the row: what the arrows say, in words."""
        token, size = TokenPart(self.scenario.tokens[i], 10), max(float(SMALLEST_SIZE), min(32.0, row.size))
        line = (self.label("'{}' reads tokens {} … {}", token, position(0), position(i), size=size, color=INK)
                if i else self.label("'{}' reads token {} only", token, position(0), size=size, color=INK))
        # under the numbers and the query's tag (each a line of the numbers' type)
        top = row.boxes.get_bottom()[1] - 0.2 - 2 * text_height(self._number_size(row)) - LINE_GAP
        return line.move_to((0.0, top - line.height / 2, 0.0))

    def _every_token(self, row: TokenRow, numbers: VGroup, ghosts: VGroup, marker: VMobject,
                     shown: VGroup) -> VGroup:
        """From the first token on, each is written and reads back to the first (``ghosts``: the places of the
        tokens not written yet, and their note; ``shown``: the arrows and the line of the token followed)."""
        n, q = self.scenario.n_tokens, self.earlier_query
        steps = []
        arrows, line = shown
        self.add(arrows)  # as one mobject of the scene (they came in one by one): a step removes it whole
        for i in range(n):
            reads, said = reading_arrows(row, i, color=KEY, rise=RISE), self._reads_line(row, i)
            coming: list[Any] = [FadeOut(ghosts[0][i]), FadeIn(row.tokens[i]), numbers[i].animate.set_opacity(1.0)] \
                if i > q else []
            moving = Transform(marker, self._marker(row, i))
            steps.append(AnimationGroup(FadeOut(arrows), FadeOut(line), *coming, moving, FadeIn(reads), FadeIn(said),
                                        *([FadeOut(ghosts[1])] if i == 0 else [])))
            arrows, line = reads, said
        said_now = f"Each token, as it is written, does the same: token i reads tokens {self.cite(position(0))} to i."
        # an empty group: each step brings in what it shows as it begins (manim would add every step's
        # mobjects to the scene at the start, all at once)
        self.beat(said_now, Succession(*steps, group=VGroup()), run_time=min(6.0, 0.45 * n + 1.2), wait=1.0)
        return VGroup(arrows, line)

    # -- the rule as a grid ---------------------------------------------------------------------
    def _fit(self) -> HeatFit:
        tokens, q = self.scenario.tokens, self.earlier_query
        most = max(10, len(shorten_token(tokens[q], 10**9)))
        fit = fit_heat(tokens, text_width("00", 26), width=GRID_WIDTH, height=TOP - BOTTOM - 0.1, upright_most=most,
                       query=q)
        if fit.numbers:  # no number in its cells: a small grid's cells grow to fill its part of the frame
            n = len(tokens)
            labels = max(text_width(shorten_token(t, fit.row_limit), fit.size) for t in tokens) + 0.35
            side = min(CELL_MOST, (TOP - BOTTOM - 0.1 - fit.column_height(tokens)) / n, (GRID_WIDTH - labels) / n)
            fit = replace(fit, cell_w=max(fit.cell_w, side), cell_h=max(fit.cell_h, side))  # square, or nearly
            # the column labels again, over the wider cells (flat where their tokens now fit)
            upright, limit = column_orientation(tokens, fit.size, fit.cell_w, fit.cell_h, TOP - BOTTOM - 0.1, most,
                                                q) or (fit.upright, fit.column_limit)
            fit = replace(fit, upright=upright, column_limit=limit)
        return roomier_rows(fit, tokens, GRID_WIDTH)

    def _board(self) -> _Board:
        tokens = self.scenario.tokens
        fit = self._fit()
        grid = token_grid(self, fit, tokens)
        fill_past(grid, KEY, opacity=0.55)
        room = 2 * HALF_WIDTH - grid.width - GAP
        rule = self._rule(room)
        total = grid.width + GAP + rule.width
        grid.shift(RIGHT * (-total / 2 - grid.get_left()[0]) + UP * ((TOP + BOTTOM) / 2 - grid.get_y()))
        rule.next_to(grid, RIGHT, buff=GAP).set_y(grid.cells.get_y())
        return _Board(fit, grid, rule, room)

    def _rule(self, room: float) -> VGroup:
        """query i reads keys 1 … i; the token followed, its keys; the mask's swatch (its beat says it)."""
        q = self.earlier_query
        token = TokenPart(self.scenario.tokens[q], 10)
        general, own = "query i reads keys {} … i", ("'{}' reads keys {} … {}" if q else "'{}' reads key {} only")
        parts = (position(0), position(q)) if q else (position(0),)
        texts = [general.format(self.text_for(position(0))),
                 own.format(token.shown, *(self.text_for(part) for part in parts)), "the future: masked"]
        size = next((s for s in RULE_SIZES if max(text_width(t, s) for t in texts) + 0.7 <= room),
                    float(SMALLEST_SIZE))
        colours = {"query i": QUERY, "keys": KEY}
        lines: list[VMobject] = [self.label(general, position(0), size=size, color=INK, t2c=colours),
                                 self.label(own, token, *parts, size=size, color=INK)]
        swatch = Rectangle(width=0.45, height=0.3, stroke_color=HIGHLIGHT, fill_color=HIGHLIGHT, fill_opacity=0.35,
                           stroke_width=2)
        lines.append(VGroup(swatch, text(texts[2], size=size, color=INK)).arrange(RIGHT, buff=0.2))
        return VGroup(*lines).arrange(DOWN, aligned_edge=LEFT, buff=0.5 * size / 26)

    def _as_a_grid(self, board: _Board, row: TokenRow, numbers: VGroup, marker: VMobject, arrows: VGroup) -> None:
        """The sentence becomes the grid's rows (queries) and columns (keys); the past fills in."""
        grid, q = board.grid, self.earlier_query
        past = [square for i, squares in enumerate(grid.squares) for square in squares[: i + 1]]
        labels = [*grid.row_labels, *grid.column_labels]
        sources = [row.tokens[i] for i in range(len(grid.row_labels))]
        sources += [row.tokens[j] for j in self._columns(board)]
        self.beat(
            f"As a grid, a row per query and a column per key: query i reads keys {self.cite(position(0))} to i.",
            FadeOut(arrows, marker, numbers),
            *(FadeTransform(source.copy(), label) for source, label in zip(sources, labels, strict=True)),
            FadeOut(row), FadeIn(grid.brackets), FadeIn(VGroup(*past), lag_ratio=0.02),
            FadeIn(board.rule[0], shift=LEFT * 0.2), run_time=2.2, wait=1.2,
        )
        box = row_box(grid, q, color=QUERY)
        self.beat(self._own_row_said(), Create(box), FadeIn(board.rule[1], shift=LEFT * 0.2), run_time=1.2, wait=1.2)

    def _columns(self, board: _Board) -> list[int]:
        """The tokens the column labels stand for (every other one where a colour-only grid numbers them)."""
        n = self.scenario.n_tokens
        if board.fit.numbered:
            return list(numbered_columns(n, board.fit.size, board.fit.cell_w))
        return list(range(n))

    def _own_row_said(self) -> str:
        q, token = self.earlier_query, self.scenario.tokens[self.earlier_query]
        if not q:
            return f"The row of '{token}' holds one key, its own: key {self.cite(position(0))}."
        return f"The row of '{token}' holds keys {self.cite(position(0))} to {self.cite(position(q))}."

    def _the_future(self, board: _Board) -> None:
        mask = future_mask(board.grid)
        self.beat("Above the diagonal lies the future, not written yet: the causal mask hides it.",
                  FadeIn(mask, shift=(LEFT + DOWN) * 0.3), FadeIn(board.rule[2], shift=LEFT * 0.2),
                  run_time=1.5, wait=2.0)
