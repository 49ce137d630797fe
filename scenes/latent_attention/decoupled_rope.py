"""Scene 3 of the latent-attention lecture: the decoupled RoPE, and the cache it leaves, ``[c_KV | k_R]``.

RoPE cannot turn the content keys: ``q_C · R_j (c_KV W_UK)`` puts key j's turn between the query and ``W_UK``, and
absorption needs ``W_UK`` next to the query. So position gets ``d_R`` numbers of its own: ``k_R = RoPE(x W_KR)``, one
for every head, cached as it is, and each head's ``q_R``. For the query and head 1, per key up to it: ``c_KV`` and
``k_R`` (the cache), ``q_C · k_C``, ``q_R · k_R`` and the weight, the softmax of their sum over ``√(d_h + d_R)``.
``attention_math.latent_attention``'s ``rope_keys``, ``content_scores``, ``rope_scores`` and ``weights``.
"""

from __future__ import annotations

import numpy as np
from manim import DOWN, LEFT, FadeIn, FadeOut, SurroundingRectangle, VGroup

from scenes.facts import TokenPart, position, value
from scenes.kit.layout import BOTTOM, HALF_WIDTH, TOP
from scenes.kit.palette import HIGHLIGHT, INK, KEY, MUTED, QUERY, WEIGHT
from scenes.kit.text import text
from scenes.latent_attention.setting import (
    KeyTable,
    LatentScene,
    fit,
    key_table,
    place_panel,
    register_latent,
)

__all__ = ["DecoupledRope"]

HEAD = 0  # the head the scene follows
MOST = 1.3  # the layout grows to this where it has room
BOX_ROOM = 0.15  # around the table: the cache's box


