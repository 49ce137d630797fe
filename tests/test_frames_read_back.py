"""The numbers on screen, read back from rendered frames, for a scenario nobody has seen.

Every run draws a fresh seed (printed in the output and in every failure; replay one with
``ATTENTION_READ_BACK_SEED=<seed>``) and from it a scenario within the scenes' limits: 2 to 6
tokens of random letters, d_in 2–6, d_k and d_v 1–4, any query, 1 to 3 decimals, random
embeddings and weights (``frame_reading.fresh_scenario``). The last frames of ScaleAndSoftmax,
Scores, WeightedSum, lecture 11's OnlineSoftmax and lecture 9's KVCacheSteps are rendered for it by
manim (``-s`` at 1600 × 900, in processes of their own, two at a time) and read by Tesseract, an OCR
engine that owes nothing to the project. The numbers it reads, line by line top to bottom and each line
left to right, must be exactly those :func:`attention_math.self_attention` computes for the scenario (or a
plain loop, below), rounded here to its precision:

- ScaleAndSoftmax: √d_k and m (the largest scaled score) in its head; per key, in the order of
  the bars, its score, score ÷ √d_k, exp(· − m), weight and running total; Σ of the exps;
- WeightedSum: per key its weight, its value vector and weight × value; then z;
- Scores: each key's score beside its bar, top to bottom, in that order among the frame's other
  numbers (some scenarios' last frame works the scores out beside the bars: q, K, the products;
  those are not checked).
- OnlineSoftmax: per key its score s and its tile's exp(s − m) (m the running maximum after its tile),
  worked out here from the inputs in plain numpy, tile by tile (``frame_reading.online_softmax_numbers``),
  in that order among the frame's other numbers. Not the tiles' m, rescale, ℓ and o (dimmed once passed,
  too faint to read), nor o / ℓ and softmax(s)·V: the first number after such a label was missed for seed
  3665305220. 61 fresh seeds read back (with o / ℓ) before this was committed; a planted score fails.
- KVCacheSteps: the last step's weights over the cached keys, top to bottom, worked out here in plain
  numpy, in that order among the frame's other numbers (the caches' numbers are not checked: their earlier
  rows are dimmed, and a minus in the keys' blue or the values' green was lost in 2 of 20 seeds). Its
  scenario is the seed's first draw it accepts: its two caches must fit beside its panel
  (``frame_reading.fresh_scenarios``). 61 fresh seeds read back before it was added.

Only numbers with a decimal point are read: token numbers ("k1", "q3"), sizes ("d_v = 1") and TeX
subscripts ("z₂ = Σ_j w₂ⱼ v_j") are left out (tiny, and whole numbers that a misread letter could
fake), and so is precision 0, whose numbers have no point. Tokens are letters only, so a number
read is a number of the trace.

The frame is made black ink on white (its brightest channel, thresholded; bars, rules and tall
brackets taken out: beside a bar Tesseract drops numbers) and read whole, without a whitelist
(which would turn the tokens' letters into digits); a word that looks like a number but does not
read as one (a 0 read as an O) is cut out, enlarged and read again as digits, ``-`` and ``.``
only. That is done in up to five ways (``frame_reading.READINGS``: two page segmentation modes,
enlargements), the lines of the readings matched by their height in the frame, and the frame
passes once every line has been read, by one reading or another, as exactly its part of the core's
numbers, no line left out (``frame_reading.read_line_by_line``): an OCR slip makes a reading of a
line disagree, it cannot make a wrong line agree. A planted wrong number (every weight the scene
draws moved by three units of the last decimal, in the render process) must fail, and be read as
planted.

Reliability, measured before this was committed: 40 fresh seeds (two runs of 20), every frame read
back, 111 of the 120 frames by the first reading, the rest by the second; the five frames an earlier
version failed (a number beside a bar, "= 1.4" read as "=14") pass too. Measure again with
``test_many_fresh_scenarios_read_back`` (marked slow).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from frame_reading import (
    LAST_FRAMES,
    SEED_VARIABLE,
    TESSERACT,
    draw_seed,
    fresh_scenario,
    fresh_scenarios,
    fresh_seed,
    online_softmax_numbers,
    read_back,
    read_back_problems,
    read_line_by_line,
    render_stills,
    shown,
    softmax_numbers,
    trace_of,
)

from attention_math import Scenario, scenario_to_toml

pytestmark = [
    pytest.mark.render,  # renders in subprocesses; the module's tests share one worker (conftest)
    pytest.mark.skipif(TESSERACT is None, reason="needs tesseract (Debian: tesseract-ocr tesseract-ocr-eng)"),
]

SEED = draw_seed()
PLANTED = "ScaleAndSoftmax"


@pytest.fixture(scope="module")
def scenario() -> Scenario:
    print(f"\nread-back seed {SEED} (replay with {SEED_VARIABLE}={SEED})")
    return fresh_scenario(SEED)


@pytest.fixture(scope="module")
def scenarios(scenario: Scenario) -> dict[str, Scenario]:
    made = fresh_scenarios(SEED, list(LAST_FRAMES))
    # a scene without limits of its own is drawn the seed's first scenario
    assert scenario_to_toml(made["ScaleAndSoftmax"]) == scenario_to_toml(scenario)
    return made


@pytest.fixture(scope="module")
def stills(scenarios: dict[str, Scenario], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return render_stills(scenarios, tmp_path_factory.mktemp("read-back"), list(LAST_FRAMES))


@pytest.mark.parametrize("last_frame", list(LAST_FRAMES))
def test_numbers_read_back_are_the_cores(last_frame: str, scenarios: dict[str, Scenario],
                                         stills: dict[str, Path]) -> None:
    problems = read_back_problems(SEED, scenarios, {last_frame: stills[last_frame]})
    assert not problems, "\n".join(problems)


def test_a_planted_wrong_weight_is_read_back_and_fails(scenario: Scenario,
                                                      tmp_path_factory: pytest.TempPathFactory) -> None:
    """Every weight ScaleAndSoftmax draws, three units of its last decimal too large: the frame disagrees
    with the core, and agrees with the planted numbers (so the OCR read the wrong ones, not noise)."""
    shift = 3 * 10.0 ** -scenario.precision
    folder = tmp_path_factory.mktemp("planted")
    png = render_stills(scenario, folder, [PLANTED], plant=f"weights:{shift!r}")[PLANTED]
    trace = trace_of(scenario)
    expected = softmax_numbers(scenario, trace)
    planted = list(expected)
    for j, weight in enumerate(np.asarray(trace.weights[scenario.query], dtype=float)):
        planted[2 + 5 * j + 3] = shown(weight + shift, scenario.precision)  # after √d_k and m, 4th of 5 a row
    core_agrees, _ = read_back(png, expected)
    assert not core_agrees, f"seed {SEED}: the planted weights were read as the core's ({SEED_VARIABLE}={SEED})"
    planted_agrees, tried = read_back(png, planted)
    assert planted_agrees, f"seed {SEED}: the planted weights {planted} were not read back; read {tried}"


def test_a_planted_wrong_score_of_the_online_softmax_is_read_back_and_fails(
        scenario: Scenario, tmp_path_factory: pytest.TempPathFactory) -> None:
    """Lecture 11's walk: every score OnlineSoftmax draws, three units of its last decimal too large, is read
    as planted and not as the core's."""
    shift = 3 * 10.0 ** -scenario.precision
    png = render_stills(scenario, tmp_path_factory.mktemp("planted-online"), ["OnlineSoftmax"],
                        plant=f"scores:{shift!r}")["OnlineSoftmax"]
    trace = trace_of(scenario)
    expected = online_softmax_numbers(scenario, trace)
    planted = list(expected)
    for j, score in enumerate(np.asarray(trace.scaled_scores[scenario.query], dtype=float)):
        planted[2 * j] = shown(score + shift, scenario.precision)  # per key its score, then its tile's exp
    core_agrees, _ = read_back(png, expected, in_order=True)
    assert not core_agrees, f"seed {SEED}: the planted scores were read as the core's ({SEED_VARIABLE}={SEED})"
    planted_agrees, tried = read_back(png, planted, in_order=True)
    assert planted_agrees, f"seed {SEED}: the planted scores {planted} were not read back; read {tried}"


