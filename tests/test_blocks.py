"""The kit's block matrices (``scenes.kit.blocks``) and causal staircase (``scenes.kit.mask``), without a scene.

A block matrix keeps its cells, numbers and column marks together when its blocks come apart; the
staircase covers exactly the cells above the diagonal. (The scenes' own tests look at them in use.)
"""

from __future__ import annotations

import numpy as np
import pytest
from manim import RIGHT
from test_causal_heads_geometry import mask_errors

from scenes.kit.blocks import HEAD_COLORS, BlockMatrix, head_color
from scenes.kit.heatmap import HeatGrid
from scenes.kit.mask import future_mask
from scenes.kit.text import text


def _matrix(rows: int = 3, blocks: int = 3, width: int = 2) -> BlockMatrix:
    colors = [head_color(k) for k in range(blocks)]
    matrix = BlockMatrix(rows, blocks, width, cell_w=0.8, cell_h=0.4, colors=colors)
    matrix.place([[text(f"{i}.{c}", size=20) for c in range(blocks * width)] for i in range(rows)])
    return matrix


def test_each_block_wears_its_heads_colour_and_each_number_stands_in_its_cell() -> None:
    matrix = _matrix()
    for i, row in enumerate(matrix.pieces):
        for k, piece in enumerate(row):
            assert piece.get_fill_color().to_hex().upper() == HEAD_COLORS[k].upper()
            for c in range(2):
                number = matrix.entries[i][2 * k + c]
                assert piece.get_left()[0] <= number.get_x() <= piece.get_right()[0]
                assert abs(number.get_y() - piece.get_y()) < 1e-6
    assert head_color(len(HEAD_COLORS)) == head_color(0)  # a fifth head wears the first's colour


@pytest.mark.parametrize("block", [0, 1, 2])
def test_a_cut_block_takes_its_numbers_and_its_columns_marks_with_it(block: int) -> None:
    matrix = _matrix()
    marks = matrix.cell_columns()
    before = {c: mark.get_x() for c, mark in marks.items()}
    numbers = {c: matrix.entries[1][c].get_x() for c in range(6)}
    matrix.cut_block(block).shift(RIGHT * 0.9)
    for c in range(6):
        moved = 0.9 if c // 2 == block else 0.0
        assert marks[c].get_x() == pytest.approx(before[c] + moved)
        assert matrix.entries[1][c].get_x() == pytest.approx(numbers[c] + moved)
        assert matrix.cell_center(1, c)[0] == pytest.approx(marks[c].get_x())  # the mark stays over its cell


def test_the_cut_shifts_open_the_blocks_and_the_brackets_follow() -> None:
    matrix = _matrix()
    shifts = matrix.cut_shifts(0.3, 0.1)
    assert np.allclose(shifts[2][1], [0.3, -0.2, 0.0])
    brackets = matrix.brackets_after(shifts)
    assert brackets.width == pytest.approx(matrix.brackets.width + 0.6, abs=1e-6)


@pytest.mark.parametrize("n", [2, 3, 5, 12])
def test_the_staircase_covers_exactly_the_future_keys(n: int) -> None:
    grid = HeatGrid(n, n, cell_w=0.5, cell_h=0.3, size=20)
    assert mask_errors(future_mask(grid), grid) == []
    assert mask_errors(future_mask(grid).shift(RIGHT * 0.5), grid)  # one key off: caught
