"""The import contract of the house (``/work/shared/architecture.md``), read from the source by ``ast``.

Every ``import`` and ``from ... import`` of the packages and tools counts, at module level, in a
function or under ``if TYPE_CHECKING`` alike (a lazy import is still a dependency):

* no import cycles: no module reaches itself through the modules it imports;
* ``attention_math`` imports numpy, the standard library and itself, nothing else (its optional
  model module, ``attention_math.minilm``, may import the model's own libraries; the other,
  ``attention_math.smollm``, reads its GGUF file with numpy and the standard library alone);
* ``scenes`` never imports ``attention_explainer``, but a lecture's handout (``scenes.<folder>.handout``) its
  vocabulary, :data:`HANDOUT_VOCABULARY`;
* nothing outside ``attention_explainer.accel`` reaches into it: its modules are the runner's
  and its hooks' alone, and its entry (``attention_explainer.accel`` itself) is the runner's, the command
  line's and the bundle's;
* no module imports another's private (``_underscore``) names, the tests included; a private
  module is imported only from inside its own package.

Each rule is checked on the real tree and, to show that it fails, on small trees made here.
"""

from __future__ import annotations

import ast
import itertools
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CHECKED = ("attention_math", "attention_explainer", "scenes", "bench", "tools")
"""The folders whose imports make the graph (``tools`` is a folder of scripts, named ``tools.x``)."""
PRIVATE_ONLY = ("tests",)
"""Folders checked only for private names (a test may import what it tests, ``accel`` included)."""

MATH = "attention_math"
MATH_ALLOWED = {"numpy"}
MATH_EXTRAS = {"attention_math.minilm": {"safetensors", "tokenizers"}}
"""The optional modules of ``attention_math`` and the libraries each may import besides."""
ACCEL = "attention_explainer.accel"
ACCEL_ENTRY_USERS = {"attention_explainer.runner", "attention_explainer.cli", "attention_explainer.bundle"}
ACCEL_MODULE_USERS = {
    "attention_explainer.runner",
    "attention_explainer.hooks",
    "attention_explainer.narration_hooks",
    "attention_explainer.sharing_hooks",
    "attention_explainer.still_hooks",
}
"""The runner and its hooks (each hook a group of :mod:`attention_explainer.accel.patching`'s patches)."""
HANDOUT_VOCABULARY = {"attention_explainer.outputs.steps", "attention_explainer.escape"}
"""What a lecture's handout module may import of ``attention_explainer``: the steps it declares and the escaping of
the notes it writes (neither imports a lecture)."""


@dataclass(frozen=True)
class Import:
    """One imported module (a ``from`` import: the names taken from it) and where."""

    importer: str
    target: str
    names: tuple[str, ...]
    where: str  # "path:line"

    def __str__(self) -> str:
        taken = f" ({', '.join(self.names)})" if self.names else ""
        return f"{self.where}: {self.importer} imports {self.target}{taken}"


