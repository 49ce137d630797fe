"""Scores' picture, measured where the general layout checks let things through.

softmax-saturation's query is 710 long against keys of length 1: drawn to scale, both keys and both
shadows sat within a few pixels of the origin and the bars (500 and 505) had no length. Here the
query is drawn shorter (its length written beside it, from the core) so the keys fill the plane. And
a picture that leaves much of the width empty ends with the arithmetic that made the scores beside
it, not with the chart's names pushed to the frame's left edge to span it.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from manim import Arrow, Mobject
from scene_helpers import SCENARIOS, dry_render, with_scenario

from attention_math import format_number
from attention_math.alignment import alignment
from scenes.base import ExplainerScene
from scenes.self_attention.scores import LONG_QUERY, Scores

pytestmark = pytest.mark.xdist_group("scores-geometry")  # one worker builds each scenario once

_ENDS: dict[str, ExplainerScene] = {}


def finished(name: str, folder: Path) -> ExplainerScene:
    """The scene after a dry run of scenario ``name`` (once per module)."""
    if name not in _ENDS:
        _ENDS[name] = dry_render(with_scenario(Scores, SCENARIOS[name]()), folder)
    return _ENDS[name]


def _arrow_of(scene: ExplainerScene, field: str, *row: int) -> Arrow:
    """The plotted arrow whose coordinates are ``field[row]`` (the last one drawn)."""
    found = [item.mobject for item in scene.plotted
             if isinstance(item.mobject, Arrow) and item.coordinates[0].field == field
             and tuple(item.coordinates[0].index[:-1]) == row]
    assert found, f"no arrow plotted for {field}{row}"
    return found[-1]


def _length(mob: Mobject) -> float:
    return float(np.linalg.norm(mob.get_end() - mob.get_start()))


def _on_screen(scene: ExplainerScene) -> set[int]:
    return {id(m) for top in scene.mobjects for m in top.get_family()}


@pytest.mark.parametrize("name", ["saturation", "default", "two", "five-whole"])
def test_keys_are_never_specks_beside_a_long_query(name: str, tmp_path: Path) -> None:
    scene = finished(name, tmp_path)
    scenario = SCENARIOS[name]()
    step = scenario.trace().query_step(scenario.query)
    query = _arrow_of(scene, "query")
    keys = [_arrow_of(scene, "keys", j) for j in range(scenario.n_tokens)]
    longest_key = max(_length(key) for key in keys)
    assert longest_key > 1.0, f"{name}: the longest key is drawn {longest_key:.2f} units long"
    assert _length(query) <= LONG_QUERY * longest_key * 1.01
    norm = format_number(alignment(step).query_norm, scenario.precision)
    written = [shown for shown in scene.shown if shown.fact.field == "query_norm"]
    if np.linalg.norm(step.query[:2]) > LONG_QUERY * max(np.linalg.norm(step.keys[:, :2], axis=1)):
        assert [shown.text for shown in written] == [norm]  # drawn shorter: its true length is written
        assert id(written[0].mobject) in _on_screen(scene)
    else:
        assert not written
        drawn = query.get_end() - query.get_start()
        unit = scene.plotted[0].axes.c2p(1, 0) - scene.plotted[0].axes.c2p(0, 0)
        assert np.isclose(np.linalg.norm(drawn[:2]), np.linalg.norm(step.query[:2]) * np.linalg.norm(unit), rtol=0.02)


def test_a_narrow_picture_ends_beside_the_arithmetic_of_its_scores(tmp_path: Path) -> None:
    """Two tokens: the plane is tall and thin; the last frame shows K, q and every product and score."""
    scene = finished("two", tmp_path)
    scenario = SCENARIOS["two"]()
    step = scenario.trace().query_step(scenario.query)
    visible = _on_screen(scene)
    products = sorted(shown.text for shown in scene.shown
                      if shown.fact.field == "products" and id(shown.mobject) in visible)
    assert len(products) == step.products.size
    scores_seen = [shown for shown in scene.shown if shown.fact.field == "scores" and id(shown.mobject) in visible]
    assert len(scores_seen) == 2 * scenario.n_tokens  # at the bars, and at the end of each row of the board
    board = [shown.mobject for shown in scene.shown if shown.fact.field == "products" and id(shown.mobject) in visible]
    chart = [shown.mobject for shown in scores_seen]
    assert max(m.get_right()[0] for m in board) < min(m.get_left()[0] for m in chart)  # the board left of the chart
    glyphs = [glyph for m in board for glyph in m.family_members_with_points()]
    assert all(glyph.get_fill_opacity() == 1.0 for glyph in glyphs)  # at full ink: a slide, not a dimmed working


def test_without_room_for_the_board_the_chart_names_span_the_frame(tmp_path: Path) -> None:
    """Three tokens: the board would be drawn below the font floor beside the picture, so the summary keeps
    the picture where it was and the chart's names move to the frame's left edge."""
    scene = finished("three", tmp_path)
    visible = _on_screen(scene)
    assert not [shown.text for shown in scene.shown if shown.fact.field == "products" and id(shown.mobject) in visible]
    scenario = SCENARIOS["three"]()
    names = [m for top in scene.mobjects for m in top.get_family()
             if getattr(m, "text", "").startswith("k1") and len(m.text) > 2]  # "k1 the" (Text drops spaces)
    assert names and min(m.get_left()[0] for m in names) == pytest.approx(-6.6, abs=0.01), scenario.tokens


def test_the_planes_note_stays_left_of_the_chart(tmp_path: Path) -> None:
    """d_k 3, two tokens (the read-back's seed 2676228798): the frame's invisible unit line reached far right, and
    "dimensions 1 and 2 of dₖ = 3 (the bars use all)", centred on the frame, ran into the chart's title, its first
    bar's label and its score. The note stays over the plane, left of the chart, and no text overlaps another."""
    from frame_reading import fresh_scenario
    from scene_helpers import overlapping_texts, text_of

    scenario = fresh_scenario(2676228798)
    assert (scenario.n_tokens, scenario.d_k) == (2, 3)  # the scenario the fault was found with
    scene = dry_render(with_scenario(Scores, scenario), tmp_path)
    texts = [m for top in scene.mobjects for m in top.get_family() if text_of(m)]
    note = [m for m in texts if "the bars use all" in text_of(m)]
    labels = [m for m in texts if text_of(m).startswith("k1 ")]
    assert note and labels, "the plane's note and the chart's first label are on screen at the end"
    assert note[0].get_right()[0] < labels[0].get_left()[0]
    assert overlapping_texts(scene.mobjects) == []
