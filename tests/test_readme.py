"""The README's examples run: its Python blocks (every assert must hold) and its scenario files."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import numpy as np
import pytest

from attention_math import preset, scenario_from_mapping

README = Path(__file__).resolve().parents[1] / "README.md"


def fences(language: str) -> list[str]:
    """The contents of the README's fenced blocks in ``language``, in order."""
    text = README.read_text(encoding="utf-8")
    return [
        re.sub(r"^ {0,3}", "", block, flags=re.MULTILINE)  # blocks inside a list item are indented
        for block in re.findall(rf"^ *```{language}\n(.*?)^ *```", text, flags=re.MULTILINE | re.DOTALL)
    ]


def test_the_readme_has_the_examples_this_file_runs() -> None:
    assert len(fences("python")) >= 1
    assert any("assert" in block for block in fences("python"))
    assert len(fences("toml")) >= 3


@pytest.mark.parametrize("number", range(len(fences("python"))))
def test_a_python_block_runs_and_its_asserts_hold(number: int) -> None:
    block = fences("python")[number]
    exec(compile(block, f"README.md python block {number + 1}", "exec"), {"__name__": "readme"})


def test_the_explicit_scenario_file_is_the_default_preset() -> None:
    explicit = next(block for block in fences("toml") if "embeddings" in block)
    loaded = scenario_from_mapping(tomllib.loads(explicit))
    default = preset("dog-chased-ball")
    assert loaded.tokens == default.tokens and loaded.query == default.query
    assert loaded.title == default.title
    for name in ("embeddings", "w_query", "w_key", "w_value"):
        assert np.array_equal(getattr(loaded, name), getattr(default, name)), name


def test_the_sentence_scenario_file_loads_as_described() -> None:
    sentence = next(block for block in fences("toml") if "sentence" in block)
    loaded = scenario_from_mapping(tomllib.loads(sentence))
    assert loaded.tokens == ("The", "cat", "sat", "on", "the", "mat")
    assert (loaded.d_in, loaded.d_k, loaded.query_token) == (4, 2, "sat")


def test_the_heads_scenario_file_is_the_two_heads_preset() -> None:
    heads = next(block for block in fences("toml") if "[[heads]]" in block)
    loaded = scenario_from_mapping(tomllib.loads(heads))
    two = preset("two-heads")
    assert (loaded.title, loaded.tokens, loaded.query, loaded.n_heads) == (two.title, two.tokens, two.query, 2)
    for name in ("embeddings", "w_query", "w_key", "w_value", "w_out"):
        assert np.array_equal(getattr(loaded, name), getattr(two, name)), name


def test_the_sentence_file_documents_every_sentence_key() -> None:
    sentence = next(block for block in fences("toml") if "sentence" in block)
    for key in ("seed", "d_model", "d_k", "d_v", "heads", "query"):
        assert f"\n{key} = " in "\n" + sentence, key


def test_the_readme_lists_every_lecture_and_every_scene() -> None:
    """Each lecture of ``scenes.plan.LECTURES`` has its ``--lecture`` line and each scene its table row, with
    its file, and a still in the gallery."""
    from scenes.plan import LECTURES

    text = README.read_text(encoding="utf-8")
    for lecture, scenes in LECTURES.items():
        if lecture != "self-attention":
            assert f"--lecture {lecture}" in text, lecture
        for module, name in scenes:
            path = module.replace(".", "/") + ".py"
            assert re.search(rf"^\| \d+ \| `{name}` \| `{re.escape(path)}` \|", text, flags=re.MULTILINE), name
            still = f"docs/stills/{lecture.replace('-', '_')}/{path.rsplit('/', 1)[1][:-3]}.png"
            assert f"]({still})" in text, still
            assert (README.parent / still).is_file(), f"{still} is missing: python tools/stills.py --lecture {lecture}"
