"""Scene 2: the weights themselves — W_Q and W_K as heat maps, from random to learned.

W_Q and W_K of the training run (``TrainingTrace.w_query``, ``w_key``) side by side, a row per feature
of the embedding (animal, thing, shared, role), a column per dimension of a query or key, each cell's
number written in it and its colour on one scale for the whole run (so growth shows as colour too). The
scene stops at the keyframes of ``scenes.learned.learned_keyframes`` (0, 5, 20, 60 for the lecture's run),
the step and its loss written over the maps; at the end the entries that grew most are outlined: what W_Q
learned to read, and what W_K learned to set apart. The training run is the lecture's
(``scenes.learned.LEARNED_TRAINING``), whatever the scenario.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from manim import (
    DOWN,
    LEFT,
    UP,
    FadeIn,
    MathTex,
    ReplacementTransform,
    SurroundingRectangle,
    VGroup,
    VMobject,
)

from attention_math import TrainingTrace, train_attention
from scenes import learned as lecture_run
from scenes.base import READING_PACE, ExplainerScene
from scenes.facts import position, value
from scenes.kit.heatmap import HeatGrid, ink_on, opacity_of
from scenes.kit.layout import TOP
from scenes.kit.palette import HIGHLIGHT, INK, KEY, MUTED, QUERY
from scenes.kit.text import NUMBER_SIZE, text

__all__ = ["LearnedWeights"]

CELL_W, CELL_H = 1.5, 0.82
LABEL = 24  # feature names, column numbers, the step line
GAP = 1.6  # between the two maps
FIELDS = (("w_query", "W_Q", QUERY), ("w_key", "W_K", KEY))


@dataclass
class _Map:
    """One matrix's heat map: its grid, title and the numbers in its cells now."""

    field: str
    hue: str
    grid: HeatGrid
    title: MathTex
    numbers: VGroup


