"""Scene 1 of the latent-attention lecture: why the cache must shrink, the latent down-projection, and each head's
keys and values up-projected from it.

The inference lecture's cache keeps every head's key and value of every token; MLA keeps ``c_KV = X W_DKV``, ``d_c``
numbers a token, and each head makes its content keys ``k_C,i = c_KV W_UK,i`` and values ``v_i = c_KV W_UV,i`` from
it. The numbers are ``attention_math.latent_attention``'s on the scenario's ``X`` with the lecture's weights
(``LATENT_SETUP``); the multi-head model's KiB a token is Llama 2 7B's, from its config.json.
"""

from __future__ import annotations

from typing import Any, cast

from manim import DOWN, LEFT, RIGHT, UP, FadeIn, FadeOut, Rectangle, SurroundingRectangle, VGroup

from attention_math import PUBLISHED_CONFIGS, cache_memory
from scenes.facts import TokenPart, position, size, value
from scenes.kit.grids import NumberGrid
from scenes.kit.layout import BOTTOM, HALF_WIDTH, TOP
from scenes.kit.palette import EMBEDDING, HIGHLIGHT, INK, KEY, MUTED, VALUE
from scenes.kit.text import text
from scenes.latent_attention.setting import LatentScene, fit, register_latent, slice_grid, titled_row

__all__ = ["LatentProjection"]

GAP = 0.35
SUMMARY_ROOM = 0.5  # under the heads: the summary's line
MOST = 1.3  # the tables grow to this where they have room (a few tokens)
READABLE = 0.8  # the least the heads' grids are scaled to (the font floor is 0.75 of their size)
LLAMA = "Llama 2 7B"
"""The inference lecture's multi-head model (its name drawn as a name: its digits are no numbers)."""


