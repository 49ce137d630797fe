"""Tokens are user text: shown literally, never typeset by TeX, never able to run or read anything.

* TeX (which the scenes use only for their own formulas) runs with ``\\write18`` disabled
  outright, not TeX Live's default restricted mode: checked with manim's own compile function.
* Every lecture's handout tables (each lecture's ``handout.py``), for the same tokens,
  compiled by pdflatex: the tokens print literally, no file they name is read, nothing runs.
* A still of ``Scores`` rendered for tokens such as ``\\input{/etc/hostname}`` and
  ``\\write18{touch PWNED}``: no file named PWNED appears, no TeX source holds user text, no
  file the tokens name is read into anything, and the frame shows each label where the dry run
  puts it, with the literal (shortened) text.
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
import uuid
from pathlib import Path

import numpy as np
import pytest
from manim import Text, tempconfig
from PIL import Image
from scene_helpers import DRY_RUN_SETTINGS, REPO, clean_environment, manim_command, on_screen, text_of, with_scenario

from attention_explainer.outputs.handout import handout_files
from attention_math import Scenario, load_scenario
from scenes.kit.palette import BACKGROUND
from scenes.kit.text import shorten_token
from scenes.registry import lecture_names
from scenes.self_attention.scores import Scores

TIMEOUT = 600

# -- TeX never runs programs -------------------------------------------------------------------

_TEX_PROBE = r"""
import sys
from pathlib import Path
from manim import config, tempconfig
from manim.utils.tex_file_writing import compile_tex, make_tex_compilation_command

with tempconfig({"media_dir": sys.argv[2], "dry_run": True}):
    if sys.argv[1] == "with-scenes":
        from scenes.base import ExplainerScene

        ExplainerScene().setup()  # what every scene does before it draws anything
    template = config.tex_template
    tex_dir = Path(config.get_dir("tex_dir"))
    tex_dir.mkdir(parents=True, exist_ok=True)
    source = tex_dir / "probe.tex"
    # kpsewhich is on TeX Live's list of programs a restricted \write18 may run
    source.write_text(
        "\\documentclass{article}\\begin{document}\\immediate\\write18{kpsewhich article.cls}x\\end{document}\n"
    )
    print(" ".join(make_tex_compilation_command(template.tex_compiler, template.output_format, source, tex_dir)))
    compile_tex(source, template.tex_compiler, template.output_format)
    for line in source.with_suffix(".log").read_text(errors="replace").splitlines():
        if "runsystem(" in line:
            print(line)
