"""The heat maps of MatrixForm and CausalMask, looked at after every play of a dry run.

What the shared checks do not look at, from a reviewer's frames:

- a grid whose numbers barely differ (weights 0.49 to 0.51) does not spread them from black to
  bright: cells that print the same number look the same (``attention_math.heat``);
- the mask is one region of one colour whatever the scores it hides, its "−∞" legible on it,
  and a colour-only grid writes one large "−∞" in the middle of the region's largest block;
- column labels keep their tokens whole (upright where needed) where the frame has room;
- beside a colour-only grid, the column of one query's row stays on screen to the end, and
  for the second query it shows that row's weights;
- a vector line (``z3 = (−0.32, 0.41)``) writes its parentheses and commas in the numbers' ink,
  a comma close to its number and a space before the next.
"""

from __future__ import annotations

import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from manim import Polygon, Text
from manim.utils.color import ManimColor
from reviewed_scenarios import REVIEWED
from scene_helpers import (
    SCENARIOS,
    build_watched,
    family_box,
    is_visible,
    on_screen,
    outermost_texts,
)
from scene_helpers import text_of as said_by

from attention_math import Scenario, format_number
from attention_math.scenario import scenario_from_mapping
from scenes.kit.mask import free_block
from scenes.kit.palette import BACKGROUND
from scenes.kit.text import text as pango_text

pytestmark = pytest.mark.xdist_group("heat-maps-geometry")  # one worker builds the scenes once for every test here

OWLS = """
title = "Owls listen"
tokens = ["Owls", "listen"]
embeddings = [[0.3, 0.8, 0.6], [-0.5, -0.4, 0.7]]
w_query = [[-1.0, 0.6], [0.6, -0.1], [-0.4, -0.4]]
w_key = [[-0.5, -0.1], [0.0, 0.1], [1.0, 0.6]]
w_value = [[0.2, 1.0], [-0.6, -0.7], [0.2, -0.9]]
query = 2
precision = 2
"""
"""2 tokens whose weights all lie between 0.49 and 0.51 (the reviewer's "s2")."""

FOXES = """
title = "Quiet foxes cross frozen rivers tonight"
tokens = ["Quiet", "foxes", "cross", "frozen", "rivers", "tonight"]
embeddings = [[-0.7, 0.0, 0.2, -0.9], [-0.7, 0.9, -0.9, -0.7], [0.9, 0.2, -0.3, 0.0], [0.3, -0.4, -0.7, 0.6],
              [0.3, 0.0, 0.6, 0.1], [1.0, -0.6, 0.1, 0.0]]
w_query = [[-0.3, 0.2, -0.5], [0.6, 0.7, -0.7], [-0.1, -0.4, -0.8], [0.8, -0.1, -0.7]]
w_key = [[0.3, -0.6, 0.8], [-0.6, -0.9, -0.6], [-0.3, -0.1, 0.8], [0.4, -0.3, -1.0]]
w_value = [[-0.7, 1.0], [-0.1, 0.4], [-0.9, -0.9], [0.7, 0.2]]
query = 5
precision = 2
"""
"""6 tokens, d_model 4, d_k 3, d_v 2 (the reviewer's "s6"): cells with numbers, the query's token
("rivers") and "tonight" one character too long for a flat label."""

OWN: dict[str, Callable[[], Scenario]] = {
    "owls": lambda: scenario_from_mapping(tomllib.loads(OWLS)),
    "foxes": lambda: scenario_from_mapping(tomllib.loads(FOXES)),
}

CASES = [
    ("scenes.self_attention.matrix_form", "MatrixForm", "owls"),
    ("scenes.self_attention.matrix_form", "MatrixForm", "foxes"),
    ("scenes.self_attention.matrix_form", "MatrixForm", "sixteen"),
    ("scenes.self_attention.matrix_form", "MatrixForm", "default"),
    ("scenes.self_attention.causal_mask", "CausalMask", "foxes"),
    ("scenes.self_attention.causal_mask", "CausalMask", "engineers"),
    ("scenes.self_attention.causal_mask", "CausalMask", "default"),
]

