"""Scene 1 of the latent-attention lecture: the latent down-projection, the cache's rows, and each head's keys and
values up-projected from it.

``X`` times ``W_DKV`` is ``c_KV``, ``d_c`` numbers a token: the rows the decoder keeps. Then each head's content
keys ``k_C,i = c_KV W_UK,i`` and values ``v_i = c_KV W_UV,i``, made from the latent when needed. The numbers are
``attention_math.latent_attention``'s on the scenario's ``X`` with the lecture's weights (``setting.LATENT_SETUP``).
"""

from __future__ import annotations

import numpy as np
from manim import DOWN, LEFT, RIGHT, UP, FadeIn, FadeOut, SurroundingRectangle, VGroup

from attention_math import Scenario
from scenes.base import READING_PACE, ExplainerScene
from scenes.facts import position, size, value
from scenes.kit.grids import NumberGrid
from scenes.kit.layout import BOTTOM, HALF_WIDTH, TOP
from scenes.kit.palette import EMBEDDING, HIGHLIGHT, INK, KEY, MUTED, VALUE
from scenes.kit.text import text
from scenes.latent_attention.setting import check_latent, fit, register_latent, slice_grid

__all__ = ["LatentProjection"]

GAP = 0.35
NOTE_ROOM = 0.55  # under everything: the summary's line
TAG_ROOM = 0.4  # under the latent: "the cache"


