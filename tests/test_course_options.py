"""A course entry holds every option of ``render`` (issue 42): one definition, read by both.

* Every option of ``render`` but ``--out``, ``--jobs``, ``--stock-manim`` and ``--debug`` is a key of a
  ``[[bundle]]`` (:func:`attention_explainer.render_options.course_keys`), and an entry becomes exactly
  the arguments render would be given: render's own parser reads them to the same values.
* Each key given a value of the wrong kind once, and each pair of options render refuses together, is
  one line naming the file, the entry and the key, exit 2, no traceback, before anything is made; an
  unknown key lists the known ones. A value that means nothing (a layer a model has not) is one line
  naming the entry and the key, the other bundles go on.
* On a local cluster of two workers, a course of a bundle with ``slides``, ``pptx`` and ``voice`` and a
  real model's bundle (``model = "minilm"``, ``sentence``, ``layer``, ``head``) makes both bundles whole,
  each the bundle ``render`` would make (render into it renders nothing), and the course page links each
  bundle's lecture page, slide deck and PowerPoint deck where it has them.

The renders are one scene a bundle at -ql and 5 frames a second.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from course_checks import assert_whole, course_refusal
from scene_helpers import clean_environment

from attention_explainer.cli import main
from attention_explainer.course_file import bundle_keys, load_course
from attention_explainer.render_options import NOT_PER_BUNDLE, course_keys, parse_render_argv

ROOT = Path(__file__).resolve().parent.parent
TIMEOUT = 900  # s: a loaded machine renders slowly; nothing here is timed
SENTENCE = "The dog chased the ball."

WRONG = {
    "preset": (1, "expected a string, got a number"),
    "scenario": (True, "expected a string, got a boolean"),
    "sentence": (["a"], "expected a string, got a list"),
    "seed": ("3", "expected a whole number, got a string"),
    "d-model": (3.5, "expected a whole number, got a number"),
    "d-k": (True, "expected a whole number, got a boolean"),
    "d-v": ("2", "expected a whole number, got a string"),
    "heads": ([2], "expected a whole number, got a list"),
    "model": (1, "expected a string, got a number"),
    "layer": ("2", "expected a whole number, got a string"),
    "head": (False, "expected a whole number, got a boolean"),
    "query": ([1], "expected a token's text or its number, got a list"),
    "precision": ("2", "expected a whole number, got a string"),
    "quality": ("x", "expected one of l, m, h, p, k, got 'x'"),
    "fps": (0, "expected a whole number from 1 to 120, got 0"),
    "format": ("avi", "expected one of mp4, webm, gif, mov, got 'avi'"),
    "transparent": ("yes", "expected true or false, got a string"),
    "lecture": (2, "expected a string, got a number"),
    "scenes": ("scores", "expected a list of scene names or numbers, got a string"),
    "slides": (1, "expected true or false, got a number"),
    "pptx": ("true", "expected true or false, got a string"),
    "voice": (0, "expected true or false, got a number"),
    "captions": ("hard", "expected one of soft, burn, got 'hard'"),
    "name": ("../up", "expected a folder name (letters, digits, '.', '_', '-'), got '../up'"),
}
"""Each key of a bundle with a value it refuses, and the words it refuses it with."""

TOGETHER = [
    ('format = "gif"\npptx = true\n', "pptx", "a PowerPoint deck embeds H.264 mp4"),
    ('format = "gif"\nslides = true\n', "slides", "a deck plays its slides in a browser"),
    ('format = "gif"\nvoice = true\n', "voice", "a gif has no sound"),
    ('format = "gif"\ntransparent = true\n', "transparent", "needs --format mov, webm or mp4"),
    ("transparent = true\npptx = true\n", "pptx", "choose --format mp4, without --transparent"),
]
"""Options render refuses together: the entry, the key named, the words."""


def _refusal(tmp_path: Path, capsys: pytest.CaptureFixture[str], bundle: str) -> str:
    """The one line the command refuses a course of ``bundle`` (its second entry) with: exit 2, nothing made."""
    return course_refusal(tmp_path, capsys, f'[[bundle]]\nname = "fine"\n\n[[bundle]]\n{bundle}')


def _toml(value: object) -> str:
    return json.dumps(value) if not isinstance(value, bool) else str(value).lower()


def test_every_option_of_render_is_a_key_of_a_bundle_and_each_is_tested(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["render", "--help"])
    # an option's own line of the help (two spaces in), not a mention in another's text ("pip install --no-deps")
    options = set(re.findall(r"^  (?:-\w, )?--([a-z][a-z-]*)", capsys.readouterr().out, re.MULTILINE)) - {"help"}
    assert sorted([*course_keys(), *NOT_PER_BUNDLE]) == sorted(options)
    assert list(WRONG) == list(bundle_keys())


@pytest.mark.parametrize("key", list(WRONG))
def test_each_key_of_a_bundle_wrong_is_one_line_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], key: str
) -> None:
    value, words = WRONG[key]
    line = _refusal(tmp_path, capsys, f"{key} = {_toml(value)}\n")
    assert line == f"attention-explainer: error: course.toml: bundle 2 ({key}): {words}", line


@pytest.mark.parametrize(("bundle", "key", "words"), TOGETHER)
def test_options_render_refuses_together_are_refused_in_a_bundle(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], bundle: str, key: str, words: str
) -> None:
    line = _refusal(tmp_path, capsys, bundle)
    assert line.startswith(f"attention-explainer: error: course.toml: bundle 2 ({key}): ") and words in line, line


def test_an_unknown_key_lists_the_known_ones(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    line = _refusal(tmp_path, capsys, "jobs = 2\n")
    known = ", ".join(bundle_keys())
    assert line == f"attention-explainer: error: course.toml: bundle 2 (jobs): unknown key; expected {known}", line


def test_slides_without_reveal_js_and_voice_without_its_extra_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ATTENTION_REVEAL_JS", str(tmp_path / "none"))
    assert "course.toml: bundle 2 (slides): reveal.js 6.0.1 is not in" in _refusal(tmp_path, capsys, "slides = true\n")
    monkeypatch.setattr("attention_explainer.extras.missing_voice_modules", lambda: ["piper"])
    line = _refusal(tmp_path, capsys, "voice = true\n")
    assert "course.toml: bundle 2 (voice): the voice extra is not installed (no piper)" in line, line


def test_an_entry_is_the_arguments_render_would_be_given(tmp_path: Path) -> None:
    (tmp_path / "course.toml").write_text(
        f'[[bundle]]\nmodel = "minilm"\nsentence = "{SENTENCE}"\nlayer = 3\nhead = 4\nquery = 2\n'
        'scenes = ["weights", 1]\nquality = "m"\nfps = 5\nslides = true\npptx = true\nvoice = true\n'
        'captions = "burn"\nprecision = 3\n',
        encoding="utf-8",
    )
    entry = load_course(tmp_path / "course.toml").entries[0]
    argv = ["--sentence=" + SENTENCE, "--model=minilm", "--layer=3", "--head=4", "--query=2", "--precision=3",
            "--quality=m", "--fps=5", "--scenes=weights,1", "--slides", "--pptx", "--voice",
            "--captions=burn"]  # fmt: skip
    assert entry.argv == tuple(argv)
    args = parse_render_argv(argv)
    assert args == entry.args
    assert (args.model, args.layer, args.head, args.query, args.precision) == ("minilm", 3, 4, "2", 3)
    assert (args.quality, args.fps, args.scenes, args.captions) == ("m", 5, "weights,1", "burn")
    assert args.slides and args.pptx and args.voice and not args.transparent and args.format == "mp4"
    assert (entry.lecture, entry.source, entry.value) == ("real-head", "sentence", SENTENCE)


def test_a_value_that_means_nothing_names_its_entry_and_key(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    course = tmp_path / "course.toml"
    course.write_text(
        f'[[bundle]]\nmodel = "minilm"\nsentence = "{SENTENCE}"\nlayer = 9\n\n[[bundle]]\nhead = 2\n\n'
        '[[bundle]]\nsentence = "a b"\nquery = "zz"\n',
        encoding="utf-8",
    )
    assert main(["course", str(course), "--out", str(tmp_path / "out")]) == 2
    errors = [line for line in capsys.readouterr().err.splitlines() if line.startswith("error:")]
    assert [line.split(": ")[1] for line in errors] == ["bundle 1 (layer)", "bundle 2 (head)", "bundle 3 (query)"]
    assert "expected a whole number from 1 to 6" in errors[0] and "choose a head of a real model" in errors[1]


# --- on a local cluster ------------------------------------------------------------------------

HALL = f"""title = "Lecture hall"

