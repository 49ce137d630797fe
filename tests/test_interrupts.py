"""Ctrl-C and SIGTERM say what happened, whatever order the command and its renders see them in.

In-process, with no render: how the command records and raises the signals it owns (also when
it was started with SIGINT ignored) and puts back the handlers it found; how the runner reports
a Ctrl-C (130, not click's "Aborted!" and 1); how the bundle reads a render's end (a failure once
an interrupt was received is the interrupt; a render the build stopped itself never masks the
failure that made it stop them). ``tests/test_bundle_safety.py`` stops real renders.
"""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import click
import pytest

from attention_explainer import cli, interrupts, processes, runner
from attention_explainer.bundle import build_bundle
from attention_explainer.plan import BundleError, BundleSettings
from attention_explainer.selection import select_scenes
from attention_math import Scenario


@pytest.fixture(autouse=True)
def _handlers_as_they_were() -> Iterator[None]:
    """The tests change this process's SIGINT and SIGTERM handlers; put them back."""
    previous: dict[int, interrupts.Handler] = {signum: signal.getsignal(signum) for signum in interrupts.STOPS}
    yield
    interrupts.restore(previous)


@pytest.mark.parametrize(
    ("status", "stop"),
    [(-2, KeyboardInterrupt), (130, KeyboardInterrupt), (-15, interrupts.Terminated), (143, interrupts.Terminated),
     (0, None), (1, None), (2, None), (-9, None), (137, None), (-6, None)],
)
def test_a_childs_status_says_whether_it_was_stopped(status: int, stop: type[BaseException] | None) -> None:
    found = interrupts.stop_meant_by(status)
    assert (found if found is None else type(found)) is stop


@pytest.mark.parametrize("inherited", [signal.default_int_handler, signal.SIG_IGN])
def test_the_command_owns_its_signals_raises_the_first_and_records_the_rest(inherited: Any) -> None:
    signal.signal(signal.SIGINT, inherited)  # SIG_IGN: as a background job of a script starts
    previous = interrupts.own_signals()
    assert interrupts.received() is None
    with pytest.raises(KeyboardInterrupt) as first:
        signal.raise_signal(signal.SIGINT)
    assert type(first.value) is KeyboardInterrupt
    signal.raise_signal(signal.SIGTERM)  # recorded; the command is already stopping
    stop = interrupts.received()
    assert type(stop) is KeyboardInterrupt  # the first one decides
    interrupts.restore(previous)
    assert signal.getsignal(signal.SIGINT) is inherited


def test_sigterm_first_is_a_termination() -> None:
    interrupts.own_signals()
    with pytest.raises(interrupts.Terminated):
        signal.raise_signal(signal.SIGTERM)
    assert isinstance(interrupts.received(), interrupts.Terminated)


def test_once_settled_a_signal_is_only_recorded() -> None:
    interrupts.own_signals()
    interrupts.settle()
    signal.raise_signal(signal.SIGINT)
    assert type(interrupts.received()) is KeyboardInterrupt


def test_the_command_puts_back_the_handlers_it_found(capsys: pytest.CaptureFixture[str]) -> None:
    def mine(signum: int, frame: object) -> None:
        raise AssertionError("not a signal the test sends")

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, mine)
    assert cli.main(["presets"]) == 0
    assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    assert signal.getsignal(signal.SIGTERM) is mine
    assert "dog-chased-ball" in capsys.readouterr().out


# -- the runner ----------------------------------------------------------------------------


def _manim_that(does: Callable[[], Any]) -> click.Command:
    """A stand-in for manim's command line: a click command whose ``render`` runs ``does``."""

    @click.group()
    def manim() -> None:
        pass

    @manim.command(context_settings={"ignore_unknown_options": True})
    @click.argument("args", nargs=-1, type=click.UNPROCESSED)
    def render(args: tuple[str, ...]) -> Any:
        return does()

    return manim


def _interrupt() -> None:
    raise KeyboardInterrupt


def _fail() -> None:
    sys.exit(1)  # as manim does when a scene raises


def _misuse() -> None:
    raise click.UsageError("no such option: --bad")


