"""The formula softmax(Q Kᵀ/√d_k) V: the corner formula whose parts light up, and titles.

Our own fixed TeX only: no token or other user text ever goes through here.
"""

from __future__ import annotations

from manim import MathTex, VGroup

from scenes.kit.palette import CONTEXT, INK, KEY, QUERY, VALUE
from scenes.kit.text import drop_svg_paths

__all__ = ["AttentionFormula", "formula_title"]

_ROLE_COLORS = {"Q": QUERY, "K^{\\top}": KEY, "V": VALUE, "Z": CONTEXT}
_MADE: dict[tuple[tuple[str, ...], float], MathTex] = {}


def _math(parts: tuple[str, ...], font_size: float) -> MathTex:
    """``MathTex(*parts)`` in ink, made once per process and then copied (every scene draws the corner
    formula: parsing its SVG again cost more than a copy, in each scene of each build)."""
    key = (parts, font_size)
    if key not in _MADE:
        _MADE[key] = drop_svg_paths(MathTex(*parts, font_size=font_size, color=INK))
    return _MADE[key].copy()


class AttentionFormula(VGroup):
    """softmax(Q Kᵀ / √d_k) V, with each part addressable so a scene can light it up.

    Parts: ``softmax``, ``query``, ``key``, ``scale``, ``close``, ``value``.
    """

    PARTS = ("softmax", "query", "key", "scale", "close", "value")

    def __init__(self, *, font_size: float = 34) -> None:
        tex = _math((r"\mathrm{softmax}\Big(", "Q", r"K^{\top}", r"/\sqrt{d_k}", r"\Big)", "V"), font_size)
        super().__init__(tex)
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
    tex = _math(parts, font_size)
    for mob, part in zip(tex, parts, strict=True):
        mob.set_color(_ROLE_COLORS.get(part, INK))
    return tex