def module_name(path: Path, root: Path) -> str:
    """``attention_explainer/outputs/page.py`` → ``attention_explainer.outputs.page``; a package's
    ``__init__.py`` is the package."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _from_base(node: ast.ImportFrom, importer: str, is_package: bool) -> str:
    """The module a ``from`` import names, relative imports resolved against the importer."""
    if not node.level:
        return node.module or ""
    package = importer.split(".") if is_package else importer.split(".")[:-1]
    base = package[: len(package) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


def imports_of(path: Path, root: Path, known: set[str]) -> list[Import]:
    """Every import in the file, wherever it stands; ``from m import x`` is an import of ``m.x``
    when that is a module of the tree, else of ``m``."""
    importer = module_name(path, root)
    is_package = path.name == "__init__.py"
    found: list[Import] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        where = f"{path.relative_to(root).as_posix()}:{getattr(node, 'lineno', 0)}"
        if isinstance(node, ast.Import):
            found += [Import(importer, alias.name, (), where) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = _from_base(node, importer, is_package)
            modules = [alias.name for alias in node.names if f"{base}.{alias.name}" in known]
            found += [Import(importer, f"{base}.{name}", (), where) for name in modules]
            names = tuple(alias.name for alias in node.names if alias.name not in modules)
            if names:
                found.append(Import(importer, base, names, where))
    return found


def modules_of(root: Path, folders: Iterable[str]) -> dict[str, Path]:
    """Every module under ``folders`` of ``root`` by its dotted name."""
    files = [path for folder in folders for path in sorted((root / folder).rglob("*.py"))]
    return {module_name(path, root): path for path in files if "__pycache__" not in path.parts}


def all_imports(root: Path, folders: Iterable[str] = CHECKED) -> list[Import]:
    known = modules_of(root, folders)
    return [item for path in known.values() for item in imports_of(path, root, set(known))]


# -- the rules --------------------------------------------------------------------------------


def _strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components of ``graph`` (iteratively: no recursion limit)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, successors = work[-1]
            step = next(successors, None)
            if step is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    found.append(sorted(component))
            elif step not in index:
                index[step] = low[step] = len(index)
                stack.append(step)
                on_stack.add(step)
                work.append((step, iter(sorted(graph[step]))))
            elif step in on_stack:
                low[node] = min(low[node], index[step])
    return found


def _cycle_through(start: str, members: set[str], graph: dict[str, set[str]]) -> list[str]:
    """The shortest path from ``start`` back to itself inside one component."""
    paths = {start: [start]}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for step in sorted(graph[node] & members):
                if step == start:
                    return [*paths[node], start]
                if step not in paths:
                    paths[step] = [*paths[node], step]
                    following.append(step)
        frontier = following
    raise AssertionError(f"no cycle through {start}")  # a component of two or more always has one


def cycles(imports: list[Import], known: set[str]) -> list[str]:
    """One line per import cycle: the modules around it and the import that makes each step."""
    graph: dict[str, set[str]] = {module: set() for module in known}
    first: dict[tuple[str, str], Import] = {}
    for item in imports:
        if item.target in known and item.target != item.importer:
            graph[item.importer].add(item.target)
            first.setdefault((item.importer, item.target), item)
    found = []
    for component in _strongly_connected(graph):
        if len(component) > 1:
            path = _cycle_through(component[0], set(component), graph)
            steps = "; ".join(str(first[pair]) for pair in itertools.pairwise(path))
            found.append(f"import cycle {' -> '.join(path)} ({steps})")
    return found


def math_leaks(imports: list[Import]) -> list[str]:
    """Imports of ``attention_math`` of anything but numpy, the standard library and itself."""
    found = []
    for item in imports:
        if item.importer != MATH and not item.importer.startswith(f"{MATH}."):
            continue
        top = item.target.split(".")[0]
        optional = [libs for name, libs in MATH_EXTRAS.items() if f"{item.importer}.".startswith(f"{name}.")]
        extras = optional[0] if optional else set()
        if top not in sys.stdlib_module_names | MATH_ALLOWED | extras | {MATH, "__future__"}:
            found.append(f"{item}: attention_math may import only numpy and the standard library")
    return found


def scene_leaks(imports: list[Import]) -> list[str]:
    """Imports of ``attention_explainer`` by ``scenes``, but a lecture's handout's of its vocabulary."""
    return [
        f"{item}: scenes never import attention_explainer"
        for item in imports
        if item.importer.split(".")[0] == "scenes" and item.target.split(".")[0] == "attention_explainer"
        and not (_is_handout(item.importer) and item.target in HANDOUT_VOCABULARY)
    ]


def _is_handout(module: str) -> bool:
    """``scenes.<folder>.handout``: a lecture's handout and notebook."""
    parts = module.split(".")
    return len(parts) == 3 and parts[0] == "scenes" and parts[2] == "handout"


def accel_leaks(imports: list[Import]) -> list[str]:
    """Imports of the accelerator from outside it, but the runner's (and the entry's few users)."""
    found = []
    for item in imports:
        if item.importer == ACCEL or item.importer.startswith(f"{ACCEL}."):
            continue
        if item.target.startswith(f"{ACCEL}.") and item.importer not in ACCEL_MODULE_USERS:
            found.append(f"{item}: only the runner reaches into attention_explainer.accel's modules")
        elif item.target == ACCEL and item.importer not in ACCEL_ENTRY_USERS:
            users = ", ".join(sorted(ACCEL_ENTRY_USERS))
            found.append(f"{item}: attention_explainer.accel is imported only by {users}")
    return found


