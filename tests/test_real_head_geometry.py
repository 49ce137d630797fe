"""The real-head scenes, looked at where the shared layout checks cannot: each scene once, at its end.

RealHeadPlace: the WordPiece chips read in token order and never touch; the outline lights the box of
the chosen layer (its label the layer's number) and of the chosen head, and no other. RealProjection:
each colour map has a cell per number of its matrix (384 × 32, and the bias's 32 set apart below it),
its squares tile it and draw, in the pixel of the largest and of the smallest number, the cells'
opacities averaged over that pixel (a loop here); the maps keep clear of the q, k, v table.
RealWeights: the summary's outline holds the bar of the key the query weighs most and no other bar;
the heat map's outline holds the query's row of cells and no other; the heat map keeps clear of the bars.
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scene_helpers import MODEL_SCENARIOS, build_watched, family_box, text_of

from attention_math import minilm
from scenes.real_head.projection import SHADES

if minilm.missing_model_parts():
    pytest.skip("the model extra is not installed", allow_module_level=True)

pytestmark = pytest.mark.xdist_group("real-head-geometry")  # one worker builds the scenes once

CASES = {
    "RealHeadPlace": ("scenes.real_head.place", "minilm-sixteen"),
    "RealProjection": ("scenes.real_head.projection", "minilm-eight"),
    "RealWeights": ("scenes.real_head.weights", "minilm-sixteen"),
}

Box = tuple[float, float, float, float]


@pytest.fixture(scope="module")
def ends(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Each scene as its last play left it."""
    done: dict[str, Any] = {}
    media = Path(tmp_path_factory.mktemp("real-head"))  # one TeX cache for the three
    for name, (module, scenario) in CASES.items():
        last: list[Any] = []
        build_watched(module, name, MODEL_SCENARIOS[scenario](), media, last.append)
        done[name] = last[-1]
    return done


def _box(mob: Any) -> Box:
    box = family_box(mob)
    assert box is not None
    return box


def _inside(inner: Box, outer: Box, slack: float = 0.01) -> bool:
    return (inner[0] >= outer[0] - slack and inner[1] <= outer[1] + slack and inner[2] >= outer[2] - slack
            and inner[3] <= outer[3] + slack)


def _centre_in(mob: Any, box: Box) -> bool:
    x, y = mob.get_center()[:2]
    return box[0] <= x <= box[1] and box[2] <= y <= box[3]


def _apart(a: Box, b: Box) -> bool:
    return a[1] <= b[0] or b[1] <= a[0] or a[3] <= b[2] or b[3] <= a[2]


def test_the_chips_read_in_token_order_and_never_touch(ends: dict[str, Any]) -> None:
    scene = ends["RealHeadPlace"]
    boxes = [_box(chip[0]) for chip in scene.chips]
    assert [chip[1].source_token for chip in scene.chips] == list(scene.scenario.tokens)
    for a, b in itertools.pairwise(boxes):
        same_line = abs(a[3] - b[3]) < 1e-6
        assert (same_line and a[1] < b[0]) or (not same_line and b[3] < a[2]), "chips out of reading order"
    assert all(_apart(a, b) for k, a in enumerate(boxes) for b in boxes[k + 1:])


def test_the_outlines_light_the_chosen_layer_and_head_alone(ends: dict[str, Any]) -> None:
    scene = ends["RealHeadPlace"]
    found = scene.head_found
    for boxes, lit, chosen in ((scene.layers, scene.lit_layer, found.layer), (scene.heads[1], scene.lit_head,
                                                                              found.head)):
        outline = _box(lit)
        held = [k for k, box in enumerate(boxes) if _centre_in(box, outline)]
        assert held == [chosen] and _inside(_box(boxes[chosen][0]), outline)
    assert text_of(scene.layers[found.layer][1]).endswith(str(found.layer_number))


