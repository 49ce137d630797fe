"""FusedProjection, looked at after every play of a dry run: the heads' colours and labels say the truth.

What the shared checks do not see: a column block tinted in another head's colour, a head's label over
another head's block, a number standing on a piece of another head's colour (the bands say which block a
number stands in, not what colour that block wears), W_Q's column blocks not over Q's in Falk's scheme. The
scenarios: the lecture's (numbers in the cells) and 12 tokens through 6 heads (colours only, 4 drawn). The
last tests plant, with 2 tokens through 3 heads of d_k 1, a block tinted in the wrong head's colour and a
head's label over another's block, and show each is caught.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from manim import Rectangle
from scene_helpers import SCENARIOS, build_watched, family_box, is_visible, on_screen, outermost_texts
from scene_helpers import text_of as said_by

import scenes.multi_head.fused_projection as fused_projection
from scenes.kit.blocks import HEAD_COLORS, head_color

pytestmark = pytest.mark.xdist_group("fused-projection-geometry")

SCENE = ("scenes.multi_head.fused_projection", "FusedProjection")
CASES = ("two-heads", "six-heads-twelve")
TOLERANCE = 0.02
Box = tuple[float, float, float, float]


def _hex(color: Any) -> str:
    return str(color.to_hex()).upper()


@dataclass
class _Look:
    """What one play left on screen, as the checks need it."""

    step: str
    labels: list[tuple[int, str, float, float]] = field(default_factory=list)  # head (from 0), colour, x, bottom
    pieces: list[tuple[str, Box]] = field(default_factory=list)  # tinted in a head's colour
    numbers: list[tuple[str, int, float, float]] = field(default_factory=list)  # what, its head, centre
    blocks: list[tuple[Box, Box]] = field(default_factory=list)  # W_Q's block k, Q's block k (Falk's scheme)


class _Watch:
    """After every play: the heads' labels, the head-tinted pieces and the numbers of a head, on screen."""

    def __init__(self) -> None:
        self.looks: list[_Look] = []

    def __call__(self, scene: Any) -> None:
        shown = on_screen(scene)
        present = {id(mob) for mob in shown}
        look = _Look(getattr(scene, "current_step", ""))
        heads = {color.upper() for color in HEAD_COLORS}
        for mob in outermost_texts([*scene.mobjects]):
            found = re.fullmatch(r"(?:head )?(\d+)", said_by(mob))
            box = family_box(mob)
            if found and box is not None and _hex(mob.get_color()) in heads and not getattr(mob, "is_furniture", False):
                look.labels.append((int(found.group(1)) - 1, _hex(mob.get_color()), (box[0] + box[1]) / 2, box[2]))
        for mob in shown:
            if isinstance(mob, Rectangle) and is_visible(mob) and mob.get_fill_opacity() > 0 \
                    and _hex(mob.get_fill_color()) in heads:
                look.pieces.append((_hex(mob.get_fill_color()), _box(mob)))
        d_k = scene.scenario.d_k
        for item in scene.shown:
            head = _head_of(item.fact, d_k)
            if head is not None and id(item.mobject) in present and (box := family_box(item.mobject)) is not None:
                look.numbers.append((f"{item.fact.source}.{item.fact.field}{list(item.fact.index)} {item.text!r}",
                                     head, (box[0] + box[1]) / 2, (box[2] + box[3]) / 2))
        board = getattr(scene, "board", None)
        if board is not None and all(id(m.pieces[-1][-1]) in present for m in (board.w, board.q)):
            look.blocks = [(_box(board.w.block(k)), _box(board.q.block(k))) for k in range(board.w.blocks)]
        self.looks.append(look)


def _box(mob: Any) -> Box:
    return (float(mob.get_left()[0]), float(mob.get_right()[0]), float(mob.get_bottom()[1]), float(mob.get_top()[1]))


def _head_of(fact: Any, d_k: int) -> int | None:
    """The head a number belongs to, from its fact alone (``None``: none, or not a head's own number)."""
    if fact.source == "fused" and fact.field in ("w_query_big", "queries_big"):
        return int(fact.index[-1]) // d_k
    if fact.source == "fused" and (fact.field.endswith("_split") or fact.field == "w_query"):
        return int(fact.index[0])
    found = re.fullmatch(r"head(\d+)", fact.source)
    return int(found.group(1)) - 1 if found and fact.field == "queries" else None