SAME_NUMBER_FILL = 0.06  # the most two cells that print the same number may differ in fill opacity
LEGIBLE = 4.5  # the least contrast of a number against the colour it is written on (WCAG AA)

Box = tuple[float, float, float, float]


@dataclass
class _Text:
    content: str
    box: Box
    color: str


@dataclass
class _Look:
    """One play's end: its caption, its texts, the grid's cells and the mask, as drawn."""

    step: str
    texts: list[_Text]
    fills: list[list[tuple[str, float]]]  # each cell's fill colour and opacity
    cell_texts: list[list[_Text]] = field(default_factory=list)  # the numbers in the cells, if any
    mask: tuple[str, float] | None = None  # the mask's fill, when it is on screen
    marks: list[_Text] = field(default_factory=list)  # colour only: the mark written across the mask


def _text(mob: Any) -> _Text:
    box = family_box(mob)
    assert box is not None
    color = mob.submobjects[0].get_fill_color() if mob.submobjects else mob.get_fill_color()
    return _Text(said_by(mob), box, ManimColor(color).to_hex().upper())


class _Watch:
    def __init__(self) -> None:
        self.looks: list[_Look] = []
        self.scene: Any = None

    def __call__(self, scene: Any) -> None:
        self.scene = scene
        board = getattr(scene, "board", None)
        if board is None:
            return
        shown = {id(mob) for mob in on_screen(scene)}
        texts = [_text(mob) for mob in outermost_texts([*scene.mobjects, *scene.foreground_mobjects])
                 if family_box(mob) is not None and any(is_visible(part) for part in mob.get_family())]
        fills = [[(ManimColor(s.get_fill_color()).to_hex().upper(), float(s.get_fill_opacity())) for s in row]
                 for row in board.grid.squares]
        masks = [mob for mob in scene.mobjects if type(mob) is Polygon and id(mob) in shown]  # not a Rectangle
        look = _Look(getattr(scene, "current_step", ""), texts, fills)
        if len(board.numbers):
            look.cell_texts = [[_text(entry) for entry in row] for row in board.numbers]
        if masks:
            look.mask = (ManimColor(masks[0].get_fill_color()).to_hex().upper(), float(masks[0].get_fill_opacity()))
        marks = getattr(board, "marks", [])
        look.marks = [_text(mark) for mark in marks if isinstance(mark, Text) and id(mark) in shown]
        self.looks.append(look)


@dataclass
class _Built:
    scenario: Scenario
    looks: list[_Look]
    scene: Any


@pytest.fixture(scope="module")
def watched(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], _Built]:
    done: dict[tuple[str, str], _Built] = {}
    for module, name, scenario_id in CASES:
        scenario = (OWN.get(scenario_id) or REVIEWED.get(scenario_id) or SCENARIOS[scenario_id])()
        watch = _Watch()
        build_watched(module, name, scenario, Path(tmp_path_factory.mktemp(name)), watch)
        done[name, scenario_id] = _Built(scenario, watch.looks, watch.scene)
    return done


def _beat(looks: list[_Look], start: str) -> _Look:
    found = [look for look in looks if look.step.startswith(start)]
    assert found, f"no beat starting {start!r}"
    return found[-1]


# -- colours -----------------------------------------------------------------------------------------


def _rgb(hex_colour: str) -> np.ndarray:
    return np.asarray(ManimColor(hex_colour).to_rgb(), dtype=float)


def _over(under: np.ndarray, colour: str, opacity: float) -> np.ndarray:
    return np.asarray(_rgb(colour) * opacity + under * (1 - opacity))


def _luminance(rgb: np.ndarray) -> float:
    linear = np.where(rgb <= 0.03928, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)
    return float(0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2])


