"""The ``attention-explainer`` command: a scenario in, a lecture bundle out.

(Every ``--format`` and ``--transparent``, with the alpha they keep: ``tests/test_formats.py``; the deck,
the page, the voice and the notebook: ``tests/test_lecture_hall.py``.)
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import av
import numpy as np
import pytest
import srt
from scene_helpers import clean_environment

from attention_explainer.bundle import bundle_is_current
from attention_explainer.media import probe
from attention_explainer.outputs.handout import read_matrix_csv
from attention_explainer.plan import BundleSettings, work_folder
from attention_explainer.selection import SCENES
from attention_math import PRESETS, Scenario, preset, scaling_spread
from scenes.self_attention.handout import HANDOUT_MATRICES

pytestmark = pytest.mark.render
FPS = 5

SENTENCE = "the cat sat"
SEED = 4
ROOT = Path(__file__).resolve().parents[1]


def _cli(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "attention_explainer", *args], cwd=cwd, capture_output=True, text=True, timeout=900
    )


@pytest.fixture(scope="module")
def scenario() -> Scenario:
    return Scenario.from_sentence(SENTENCE, seed=SEED)


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("bundle") / "cat"
    # -ql's size at 5 frames a second (a third of the frames; -ql's own 15 is the lecture hall's)
    result = _cli("render", "--sentence", SENTENCE, "--seed", str(SEED), "--quality", "l", "--fps", str(FPS),
                  "--out", str(out))
    assert result.returncode == 0, result.stderr
    return out


def _manifest(out: Path) -> dict:
    return json.loads((out / "manifest.json").read_text(encoding="utf-8"))


def test_every_promised_file_exists_and_is_not_empty(bundle: Path) -> None:
    expected = ["lecture.mp4", "lecture.srt", "lecture.vtt", "narration.md", "manifest.json", "index.html"]
    expected += ["stills/contact-sheet.png", "handout/notebook.ipynb"]
    for spec in SCENES:
        expected += [f"{spec.stem}.mp4", f"{spec.stem}.srt", f"{spec.stem}.vtt", f"stills/{spec.stem}.png"]
    for stem, *_ in HANDOUT_MATRICES:
        expected += [f"handout/{stem}.csv", f"handout/{stem}.tex"]
    expected.append("handout/walkthrough.md")
    for name in expected:
        path = bundle / name
        assert path.is_file() and path.stat().st_size > 0, name
    listed = {entry["path"] for entry in _manifest(bundle)["files"]}
    assert set(expected) - {"manifest.json"} <= listed
    # nothing left under a temporary name
    assert not [p for p in bundle.rglob("*.tmp-*")]


def test_the_whole_lecture_shows_the_contact_sheet_until_played(bundle: Path) -> None:
    page = (bundle / "index.html").read_text(encoding="utf-8")
    posters = re.findall(r'<video id="([^"]+)"[^>]* poster="([^"]+)"', page)
    assert posters == [("clip-lecture", "stills/contact-sheet.png"),
                       *((f"clip-{spec.stem}", f"stills/{spec.stem}.png") for spec in SCENES)]
    assert all((bundle / poster).is_file() for _, poster in posters)


def test_clips_and_lecture_have_the_quality_and_the_lecture_is_their_sum(bundle: Path) -> None:
    total = 0.0
    for spec in SCENES:
        info = probe(bundle / f"{spec.stem}.mp4")
        assert (info.width, info.height) == (854, 480)
        assert info.fps == pytest.approx(FPS, abs=0.01)
        assert info.duration > 1
        total += info.duration
    lecture = probe(bundle / "lecture.mp4")
    assert (lecture.width, lecture.height) == (854, 480)
    assert lecture.fps == pytest.approx(FPS, abs=0.01)
    assert lecture.duration == pytest.approx(total, abs=1 / FPS)
    for entry in _manifest(bundle)["files"]:
        if entry["kind"] in {"clip", "lecture"}:
            assert entry["width"] == 854 and entry["height"] == 480 and entry["duration"] > 0


def _shown_numbers(scenario: Scenario) -> set[str]:
    """Every number the trace (and the scene-1 and aside presets, and WhyScale's sampler) can show, as on screen."""
    values: list[float] = []
    sources = [(scenario, scenario.precision), (preset("raw-dot-product"), 2), (preset("softmax-saturation"), 3)]
    for source, _ in sources:
        trace = source.trace()
        for name in (
            "embeddings",
            "w_query",
            "w_key",
            "w_value",
            "queries",
            "keys",
            "values",
            "scores",
            "scaled_scores",
            "weights",
            "context",
        ):
            values += np.asarray(getattr(trace, name)).ravel().tolist()
        for i in range(trace.n_tokens):
            step = trace.query_step(i)
            values += step.products.ravel().tolist() + step.exps.tolist() + step.weighted_values.ravel().tolist()
            values += [step.sqrt_d_k, step.exp_sum, step.max_score, float(np.sum(step.weights))]
    spread = scaling_spread(seed=0)  # WhyScale's sampler, seed 0 (scenes/self_attention/why_scale.py)
    for name in ("raw_std", "scaled_std", "sqrt_dims", "row_scores", "row_scaled_scores", "unscaled_weights",
                 "scaled_weights"):
        values += np.asarray(getattr(spread, name)).ravel().tolist()
    texts = set()
    for value in values:
        for precision in range(0, 4):
            texts.add(f"{abs(value):.{precision}f}")
    return texts


def test_subtitles_parse_and_their_numbers_come_from_the_trace(bundle: Path, scenario: Scenario) -> None:
    known = _shown_numbers(scenario)
    lecture = list(srt.parse((bundle / "lecture.srt").read_text(encoding="utf-8")))
    clips = []
    for spec in SCENES:
        subs = list(srt.parse((bundle / f"{spec.stem}.srt").read_text(encoding="utf-8")))
        assert subs, spec.name
        clips += subs
    assert [s.content for s in lecture] == [s.content for s in clips]
    decimals = re.compile(r"\d+\.\d+")
    found = 0
    for sub in lecture:
        for number in decimals.findall(sub.content):
            found += 1
            assert number in known, f"{number!r} in {sub.content!r} is not a trace number"
    assert found >= 5
    weights = {f"{w:.{scenario.precision}f}" for w in scenario.query_step().weights}
    assert weights & {n for sub in lecture for n in decimals.findall(sub.content)}


def test_handout_csvs_round_trip_to_the_trace(bundle: Path, scenario: Scenario) -> None:
    trace = scenario.trace()
    for stem, field, _, tokens_as_rows, _ in HANDOUT_MATRICES:
        labels, _, values = read_matrix_csv((bundle / "handout" / f"{stem}.csv").read_text(encoding="utf-8"))
        np.testing.assert_array_equal(np.array(values), getattr(trace, field))
        if tokens_as_rows:
            assert labels == list(scenario.tokens)
    assert "\\begin{tabular}" in (bundle / "handout" / "weights.tex").read_text(encoding="utf-8")


def test_narration_has_every_caption_with_a_timestamp(bundle: Path) -> None:
    narration = (bundle / "narration.md").read_text(encoding="utf-8")
    for sub in srt.parse((bundle / "lecture.srt").read_text(encoding="utf-8")):
        assert sub.content.replace("\n", " ") in narration
    assert re.search(r"\[\d\d:\d\d\.\d\]", narration)


def test_a_second_run_with_nothing_changed_renders_nothing(bundle: Path) -> None:
    before = (bundle / "lecture.mp4").stat().st_mtime_ns
    result = _cli("render", "--sentence", SENTENCE, "--seed", str(SEED), "--quality", "l", "--fps", str(FPS),
                  "--out", str(bundle))
    assert result.returncode == 0, result.stderr
    manifest = _manifest(bundle)
    assert manifest["rendered"] == []
    assert (bundle / "lecture.mp4").stat().st_mtime_ns == before


def test_a_bundle_that_needs_no_render_is_served_without_manim(bundle: Path, scenario: Scenario) -> None:
    """Every clip is there, made from this scenario, these settings and this code: the command
    neither renders nor imports manim (its clips were checked when they were made)."""
    settings = BundleSettings(quality="l", fps=FPS)
    assert bundle_is_current(scenario, bundle, settings, SCENES)
    assert not bundle_is_current(scenario, bundle, BundleSettings(quality="l", fps=FPS + 1), SCENES)
    other = Scenario.from_sentence(SENTENCE, seed=SEED + 1)
    assert not bundle_is_current(other, bundle, settings, SCENES)
    assert not bundle_is_current(scenario, bundle.parent / "elsewhere", settings, SCENES)
    code = (
        "import sys\nfrom attention_explainer.cli import main\n"
        f"status = main(['render', '--sentence', {SENTENCE!r}, '--seed', '{SEED}', '--quality', 'l', "
        f"'--fps', '{FPS}', '--out', {str(bundle)!r}])\n"
        "print(status, 'manim' in sys.modules)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=False)
    assert result.stdout.split()[-2:] == ["0", "False"], result.stderr
    assert _manifest(bundle)["rendered"] == []


def test_changing_the_query_rerenders_all_but_the_preset_scene(bundle: Path, tmp_path: Path) -> None:
    result = _cli(
        "render",
        "--sentence",
        SENTENCE,
        "--seed",
        str(SEED),
        "--query",
        "1",
        "--fps",
        str(FPS),
        "--out",
        str(bundle),
        "--scenes",
        "RawDotProducts,Scores",
    )
    assert result.returncode == 0, result.stderr
    assert _manifest(bundle)["rendered"] == ["Scores"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--scenes", "NoSuchScene"], "--scenes: unknown scene 'NoSuchScene'"),
        (["--preset", "no-such"], "preset: unknown name 'no-such'"),
        (["--sentence", "a b c", "--d-k", "0"], "d_k: expected a whole number"),
        (["--sentence", " ".join(f"w{k}" for k in range(1, 18))], "tokens: the scenes draw 2 to 16"),
        (["--scenario", "/no/such/file.toml"], "scenario: no such file"),
        (["--precision", "7"], "precision: expected a whole number from 0 to 4, got 7"),
        (["--jobs", "0"], "--jobs"),
        (["--fps", "0"], "--fps: expected a whole number from 1 to 120, got 0"),
        (["--format", "avi"], "invalid choice"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(args: list[str], message: str, tmp_path: Path) -> None:
    result = _cli("render", "--out", str(tmp_path / "out"), *args)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert message in lines[0]
    assert "Traceback" not in result.stderr


def test_an_out_that_is_a_file_or_unwritable_is_refused(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("mine", encoding="utf-8")
    for out, message in ((blocker, "is a file"), (blocker / "below", "cannot write into")):
        result = _cli("render", "--scenes", "scores", "--out", str(out))
        assert result.returncode == 2
        assert len(result.stderr.strip().splitlines()) == 1
        assert message in result.stderr
    assert blocker.read_text(encoding="utf-8") == "mine"


def test_presets_and_numbers_commands() -> None:
    listed = _cli("presets")
    assert listed.returncode == 0
    names = [line.split()[0] for line in listed.stdout.splitlines()]
    assert names == list(PRESETS)  # every preset, in attention_math's order
    assert {"dog-chased-ball", "raw-dot-product", "softmax-saturation"} <= set(names)
    numbers = _cli("numbers")
    assert numbers.returncode == 0
    reference = subprocess.run([sys.executable, "-m", "attention_math"], capture_output=True, text=True, cwd=ROOT)
    assert numbers.stdout == reference.stdout


def test_render_help_gives_every_default() -> None:
    import os

    help_text = " ".join(_cli("render", "--help").stdout.split())
    assert f"(default: the machine's cores, {os.cpu_count()} here)" in help_text
    assert "(default l: 480p15)" in help_text and "(default mp4)" in help_text
    assert "mp4 is written as .mov" in help_text


def test_each_still_is_its_clips_last_frame_as_drawn(bundle: Path, tmp_path: Path) -> None:
    # the renders save each clip's last frame as they draw it: the picture the clip ends on
    # (as close to the decoded frame as the video's compression allows), without its losses
    from PIL import Image

    from attention_explainer.media import last_frame

    for spec in SCENES:
        with av.open(str(bundle / f"{spec.stem}.mp4")) as container:
            *_, last = container.decode(video=0)
            decoded = np.asarray(last.to_image(), dtype=float)
        still = Image.open(bundle / "stills" / f"{spec.stem}.png")
        assert still.mode == "RGB", spec.name  # opaque: no alpha channel to carry
        error = np.mean((np.asarray(still, dtype=float) - decoded) ** 2)
        assert 10 * np.log10(255**2 / error) > 30, spec.name  # dB: the same picture, through the codec
    # lossless: Scores' still is, byte for byte, the last frame manim draws (-s) for the bundle's scenario
    env = dict(clean_environment(), ATTENTION_SCENARIO=str(work_folder(bundle) / "scenario.toml"))
    command = [sys.executable, "-m", "manim", "render", "-s", "-ql", "--media_dir", str(tmp_path / "media"),
               "-v", "WARNING", "--progress_bar", "none", "scenes/self_attention/scores.py", "Scores"]
    result = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    (drawn,) = (tmp_path / "media" / "images").rglob("Scores*.png")
    scores = next(spec for spec in SCENES if spec.name == "Scores")
    np.testing.assert_array_equal(np.asarray(Image.open(bundle / "stills" / f"{scores.stem}.png")),
                                  np.asarray(Image.open(drawn).convert("RGB")))
    # the fallback for a clip with no still beside it: it seeks to the last keyframe before the
    # end, and a full decode must agree
    last_frame(bundle / f"{scores.stem}.mp4", tmp_path / "decoded.png")
    with av.open(str(bundle / f"{scores.stem}.mp4")) as container:
        *_, last = container.decode(video=0)
    np.testing.assert_array_equal(np.asarray(Image.open(tmp_path / "decoded.png")), np.asarray(last.to_image()))
