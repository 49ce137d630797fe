"""Scene 1 of the flash-attention lecture: where the n × n matrix goes, slow memory or nowhere.

Two memories side by side: the GPU's large, slow memory (HBM), holding Q, K and V, and its small, fast
on-chip memory (SRAM). The plain route (FlashAttention's Algorithm 0) computes the scores S = QKᵀ, writes
all n × n of them to slow memory, reads them back for the softmax, writes the weights P, and reads them
again for P·V. FlashAttention (Algorithm 1) brings a block of keys and values and a block of queries into
SRAM, computes that tile of scores there, folds it into each query's running m, ℓ and O, and moves on: the
n × n matrix is never stored. Sizes only: n and d from the scenario, the blocks from
``scenes.flash_attention.FLASH_BLOCKS`` (source ``traffic``: ``attention_math.memory_traffic``).
"""

from __future__ import annotations

from manim import DOWN, LEFT, RIGHT, UP, Arrow, FadeIn, Line, Rectangle, RoundedRectangle, VGroup, VMobject

from attention_math import memory_traffic
from scenes.base import READING_PACE, ExplainerScene
from scenes.facts import size, value
from scenes.flash_attention import FLASH_BLOCKS
from scenes.kit.layout import BOTTOM, HALF_WIDTH, TOP
from scenes.kit.palette import HIGHLIGHT, INK, KEY, MUTED, QUERY, VALUE, WEIGHT
from scenes.kit.text import text

__all__ = ["MemoryRoutes"]

SLOW_WIDTH = 7.6  # the slow memory's box
FAST_WIDTH = 3.6  # the on-chip memory's box
LABEL = 24  # type size of the boxes' names and of the matrices' names
MATRIX = 1.6  # the side of the n × n matrices drawn in slow memory
SUMMARY_ROOM = 1.05  # under the two memories: the last frame's two lines


def _matrix(rows: int, columns: int, side: float, color: str, fill: float = 0.35) -> VGroup:
    """A grid of ``rows × columns`` cells, ``side`` tall (no numbers: the picture of a matrix's size)."""
    cell = side / max(rows, columns)
    grid = VGroup(*(Rectangle(width=cell * 0.9, height=cell * 0.9, stroke_width=0, fill_color=color,
                              fill_opacity=fill).move_to((j * cell, -i * cell, 0))
                    for i in range(rows) for j in range(columns)))
    return grid