def private_imports(imports: list[Import]) -> list[str]:
    """Private names imported from another module, and private modules imported from outside
    their package."""
    found = []
    for item in imports:
        for name in item.names:
            if _is_private(name):
                found.append(f"{item}: imports the private name {name}; give it a public name")
        parts = item.target.split(".")
        for depth, part in enumerate(parts):
            package = ".".join(parts[:depth])
            inside = item.importer == package or item.importer.startswith(f"{package}.")
            if _is_private(part) and depth and not inside:
                private = ".".join(parts[: depth + 1])
                found.append(f"{item}: imports the private module {private} from outside {package}")
                break
    return found


def violations(root: Path, folders: Iterable[str] = CHECKED, private_only: Iterable[str] = PRIVATE_ONLY) -> list[str]:
    """Every broken rule of the contract in the tree at ``root``, one line each."""
    folders = [folder for folder in folders if (root / folder).is_dir()]
    known = set(modules_of(root, folders))
    imports = all_imports(root, folders)
    found = cycles(imports, known) + math_leaks(imports) + scene_leaks(imports) + accel_leaks(imports)
    extra = [folder for folder in private_only if (root / folder).is_dir()]
    return found + private_imports(imports + all_imports(root, extra))


# -- the real tree -----------------------------------------------------------------------------


def test_the_tree_keeps_the_import_contract() -> None:
    found = violations(ROOT)
    assert not found, "\n".join(found)


def test_the_walk_sees_lazy_imports_of_the_real_tree() -> None:
    imports = all_imports(ROOT)
    edges = {(item.importer, item.target) for item in imports}
    # the command line imports the bundle inside its functions only
    assert ("attention_explainer.cli", "attention_explainer.bundle") in edges
    assert ("attention_explainer.bundle", "attention_explainer.outputs.page") in edges
    assert ("attention_explainer.outputs.page", "attention_explainer.plan") in edges  # under TYPE_CHECKING
    assert {item.importer.split(".")[0] for item in imports} == set(CHECKED)


# -- the rules fail on planted imports ---------------------------------------------------------


def _tree(root: Path, files: dict[str, str]) -> Path:
    """A tree of modules: ``{"pkg/a.py": source}``; every folder gets an ``__init__.py`` but ``tools``."""
    for rel, source in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source, encoding="utf-8")
        for folder in path.relative_to(root).parents:
            init = root / folder / "__init__.py"
            if folder.parts and folder.parts[0] != "tools" and not init.exists():
                init.write_text("", encoding="utf-8")
    return root


CLEAN = {
    "attention_math/core.py": "import math\nimport numpy as np\nfrom ._errors import Oops\n",
    "attention_math/_errors.py": "class Oops(ValueError):\n    pass\n",
    "attention_math/minilm.py": "def load():\n    import safetensors\n    import tokenizers\n",
    "attention_explainer/plan.py": "from attention_math.core import np\n",
    "attention_explainer/bundle.py": "from .plan import np\nfrom .outputs import page\nfrom .accel import enable\n",
    "attention_explainer/outputs/page.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
    "    from ..plan import np\n",
    "attention_explainer/accel/__init__.py": "from .speedups import enable\nfrom . import _rows\n",
    "attention_explainer/accel/speedups.py": "from ._rows import rows\ndef enable():\n    pass\n",
    "attention_explainer/accel/_rows.py": "def rows():\n    pass\n",
    "attention_explainer/runner.py": "def main():\n    from attention_explainer.accel import speedups\n",
    "scenes/base.py": "import manim\nfrom attention_math.core import np\n",
    "attention_explainer/outputs/steps.py": "from attention_math.core import np\n",
    "scenes/masked/__init__.py": "",
    "scenes/masked/handout.py": "from attention_explainer.outputs.steps import np\n",
    "tools/stills.py": "from attention_explainer import bundle\n",
    "tests/test_x.py": "from attention_explainer.accel import enable\nfrom attention_math import core\n",
}


def test_a_clean_tree_keeps_the_contract(tmp_path: Path) -> None:
    assert violations(_tree(tmp_path, CLEAN)) == []


