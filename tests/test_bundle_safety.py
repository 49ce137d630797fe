"""A bundle survives what happens to a render, and keeps user text whole.

* A render stopped mid-way (SIGKILL while manim renders or while the bundle is assembled,
  SIGINT, SIGTERM) leaves the previous manifest and every file byte for byte, adds nothing under
  a final name, and the next render into the folder succeeds (even when the kill cut one of
  manim's cached text pictures short).
* A Ctrl-C ends the command with 130 and one line, SIGTERM with 143, whichever of its processes
  sees the signal first: sent to the render alone (which then ends before the command hears of
  any signal), to the whole group, to a command started with SIGINT ignored. A render killed
  otherwise is a failure (exit 1, one line naming the scene).
* Two renders at once: into two folders both succeed; into one folder the second refuses in one
  line, naming the lock, and the first is unharmed (a lock an older version left in the bundle,
  held, refuses the same way).
* The bundle's folder holds exactly what its manifest lists, hidden files included: the render's
  work, caches and lock are in the work folder beside it; what an older version kept inside the
  bundle (``.work/``, ``.lock``) goes once a render succeeds.
* Long and hostile tokens are whole in the handout and the subtitles (shortened only on screen),
  and the handout's LaTeX prints them literally.

Every render here is one scene (Scores) at -ql, 5 frames a second (what is tested holds at any
rate). A test that stops a render at a moment holds it there with the runner's test hook
(``ATTENTION_HOLD_AT``, ``ATTENTION_HOLD_FILE``): the render writes the marker file and waits
until it is removed, so no test races a render.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import av
import pytest
from scene_helpers import clean_environment

from attention_explainer.outputs.handout import latex_escape, read_matrix_csv
from attention_explainer.plan import work_folder
from attention_explainer.selection import SCENES as BUNDLE_SCENES
from attention_math import Scenario, load_scenario

SCORES = next(spec.stem for spec in BUNDLE_SCENES if spec.name == "Scores")  # "04-scores"

pytestmark = pytest.mark.render

TOKENS = ["the", "supercalifragilisticexpialidocious", r"\input{/etc/hostname}", '$&#^_%~<>|"{}', "cat"]
SENTENCE = " ".join(TOKENS)  # tokens are the whitespace-separated words
QUERY = "2"  # the long token
PROG = "attention-explainer"
TIMEOUT = 600
TEXT_PICTURES = "media/Scores/texts/*.svg"  # in the work folder
HOLD_AFTER_PLAY = 3  # some of the new scene's pictures are written by then, far from all


def _command(out: Path | str, seed: int) -> list[str]:
    return [
        sys.executable, "-m", "attention_explainer", "render", "--sentence", SENTENCE, "--seed", str(seed),
        "--query", QUERY, "--scenes", "scores", "--fps", "5", "--out", str(out),  # 5 fps: a third of the cost
    ]


def _held(marker: Path, at: str) -> dict[str, str]:
    """The environment of a render that holds ``at`` a moment (``play:N`` or ``staged``) until
    ``marker`` is removed or the render is stopped."""
    env = clean_environment()
    env.update(ATTENTION_HOLD_AT=at, ATTENTION_HOLD_FILE=str(marker))
    return env


def _wait_for(marker: Path, process: subprocess.Popen[str], log: Path) -> None:
    """Wait until the render holds (it wrote ``marker``); fail if it ended first."""
    deadline = time.monotonic() + TIMEOUT
    while not marker.exists():
        assert process.poll() is None, f"the render ended before it held:\n{log.read_text()}"
        assert time.monotonic() < deadline, "the render never held"
        time.sleep(0.02)


def _render(out: Path | str, seed: int, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        _command(out, seed), cwd=cwd, env=clean_environment(), capture_output=True, text=True, timeout=TIMEOUT
    )


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished one-scene bundle (seed 4), rendered into a relative --out."""
    root = tmp_path_factory.mktemp("base")
    result = _render("bundle", 4, cwd=root)
    assert result.returncode == 0, result.stderr
    return root / "bundle"


