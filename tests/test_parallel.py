"""kbench._parallel: row blocks over BLAS's threads, and one BLAS library at a time."""

from __future__ import annotations

import threading

import numpy as np
import pytest
import scipy.linalg  # noqa: F401  (SciPy's OpenBLAS, loaded as in every kbench process)
from threadpoolctl import threadpool_info, threadpool_limits

from kbench._parallel import (
    _MAX_KEPT_ENTRIES,
    _numpy_blas,
    blas_threads,
    blocks_only,
    for_each_block,
    lapack_section,
    scratch,
)


def test_every_block_runs_once_in_as_many_threads_as_blas_has_with_blas_on_one():
    seen, threads, inner = [], set(), set()
    lock = threading.Lock()

    def work(start):
        with lock:
            seen.append(start)
            threads.add(threading.get_ident())
            inner.add(blas_threads())

    with threadpool_limits(limits=2):
        for_each_block(work, range(0, 1000, 10))
        assert blas_threads() == 2  # restored afterwards
    assert sorted(seen) == list(range(0, 1000, 10))
    assert inner == {1} and 1 <= len(threads) <= 2


def test_a_blocks_only_section_holds_blas_at_one_thread_and_keeps_its_threads_for_the_blocks():
    def libraries():
        return {lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"}

    inner = set()
    with threadpool_limits(limits=2):
        with blocks_only():
            assert libraries() == {1} and blas_threads() == 2
            with blocks_only():  # nested: the same threads, and still held after it
                assert blas_threads() == 2
            assert libraries() == {1} and blas_threads() == 2
            for_each_block(lambda start: inner.add(blas_threads()), range(0, 100, 10))
        assert libraries() == {2} and blas_threads() == 2
    assert inner == {1}  # a block's own calls run in turn


def test_with_one_blas_thread_blocks_run_in_turn_and_failures_reach_the_caller():
    seen = []
    with threadpool_limits(limits=1):
        for_each_block(lambda start: seen.append((start, threading.get_ident())), range(5))
    assert [start for start, _ in seen] == list(range(5))
    assert {ident for _, ident in seen} == {threading.get_ident()}

    def fails(start):
        if start == 7:
            raise FloatingPointError("block 7")

    with threadpool_limits(limits=2), pytest.raises(FloatingPointError, match="block 7"):
        for_each_block(fails, range(10))


def test_a_lapack_section_holds_numpy_blas_at_one_thread_and_restores_it():
    numpy_blas = _numpy_blas()
    if numpy_blas is None:
        pytest.skip("NumPy and SciPy share one BLAS library here: nothing to hold")
    with threadpool_limits(limits=2):
        with lapack_section():
            counts = {lib.filepath: lib.num_threads for lib in numpy_blas.lib_controllers}
            assert set(counts.values()) == {1}
            others = [p["num_threads"] for p in threadpool_info()
                      if p["user_api"] == "blas" and p["filepath"] not in counts]
            assert others and set(others) == {2}  # SciPy's LAPACK keeps its threads
        assert {lib.num_threads for lib in numpy_blas.lib_controllers} == {2}
    a = np.arange(4.0).reshape(2, 2)
    with threadpool_limits(limits=1), lapack_section():  # one thread already: nothing changes
        assert blas_threads() == 1 and (a @ a).shape == (2, 2)


def test_a_scratch_array_is_kept_per_thread_and_name_and_a_nested_use_gets_its_own():
    with scratch("t", (3, 4)) as first:
        first[...] = 1.0
        with scratch("t", (2, 2)) as nested:  # the first is still in use
            assert not np.shares_memory(first, nested)
        with scratch("other", (3, 4)) as other:
            assert not np.shares_memory(first, other)
    with scratch("t", (2, 5)) as again:  # smaller: the kept array, C-contiguous in the new shape
        assert again.shape == (2, 5) and again.flags.c_contiguous and np.shares_memory(again, first)
    seen = []

    def use():
        with scratch("t", (3, 4)) as mine:
            seen.append(mine)

    thread = threading.Thread(target=use)
    thread.start()
    thread.join()
    assert not np.shares_memory(seen[0], first)  # another thread's own
    with scratch("big", (_MAX_KEPT_ENTRIES + 1,)) as big:
        pass
    with scratch("big", (10,)) as small:  # too large to keep
        assert not np.shares_memory(small, big)
