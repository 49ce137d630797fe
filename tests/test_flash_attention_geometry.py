"""The flash-attention lecture's pictures, beyond the shared layout checks, measured on the scenes as they end.

* OnlineSoftmax: each tile's running numbers stand at the height of its own keys (between its first and last key's
  rows), right of the keys' table; o / ℓ and softmax(s)·V stand under the running output's columns, right-aligned
  with them; the rule stands left of them, inside the safe area;
* TiledTraffic: the tiles cover the matrix without overlapping, each as wide as its block of keys and as tall as its
  block of queries (the last ones smaller where the blocks do not divide the tokens); the table stands right of it;
* MemoryRoutes: the blocks brought on chip stand inside the SRAM's box, S and P inside the HBM's.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from scene_helpers import SCENARIOS, dry_render, family_box, with_scenario

from scenes.flash_attention import FLASH_BLOCKS
from scenes.flash_attention.memory_routes import MemoryRoutes
from scenes.flash_attention.online_softmax import OnlineSoftmax
from scenes.flash_attention.tiled_traffic import TiledTraffic
from scenes.kit.layout import BOTTOM, HALF_WIDTH

pytestmark = pytest.mark.xdist_group("flash-attention-geometry")  # one worker builds each scene once


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], Any]:
    done = {}
    for cls, case in ((OnlineSoftmax, "twelve"), (TiledTraffic, "default"),
                      (MemoryRoutes, "default")):
        folder = Path(tmp_path_factory.mktemp(f"{cls.__name__}-{case}"))
        done[cls.__name__, case] = dry_render(with_scenario(cls, SCENARIOS[case]()), folder)
    return done


def _inside(inner: tuple[float, float, float, float], outer: tuple[float, float, float, float]) -> bool:
    return outer[0] - 1e-6 <= inner[0] and inner[1] <= outer[1] + 1e-6 and outer[2] - 1e-6 <= inner[2] \
        and inner[3] <= outer[3] + 1e-6


def test_each_tiles_running_numbers_stand_beside_its_keys(built) -> None:
    scene = built["OnlineSoftmax", "twelve"]  # 6 tiles, the middle ones run on
    table, keys_right = scene.table, max(mob.get_right()[0] for mob in (*scene.table.exps, *scene.table.labels))
    for t, step in enumerate(scene.walk.steps):
        first, last = table.labels[step.keys.start].get_y(), table.labels[step.keys.stop - 1].get_y()
        for mob in (table.maxima[t], table.rescales[t], table.sums[t], *table.outputs[t]):
            assert last - 0.01 <= mob.get_y() <= first + 0.01, f"tile {t + 1}"
            assert mob.get_left()[0] > keys_right, f"tile {t + 1} over the keys' table"
    for c, (final, plain) in enumerate(zip(table.finals, table.plains, strict=True)):
        column = table.outputs[-1][c]
        assert final.get_right()[0] == pytest.approx(column.get_right()[0], abs=1e-3)
        assert plain.get_right()[0] == pytest.approx(column.get_right()[0], abs=1e-3)
        assert plain.get_top()[1] < final.get_bottom()[1] < column.get_bottom()[1]
    left, right, bottom, _ = family_box(scene.summary)
    assert right < min(foot.get_left()[0] for foot in table.foot) and bottom >= BOTTOM and left >= -HALF_WIDTH


def test_the_tiles_cover_the_matrix_block_by_block(built) -> None:
    scene = built["TiledTraffic", "default"]
    keys, queries = FLASH_BLOCKS
    n = scene.scenario.n_tokens
    cell = scene.tiles[0][0].width / keys if n >= keys else None
    assert cell is not None
    for i, row in enumerate(scene.tiles):
        for j, tile in enumerate(row):
            width = min(keys, n - j * keys) * cell
            height = min(queries, n - i * queries) * cell
            assert tile.width == pytest.approx(width, abs=0.06) and tile.height == pytest.approx(height, abs=0.06)
            if j:
                assert tile.get_left()[0] >= row[j - 1].get_right()[0] - 1e-6
            if i:
                assert tile.get_top()[1] <= scene.tiles[i - 1][j].get_bottom()[1] + 1e-6
    assert family_box(scene.matrix)[1] < family_box(scene.table)[0]


def test_the_blocks_on_chip_stand_in_sram_and_s_and_p_in_hbm(built) -> None:
    scene = built["MemoryRoutes", "default"]
    assert _inside(family_box(scene.tiled), family_box(scene.fast[0]))
    assert _inside(family_box(scene.plain), family_box(scene.slow[0]))
    assert _inside(family_box(scene.operands), family_box(scene.slow[0]))