def _contrast(a: np.ndarray, b: np.ndarray) -> float:
    high, low = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def _seen(look: _Look, i: int, j: int) -> np.ndarray:
    """The colour cell (i, j) shows: its fill over the background, under the mask if it is hidden."""
    colour, opacity = look.fills[i][j]
    seen = _over(_rgb(BACKGROUND), colour, opacity)
    if look.mask is not None and j > i:
        seen = _over(seen, *look.mask)
    return seen


# -- 1: a narrow range is not spread from black to bright ---------------------------------------------


@pytest.mark.parametrize("beat", ["The score matrix", "Divide every score", "A softmax along each row"])
def test_cells_that_print_the_same_number_look_the_same(watched, beat: str) -> None:
    look = _beat(watched["MatrixForm", "owls"].looks, beat)
    cells = [(text.content, look.fills[i][j][1], (i, j)) for i, row in enumerate(look.cell_texts)
             for j, text in enumerate(row)]
    assert cells, "the 2-token grid carries no numbers"
    for (a, fill_a, at_a), (b, fill_b, at_b) in ((x, y) for x in cells for y in cells if x[2] < y[2]):
        if a == b:
            assert abs(fill_a - fill_b) <= SAME_NUMBER_FILL, f"{beat}: {a} at {at_a} and {at_b}: {fill_a} vs {fill_b}"
    spread = max(fill for _, fill, _ in cells) - min(fill for _, fill, _ in cells)
    assert spread < 0.3, f"{beat}: numbers within a few hundredths spread over {spread:.2f} of the scale"


def test_the_default_weights_still_span_the_whole_scale(watched) -> None:
    look = _beat(watched["MatrixForm", "default"].looks, "A softmax along each row")
    opacities = [opacity for row in look.fills for _, opacity in row]
    assert min(opacities) == pytest.approx(0.07) and max(opacities) == pytest.approx(0.92)


# -- 2: the mask is one region of one colour, labelled once ------------------------------------------


@pytest.mark.parametrize("scenario", ["foxes", "engineers", "default"])
def test_the_masked_cells_share_one_colour_and_their_minus_infinity_reads(watched, scenario: str) -> None:
    built = watched["CausalMask", scenario]
    n = built.scenario.n_tokens
    for beat in ("A mask hides", "After the softmax"):
        look = _beat(built.looks, beat)
        assert look.mask is not None, f"{beat}: no mask on screen"
        seen = [_seen(look, i, j) for i in range(n) for j in range(i + 1, n)]
        worst = max(float(np.abs(colour - seen[0]).max()) for colour in seen)
        assert worst <= 1 / 255, f"{beat}: the masked cells differ in colour by {worst * 255:.0f}/255"
    look = _beat(built.looks, "A mask hides")
    signs = [(i, j, text) for i, row in enumerate(look.cell_texts) for j, text in enumerate(row) if j > i]
    signs += [(0, n - 1, mark) for mark in look.marks]
    assert signs, "no −∞ written on the mask"
    for i, j, text in signs:
        assert text.content == "−∞"
        contrast = _contrast(_rgb(text.color), _seen(look, i, j))
        assert contrast >= LEGIBLE, f"−∞ over cell ({i}, {j}): contrast {contrast:.1f}"


