"""Scene 2 of the latent-attention lecture: absorption, the same content scores with no key made.

For the query and head 1: the cached latents ``c_KV`` of the keys up to the query, the keys made the usual way
(``k_C = c_KV W_UK``) and their scores ``q_C · k_C``; then ``W_UK`` moved to the query once (``q_C W_UKᵀ``) and its
dot product with each latent, ``(q_C W_UKᵀ) · c_KV``: the same numbers side by side. ``attention_math``'s
``content_scores`` and ``absorbed_content_scores``, computed each its own way.
"""

from __future__ import annotations

from manim import DOWN, FadeIn, SurroundingRectangle, VGroup

from attention_math import Scenario
from scenes.base import READING_PACE, ExplainerScene
from scenes.facts import TokenPart, position, value
from scenes.kit.layout import BOTTOM, HALF_WIDTH, TOP
from scenes.kit.palette import HIGHLIGHT, INK, KEY, QUERY, WEIGHT
from scenes.kit.text import text
from scenes.latent_attention.setting import KeyTable, check_latent, fit, key_table, register_latent

__all__ = ["Absorption"]

HEAD = 0  # the head the scene follows
LINE_ROOM = 0.5  # under the table: the identity


class Absorption(ExplainerScene):
    """q_C · k_C and (q_C W_UKᵀ) · c_KV for every key up to the query: equal, and the second needs no key."""

    reading_pace = READING_PACE

    table: KeyTable
    query_line: VGroup
    absorbed_line: VGroup
    identity: VGroup

    @classmethod
    def check_scenario(cls, scenario: Scenario) -> Scenario:
        return check_latent(scenario)

    def construct(self) -> None:
        self.trace = register_latent(self)
        self.header("Absorption: the scores without the keys", "query", "key")
        self._layout()
        self._query()
        self._keys()
        self._absorbed()
        self._same()
        self._summary()

    # -- layout -------------------------------------------------------------------------------------------------
    def _vector(self, template: str, field: str, *parts: object, color: str) -> VGroup:
        q, width = self.scenario.query, getattr(self.trace, field).shape[-1]
        numbers = [value("latent", field, HEAD, q, c) for c in range(width)]
        return VGroup(self.label(template.format(*(["{}"] * len(parts)), ", ".join(["{}"] * width)), *parts,
                                 *numbers, size=26, color=color))

    def _layout(self) -> None:
        t, q = self.trace, self.scenario.query
        head = position(HEAD, "latent_head")
        token = TokenPart(self.scenario.tokens[q], 10)
        self.query_line = self._vector("q_C of {} (head {}) = ({})", "content_queries", token, head, color=QUERY)
        self.absorbed_line = self._vector("q_C W_UKᵀ = ({})", "absorbed_queries", color=QUERY)
        columns = [
            ("latent", (), t.d_c, HIGHLIGHT, text("c_KV, cached", size=24, color=HIGHLIGHT)),
            ("content_keys", (HEAD,), t.d_h, KEY, text("k_C = c_KV W_UK", size=24, color=KEY)),
            ("content_scores", (HEAD, q), 0, WEIGHT, text("q_C · k_C", size=24, color=WEIGHT)),
            ("absorbed_content_scores", (HEAD, q), 0, WEIGHT, text("(q_C W_UKᵀ) · c_KV", size=24, color=WEIGHT)),
        ]
        self.table = key_table(self, columns, range(q + 1))
        self.identity = VGroup(text("q_C · (c_KV W_UK) = (q_C W_UKᵀ) · c_KV", size=28, color=INK))
        lines = VGroup(self.query_line, self.absorbed_line).arrange(DOWN, buff=0.15, aligned_edge=0 * DOWN)
        whole = VGroup(lines, self.table.group).arrange(DOWN, buff=0.35)
        fit(whole, 2 * HALF_WIDTH, TOP - BOTTOM - LINE_ROOM)
        whole.move_to((0, TOP - whole.height / 2, 0))
        self.identity.move_to((0, BOTTOM + 0.2, 0))

    # -- the beats ------------------------------------------------------------------------------------------------
    def _query(self) -> None:
        head, query = self.cite(position(HEAD, "latent_head")), self.quote(self.scenario.query, "query")
        self.beat(f"Head {head}'s content query for {query}, and the latents the cache holds for it and every token "
                  "before it.", FadeIn(self.query_line, self.table.labels, self.table.column(0)), run_time=1.2)

    def _keys(self) -> None:
        self.beat("The usual way: make each key from its latent, k_C = c_KV W_UK, then take q_C · k_C.",
                  FadeIn(self.table.column(1)), FadeIn(self.table.column(2)), run_time=1.5)

    def _absorbed(self) -> None:
        self.beat("Or move W_UK to the query's side, once: q_C W_UKᵀ has as many numbers as a latent.",
                  FadeIn(self.absorbed_line), run_time=1.0)

    def _same(self) -> None:
        q = self.scenario.query
        scores = VGroup(self.table.column(2), self.table.column(3))
        self.box = SurroundingRectangle(scores, color=HIGHLIGHT, buff=0.12)
        key = self.quote(q, "key")
        score = self.fmt("latent", "absorbed_content_scores", HEAD, q, q)
        self.beat(f"Its dot product with each cached latent gives the same scores: for {key}, {score} both ways. "
                  "No key was made.", FadeIn(self.table.column(3)), FadeIn(self.box), run_time=1.5)

    def _summary(self) -> None:
        self.beat("So the cache keeps only the latents: W_UK is absorbed into the query, and W_UV into W_O the same "
                  "way.", FadeIn(self.identity), wait=2.0)
