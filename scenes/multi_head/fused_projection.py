"""Multi-head attention the efficient way: one big W_Q, one product, then a reshape and a transpose.

The heads' W_Q slide together into one ``d_in × h·d_k`` matrix whose column blocks keep their
head's colour and number; X times it gives every head's queries at once, ``n × h·d_k``, in the
same column blocks (Falk's scheme: W_Q over Q, X beside it). The reshape to ``(n, h, d_k)`` cuts
each token's row into the heads' pieces (the query's row lifts out as an ``h × d_k`` block); the
transpose to ``(h, n, d_k)`` regroups the pieces by head into a stack of query matrices, and one of
them is shown equal to that head's Q computed alone, X times its own W_Q (the previous scene's
numbers). K and V follow briefly: the scene ends on the three stacks side by side.

Numbers stand in the cells while they are legible; else the cells show their head's colour only
(the screen says so) and the equal head is shown by the query's row. Heads 1 to
:data:`MAX_DRAWN` are drawn; a scenario with more says how many it has and that the rest are in
the walkthrough. Every number comes from :func:`attention_math.fused_multi_head` (source
``"fused"``) and, for the head computed alone, from that head's own trace (``"head2"``, …).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
from manim import (
    DOWN,
    LEFT,
    RIGHT,
    UP,
    Animation,
    Arrow,
    FadeIn,
    FadeOut,
    LaggedStart,
    MathTex,
    MoveToTarget,
    ReplacementTransform,
    TransformFromCopy,
    VGroup,
    VMobject,
)

from attention_math import fused_multi_head
from scenes.base import READING_PACE, ExplainerScene
from scenes.facts import Fact, TokenPart, position, size
from scenes.kit.blocks import COLOUR_TINT, NUMBER_TINT, BlockMatrix, head_color
from scenes.kit.fades import fade_in, fade_out
from scenes.kit.heatmap import text_height, text_width, widest
from scenes.kit.layout import BOTTOM, HALF_WIDTH, TOP
from scenes.kit.palette import EMBEDDING, HIGHLIGHT, INK, KEY, MUTED, QUERY, VALUE
from scenes.kit.stills import StillFirst
from scenes.kit.text import MAX_TOKEN_CHARS, NUMBER_SIZE, SMALLEST_SIZE, drop_svg_paths, shorten_token, text, token_text

__all__ = ["MAX_DRAWN", "FusedProjection"]

MAX_DRAWN = 4  # heads drawn; a scenario with more says how many it has
MIN_SCALE = SMALLEST_SIZE / NUMBER_SIZE  # numbers are made at 26 times the scale: never below the floor
MOST_SCALE = 1.15
NAME_SIZE = 36  # a matrix's name (TeX) at scale 1
LABELS_H = 0.55  # the heads' labels over a matrix, at scale 1
NAMES_H = 0.8  # a matrix's name and shape under it, at scale 1
CUT = 0.3  # between the heads' pieces of a row once cut (at scale 1)
APART = 0.45  # between the matrices of a stack (at scale 1)
GAP = 0.7  # between X and Q, between two stacks (at scale 1)
SUMMARY_WIDTH = 0.8  # the share of the width the summary's columns spread over
SUMMARY_APART = 0.25  # between the matrices of a stack in the summary
SUMMARY_LINES = 1.9  # the summary's lines: W's name and shape, the arrow, the stack's shape
NOTE_LINE = 0.34  # a line of note under the heading (at the font floor)
PAD = 0.12  # what a matrix's brackets add to its cells' width
ROLES = {"queries": ("Q", QUERY, "d_k", "query"), "keys": ("K", KEY, "d_k", "key"),
         "values": ("V", VALUE, "d_v", "key")}  # name, colour, size of a row, the kind of thing a row is


@dataclass(frozen=True)
class _Look:
    """How a part of the scene is drawn: lengths at scale 1 times ``scale``; numbers in the cells, or colours."""

    numbers: bool
    scale: float
    cell_w: float  # a cell of W_Q, Q and the stacks, as drawn
    x_cell_w: float  # a cell of X
    cell_h: float
    row_labels: bool  # every token named left of its row (else the query's token only)

    @property
    def size(self) -> float:
        """The type size of numbers and labels."""
        return max(NUMBER_SIZE * self.scale, SMALLEST_SIZE) if self.numbers else SMALLEST_SIZE

    def length(self, units: float) -> float:
        """A gap of ``units`` at scale 1, as drawn."""
        return units * self.scale if self.numbers else units


@dataclass
class _Board:
    """X, the heads' W_Q (apart, then as one) and Q, in Falk's scheme; the heads' labels over W_Q."""

    look: _Look
    x: BlockMatrix
    labels: VGroup  # the tokens, left of X's rows
    x_name: VGroup
    parts: list[BlockMatrix]  # each head's W_Q on its own
    w: BlockMatrix
    w_name: VGroup
    q: BlockMatrix
    q_name: VGroup
    heads: VGroup  # "head 1", "head 2", … (or "1", "2", … over narrow blocks)
    more: VGroup = field(default_factory=VGroup)  # "⋯" right of W_Q and of Q when heads are left out


