"""MultiHead's last frame names every key in full where two cells' width holds it.

Its query rows lie under flat column labels each cut to one cell's width: "chased" showed as "cha…"
with room to spare. Where one cell cuts a token, every other label now sits a line lower, so each
may take two cells' width.
"""

from __future__ import annotations

import re
from itertools import pairwise
from pathlib import Path

import numpy as np
from manim import Text
from scene_helpers import SCENARIOS, dry_render, with_scenario

from scenes.multi_head.multi_head import MultiHead


def test_the_query_rows_name_every_key_in_full(tmp_path: Path) -> None:
    scenario = SCENARIOS["two-heads"]()
    scene = dry_render(with_scenario(MultiHead, scenario), tmp_path)
    shown = [m for top in scene.mobjects for m in top.get_family() if isinstance(m, Text)]
    row_y = float(np.median([m.get_y() for m in shown if re.fullmatch(r"\d\.\d\d", m.text) and m.get_y() > 0]))
    above = [m for m in shown if m.text in scenario.tokens and m.get_y() > row_y + 0.2]  # not the rows' own names
    columns = sorted(above, key=lambda m: m.get_x())
    assert [m.text for m in columns] == list(scenario.tokens) * scenario.n_heads  # in full, head after head
    assert not [m.text for m in shown if "…" in m.text]
    for head in range(scenario.n_heads):  # staggered: neighbours on two lines, none overlapping on its line
        labels = columns[head * scenario.n_tokens:(head + 1) * scenario.n_tokens]
        lines = {round(float(m.get_y()), 2) for m in labels}
        assert len(lines) == 2, lines
        for y in lines:
            boxes = sorted((m.get_left()[0], m.get_right()[0]) for m in labels if round(float(m.get_y()), 2) == y)
            assert all(right < left for (_, right), (left, _) in pairwise(boxes)), boxes