class LatentProjection(LatentScene):
    """Why the cache must shrink; X W_DKV = c_KV (the cache's rows); every head's k_C and v made from c_KV."""

    x: NumberGrid
    w_dkv: NumberGrid
    latent: NumberGrid
    up: list[NumberGrid]  # k_C,1, v1, k_C,2, v2
    heads: VGroup  # per head: its two titled grids
    cache_box: VGroup
    built_scale: float  # what the first row was scaled by to fit
    note: VGroup

    def construct(self) -> None:
        self.mla = register_latent(self)
        self.add_source("llama", self._llama(), 0)
        self.header("Latent attention: one small latent a token", "key", "value")
        self._layout()
        self._why()
        self._embeddings()
        self._down()
        self._cache()
        self._up()
        self._summary()

    def _llama(self) -> Any:
        """The inference lecture's multi-head model (Llama 2 7B) and its cache: its KiB a token."""
        return cache_memory(PUBLISHED_CONFIGS[0], 1)

    # -- layout -------------------------------------------------------------------------------------------------
    def _layout(self) -> None:
        t = self.mla
        self.x = slice_grid(self, "embeddings", (), range(t.n_tokens), t.embeddings.shape[1], color=EMBEDDING,
                            row_labels=list(self.scenario.tokens))
        self.w_dkv = slice_grid(self, "w_dkv", (), range(t.embeddings.shape[1]), t.d_c, color=INK)
        self.latent = slice_grid(self, "latent", (), range(t.n_tokens), t.d_c, color=HIGHLIGHT)
        self.signs = VGroup(text("×", size=30, color=MUTED), text("=", size=30, color=MUTED))
        row = VGroup(self.x, self.signs[0], self.w_dkv, self.signs[1], self.latent).arrange(RIGHT, buff=GAP)
        for grid in (self.w_dkv, self.latent):
            grid.align_to(self.x.brackets, UP)
        for sign in self.signs:
            sign.set_y(self.w_dkv.get_y())
        self.titles = VGroup(self.label("X: {} numbers a token", size("d_in"), size=26, color=EMBEDDING),
                             text("W_DKV", size=26, color=INK),
                             self.label("c_KV: {} a token", value("latent_whole", "d_c"), size=26, color=HIGHLIGHT))
        for grid, title in zip((self.x, self.w_dkv, self.latent), self.titles, strict=True):
            title.next_to(grid.brackets, UP, buff=0.15).align_to(self.x.brackets.get_top() + 0.15 * UP, DOWN)
        self.cache_box = VGroup(SurroundingRectangle(self.latent.body, color=HIGHLIGHT, buff=0.1))
        self.cache_box.add(text("the cache", size=26, color=HIGHLIGHT).next_to(self.cache_box, DOWN, buff=0.1))
        group = VGroup(row, self.titles, self.cache_box)
        self.built_scale = fit(group, 2 * HALF_WIDTH, TOP - BOTTOM, most=MOST)
        group.move_to((0, (TOP + BOTTOM) / 2, 0))
        self.rows("token", self.x)
        self.rows("key", dict(enumerate(self.x.row_labels)), self.latent)
        self.note = self._why_note()

    def _why_note(self) -> VGroup:
        """Alone, first: a multi-head model's cache a token, and what multi-head attention would keep here."""
        llama = self.label("the inference lecture's {}: {} KiB a token", TokenPart(LLAMA, 20),
                           value("llama", "kib_per_token"), size=30, color=MUTED)
        here = self.label("multi-head attention here: {} numbers a token",
                          value("latent_whole", "multi_head_cache_width"), size=30, color=INK)
        parts = self.label("{} heads, a key and a value of {} numbers each", value("latent_whole", "n_heads"),
                           value("latent_whole", "d_h"), size=26, color=MUTED)
        note = VGroup(llama, here, parts).arrange(DOWN, buff=0.3)
        fit(note, 2 * HALF_WIDTH, TOP - BOTTOM)
        return note.move_to((0, (TOP + BOTTOM) / 2, 0))

    # -- the beats ------------------------------------------------------------------------------------------------
    def _why(self) -> None:
        kib = self.fmt("llama", "kib_per_token")
        heads, d_h = self.fmt("latent_whole", "n_heads"), self.fmt("latent_whole", "d_h")
        width = self.fmt("latent_whole", "multi_head_cache_width")
        self.beat(f"The inference lecture's cache keeps every head's key and value of every token, in every layer: "
                  f"{kib} KiB a token for its multi-head model. With this lecture's {heads} heads of {d_h}, {width} "
                  "numbers a token.", FadeIn(self.note), run_time=1.0)

    def _embeddings(self) -> None:
        d_in = self.cite(size("d_in"))
        self.beat(f"MLA keeps less. Every token enters as its embedding, {d_in} numbers a row of X.",
                  FadeOut(self.note), FadeIn(self.x, self.titles[0]), run_time=1.0)

    def _down(self) -> None:
        d_c = self.fmt("latent_whole", "d_c")
        self.beat(f"One matrix, W_DKV, takes each row down to a latent of {d_c} numbers: c_KV = X W_DKV.",
                  FadeIn(self.signs, self.w_dkv, self.titles[1]), FadeIn(self.latent, self.titles[2]), run_time=1.5)

    def _cache(self) -> None:
        self.beat("These rows are what the decoder keeps of each token, in every layer: not the keys, not the "
                  "values.", FadeIn(self.cache_box), run_time=1.0)

    def _heads(self, drawn: int) -> VGroup:
        """The first ``drawn`` heads' keys and values, each grid titled with its head's number; a pair per head."""
        t, grids, titles = self.mla, [], []
        for head in range(drawn):
            for field, color, name in (("content_keys", KEY, "k_C,{}"), ("values", VALUE, "v{}")):
                grids.append(slice_grid(self, field, (head,), range(t.n_tokens), t.d_h, color=color, h_buff=0.2))
                titles.append(self.label(name, position(head, "latent_head"), size=26, color=color))
        self.up = grids
        row = titled_row(grids, titles, [0.25, 0.55] * drawn)
        return VGroup(*(VGroup(*row[2 * head:2 * head + 2]) for head in range(drawn)))

    def _up_layout(self) -> VGroup:
        """The latent with its row labels and box on the left under a title of its own, each head's keys and values
        on the right, the whole as large as the frame allows; the latent's place as a copy (``animate.become``)."""
        self.cached = text("cached: c_KV", size=26, color=HIGHLIGHT)
        left = VGroup(self.x.row_labels, self.latent, self.cache_box[0])
        target = left.copy().scale(1 / self.built_scale)  # as built
        target_latent = cast(NumberGrid, target[1])
        target[0].shift(RIGHT * (target_latent.get_left()[0] - 0.2 - target[0].get_right()[0]))
        drawn = self._drawn_heads(target.width, target.height + 0.5)
        self.heads = self._heads(drawn)
        if drawn < self.mla.n_heads:
            self.heads.add(self._others(drawn))
            self.heads[-1].next_to(self.heads[0], RIGHT, buff=0.5, aligned_edge=UP)
        self.cached.next_to(target_latent.brackets, UP, buff=0.15)
        self.heads.next_to(target, RIGHT, buff=GAP + 0.3)
        self.heads.shift(UP * (target_latent.cells[0][0].get_y() - self.up[0].cells[0][0].get_y()))
        whole = VGroup(target, self.cached, self.heads)
        fit(whole, 2 * HALF_WIDTH, TOP - BOTTOM - SUMMARY_ROOM, most=MOST)
        whole.move_to((0, (TOP + BOTTOM + SUMMARY_ROOM) / 2, 0))
        marks = {head: Rectangle(width=pair.width, height=0.1, stroke_width=0, fill_opacity=0).next_to(pair, UP, buff=0)
                 for head, pair in enumerate(self.heads[:drawn])}  # each head's columns: marks that draw nothing
        self.columns("head", marks, *self.up)
        return target

    def _others(self, drawn: int) -> VGroup:
        """What stands for the heads left out: they make theirs the same way."""
        last = self.mla.n_heads - 1
        if drawn == last:
            first = self.label("head {}: the same,", position(last, "latent_head"), size=26, color=MUTED)
        else:
            first = self.label("heads {} to {}: the same,", position(drawn, "latent_head"),
                               position(last, "latent_head"), size=26, color=MUTED)
        return VGroup(first, text("from its own columns", size=26, color=MUTED)).arrange(DOWN, aligned_edge=LEFT)

    def _drawn_heads(self, left: float, height: float) -> int:
        """Every head when their grids fit beside the latent (``left`` wide, ``height`` tall) at a size that reads,
        else the first: measured on unrecorded copies of the widest head's grids."""
        t = self.mla
        widest = 0.0
        for head in range(t.n_heads):
            for field in ("content_keys", "values"):
                entries = [[text(self.text_for(value("latent", field, head, i, c)), size=26) for c in range(t.d_h)]
                           for i in range(t.n_tokens)]
                widest = max(widest, NumberGrid(entries, h_buff=0.2, v_buff=0.06).width)
        width = left + GAP + 0.3 + t.n_heads * (2 * widest + 0.25) + (t.n_heads - 1) * 0.55
        return t.n_heads if min(2 * HALF_WIDTH / width, (TOP - BOTTOM - SUMMARY_ROOM) / height) >= READABLE else 1

    def _up(self) -> None:
        leaving = VGroup(self.x.body, self.x.brackets, self.signs, self.w_dkv, self.titles, self.cache_box[1])
        self.play(FadeOut(leaving), run_time=0.6)
        moved = VGroup(self.x.row_labels, self.latent, self.cache_box[0])
        target = self._up_layout()
        self.rows("key", dict(enumerate(self.x.row_labels)), *self.up)
        self.beat("Each head makes its keys and values from the latent when it needs them: k_C,i = c_KV W_UK,i and "
                  "v_i = c_KV W_UV,i, head i's own columns of W_UK and W_UV.", moved.animate.become(target),
                  FadeIn(self.cached), FadeIn(self.heads, shift=LEFT * 0.3), run_time=1.6)

    def _summary(self) -> None:
        summary = VGroup(self.label("kept: c_KV, {} numbers a token · made from it: {} (keys and values of {} heads)",
                                    value("latent_whole", "d_c"), value("latent_whole", "multi_head_cache_width"),
                                    value("latent_whole", "n_heads"), size=24, color=INK))
        fit(summary, 2 * HALF_WIDTH, SUMMARY_ROOM)
        summary.move_to((0, 0, 0)).align_to((0, BOTTOM, 0), DOWN)  # its foot on the band's: a gap over it
        width, latent = self.fmt("latent_whole", "multi_head_cache_width"), self.fmt("latent_whole", "d_c")
        self.beat(f"Multi-head attention would keep all of them: {width} numbers a token. The cache keeps the "
                  f"latent's {latent}, and the keys and values are made from it.", FadeIn(summary), wait=2.0)
