"""The learned lecture's training scenes with two training runs: every check, and their pictures measured.

TrainingSteps and LearnedWeights show the run of ``scenes.learned.LEARNED_TRAINING``, whatever the scenario, so
the shared scene tests build them with the lecture's run alone. Here each is built again with another run
(seed 5, 40 steps of 0.5: other weights, other keyframes), with the layout probe and the number proof, whose
sources (``tests/number_checks.DERIVED``) train that run again from its settings. Then what the probe cannot see:

* TrainingSteps: each chart's noun (its referent) is the label outlined, in its own chart; the loss written by
  the last point stands clear of the curve and of the axes; the summary clear of the charts;
* LearnedWeights: the outlined cells are the learned matrices' largest entries (W_Q's in size, W_K's largest
  and smallest), found here from a run trained again; the colours rise with the numbers on one scale;
  each number stands in its own cell.
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scene_helpers import Build, after_every_play, build_scene, family_box, load_scene_class, number_problems

from attention_math import preset, train_attention
from scenes import learned
from scenes.kit.labels import box_to_segment

pytestmark = pytest.mark.xdist_group("training-scenes-runs")  # one worker builds each (scene, run) once

RUNS = {"lecture": learned.LEARNED_TRAINING, "seed-5": (5, 40, 0.5)}
SCENES = {"TrainingSteps": "scenes.learned.training_steps", "LearnedWeights": "scenes.learned.learned_weights"}


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], tuple[Build, Any]]:
    done = {}
    for run, setting in RUNS.items():
        for name, module in SCENES.items():
            seen: list[Any] = []
            with pytest.MonkeyPatch.context() as patch, after_every_play(seen.append):
                patch.setattr(learned, "LEARNED_TRAINING", setting)
                build = build_scene(load_scene_class(module, name), preset("learned"),
                                    Path(tmp_path_factory.mktemp(f"{name}-{run}")), f"{name} [{run}]")
                # the proof reads the run's settings when it derives: still patched here
                problems = number_problems(build) if build.error is None else [build.error]
            done[name, run] = build, (seen[-1] if seen else None), problems
    return done


CASES = [(name, run) for name in SCENES for run in RUNS]


@pytest.mark.parametrize(("name", "run"), CASES)
def test_every_number_and_place_holds_for_either_run(built, name: str, run: str) -> None:
    build, _, problems = built[name, run]
    layout = [f"play {play.number}: {problem}" for play in build.plays
              for problem in (*play.outside, *play.overlaps, *play.small, *play.unrecorded, *play.misplaced)]
    assert not problems + layout, "\n".join(problems + layout)


@pytest.mark.parametrize("run", RUNS)
def test_each_chart_outlines_its_own_noun(built, run: str) -> None:
    _, scene, _ = built["TrainingSteps", run]
    for row, referent, mark in zip(scene.rows_now, scene.run.referents, scene.targets, strict=True):
        label = row.chart.labels[referent]
        assert np.allclose(mark.get_center()[:2], label.get_center()[:2], atol=0.02)
        others = [row.chart.row_y(j) for j in range(len(row.chart.labels)) if j != referent]
        assert all(not mark.get_bottom()[1] < y < mark.get_top()[1] for y in others)


@pytest.mark.parametrize("run", RUNS)
def test_the_last_loss_stands_clear_of_the_curve_and_the_summary_of_the_charts(built, run: str) -> None:
    _, scene, _ = built["TrainingSteps", run]
    box = family_box(scene.loss_label)
    axes, losses = scene.axes, scene.run.step_losses
    points = [axes.c2p(t, float(losses[t])) for t in range(scene.run.steps + 1)]
    assert min(box_to_segment(box, a, b) for a, b in itertools.pairwise(points)) > 0.02
    assert box[2] > axes.c2p(0, 0)[1]  # above the step axis
    summary = family_box(scene.summary)
    for row in scene.rows_now:
        chart = family_box(row.chart)
        assert summary[3] < chart[2] or summary[2] > chart[3] or summary[0] > chart[1] or summary[1] < chart[0]


def _largest(run: Any) -> list[tuple[str, int, int]]:
    """The learned matrices' entries the scene should outline, found from a run trained again."""
    query, key = run.w_query[-1], run.w_key[-1]
    picks = [("w_query", np.argmax(np.abs(query))), ("w_key", np.argmax(key)), ("w_key", np.argmin(key))]
    return [(field, *map(int, np.unravel_index(int(k), query.shape))) for field, k in picks]


@pytest.mark.parametrize("run", RUNS)
def test_the_outlined_cells_are_the_learned_largest_entries(built, run: str) -> None:
    _, scene, _ = built["LearnedWeights", run]
    again = train_attention(RUNS[run][0], steps=RUNS[run][1], learning_rate=RUNS[run][2])
    maps = {board.field: board for board in scene.maps}
    for mark, (field, a, c) in zip(scene.marks, _largest(again), strict=True):
        assert np.allclose(mark.get_center()[:2], maps[field].grid.cell_center(a, c)[:2], atol=0.02), (field, a, c)


@pytest.mark.parametrize("run", RUNS)
def test_colours_rise_with_the_numbers_and_each_number_sits_in_its_cell(built, run: str) -> None:
    _, scene, _ = built["LearnedWeights", run]
    for board in scene.maps:
        learned = np.asarray(getattr(scene.run, board.field))[-1]
        opacity = np.array([[square.get_fill_opacity() for square in row] for row in board.grid.squares])
        order = np.argsort(learned, axis=None)
        assert np.all(np.diff(opacity.ravel()[order]) >= -1e-9), board.field
        for a, row in enumerate(board.numbers):
            for c, number in enumerate(row):
                square = board.grid.squares[a][c]
                assert abs(number.get_y() - square.get_y()) < square.height / 2
                assert square.get_left()[0] < number.get_left()[0] and number.get_right()[0] < square.get_right()[0]
