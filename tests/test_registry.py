"""The registry of lectures (issue 39): each lecture declared once, in its folder, found through an entry point.

The built-in lectures come from the entry-point group as a third party's would; a bad declaration is refused in
one line (:class:`scenes.registry.LectureError`); the course's order is kept, third parties after it by name; and
no module outside a lecture's folder (in ``scenes/``, ``attention_explainer/``, ``bench/``, ``tools/``) names one
of its scene classes in code.
"""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Iterator
from importlib.metadata import EntryPoint, entry_points
from pathlib import Path

import pytest

from scenes import registry
from scenes.registry import BUILT_IN, GROUP, Lecture, LectureError, check_lectures, lecture, lecture_names, lectures

ROOT = Path(__file__).resolve().parents[1]
OUTSIDE = ("scenes", "attention_explainer", "bench", "tools")
"""The folders whose modules may not name a lecture's scenes (a lecture's own folder of ``scenes/`` aside)."""


def toy(name: str, *scenes: str) -> Lecture:
    """A small declaration: ``scenes`` as classes of a module ``toy``, each showing nothing."""
    return Lecture(name=name, title=f"the {name} lecture", scenes=tuple(("toy", scene) for scene in scenes),
                   preset="raw-dot-product", shows=dict.fromkeys(scenes, frozenset()), cost={}, steps="toy:STEPS")


@pytest.fixture
def fresh_registry() -> Iterator[None]:
    """The registry read afresh in the test and again after it (it keeps what it read)."""
    lectures.cache_clear()
    yield
    lectures.cache_clear()


# -- the built-in lectures -------------------------------------------------------------------------


def test_every_built_in_lecture_is_an_entry_point_of_its_own_folder() -> None:
    points = {point.name: point for point in entry_points(group=GROUP)}
    assert set(BUILT_IN) <= set(points), "pip install -e . after changing pyproject.toml's entry points"
    for name in BUILT_IN:
        declared = points[name].load()
        folder = points[name].value.split(":")[0]
        assert points[name].value == f"{folder}:LECTURE" and folder.startswith("scenes."), points[name].value
        assert declared is lecture(name) and declared.name == name
        assert all(module.startswith(f"{folder}.") for module, _ in declared.scenes), name
        assert declared.steps.startswith(f"{folder}."), declared.steps


def test_the_built_in_lectures_come_in_the_course_order() -> None:
    assert lecture_names()[: len(BUILT_IN)] == BUILT_IN
    assert BUILT_IN == ("self-attention", "masked", "multi-head", "real-head", "learned", "rope", "inference",
                        "flash-attention", "latent-attention")


def test_each_declaration_holds_what_the_project_reads_of_it() -> None:
    for declared in lectures():
        names = set(declared.scene_names)
        assert set(declared.shows) == names, declared.name
        assert declared.own_preset <= names and declared.all_heads <= names, declared.name
        for still in (declared.storyboard, declared.stills):
            assert still is None or (ROOT / still).exists(), still
    assert [item.name for item in lectures() if item.model] == ["real-head"]
    assert [item.name for item in lectures() if item.bench_limit is None] == [registry.DEFAULT_LECTURE]


def test_an_unknown_lecture_is_a_key_error_naming_the_known_ones() -> None:
    with pytest.raises(KeyError, match="unknown lecture 'nope'; expected one of self-attention, masked, multi-head"):
        lecture("nope")
    with pytest.raises(KeyError, match="NoSuchScene is not a scene of any lecture"):
        registry.lecture_of_scene("NoSuchScene")


# -- bad declarations ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("found", "message"),
    [
        ([("toy", "LECTURE")], "lecture 'toy': its entry point gives a str, not a scenes.registry.Lecture"),
        ([("toy", toy("other", "Toy"))], "lecture 'toy': its declaration is named 'other'; the two must match"),
        ([("toy", toy("toy"))], "lecture 'toy': it has no scenes"),
        ([("a", toy("a", "Toy")), ("b", toy("b", "Toy"))], "lecture 'b': scene Toy is already lecture 'a''s"),
        ([("toy", Lecture(name="toy", title="", scenes=(("toy", "Toy"),), preset="", shows={}, cost={},
                          steps="toy:STEPS"))], "lecture 'toy': scene Toy is missing from its shows"),
    ],
)
def test_a_bad_declaration_is_one_clear_error(found: list[tuple[str, object]], message: str) -> None:
    with pytest.raises(LectureError) as error:
        check_lectures(found)
    assert str(error.value) == message


def test_a_third_party_scene_named_as_a_built_in_one_is_refused() -> None:
    built_in = [(item.name, item) for item in lectures()]
    with pytest.raises(LectureError, match="lecture 'zz': scene Scores is already lecture 'self-attention''s"):
        check_lectures([*built_in, ("zz", toy("zz", "Scores"))])


def test_a_lazy_reference_names_module_and_attribute() -> None:
    assert registry.load("scenes.registry:GROUP") == GROUP
    with pytest.raises(LectureError, match=r"'scenes\.registry': expected 'module:attribute'"):
        registry.load("scenes.registry")


