"""The README and docs/: the README a front page (the two set-up commands first, at most 250 lines, a
still of every scene), every scene in docs/scenes.md, every relative link alive, every option of the
command line in docs/cli.md, docs/speed.md's prose free of figures, and the examples run: the Python
blocks (every assert must hold) and the scenario files."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import numpy as np
import pytest

from attention_math import preset, scenario_from_mapping

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
PAGES = [README, *sorted(DOCS.rglob("*.md"))]
FENCE = re.compile(r"^ *```(\w*)\n(.*?)^ *```", flags=re.MULTILINE | re.DOTALL)
MOST_LINES = 250


def fences(language: str, page: Path) -> list[str]:
    """The contents of ``page``'s fenced blocks in ``language``, in order."""
    return [
        re.sub(r"^ {0,3}", "", block, flags=re.MULTILINE)  # blocks inside a list item are indented
        for lang, block in FENCE.findall(page.read_text(encoding="utf-8"))
        if lang == language
    ]


def prose(text: str) -> str:
    """``text`` without its fenced blocks and inline code."""
    return re.sub(r"`[^`\n]*`", "", FENCE.sub("", text))


PYTHON_BLOCKS = [(page, block) for page in PAGES for block in fences("python", page)]


def test_the_two_set_up_commands_are_the_readme_s_first_code_block() -> None:
    first = FENCE.search(README.read_text(encoding="utf-8"))
    assert first is not None and first.group(1) == "sh"
    lines = first.group(2).splitlines()
    assert len(lines) == 2, lines
    for line, target in zip(lines, ("make render", "make test"), strict=True):
        assert line.startswith("command -v make >/dev/null || (apt-get update && apt-get install -y make); "), line
        assert line.split("; ", 1)[1].startswith(f"{target} "), line


def test_the_readme_is_a_front_page() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= MOST_LINES, f"README.md has {len(lines)} lines: move detail into docs/"


def test_the_docs_have_the_examples_this_file_runs() -> None:
    assert any("assert" in block for page, block in PYTHON_BLOCKS if page.name == "math.md")
    assert len(fences("toml", DOCS / "scenarios.md")) >= 3


@pytest.mark.parametrize("number", range(len(PYTHON_BLOCKS)))
def test_a_python_block_runs_and_its_asserts_hold(number: int) -> None:
    page, block = PYTHON_BLOCKS[number]
    name = f"{page.relative_to(ROOT)} python block {number + 1}"
    exec(compile(block, name, "exec"), {"__name__": "readme"})


def _scenario_file(marker: str) -> str:
    return next(block for block in fences("toml", DOCS / "scenarios.md") if marker in block)


def test_the_explicit_scenario_file_is_the_default_preset() -> None:
    loaded = scenario_from_mapping(tomllib.loads(_scenario_file("embeddings")))
    default = preset("dog-chased-ball")
    assert loaded.tokens == default.tokens and loaded.query == default.query
    assert loaded.title == default.title
    for name in ("embeddings", "w_query", "w_key", "w_value"):
        assert np.array_equal(getattr(loaded, name), getattr(default, name)), name


def test_the_sentence_scenario_file_loads_as_described() -> None:
    loaded = scenario_from_mapping(tomllib.loads(_scenario_file("sentence")))
    assert loaded.tokens == ("The", "cat", "sat", "on", "the", "mat")
    assert (loaded.d_in, loaded.d_k, loaded.query_token) == (4, 2, "sat")


def test_the_heads_scenario_file_is_the_two_heads_preset() -> None:
    loaded = scenario_from_mapping(tomllib.loads(_scenario_file("[[heads]]")))
    two = preset("two-heads")
    assert (loaded.title, loaded.tokens, loaded.query, loaded.n_heads) == (two.title, two.tokens, two.query, 2)
    for name in ("embeddings", "w_query", "w_key", "w_value", "w_out"):
        assert np.array_equal(getattr(loaded, name), getattr(two, name)), name


def test_the_sentence_file_documents_every_sentence_key() -> None:
    sentence = _scenario_file("sentence")
    for key in ("seed", "d_model", "d_k", "d_v", "heads", "query"):
        assert f"\n{key} = " in "\n" + sentence, key


