"""Signals turned into exceptions, for the duration of a block."""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import threading
from collections.abc import Callable, Iterator


@contextlib.contextmanager
def raising_on(signum: int, make_exception: Callable[[], BaseException]) -> Iterator[None]:
    """Raise ``make_exception()`` in the block when ``signum`` arrives; the previous handler
    is restored after. Only the main thread receives signals, so elsewhere this does nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum, frame):
        raise make_exception()

    previous = signal.signal(signum, handler)
    try:
        yield
    finally:
        signal.signal(signum, previous)


class TimeLimitReached(BaseException):
    """A block ran past its time (:func:`alarm`): a BaseException, like KeyboardInterrupt, so
    that no ``except Exception`` on the way swallows it."""


@contextlib.contextmanager
def alarm(seconds: float | None, make_exception: Callable[[], BaseException]) -> Iterator[None]:
    """Raise ``make_exception()`` in the block after ``seconds`` (SIGALRM; a long C call is
    stopped when it returns). Only the main thread receives signals: elsewhere, and with
    ``seconds`` None, the block runs unbounded."""
    if seconds is None or threading.current_thread() is not threading.main_thread():
        yield
        return
    with raising_on(signal.SIGALRM, make_exception):
        signal.setitimer(signal.ITIMER_REAL, max(seconds, 1e-3))  # 0 would disarm it
        try:
            yield
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)


#: the signals that stop a sweep
STOPPING = frozenset({signal.SIGINT, signal.SIGTERM})


@contextlib.contextmanager
def held(signals=STOPPING) -> Iterator[None]:
    """Hold ``signals`` for the block: one that arrives is delivered when the block ends, so
    the block (starting a worker and recording it) is never cut in half. A process forked
    in the block inherits the held mask: it calls :func:`release` first."""
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, signals)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def release(signals=STOPPING) -> None:
    """Deliver ``signals`` again in this process (a worker forked under :func:`held`)."""
    signal.pthread_sigmask(signal.SIG_UNBLOCK, signals)


def worker_signals(parent: int) -> None:
    """A forked worker's signals: SIGTERM kills it at once; SIGINT (a terminal's Ctrl-C, sent
    to the whole group) is left to the parent, which kills its workers, so a
    KeyboardInterrupt in a worker is a plugin's, recorded like any failure; and on Linux the
    worker dies with its parent ``parent`` (a pid), even when the parent was SIGKILLed and
    could not kill it (PR_SET_PDEATHSIG)."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    release()
    # not Linux: the parent's kill is the only one
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:  # the parent died before the call
        os._exit(1)


#: prctl's option that signals a process when its parent dies (linux/prctl.h)
PR_SET_PDEATHSIG = 1