class LearnedWeights(ExplainerScene):
    """W_Q and W_K at a few steps of the training run: from random to learned."""

    reading_pace = READING_PACE

    run: TrainingTrace
    maps: list[_Map]  # W_Q's, then W_K's (the geometry test reads them)
    keyframes: tuple[int, ...]  # the steps the scene stops at
    marks: VGroup  # the outlined entries, at the end

    def construct(self) -> None:
        seed, steps, rate = lecture_run.LEARNED_TRAINING
        self.run = train_attention(seed, steps=steps, learning_rate=rate)
        self.add_source("training", self.run, 2)
        self.add_source("training_whole", self.run, 0)
        self.header("W_Q and W_K, from random to learned", "query", "key")
        everything = np.concatenate([self.run.w_query.ravel(), self.run.w_key.ravel()])
        self.scale = (float(everything.min()), float(everything.max()))  # one colour scale for the whole run
        keyframes = self.keyframes = lecture_run.learned_keyframes(self.run.steps)
        self._start(keyframes[0])
        for step in keyframes[1:]:
            self._step(step)
        self._summary()

    # -- layout ------------------------------------------------------------------------------------------
    def _grid(self, field: str, name: str, hue: str, left: float) -> _Map:
        d_in, d_k = self.run.w_query.shape[1:]
        grid = HeatGrid(d_in, d_k, cell_w=CELL_W, cell_h=CELL_H, size=LABEL, row_tokens=self.run.features,
                        row_color=MUTED)
        grid.label_columns([self.label("{}", position(c, "d_k"), size=LABEL, color=hue) for c in range(d_k)])
        grid.align_to((left, 0, 0), LEFT)
        title = MathTex(name.replace("_", "_{") + "}", font_size=40, color=hue)
        grid.shift(UP * (TOP - 1.45 - grid.brackets.get_top()[1]))  # under the step's line, the titles and numbers
        title.move_to((grid.cells.get_x(), TOP - 0.8, 0))
        self.rows("d_in", grid)
        self.columns("d_k", grid)
        return _Map(field, hue, grid, title, VGroup())

    def _numbers(self, board: _Map, step: int) -> VGroup:
        """The matrix's entries at ``step`` in its cells, dark on light cells, light on dark ones."""
        matrix = np.asarray(getattr(self.run, board.field))[step]
        low, high = self.scale
        entries = [[self.number("training", board.field, step, a, c, size=NUMBER_SIZE,
                                color=ink_on(opacity_of(float(matrix[a, c]), low, high)))
                    for c in range(matrix.shape[1])] for a in range(matrix.shape[0])]
        return board.grid.place(entries)

    def _fills(self, board: _Map, step: int, *, animate: bool = True) -> list[object]:
        matrix = np.asarray(getattr(self.run, board.field))[step]
        return board.grid.fill(matrix, *self.scale, board.hue, animate=animate)

    def _step_line(self, step: int) -> VMobject:
        line = self.label("step {} · loss {}", value("training_whole", "step_numbers", step),
                          value("training", "step_losses", step), size=LABEL + 4, color=INK)
        return line.move_to((0, TOP - 0.2, 0))

    # -- the beats -----------------------------------------------------------------------------------------
    def _start(self, step: int) -> None:
        d_in, d_k = self.run.w_query.shape[1:]
        width = HeatGrid(d_in, d_k, cell_w=CELL_W, cell_h=CELL_H, size=LABEL, row_tokens=self.run.features).width
        left = -(len(FIELDS) * width + GAP) / 2
        self.maps = []
        for field, name, hue in FIELDS:
            self.maps.append(self._grid(field, name, hue, left))
            left += width + GAP
        for board in self.maps:
            self._fills(board, step, animate=False)
            board.numbers = self._numbers(board, step)
        self.step_line = self._step_line(step)
        features = ", ".join(f"'{name}'" for name in self.run.features)
        self.beat(f"Training starts from random W_Q and W_K: a row for each feature of a word ({features}), a column "
                  "for each dimension of its query or key.",
                  *(FadeIn(board.grid, board.title) for board in self.maps), run_time=1.5, wait=1.2)
        self.beat(f"Step {self.fmt('training_whole', 'step_numbers', step)}: small numbers, drawn at random; the loss "
                  f"is {self.fmt('training', 'step_losses', step)}.", FadeIn(self.step_line),
                  *(FadeIn(board.numbers) for board in self.maps), run_time=1.0, wait=1.5)

    def _step(self, step: int) -> None:
        moves: list[object] = []
        for board in self.maps:
            numbers = self._numbers(board, step)
            moves += [*self._fills(board, step), ReplacementTransform(board.numbers, numbers)]
            board.numbers = numbers
        line = self._step_line(step)
        moves.append(ReplacementTransform(self.step_line, line))
        self.step_line = line
        self.beat(self._words(step), *moves, run_time=2.0, wait=1.5)

    def _largest(self, field: str, step: int, smallest: bool = False) -> tuple[int, int]:
        """The (feature, dimension) of a matrix's largest entry at ``step`` (its smallest, or largest in size)."""
        matrix = np.asarray(getattr(self.run, field))[step]
        pick = np.argmin(matrix) if smallest else np.argmax(np.abs(matrix) if field == "w_query" else matrix)
        a, c = np.unravel_index(int(pick), matrix.shape)
        return int(a), int(c)

    def _words(self, step: int) -> str:
        at = f"Step {self.fmt('training_whole', 'step_numbers', step)}"
        a, c = self._largest("w_query", step)
        big = self.fmt("training", "w_query", step, a, c)
        if step != self.run.steps:
            how = ("each step moves every entry a little down its gradient" if step == self.keyframes[1] else
                   "the entries that lower the loss most keep growing")
            return f"{at}: {how}. W_Q's largest in size is now {big}, on the '{self.run.features[a]}' row."
        (b, d), (e, f) = self._largest("w_key", step), self._largest("w_key", step, smallest=True)
        high, low = self.fmt("training", "w_key", step, b, d), self.fmt("training", "w_key", step, e, f)
        return (f"{at}: W_Q's largest entry in size, {big}, reads '{self.run.features[a]}'; W_K's largest, {high}, and "
                f"smallest, {low}, set '{self.run.features[b]}' against '{self.run.features[e]}'.")

    def _summary(self) -> None:
        """The last frame: the learned maps, the entries that grew most outlined, what it means."""
        step = self.run.steps
        query, key = self.maps
        cells = [query.grid.squares[a][c] for a, c in [self._largest("w_query", step)]]
        cells += [key.grid.squares[a][c] for a, c in (self._largest("w_key", step),
                                                       self._largest("w_key", step, smallest=True))]
        self.marks = VGroup(*(SurroundingRectangle(cell, color=HIGHLIGHT, buff=0.02, stroke_width=4)
                              for cell in cells))
        note = VGroup(text("Learned, not given: gradient descent wrote these numbers.", size=LABEL, color=INK),
                      text("W_V stays as it was: the loss reads only the attention weights.", size=LABEL - 2,
                           color=MUTED)).arrange(DOWN, buff=0.12)
        note.next_to(VGroup(*(board.grid for board in self.maps)), DOWN, buff=0.35)
        self.summary = note
        (a, _), (b, _), (e, _) = (self._largest("w_query", step), self._largest("w_key", step),
                                  self._largest("w_key", step, smallest=True))
        features = self.run.features
        self.beat(f"W_Q learned to read '{features[a]}', W_K to set '{features[b]}' against '{features[e]}': that is "
                  "where W comes from.", FadeIn(self.marks), FadeIn(note, shift=UP * 0.1), run_time=1.2, wait=2.5)

