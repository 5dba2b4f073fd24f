"""Row blocks spread over the cores BLAS may use, and one BLAS library at a time.

numpy's elementwise functions (exp, cos, the kernel's clamp) run on one core while BLAS
runs on several. Work split in independent row blocks (a kernel block, a chunk of
features) goes faster when the blocks run in as many threads as BLAS has, each block's
BLAS calls on one thread: every core then does both the products and the elementwise
work. A block's values do not depend on which thread computed it. With one BLAS thread
(a sweep running several jobs side by side) the blocks run one after another.
"""

from __future__ import annotations

import contextlib
import math
import os
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache
from pathlib import Path

import numpy as np
from threadpoolctl import ThreadpoolController


@lru_cache(maxsize=None)
def _blas_of(pid: int) -> ThreadpoolController:
    return ThreadpoolController().select(user_api="blas")


def _blas() -> ThreadpoolController:
    """The BLAS libraries loaded in this process (looked up again after a fork)."""
    return _blas_of(os.getpid())


@lru_cache(maxsize=None)
def _pool(pid: int, threads: int) -> ThreadPoolExecutor:
    return ThreadPoolExecutor(threads, thread_name_prefix="kbench-rows")


#: the threads a :func:`blocks_only` section holds for its row blocks, per Python thread
_held = threading.local()


def blas_threads() -> int:
    """The threads BLAS uses now (a sweep's ``blas_threads``), or in a :func:`blocks_only`
    section the threads it took from BLAS for the row blocks."""
    held = getattr(_held, "threads", None)
    if held is not None:
        return held
    return max((lib.num_threads for lib in _blas().lib_controllers), default=1)


def blas_ceiling(requested: int) -> int:
    """The threads BLAS runs when asked for ``requested`` (fewer past its build's limit)."""
    with _blas().limit(limits=requested):
        return max((lib.num_threads for lib in _blas().lib_controllers), default=requested)


def for_each_block(work: Callable[[int], object], starts: Sequence[int],
                   min_per_thread: int = 2) -> None:
    """``work(start)`` for every start, in up to :func:`blas_threads` threads (each with at
    least ``min_per_thread`` blocks, else one after another), BLAS on one thread meanwhile.
    ``work`` writes its own rows; an exception in any block is raised here."""
    threads = min(blas_threads(), len(starts) // max(min_per_thread, 1))
    if threads <= 1:
        for start in starts:
            work(start)
        return
    with _blas().limit(limits=1):
        for _ in _pool(os.getpid(), threads).map(work, starts):
            pass


def _numpy_blas() -> ThreadpoolController | None:
    """The BLAS library NumPy's products call, when SciPy's LAPACK calls another one (as
    the PyPI wheels do: each bundles its own OpenBLAS); None when they share one."""
    blas = _blas()
    home = Path(np.__file__).resolve().parent
    mine = [lib.filepath for lib in blas.lib_controllers
            if Path(lib.filepath).resolve().parent in (home, home.parent / "numpy.libs")]
    if not mine or len(mine) == len(blas.lib_controllers):
        return None
    return blas.select(filepath=mine[0])


@contextlib.contextmanager
def lapack_section() -> Iterator[None]:
    """Hold NumPy's BLAS at one thread while a loop alternates NumPy work with SciPy LAPACK
    factorisations. Each OpenBLAS keeps its idle threads spinning for a while after a call, so
    two of them alternating take each other's cores: SQUEAK's dictionary updates ran 2× slower
    with both libraries at two threads than with NumPy's at one."""
    numpy_blas = _numpy_blas()
    if numpy_blas is None or blas_threads() <= 1:
        yield
        return
    with numpy_blas.limit(limits=1):
        yield


@contextlib.contextmanager
def blocks_only() -> Iterator[None]:
    """Hold every BLAS at one thread through a loop whose heavy work runs in row blocks
    (:func:`for_each_block`, which keeps BLAS's threads for them). An OpenBLAS call on several
    threads leaves them spinning for a while after it returns, taking cores from the row
    blocks that follow: a kernel block after a large GEMM took 60 ms instead of 35."""
    threads, previous = blas_threads(), getattr(_held, "threads", None)
    if threads <= 1:
        yield
        return
    with _blas().limit(limits=1):
        _held.threads = threads
        try:
            yield
        finally:
            _held.threads = previous


#: this thread's scratch arrays, by name
_scratch = threading.local()
#: a scratch array of more entries than this (16 MiB) is allocated for each use, not kept
_MAX_KEPT_ENTRIES = 1 << 21


@contextlib.contextmanager
def scratch(name: str, shape: tuple[int, ...]) -> Iterator[np.ndarray]:
    """An uninitialised C-contiguous float64 array of ``shape``, kept by this thread for its next
    ``scratch(name, ...)``. A fresh array of a few MiB in every block costs its page faults
    every time (glibc hands freed memory back to the system), and threads faulting at once wait
    on each other: a 4096×54 kernel block with a fresh padded copy took 6.6 ms, 3.7 ms without.
    A nested use of the same name gets its own array."""
    size = math.prod(shape)
    kept = getattr(_scratch, name, None)
    setattr(_scratch, name, None)
    array = kept if kept is not None and kept.size >= size else np.empty(size)
    try:
        yield array[:size].reshape(shape)
    finally:
        if array.size <= _MAX_KEPT_ENTRIES:
            setattr(_scratch, name, array)


__all__ = ["blas_threads", "blocks_only", "for_each_block", "lapack_section", "scratch"]