def test_every_lecture_has_its_line_its_stills_and_its_scene_table() -> None:
    """Each lecture of ``scenes.registry`` has its ``--lecture`` line in the README and each scene,
    numbered in lecture order, its row with its file in docs/scenes.md and its still in the README's
    gallery; the README keeps no scene table of its own."""
    from scenes.registry import lectures

    readme = README.read_text(encoding="utf-8")
    scenes_page = (DOCS / "scenes.md").read_text(encoding="utf-8")
    for declared in lectures():
        lecture, scenes = declared.name, declared.scenes
        line = next((line for line in readme.splitlines() if f"`--lecture {lecture}`" in line), "")
        assert f"| {len(scenes)} |" in line, f"README: {lecture}'s line in the table of lectures, with its scene count"
        for number, (module, name) in enumerate(scenes, start=1):
            path = module.replace(".", "/") + ".py"
            row = rf"^\| {number} \| `{name}` \| `{re.escape(path)}` \|"
            assert re.search(row, scenes_page, flags=re.MULTILINE), f"docs/scenes.md: no row {number} for {name}"
            assert not re.search(row, readme, flags=re.MULTILINE), f"{name}'s row belongs in docs/scenes.md only"
            still = f"{declared.stills}/{path.rsplit('/', 1)[1][:-3]}.png"
            assert f"]({still})" in readme, still
            assert (ROOT / still).is_file(), f"{still} is missing: python tools/stills.py --lecture {lecture}"


def slug(heading: str) -> str:
    """GitHub's anchor for a Markdown heading: lower case, punctuation dropped, spaces as hyphens."""
    text = heading.strip().lower().replace("`", "")
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    return {slug(h) for h in re.findall(r"^#{1,6} (.+)$", FENCE.sub("", page.read_text(encoding="utf-8")), re.M)}


def links(page: Path) -> list[str]:
    """The targets of ``page``'s Markdown links and images, outside code."""
    return re.findall(r"\]\(([^)\s]+)\)", prose(page.read_text(encoding="utf-8")))


def test_the_slug_is_github_s() -> None:
    assert slug("Gallery: the last frame of every scene") == "gallery-the-last-frame-of-every-scene"
    assert slug("`python -m attention_math`: the walkthrough") == "python--m-attention_math-the-walkthrough"
    assert slug("Why √d_k") == "why-d_k"


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(ROOT)))
def test_every_relative_link_points_to_a_file_and_heading_that_exist(page: Path) -> None:
    for target in links(page):
        if re.match(r"^[a-z]+:", target):  # https:, mailto: — not checked offline
            continue
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        assert file.exists(), f"{page.relative_to(ROOT)}: {target} points to nothing"
        if anchor and file.suffix == ".md":
            assert anchor in anchors(file), f"{page.relative_to(ROOT)}: {target}: no such heading"


def _help(command: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    if command[0] == "attention-explainer":
        from attention_explainer.cli import main
    else:
        from attention_math.__main__ import main
    with pytest.raises(SystemExit) as done:
        main([*command[1:], "--help"])
    assert done.value.code == 0
    return capsys.readouterr().out


@pytest.mark.parametrize(
    "command",
    [["attention-explainer"], ["attention-explainer", "render"], ["attention-explainer", "numbers"],
     ["attention-explainer", "presets"], ["attention-explainer", "course"], ["python -m attention_math"]],
    ids=" ".join,
)
def test_docs_cli_names_every_option_of_the_command_line(
    command: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    cli_page = (DOCS / "cli.md").read_text(encoding="utf-8")
    options = set(re.findall(r"(?<![\w-])(--[a-z][a-z-]*)", _help(command, capsys))) - {"--help"}
    assert options, command
    missing = sorted(option for option in options if not re.search(rf"{option}(?![a-z-])", cli_page))
    assert not missing, f"docs/cli.md does not name {missing} of {' '.join(command)}"


def test_the_speed_page_s_prose_holds_no_figures() -> None:
    """Every figure of docs/speed.md is in the generated table: prose that quotes seconds, percentages or a
    host goes stale at the next ``make bench``."""
    text = (DOCS / "speed.md").read_text(encoding="utf-8")
    head, rest = text.split("<!-- bench:start -->", 1)
    _, tail = rest.split("<!-- bench:end -->", 1)
    for line in prose(head + tail).splitlines():
        assert not re.search(r"\d", line), f"docs/speed.md: a figure outside the generated table: {line}"
