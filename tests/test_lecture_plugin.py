"""A lecture in a package of its own: ``examples/lecture-plugin`` installed into a fresh environment.

The environment is a new venv that sees this project's installed packages (a ``.pth`` file naming the
project's folder and its site-packages) and nothing of the plug-in until ``pip install`` puts it there, as
a lecturer would (``--no-deps --no-build-isolation``: no network). Then, in that environment, the registry
finds the lecture through its entry point, ``attention-explainer render --lecture temperature`` makes its
bundle with page and handout, and the project's own number, layout and mutation tests prove its scene from
the checks it declares. The project's environment never sees it: the other tests run without it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sysconfig
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PLUGIN = ROOT / "examples" / "lecture-plugin"

pytestmark = pytest.mark.xdist_group("lecture-plugin")


def _run(python: Path, *args: str, cwd: Path, timeout: int = 600) -> subprocess.CompletedProcess[str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith(("PYTEST", "ATTENTION_"))}
    env.pop("PYTHONPATH", None)
    return subprocess.run([str(python), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout,
                          check=False)


@pytest.fixture(scope="module")
def plugin_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh environment's Python with the plug-in installed by pip (the project's packages beneath it)."""
    where = tmp_path_factory.mktemp("plugin-env")
    venv.EnvBuilder(with_pip=False).create(where)
    python = where / "bin" / "python"
    purelib = Path(_run(python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])",
                        cwd=where).stdout.strip())
    (purelib / "project.pth").write_text(f"{ROOT}\n{sysconfig.get_paths()['purelib']}\n", encoding="utf-8")
    installed = _run(python, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", "--no-index",
                     str(PLUGIN), cwd=where)
    assert installed.returncode == 0, installed.stderr[-2000:]
    return python


def test_the_project_itself_does_not_see_the_plugin() -> None:
    from scenes.registry import lecture_names

    assert "temperature" not in lecture_names()


def test_pip_install_makes_it_a_lecture(plugin_python: Path, tmp_path: Path) -> None:
    found = _run(plugin_python, "-c", "from scenes.registry import lecture; l = lecture('temperature'); "
                 "print(l.scenes, l.load_steps().probe, l.load_checks().faults[0].name)", cwd=tmp_path)
    assert found.returncode == 0, found.stderr[-2000:]
    assert "('attention_temperature.temperature', 'Temperature')" in found.stdout
    assert "tempered temperature columns swapped" in found.stdout


def test_render_lecture_makes_its_bundle_with_page_and_handout(plugin_python: Path, tmp_path: Path) -> None:
    out = tmp_path / "bundle"
    made = _run(plugin_python, "-m", "attention_explainer", "render", "--lecture", "temperature", "--quality", "l",
                "--sentence", "Plugins render their own lecture", "--out", str(out), cwd=tmp_path)
    assert made.returncode == 0, made.stderr[-3000:]
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert [scene["name"] for scene in manifest["scenes"]] == ["Temperature"]
    assert (out / "01-temperature.mp4").stat().st_size > 10_000
    page = (out / "index.html").read_text(encoding="utf-8")
    assert "A lecture of your own: softmax temperature" in page and "τ = 0.5" in page
    tempered = (out / "handout" / "tempered.csv").read_text(encoding="utf-8").splitlines()
    assert tempered[0].split(",")[1:] == ["Plugins", "render", "their", "own", "lecture"]
    assert (out / "handout" / "notebook.ipynb").is_file() and (out / "stills" / "01-temperature.png").is_file()


def test_its_declared_checks_prove_its_scene_and_catch_its_faults(plugin_python: Path) -> None:
    """The project's own tests, run in the plug-in's environment, pick up its checks: 3 scenarios × (numbers,
    layout) and its two planted faults; its doctests run too."""
    proved = _run(plugin_python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "0",
                  "tests/test_scenes_numbers.py", "tests/test_scenes_layout.py", "tests/test_mutations.py",
                  "-k", "Temperature or temperature", cwd=ROOT, timeout=900)
    assert proved.returncode == 0, proved.stdout[-3000:]
    assert " failed" not in proved.stdout and " passed" in proved.stdout, proved.stdout[-500:]
    cases = [line for line in proved.stdout.splitlines() if " passed" in line][-1]
    assert int(cases.split()[0]) >= 20, cases
    doctests = _run(plugin_python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "0", "--doctest-modules",
                    str(PLUGIN / "attention_temperature" / "tempering.py"), cwd=ROOT)
    assert doctests.returncode == 0, doctests.stdout[-2000:]