@dataclass
class _Stack:
    """One role's matrices, one per head drawn (``(h, n, d)``), their heads' labels and their shape."""

    matrices: list[BlockMatrix]
    heads: VGroup
    shape: VMobject
    more: VMobject  # "⋯" right of the last matrix when heads are left out

    @property
    def group(self) -> VGroup:
        return VGroup(*self.matrices, self.heads, self.shape, self.more)


class FusedProjection(StillFirst, ExplainerScene):
    """One big W_Q (the heads' side by side), one product, reshape and transpose: each head's Q, the same numbers."""

    reading_pace = READING_PACE

    board: _Board  # the geometry tests look at these
    stacks: list[_Stack]

    def construct(self) -> None:
        self._sources()
        self.header("One big W_Q for every head", "query")
        look = self._look()
        board = self.board = self._board(look)
        self.notes = self._note(look, board)
        self._merge(board)
        self._product(board)
        stack = self._reshape(board)
        self._transpose(board, stack)
        self._same_numbers(board, stack)
        self._keys_and_values(board, stack)

    # -- the numbers --------------------------------------------------------------------------------
    def _sources(self) -> None:
        heads = self.scenario.heads
        self.h, self.drawn = len(heads), min(len(heads), MAX_DRAWN)
        self.chosen = self.drawn - 1  # the head shown equal to its Q computed alone: the last one drawn
        s = self.scenario
        stacks = [np.stack([getattr(head, name) for head in heads]) for name in ("w_query", "w_key", "w_value")]
        # a one-head scenario has no W_O; the fused trace needs one, and this scene shows none of its numbers
        w_out = s.w_out if s.w_out is not None else np.eye(s.d_v)
        self.add_source("fused", fused_multi_head(s.embeddings, stacks[0], stacks[1], stacks[2], w_out,
                                                         scaled=s.scaled), s.precision)
        self.add_source(f"head{self.chosen + 1}", heads[self.chosen].trace(), s.precision)

    def _texts(self, source: str, name: str, *prefix: int, columns: int | None = None) -> list[str]:
        """Every number of ``source.name[prefix]`` (its first ``columns``) as shown, recording nothing."""
        matrix = np.asarray(getattr(self.sources[source][0], name))[prefix]
        count = matrix.shape[1] if columns is None else columns
        return [self.text_for(Fact(source, name, (*prefix, i, c))) for i in range(matrix.shape[0])
                for c in range(count)]

    # -- the layout ---------------------------------------------------------------------------------
    def _label_width(self, font: float) -> float:
        return max(text_width(shorten_token(t, MAX_TOKEN_CHARS), font) for t in self.scenario.tokens) + 0.2

    def _look(self) -> _Look:
        """Numbers in the cells at the largest scale (up to :data:`MOST_SCALE`, at least :data:`MIN_SCALE`) at
        which Falk's board and the stack beside the equal head fit; else colours only, cells as large as fit."""
        s, d_k = self.scenario, self.scenario.d_k
        columns = self.drawn * d_k
        texts = [*self._texts("fused", "w_query_big", columns=columns),
                 *self._texts("fused", "queries_big", columns=columns), *self._texts(f"head{self.chosen + 1}",
                                                                                      "queries")]
        cell_w = widest(texts, NUMBER_SIZE) + 0.32
        x_cell_w = widest(self._texts("fused", "embeddings"), NUMBER_SIZE) + 0.32
        cell_h = text_height(NUMBER_SIZE) + 0.16
        labels = self._label_width(NUMBER_SIZE)
        more = 0.5 if self.h > self.drawn else 0.0
        board_w = labels + s.d_in * x_cell_w + GAP + columns * cell_w + more + 2 * PAD
        board_h = LABELS_H + (s.d_in + s.n_tokens) * cell_h + 0.5 + NAMES_H
        stack_w = labels + self.drawn * (d_k * cell_w + PAD) + (self.drawn - 1) * APART + self._right_w(
            d_k * cell_w + PAD, NUMBER_SIZE, GAP + 0.45)
        self.top = TOP - (NOTE_LINE if self.h > self.drawn else 0.0)  # under the note of the heads left out
        scale = min(MOST_SCALE, 2 * HALF_WIDTH / board_w, (self.top - BOTTOM) / board_h, 2 * HALF_WIDTH / stack_w)
        if scale >= MIN_SCALE:
            return _Look(True, scale, cell_w * scale, x_cell_w * scale, cell_h * scale, True)
        label_w = self._label_width(SMALLEST_SIZE)
        self.top -= NOTE_LINE  # under the note "colours only"
        cell_w = min(0.8, (2 * HALF_WIDTH - label_w - GAP - more - 2 * PAD) / (s.d_in + columns))
        cell_h = min(0.5, (self.top - BOTTOM - LABELS_H - NAMES_H - 0.5) / (s.d_in + s.n_tokens))
        return _Look(False, 1.0, cell_w, cell_w, cell_h, cell_h >= text_height(SMALLEST_SIZE) + 0.06)

    def _right_w(self, grid_w: float, font: float, gap: float) -> float:
        """What the stack needs on its right: ``gap`` (with "=" in it) and the equal head's matrix (``grid_w``
        wide, or its rows) under its title at type ``font``."""
        title = text_width(f"head {self.drawn} alone: X W_Q", font)
        return gap + max(grid_w, title) + 0.1

    def _matrix(self, look: _Look, source: str, name: str, prefix: tuple[int, ...], rows: Sequence[int],
                blocks: int, width: int, colors: list[str], color: str, *, cell_w: float | None = None,
                tint: float | None = None) -> BlockMatrix:
        """A block matrix of rows ``rows`` of ``source.name[prefix]`` (its first ``blocks · width`` columns),
        its numbers made and recorded when the look carries them."""
        shade = (NUMBER_TINT if look.numbers else COLOUR_TINT) if tint is None else tint
        matrix = BlockMatrix(len(rows), blocks, width, cell_w=cell_w or look.cell_w, cell_h=look.cell_h,
                             colors=colors, tint=shade)
        if look.numbers:
            matrix.place([[self.number(source, name, *prefix, i, c, size=look.size, color=color)
                           for c in range(blocks * width)] for i in rows])
        return matrix

    def _board(self, look: _Look) -> _Board:
        s, d_k, drawn = self.scenario, self.scenario.d_k, self.drawn
        colors = [head_color(k) for k in range(drawn)]
        every = range(s.n_tokens)
        x = self._matrix(look, "fused", "embeddings", (), every, 1, s.d_in, [EMBEDDING], EMBEDDING,
                         cell_w=look.x_cell_w, tint=0.0 if look.numbers else COLOUR_TINT)
        labels = self._token_labels(look)
        x.label_rows(labels)
        x.remove(x.row_labels)  # the labels stay when X leaves: they name the rows of Q and of the stacks
        w = self._matrix(look, "fused", "w_query_big", (), range(s.d_in), drawn, d_k, colors, QUERY)
        q = self._matrix(look, "fused", "queries_big", (), every, drawn, d_k, colors, QUERY)
        # Falk's scheme: W_Q over Q (its column blocks over Q's), X left of Q (its rows level with Q's)
        q.shift(RIGHT * (x.brackets.get_right()[0] + look.length(GAP) - q.brackets.get_left()[0]))
        w.shift(RIGHT * (q.tiles.get_left()[0] - w.tiles.get_left()[0])
                + UP * (q.brackets.get_top()[1] + look.length(0.5) - w.brackets.get_bottom()[1]))
        heads = self._head_labels(look, [w.block(k).get_top() for k in range(drawn)], w.cell_w * d_k)
        board = _Board(look, x, x.row_labels, self._name(look, "X", size("n_tokens"), size("d_in"), color=EMBEDDING),
                       [], w, self._name(look, "W_{Q}", size("d_in"), size("n_heads"), size("d_k"), color=QUERY),
                       q, self._name(look, "Q", size("n_tokens"), size("n_heads"), size("d_k"), color=QUERY), heads)
        self._place_names(board)
        if self.h > drawn:
            board.more = VGroup(*(self._more(look, m.brackets) for m in (w, q)))
        whole = VGroup(x, labels, w, q, heads, board.x_name, board.q_name, board.w_name, board.more)
        whole.shift(RIGHT * -whole.get_x() + UP * ((self.top + BOTTOM) / 2 - whole.get_y()))
        # each head's W_Q on its own, over its block of the big one, the blocks apart
        board.parts = [self._matrix(look, "fused", "w_query", (k,), range(s.d_in), 1, d_k, [colors[k]], QUERY)
                       for k in range(drawn)]
        # apart by APART where the frame has room for it, else less
        apart = min(look.length(APART), max(0.0, 2 * HALF_WIDTH - 0.2 - w.brackets.width) / max(drawn, 1))
        for k, part in enumerate(board.parts):
            part.shift(w.block(k).get_center() - part.tiles.get_center() + RIGHT * (k - (drawn - 1) / 2) * apart)
        spread = VGroup(*board.parts)  # within the frame
        spread.shift(RIGHT * (min(0.0, HALF_WIDTH - spread.get_right()[0])
                              + max(0.0, -HALF_WIDTH - spread.get_left()[0])))
        self._register_board(board)
        return board

    def _more(self, look: _Look, beside: VMobject, direction: np.ndarray = RIGHT) -> VMobject:
        """"⋯" right of a matrix (or "⋮" under it) whose heads are not all drawn; nothing when they are."""
        if self.h == self.drawn:
            return VGroup()
        dots = text("⋯" if direction is RIGHT else "⋮", size=look.size + 6, color=MUTED)
        return dots.next_to(beside, direction, buff=0.12)

    def _place_names(self, board: _Board) -> None:
        """X's and Q's names under them (on one line), W_Q's left of it (over X)."""
        look, x, q, w = board.look, board.x, board.q, board.w
        y = min(x.brackets.get_bottom()[1], q.brackets.get_bottom()[1]) - look.length(0.2)
        for name, matrix in ((board.x_name, x), (board.q_name, q)):
            name.move_to((matrix.tiles.get_x(), y - name.height / 2, 0))
        board.w_name.next_to(w.brackets, LEFT, buff=look.length(0.35))

    def _name(self, look: _Look, name: str, *shape: Fact, color: str) -> VGroup:
        """A matrix's name (TeX) and its shape, ``5 × 3`` or ``3 × 2·2`` (``d_in × h·d_k``), side by side."""
        template = "{} × {}" if len(shape) == 2 else "{} × {}·{}"
        shape_label = self.label(template, *shape, size=look.size, color=MUTED)
        font = NAME_SIZE * look.scale if look.numbers else NAME_SIZE * SMALLEST_SIZE / NUMBER_SIZE
        tex = drop_svg_paths(MathTex(name, font_size=font, color=color))
        return VGroup(tex, shape_label).arrange(RIGHT, buff=0.2)

    def _token_labels(self, look: _Look) -> list[VMobject]:
        """Every token left of its row, or only the query's (highlighted) where the rows are too close."""
        q = self.scenario.query
        labels: list[VMobject] = []
        for i, token in enumerate(self.scenario.tokens):
            label = token_text(token, size=look.size, color=HIGHLIGHT if i == q else MUTED)
            if not look.row_labels and i != q:
                label.set_opacity(0)  # keeps its place, draws nothing
            labels.append(label)
        return labels

    def _head_labels(self, look: _Look, tops: list[np.ndarray], block_w: float) -> VGroup:
        """"head k" over each block, in the head's colour ("k" alone where the blocks are narrower)."""
        wide = text_width(f"head {self.drawn}", look.size) + 0.1 <= block_w
        labels = VGroup()
        for k, top in enumerate(tops):
            label = self.label("head {}" if wide else "{}", position(k, "head"), size=look.size, color=head_color(k))
            labels.add(label.next_to(top, UP, buff=look.length(0.14) + 0.06))
        return labels

    def _register_board(self, board: _Board) -> None:
        """The bands the numbers stand in: X's tokens and dimensions; W_Q's and Q's rows, heads and d_k."""
        self.rows("token", board.x)
        self.columns("d_in", board.x.cell_columns(), board.x.tiles)
        self.rows("d_in", board.w)
        self._heads_and_columns(board.w, board.heads)
        self.rows("query", board.q)
        self._heads_and_columns(board.q, VGroup())
        parts = board.parts
        self.columns("head", {k: part.tiles for k, part in enumerate(parts)}, *(p.tiles for p in parts))
        for part in parts:
            self.rows("d_in", part)
            self.columns("d_k", part.cell_columns(), part.tiles)

    def _heads_and_columns(self, matrix: BlockMatrix, labels: VGroup) -> None:
        """A head's band per block (its label over it), and in each block a column per dimension d_k."""
        d_k = self.scenario.d_k
        self.columns("head", matrix.column_anchors(), matrix.tiles, *labels)
        columns = matrix.cell_columns()
        for k in range(matrix.blocks):
            self.columns("d_k", {c: columns[k * d_k + c] for c in range(d_k)}, matrix.block(k))

    def _note(self, look: _Look, board: _Board) -> VGroup:
        """Under the heading: how many heads are drawn when not all of them, and "colours only" when so."""
        notes = VGroup()
        if self.h > self.drawn:
            notes.add(self.label("{} heads: heads {} to {} drawn, the rest in the walkthrough", size("n_heads"),
                                 position(0), position(self.drawn - 1), size=SMALLEST_SIZE, color=MUTED))
        if not look.numbers:
            notes.add(self.label("colours only: the heads' blocks (the numbers: in the walkthrough)",
                                 size=SMALLEST_SIZE, color=MUTED))
        notes.arrange(DOWN, buff=0.06, aligned_edge=LEFT).next_to(self.heading, DOWN, buff=0.08, aligned_edge=LEFT)
        notes.is_furniture = True  # type: ignore[attr-defined]
        _ = board
        return notes

    # -- the beats ----------------------------------------------------------------------------------
    def _merge(self, board: _Board) -> None:
        """Each head's W_Q, apart; then side by side: one big W_Q, its column blocks in the heads' colours."""
        d_k = self.scenario.d_k
        for k, label in enumerate(board.heads):
            label.set_x(board.parts[k].tiles.get_x())
        self.play(*(FadeIn(VGroup(part, board.heads[k]), shift=DOWN * 0.2) for k, part in enumerate(board.parts)),
                  FadeIn(self.notes), run_time=1.0)
        flights: list[Any] = []
        for k, part in enumerate(board.parts):
            flights += [ReplacementTransform(part.pieces[m][0], board.w.pieces[m][k]) for m in range(part.rows)]
            flights += [ReplacementTransform(part.entries[m][c], board.w.entries[m][k * d_k + c])
                        for m in range(part.rows) for c in range(d_k) if part.entries]
            flights += [FadeOut(part.brackets), board.heads[k].animate.set_x(board.w.block(k).get_x())]
        if self.h == 1:
            said = (f"One head: the big W_Q is its own W_Q, {self.cite(size('d_in'))} rows and "
                    f"{self.cite(size('n_heads'))} block of {self.cite(size('d_k'))} columns, nothing beside it.")
        else:
            said = (f"Put the {self.cite(size('n_heads'))} heads' W_Q side by side: one matrix of "
                    f"{self.cite(size('d_in'))} rows and {self.cite(size('n_heads'))} blocks of "
                    f"{self.cite(size('d_k'))} columns, head {self.cite(position(0, 'head'))}'s first.")
        self.beat(said, *flights, FadeIn(board.w.brackets, board.w_name, *board.more[:1]), run_time=1.6, wait=1.2)

    def _product(self, board: _Board) -> None:
        """X beside Q: one product fills every head's block at once, under its block of W_Q."""
        q = board.q
        rows = [VGroup(*q.pieces[i], *(q.entries[i] if q.entries else [])) for i in range(q.rows)]
        said = (f"One product, X W_Q, gives every head's queries at once: {self.cite(size('n_tokens'))} rows, the "
                f"same {self.cite(size('n_heads'))} blocks of {self.cite(size('d_k'))} columns." if self.h > 1 else
                f"One product, X W_Q, gives its queries: {self.cite(size('n_tokens'))} rows, "
                f"{self.cite(size('n_heads'))} block of {self.cite(size('d_k'))} columns.")
        self.beat(said, FadeIn(board.x, board.labels, board.x_name, shift=RIGHT * 0.2),
                  fade_in(q.brackets, board.q_name, *board.more[1:]),
                  LaggedStart(*(fade_in(row) for row in rows), lag_ratio=min(0.2, 2.0 / q.rows)), run_time=2.0,
                  wait=1.2)

    def _reshape(self, board: _Board) -> _Stack:
        """X and W_Q leave; each token's row of Q is cut into the heads' pieces, the query's row lifted out as
        an ``h × d_k`` block: (n, h, d_k). Returns the stack of the transpose, laid out (not yet shown)."""
        look, q, d_k = board.look, board.q, self.scenario.d_k
        # where everything goes: the tokens, the stack, the room on its right for the head shown equal
        if look.numbers:
            right = self._right_w(d_k * look.cell_w + PAD, look.size, look.length(GAP + 0.45))
        else:  # colours only: the equal head's rows of numbers, and the stack's cells narrower if need be
            right = 0.9 + max(text_width(f"in the stack, row '{shorten_token(self.scenario.query_token, 8)}':",
                                         SMALLEST_SIZE), text_width(f"head {self.drawn} alone: X W_Q", SMALLEST_SIZE),
                              d_k * self._row_cell() + PAD)
            room = 2 * HALF_WIDTH - board.labels.width - 0.15 - right - self.drawn * PAD \
                - (self.drawn - 1) * SUMMARY_APART - (0.5 if self.h > self.drawn else 0.0)
            look = replace(look, cell_w=min(look.cell_w, room / (self.drawn * d_k)))
        stack = self._stack(look, "queries", self.drawn, transposed=True)
        left = -(board.labels.width + 0.15 + stack.group.width + right) / 2
        first = stack.matrices[0]
        stack.group.shift(RIGHT * (left + board.labels.width + 0.15 - first.brackets.get_left()[0])
                          + UP * ((self.top + BOTTOM) / 2 - stack.group.get_y()))
        move = first.tiles.get_corner(UP + LEFT) - q.tiles.get_corner(UP + LEFT)
        labels = board.labels.generate_target()
        labels.shift(UP * move[1] + RIGHT * (first.brackets.get_left()[0] - 0.15 - labels.get_right()[0]))
        buff = look.length(0.14) + 0.06
        heads = [label.animate.next_to(q.block(k).get_top() + move, UP, buff=buff)
                 for k, label in enumerate(board.heads)]
        self.play(fade_out(board.x, board.x_name, board.w, board.w_name, board.more, board.q_name),
                  q.animate.shift(move), *heads, MoveToTarget(board.labels), run_time=1.0)
        shifts = q.cut_shifts(look.length(CUT))
        brackets = q.brackets_after(shifts)
        token = self._lifted(look, board, shifts, brackets)
        shape = self.label("reshape: ({}, {}, {})", size("n_tokens"), size("n_heads"), size("d_k"), size=look.size,
                           color=MUTED).move_to(stack.shape)
        n_, h, d = (self.cite(size(name)) for name in ("n_tokens", "n_heads", "d_k"))
        said = (f"Reshape to ({n_}, {h}, {d}): each token's row is cut into {self.cite(size('n_heads'))} pieces of "
                f"{self.cite(size('d_k'))}, one per head." if self.h > 1 else
                f"Reshape to ({n_}, {h}, {d}): with one head, each token's row stays one piece.")
        self.beat(said, *(q.cut_block(k).animate.shift(shifts[0][k]) for k in range(q.blocks)),
                  ReplacementTransform(q.brackets, brackets), *(board.heads[k].animate.shift(shifts[0][k])
                                                                 for k in range(q.blocks)),
                  LaggedStart(FadeIn(token.box), *token.flights, FadeIn(token.frame), lag_ratio=0.4),
                  FadeIn(shape), run_time=2.0, wait=1.2)
        q.brackets = brackets
        self.lifted = VGroup(token.box, token.block, token.frame)
        self.reshaped = shape
        return stack

    def _lifted(self, look: _Look, board: _Board, shifts: list[list[np.ndarray]], brackets: VMobject) -> _Lifted:
        """The query's row of Q, cut, as an ``h × d_k`` block right of Q (its heads one above another)."""
        q, row, d_k = board.q, self.scenario.query, self.scenario.d_k
        block = BlockMatrix(q.blocks, 1, d_k, cell_w=look.cell_w, cell_h=look.cell_h,
                            colors=[head_color(k) for k in range(q.blocks)][:1], tint=q.pieces[0][0].fill_opacity)
        for k in range(q.blocks):
            block.pieces[k][0].set_fill(head_color(k))
        if look.numbers:
            block.place([[self.number("fused", "queries_big", row, k * d_k + c, size=look.size, color=QUERY)
                          for c in range(d_k)] for k in range(q.blocks)])
        top = q.pieces[row][0].get_y() + shifts[row][0][1] + block.tiles.height / 2
        top = min(top, self.top - 0.6)
        block.move_to((brackets.get_right()[0] + look.length(GAP + 0.6) + block.width / 2, top - block.height / 2, 0))
        block.shift(UP * max(0.0, BOTTOM + look.length(NAMES_H) + (0.4 if self.h > self.drawn else 0.0)
                             - block.get_bottom()[1]))
        box = q.row_box_after(row, shifts, HIGHLIGHT)
        dots = self._more(look, block.brackets, DOWN)
        frame = VGroup(block.brackets, dots, self.label("{}: {} × {}", TokenPart(self.scenario.query_token, 8),
                                                        size("n_heads"), size("d_k"), size=look.size, color=HIGHLIGHT)
                       .next_to(VGroup(block.brackets, dots), DOWN, buff=look.length(0.15)))
        flights: list[Animation] = [TransformFromCopy(q.pieces[row][k], block.pieces[k][0]) for k in range(q.blocks)]
        if look.numbers:
            flights += [ReplacementTransform(q.entries[row][k * d_k + c].copy(), block.entries[k][c])
                        for k in range(q.blocks) for c in range(d_k)]
            # the block's rows are heads, its columns the dimensions of a query: each number in its head's row
            self.rows("head", block.row_anchors(), block.tiles)
            self.columns("d_k", block.cell_columns(), block.tiles)
            self.rows("query", {row: block.tiles}, block.tiles)
        return _Lifted(block, box, frame, flights)

    def _transpose(self, board: _Board, stack: _Stack) -> None:
        """The pieces regroup by head: a stack of the heads' query matrices, (h, n, d_k)."""
        look, q, d_k = board.look, board.q, self.scenario.d_k
        moves: list[Animation] = []
        for k, matrix in enumerate(stack.matrices):
            moves += [ReplacementTransform(q.pieces[i][k], matrix.pieces[i][0]) for i in range(q.rows)]
            moves += [ReplacementTransform(q.entries[i][k * d_k + c], matrix.entries[i][c])
                      for i in range(q.rows) for c in range(d_k) if look.numbers]
        h, n, d = (self.cite(size(name)) for name in ("n_heads", "n_tokens", "d_k"))
        said = (f"Transpose to ({h}, {n}, {d}): the pieces regroup by head, a stack of query matrices, "
                f"{self.cite(size('n_tokens'))} × {self.cite(size('d_k'))} each." if self.h > 1 else
                f"Transpose to ({h}, {n}, {d}): a stack of one query matrix.")
        self.beat(said, *moves, ReplacementTransform(board.heads, stack.heads), FadeOut(q.brackets, self.lifted),
                  FadeIn(*(m.brackets for m in stack.matrices), stack.more),
                  ReplacementTransform(self.reshaped, stack.shape),
                  run_time=1.8, wait=1.2)

    def _same_numbers(self, board: _Board, stack: _Stack) -> None:
        """The chosen head's matrix equals its Q computed alone, X times its own W_Q (the previous scene's)."""
        look, k, d_k = board.look, self.chosen, self.scenario.d_k
        mine, source = stack.matrices[k], f"head{k + 1}"
        title: VMobject = VGroup()
        sign: VMobject = VGroup()
        outline: VMobject
        if look.numbers:
            alone = self._matrix(look, source, "queries", (), range(self.scenario.n_tokens), 1, d_k,
                                 [head_color(k)], QUERY)
            after = (stack.more if self.h > self.drawn else mine.brackets).get_right()[0]
            alone.move_to(mine).shift(RIGHT * (after + look.length(GAP + 0.45) - alone.brackets.get_left()[0]))
            outline = mine.block_box(0, INK)
            shown = VGroup(alone)
            self.rows("query", alone)
            title = self._alone_title(look.size)
            title.next_to(alone.tiles, UP, buff=look.length(0.14) + 0.06).set_x(alone.tiles.get_x())
            title.shift(RIGHT * min(0.0, HALF_WIDTH - title.get_right()[0]))
            sign = text("=", size=look.size + 6, color=INK).move_to(
                ((after + alone.brackets.get_left()[0]) / 2, alone.tiles.get_y(), 0))
        else:  # colours only: the query's row of the head's matrix, and of the head's own Q, written out
            alone, shown, outline = self._equal_rows(mine, source)
        self.columns("d_k", alone.cell_columns(), alone.tiles)
        self.columns("head", {k: alone.tiles}, alone.tiles)
        said = (f"Head {self.cite(position(k, 'head'))}'s matrix is its Q from before, X times its own W_Q: the same "
                "numbers." if self.h > 1 else "Its one matrix is its Q from before, X times W_Q: the same numbers.")
        self.beat(said, FadeIn(outline), FadeIn(shown, title, sign, shift=LEFT * 0.2), run_time=1.5, wait=1.8)
        self.equal = VGroup(shown, title, sign, outline)

    def _alone_title(self, font: float) -> VMobject:
        """"head 2 alone: X W_Q" over the head's Q computed alone ("X W_Q" for one head)."""
        if self.h == 1:
            return self.label("alone: X W_Q", size=font, color=head_color(0))
        return self.label("head {} alone: X W_Q", position(self.chosen, "head"), size=font,
                          color=head_color(self.chosen))

    def _row_cell(self) -> float:
        """Colours only: the width of a cell of the equal head's rows of numbers (at the font floor)."""
        k = self.chosen
        texts = [*self._texts("fused", "queries_split", k), *self._texts(f"head{k + 1}", "queries")]
        return widest(texts, SMALLEST_SIZE) + 0.25

    def _equal_rows(self, mine: BlockMatrix, source: str) -> tuple[BlockMatrix, VGroup, VMobject]:
        """Colours only: the query's row of the head's matrix, and the same row of the head's own Q, as
        numbers one above the other right of the stack (at the font floor), each under its title."""
        q, d_k, k = self.scenario.query, self.scenario.d_k, self.chosen
        cell = self._row_cell()
        look = _Look(True, MIN_SCALE, cell, cell, text_height(SMALLEST_SIZE) + 0.16, True)
        split = self._matrix(look, "fused", "queries_split", (k,), [q], 1, d_k, [head_color(k)], QUERY)
        alone = self._matrix(look, source, "queries", (), [q], 1, d_k, [head_color(k)], QUERY)
        token = self.label("in the stack, row '{}':", TokenPart(self.scenario.query_token, 8), size=SMALLEST_SIZE,
                           color=MUTED)
        title = self._alone_title(SMALLEST_SIZE)
        column = VGroup(token, split, title, alone).arrange(DOWN, buff=0.15, aligned_edge=LEFT)
        column.move_to((mine.brackets.get_right()[0] + 0.9 + column.width / 2,
                        min(max(mine.pieces[q][0].get_y(), BOTTOM + column.height / 2 + 0.1),
                            self.top - column.height / 2 - 0.1), 0))
        for matrix in (split, alone):
            self.rows("query", {q: matrix.tiles}, matrix.tiles)
        self.columns("d_k", split.cell_columns(), split.tiles, alone.tiles)
        self.columns("head", {k: split.tiles}, split.tiles)
        outline = mine.row_box_after(q, mine.cut_shifts(0.0), INK)
        return alone, VGroup(token, split, title, alone), outline

    def _keys_and_values(self, board: _Board, queries: _Stack) -> None:
        """K and V the same way: for each role its big W over the stack its product splits into, in colours."""
        look = self._summary_look()
        columns = self.summary = [self._summary_column(look, role) for role in ROLES]
        labels = VGroup(*self._token_labels(look))
        # the columns spread over most of the width (the slide a lecturer pastes), GAP apart at least
        widths = [column.group.width for column in columns]
        gap = max(GAP, (SUMMARY_WIDTH * 2 * HALF_WIDTH - labels.width - 0.15 - sum(widths)) / 2)
        x = 0.0
        for column in columns:
            column.group.shift(RIGHT * (x - column.group.get_left()[0]))
            x = column.group.get_right()[0] + gap
        whole = VGroup(*(c.group for c in columns))
        whole.shift(RIGHT * ((labels.width + 0.15) / 2 - whole.get_x())
                    + UP * ((self.top + BOTTOM) / 2 - whole.get_y()))
        first = columns[0].stack.matrices[0]
        for i, label in enumerate(labels):
            label.next_to(first.brackets, LEFT, buff=0.15).set_y(first.pieces[i][0].get_y())
        stacked = columns[0].stack
        moves: list[Animation] = [ReplacementTransform(board.labels, labels),
                                  ReplacementTransform(queries.shape, stacked.shape)]
        for old, new in zip(queries.matrices, stacked.matrices, strict=True):
            moves += [ReplacementTransform(old.tiles, new.tiles), ReplacementTransform(old.brackets, new.brackets),
                      fade_out(old.numbers)]
        self.stacks = [column.stack for column in columns]
        self.beat("K and V the same way: one big W_K and one big W_V, each product split into the heads' K and V.",
                  fade_out(self.equal, queries.heads, queries.more), *moves,
                  FadeIn(columns[0].top, stacked.more, shift=DOWN * 0.2),
                  *(FadeIn(c.group, shift=LEFT * 0.3) for c in columns[1:]), *self._summary_note(), run_time=1.6,
                  wait=2.9)

    def _summary_look(self) -> _Look:
        """The summary's cells, in colours only: as large as the three columns (each big W over its stack) fit."""
        s, drawn = self.scenario, self.drawn
        if self.board.look.numbers:
            self.top -= NOTE_LINE  # under the note "colours only", said now
        label_w = self._label_width(SMALLEST_SIZE)
        gaps = 3 * (drawn * PAD + (drawn - 1) * SUMMARY_APART) + 2 * GAP + 0.2
        cell_w = min(1.2, (2 * HALF_WIDTH - label_w - gaps) / (drawn * (2 * s.d_k + s.d_v)))
        cell_h = min(0.5, (self.top - BOTTOM - LABELS_H - SUMMARY_LINES) / (s.d_in + s.n_tokens))
        return _Look(False, 1.0, cell_w, cell_w, cell_h, cell_h >= text_height(SMALLEST_SIZE) + 0.06)

    def _summary_column(self, look: _Look, role: str) -> _Column:
        """One role: its big W (the heads' blocks, their labels over them, its name and shape under it), an
        arrow, and the stack of the heads' matrices its product splits into."""
        name, color, width, _ = ROLES[role]
        d, drawn = getattr(self.scenario, width), self.drawn
        w = BlockMatrix(self.scenario.d_in, drawn, d, cell_w=look.cell_w, cell_h=look.cell_h,
                        colors=[head_color(k) for k in range(drawn)], tint=COLOUR_TINT)
        heads = self._head_labels(look, [w.block(k).get_top() for k in range(drawn)], d * look.cell_w)
        w_name = self._name(look, f"W_{{{name}}}", size("d_in"), size("n_heads"), size(width), color=color)
        w_name.next_to(w.brackets, DOWN, buff=0.12)
        arrow = Arrow(UP * 0.25, DOWN * 0.25, buff=0, color=MUTED, stroke_width=3, tip_length=0.15)
        arrow.next_to(w_name, DOWN, buff=0.08)
        stack = self._stack(look, role, drawn, heads=False)
        stack.group.next_to(arrow, DOWN, buff=0.08)
        stack.group.shift(RIGHT * (w.get_x() - VGroup(*stack.matrices).get_x()))
        return _Column(VGroup(heads, w, w_name, arrow, self._more(look, w.brackets)), stack)

    def _summary_note(self) -> list[Animation]:
        """"Colours only" under the heading, when nothing said it yet."""
        if not self.board.look.numbers:
            return []
        note = self.label("colours only: the numbers are in the walkthrough", size=SMALLEST_SIZE, color=MUTED)
        note.next_to(self.notes if len(self.notes) else self.heading, DOWN, buff=0.06, aligned_edge=LEFT)
        note.is_furniture = True  # type: ignore[union-attr]
        return [FadeIn(note)]

    # -- stacks -------------------------------------------------------------------------------------
    def _stack(self, look: _Look, role: str, drawn: int, *, heads: bool = True, transposed: bool = False) -> _Stack:
        """The heads' matrices of one role side by side (``(h, n, d)``), heads over them, the shape under."""
        name, color, width, kind = ROLES[role]
        d, n = getattr(self.scenario, width), self.scenario.n_tokens
        matrices = [self._matrix(look, "fused", f"{role}_split", (k,), range(n), 1, d, [head_color(k)], color)
                    for k in range(drawn)]
        x = 0.0
        apart = look.length(APART) if look.numbers else SUMMARY_APART
        for matrix in matrices:
            matrix.shift(RIGHT * (x - matrix.brackets.get_left()[0]))
            x = matrix.brackets.get_right()[0] + apart
        labels = self._head_labels(look, [m.tiles.get_top() for m in matrices], d * look.cell_w) if heads else VGroup()
        template = "transpose: ({}, {}, {})" if transposed else name + ": ({}, {}, {})"
        shape = self.label(template, size("n_heads"), size("n_tokens"), size(width), size=look.size, color=color)
        shape.next_to(VGroup(*(m.brackets for m in matrices)), DOWN, buff=look.length(0.25))
        more = self._more(look, matrices[-1].brackets)
        for matrix in matrices:
            self.rows(kind, matrix)
            self.columns(width, matrix.cell_columns(), matrix.tiles)
        self.columns("head", {k: m.tiles for k, m in enumerate(matrices)}, *(m.tiles for m in matrices))
        return _Stack(matrices, labels, shape, more)


@dataclass
class _Column:
    """One role in the summary: its big W with the heads' labels, name and an arrow (``top``), and its stack."""

    top: VGroup
    stack: _Stack

    @property
    def group(self) -> VGroup:
        return VGroup(self.top, self.stack.group)


@dataclass
class _Lifted:
    """The query's row of Q as an ``h × d_k`` block: the block, the outline of the row, the block's frame and
    label, and the animations that lift the row's pieces (and numbers) into it."""

    block: BlockMatrix
    box: VMobject
    frame: VGroup
    flights: list[Animation]
