"""Ctrl-C and SIGTERM end a render the same way, whichever of its processes sees them first.

A Ctrl-C at the terminal is SIGINT to the command's whole process group: the command, the
process the renders are forked from (which ignores it) and every render. Each of them runs when
the scheduler lets it, so a render can end before the command has run its own handler, and the
render's exit status is then all the command knows. The outcome is therefore read from every
side, and is the same in any order: exit 130 and one line saying "interrupted" for SIGINT, 143
and "terminated" for SIGTERM.

* The command owns its SIGINT and SIGTERM (:func:`own_signals`): each is recorded and raised in
  the main thread, as :class:`KeyboardInterrupt` or :class:`Terminated`, even when the command
  was started with SIGINT ignored. (A background job of a non-interactive shell, ``make test &``
  for one, starts with SIGINT ignored; Python then installs no handler, and the command was deaf
  to the Ctrl-C that stopped its renders, which reported it as a failure of manim.) A render
  that must be immune to the terminal's Ctrl-C is started in a session of its own (``setsid``).
* A render says it was interrupted: the runner exits 130 on a Ctrl-C (128 + the signal's
  number, the shell's convention), a render ended by the signal itself has the negative status
  of :attr:`subprocess.Popen.returncode` (:func:`stop_meant_by`).
* A render that fails once the command has received a signal failed because of it
  (:func:`received`): a Ctrl-C also stops what a render runs (latex), which the render reports
  as an error.

The first signal stops the command; later ones are recorded and wait for its one line.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

__all__ = ["Terminated", "handled", "own_signals", "received", "restore", "settle", "signals_deferred", "stop_meant_by"]

STOPS = (signal.SIGINT, signal.SIGTERM)
"""The signals that stop a render and leave the previous bundle whole."""

Handler = Callable[[int, FrameType | None], Any] | int | signal.Handlers | None


class Terminated(KeyboardInterrupt):
    """SIGTERM, handled like Ctrl-C (stop, keep the previous bundle) but reported as such."""


class _Record:
    """The signals this process received since :func:`own_signals`, and whether it is settled
    (the first one was raised, or the command is reporting its outcome)."""

    def __init__(self) -> None:
        self.signals: list[int] = []
        self.settled = False


_RECORD = _Record()


def _stop_for(signum: int) -> KeyboardInterrupt:
    return Terminated() if signum == signal.SIGTERM else KeyboardInterrupt()


def _on_signal(signum: int, frame: FrameType | None) -> None:
    _RECORD.signals.append(signum)
    if not _RECORD.settled:
        _RECORD.settled = True
        raise _stop_for(signum)


def own_signals() -> dict[int, Handler]:
    """Record SIGINT and SIGTERM and raise the first in the main thread, whatever this process
    inherited; return the handlers they had (for :func:`restore`). Main thread only."""
    _RECORD.signals.clear()
    _RECORD.settled = False
    return {signum: signal.signal(signum, _on_signal) for signum in STOPS}


def restore(previous: dict[int, Handler]) -> None:
    """Put back the handlers :func:`own_signals` replaced."""
    for signum, handler in previous.items():
        signal.signal(signum, signal.SIG_DFL if handler is None else handler)


def handled() -> None:
    """Tell Python that this process handled its interrupt and exits with a status of its own.

    CPython (3.11 here) marks an interrupt that escaped code run by ``exec`` or ``eval`` of a
    string as unhandled, even when a caller caught it (scipy's imports run such code), and
    ``python -m`` then ends the process by SIGINT at exit, whatever status it chose: a Ctrl-C that
    landed in such an import ended the command with -2, not 130. Running code from a string again
    clears the mark.
    """
    exec("pass")


def settle() -> None:
    """From now on a signal is only recorded: the command is reporting its outcome in one line."""
    _RECORD.settled = True


def received() -> KeyboardInterrupt | None:
    """The stop the first signal received since :func:`own_signals` asks for, if any (any thread)."""
    signals = list(_RECORD.signals)
    return _stop_for(signals[0]) if signals else None


def stop_meant_by(status: int) -> KeyboardInterrupt | None:
    """The stop a child's exit ``status`` reports, if any: ended by SIGINT or SIGTERM (a negative
    status) or exited 128 + its number (130, 143).

    >>> type(stop_meant_by(-2)).__name__, type(stop_meant_by(143)).__name__, stop_meant_by(1)
    ('KeyboardInterrupt', 'Terminated', None)
    """
    for signum in STOPS:
        if status in (-signum, 128 + signum):
            return _stop_for(signum)
    return None


@contextmanager
def signals_deferred() -> Iterator[None]:
    """Hold SIGINT and SIGTERM until the block is done, then deliver them (main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []
    held = (signal.SIGINT, signal.SIGTERM)
    previous = {signum: signal.signal(signum, lambda signum, frame: caught.append(signum)) for signum in held}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, signal.SIG_DFL if handler is None else handler)
    for number in dict.fromkeys(caught):
        signal.raise_signal(number)
