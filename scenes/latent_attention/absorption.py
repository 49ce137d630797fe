"""Scene 2 of the latent-attention lecture: absorption, the same content scores with no key made.

For the query and head 1: the cached latents ``c_KV`` of the keys up to the query, the keys made the usual way
(``k_C = c_KV W_UK``) and their scores ``q_C · k_C``; then ``W_UK`` moved to the query once, ``q_A = q_C W_UKᵀ``, and
its dot product with each latent, ``q_A · c_KV``: the same numbers side by side. ``attention_math``'s
``content_scores`` and ``absorbed_content_scores``, computed each its own way.
"""

from __future__ import annotations

from manim import DOWN, LEFT, FadeIn, SurroundingRectangle, VGroup

from scenes.facts import TokenPart, position, value
from scenes.kit.layout import BOTTOM, HALF_WIDTH, TOP
from scenes.kit.palette import HIGHLIGHT, INK, KEY, QUERY, WEIGHT
from scenes.kit.text import text
from scenes.latent_attention.setting import (
    KeyTable,
    LatentScene,
    fit,
    key_table,
    place_panel,
    register_latent,
)

__all__ = ["Absorption"]

HEAD = 0  # the head the scene follows
MOST = 1.3  # the layout grows to this where it has room
BOX_ROOM = 0.15  # around the table: the scores' box


class Absorption(LatentScene):
    """q_C · k_C and (q_C W_UKᵀ) · c_KV for every key up to the query: equal, and the second needs no key."""

    table: KeyTable
    panel: VGroup  # the query's head and token, q_C, q_A, the identity
    box: SurroundingRectangle

    def construct(self) -> None:
        self.mla = register_latent(self)
        self.header("Absorption: the scores without the keys", "query", "key")
        self._layout()
        self._query()
        self._keys()
        self._absorbed()
        self._same()
        self._summary()

    # -- layout -------------------------------------------------------------------------------------------------
    def _vector(self, template: str, field: str) -> VGroup:
        """``template`` with head 1's ``field`` for the query, its numbers in parentheses."""
        q, width = self.scenario.query, getattr(self.mla, field).shape[-1]
        numbers = [value("latent", field, HEAD, q, c) for c in range(width)]
        return VGroup(self.label(template.format(", ".join(["{}"] * width)), *numbers, size=26, color=QUERY))

    def _panel(self) -> VGroup:
        q = self.scenario.query
        who = self.label("head {}, query {}", position(HEAD, "latent_head"), TokenPart(self.scenario.tokens[q], 12),
                         size=26, color=INK)
        content = self._vector("q_C = ({})", "content_queries")
        absorbed = VGroup(text("q_A = q_C W_UKᵀ", size=26, color=QUERY), self._vector("= ({})", "absorbed_queries"))
        absorbed.arrange(DOWN, buff=0.12, aligned_edge=LEFT)
        identity = VGroup(text("q_C · (c_KV W_UK)", size=26, color=WEIGHT),
                          text("= (q_C W_UKᵀ) · c_KV", size=26, color=WEIGHT)).arrange(DOWN, aligned_edge=LEFT)
        return VGroup(VGroup(who, content).arrange(DOWN, buff=0.12, aligned_edge=LEFT), absorbed, identity)

    def _layout(self) -> None:
        t, q = self.mla, self.scenario.query
        columns = [
            ("latent", (), t.d_c, HIGHLIGHT, text("c_KV, cached", size=26, color=HIGHLIGHT)),
            ("content_keys", (HEAD,), t.d_h, KEY, text("k_C = c_KV W_UK", size=26, color=KEY)),
            ("content_scores", (HEAD, q), 0, WEIGHT, text("q_C · k_C", size=26, color=WEIGHT)),
            ("absorbed_content_scores", (HEAD, q), 0, WEIGHT, text("q_A · c_KV", size=26, color=WEIGHT)),
        ]
        self.table = key_table(self, columns, range(q + 1))
        self.panel = self._panel()
        whole = place_panel(self.table.group, self.table.headers, list(self.panel), width=2 * HALF_WIDTH,
                            height=TOP - BOTTOM - 2 * BOX_ROOM)
        fit(whole, 2 * HALF_WIDTH, TOP - BOTTOM - 2 * BOX_ROOM, most=MOST)
        whole.move_to((0, (TOP + BOTTOM) / 2, 0))
        self.box = self.table.box(2, 3)

    # -- the beats ------------------------------------------------------------------------------------------------
    def _query(self) -> None:
        head, query = self.cite(position(HEAD, "latent_head")), self.quote(self.scenario.query, "query")
        self.beat(f"Head {head}'s content query for {query}, and the latents the cache holds for it and every token "
                  "before it.", FadeIn(self.panel[0], self.table.labels, self.table.column(0)),
                  run_time=1.2)

    def _keys(self) -> None:
        self.beat("The usual way: make each key from its latent, k_C = c_KV W_UK, then take q_C · k_C.",
                  FadeIn(self.table.column(1)), FadeIn(self.table.column(2)), run_time=1.5)

    def _absorbed(self) -> None:
        self.beat("Or move W_UK to the query's side, once: q_A = q_C W_UKᵀ has as many numbers as a latent.",
                  FadeIn(self.panel[1], shift=LEFT * 0.2), run_time=1.0)

    def _same(self) -> None:
        q = self.scenario.query
        key = self.quote(q, "key")
        score = self.fmt("latent", "absorbed_content_scores", HEAD, q, q)
        self.beat(f"Its dot product with each cached latent gives the same scores: for {key}, {score} both ways. "
                  "No key was made.", FadeIn(self.table.column(3)), FadeIn(self.box), run_time=1.5)

    def _summary(self) -> None:
        self.beat("So W_UK is absorbed into the query, and W_UV into W_O the same way: the cache needs only the "
                  "latents.", FadeIn(self.panel[2]), wait=2.0)

