"""The bench's report: its table and the block of docs/speed.md it fills (the timing itself runs in CI
as `make bench-quick`; no test asserts a time)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from attention_math import self_attention
from bench.__main__ import BENCH_END, BENCH_START, SPEED_PAGE, markdown, math_core, numpy_one_liner, update_docs


def _results(peer: dict | None = None) -> dict:
    cold = {
        "wall_s": 40.0, "cpu_s": 75.0, "peak_rss_mib": 300.0, "video_s": 160.0, "wall_per_video_s": 0.25,
        "floor_wall_s": 20.0, "floor_ratio": 2.0, "floor_cpu_s": 38.0, "floor_cpu_ratio": 1.97,
        "tex_files": 20, "tex_calls": 40, "tex_s": 9.5,
    }
    return {
        "machine": {
            "date": "2026-11-29 12:00 UTC", "cpu": "Test CPU", "cores": 2, "memory": "24 GiB",
            "python": "3.11.7", "manim": "0.21.0", "numpy": "2.3.0",
        },
        "quick": False,
        "runs": 3,
        "cold": {"l": cold, "h": {**cold, "wall_s": 500.0, "floor_ratio": 2.5}},
        "warm": {
            "unchanged_s": 1.2, "unchanged_rendered": [], "one_number_s": 20.0,
            "one_number_change": "W_V[1][1] + 0.1", "one_number_rendered": ["Projection", "WeightedSum"],
        },
        "math": [{"n": 4096, "d": 64, "attention_math_ms": 110.0, "numpy_one_liner_ms": 100.0, "ratio": 1.1}],
        "peer": peer or {"skipped": "llmanim is not installed"},
    }


def test_the_table_reports_every_measure_and_marks_each_target() -> None:
    table = markdown(_results({"quality": "l", "wall_s": 30.0, "video_s": 50.0, "wall_per_video_s": 0.6}))
    for expected in (
        "| wall time (s) | 40.0 | 500.0 |",
        "| lecture / floor (median of rounds) | 2.00 | 2.50 |",
        "| lecture / floor in CPU time (median of rounds) | 1.97 | 1.97 |",
        "| nothing changed | 1.2 | none |",
        "| one number changed (W_V[1][1] + 0.1) | 20.0 | Projection, WeightedSum |",
        "| trace with every intermediate | 4096 | 110.000 | 100.000 | 1.10 |",
        "| LLManim 0.1.3, its three attention demo scenes | 50.0 | 30.0 | 0.60 |",
        "cold -ql ≤ 45 s ✓",
        "cold -qh ≤ 8 min ✗",
        "lecture / floor at -qh ≤ 2.0 ✗",
        "wall/video ≤ LLManim's ✓",
    ):
        assert expected in table, expected


def test_the_lecture_hall_options_get_a_row_each_with_their_target() -> None:
    results = _results()
    results["variants"] = {
        "scenes": "all",
        "runs": 3,
        "rows": {
            "plain": {"wall_s": 40.0, "cpu_s": 70.0, "video_s": 200.0, "added": 0.0, "added_cpu": 0.0},
            "--voice": {"wall_s": 56.0, "cpu_s": 105.0, "video_s": 330.0, "added": 0.4, "added_cpu": 0.5},
            "--slides": {"wall_s": 44.0, "cpu_s": 77.0, "video_s": 200.0, "added": 0.1, "added_cpu": 0.1},
        },
    }
    table = markdown(results)
    assert "| --voice | 56.0 | 105.0 | 330.0 | +40 % | +50 % | ≤ +30 % ✗ |" in table
    assert "| --slides | 44.0 | 77.0 | 200.0 | +10 % | +10 % | ≤ +15 % ✓ |" in table
    assert "--voice adds ≤ 30 % ✗" in table and "--slides adds ≤ 15 % ✓" in table


def test_a_16_token_sentence_and_the_multi_head_lecture_get_a_row_each_with_their_target() -> None:
    results = _results()
    results["sizes"] = {
        "runs": 3,
        "rows": {
            "16 tokens, the whole lecture": {"wall_s": 80.0, "cpu_s": 150.0, "video_s": 260.0},
            "the multi-head lecture (two heads)": {"wall_s": 50.0, "cpu_s": 60.0, "video_s": 40.0},
        },
    }
    table = markdown(results)
    assert "| 16 tokens, the whole lecture | 80.0 | 150.0 | 260.0 | ≤ 90 s ✓ |" in table
    assert "| the multi-head lecture (two heads) | 50.0 | 60.0 | 40.0 | ≤ 45 s ✗ |" in table
    assert "16 tokens, the whole lecture ≤ 90 s ✓" in table


def test_the_lectures_side_by_side_get_a_row_each_with_their_ratio_to_lecture_6() -> None:
    results = _results()
    rows = {"self-attention": (40.0, 70.0, 200.0), "masked": (50.0, 80.0, 200.0), "multi-head": (30.0, 50.0, 100.0)}
    results["lectures"] = {"scenes": "all", "runs": 1, "rows": {
        name: {"wall_s": wall, "cpu_s": cpu, "video_s": video, "wall_per_video_s": wall / video,
               "cpu_per_video_s": cpu / video, "ratio": wall / video / 0.2, "cpu_ratio": cpu / video / 0.35}
        for name, (wall, cpu, video) in rows.items()}}
    table = markdown(results)
    assert "| the self-attention lecture | 40.0 | 70.0 | 200.0 | 0.20 | 1.00 | 1.00 |  |" in table
    assert "| the masked lecture | 50.0 | 80.0 | 200.0 | 0.25 | 1.25 | 1.14 | ≤ 1.2× ✗ |" in table
    assert "| the multi-head lecture | 30.0 | 50.0 | 100.0 | 0.30 | 1.50 | 1.43 | ≤ 1.2× ✗ |" in table
    assert "the masked lecture's wall/video ≤ 1.2× lecture 6's ✗" in table
    results["lectures"]["rows"]["multi-head"]["ratio"] = 1.1
    assert "the multi-head lecture's wall/video ≤ 1.2× lecture 6's ✓" in markdown(results)


def test_a_run_of_some_measures_reports_those_alone() -> None:
    results = _results()
    del results["math"], results["peer"], results["warm"]
    results["cold"] = {}
    table = markdown(results)
    assert "attention_math" not in table and "| the default lecture, cold" not in table


def test_a_missing_peer_is_a_note_not_a_row() -> None:
    assert "LLManim comparison skipped: llmanim is not installed." in markdown(_results())


def test_the_speed_page_block_is_replaced_and_nothing_else(tmp_path: Path) -> None:
    page = tmp_path / "speed.md"
    page.write_text(f"before\n{BENCH_START}\nold table\n{BENCH_END}\nafter\n", encoding="utf-8")
    update_docs("| new |\n", page)
    assert page.read_text(encoding="utf-8") == f"before\n{BENCH_START}\n| new |\n{BENCH_END}\nafter\n"
    page.write_text("no markers\n", encoding="utf-8")
    with pytest.raises(SystemExit, match="bench:start"):
        update_docs("| new |\n", page)


def test_the_table_lives_in_docs_speed_md_and_not_in_the_readme() -> None:
    """``make bench`` (``--docs``) writes into docs/speed.md; the README keeps no copy to go stale."""
    assert SPEED_PAGE.name == "speed.md" and SPEED_PAGE.parent.name == "docs"
    page = SPEED_PAGE.read_text(encoding="utf-8")
    assert page.count(BENCH_START) == 1 and page.count(BENCH_END) == 1
    assert page.index(BENCH_START) < page.index(BENCH_END)
    readme = (SPEED_PAGE.parents[1] / "README.md").read_text(encoding="utf-8")
    assert BENCH_START not in readme and BENCH_END not in readme


def test_the_math_rows_compare_equal_results() -> None:
    rng = np.random.default_rng(0)
    x, *w = (rng.standard_normal(shape) for shape in ((6, 4), (4, 3), (4, 3), (4, 5)))
    np.testing.assert_allclose(self_attention(x, *w).context, numpy_one_liner(x, *w))
    rows = math_core([4, 16], runs=1, d=8)
    assert [row["n"] for row in rows] == [4, 16]
    assert all(row["ratio"] > 0 for row in rows)


def test_the_course_row_compares_the_course_with_render_and_marks_its_budget(tmp_path: Path) -> None:
    import tomllib

    from attention_explainer.course_file import load_course
    from bench.course import BUNDLES, course_file

    results = _results()
    results["course"] = {
        "runs": 2, "bundles": 4, "scenes": ["scores", "softmax"], "course_wall_s": 99.0, "course_cpu_s": 53.0,
        "render_wall_s": 90.0, "render_cpu_s": 54.0, "ratio": 1.1 + 1e-9, "ratios": [1.0, 1.2],
        "overhead": {"tasks": 200, "median_ms": 19.8, "p90_ms": 30.0},
    }
    table = markdown(results)
    assert "| `course`, a local cluster of 2 workers | 99.0 | 53.0 | 1.10 | ≤ 1.1× ✗ |" in table
    assert "| `render`, one bundle after another | 90.0 | 54.0 | | |" in table
    assert "19.8 ms (median of 200; 90th centile 30.0 ms)" in table
    assert "a course on 2 workers ≤ 1.1× render one by one ✗" in table
    text = course_file(("scores",))
    assert len(tomllib.loads(text)["bundle"]) == len(BUNDLES) == 4
    path = tmp_path / "course.toml"
    path.write_text(text, encoding="utf-8")
    assert [entry.name for entry in load_course(path).entries] == ["b1", "b2", "b3", "b4"]


def test_the_scale_row_puts_one_and_two_workers_side_by_side_and_splits_the_course_as_amdahl_does(
    tmp_path: Path,
) -> None:
    import json

    from bench.scale import amdahl, task_seconds

    results = _results()
    results["scale"] = {
        "runs": 1, "scenes": ["scores"], "tasks": 4, "wall_s": {"1": 80.0, "2": 50.0}, "cpu_s": {"1": 40.0, "2": 42.0},
        "ratio": 1.6, "ratios": [1.6], "load": [[7.0, 8.0], [8.0, 9.5]], "task_median_s": 15.0, "serial_s": 20.0,
        "own_sessions": {"wall_s": {"1": 78.0, "2": 44.0}, "ratio": 78.0 / 44.0, "ratios": [78.0 / 44.0]},
        "parallel_s": 60.0, "longest_s": 16.0, "projected": {str(n): amdahl(20.0, 60.0, n, 16.0) for n in (2, 10, 100)},
    }  # fmt: skip
    table = markdown(results)
    assert "| `course --workers 2` | 50.0 | 42.0 | 1.60 | ≥ 1.7× ✗ |" in table
    assert "| 2 workers, each in a session of its own | 44.0 | | 1.77 | ≥ 1.7× ✓ |" in table
    assert "projected speed-up of this course on N workers 2: 1.6× · 10: 2.2× · 100: 2.2×" in table
    assert "load average 7.0 to 9.5" in table
    assert "a course on 2 workers ≥ 1.7× on 1 ✗ (in sessions of their own ✓)" in table
    for name, seconds in (("b1", [3.5, None]), ("b2", [2.0])):
        (tmp_path / name).mkdir()
        scenes = [{"name": f"S{i}", "render_s": s} for i, s in enumerate(seconds)]
        (tmp_path / name / "manifest.json").write_text(json.dumps({"scenes": scenes}), encoding="utf-8")
    assert task_seconds(tmp_path) == [3.5, 2.0]


def test_the_training_row_times_the_lectures_run_against_one_trace() -> None:
    from bench.__main__ import training_table, training_time

    row = training_time(runs=1)
    assert row["ratio"] > 0 and row["train_ms"] > 0 and row["trace_ms"] > 0
    lines = training_table(row)
    assert lines[-1].startswith("| training time |") and f"{row['ratio']:.1f} |" in lines[-1]
    assert training_table(None) == []


def test_the_forward_row_says_the_real_models_pass_against_one_head() -> None:
    from bench.__main__ import FORWARD_SENTENCES, forward_table

    row = {"tokens": 16, "forward_ms": 120.0, "head_ms": 0.25, "ratio": 480.0}
    lines = forward_table(row)
    assert lines[1].startswith("| the real model | encode(), 16 WordPieces (ms) |")
    assert lines[-1] == "| forward pass | 120.000 | 0.250 | 480.0 |"
    assert forward_table({"skipped": "the model extra is not installed"})[-1].endswith("is not installed.")
    assert forward_table(None) == []
    assert len(set(FORWARD_SENTENCES)) > 32  # more than attention_math.minilm keeps: each pass computed


def test_the_decoder_rows_put_each_lecture_on_smollm2_beside_its_preset() -> None:
    import argparse

    from attention_explainer.render_options import add_render_arguments
    from bench.decoder import BUDGET, LECTURES, MODEL_FLAGS
    from scenes.registry import decoder_lectures

    results = _results()
    rows = {lecture: {"preset_wall_s": 20.0, "preset_cpu_s": 30.0, "preset_video_s": 100.0, "model_wall_s": 30.0,
                      "model_cpu_s": 40.0, "model_video_s": 110.0, "ratio": 1.3636} for lecture in LECTURES}
    rows["rope"]["ratio"] = 1.1
    results["decoder"] = {"runs": 1, "scenes": "all", "rows": rows}
    table = markdown(results)
    assert f"| the inference lecture | 20.0 | 100.0 | 30.0 | 110.0 | 1.36 | ≤ {BUDGET}× ✗ |" in table
    assert f"the rope lecture on SmolLM2 ≤ {BUDGET}× its preset per video second ✓" in table
    assert "the masked lecture on SmolLM2 ≤ 1.3× its preset per video second ✗" in table
    assert set(LECTURES) <= set(decoder_lectures())
    parser = argparse.ArgumentParser()
    add_render_arguments(parser)
    args = parser.parse_args(["--lecture", "inference", *MODEL_FLAGS])  # flags render takes
    assert (args.model, args.layer, args.head) == ("smollm2", 14, 2)