@pytest.mark.parametrize(("does", "status"), [(dict, 0), (_interrupt, 130), (_fail, 1), (_misuse, 2)])
def test_the_runner_reports_a_ctrl_c_as_130_and_manims_own_statuses_as_they_are(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], does: Callable[[], Any], status: int
) -> None:
    monkeypatch.setattr("manim.__main__.main", _manim_that(does))
    monkeypatch.setenv("shell_escape", "f")  # the runner sets it; put back after the test
    assert runner.main(["--stock-manim", "--", "scene.py", "Scene"]) == status
    errors = capsys.readouterr().err
    assert "Aborted!" not in errors
    assert ("no such option: --bad" in errors) == (status == 2)


# -- the bundle ------------------------------------------------------------------------------


class _Held:
    """A render that runs until it is terminated (what the build does to the others at a failure)."""

    def __init__(self) -> None:
        self.terminated = threading.Event()

    def terminate(self) -> None:
        self.terminated.set()


def _build_with(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, ends: Mapping[str, Callable[[Any], tuple[int, list[str]]]],
    scenes: str = "scores", jobs: int = 1,
) -> None:
    """Build a bundle whose renders end as ``ends[scene](renders)`` says, instead of running manim."""

    def run_process(command: list[str], work: Path, env: dict[str, str], job: Any, on_change: Any, renders: Any,
                    server: Any) -> tuple[int, list[str]]:
        return ends[job.spec.name](renders)

    monkeypatch.setattr(processes, "_run_process", run_process)
    monkeypatch.setenv("ATTENTION_FORK_SERVER", "0")  # nothing to fork: no render runs
    build_bundle(Scenario.from_sentence("the cat sat", seed=4), tmp_path / "out", BundleSettings(jobs=jobs),
                 select_scenes(scenes))


def test_a_render_that_fails_with_no_signal_received_is_a_failure(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    interrupts.own_signals()  # as the command runs it, with no signal received
    with pytest.raises((BundleError, KeyboardInterrupt)) as failed:  # (an interrupt here would end pytest)
        _build_with(monkeypatch, tmp_path, {"Scores": lambda renders: (1, ["ValueError: latex failed", "Aborted!"])})
    assert isinstance(failed.value, BundleError), repr(failed.value)
    assert str(failed.value) == "scene Scores: manim render failed (exit 1): ValueError: latex failed"
    assert failed.value.status == 1


@pytest.mark.parametrize(("status", "stop"), [(130, KeyboardInterrupt), (-2, KeyboardInterrupt),
                                              (143, interrupts.Terminated), (-15, interrupts.Terminated)])
def test_a_render_ended_by_a_stop_stops_the_build_as_the_command_would_be(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, status: int, stop: type[BaseException]
) -> None:
    interrupts.own_signals()  # the command has seen no signal: the render saw it first
    with pytest.raises(KeyboardInterrupt) as stopped:
        _build_with(monkeypatch, tmp_path, {"Scores": lambda renders: (status, [])})
    assert type(stopped.value) is stop


def test_a_render_that_fails_once_an_interrupt_was_received_was_interrupted(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    interrupts.own_signals()
    with pytest.raises(KeyboardInterrupt):
        signal.raise_signal(signal.SIGINT)  # the command's Ctrl-C; its render is still ending
    with pytest.raises(KeyboardInterrupt) as stopped:
        _build_with(monkeypatch, tmp_path, {"Scores": lambda renders: (1, ["Aborted!"])})
    assert type(stopped.value) is KeyboardInterrupt


def test_the_renders_the_build_stops_at_a_failure_never_mask_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    held = _Held()
    running = threading.Event()

    def runs_until_terminated(renders: Any) -> tuple[int, list[str]]:
        renders.started(held)
        running.set()
        assert held.terminated.wait(60), "the build never stopped the other render"
        renders.ended(held)
        return -signal.SIGTERM, []  # a SIGTERM, from the build itself

    def fails(renders: Any) -> tuple[int, list[str]]:
        assert running.wait(60)
        return 1, ["ValueError: latex failed"]

    interrupts.own_signals()
    with pytest.raises((BundleError, KeyboardInterrupt)) as failed:
        ends = {"Scores": fails, "ScaleAndSoftmax": runs_until_terminated}
        _build_with(monkeypatch, tmp_path, ends, "scores,softmax", jobs=2)
    assert isinstance(failed.value, BundleError), repr(failed.value)
    assert str(failed.value) == "scene Scores: manim render failed (exit 1): ValueError: latex failed"
    assert held.terminated.is_set()
