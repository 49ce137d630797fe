"""The numbers on screen, read back from rendered frames by an OCR engine, each in its own box.

Fixed, reviewed scenarios (:data:`FIXED`, the same every run; no random draw): the last frame of one
number-rich scene of every lecture of ``scenes.registry`` (and lecture 6's ScaleAndSoftmax, Scores and
WeightedSum) is rendered by manim at 1600 × 900, in processes of their own, two at a time
(``frame_reading.render_frames``). The render process also writes where each recorded number stands at the
end: every ``scene.shown`` entry whose mobject is on screen (in the family of the scene's mobjects, drawing
something) gives its fact, the text drawn and its box in pixels; a label's numbers ("k3", "head 2",
"≈ : rounded to 2 decimals", "÷ √2", "= 1.4", TeX's "z₂") are boxed each by its own glyphs.

Each box is cropped with a small margin, the ink outside it taken out, made black on white from the colour behind
it (so dimmed and coloured numbers, and numbers on a heat map's cells, read alike) and read by Tesseract, an OCR
engine that owes nothing to the project, as one line (``--psm 7``) of digits, ``-`` and ``.``
(``frame_reading.read_frame``); a lone digit, a ``−∞`` and a label whose glyphs do not match its text are read
without the whitelist (a label's numbers taken in order). Every number read must be
exactly what ``number_checks.expected_for`` derives for its fact from the scenario and ``attention_math`` alone:
the scene's record says where to look and which fact stands there, never what the number is. Every recorded
number on screen in the last frame is read, none left out; a read must agree the first time (no second reading,
no retries).

A planted wrong number fails: every weight ScaleAndSoftmax draws, three units of its last decimal too large
(planted in the render process), is read as planted and not as the core's.

The sweep behind the reliability figure is ``make readback`` (``tools/readback.py``, ``docs/readback.md``):
fresh random scenarios over every scene's last frame, every misread listed with its seed and its crop.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from frame_reading import SCENES, TESSERACT, Frame, describe, fresh_scenario, read_frame, render_frames
from number_checks import expected_text, lecture_checks
from reviewed_scenarios import REVIEWED
from scene_helpers import MODEL_SCENARIOS

from attention_math import Scenario, preset, self_attention
from scenes.registry import lectures

pytestmark = [
    pytest.mark.render,  # renders in subprocesses; the module's tests share one worker (conftest)
    pytest.mark.skipif(TESSERACT is None, reason="needs tesseract (Debian: tesseract-ocr tesseract-ocr-eng)"),
]

FIXED: dict[str, tuple[Callable[[], Scenario], int]] = {
    # lecture 6: the seed whose "= 1.4" under "÷ √2" the old whole-frame reading missed (3 tokens, 1 decimal)
    "ScaleAndSoftmax": (lambda: fresh_scenario(3607734077), 24),
    "Scores": (REVIEWED["lighthouse"], 30),  # 8 tokens, d_k 3, 2 decimals
    "WeightedSum": (REVIEWED["rivers"], 23),  # 3 tokens, two of them alike, d_v 2
    "MaskedScores": (lambda: preset("masked-dog"), 53),  # the masked lecture's own: −∞ above the diagonal
    "CausalHeads": (lambda: preset("two-heads"), 72),  # two heads masked, joined, times W_O
    "RealProjection": (MODEL_SCENARIOS["minilm-eight"], 78),  # all-MiniLM-L6-v2, layer 3, head 4, 8 WordPieces
    "LearnedWeights": (lambda: preset("learned"), 23),  # the training run's W_Q and W_K
    "OrderBlind": (lambda: preset("rope-dog"), 55),  # the sentence and its reverse
    "KVCacheSteps": (lambda: preset("grouped-dog"), 37),  # head 1 of four, the caches and the last step
    # a decoder's layer (SmolLM2, layer 3, 6 tokens): its group's weights, the output's first entries
    "GroupedHeads": (MODEL_SCENARIOS["smollm2-six"], 41),
    # the seed whose "softmax(s) · V = 1.4" the old reading missed the first number of
    "OnlineSoftmax": (lambda: fresh_scenario(3665305220), 27),
}
"""The frames read, by scene: the scenario (reviewed: each frame looked at, every number on it legible) and the
numbers on it at review (a frame that shows fewer fails: a number left out of the read)."""
FIXED.update({scene: (checks.scenarios[scenario], least) for checks in lecture_checks() if checks.read_back
              for scene, scenario, least in (checks.read_back,)})  # the lectures' own, declared in their folders
PLANTED = "ScaleAndSoftmax"


@pytest.fixture(scope="module")
def frames(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Frame]:
    jobs = {name: (name, make()) for name, (make, _) in FIXED.items()}
    return dict(render_frames(jobs, tmp_path_factory.mktemp("read-back")))


def test_every_lecture_has_a_frame_read() -> None:
    read = {name for name in FIXED}
    assert read <= set(SCENES)
    assert [lecture.name for lecture in lectures() if not read & set(lecture.scene_names)] == []


@pytest.mark.parametrize("last_frame", list(FIXED))
def test_every_number_on_the_last_frame_reads_as_the_core_computes_it(last_frame: str,
                                                                    frames: dict[str, Frame]) -> None:
    scene = last_frame
    readings = read_frame(frames[scene])
    least = FIXED[scene][1]
    assert len(readings) >= least, f"{scene}: {len(readings)} numbers on its last frame, {least} at review"
    misread = [describe(reading) for reading in readings if not reading.agrees]
    assert not misread, f"{scene} ({frames[scene].png}):\n" + "\n".join(misread)


def test_a_planted_wrong_weight_is_read_back_and_fails(tmp_path: Path) -> None:
    """Every weight ScaleAndSoftmax draws, three units of its last decimal too large: each box of a weight disagrees
    with the core, and reads as the planted number (so the OCR read the wrong ones, not noise)."""
    scenario = FIXED[PLANTED][0]()
    p, q = scenario.precision, scenario.query
    shift = 3 * 10.0 ** -p
    ((_, frame),) = render_frames({PLANTED: (PLANTED, scenario)}, tmp_path, plant=f"weights:{shift!r}")
    weights = [r for r in read_frame(frame) if [f.field for f in r.box.facts] == ["weights"]]
    core = self_attention(scenario.embeddings, scenario.w_query, scenario.w_key, scenario.w_value,
                          scaled=scenario.scaled).weights[q]
    planted = {j: expected_text(float(w) + shift, p) for j, w in enumerate(np.asarray(core, dtype=float))}
    assert sorted(r.box.facts[0].index[-1] for r in weights) == list(range(scenario.n_tokens))
    assert not [describe(r) for r in weights if r.agrees], "a planted weight was read as the core's"
    assert [r.found for r in weights] == [(planted[r.box.facts[0].index[-1]],) for r in weights], \
        "\n".join(describe(r) for r in weights)