# -- discovery ---------------------------------------------------------------------------------------


def test_third_parties_follow_the_built_ins_by_name() -> None:
    built_in = [(item.name, item) for item in reversed(lectures())]
    found = check_lectures([("zebra", toy("zebra", "Zebra")), *built_in, ("aardvark", toy("aardvark", "Aardvark"))])
    assert [item.name for item in found] == [*BUILT_IN, "aardvark", "zebra"]


def test_a_third_party_lecture_installed_as_an_entry_point_is_found(
    fresh_registry: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    package = tmp_path / "third_party_lecture"
    package.mkdir()
    (package / "__init__.py").write_text(
        "from scenes.registry import Lecture\n"
        "LECTURE = Lecture(name='sparse', title='Sparse attention', scenes=(('third_party_lecture.band', 'Band'),),\n"
        "                  preset='raw-dot-product', shows={'Band': frozenset()}, cost={'l': {'Band': 0.5}},\n"
        "                  steps='third_party_lecture.handout:STEPS')\n",
        encoding="utf-8",
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    ours = list(entry_points(group=GROUP))
    theirs = EntryPoint("sparse", "third_party_lecture:LECTURE", GROUP)
    monkeypatch.setattr(registry, "entry_points", lambda group: [theirs, *ours] if group == GROUP else [])
    assert lecture_names() == (*BUILT_IN, "sparse")
    assert registry.lecture_of_scene("Band").name == "sparse" and registry.render_cost("Band", "l") == 0.5
    monkeypatch.delitem(sys.modules, "third_party_lecture")


def test_a_bad_entry_point_stops_discovery_with_the_clear_error(
    fresh_registry: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    broken = EntryPoint("broken", "scenes.registry:GROUP", GROUP)  # a string, not a Lecture
    monkeypatch.setattr(registry, "entry_points", lambda group: [broken])
    with pytest.raises(LectureError, match="lecture 'broken': its entry point gives a str"):
        lectures()


# -- a lecture is one folder --------------------------------------------------------------------------


def _docstrings(tree: ast.AST) -> set[int]:
    """The ids of the docstring constants of a module, its classes and functions."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def named_in_code(path: Path, names: set[str]) -> list[str]:
    """Where the code of ``path`` names one of ``names``: an identifier, an attribute, an import or a string in
    code (docstrings, their examples and comments aside)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    docstrings = _docstrings(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            word = node.id
        elif isinstance(node, ast.Attribute):
            word = node.attr
        elif isinstance(node, ast.alias):
            word = node.asname or node.name.rsplit(".", 1)[-1]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            word = node.value
        else:
            continue
        if word in names:
            found.append(f"{path.relative_to(ROOT)}:{getattr(node, 'lineno', 0)}: {word}")
    return found


def test_no_module_outside_a_lecture_folder_names_its_scenes() -> None:
    names = {name for item in lectures() for name in item.scene_names}
    folders = {ROOT / Path(*module.split(".")[:2]) for item in lectures() for module, _ in item.scenes}
    files = [path for folder in OUTSIDE for path in sorted((ROOT / folder).rglob("*.py"))]
    outside = [path for path in files if not any(path.is_relative_to(folder) for folder in folders)]
    assert ROOT / "scenes" / "base.py" in outside
    found = [line for path in outside for line in named_in_code(path, names)]
    assert not found, "\n".join(found)


def test_the_scan_sees_a_scene_named_in_code(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    planted = tmp_path / "plan.py"
    planted.write_text('"""Scores in a docstring is fine."""\n# so is Scores in a comment\n'
                       'COST = {"Scores": 1.0}\nfrom scenes.self_attention.scores import Scores\n', encoding="utf-8")
    assert sorted(named_in_code(planted, {"Scores"})) == ["plan.py:3: Scores", "plan.py:4: Scores"]


def test_checks_that_are_no_lecture_checks_are_one_clear_error() -> None:
    toy = Lecture(name="toy", title="A toy", scenes=(("toy.scenes", "Toy"),), preset="raw-dot-product",
                  shows={"Toy": frozenset()}, cost={}, steps="toy.handout:STEPS", checks="scenes.registry:GROUP")
    message = "lecture 'toy': its checks are a str, not a scenes.registry.LectureChecks"
    with pytest.raises(LectureError, match=re.escape(message)):
        toy.load_checks()


def test_a_lecture_declares_kinds_of_its_own_that_its_facts_may_name(monkeypatch: pytest.MonkeyPatch) -> None:
    from scenes.facts import position

    toy = Lecture(name="toy", title="A toy", scenes=(("toy.scenes", "Toy"),), preset="raw-dot-product",
                  shows={"Toy": frozenset()}, cost={}, steps="toy.handout:STEPS",
                  position_kinds={"expert": "an expert of a mixture"})
    with pytest.raises(ValueError, match="of: expected one of token, "):
        position(0, of="expert")
    monkeypatch.setattr("scenes.facts.lectures", lambda: (*lectures(), toy))
    assert position(2, of="expert").index == (2,)
