"""MultiHead's last frame names every key in full where two cells' width holds it.

Its query rows lie under flat column labels each cut to one cell's width: "chased" showed as "cha…"
with room to spare. Where one cell cuts a token, every other label now sits a line lower, so each
may take two cells' width.
"""

from __future__ import annotations

from itertools import pairwise
from pathlib import Path

from manim import Text, tempconfig
from scene_helpers import DRY_RUN_SETTINGS, SCENARIOS, no_pixels, with_scenario

from scenes.multi_head import MultiHead


def test_the_query_rows_name_every_key_in_full(tmp_path: Path) -> None:
    scenario = SCENARIOS["two-heads"]()
    with tempconfig({**DRY_RUN_SETTINGS, "media_dir": str(tmp_path)}), no_pixels():
        scene = with_scenario(MultiHead, scenario)(skip_animations=True)
        scene.render()
    shown = [m for top in scene.mobjects for m in top.get_family() if isinstance(m, Text)]
    for token in set(scenario.tokens):
        labels = [m for m in shown if m.text == token]
        assert len(labels) >= scenario.n_heads * scenario.tokens.count(token), (token, sorted(m.text for m in shown))
    assert not [m.text for m in shown if "…" in m.text]
    # staggered: neighbours on two lines, no two labels of a line overlapping
    for head in range(scenario.n_heads):
        row = [m for m in shown if m.text in scenario.tokens][head * scenario.n_tokens:(head + 1) * scenario.n_tokens]
        ys = {round(float(m.get_y()), 2) for m in row}
        assert len(ys) == 2, ys
        for line in ys:
            boxes = sorted((m.get_left()[0], m.get_right()[0]) for m in row if round(float(m.get_y()), 2) == line)
            assert all(right < left for (_, right), (left, _) in pairwise(boxes)), boxes