[[bundle]]
preset = "dog-chased-ball"
scenes = ["scores"]
fps = 5
slides = true
pptx = true
voice = true
name = "hall"

[[bundle]]
model = "minilm"
sentence = "{SENTENCE}"
layer = 2
head = 3
query = "dog"
scenes = ["weights"]
fps = 5
name = "real"
"""
RENDER_OF = {
    "hall": ["--preset", "dog-chased-ball", "--scenes", "scores", "--fps", "5", "--slides", "--pptx", "--voice"],
    "real": ["--model", "minilm", "--sentence", SENTENCE, "--layer", "2", "--head", "3", "--query", "dog",
             "--scenes", "weights", "--fps", "5"],
}  # fmt: skip
"""The render of each bundle of :data:`HALL`."""


@pytest.mark.render
def test_a_course_makes_decks_voice_and_a_real_models_head_on_a_local_cluster(tmp_path: Path) -> None:
    course, out = tmp_path / "course.toml", tmp_path / "out"
    course.write_text(HALL, encoding="utf-8")
    env = dict(clean_environment(), PYTHONPATH=str(ROOT), COLUMNS="1000")
    result = subprocess.run(
        [sys.executable, "-m", "attention_explainer", "course", str(course), "--out", str(out), "--workers", "2"],
        env=env, capture_output=True, text=True, timeout=TIMEOUT, cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode == 0 and "2 of 2 bundles made" in result.stderr, result.stderr
    assert "Traceback" not in result.stderr, result.stderr
    hall = json.loads((out / "hall" / "manifest.json").read_text(encoding="utf-8"))
    assert hall["deck"] and hall["pptx"] and hall["scenes"][0]["slides"] == hall["scenes"][0]["key"]
    assert all(f["audio"] for f in hall["files"] if f["kind"] in {"clip", "lecture"})  # spoken
    assert "minilm" in (out / "real" / "scenario.toml").read_text(encoding="utf-8")
    for name, flags in RENDER_OF.items():
        assert_whole(out / name)
        again = subprocess.run(
            [sys.executable, "-m", "attention_explainer", "render", *flags, "--out", str(out / name)],
            env=env, capture_output=True, text=True, timeout=TIMEOUT, cwd=tmp_path,
        )  # fmt: skip
        assert again.returncode == 0 and "nothing changed, no scene rendered" in again.stderr, again.stderr
    _assert_links(out)


def _assert_links(out: Path) -> None:
    """The course page links every bundle's lecture page, and its decks where it has them; each link is a file."""
    page = (out / "index.html").read_text(encoding="utf-8")
    links = {name: re.findall(rf'href="({name}/[^"]+)"', page) for name in RENDER_OF}
    assert set(links["hall"]) == {"hall/index.html", "hall/slides.html", "hall/lecture.pptx"}, page
    assert set(links["real"]) == {"real/index.html"}, page
    assert all((out / link).is_file() for found in links.values() for link in found)