def _final_files(out: Path) -> dict[str, str]:
    """Every file in the bundle's folder, hidden ones too, and its hash."""
    return {
        path.relative_to(out).as_posix(): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(out.rglob("*"))
        if path.is_file()
    }


def _manifest(out: Path) -> dict:
    return json.loads((out / "manifest.json").read_text(encoding="utf-8"))


def _assert_manifest_holds(out: Path) -> None:
    """The manifest lists every file of the bundle's folder (hidden ones too), each at its listed size."""
    listed = {entry["path"]: entry["bytes"] for entry in _manifest(out)["files"]}
    for rel, size in listed.items():
        assert (out / rel).is_file() and (out / rel).stat().st_size == size, rel
    assert set(_final_files(out)) - {"manifest.json"} == set(listed)


def _frames(clip: Path) -> int:
    with av.open(str(clip)) as container:
        return sum(1 for _ in container.decode(video=0))


def _written_since(out: Path, pattern: str, since_ns: int) -> list[Path]:
    """Files matching ``pattern`` written at or after ``since_ns``, newest last."""
    found = [(path.stat().st_mtime_ns, path) for path in out.glob(pattern)]
    return [path for mtime, path in sorted(found) if mtime >= since_ns]


def _group_gone(pgid: int, timeout: float = 30) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    return False


# -- stopped mid-way ---------------------------------------------------------------------------

IGNORING_SIGINT = (
    "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_IGN); "
    "os.execv(sys.executable, [sys.executable, *sys.argv[1:]])"
)
"""``python -c IGNORING_SIGINT -m ...``: start ``python -m ...`` with SIGINT ignored, as a background
job of a non-interactive shell is (``make test &``); the pid stays the same across the exec."""


def _holder(marker: Path) -> int:
    """The pid of the process that holds (the hook writes it into the marker, then a newline)."""
    deadline = time.monotonic() + 10
    while not (text := marker.read_text(encoding="utf-8")).endswith("\n"):
        assert time.monotonic() < deadline, "the marker never got its pid"
        time.sleep(0.01)
    return int(text)


def _stop_mid_way(
    out: Path, tmp_path: Path, signame: str, moment: str, target: str = "group", ignoring_sigint: bool = False
) -> tuple[int, str]:
    """Start a render into ``out`` (a copy of ``base``), hold it at ``moment``, send ``signame`` to
    ``target`` (``group``: the command's process group, as Ctrl-C; ``command``: the command alone,
    as a service manager; ``render``: the held render alone, which then ends before the command
    hears of any signal); return the command's status and its stderr once its processes are gone."""
    log = tmp_path / "stderr.txt"
    marker = tmp_path / "held"
    started = time.time_ns()
    command = _command(out, 5)
    if ignoring_sigint:
        command = [sys.executable, "-c", IGNORING_SIGINT, *command[1:]]
    with log.open("w", encoding="utf-8") as stderr:
        process = subprocess.Popen(
            command, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=stderr,
            env=_held(marker, f"play:{HOLD_AFTER_PLAY}" if moment == "rendering" else "staged"),
            start_new_session=True,  # its own process group: the CLI and the manim processes it starts
        )
        try:
            _wait_for(marker, process, log)
            if moment == "rendering":  # manim has written some of the new scene's pictures
                assert _written_since(work_folder(out), TEXT_PICTURES, started)
            else:  # the new files are staged, none swapped in yet
                assert any(path.is_file() for path in (work_folder(out) / "next").rglob("*"))
            number = getattr(signal, signame)
            if target == "group":
                os.killpg(process.pid, number)  # Ctrl-C and kill -9 reach the whole group
            elif target == "command":
                os.kill(process.pid, number)  # as a service manager would: the CLI alone
            else:
                holder = _holder(marker)
                assert holder != process.pid and os.getpgid(holder) == process.pid
                os.kill(holder, number)
            status = process.wait(timeout=120)
        finally:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
    assert _group_gone(process.pid), "manim processes outlived the render"
    return status, log.read_text(encoding="utf-8")


