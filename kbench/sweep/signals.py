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
