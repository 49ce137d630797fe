"""The fork server runs the bundle's renders as the runner would run them as processes of their own."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from attention_explainer import forkserver


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[forkserver.ForkServer]:
    work = tmp_path_factory.mktemp("work")
    started = forkserver.start_fork_server(work, dict(os.environ, ATTENTION_FORK_SERVER="1"))
    assert started is not None, "the fork server did not start"
    yield started
    started.close()
    assert started.process.returncode == 0


def _finish(render: forkserver.ForkedRender) -> tuple[int, str]:
    lines = render.stderr.read()
    status = render.wait(timeout=120)
    render.stderr.close()
    return status, lines


def test_a_render_that_works_ends_with_status_0(server: forkserver.ForkServer, tmp_path: Path) -> None:
    render = server.spawn(["--", "--help"], tmp_path, dict(os.environ))  # manim render --help: exit 0
    status, lines = _finish(render)
    assert (status, lines) == (0, "")
    assert render.pid is not None and render.pid != server.process.pid


def test_a_failing_render_reports_its_status_and_error(server: forkserver.ForkServer, tmp_path: Path) -> None:
    status, lines = _finish(server.spawn(["--", str(tmp_path / "missing.py"), "Scene"], tmp_path, dict(os.environ)))
    assert status != 0
    assert "missing.py" in lines


def test_renders_run_in_their_folder_and_environment(server: forkserver.ForkServer, tmp_path: Path) -> None:
    (tmp_path / "where.py").write_text(
        "import os\nfrom pathlib import Path\nfrom manim import Scene\n\nclass Where(Scene):\n"
        "    def construct(self):\n        Path('seen.txt').write_text(os.getcwd() + ' ' + os.environ['MARK'])\n",
        encoding="utf-8",
    )
    status, lines = _finish(server.spawn(["--", "-ql", "--dry_run", "where.py", "Where"], tmp_path,
                                         {**os.environ, "MARK": "render-7"}))
    assert status == 0, lines
    assert (tmp_path / "seen.txt").read_text() == f"{tmp_path} render-7"
    assert "MARK" not in os.environ


def test_a_usage_error_of_the_runner_is_the_renders(server: forkserver.ForkServer, tmp_path: Path) -> None:
    status, lines = _finish(server.spawn(["--bad-option", "--"], tmp_path, dict(os.environ)))
    assert status == 2 and "--bad-option" in lines  # argparse's usage error, on the render's stderr


def test_a_stopped_render_ends_by_its_signal(server: forkserver.ForkServer, tmp_path: Path) -> None:
    scene = tmp_path / "slow.py"
    scene.write_text("from manim import Scene\n\nclass Slow(Scene):\n    def construct(self):\n"
                     "        import time\n        time.sleep(60)\n", encoding="utf-8")
    render = server.spawn(["--", "-ql", "--dry_run", str(scene), "Slow"], tmp_path, dict(os.environ))
    render.terminate()
    status, _ = _finish(render)
    assert status == -15


SIGINT_SCENE = (
    "import signal\nfrom pathlib import Path\nfrom manim import Scene\n\nclass Sigint(Scene):\n"
    "    def construct(self):\n        handler = signal.getsignal(signal.SIGINT)\n"
    "        name = 'ignored' if handler is signal.SIG_IGN else getattr(handler, '__name__', repr(handler))\n"
    "        Path('sigint.txt').write_text(name)\n"
)


def _sigint_of_a_render(server: forkserver.ForkServer, folder: Path) -> str:
    """The SIGINT handler a render of ``server`` runs with, by name."""
    (folder / "sigint.py").write_text(SIGINT_SCENE, encoding="utf-8")
    status, lines = _finish(server.spawn(["--", "-ql", "--dry_run", "sigint.py", "Sigint"], folder, dict(os.environ)))
    assert status == 0, lines
    return (folder / "sigint.txt").read_text()


@pytest.mark.parametrize(("bundles", "renders"), [(signal.default_int_handler, "default_int_handler"),
                                                   (signal.SIG_IGN, "ignored")])
def test_a_render_handles_sigint_as_the_bundles_process_had_it(tmp_path: Path, bundles: Any, renders: str) -> None:
    """A Ctrl-C stops the renders exactly when it stops the bundle: the renders of a bundle that
    ignores SIGINT ignore it (a render started as a process of its own would inherit that too);
    the server itself ignores it either way."""
    previous = signal.signal(signal.SIGINT, bundles)  # the test process is the bundle's here
    try:
        started = forkserver.start_fork_server(tmp_path, dict(os.environ, ATTENTION_FORK_SERVER="1"))
    finally:
        signal.signal(signal.SIGINT, previous)
    assert started is not None, "the fork server did not start"
    try:
        assert _sigint_of_a_render(started, tmp_path) == renders
    finally:
        started.close()


def test_the_server_can_be_turned_off(tmp_path: Path) -> None:
    assert forkserver.start_fork_server(tmp_path, {**os.environ, "ATTENTION_FORK_SERVER": "0"}) is None


def test_a_server_started_early_is_the_one_taken_and_renders_as_in_their_folder(tmp_path: Path) -> None:
    env = dict(os.environ, ATTENTION_FORK_SERVER="1")
    forkserver.start_early(env)
    early = forkserver._EARLY[0]
    assert early.folder is not None and early.folder.is_dir() and not any(early.folder.iterdir())
    started = forkserver.start_fork_server(tmp_path, env)
    assert started is not None and started.process is early.process and not forkserver._EARLY
    assert not early.folder.exists()  # needed only while the server imported: gone once it is ready
    (tmp_path / "path.py").write_text(
        "import sys\nfrom pathlib import Path\nfrom manim import Scene\n\nclass Path0(Scene):\n"
        "    def construct(self):\n        Path('path.txt').write_text(sys.path[0])\n",
        encoding="utf-8",
    )
    try:
        status, lines = _finish(started.spawn(["--", "-ql", "--dry_run", "path.py", "Path0"], tmp_path, env))
    finally:
        started.close()
    assert status == 0, lines
    assert (tmp_path / "path.txt").read_text() == os.path.realpath(tmp_path)  # as `python -m` started there


def test_a_server_started_early_and_not_taken_is_stopped() -> None:
    forkserver.start_early(dict(os.environ, ATTENTION_FORK_SERVER="1"))
    early = forkserver._EARLY[0]
    forkserver.discard_early()
    assert not forkserver._EARLY and early.process.returncode is not None
    assert early.folder is not None and not early.folder.exists()


def test_a_real_decoders_weights_are_read_once_before_the_first_fork(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """The server reads SmolLM2's weights before the first render of a scenario with it, once (its forks inherit
    them); a scenario of made-up numbers, a preset name or an unreadable file reads nothing and fails nothing."""
    from attention_math import ScenarioError, smollm

    try:
        smollm.model_path()
    except ScenarioError:
        pytest.skip(f"the model is not installed: {smollm.INSTALL_MODEL}")
    read: list[str] = []
    monkeypatch.setattr(smollm, "preload", lambda: read.append("weights"))
    model = tmp_path / "model.toml"
    model.write_text('[model]\nname = "smollm2"\nsentence = "Hi there"\nlayer = 1\nhead = 1\n', encoding="utf-8")
    made_up = tmp_path / "toy.toml"
    made_up.write_text('sentence = "the cat sat"\nseed = 3\n', encoding="utf-8")
    broken = tmp_path / "broken.toml"
    broken.write_text("model = [", encoding="utf-8")
    warmed: set[str] = set()
    for spec in ("dog-chased-ball", str(made_up), str(broken), "model.toml", "model.toml"):
        forkserver._warm({"env": {"ATTENTION_SCENARIO": spec}, "cwd": str(tmp_path)}, warmed)
    assert read == ["weights"]


def test_a_server_started_early_for_a_real_decoder_is_told_to_read_its_weights(monkeypatch: pytest.MonkeyPatch) -> None:
    """``start_early(model="smollm2")`` starts the server with the switch that makes it read the weights as it starts
    (while the command checks the scenario); without a model, no switch."""
    started: list[dict[str, str]] = []
    monkeypatch.setattr(forkserver, "_launch", lambda cwd, env: started.append(dict(env)))
    forkserver.start_early({"PATH": "/usr/bin"}, model="smollm2")
    forkserver.start_early({"PATH": "/usr/bin"})
    assert [env.get(forkserver.PRELOAD_MODEL) for env in started] == ["smollm2", None]