"""


def _tex_probe(mode: str, media: Path) -> list[str]:
    env = {k: v for k, v in os.environ.items() if k != "shell_escape"}
    result = subprocess.run(
        [sys.executable, "-c", _TEX_PROBE, mode, str(media)],
        capture_output=True, text=True, env=env, cwd=media.parent, timeout=TIMEOUT,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.splitlines()


def test_tex_runs_without_shell_escape(tmp_path: Path) -> None:
    command, *runsystem = _tex_probe("with-scenes", tmp_path / "scenes")
    assert "shell-escape" not in command and "write18" not in command, command
    assert runsystem == ["runsystem(kpsewhich article.cls)...disabled."]
    # The check sees the difference: without the scenes' setting TeX Live runs it (restricted mode).
    _, *default = _tex_probe("plain", tmp_path / "plain")
    assert default and "disabled" not in default[0], default


# -- a still of hostile tokens -------------------------------------------------------------------


def _hostile_scenario_file(folder: Path) -> tuple[Path, list[str], str]:
    """A scenario whose tokens try to read files and run a program; (file, tokens, secret)."""
    secret = f"SECRET-{uuid.uuid4().hex}"
    (folder / "secret.tex").write_text(secret + "\n", encoding="utf-8")
    tokens = [
        r"\input{/etc/hostname}",
        r"\write18{touch PWNED}",
        "the",
        rf"\input{{{folder / 'secret'}}}",
        r"$&#^_%~",
        "cat",
    ]
    rows = ", ".join(f"[{x:.1f}, {y:.1f}]" for x, y in np.random.default_rng(5).uniform(-1, 1, (len(tokens), 2)))
    # TOML literal strings: the backslashes reach the scenario as typed
    listed = ", ".join(f"'{t}'" for t in tokens)
    path = folder / "hostile.toml"
    path.write_text(
        f"tokens = [{listed}]\nembeddings = [{rows}]\n"
        "w_query = [[0.5, 0.1], [0.2, 0.9]]\nw_key = [[0.3, 0.7], [0.8, 0.2]]\nw_value = [[0.4, 0.6], [0.1, 0.3]]\n"
        "query = 2\n",
        encoding="utf-8",
    )
    return path, tokens, secret


@pytest.mark.parametrize("lecture", sorted(lecture_names()))
def test_every_lectures_handout_latex_prints_hostile_tokens_and_reads_nothing(lecture: str, tmp_path: Path) -> None:
    scenario_file, tokens, secret = _hostile_scenario_file(tmp_path)
    one_head = load_scenario(scenario_file)
    two_heads = Scenario.from_sentence(" ".join(f"t{i}" for i in range(len(tokens))), heads=2, seed=2)
    scenario = one_head if lecture != "multi-head" else dataclasses.replace(two_heads, tokens=one_head.tokens)
    handout = tmp_path / "handout"
    handout.mkdir()
    tables = []
    for name, content in handout_files(scenario, lecture).items():
        (handout / name).write_text(content, encoding="utf-8")
        if name.endswith(".tex"):
            tables.append(f"\\input{{{handout / name}}}\\par")
    doc = tmp_path / "doc.tex"
    doc.write_text(
        "\\documentclass{article}\n\\usepackage[utf8]{inputenc}\n\\usepackage{booktabs}\n"
        "\\begin{document}\n" + "\n".join(tables) + "\n\\end{document}\n",
        encoding="utf-8",
    )
    result = subprocess.run(
        ["pdflatex", "-interaction=batchmode", "-halt-on-error", "-no-shell-escape", doc.name],
        cwd=tmp_path, capture_output=True, text=True, timeout=TIMEOUT,
    )
    log = doc.with_suffix(".log").read_text(encoding="utf-8", errors="replace")
    assert result.returncode == 0, "\n".join(line for line in log.splitlines() if line.startswith("!"))
    assert "(/etc/hostname" not in log and "secret.tex" not in log  # TeX logs every file it opens as "(path"
    assert not list(tmp_path.rglob("PWNED"))
    printed = subprocess.run(["pdftotext", "doc.pdf", "-"], cwd=tmp_path, capture_output=True, text=True,
                             timeout=TIMEOUT).stdout
    assert secret not in printed
    assert r"\input{/etc/hostname}" in printed and r"\write18{touch PWNED}" in printed  # as typed


def _final_texts(scenario_file: Path, media: Path) -> list[Text]:
    """The Text mobjects on screen at the end of a dry run of Scores (the still's frame)."""
    scene_class = with_scenario(Scores, load_scenario(scenario_file))
    with tempconfig({**DRY_RUN_SETTINGS, "media_dir": str(media)}):
        scene = scene_class(skip_animations=True)
        scene.render()
    return [mob for mob in on_screen(scene) if isinstance(mob, Text)]


@pytest.mark.render
def test_a_still_of_hostile_tokens_shows_them_literally_and_runs_nothing(tmp_path: Path) -> None:
    scenario_file, tokens, secret = _hostile_scenario_file(tmp_path)
    assert list(load_scenario(scenario_file).tokens) == tokens
    work, media = tmp_path / "work", tmp_path / "media"
    work.mkdir()
    env = {**clean_environment(), "ATTENTION_SCENARIO": str(scenario_file)}
    env.pop("shell_escape", None)  # the scenes' own setting, not the test's, must hold
    result = subprocess.run(
        manim_command(
            "-ql", "-s", "--media_dir", str(media), str(REPO / "scenes" / "self_attention" / "scores.py"), "Scores"
        ),
        cwd=work, env=env, capture_output=True, text=True, timeout=TIMEOUT,
    )
    assert result.returncode == 0, result.stderr[-3000:]

    # nothing ran: no PWNED anywhere it could have been made
    assert not list(tmp_path.rglob("PWNED"))
    assert not (REPO / "PWNED").exists() and not (Path.cwd() / "PWNED").exists()

    # TeX saw only the scenes' own formulas: no token, not even a piece of one
    sources = list(media.rglob("*.tex"))
    for source in sources:
        content = source.read_text(encoding="utf-8")
        for token in tokens:
            assert token not in content, (token, source)
        for piece in ("input", "write18", "PWNED", "hostname", "secret", "#^"):
            assert piece not in content, (piece, source)

    # nothing read the files the tokens name
    hostname = Path("/etc/hostname").read_text(encoding="utf-8").strip() if Path("/etc/hostname").exists() else ""
    generated = [p for p in media.rglob("*") if p.is_file()]
    assert generated
    for path in generated:
        data = path.read_bytes()
        assert secret.encode() not in data, path
        if hostname and path.suffix in {".tex", ".srt", ".log", ".aux"}:
            assert hostname.encode() not in data, path

    # the frame: every token's label says the token (shortened as documented) and is drawn
    texts = _final_texts(scenario_file, tmp_path / "dry-run")
    stills = list(media.glob("images/scores/Scores*.png"))
    assert len(stills) == 1, stills
    frame = np.asarray(Image.open(stills[0]).convert("RGB")).astype(int)
    height, width, _ = frame.shape
    assert (width, height) == (DRY_RUN_SETTINGS["pixel_width"], DRY_RUN_SETTINGS["pixel_height"])
    background = np.array([int(BACKGROUND[k : k + 2], 16) for k in (1, 3, 5)])
    frame_w, frame_h = 14.222222222222221, 8.0
    for token in tokens:
        # Scores shortens a label further when it does not fit its column (scenes.self_attention.scores.token_labels)
        shown = {shorten_token(token, limit) for limit in range(3, 11)}
        labels = [mob for mob in texts  # the token alone, or inside a label such as "k2 \\write1…"
                  if text_of(mob) in shown or any(part in shown for part in getattr(mob, "token_parts", []))]
        assert labels, f"no label for {token!r} on screen; texts: {[text_of(m) for m in texts]}"
        label = labels[0]
        left, right = label.get_left()[0], label.get_right()[0]
        bottom, top = label.get_bottom()[1], label.get_top()[1]
        x0, x1 = (int((x + frame_w / 2) / frame_w * width) for x in (left, right))
        y0, y1 = (int((frame_h / 2 - y) / frame_h * height) for y in (top, bottom))
        assert 0 <= x0 < x1 <= width and 0 <= y0 < y1 <= height, (token, x0, x1, y0, y1)
        patch = frame[y0 : y1 + 1, x0 : x1 + 1]
        ink = np.abs(patch - background).max(axis=2) > 60
        assert ink.mean() > 0.05, f"the label of {token!r} is blank in the still ({ink.mean():.3f} inked)"
    # and the query's shortened name in the score line, as the scene writes it
    query_name = shorten_token(tokens[1])
    assert any(query_name in text_of(mob) and text_of(mob) != query_name for mob in texts)