def test_a_colour_only_mask_writes_one_large_minus_infinity_in_its_largest_block(watched) -> None:
    built = watched["CausalMask", "engineers"]
    grid, n = built.scene.board.grid, built.scenario.n_tokens
    look = _beat(built.looks, "A mask hides")
    assert not look.cell_texts, "the 15-token grid was meant to be in colour only"
    assert [mark.content for mark in look.marks] == ["−∞"], "one −∞ for the whole mask"
    rows, columns = free_block(n)
    assert rows * columns == max(a * (n - a) for a in range(n + 1)), "not the largest block above the diagonal"
    first, last = grid.cell_center(0, n - columns), grid.cell_center(rows - 1, n - 1)
    left, right = first[0] - grid.cell_w / 2, last[0] + grid.cell_w / 2
    bottom, top = last[1] - grid.cell_h / 2, first[1] + grid.cell_h / 2
    mark = look.marks[0].box
    assert left <= mark[0] and mark[1] <= right and bottom <= mark[2] and mark[3] <= top, \
        "the −∞ leaves the largest block of masked cells"
    assert abs((mark[0] + mark[1]) / 2 - (left + right) / 2) < 0.05, "the −∞ is off the block's middle"
    assert abs((mark[2] + mark[3]) / 2 - (bottom + top) / 2) < 0.05, "the −∞ is off the block's middle"
    label_size = pango_text("−∞", size=grid.size).height
    assert mark[3] - mark[2] > 1.4 * label_size, "the −∞ is no larger than the grid's labels"


# -- 3: whole column labels where there is room --------------------------------------------------------


@pytest.mark.parametrize("scene", ["MatrixForm", "CausalMask"])
def test_column_labels_keep_their_tokens_whole_where_the_frame_has_room(watched, scene: str) -> None:
    built = watched[scene, "foxes"]
    last = [text.content for text in built.looks[-1].texts]
    cut = [token for token in built.scenario.tokens if last.count(token) < 2]  # its row's label and its column's
    assert not cut, f"labels cut though turning them upright keeps them whole: {cut}"


# -- 4: the column of the query's row, beside a colour-only grid, to the end ---------------------------


def test_a_colour_only_grid_keeps_its_rows_numbers_beside_it_to_the_end(watched) -> None:
    built = watched["MatrixForm", "sixteen"]
    scenario, scene = built.scenario, built.scene
    q, other = scenario.query, scene.second_query
    looks = built.looks[next(k for k, look in enumerate(built.looks) if look.step.startswith("The score matrix")):]
    assert not looks[0].cell_texts, "the 16-token grid was meant to be in colour only"
    for look in (look for look in looks if not look.step.startswith("Every token")):
        assert any(text.content == f"row {q + 1}" for text in look.texts), f"{look.step!r}: the query's row is gone"
    last, grid = looks[-1], scene.board.grid
    assert any(text.content == f"row {other + 1}" for text in last.texts), "no column for the second query"
    weights = np.asarray(scenario.trace().weights)
    right = grid.brackets.get_right()[0]
    for j in range(scenario.n_tokens):
        shown = format_number(float(weights[other, j]), scenario.precision)
        at = [t for t in last.texts if t.content == shown and t.box[0] > right
              and abs((t.box[2] + t.box[3]) / 2 - grid.row_y(j)) < 0.05]
        assert at, f"weight {shown} of row {other + 1}, key {j + 1}, not beside the grid"


# -- 5: vector lines in the numbers' ink ---------------------------------------------------------------


@pytest.mark.parametrize(("scene", "scenario"), [("MatrixForm", "default"), ("CausalMask", "default")])
def test_vector_lines_write_their_parentheses_in_ink_and_space_their_commas(watched, scene: str,
                                                                            scenario: str) -> None:
    texts = watched[scene, scenario].looks[-1].texts
    opens = [t for t in texts if t.content == "= ("]
    assert opens, "no vector line"
    for start in opens:
        line = sorted((t for t in texts if abs(t.box[2] + t.box[3] - start.box[2] - start.box[3]) < 0.2
                       and t.box[0] >= start.box[0]), key=lambda t: t.box[0])
        numbers = [t for t in line if t.content not in ("= (", ",", ")")]
        marks = [t for t in line if t.content in ("= (", ",", ")")]
        assert {m.color for m in marks} == {numbers[0].color}, f"{[m.content for m in marks]} not in the numbers' ink"
        for before, comma, after in zip(line, line[1:], line[2:], strict=False):
            if comma.content == ",":
                assert comma.box[0] - before.box[1] < 0.06, "the comma stands apart from its number"
                assert after.box[0] - comma.box[1] > 0.12, "the comma crowds the next number"