class LatentProjection(ExplainerScene):
    """X W_DKV = c_KV (the cache's rows), then every head's k_C and v from c_KV."""

    reading_pace = READING_PACE

    x: NumberGrid
    w_dkv: NumberGrid
    latent: NumberGrid
    up: list[NumberGrid]  # k_C,1, v_1, k_C,2, v_2, …
    cache_box: VGroup

    @classmethod
    def check_scenario(cls, scenario: Scenario) -> Scenario:
        return check_latent(scenario)

    def construct(self) -> None:
        self.trace = register_latent(self)
        self.header("Latent attention: one small latent a token", "key", "value")
        self._embeddings()
        self._down()
        self._cache()
        self._up()
        self._summary()

    # -- layout -------------------------------------------------------------------------------------------------
    def _titled(self, grid: NumberGrid, title: VGroup | object) -> VGroup:
        title.next_to(grid.brackets, UP, buff=0.15)  # type: ignore[attr-defined]
        return VGroup(grid, title)

    def _first_layout(self) -> VGroup:
        t = self.trace
        tokens = list(self.scenario.tokens)
        self.x = slice_grid(self, "embeddings", (), range(t.n_tokens), t.embeddings.shape[1], color=EMBEDDING,
                            row_labels=tokens)
        self.w_dkv = slice_grid(self, "w_dkv", (), range(t.embeddings.shape[1]), t.d_c, color=INK)
        self.latent = slice_grid(self, "latent", (), range(t.n_tokens), t.d_c, color=HIGHLIGHT)
        times, equals = text("×", size=30, color=MUTED), text("=", size=30, color=MUTED)
        row = VGroup(self.x, times, self.w_dkv, equals, self.latent).arrange(RIGHT, buff=GAP)
        self.w_dkv.align_to(self.x.brackets, UP)
        self.latent.align_to(self.x.brackets, UP)
        self.signs = VGroup(times, equals)
        self.titles = VGroup(self.label("X: {} numbers a token", size("d_in"), size=26, color=EMBEDDING),
                             text("W_DKV", size=26, color=INK),
                             self.label("c_KV = X W_DKV: {} a token", value("latent_whole", "d_c"), size=26,
                                        color=HIGHLIGHT))
        for grid, title in zip((self.x, self.w_dkv, self.latent), self.titles, strict=True):
            title.next_to(grid.brackets, UP, buff=0.15)
        group = VGroup(row, self.titles)
        self.factor = fit(group, 2 * HALF_WIDTH, TOP - BOTTOM - NOTE_ROOM - TAG_ROOM)
        group.move_to((0, TOP - group.height / 2, 0))
        self.rows("token", self.x)
        self.rows("token", dict(enumerate(self.x.row_labels)), self.latent)
        return group

    # -- the beats ------------------------------------------------------------------------------------------------
    def _embeddings(self) -> None:
        self._first_layout()
        d_in = self.cite(size("d_in"))
        self.beat(f"Every token enters as its embedding, {d_in} numbers a row of X.",
                  FadeIn(self.x, self.titles[0]), run_time=1.0)

    def _down(self) -> None:
        d_c = self.fmt("latent_whole", "d_c")
        self.beat(f"One matrix, W_DKV, takes each row down to a latent of {d_c} numbers: c_KV = X W_DKV.",
                  FadeIn(self.signs, self.w_dkv, self.titles[1]), FadeIn(self.latent, self.titles[2]), run_time=1.5)

    def _cache(self) -> None:
        self.cache_box = VGroup(SurroundingRectangle(self.latent.body, color=HIGHLIGHT, buff=0.12))
        tag = text("the cache", size=26, color=HIGHLIGHT).next_to(self.cache_box, DOWN, buff=0.1)
        self.cache_box.add(tag)
        self.beat("These rows are what the decoder keeps of each token, in every layer: not the keys, not the "
                  "values.", FadeIn(self.cache_box), run_time=1.0)

    def _up_grids(self) -> VGroup:
        t = self.trace
        self.up, columns = [], VGroup()
        for head in range(self._drawn_heads()):
            pair = VGroup()
            for field, color, name in (("content_keys", KEY, "k_C,{}"), ("values", VALUE, "v{}")):
                grid = slice_grid(self, field, (head,), range(t.n_tokens), t.d_h, color=color, h_buff=0.2)
                title = self.label(name, position(head, "latent_head"), size=26, color=color)
                self.up.append(grid)
                pair.add(self._titled(grid, title))
            columns.add(pair.arrange(RIGHT, buff=0.25, aligned_edge=UP))
        return columns.arrange(RIGHT, buff=GAP + 0.1, aligned_edge=UP)

    def _drawn_heads(self) -> int:
        """Every head when their grids fit beside the latent at nearly full size (0.8), else the first alone."""
        t = self.trace
        widest = max(text(self.text_for(value("latent", field, *index)), size=26).width
                     for field in ("content_keys", "values") for index in np.ndindex(*getattr(t, field).shape))
        pair = 2 * (t.d_h * (widest + 0.2) + 0.35) + 0.25
        free = HALF_WIDTH - (self.latent.get_right()[0] - self.latent.get_left()[0]) - self.x.row_labels.get_right()[0] \
            - 0.3 - GAP
        return t.n_heads if t.n_heads * (pair + GAP) * self.factor * 0.8 <= free else 1

    def _up(self) -> None:
        labels = self.x.row_labels
        leaving = VGroup(self.x.body, self.x.brackets, self.signs, self.w_dkv, self.titles[0], self.titles[1])
        self.play(FadeOut(leaving), run_time=0.6)
        moved = VGroup(labels, self.latent, self.titles[2], self.cache_box)
        target = moved.copy()
        target[1:].shift(RIGHT * (labels.get_right()[0] + 0.3 - self.latent.get_left()[0]))
        heads = self._up_grids().scale(self.factor)  # rows as tall as the latent's
        smaller = fit(heads, HALF_WIDTH - target.get_right()[0] - GAP, TOP - BOTTOM)
        target.scale(smaller, about_point=(labels.get_left()[0], moved.get_top()[1], 0))
        heads.next_to(target, RIGHT, buff=GAP)
        heads.shift(UP * (target[1].cells[0][0].get_y() - self.up[0].cells[0][0].get_y()))
        self.rows("token", dict(enumerate(labels)), *self.up)
        self.beat("Each head makes its keys and values from the latent when it needs them: k_C,i = c_KV W_UK,i "
                  "and v_i = c_KV W_UV,i.", moved.animate.become(target), FadeIn(heads, shift=LEFT * 0.3),
                  run_time=1.6)
        self.heads = heads

    def _summary(self) -> None:
        self.note = self.label("kept: c_KV, {} numbers a token · made when needed: {} ({} heads' k and v, {} "
                               "numbers each)", value("latent_whole", "d_c"),
                               value("latent_whole", "multi_head_cache_width"), value("latent_whole", "n_heads"),
                               value("latent_whole", "d_h"), size=24, color=INK)
        fit(self.note, 2 * HALF_WIDTH, 1.0)
        self.note.move_to((0, BOTTOM + 0.2, 0))
        heads, d_h = self.fmt("latent_whole", "n_heads"), self.fmt("latent_whole", "d_h")
        keys_and_values, latent = self.fmt("latent_whole", "multi_head_cache_width"), self.fmt("latent_whole", "d_c")
        self.beat(f"Multi-head attention would keep all of them: {heads} heads, a key and a value of {d_h} numbers "
                  f"each, {keys_and_values} numbers a token. The latent holds {latent}.", FadeIn(self.note), wait=2.0)
