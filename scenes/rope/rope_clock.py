"""Scene 3 of the rope lecture: each pair of q and k is a plane, and RoPE turns its arrows like clock hands.

The query of the lecture's token (position m) and the key of the token before it (position n; after it
for the first token), pair by pair: each pair an arrow in a plane of its own, the fast pair (θ = 1 radian
per position) beside the slow one (θ = base^(−2i/d_k)). Both arrows turn by their position times θ_i;
the angle between them fixes the pair's share of the score, |q_i| |k_i| cos(angle), and the shares add up
to the score (R_m q)·(R_n k). Then every position moves on by the same amount (the sentence's length, as
if it came a second time): both hands turn alike, the angle, the shares and the score stay. Last, the
"rotate half" layout (dimension i with i + d_k/2): its score is the paper's pairs' score of q and k with
the dimensions listed in another order. Every angle and share is ``attention_math.rope_clock``'s.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from manim import (
    DOWN,
    LEFT,
    RIGHT,
    UP,
    Arc,
    Arrow,
    Circle,
    FadeIn,
    FadeOut,
    Line,
    Mobject,
    Rectangle,
    ReplacementTransform,
    UpdateFromFunc,
    VGroup,
    VMobject,
)

from attention_math import RopeClock, rope_attention, rope_clock, rope_pair_dimensions
from scenes.base import READING_PACE
from scenes.facts import TokenPart, position, size, value
from scenes.kit.palette import INK, KEY, MUTED, QUERY, WEIGHT
from scenes.kit.text import text
from scenes.kit.vectors import arrow
from scenes.rope.turning import Turning

__all__ = ["ClockHands"]

SIZE = 22  # every line of words and numbers
RADIUS = 1.25  # a plane's circle: the longer of its two arrows reaches it
PLANE_Y = 0.1  # the planes' centres
TITLE_Y = 2.0  # the planes' titles
POSITIONS_Y = 2.5  # where the two tokens stand
SIDE_TOP = 0.7  # the first line beside a plane
SIDE_STEP = 0.45
SCORE_Y = -2.1  # the score, under the planes
LAYOUT_Y = -2.75  # the other layout, under the score
TAG = 0.32  # how far past its tip an arrow's name stands
PLANE_LEFT = 1.7  # a plane's centre left of its column's, its lines to the right


@dataclass
class _Plane:
    """One pair's plane: where it stands, its arrows, their names, the arc between them, its lines."""

    pair: int
    centre: np.ndarray
    unit: float
    arrows: list[Arrow] = field(default_factory=list)  # the query's, then the key's
    tags: list[VMobject] = field(default_factory=list)
    arc: VMobject = field(default_factory=VMobject)
    lines: list[VMobject] = field(default_factory=list)  # beside the plane: q's turn, k's turn, angle, share

    def c2p(self, x: float, y: float = 0.0, *_: float) -> np.ndarray:
        """The screen point of ``(x, y)`` in this pair's plane."""
        return self.centre + self.unit * np.array([x, y, 0.0])


