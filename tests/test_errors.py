"""Every error of ``attention-explainer render``: one line on stderr, exit 2 for bad input, 1 for
an internal failure, a traceback only with ``--debug``.

Scenario files that are missing, unreadable, a directory, not UTF-8, invalid TOML, with unknown
keys, beyond the scenes' layout limits, or holding numbers that are not finite numbers; an
``--out`` that cannot be written; a broken TeX installation. (``tests/test_bundle.py`` and
``tests/test_cli_numbers.py`` hold the option errors and ``python -m attention_math``'s own.)
Bad input is refused before anything is rendered or any folder made.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from attention_explainer import cli
from attention_explainer.manifest import read_manifest
from attention_explainer.plan import work_folder

PROG = "attention-explainer"

EXPLICIT = """\
tokens = ["a", "b", "c"]
embeddings = [[0.1, 0.2], [0.3, 0.4], [0.5, 0.6]]
w_query = [[0.5, 0.1], [0.2, 0.9]]
w_key = [[0.3, 0.7], [0.8, 0.2]]
w_value = [[0.4, 0.6], [0.1, 0.3]]
"""


def _explicit(n: int = 3, d_in: int = 2, d_k: int = 2, d_v: int = 2) -> str:
    def matrix(rows: int, columns: int) -> str:
        return "[" + ", ".join("[" + ", ".join(f"{0.1 * ((r + c) % 5 + 1):.1f}" for c in range(columns)) + "]"
                               for r in range(rows)) + "]"

    tokens = ", ".join(f'"t{i}"' for i in range(n))
    return (
        f"tokens = [{tokens}]\nembeddings = {matrix(n, d_in)}\nw_query = {matrix(d_in, d_k)}\n"
        f"w_key = {matrix(d_in, d_k)}\nw_value = {matrix(d_in, d_v)}\n"
    )


def _main(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    status = cli.main(list(args))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def _assert_one_line(err: str, *words: str, prefix: str = f"{PROG}: error: ") -> str:
    assert "Traceback" not in err
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(prefix), lines[0]
    for word in words:
        assert word in lines[0], (word, lines[0])
    return lines[0]


# -- scenario files --------------------------------------------------------------------------


def _loop(folder: Path) -> Path:
    path = folder / "loop.toml"
    path.symlink_to(path.name)  # a link to itself: unreadable even for root
    return path


def _directory(folder: Path) -> Path:
    path = folder / "scenario.toml"
    path.mkdir()
    return path


def _file(name: str, content: str | bytes) -> object:
    def make(folder: Path) -> Path:
        path = folder / name
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
        return path

    return make


FILE_ERRORS = [
    pytest.param(_loop, ["scenario: cannot read", "loop.toml", "Too many levels of symbolic links"], id="unreadable"),
    pytest.param(_directory, ["scenario: expected a TOML file, got a directory", "scenario.toml"], id="directory"),
    pytest.param(_file("latin1.toml", 'title = "café"\nsentence = "a b"\n'.encode("latin-1")),
                 ["scenario:", "latin1.toml is not UTF-8 text (byte 13)"], id="not UTF-8"),
    pytest.param(_file("bad.toml", 'title = "x"\nseed = = 3\n'),
                 ["scenario: invalid TOML in", "bad.toml", "(at line 2, column 8)"], id="invalid TOML"),
    pytest.param(_file("short.toml", 'tokens = ["a", "b"\n'),
                 ["scenario: invalid TOML", "Unclosed array (at end of document, line 2, column 1)"],
                 id="invalid TOML at the end"),
    pytest.param(_file("typo.toml", EXPLICIT.replace("w_query", "w_qeury")),
                 ["w_qeury: unknown key (did you mean 'w_query'?)"], id="unknown key, suggested"),
    pytest.param(_file("typo.toml", 'sentence = "a b c"\nsed = 3\n'), ["sed: unknown key (did you mean 'seed'?)"],
                 id="unknown key in a sentence file"),
    pytest.param(_file("alien.toml", EXPLICIT + "colour = 3\n"), ["colour: unknown key"], id="unknown key"),
    # beyond what the scenes lay out: one line naming the field and the limit
    pytest.param(_file("many.toml", _explicit(n=17)), ["tokens: the scenes draw 2 to 16, this scenario has 17"],
                 id="17 tokens"),
    pytest.param(_file("one.toml", _explicit(n=1)), ["tokens: the scenes draw 2 to 16, this scenario has 1"],
                 id="1 token"),
    pytest.param(_file("wide.toml", _explicit(d_k=5)), ["d_k: the scenes draw 1 to 4, this scenario has 5"],
                 id="d_k 5"),
    pytest.param(_file("deep.toml", _explicit(d_in=7)), ["d_in: the scenes draw 2 to 6, this scenario has 7"],
                 id="d_in 7"),
    pytest.param(_file("values.toml", _explicit(d_v=5)), ["d_v: the scenes draw 1 to 4, this scenario has 5"],
                 id="d_v 5"),
    pytest.param(_file("words.toml", 'sentence = "w1 w2 w3 w4 w5 w6 w7 w8 w9 w10 w11 w12 w13 w14 w15 w16 w17"\n'),
                 ["tokens: the scenes draw 2 to 16, this scenario has 17"], id="17-word sentence file"),
    # numbers
    pytest.param(_file("nan.toml", EXPLICIT.replace("[0.1, 0.2]", "[nan, 0.2]")),
                 ["embeddings: expected a finite number at row 1, column 1, got nan"], id="NaN"),
    pytest.param(_file("inf.toml", EXPLICIT.replace("[0.4, 0.6]", "[0.4, inf]")),
                 ["w_value: expected a finite number at row 1, column 2, got inf"], id="+inf"),
    pytest.param(_file("ninf.toml", EXPLICIT.replace("[0.8, 0.2]", "[-inf, 0.2]")),
                 ["w_key: expected a finite number at row 2, column 1, got -inf"], id="-inf"),
    pytest.param(_file("text.toml", EXPLICIT.replace("[0.5, 0.1]", '["0.5", 0.1]')),
                 ["w_query: expected a number at row 1, column 1, got '0.5'"], id="string"),
    pytest.param(_file("bool.toml", EXPLICIT.replace("[0.5, 0.6]", "[0.5, true]")),
                 ["embeddings: expected a number at row 3, column 2, got True"], id="boolean"),
    pytest.param(_file("ragged.toml", EXPLICIT.replace("[0.3, 0.4]", "[0.3]")),
                 ["embeddings: ragged rows, row 1 has 2 entries but row 2 has 1"], id="ragged rows"),
    pytest.param(_file("empty.toml", EXPLICIT.replace("w_value = [[0.4, 0.6], [0.1, 0.3]]", "w_value = []")),
                 ["w_value: expected a non-empty matrix"], id="empty matrix"),
    pytest.param(_file("rows.toml", EXPLICIT.replace("w_value = [[0.4, 0.6], [0.1, 0.3]]", "w_value = [[], []]")),
                 ["w_value: expected a non-empty matrix"], id="empty rows"),
    pytest.param(_file("dk0.toml", 'sentence = "a b c"\nd_k = 0\n'), ["d_k: expected a whole number from 1 to 64"],
                 id="d_k 0"),
    pytest.param(_file("huge.toml", EXPLICIT.replace("[0.1, 0.2]", "[1e308, 1e308]")),
                 ["embeddings: numbers too large", "overflow float64"], id="1e308"),
    pytest.param(_file("int.toml", EXPLICIT.replace("[0.1, 0.2]", "[1" + "0" * 320 + ", 0.2]")),
                 ["embeddings: expected a finite number at row 1, column 1"], id="integer beyond float64"),
    # finite, and fine for attention_math (see the weights test below), too large to draw
    pytest.param(_file("wide.toml", EXPLICIT.replace("[[0.5, 0.1], [0.2, 0.9]]", "[[1e200, 0.1], [0.2, 0.9]]")),
                 ["w_query: the scenes draw numbers below 1,000,000 in size, this scenario's reach 1e+200"],
                 id="numbers too large to draw"),
]


@pytest.mark.parametrize(("make", "words"), FILE_ERRORS)
def test_a_bad_scenario_file_is_one_line_and_exit_2(
    make: object, words: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scenario = make(tmp_path)  # type: ignore[operator]
    out = tmp_path / "out"
    status, stdout, stderr = _main(capsys, "render", "--scenario", str(scenario), "--out", str(out))
    assert status == 2
    assert stdout == ""
    _assert_one_line(stderr, *words)
    assert not out.exists()  # refused before anything was made


def test_an_unreadable_file_without_permission(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    if os.geteuid() == 0:
        pytest.skip("root reads any file whatever its mode (the symbolic-link loop case covers unreadable files)")
    path = tmp_path / "secret.toml"
    path.write_text(EXPLICIT, encoding="utf-8")
    path.chmod(0)
    status, _, stderr = _main(capsys, "render", "--scenario", str(path), "--out", str(tmp_path / "out"))
    assert status == 2
    _assert_one_line(stderr, "scenario: cannot read", "Permission denied")


def test_the_same_errors_from_the_command_line_process(tmp_path: Path) -> None:
    """The console script itself: one line, exit 2, nothing on stdout (in-process above)."""
    scenario = tmp_path / "typo.toml"
    scenario.write_text(EXPLICIT.replace("w_key", "wkey"), encoding="utf-8")
    result = subprocess.run(
        [sys.executable, "-m", "attention_explainer", "render", "--scenario", str(scenario), "--out", str(tmp_path)],
        capture_output=True, text=True, timeout=300,
    )
    assert result.returncode == 2
    assert result.stdout == ""
    _assert_one_line(result.stderr, "wkey: unknown key (did you mean 'w_key'?)")


# -- numbers that are huge but finite --------------------------------------------------------


def test_huge_but_finite_scores_give_exact_weights(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    scenario = tmp_path / "huge.toml"
    # scores of about 1e199: far beyond exp's range, still finite
    scenario.write_text(EXPLICIT.replace("[[0.5, 0.1], [0.2, 0.9]]", "[[1e200, 0.1], [0.2, 0.9]]"), encoding="utf-8")
    status, stdout, stderr = _main(capsys, "numbers", "--scenario", str(scenario), "--format", "json")
    assert status == 0, stderr
    data = json.loads(stdout)
    scores = data["query"]["scores"]
    assert scores == pytest.approx([9.5e198, 2.05e199, 3.15e199])
    assert data["query"]["weights"] == [0.0, 0.0, 1.0]
    for row in data["matrices"]["weights"]:
        assert sum(row) == 1.0 and sorted(row) == [0.0, 0.0, 1.0]


# -- the output folder -----------------------------------------------------------------------


def test_an_out_folder_not_even_root_may_write(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    locked = Path("/sys/kernel")  # sysfs: no new files, whoever asks
    if not locked.is_dir():
        pytest.skip("no /sys/kernel here")
    status, _, stderr = _main(capsys, "render", "--scenes", "scores", "--out", str(locked))
    assert status == 2
    _assert_one_line(stderr, f"--out: cannot write into {locked}", "Permission denied")


def test_an_out_folder_whose_work_folder_cannot_be_made_beside_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "talks" / "lecture"
    out.mkdir(parents=True)
    (tmp_path / "talks" / ".cache").write_text("a file where the work folders would go", encoding="utf-8")
    status, _, stderr = _main(capsys, "render", "--scenes", "scores", "--out", str(out))
    assert status == 2
    work = tmp_path.resolve() / "talks" / ".cache" / "lecture"
    assert work_folder(out) == work
    _assert_one_line(stderr, f"--out: cannot make the render's work folder {work} beside {out}", "Not a directory")
    assert list(out.iterdir()) == []  # nothing was made in the bundle's folder


def test_a_malformed_manifest_in_the_out_folder_counts_as_none(tmp_path: Path) -> None:
    manifest = tmp_path / "manifest.json"
    for content in ('{"scenes": [1, {"name": 3}, {"key": "k"}], "files": 2}', '{"scenes": "all"}', "[1, 2]", "{"):
        manifest.write_text(content, encoding="utf-8")
        assert read_manifest(tmp_path).get("scenes", []) == []
    manifest.write_text('{"scenes": [{"name": "Scores", "key": "k"}, 7]}', encoding="utf-8")
    assert read_manifest(tmp_path)["scenes"] == [{"name": "Scores", "key": "k"}]


# -- an internal failure -----------------------------------------------------------------------


@pytest.mark.render
def test_an_internal_failure_is_one_line_and_exit_1_and_debug_shows_the_traceback(tmp_path: Path) -> None:
    # A broken TeX installation: no latex on PATH (the scenes typeset their formula with it).
    env = {k: v for k, v in os.environ.items() if not k.startswith("ATTENTION_")}
    env["PATH"] = str(tmp_path / "empty")

    def render(*extra: str) -> subprocess.CompletedProcess[str]:
        out = tmp_path / f"out{len(extra)}"
        command = [sys.executable, "-m", "attention_explainer", *extra, "render", "--sentence", "a b c",
                   "--scenes", "scores", "--jobs", "1", "--out", str(out)]
        return subprocess.run(command, capture_output=True, text=True, env=env, timeout=600)

    plain = render()
    assert plain.returncode == 1, plain.stderr
    assert "Traceback" not in plain.stderr
    errors = [line for line in plain.stderr.splitlines() if line.startswith(f"{PROG}:")]
    assert len(errors) == 1, plain.stderr
    assert errors[0].startswith(f"{PROG}: error: scene Scores: manim render failed (exit 1): ")
    assert "latex" in errors[0]
    assert plain.stderr.strip().splitlines()[-1] == errors[0]  # above it only the progress lines

    debug = render("--debug")
    assert debug.returncode == 1
    assert "Traceback (most recent call last)" in debug.stderr
    assert "manim render failed" in debug.stderr
