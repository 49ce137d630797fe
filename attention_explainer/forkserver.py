"""A warm process that forks the bundle's manim renders: manim is imported once per bundle.

Importing manim and the scenes takes a manim process about 3 s of CPU before it draws anything
(bench/, this machine), once per scene: a third of a minute for the lecture. The bundle starts
one server instead, in the folder and environment its renders run in (or the command line
starts it first thing, in an empty folder: :func:`start_early`), that imports manim, the
scenes and :mod:`attention_explainer.runner` and then waits. Each render is a fork of it: a
fresh process, as a new ``python -m attention_explainer.runner`` would be, with the imports
already done. Its stderr is a pipe the bundle reads, as before.

The server is a child of the bundle's process, in its process group: Ctrl-C reaches the
renders as it did; the server ignores it and goes when the bundle closes its socket (or dies).
Each render gets back the SIGINT handling the server was started with, which is what a render
started as a process of its own would inherit from the bundle: Python's KeyboardInterrupt, or
SIGINT ignored where the bundle's process ignores it (a Ctrl-C then stops neither the bundle nor
its renders; never the renders alone, which the bundle would take for failures).
Where ``fork`` is missing, or ``ATTENTION_FORK_SERVER=0`` is set, or the server does not start,
the bundle starts each render as its own process (:func:`start_fork_server` returns ``None``).

A real decoder's weights (``--model smollm2``) are read in the server too (:func:`attention_math.smollm.preload`):
as it starts, while the command checks the scenario (:func:`start_early` with ``model``), or else before the
first render of its scenario. Every fork inherits them, where each render would dequantise them again.

The protocol, over a ``SOCK_SEQPACKET`` socket pair (one message per packet): the bundle sends
``{"id", "argv", "cwd", "env"}`` with the write end of the render's stderr pipe; the server
answers ``{"id", "pid"}``, and ``{"id", "status"}`` when that render ends (``status`` as
:attr:`subprocess.Popen.returncode` has it: negative for a signal).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = ["ForkServer", "ForkedRender", "discard_early", "start_early", "start_fork_server"]

ENABLE = "ATTENTION_FORK_SERVER"
PRELOAD_MODEL = "ATTENTION_PRELOAD_MODEL"  # a server started with this set to smollm2 reads its weights as it starts
_PRELOAD = ("manim", "manim.__main__", "attention_explainer.runner", "attention_explainer.accel", "scenes.base",
            "scenes.lecture")
STARTUP_TIMEOUT = 120.0  # s to import manim and the scenes; a server that takes longer is not used
_PACKET = 1 << 20  # a request holds the whole environment: well under this


class ForkedRender:
    """One render forked by the server: what the bundle uses of a :class:`subprocess.Popen`."""

    def __init__(self, request: int, stderr: io.TextIOWrapper) -> None:
        self.request, self.stderr = request, stderr
        self.pid: int | None = None
        self.returncode: int | None = None
        self._started, self._ended = threading.Event(), threading.Event()

    def wait(self, timeout: float | None = None) -> int:
        if not self._ended.wait(timeout):
            raise subprocess.TimeoutExpired("forked render", timeout or 0)
        assert self.returncode is not None
        return self.returncode

    def send_signal(self, number: int) -> None:
        self._started.wait(5)
        if self.pid is not None and not self._ended.is_set():
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, number)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def _ended_with(self, status: int) -> None:
        self.returncode = status
        self._started.set()
        self._ended.set()


class ForkServer:
    """The bundle's side of a running server (see the module's text)."""

    def __init__(self, process: subprocess.Popen[bytes], channel: socket.socket) -> None:
        self.process, self.channel = process, channel
        self._lock = threading.Lock()
        self._renders: dict[int, ForkedRender] = {}
        self._next = 0
        self._reader = threading.Thread(target=self._read_answers, name="fork-server-answers", daemon=True)
        self._reader.start()

    def spawn(self, argv: Sequence[str], cwd: Path, env: Mapping[str, str]) -> ForkedRender:
        """Fork a render running ``python -m attention_explainer.runner ARGV`` in ``cwd`` with ``env``."""
        read_end, write_end = os.pipe()
        stderr = open(read_end, encoding="utf-8", errors="replace")  # closed by the bundle, after the render
        with self._lock:
            self._next += 1
            render = ForkedRender(self._next, stderr)
            self._renders[render.request] = render
            message = json.dumps({"id": render.request, "argv": list(argv), "cwd": str(cwd), "env": dict(env)})
            try:
                socket.send_fds(self.channel, [message.encode()], [write_end])
            except OSError:
                render._ended_with(1)  # the server is gone: the render fails, its pipe ends at once
            finally:
                os.close(write_end)
        return render

    def close(self, *, wait: bool = True) -> None:
        """Let the server go (renders still running finish on their own) and wait for it to end;
        with ``wait=False`` it ends in the background (a Python with manim loaded takes most of
        a second to exit): :func:`discard_early` waits for it then."""
        with contextlib.suppress(OSError):
            self.channel.shutdown(socket.SHUT_RDWR)
        self.channel.close()
        if wait:
            self._ended()
            return
        ending = threading.Thread(target=self._ended, name="fork-server-exit", daemon=True)
        ending.start()
        _ENDING.append(ending)

    def _ended(self) -> None:
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()

    def _read_answers(self) -> None:
        while True:
            try:
                packet = self.channel.recv(_PACKET)
            except OSError:
                packet = b""
            if not packet:
                break
            answer = json.loads(packet)
            with self._lock:
                render = self._renders.get(answer["id"])
            if render is None:
                continue
            if "pid" in answer:
                render.pid = answer["pid"]
                render._started.set()
            else:
                render._ended_with(int(answer["status"]))
                with self._lock:
                    self._renders.pop(answer["id"], None)
        with self._lock:  # the server went: what it had not reported can only have failed
            left, self._renders = list(self._renders.values()), {}
        for render in left:
            render._ended_with(1)


class _Launch:
    """A server started and not yet known to be ready: its process, the bundle's end of the
    socket, and the empty folder it runs in when it was given none (the server removes it once
    it has imported; :meth:`discard` if it never got that far)."""

    def __init__(self, process: subprocess.Popen[bytes], channel: socket.socket, folder: Path | None) -> None:
        self.process, self.channel, self.folder = process, channel, folder

    def ready(self) -> ForkServer | None:
        """The server, once it says it has imported manim; ``None`` if it fails or takes too long."""
        self.channel.settimeout(STARTUP_TIMEOUT)
        try:
            ready = self.channel.recv(_PACKET) == b"ready"
        except OSError:  # a timeout too
            ready = False
        except BaseException:  # a Ctrl-C while it imports: it goes with the command
            self.discard()
            raise
        if not ready:
            self.discard()
            return None
        self.channel.settimeout(None)
        return ForkServer(self.process, self.channel)

    def discard(self) -> None:
        """Stop the server, whatever it is doing."""
        self.channel.close()
        self.process.kill()
        self.process.wait()
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)


def _launch(cwd: Path | None, env: Mapping[str, str]) -> _Launch | None:
    """Start a server in ``cwd`` (in an empty folder of its own if ``None``) with ``env``, not
    waiting for it; ``None`` where forking renders is off or impossible."""
    if not hasattr(os, "fork") or env.get(ENABLE, os.environ.get(ENABLE, "1")) == "0":
        return None
    folder = Path(tempfile.mkdtemp(prefix="attention-fork-server-")) if cwd is None else None
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    try:
        process = subprocess.Popen(
            [sys.executable, "-m", "attention_explainer.forkserver", str(theirs.fileno()),
             *(["--remove-folder"] if folder is not None else [])],
            cwd=cwd or folder, env=dict(env), pass_fds=[theirs.fileno()], stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
    except OSError:
        ours.close()
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)
        return None
    finally:
        theirs.close()
    return _Launch(process, ours, folder)


_EARLY: list[_Launch] = []  # a server started before the bundle knew its folder (start_early)
_ENDING: list[threading.Thread] = []  # servers let go without waiting (ForkServer.close(wait=False))


def start_early(env: Mapping[str, str], *, model: str | None = None) -> None:
    """Start a server now, in an empty folder, for the next :func:`start_fork_server` to take.

    The command line calls this first thing: the server imports manim while the command checks
    the scenario (which imports the scenes too), instead of after it. Its renders still run in
    the folder and environment each is given, with ``sys.path`` as a render started there has it
    (manim, imported in an empty folder, read no ``manim.cfg`` there, as in the bundle's).
    ``model``: the scenario's real model; ``"smollm2"``: the server also reads its weights then.
    """
    discard_early()
    launched = _launch(None, {**env, PRELOAD_MODEL: model} if model else env)
    if launched is not None:
        _EARLY.append(launched)


def discard_early() -> None:
    """Stop a server :func:`start_early` started and nothing took, and wait for the servers let
    go without waiting to end."""
    while _EARLY:
        _EARLY.pop().discard()
    while _ENDING:
        _ENDING.pop().join()


def start_fork_server(cwd: Path, env: Mapping[str, str]) -> ForkServer | None:
    """A server for renders in ``cwd`` with ``env``, once it has imported manim (the one
    :func:`start_early` started, if any); ``None`` where it cannot."""
    if env.get(ENABLE, os.environ.get(ENABLE, "1")) == "0":
        discard_early()
        return None
    launched = _EARLY.pop() if _EARLY else _launch(cwd, env)
    return launched.ready() if launched is not None else None


# -- the server's side ----------------------------------------------------------------------


def _run_render(request: dict[str, Any], stderr_fd: int, sigint: Any) -> int:
    """In the forked child: become the render's process and run the runner; return its status.

    ``sigint``: the SIGINT handler the server was started with (the server ignores it itself).
    """
    os.dup2(stderr_fd, 2)
    os.close(stderr_fd)
    quiet = os.open(os.devnull, os.O_RDWR)
    os.dup2(quiet, 0)
    os.dup2(quiet, 1)
    os.close(quiet)
    signal.signal(signal.SIGINT, sigint)
    os.chdir(request["cwd"])
    sys.path[0] = os.getcwd()  # as ``python -m`` started there has it (the server may run elsewhere)
    os.environ.clear()
    os.environ.update(request["env"])
    from attention_explainer import runner

    sys.argv = [runner.__file__, *request["argv"]]
    try:
        return runner.main(request["argv"])
    except SystemExit as stop:
        return stop.code if isinstance(stop.code, int) else 1
    except KeyboardInterrupt:
        return 130
    except BaseException:  # a render's error ends that render, with its traceback
        import traceback

        traceback.print_exc()
        return 1


def _read_weights() -> None:
    """SmolLM2's weights read in the server as it starts (see :func:`start_early`); a model that cannot be read is
    the renders' to report."""
    with contextlib.suppress(Exception):
        from attention_math import smollm

        smollm.preload()


def _warm(request: dict[str, Any], warmed: set[str]) -> None:
    """Before the first render of a scenario with a real decoder (SmolLM2), read its weights in the server, once:
    every fork inherits them (each render would read them again, about 3 s of CPU). Anything that fails here is
    left to the render, which says it in its own words."""
    spec = request["env"].get("ATTENTION_SCENARIO", "")
    if spec in warmed or not spec.endswith(".toml"):
        return
    warmed.add(spec)
    with contextlib.suppress(Exception):
        from attention_math import load_scenario

        scenario = load_scenario(Path(request["cwd"]) / spec)
        if scenario.model is not None and scenario.model.name == "smollm2":
            from attention_math import smollm

            smollm.preload()


def _fork(channel: socket.socket, request: dict[str, Any], stderr_fd: int, sigint: Any) -> int:
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        status = 1
        try:
            channel.close()
            status = _run_render(request, stderr_fd, sigint)
        finally:
            with contextlib.suppress(BaseException):
                sys.stdout.flush()
                sys.stderr.flush()
            os._exit(status)
    os.close(stderr_fd)
    return pid


def _reap(channel: socket.socket, requests: dict[int, int]) -> None:
    """Report every render that has ended."""
    while requests:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        code = os.waitstatus_to_exitcode(status)
        channel.send(json.dumps({"id": requests.pop(pid), "status": code}).encode())


def serve(channel: socket.socket, *, remove_folder: bool = False) -> None:
    """Import what every render needs, say ready, then fork a render for each request.

    ``remove_folder``: the server runs in an empty folder of its own, needed only while it
    imports (no ``manim.cfg`` is read there, nothing is imported from it): it removes it then,
    so nothing is left behind however the server ends.
    """
    import importlib

    sigint = signal.signal(signal.SIGINT, signal.SIG_IGN)  # the renders get it back (see the module's text)
    if sigint is None:  # a handler not set from Python
        sigint = signal.SIG_DFL
    weights = None
    if os.environ.pop(PRELOAD_MODEL, "") == "smollm2":  # numpy's work beside the imports' (joined before a fork)
        weights = threading.Thread(target=_read_weights, name="read-weights", daemon=True)
        weights.start()
    for name in _PRELOAD:
        importlib.import_module(name)
    if weights is not None:
        weights.join()
    if remove_folder:
        folder = os.getcwd()
        os.chdir(os.path.dirname(folder))
        os.rmdir(folder)
    channel.send(b"ready")
    requests: dict[int, int] = {}  # a render's pid: its request's id
    warmed: set[str] = set()  # the scenarios whose model the server has read
    while True:
        readable, _, _ = select.select([channel], [], [], 0.05)
        _reap(channel, requests)
        if not readable:
            continue
        message, fds, _, _ = socket.recv_fds(channel, _PACKET, 1)
        if not message:
            break  # the bundle closed its end
        request = json.loads(message)
        _warm(request, warmed)
        pid = _fork(channel, request, fds[0], sigint)
        requests[pid] = request["id"]
        channel.send(json.dumps({"id": request["id"], "pid": pid}).encode())
    # Renders still running (the bundle stops them when it is interrupted) end on their own.

if __name__ == "__main__":
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        serve(socket.socket(fileno=int(sys.argv[1])), remove_folder="--remove-folder" in sys.argv[2:])
