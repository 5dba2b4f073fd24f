"""Signals turned into exceptions, for the duration of a block."""

from __future__ import annotations

import contextlib
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
