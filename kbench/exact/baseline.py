"""Exact (full-kernel) baselines and diagnostics: which one a dataset gets, kept and shared.

Up to ``DENSE_MAX_N`` training rows, :class:`ExactBaseline` (:mod:`kbench.exact.dense`)
eigendecomposes K_train once; above, up to ``exact_max_n``, :class:`IterativeBaseline`
(:mod:`kbench.exact.iterative`) solves exact kernel ridge regression matrix-free, by
preconditioned conjugate gradients (:mod:`kbench.exact.pcg`). Either is kept in the workspace
by dataset and kernel spec (:mod:`kbench.lowrank.workspace`), so every sampler and task of a
repetition reuses it (docs/conventions.md). Processes share it through a file
(``save``/``load``, :func:`exact_baseline` with ``shared``): the workflow computes it once per
(dataset, kernel, repetition), with the λ path's solves, and every run job loads it.
"""

from __future__ import annotations

import os
from pathlib import Path

from kbench._validation import INT64_MAX
from kbench.exact.dense import ExactBaseline, check_arguments
from kbench.exact.iterative import PCG_TOL, PRECONDITIONER_RANK, IterativeBaseline, array_digest
from kbench.lowrank.workspace import cached
from kbench.parameters import Param

#: the dense eigendecomposition up to this many training rows (3 n² floats: 600 MB at 5000)
DENSE_MAX_N = 5000
#: exact baselines up to this many training rows, matrix-free above DENSE_MAX_N
DEFAULT_EXACT_MAX_N = 50_000
EXACT_MAX_N = Param(int, "the most training rows of an exact baseline", low=1, high=INT64_MAX,
                    why="training rows")
#: the version of a saved baseline's layout (part of its key: a file of another layout is stale)
FORMAT = 2


def exact_baseline(data, kernel, exact_max_n: int = DEFAULT_EXACT_MAX_N,
                   shared: tuple[Path, str] | None = None):
    """The exact baseline of (data, kernel), kept in the workspace
    (:class:`kbench.plugin.Workspace`): dense up to ``DENSE_MAX_N`` training rows, matrix-free up to
    ``exact_max_n``, None above. With ``shared`` = (file, split checksum) it is shared between
    processes through the file: loaded when the file holds the baseline of this split and kernel,
    else computed and saved there (:func:`save_requests` saves what is asked of it later)."""
    check_arguments(data, kernel, "exact_baseline")
    shared = _check_shared(shared)
    exact_max_n = EXACT_MAX_N.check(exact_max_n, "exact_max_n", "exact_baseline")
    n = data.X_train.shape[0]
    if n > exact_max_n:
        return None
    dense = n <= DENSE_MAX_N
    key = None if shared is None else _shared_key(data, kernel, shared, dense)
    computed = []  # whether this call computed it (then it is saved below)

    def load_or_compute():
        loaded = None if shared is None else (ExactBaseline.load(shared[0], key) if dense else
                                              IterativeBaseline.load(shared[0], key, data, kernel))
        computed.append(loaded is None)
        return (ExactBaseline(data, kernel) if dense
                else IterativeBaseline(data, kernel)) if loaded is None else loaded

    baseline = cached((data,), ("exact", kernel.spec()), load_or_compute)
    if shared is not None and (any(computed) or baseline.unsaved):
        baseline.save(shared[0], key)  # once, with what earlier callers asked of it
    return baseline


def _check_shared(shared) -> tuple[Path, str] | None:
    """``shared`` as (file, split checksum), checked: None, or a pair of a file path and text."""
    if shared is None:
        return None
    pair = isinstance(shared, tuple) and len(shared) == 2
    if not (pair and isinstance(shared[0], str | os.PathLike) and isinstance(shared[1], str)
            and shared[1]):
        raise ValueError(f"exact_baseline: shared must be a pair (file path, split checksum text), "
                         f"got {shared!r}.")
    path = Path(shared[0])
    if path.is_dir():
        raise ValueError(f"exact_baseline: the shared file {path} is a folder; name a file in it "
                         f"(e.g. {path / 'exact.npz'}).")
    return path, shared[1]


def _shared_key(data, kernel, shared: tuple[Path, str], dense: bool) -> dict:
    """What a shared baseline file must hold to stand for this split, kernel and method: the
    caller's split checksum, and the training rows' shape and a digest of up to 256 of them
    (so that another split is never served under a wrong checksum)."""
    rows = data.X_train[::max(1, data.X_train.shape[0] // 256)]
    key = {"split_checksum": shared[1], "train_shape": list(data.X_train.shape),
           "train_rows": array_digest(rows), "kernel": kernel.spec(), "format": FORMAT}
    if not dense:
        key.update(method="pcg", tol=PCG_TOL, preconditioner_rank=PRECONDITIONER_RANK)
    return key


def save_requests(baseline, data, kernel, shared: tuple[Path, str] | None) -> None:
    """Save into ``shared`` what was asked of a matrix-free ``baseline`` since it was saved,
    once."""
    if shared is not None and baseline.unsaved:
        baseline.save(shared[0], _shared_key(data, kernel, shared, baseline.dense))