class ClockHands(Turning):
    """The query's and a key's pairs as clock hands, turning with position; a shift keeps the score."""

    reading_pace = READING_PACE

    planes: list[_Plane]  # the geometry tests look at them
    positions_line: VMobject
    score_line: VMobject
    layout_lines: VGroup

    @property
    def key(self) -> int:
        """The key the clock shows: the token before the query (after it, for the first token)."""
        return self.scenario.query - 1 if self.scenario.query > 0 else 1

    def construct(self) -> None:
        one = self.scenario.heads[0] if self.scenario.w_out is not None else self.scenario
        rope = rope_attention(one.embeddings, one.w_query, one.w_key, one.w_value, scaled=self.scenario.scaled)
        q, k, precision = self.scenario.query, self.key, self.scenario.precision
        m, n, shift = rope.positions[q], rope.positions[k], float(self.scenario.n_tokens)
        order = rope_pair_dimensions(rope.d_k, "half").ravel()  # lists the half layout's pairs side by side
        clocks = {
            "clock": rope_clock(rope.queries[q], rope.keys[k], m, n),
            "shifted": rope_clock(rope.queries[q], rope.keys[k], m + shift, n + shift),
            "half": rope_clock(rope.queries[q], rope.keys[k], m, n, layout="half"),
            "reordered": rope_clock(rope.queries[q][order], rope.keys[k][order], m, n),
        }
        for name, clock in clocks.items():
            self.add_source(name, clock, precision)
        self.add_source("clock_whole", clocks["clock"], 0)  # positions are whole numbers
        self.add_source("shifted_whole", clocks["shifted"], 0)
        self.header("RoPE turns q and k like clock hands", "query", "key")
        self.planes = self._layout(clocks["clock"])
        self._arrows()
        self._turn()
        self._between()
        self._shift()
        self._layouts(order)

    # -- layout -------------------------------------------------------------------------------------------
    def _layout(self, clock: RopeClock) -> list[_Plane]:
        """A plane per pair, side by side (the fast pair left); its column registered for the pair's numbers."""
        n_pairs = self.scenario.d_k // 2
        xs = [-3.4, 3.4] if n_pairs == 2 else [-2.3]  # one pair: its lines in the middle, the frame filled
        planes = []
        for i, x in enumerate(xs):
            longest = max(float(np.linalg.norm(clock.query_pairs[i])), float(np.linalg.norm(clock.key_pairs[i])), 1e-9)
            planes.append(_Plane(i, np.array([x - PLANE_LEFT, PLANE_Y, 0.0]), RADIUS / longest))
        top, bottom = TITLE_Y + 0.2, SIDE_TOP - 3 * SIDE_STEP - 0.3  # the titles down to the lines beside
        columns = {p.pair: Rectangle(width=6.6 if n_pairs == 2 else 9.0, height=top - bottom, stroke_width=0,
                                     fill_opacity=0).move_to((xs[p.pair], (top + bottom) / 2, 0)) for p in planes}
        self.add(*columns.values())  # they draw nothing: the columns' marks, on screen for the checks
        self.columns("pair", columns)
        return planes

    def _hand(self, plane: _Plane, source: str, role: int, *, turned: bool = True) -> Arrow:
        """The query's (role 0) or the key's (role 1) arrow of ``source``'s pair (turned or not), plotted at its tip."""
        name = (("query_pairs", "key_pairs"), ("turned_query_pairs", "turned_key_pairs"))[turned][role]
        facts = (value(source, name, plane.pair, 0), value(source, name, plane.pair, 1))
        tip = plane.c2p(*(self.value_of(f) for f in facts))
        hand = arrow(plane.centre, tip, color=(QUERY, KEY)[role], width=5, tip=0.2)
        return self.plot(hand, plane, *facts, anchor="end")

    def _arc(self, plane: _Plane, source: str) -> Arc:
        """The angle from the query's hand to the key's."""
        obj, _ = self.sources[source]
        shorter = min(float(np.linalg.norm(hand.get_end() - plane.centre)) for hand in plane.arrows)
        return Arc(radius=float(np.clip(0.6 * shorter, 0.25, 0.45)), start_angle=float(obj.query_hands[plane.pair]),
                   angle=float(obj.angles_between[plane.pair]), arc_center=plane.centre, color=WEIGHT, stroke_width=4)

    @staticmethod
    def _place_tag(tag: Mobject, hand: Arrow, other: Arrow, centre: np.ndarray) -> Mobject:
        """An arrow's name by its tip, where it stands farthest from both arrows (outward on a tie): never on
        the other arrow, and nearer its own tip than the other's even when the two hands nearly meet."""
        tip, other_tip = hand.get_end()[:2], other.get_end()[:2]
        outward = tip - centre[:2]
        outward = outward / max(float(np.linalg.norm(outward)), 1e-6)

        def clearance(spot: np.ndarray) -> float:
            return min(_distance_to_segment(spot, centre[:2], other_tip),
                       _distance_to_segment(spot, centre[:2], tip) + 0.12) + 0.05 * float(outward @ (spot - tip))

        spots = [tip + TAG * np.array([np.cos(a), np.sin(a)]) for a in np.linspace(0, 2 * np.pi, 24, endpoint=False)]
        best = max(spots, key=clearance)
        return tag.move_to((best[0], best[1], 0.0))

    def _follow(self, plane: _Plane) -> list[UpdateFromFunc]:
        """The names follow their arrows while they turn."""
        q_hand, k_hand = plane.arrows
        return [UpdateFromFunc(plane.tags[0], lambda t: self._place_tag(t, q_hand, k_hand, plane.centre)),
                UpdateFromFunc(plane.tags[1], lambda t: self._place_tag(t, k_hand, q_hand, plane.centre))]

    def _side(self, plane: _Plane, row: int, line: VMobject) -> VMobject:
        x = plane.centre[0] + RADIUS + 0.5
        return line.move_to((x, SIDE_TOP - row * SIDE_STEP, 0)).align_to((x, 0, 0), LEFT)

    def _turn_labels(self, plane: _Plane, source: str) -> list[VMobject]:
        i = plane.pair
        return [self._side(plane, 0, self.label("q turns m·θ = {}", value(source, "query_turns", i), size=SIZE,
                                                color=QUERY)),
                self._side(plane, 1, self.label("k turns n·θ = {}", value(source, "key_turns", i), size=SIZE,
                                                color=KEY))]

    def _share_labels(self, plane: _Plane, source: str) -> list[VMobject]:
        i = plane.pair
        return [self._side(plane, 2, self.label("angle q→k: {}", value(source, "angles_between", i), size=SIZE,
                                                color=WEIGHT)),
                self._side(plane, 3, self.label("share of q·k: {}", value(source, "contributions", i), size=SIZE))]

    def _turned_by(self, source: str, role: int) -> str:
        """The turns of every pair of one hand, said: "4.00 and 0.04"."""
        name = ("query_turns", "key_turns")[role]
        return " and ".join(self.fmt(source, name, p.pair) for p in self.planes)

    # -- the beats ---------------------------------------------------------------------------------------
    def _arrows(self) -> None:
        """Each pair's plane, its θ, the query's and the key's arrows before any turn."""
        tokens, q, k = self.scenario.tokens, self.scenario.query, self.key
        dims = rope_pair_dimensions(self.scenario.d_k)
        self.positions_line = self.label("query '{}' at m = {},  key '{}' at n = {}", TokenPart(tokens[q], 8),
                                         value("clock_whole", "query_position"), TokenPart(tokens[k], 8),
                                         value("clock_whole", "key_position"), size=SIZE, color=INK)
        self.positions_line.move_to((0, POSITIONS_Y, 0))
        shown: list[Mobject] = [self.positions_line]
        for plane in self.planes:
            i, pace = plane.pair, ("", "fast · ", "slow · ")[0 if len(self.planes) == 1 else plane.pair + 1]
            title = self.label(pace + "pair {}: dimensions {}, {} · θ = {}", position(i, "pair"),
                               position(dims[i, 0], "d_k"), position(dims[i, 1], "d_k"),
                               value("clock", "frequencies", i), size=SIZE, color=MUTED)
            title.move_to((plane.centre[0] + PLANE_LEFT, TITLE_Y, 0))
            ring = Circle(radius=RADIUS, color=MUTED, stroke_width=1.5, stroke_opacity=0.5).move_to(plane.centre)
            axes = VGroup(*(Line(plane.centre - d * (RADIUS + 0.15), plane.centre + d * (RADIUS + 0.15), color=MUTED,
                                 stroke_width=1.5, stroke_opacity=0.6) for d in (RIGHT, UP)))
            plane.arrows = [self._hand(plane, "clock", r, turned=False) for r in (0, 1)]
            plane.tags = [text("q", size=SIZE + 2, color=QUERY), text("k", size=SIZE + 2, color=KEY)]
            for tag, hand, other in zip(plane.tags, plane.arrows, plane.arrows[::-1], strict=True):
                self._place_tag(tag, hand, other, plane.centre)
            shown += [title, ring, axes, *plane.arrows, *plane.tags]
        pairs = "one plane" if len(self.planes) == 1 else "a plane per pair, the fast pair left, the slow one right"
        self.beat(f"Each pair of dimensions is a plane: the query of '{tokens[q]}' and the key of '{tokens[k]}' are "
                  f"arrows in it, {pairs}, before any turn.", FadeIn(*shown), run_time=1.5, wait=1.5)

    def _turn(self) -> None:
        """Each arrow turns by its position times the pair's θ."""
        tokens, q, k = self.scenario.tokens, self.scenario.query, self.key
        moves: list[object] = []
        for plane in self.planes:
            turned = [self._hand(plane, "clock", 0), self._hand(plane, "clock", 1)]
            for role, (old, new) in enumerate(zip(plane.arrows, turned, strict=True)):
                angle = float(self.value_of(value("clock", ("query_turns", "key_turns")[role], plane.pair)))
                moves.append(ReplacementTransform(old, new, path_arc=angle))
            moves += self._follow(plane)  # after the turns: each frame the names see the arrows turned
            plane.lines = self._turn_labels(plane, "clock")
            moves.append(FadeIn(*plane.lines, shift=DOWN * 0.1))
            plane.arrows = turned
        m, n = self.cite(value("clock_whole", "query_position")), self.cite(value("clock_whole", "key_position"))
        self.beat(f"'{tokens[q]}' stands at m = {m}, '{tokens[k]}' at n = {n}: each arrow turns by its position "
                  f"times θ, the query's by {self._turned_by('clock', 0)} radians, the key's by "
                  f"{self._turned_by('clock', 1)}.", *moves, run_time=2.0, wait=2.0)

    def _between(self) -> None:
        """The angle between the hands; each pair's share of the score; the shares add up to the score."""
        shown: list[Mobject] = []
        for plane in self.planes:
            plane.arc = self._arc(plane, "clock")
            share = self._share_labels(plane, "clock")
            plane.lines += share
            shown += [plane.arc, *share]
        self.score_line = self._score_line("clock")
        shares = " and ".join(self.fmt("clock", "contributions", p.pair) for p in self.planes)
        said = (f"What counts is the angle between the two hands: a pair adds |q| |k| cos(angle) to the score, "
                f"{shares}; the score q·k is {self.fmt('clock', 'score')}.")
        self.beat(said + self.said_rounded(), FadeIn(*shown), FadeIn(self.score_line, shift=UP * 0.1),
                  *([FadeIn(self.rounding_note())] if self.rounding_shows else []), run_time=1.5, wait=2.0)

    def _score_line(self, source: str) -> VMobject:
        """``score (Rₘ q)·(Rₙ k) = share + share = score`` (``=`` only where the shown shares add up)."""
        shares = [value(source, "contributions", p.pair) for p in self.planes]
        template, parts = "score (Rₘ q)·(Rₙ k) = ", list(shares)
        if len(shares) > 1:
            second = "({})" if self.text_for(shares[1]).startswith("−") else "{}"
            template += "{} + " + second + f" {self.equals(value(source, 'score'), shares)} "
        else:
            parts = []
        template += "{}"
        line = self.label(template, *parts, value(source, "score"), size=SIZE + 2, color=INK)
        return line.move_to((0, SCORE_Y, 0))

    def _shift(self) -> None:
        """Every position moves on by the same amount: both hands of a pair turn alike, the score stays."""
        moves: list[object] = []
        later = self.label("moved on by {}: query at m = {},  key at n = {}", size("n_tokens"),
                           value("shifted_whole", "query_position"), value("shifted_whole", "key_position"),
                           size=SIZE, color=INK).move_to((0, POSITIONS_Y, 0))
        # cross-fades, not FadeTransforms: morphing one line's glyphs into another's costs the most frames
        moves += [FadeOut(self.positions_line), FadeIn(later)]
        self.positions_line = later
        for plane in self.planes:
            turned = [self._hand(plane, "shifted", 0), self._hand(plane, "shifted", 1)]
            arc = self._arc(plane, "shifted")
            extra = float(self.value_of(value("shifted", "query_turns", plane.pair))
                          - self.value_of(value("clock", "query_turns", plane.pair)))
            moves += [ReplacementTransform(old, new, path_arc=extra)
                      for old, new in zip([*plane.arrows, plane.arc], [*turned, arc], strict=True)]
            moves += self._follow(plane)  # after the arrows' turns (as in _turn)
            lines = self._turn_labels(plane, "shifted") + self._share_labels(plane, "shifted")
            moves += [FadeOut(*plane.lines), FadeIn(*lines)]
            plane.arrows, plane.arc, plane.lines = turned, arc, lines
        score = self._score_line("shifted")
        moves += [FadeOut(self.score_line), FadeIn(score)]
        self.score_line = score
        said = (f"Move every position on by {self.cite(size('n_tokens'))}, as if the sentence came a second time: "
                "both hands of a pair turn alike, the angle between them stays, and so does the score, "
                f"{self.fmt('shifted', 'score')}. Only m − n counts.")
        self.beat(said, *moves, run_time=2.0, wait=2.5)

    def _layouts(self, order: np.ndarray) -> None:
        """The "rotate half" layout: the paper's pairs' score once the dimensions are listed in another order."""
        d_k = self.scenario.d_k
        dims = rope_pair_dimensions(d_k, "half")
        pairs = ", ".join("({}, {})" for _ in range(d_k // 2))
        listed = ", ".join("{}" for _ in range(d_k))
        first = self.label("“rotate half” pairs dimensions " + pairs + ": its score {}", *(
            position(int(d), "d_k") for d in dims.ravel()), value("half", "score"), size=SIZE, color=MUTED)
        second = self.label("= the paper's pairs with the dimensions listed " + listed + ": {}",
                            *(position(int(d), "d_k") for d in order), value("reordered", "score"), size=SIZE,
                            color=MUTED)
        self.layout_lines = VGroup(first, second).arrange(DOWN, buff=0.12).move_to((0, LAYOUT_Y, 0))
        half, paired = self.fmt("half", "score"), self.fmt("reordered", "score")
        if d_k > 2:
            said = ("Many implementations pair the first half of the dimensions with the second instead, “rotate "
                    f"half”: its score, {half}, is the paper's score of the same q and k with the dimensions listed in "
                    f"another order, {paired}. The same scores, up to a fixed reordering.")
        else:
            said = (f"Many implementations pair the first half of the dimensions with the second, “rotate half”: with "
                    f"one pair it is the paper's pair, the same score, {half} and {paired}.")
        self.beat(said,
                  FadeIn(self.layout_lines, shift=UP * 0.1), run_time=1.5, wait=2.5)


def _distance_to_segment(point: np.ndarray, start: np.ndarray, end: np.ndarray) -> float:
    """How far ``point`` stands from the segment ``start``–``end`` (2-d)."""
    along = end - start
    t = float(np.clip((point - start) @ along / max(float(along @ along), 1e-12), 0.0, 1.0))
    return float(np.linalg.norm(point - (start + t * along)))