def _assert_one_line(messages: str, line: str) -> None:
    """The command's only line is ``line``, last, with no traceback above it."""
    assert "Traceback" not in messages
    lines = [text for text in messages.splitlines() if text.startswith(f"{PROG}:")]
    assert lines == [line], messages
    assert messages.strip().splitlines()[-1] == line


def _stopped_line(signame: str) -> tuple[int, str]:
    status, word = {"SIGINT": (130, "interrupted"), "SIGTERM": (143, "terminated")}[signame]
    return status, f"{PROG}: {word}; finished files are intact, nothing half-written was kept"


@pytest.mark.parametrize(
    ("signame", "moment"),
    [
        ("SIGKILL", "rendering"), ("SIGKILL", "assembling"), ("SIGINT", "rendering"), ("SIGINT", "assembling"),
        ("SIGTERM", "rendering"),
    ],
)
def test_a_render_stopped_mid_way_leaves_the_previous_bundle_whole(
    base: Path, tmp_path: Path, signame: str, moment: str
) -> None:
    out = tmp_path / "bundle"
    shutil.copytree(base, out)
    before = _final_files(out)
    old_manifest = _manifest(out)
    started = time.time_ns()
    status, messages = _stop_mid_way(out, tmp_path, signame, moment, "command" if signame == "SIGTERM" else "group")

    if signame == "SIGKILL":
        assert status == -signal.SIGKILL
    else:
        expected_status, line = _stopped_line(signame)
        assert status == expected_status, messages
        _assert_one_line(messages, line)

    # the previous bundle, byte for byte, and nothing new under a final name
    assert _final_files(out) == before
    assert _manifest(out) == old_manifest
    _assert_manifest_holds(out)

    if signame != "SIGKILL":
        return
    # The next render of the stopped scenario succeeds, whatever the kill left in the work folder.
    if moment == "rendering":
        # A kill can land while manim writes a text's SVG, which manim reuses by name as it is:
        # make sure one the stopped render wrote is cut short, as it then is.
        newest = _written_since(work_folder(out), TEXT_PICTURES, started)[-1]
        newest.write_bytes(newest.read_bytes()[: newest.stat().st_size // 2])
    result = _render(out, 5, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    manifest = _manifest(out)
    assert manifest["rendered"] == ["Scores"]
    assert manifest["scenario"]["hash"] != old_manifest["scenario"]["hash"]
    _assert_manifest_holds(out)
    assert _frames(out / f"{SCORES}.mp4") == _frames(base / f"{SCORES}.mp4")  # every frame of the scene
    assert not [path for path in out.rglob("*.tmp-*")]
    assert not [path for path in (work_folder(out) / "next").rglob("*") if path.is_file()]


@pytest.mark.parametrize(
    ("signame", "target", "ignoring_sigint"),
    [
        ("SIGINT", "render", False),  # the render ends (exit 130) before the command sees any signal
        ("SIGINT", "group", True),  # a command started with SIGINT ignored still owns its Ctrl-C
        ("SIGINT", "render", True),
        ("SIGTERM", "group", False),  # as systemd stops a service: every process at once
        ("SIGTERM", "render", False),
    ],
)
def test_a_stop_ends_the_same_whichever_process_sees_it_first(
    base: Path, tmp_path: Path, signame: str, target: str, ignoring_sigint: bool
) -> None:
    if ignoring_sigint:  # the way the command is started does ignore SIGINT
        ignored = "import signal; print(signal.getsignal(signal.SIGINT) is signal.SIG_IGN)"
        probe = subprocess.run([sys.executable, "-c", IGNORING_SIGINT, "-c", ignored], capture_output=True, text=True)
        assert probe.stdout == "True\n", probe.stderr
    out = tmp_path / "bundle"
    shutil.copytree(base, out)
    before = _final_files(out)
    status, messages = _stop_mid_way(out, tmp_path, signame, "rendering", target, ignoring_sigint)
    expected_status, line = _stopped_line(signame)
    assert status == expected_status, messages
    _assert_one_line(messages, line)
    assert "Scores: stopped" in messages and "Scores: failed" not in messages  # the progress lines
    assert _final_files(out) == before
    _assert_manifest_holds(out)


def test_a_render_that_fails_on_its_own_is_a_failure(base: Path, tmp_path: Path) -> None:
    """Only SIGINT and SIGTERM stop a render: one killed otherwise (here SIGKILL, as the kernel
    kills a process out of memory) is a failure of the scene, exit 1."""
    out = tmp_path / "bundle"
    shutil.copytree(base, out)
    before = _final_files(out)
    status, messages = _stop_mid_way(out, tmp_path, "SIGKILL", "rendering", "render")
    assert status == 1, messages
    lines = [text for text in messages.splitlines() if text.startswith(f"{PROG}:")]
    assert len(lines) == 1 and lines[0].startswith(f"{PROG}: error: scene Scores: manim render failed (exit -9): ")
    _assert_one_line(messages, lines[0])
    assert "Scores: failed" in messages
    assert _final_files(out) == before


# -- two at once -----------------------------------------------------------------------------


def test_two_renders_at_once_into_two_folders_both_succeed_into_one_the_second_refuses(
    base: Path, tmp_path: Path
) -> None:
    first, other = tmp_path / "first", tmp_path / "other"
    shutil.copytree(base, first)
    marker = tmp_path / "held"
    with (tmp_path / "first.txt").open("w") as first_log, (tmp_path / "other.txt").open("w") as other_log:
        one = subprocess.Popen(
            _command(first, 5), cwd=tmp_path, env=_held(marker, "play:1"), stdout=subprocess.DEVNULL, stderr=first_log
        )
        two = subprocess.Popen(
            _command(other, 6), cwd=tmp_path, env=clean_environment(), stdout=subprocess.DEVNULL, stderr=other_log
        )
        try:
            _wait_for(marker, one, tmp_path / "first.txt")  # under way, holding its lock
            refused = _render(first, 7, cwd=tmp_path)
            marker.unlink()  # let it go on
            assert one.wait(timeout=TIMEOUT) == 0, (tmp_path / "first.txt").read_text()
            assert two.wait(timeout=TIMEOUT) == 0, (tmp_path / "other.txt").read_text()
        finally:
            for process in (one, two):
                if process.poll() is None:
                    process.kill()
                    process.wait()
    assert refused.returncode == 2
    assert refused.stderr.splitlines() == [
        f"{PROG}: error: --out: another render is writing into {first} (it holds {work_folder(first) / 'lock'}); "
        "wait for it to finish or choose another folder"
    ]
    for out, seed in ((first, 5), (other, 6)):
        _assert_manifest_holds(out)
        assert load_scenario(out / "scenario.toml").to_dict() == Scenario.from_sentence(
            SENTENCE, seed=seed, query=QUERY
        ).to_dict()


# -- the bundle holds what it delivers -----------------------------------------------------------


def test_the_bundle_folder_holds_exactly_what_its_manifest_lists(base: Path) -> None:
    listed = {entry["path"] for entry in _manifest(base)["files"]}
    files = {path.relative_to(base).as_posix() for path in base.rglob("*") if path.is_file()}  # hidden too
    assert files == listed | {"manifest.json"}
    folders = {path.relative_to(base).as_posix() for path in base.rglob("*") if path.is_dir()}
    assert folders == {folder.as_posix() for rel in listed for folder in Path(rel).parents} - {"."}  # none empty
    work = base.parent / ".cache" / base.name  # the work folder, beside the bundle
    assert work_folder(base) == work.resolve()
    assert (work / "lock").is_file() and list(work.glob("media/Scores/videos/*/*/Scores.mp4"))


def test_what_an_older_version_kept_in_the_bundle_goes_after_a_render(base: Path, tmp_path: Path) -> None:
    out = tmp_path / "bundle"
    shutil.copytree(base, out)
    (out / ".work" / "media" / "Scores").mkdir(parents=True)
    (out / ".work" / "media" / "Scores" / "Scores.mp4").write_bytes(b"an old clip")
    (out / ".lock").write_bytes(b"")
    result = _render(out, 4, cwd=tmp_path)  # the same scenario: nothing to render
    assert result.returncode == 0, result.stderr
    assert _manifest(out)["rendered"] == []
    assert not (out / ".work").exists() and not (out / ".lock").exists()
    _assert_manifest_holds(out)


def test_a_lock_an_older_version_holds_in_the_bundle_refuses_a_render(base: Path, tmp_path: Path) -> None:
    out = tmp_path / "bundle"
    shutil.copytree(base, out)
    before = _final_files(out)
    with (out / ".lock").open("w") as held:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)  # as an older version's render holds it
        refused = _render(out, 5, cwd=tmp_path)
    assert refused.returncode == 2
    assert refused.stderr.splitlines() == [
        f"{PROG}: error: --out: another render is writing into {out} (it holds {out / '.lock'}); "
        "wait for it to finish or choose another folder"
    ]
    assert _final_files(out) == {**before, ".lock": hashlib.sha256(b"").hexdigest()}


# -- long and hostile tokens ---------------------------------------------------------------------


def test_long_and_hostile_tokens_are_whole_in_the_handout(base: Path) -> None:
    assert list(load_scenario(base / "scenario.toml").tokens) == TOKENS
    handout = base / "handout"
    labels, _, _ = read_matrix_csv((handout / "X.csv").read_text(encoding="utf-8"))
    assert labels == TOKENS
    _, columns, _ = read_matrix_csv((handout / "weights.csv").read_text(encoding="utf-8"))
    assert columns == TOKENS
    table = (handout / "X.tex").read_text(encoding="utf-8")
    rows = [line.split(" & ")[0] for line in table.splitlines() if line.endswith(r"\\")][1:]
    assert rows == [latex_escape(token) for token in TOKENS]
    walkthrough = (handout / "walkthrough.md").read_text(encoding="utf-8")
    assert f"context vector for '{TOKENS[1]}'" in walkthrough
    assert TOKENS[2] in walkthrough
    assert "…" not in walkthrough


def test_long_tokens_are_whole_in_the_subtitles(base: Path) -> None:
    for name in (f"{SCORES}.srt", "lecture.srt", "narration.md"):
        content = (base / name).read_text(encoding="utf-8")
        assert TOKENS[1] in content, name
        assert "…" not in content, name


def test_the_handout_latex_prints_tokens_literally_and_reads_no_file(base: Path, tmp_path: Path) -> None:
    def compile_latex(body: str) -> tuple[int, str]:
        doc = tmp_path / "doc.tex"
        doc.write_text(
            "\\documentclass{article}\n\\usepackage[utf8]{inputenc}\n\\usepackage{booktabs}\n"
            f"\\begin{{document}}\n{body}\n\\end{{document}}\n",
            encoding="utf-8",
        )
        result = subprocess.run(
            ["pdflatex", "-interaction=batchmode", "-halt-on-error", "-no-shell-escape", doc.name],
            cwd=tmp_path, capture_output=True, text=True, timeout=TIMEOUT,
        )
        return result.returncode, doc.with_suffix(".log").read_text(encoding="utf-8", errors="replace")

    tables = "\n".join(f"\\input{{{base / 'handout' / name}}}\n" for name in ("X.tex", "weights.tex", "Z.tex"))
    status, log = compile_latex(tables)
    assert status == 0, "\n".join(line for line in log.splitlines() if line.startswith("!"))
    assert "(/etc/hostname" not in log  # TeX logs every file it opens as "(path"
    assert (tmp_path / "doc.pdf").stat().st_size > 0
    if Path("/etc/hostname").is_file():  # the log check sees a file TeX does read
        _, control = compile_latex(TOKENS[2])
        assert "(/etc/hostname" in control