def test_a_cycle_through_a_lazy_import_fails_and_names_each_import(tmp_path: Path) -> None:
    planted = dict(CLEAN)
    planted["attention_explainer/outputs/page.py"] = "def lecture_page():\n    from ..bundle import build\n"
    assert violations(_tree(tmp_path, planted)) == [
        "import cycle attention_explainer.bundle -> attention_explainer.outputs.page -> attention_explainer.bundle "
        "(attention_explainer/bundle.py:2: attention_explainer.bundle imports attention_explainer.outputs.page; "
        "attention_explainer/outputs/page.py:2: attention_explainer.outputs.page imports attention_explainer.bundle "
        "(build))"
    ]


def test_a_longer_cycle_under_type_checking_fails(tmp_path: Path) -> None:
    planted = dict(CLEAN)
    planted["attention_explainer/plan.py"] = (
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from . import bundle\n"
    )
    found = violations(_tree(tmp_path, planted))
    assert len(found) == 1 and found[0].startswith(
        "import cycle attention_explainer.bundle -> attention_explainer.plan -> attention_explainer.bundle"
    )
    assert "attention_explainer/plan.py:3" in found[0]


@pytest.mark.parametrize(
    ("module", "source", "expected"),
    [
        ("attention_math/draw.py", "def show():\n    import manim\n", "draw.py:2: attention_math.draw imports manim"),
        ("attention_math/trace.py", "from attention_explainer import bundle\n", "imports attention_explainer.bundle"),
        ("attention_math/weights.py", "import safetensors\n", "attention_math.weights imports safetensors"),
        ("attention_math/__init__.py", "import scipy.special\n", "attention_math imports scipy.special"),
    ],
)
def test_attention_math_importing_beyond_numpy_fails(tmp_path: Path, module: str, source: str, expected: str) -> None:
    planted = {**CLEAN, module: source}
    found = violations(_tree(tmp_path, planted))
    assert len(found) == 1 and expected in found[0] and "only numpy and the standard library" in found[0], found


def test_a_scene_importing_attention_explainer_fails(tmp_path: Path) -> None:
    planted = {**CLEAN, "scenes/kit/text.py": "def share():\n    from attention_explainer.plan import np\n"}
    assert violations(_tree(tmp_path, planted)) == [
        "scenes/kit/text.py:2: scenes.kit.text imports attention_explainer.plan (np): "
        "scenes never import attention_explainer"
    ]


def test_a_lecture_handout_importing_beyond_its_vocabulary_fails(tmp_path: Path) -> None:
    planted = {**CLEAN, "scenes/masked/handout.py": "from attention_explainer.plan import np\n"}
    assert violations(_tree(tmp_path, planted)) == [
        "scenes/masked/handout.py:1: scenes.masked.handout imports attention_explainer.plan (np): "
        "scenes never import attention_explainer"
    ]


@pytest.mark.parametrize(
    ("module", "source", "expected"),
    [
        ("attention_explainer/bundle.py", "from .accel import speedups\n", "only the runner reaches into"),
        ("tools/bench.py", "import attention_explainer.accel.speedups\n", "only the runner reaches into"),
        ("attention_explainer/outputs/page.py", "from .. import accel\n", "is imported only by"),
        ("bench/floor.py", "from attention_explainer.accel import enable\n", "is imported only by"),
    ],
)
def test_reaching_into_the_accelerator_fails(tmp_path: Path, module: str, source: str, expected: str) -> None:
    planted = {**CLEAN, module: source}
    found = violations(_tree(tmp_path, planted))
    assert len(found) == 1 and found[0].startswith(f"{module}:1: ") and expected in found[0], found


@pytest.mark.parametrize(
    ("module", "source", "expected"),
    [
        ("attention_explainer/outputs/page.py", "from .handout import _labels\n", "the private name _labels"),
        ("tests/test_x.py", "from attention_explainer.bundle import _read_manifest\n", "private name _read_manifest"),
        ("tests/test_y.py", "import attention_math._errors\n", "private module attention_math._errors from outside"),
        ("bench/run.py", "from attention_math import _errors\n", "private module attention_math._errors from outside"),
    ],
)
def test_importing_a_private_name_fails(tmp_path: Path, module: str, source: str, expected: str) -> None:
    planted = {**CLEAN, module: source, "attention_explainer/outputs/handout.py": "def _labels():\n    pass\n"}
    found = violations(_tree(tmp_path, planted))
    assert len(found) == 1 and found[0].startswith(f"{module}:1: ") and expected in found[0], found