def test_each_colour_map_has_a_cell_per_number_and_draws_their_average_in_each_pixel(ends: dict[str, Any]) -> None:
    scene = ends["RealProjection"]
    trace = scene.head_found.trace
    for field, parts in zip(("w_query", "w_key", "w_value"), scene.maps[0], strict=True):
        matrix = np.asarray(getattr(trace, field))
        body, bias = parts[0], parts[1]
        assert body.cells.shape == (matrix.shape[0] - 1, matrix.shape[1]) == (384, 32)
        assert bias.cells.shape == (1, matrix.shape[1])
        assert _box(bias)[3] < _box(body)[2], "the bias row stands apart below the 384 rows"
        for part, numbers in ((body, matrix[:-1]), (bias, matrix[-1:])):
            squares = _squares(part)
            left, right, bottom, top = part.frame
            area = (squares[:, 1] - squares[:, 0]) * (squares[:, 3] - squares[:, 2])
            assert np.isclose(area.sum(), (right - left) * (top - bottom)), "the squares tile the map, no gaps"
            drawn = (area * squares[:, 4]).sum() / area.sum()
            assert abs(drawn - part.cells.mean()) <= 0.5 / SHADES + 1e-9, "the map as bright as its cells"
            for find in (np.argmax, np.argmin):  # the largest and the smallest number's cells, as drawn
                i, j = np.unravel_index(find(numbers), numbers.shape)
                assert part.cells[i, j] == (part.cells.max() if find is np.argmax else part.cells.min())
                x, y = part.cell_center(i, j)
                holds = (squares[:, 0] <= x) & (x < squares[:, 1]) & (squares[:, 2] < y) & (y <= squares[:, 3])
                square = squares[holds]
                assert len(square) == 1
                pixel = float(square[0, 3] - square[0, 2])  # a row of squares is a pixel tall (and they are square)
                column, row = np.floor((x - left) / pixel), np.floor((top - y) / pixel)
                box = (left + column * pixel, left + (column + 1) * pixel, top - (row + 1) * pixel, top - row * pixel)
                assert abs(square[0, 4] - _average(part.cells, part.frame, box)) <= 0.5 / SHADES + 1e-9


def _squares(part: Any) -> np.ndarray:
    """``(left, right, bottom, top, opacity)`` of every rectangle of every path of a map."""
    found = []
    for path in part:
        corners = path.points.reshape(-1, 16, 3)[:, ::4, :2]  # four straight cubic pieces a rectangle
        lows, highs = corners.min(axis=1), corners.max(axis=1)
        opacity = np.full(len(corners), path.get_fill_opacity())
        found.append(np.column_stack([lows[:, 0], highs[:, 0], lows[:, 1], highs[:, 1], opacity]))
    return np.concatenate(found)


def _average(cells: np.ndarray, frame: tuple[float, float, float, float], box: tuple[float, ...]) -> float:
    """The cells' opacities averaged over ``box``, each by the area of it that the cell covers (a loop)."""
    rows, columns = cells.shape
    left, right, bottom, top = frame
    width, height = (right - left) / columns, (top - bottom) / rows
    total = 0.0
    for i in range(rows):
        for j in range(columns):
            across = min(box[1], left + (j + 1) * width) - max(box[0], left + j * width)
            down = min(box[3], top - i * height) - max(box[2], top - (i + 1) * height)
            total += max(across, 0.0) * max(down, 0.0) * float(cells[i, j])
    return total / ((box[1] - box[0]) * (box[3] - box[2]))


def test_the_maps_keep_clear_of_the_table(ends: dict[str, Any]) -> None:
    scene = ends["RealProjection"]
    table = _box(scene.table)
    assert all(_apart(_box(part), table) for parts in scene.maps[0] for part in parts)


def test_the_outlines_hold_the_top_key_and_the_query_row_alone(ends: dict[str, Any]) -> None:
    scene = ends["RealWeights"]
    q = scene.scenario.query
    top = int(np.argmax(scene.head_found.trace.weights[q]))
    mark = _box(scene.mark)
    assert [j for j, bar in enumerate(scene.chart.bars) if _centre_in(bar, mark)] == [top]
    outline = _box(scene.outline)
    rows = [i for i, row in enumerate(scene.heat.squares) if all(_centre_in(cell, outline) for cell in row)]
    assert rows == [q]
    assert not any(_centre_in(cell, outline) for i, row in enumerate(scene.heat.squares) if i != q for cell in row)
    assert _box(scene.chart)[1] < _box(scene.heat)[0], "the heat map keeps clear of the bars"