class MemoryRoutes(ExplainerScene):
    """Slow and fast memory: the plain route writes S and P (n × n) to slow memory; FlashAttention never does."""

    reading_pace = READING_PACE

    slow: VGroup  # the slow memory's box and name
    fast: VGroup  # the on-chip memory's box and name
    summary: VGroup  # the last frame's two lines

    def construct(self) -> None:
        s = self.scenario
        self.add_source("traffic", memory_traffic(s.n_tokens, s.d_k, block_size=FLASH_BLOCKS[0],
                                                  query_block_size=FLASH_BLOCKS[1]), 0)
        self.header("Slow memory and fast memory", "softmax")
        self._memories()
        self._plain_route()
        self._tiled_route()
        self._summary()

    # -- the picture --------------------------------------------------------------------------------------
    def _box(self, name: str, note: str, width: float, height: float, color: str) -> VGroup:
        box = RoundedRectangle(width=width, height=height, corner_radius=0.15, stroke_color=color, stroke_width=3)
        title = VGroup(text(name, size=28, color=color), text(note, size=LABEL - 2, color=MUTED)).arrange(
            RIGHT, buff=0.25, aligned_edge=DOWN)
        return VGroup(box, title.next_to(box.get_top(), DOWN, buff=0.18))

    def _operand(self, name: str, rows: int, columns: int, color: str) -> VGroup:
        """Q, K or V in slow memory: its name and shape over a block of n × d cells."""
        s = self.scenario
        label = self.label(name + " {} × {}", size("n_tokens"), size("d_k" if name != "V" else "d_v"), size=LABEL,
                           color=color)
        side = MATRIX * 0.9
        return VGroup(label, _matrix(rows, columns, side * max(rows, columns) / s.n_tokens, color)).arrange(
            DOWN, buff=0.15)

    def _memories(self) -> None:
        s = self.scenario
        height = TOP - BOTTOM - SUMMARY_ROOM
        middle = TOP + 0.1 - height / 2
        self.slow = self._box("HBM", "slow, large", SLOW_WIDTH, height, MUTED)
        self.slow.move_to((-HALF_WIDTH + SLOW_WIDTH / 2, middle, 0))
        self.fast = self._box("SRAM", "fast, small", FAST_WIDTH, height, HIGHLIGHT)
        self.fast.move_to((HALF_WIDTH - FAST_WIDTH / 2, middle, 0))
        q, k, v = (self._operand(name, s.n_tokens, width, color)
                   for name, width, color in (("Q", s.d_k, QUERY), ("K", s.d_k, KEY), ("V", s.d_v, VALUE)))
        self.operands = VGroup(q, k, v).arrange(RIGHT, buff=0.5, aligned_edge=UP)
        self.operands.next_to(self.slow[1], DOWN, buff=0.35).set_x(self.slow.get_x())
        self.beat("Q, K and V wait in the GPU's large, slow memory (HBM); only a little fits in its fast on-chip "
                  "memory (SRAM), where the arithmetic happens.",
                  FadeIn(self.slow, self.fast), FadeIn(self.operands, shift=DOWN * 0.1), run_time=1.4, wait=1.4)

    def _plain_route(self) -> None:
        s = self.scenario
        n = s.n_tokens
        side = max(1.0, min(MATRIX, self.operands.get_bottom()[1] - self.slow[0].get_bottom()[1] - 0.9))
        scores = VGroup(self.label("S {} × {}", size("n_tokens"), size("n_tokens"), size=LABEL, color=INK),
                        _matrix(n, n, side, INK, 0.3)).arrange(DOWN, buff=0.12)
        weights = VGroup(self.label("P {} × {}", size("n_tokens"), size("n_tokens"), size=LABEL, color=WEIGHT),
                         _matrix(n, n, side, WEIGHT, 0.45)).arrange(DOWN, buff=0.12)
        self.plain = VGroup(scores, weights).arrange(RIGHT, buff=0.7)
        self.plain.next_to(self.operands, DOWN, buff=0.35).set_x(self.slow.get_x())
        write = Arrow(self.fast[0].get_left() + DOWN * 1.0, (self.slow[0].get_right()[0], self.plain.get_y() - 0.2, 0),
                      color=HIGHLIGHT, buff=0.1, stroke_width=4)
        read = Arrow((self.slow[0].get_right()[0], self.operands.get_y(), 0), self.fast[0].get_left() + UP * 0.6,
                     color=MUTED, buff=0.1, stroke_width=4)
        self.arrows = VGroup(read, write, text("read", size=LABEL, color=MUTED).next_to(read, UP, buff=0.05),
                             text("write", size=LABEL, color=HIGHLIGHT).next_to(write, DOWN, buff=0.05))
        said = (f"The plain route computes the scores S = QKᵀ and writes all {self.cite(size('n_tokens'))} × "
                f"{self.cite(size('n_tokens'))} of them to slow memory, reads them back for the softmax, writes the "
                "weights P, and reads them again to multiply by V.")
        self.beat(said, FadeIn(self.arrows), FadeIn(scores, shift=LEFT * 0.2), FadeIn(weights, shift=LEFT * 0.2),
                  run_time=1.6, wait=2.2)

    def _tiled_route(self) -> None:
        s, (keys, queries) = self.scenario, FLASH_BLOCKS
        fast = self.fast[0]
        # the blocks' cells as large as the box holds with its four lines of words (never the words made smaller)
        cell = min(0.45, (FAST_WIDTH - 1.2) / (s.d_k + s.d_v),
                   (fast.height - self.fast[1].height - 0.5 - 4 * 0.36 - 3 * 0.3) / (keys + 2 * queries))
        k_block = VGroup(self.label("K, V {} keys", value("traffic", "block_size"), size=LABEL - 2, color=KEY),
                         _matrix(keys, s.d_k + s.d_v, cell * max(keys, s.d_k + s.d_v), KEY, 0.5)).arrange(
            DOWN, buff=0.1)
        q_block = VGroup(self.label("Q {} queries", value("traffic", "query_block_size"), size=LABEL - 2,
                                    color=QUERY), _matrix(queries, s.d_k, cell * max(queries, s.d_k), QUERY, 0.5)
                         ).arrange(DOWN, buff=0.1)
        tile = VGroup(text("a tile of S", size=LABEL - 2, color=INK),
                      _matrix(queries, keys, cell * max(queries, keys), INK, 0.4)).arrange(DOWN, buff=0.1)
        stats = text("m, ℓ, O of its queries", size=LABEL - 2, color=WEIGHT)
        self.tiled = VGroup(k_block, q_block, tile, stats).arrange(DOWN, buff=0.3)
        self.tiled.move_to(fast).shift(DOWN * (self.fast[1].height / 2 + 0.12))
        cross = VGroup(*(_cross(matrix) for matrix in self.plain))
        said = ("FlashAttention brings a block of keys and values and a block of queries into SRAM, computes that tile "
                "of scores there, folds it into each query's running m, ℓ and O, and moves on: S and P are never "
                "written.")
        self.beat(said, FadeIn(self.tiled, shift=RIGHT * 0.2), FadeIn(cross), self.plain.animate.set_opacity(0.3),
                  self.arrows[1].animate.set_opacity(0.15), self.arrows[3].animate.set_opacity(0.15),
                  run_time=1.6, wait=2.4)
        self.cross = cross

    def _summary(self) -> None:
        lines = VGroup(
            text("plain: S and P, n × n each, through slow memory", size=LABEL, color=INK),
            text("FlashAttention: blocks of Q, K, V and O, ℓ, m; never S or P", size=LABEL, color=WEIGHT),
        ).arrange(DOWN, buff=0.15, aligned_edge=LEFT)
        lines.move_to((0, BOTTOM + 0.1 + lines.height / 2, 0))
        self.summary = lines
        self.beat("Memory traffic, not arithmetic, is what costs time here: the tiled route does the same sums and "
                  "skips the n × n round trips.", FadeIn(lines, shift=UP * 0.1), run_time=1.2, wait=2.2)


def _cross(matrix: VMobject) -> VGroup:
    """Two strokes across a matrix (its name, then its cells): never written."""
    box = matrix.submobjects[1]
    return VGroup(Line(box.get_corner(UP + LEFT), box.get_corner(DOWN + RIGHT), color=HIGHLIGHT, stroke_width=5),
                  Line(box.get_corner(DOWN + LEFT), box.get_corner(UP + RIGHT), color=HIGHLIGHT, stroke_width=5))
