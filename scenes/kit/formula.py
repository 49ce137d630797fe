"""The formula softmax(Q Kᵀ/√d_k) V: the corner formula whose parts light up, and titles.

Our own fixed TeX only: no token or other user text ever goes through here.
"""

from __future__ import annotations

from manim import MathTex, VGroup

from scenes.kit.palette import CONTEXT, INK, KEY, QUERY, VALUE
from scenes.kit.text import drop_svg_paths

__all__ = ["AttentionFormula", "formula_title"]

_ROLE_COLORS = {"Q": QUERY, "K^{\\top}": KEY, "V": VALUE, "Z": CONTEXT}


class AttentionFormula(VGroup):
    """softmax(Q Kᵀ / √d_k) V, with each part addressable so a scene can light it up.

    Parts: ``softmax``, ``query``, ``key``, ``scale``, ``close``, ``value``.
    """

    PARTS = ("softmax", "query", "key", "scale", "close", "value")

    def __init__(self, *, font_size: float = 34) -> None:
        tex = MathTex(
            r"\mathrm{softmax}\Big(", "Q", r"K^{\top}", r"/\sqrt{d_k}", r"\Big)", "V",
            font_size=font_size, color=INK,
        )
        super().__init__(drop_svg_paths(tex))
        self.tex = tex
        self.part = dict(zip(self.PARTS, tex, strict=True))
        self.part["query"].set_color(QUERY)
        self.part["key"].set_color(KEY)
        self.part["value"].set_color(VALUE)

    def light(self, *focus: str, dim: float = 0.35) -> AttentionFormula:
        """Dim every part but ``focus`` (all lit when ``focus`` is empty); returns itself."""
        for name, part in self.part.items():
            part.set_opacity(1.0 if not focus or name in focus else dim)
        return self


def formula_title(*parts: str, font_size: float = 34) -> MathTex:
    """A fixed formula over a matrix, Q, Kᵀ, V, Z in their role's colours."""
    tex = MathTex(*parts, font_size=font_size, color=INK)
    for mob, part in zip(tex, parts, strict=True):
        mob.set_color(_ROLE_COLORS.get(part, INK))
    return drop_svg_paths(tex)
