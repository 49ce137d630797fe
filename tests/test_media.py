"""The contact sheet: every tile holds a still, whatever the number of scenes."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from attention_explainer.media import contact_sheet

_BACKGROUND = (0x0F, 0x11, 0x15)
_COLOURS = [(200, 60, 60), (60, 200, 60), (60, 60, 200), (200, 200, 60), (200, 60, 200)]


def _stills(folder: Path, count: int) -> list[tuple[str, Path]]:
    stills = []
    for n in range(count):
        path = folder / f"{n}.png"
        Image.new("RGB", (320, 180), _COLOURS[n]).save(path)
        stills.append((f"{n + 1}. Scene", path))
    return stills


def _columns_with_stills(sheet: np.ndarray) -> int:
    """How many runs of columns along the first row of tiles show a still's colour."""
    row = sheet[12 + 20]  # inside the first row of stills
    coloured = np.array([tuple(pixel) in _COLOURS for pixel in map(tuple, row)])
    return int(np.count_nonzero(np.diff(coloured.astype(np.int8)) == 1) + coloured[0])


@pytest.mark.parametrize("count", [1, 2, 3, 4, 5])
def test_the_sheet_keeps_its_width_and_leaves_no_empty_tile(tmp_path: Path, count: int) -> None:
    output = tmp_path / "sheet.png"
    contact_sheet(_stills(tmp_path, count), output, columns=3, width=480)
    sheet = np.asarray(Image.open(output).convert("RGB"))
    assert sheet.shape[1] == 12 + 3 * (480 + 12)  # as wide as three stills a row, for one scene too
    assert _columns_with_stills(sheet) == min(count, 3)
    # nothing but the background right of the last still of the first row
    last_still = max(x for x, pixel in enumerate(map(tuple, sheet[32])) if pixel in _COLOURS)
    assert last_still >= sheet.shape[1] - 12 - 1
    # each still keeps its shape: 16:9 tiles
    heights = (sheet[:, 20] != _BACKGROUND).any(axis=1)
    tile_height = int(np.argmin(heights[12:]))  # the first still's rows, from the top padding down
    tile_width = (sheet.shape[1] - 12) // min(count, 3) - 12
    assert abs(tile_height - tile_width * 9 / 16) <= 1


def test_no_stills_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="no stills"):
        contact_sheet([], tmp_path / "sheet.png")