def test_line_by_line_needs_every_line_read_right_by_some_reading() -> None:
    expected = ["1.0", "0.4", "-0.6", "0.2", "2.9"]
    first = [(10.0, ["1.0", "0.4"]), (50.0, ["-0.6"]), (90.0, ["2.9"])]  # missed a number of line 2
    second = [(12.0, ["1.0", "0.4"]), (49.0, ["-0.6", "0.2"]), (91.0, ["2.0"])]  # slipped on line 3
    assert not read_line_by_line([first], expected)
    assert not read_line_by_line([second], expected)
    assert read_line_by_line([first, second], expected)
    wrong = [(11.0, ["1.0", "0.4"]), (50.0, ["-0.6", "0.3"]), (90.0, ["2.9"])]
    assert not read_line_by_line([first, wrong], expected)  # no reading reads line 2 as the core has it
    extra = [(10.0, ["1.0", "0.4"]), (50.0, ["-0.6", "0.2"]), (70.0, ["5.5"]), (90.0, ["2.9"])]
    assert not read_line_by_line([extra], expected)  # a number the core does not have


def test_the_seed_is_fresh_unless_given(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(SEED_VARIABLE, "1234")
    assert draw_seed() == 1234
    monkeypatch.delenv(SEED_VARIABLE)
    assert len({draw_seed() for _ in range(5)}) > 1
    assert os.environ.get(SEED_VARIABLE) is None


SWEEP_VARIABLE = "ATTENTION_READ_BACK_RUNS"


@pytest.mark.slow
def test_many_fresh_scenarios_read_back(tmp_path: Path) -> None:
    """The sweep behind the reliability figure: fresh seeds (``ATTENTION_READ_BACK_RUNS``, 20 by default)
    one after another, every scene of ``LAST_FRAMES`` each; every failure is listed with its seed."""
    runs = int(os.environ.get(SWEEP_VARIABLE, "20"))
    failures = []
    for run in range(runs):
        seed = SEED if run == 0 else fresh_seed()  # the given seed first, when one is given
        scenarios = fresh_scenarios(seed, list(LAST_FRAMES))
        stills = render_stills(scenarios, tmp_path / str(seed), list(LAST_FRAMES))
        problems = read_back_problems(seed, scenarios, stills)
        print(f"run {run + 1}: seed {seed}: {'failed' if problems else 'read back'}")
        failures += problems
    assert not failures, f"{len(failures)} frames of {runs} scenarios not read back:\n" + "\n".join(failures)