class DecoupledRope(LatentScene):
    """Why RoPE needs keys of its own; k_R beside c_KV in the cache; each score's two parts and the weights."""

    table: KeyTable
    panel: VGroup  # the obstacle, the query's q_R, the softmax, the cache
    box: SurroundingRectangle

    def construct(self) -> None:
        self.mla = register_latent(self)
        self.header("The decoupled RoPE: position in a key of its own", "query", "key", "softmax")
        self._layout()
        self._obstacle()
        self._rope_key()
        self._parts()
        self._weights()
        self._summary()

    # -- layout -------------------------------------------------------------------------------------------------
    def _panel(self) -> VGroup:
        """The panel's parts, each shown in its beat: the obstacle, the RoPE key, the query's q_R, the softmax, the
        cache."""
        q, whole = self.scenario.query, "latent_whole"
        obstacle = VGroup(text("absorbed:  q_C · (c_KV W_UK) = (q_C W_UKᵀ) · c_KV", size=26, color=INK),
                          text("RoPE on k_C:  q_C · R_j (c_KV W_UK)", size=26, color=KEY),
                          text("R_j turns key j by its position: one for every key,", size=26, color=MUTED),
                          text("between q_C and W_UK, so W_UK cannot move to the query", size=26, color=MUTED))
        key = VGroup(text("k_R = RoPE(x W_KR)", size=26, color=KEY),
                     self.label("{} numbers, every head's", value(whole, "d_rope"), size=26, color=KEY))
        who = self.label("head {}, query {}", position(HEAD, "latent_head"), TokenPart(self.scenario.tokens[q], 12),
                         size=26, color=INK)
        numbers = [value("latent", "rope_queries", HEAD, q, c) for c in range(self.mla.d_rope)]
        rope = self.label("q_R = ({})".format(", ".join(["{}"] * len(numbers))), *numbers, size=26, color=QUERY)
        softmax = VGroup(text("s = q_C·k_C + q_R·k_R", size=26, color=WEIGHT),
                         self.label("w = softmax(s / √({}+{}))", value(whole, "d_h"), value(whole, "d_rope"), size=26,
                                    color=WEIGHT))
        terms = [value(whole, "d_c"), value(whole, "d_rope")]
        sign = self.equals(value(whole, "cache_width"), terms)
        cache = VGroup(text("the cache: [c_KV | k_R]", size=26, color=HIGHLIGHT),
                       self.label("{} + {} " + sign + " {} numbers a token", *terms, value(whole, "cache_width"),
                                  size=26, color=HIGHLIGHT),
                       self.label("(multi-head: {})", value(whole, "multi_head_cache_width"), size=26, color=HIGHLIGHT))
        parts = VGroup(obstacle, key, VGroup(who, rope), softmax, cache)
        for part in parts:
            part.arrange(DOWN, buff=0.12, aligned_edge=LEFT)
        return parts

    def _layout(self) -> None:
        t, q = self.mla, self.scenario.query
        columns = [
            ("latent", (), t.d_c, HIGHLIGHT, text("c_KV", size=26, color=HIGHLIGHT)),
            ("rope_keys", (), t.d_rope, KEY, text("k_R", size=26, color=KEY)),
            ("content_scores", (HEAD, q), 0, WEIGHT, text("q_C·k_C", size=26, color=WEIGHT)),
            ("rope_scores", (HEAD, q), 0, WEIGHT, text("q_R·k_R", size=26, color=WEIGHT)),
            ("weights", (HEAD, q), 0, WEIGHT, text("weight", size=26, color=WEIGHT)),
        ]
        self.table = key_table(self, columns, range(q + 1))
        self.panel = self._panel()
        self.obstacle = self.panel[0].scale(1.15).move_to((0, (TOP + BOTTOM) / 2, 0))
        whole = place_panel(self.table.group, self.table.headers, list(self.panel[1:]), width=2 * HALF_WIDTH,
                            height=TOP - BOTTOM - 2 * BOX_ROOM)
        fit(whole, 2 * HALF_WIDTH, TOP - BOTTOM - 2 * BOX_ROOM, most=MOST)
        whole.move_to((0, (TOP + BOTTOM) / 2, 0))
        self.box = self.table.box(0, 1)

    # -- the beats ------------------------------------------------------------------------------------------------
    def _obstacle(self) -> None:
        self.beat("Attention needs positions, but RoPE on k_C would turn each key by its own R_j, between the query "
                  "and W_UK: a different matrix for every key, so W_UK could not be absorbed.",
                  FadeIn(self.obstacle), run_time=1.0)

    def _rope_key(self) -> None:
        d_rope = self.fmt("latent_whole", "d_rope")
        self.beat(f"So MLA gives position {d_rope} numbers of their own: k_R = RoPE(x W_KR), one key for all the "
                  "heads, kept in the cache beside the latent.", FadeOut(self.obstacle), FadeIn(self.panel[1]),
                  FadeIn(self.table.labels, self.table.column(0)),
                  FadeIn(self.table.column(1), shift=LEFT * 0.2), run_time=1.5)

    def _parts(self) -> None:
        head = self.cite(position(HEAD, "latent_head"))
        self.beat(f"Head {head} turns its own query part the same way, q_R; a score is q_C · k_C, from the latent, "
                  "plus q_R · k_R.", FadeIn(self.panel[2]), FadeIn(self.table.column(2)), FadeIn(self.table.column(3)),
                  run_time=1.5)

    def _weights(self) -> None:
        q = self.scenario.query
        head, d_h, d_rope = (self.cite(position(HEAD, "latent_head")), self.fmt("latent_whole", "d_h"),
                             self.fmt("latent_whole", "d_rope"))
        query = self.quote(q, "query")
        top = int(np.argmax(self.mla.weights[HEAD, q, :q + 1]))
        key = self.quote(top, "key")
        weight = self.fmt("latent", "weights", HEAD, q, top)
        self.beat(f"Head {head} scales the sum by √({d_h} + {d_rope}) and takes the softmax over the keys up to "
                  f"{query}; the most goes to {key}, {weight}.", FadeIn(self.panel[3]), FadeIn(self.table.column(4)),
                  FadeIn(self.table.lit(4, top)),
                  run_time=1.5)

    def _summary(self) -> None:
        sign = self.relations[-1].sign  # the panel's d_c + d_R = cache width
        d_c, d_rope = (self.fmt("latent_whole", "d_c"), self.fmt("latent_whole", "d_rope"))
        width, heads = self.fmt("latent_whole", "cache_width"), self.fmt("latent_whole", "multi_head_cache_width")
        self.beat(f"So a token's cache is [c_KV | k_R]: {d_c} + {d_rope} {sign} {width} numbers in each layer, where "
                  f"the heads' keys and values would be {heads}.", FadeIn(self.box), FadeIn(self.panel[4]), wait=2.0)