def _watched(scenario_id: str, root: Path) -> list[_Look]:
    watch = _Watch()
    build_watched(*SCENE, SCENARIOS[scenario_id](), root, watch)
    return watch.looks


@pytest.fixture(scope="module")
def watched(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[_Look]]:
    return {case: _watched(case, tmp_path_factory.mktemp(case)) for case in CASES}


def label_problems(looks: list[_Look]) -> list[str]:
    """Each head's label in its colour, over a piece of its colour (the nearest tinted piece under it)."""
    problems = []
    for look in looks:
        for head, color, x, bottom in look.labels:
            if color != head_color(head).upper():
                problems.append(f"{look.step!r}: head {head + 1}'s label is {color}, not {head_color(head)}")
            under = [(box[3], piece) for piece, box in look.pieces
                     if box[0] - TOLERANCE <= x <= box[1] + TOLERANCE and box[3] <= bottom + TOLERANCE]
            if under and max(under)[1] != head_color(head).upper():
                problems.append(f"{look.step!r}: head {head + 1}'s label stands over a piece of {max(under)[1]}")
    return problems


def number_problems(looks: list[_Look]) -> list[str]:
    """Each number of a head on a piece of its head's colour (a piece that holds it, none of another colour)."""
    problems = []
    for look in looks:
        for name, head, x, y in look.numbers:
            under = {piece for piece, box in look.pieces if box[0] <= x <= box[1] and box[2] <= y <= box[3]}
            if under != {head_color(head).upper()}:
                problems.append(f"{look.step!r}: {name} of head {head + 1} stands on {sorted(under) or 'no piece'}")
    return problems


@pytest.mark.parametrize("case", CASES)
def test_each_head_label_stands_over_its_own_block(watched, case: str) -> None:
    looks = watched[case]
    assert sum(len(look.labels) for look in looks), "no head's label was ever on screen"
    problems = label_problems(looks)
    assert not problems, "\n".join(problems[:10])


@pytest.mark.parametrize("case", CASES)
def test_each_number_of_a_head_stands_on_its_heads_colour(watched, case: str) -> None:
    looks = watched[case]
    problems = number_problems(looks)
    assert not problems, "\n".join(problems[:10])
    if case != "six-heads-twelve":  # colours only there: its numbers are the equal head's row
        assert sum(len(look.numbers) for look in looks) > 20


@pytest.mark.parametrize("case", CASES)
def test_w_q_blocks_stand_over_q_blocks(watched, case: str) -> None:
    """Falk's scheme: block k of W_Q right over block k of Q (the same columns, the same head)."""
    blocks = [pair for look in watched[case] for pair in look.blocks]
    assert blocks, "W_Q and Q were never on screen together"
    for w, q in blocks:
        assert abs(w[0] - q[0]) < TOLERANCE and abs(w[1] - q[1]) < TOLERANCE and w[2] > q[3], (w, q)


@contextmanager
def _swapped_colours() -> Iterator[None]:
    """Heads 1 and 2 trade colours in the scene's blocks (the labels keep theirs)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(fused_projection, "head_color", lambda k: head_color({0: 1, 1: 0}.get(k, k)))
        yield


def test_the_checks_catch_a_block_in_another_heads_colour(tmp_path: Path) -> None:
    with _swapped_colours():
        looks = _watched("two-tokens-heads", tmp_path)
    # the labels now wear the swapped colours too: the label check sees head 1's label in head 2's colour
    assert label_problems(looks) and number_problems(looks)


def test_the_checks_catch_a_head_labelled_as_another(tmp_path: Path) -> None:
    label = fused_projection.FusedProjection._head_labels

    def mislabelled(self: Any, look: Any, tops: list[Any], block_w: float) -> Any:
        labels = label(self, look, tops, block_w)
        first, second = labels[0].get_center(), labels[1].get_center()
        labels[0].move_to(second)  # head 1's label over head 2's block, and head 2's over head 1's
        labels[1].move_to(first)
        return labels

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(fused_projection.FusedProjection, "_head_labels", mislabelled)
        looks = _watched("two-tokens-heads", tmp_path)
    assert label_problems(looks)
