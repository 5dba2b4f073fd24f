"""The features z(x) of a dataset's rows, in row blocks under a memory budget, and the
training moments the built-in tasks score from.

No task needs the n×p training features at once: ridge regression on features needs
G = ΦᵀΦ and ΦᵀY, KPCA the spectrum of G, the trace error tr G, and every test metric is a
sum over test rows. :func:`features_of` gives one :class:`Features` per (dataset, fitted
map), shared by every task of a job:

* ``train``, ``validation`` and ``test`` (:class:`FeatureRows`) iterate over blocks of rows. A
  matrix that fits in half the budget is computed once and kept (a single block); larger ones are
  recomputed block by block on each pass, so memory stays O(p² + b·p) beyond the data. Training
  features a sampler produced as a by-product (pivoted Cholesky factors) are handed over as they
  are, never copied.
* :meth:`Features.moments`: one pass over the training rows for G, Φᵀ[1, y or one-hot
  classes, f*] and Σ‖z(x)‖².

Every block is checked against the sampler contract (:mod:`kbench.lowrank.checks`) when it is
computed, so a map that breaks it fails whichever task meets it first.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from kbench._validation import Bound
from kbench.datasets.base import Dataset
from kbench.errors import Refused
from kbench.kernels.base import Kernel
from kbench.lowrank.checks import check_below_kernel, check_features, check_lowrank
from kbench.lowrank.maps import LowRank
from kbench.lowrank.workspace import cached

#: memory for feature blocks per job (MiB), unless the sweep's memory limit is smaller
DEFAULT_BUDGET_MB = 1024
BUDGET_MB = Bound("budget_mb", False, 0, low_open=True, why="MiB")
_FLOAT_BYTES = 8


class FeatureRows:
    """z(x) for the rows of ``X``, produced in blocks of at most ``block_rows`` rows.

    Kept whole when n·p floats fit in half the budget (or when ``by_product`` is given);
    else each pass recomputes its blocks, a quarter of the budget at a time.
    """

    def __init__(self, approx, X: np.ndarray, kernel, where: str, budget_bytes: int,
                 by_product: np.ndarray | None = None) -> None:
        self.approx, self.X, self.kernel, self.where = approx, X, kernel, where
        self.n, self.rank = X.shape[0], approx.rank
        row_bytes = _FLOAT_BYTES * max(self.rank, 1)
        self.block_rows = max(1, min(self.n, budget_bytes // (4 * row_bytes)))
        self.fits_budget = by_product is not None or self.n * row_bytes <= budget_bytes // 2
        self._whole = None
        if by_product is not None:
            self._check(by_product, X, 0)
            self._whole = by_product
        #: seconds spent computing the features in one full pass (None until one is done)
        self.seconds: float | None = 0.0 if by_product is not None else None

    def blocks(self) -> Iterator[tuple[int, np.ndarray]]:
        """(first row, block) pairs covering the rows in order; each block is (b, rank)."""
        if self._whole is not None:
            yield 0, self._whole
            return
        step = max(self.n if self.fits_budget else self.block_rows, 1)
        seconds = 0.0
        for start in range(0, self.n, step):
            began = time.perf_counter()
            X = self.X[start : start + step]
            block = self.approx.transform(X)
            self._check(block, X, start)
            seconds += time.perf_counter() - began
            if self.fits_budget:
                self._whole = block
            yield start, block
        if self.seconds is None:
            self.seconds = seconds

    def array(self) -> np.ndarray:
        """The whole (n, rank) matrix: the kept one, or the blocks stacked (the caller
        makes sure it may hold it: :func:`require_whole`)."""
        blocks = [block for _, block in self.blocks()]
        return blocks[0] if len(blocks) == 1 else np.concatenate(blocks)

    def take(self, rows: np.ndarray) -> np.ndarray:
        """The features of the rows at indices ``rows``."""
        if self._whole is not None:
            return self._whole[rows]
        block = self.approx.transform(self.X[rows])
        check_features(self.approx, block, len(rows), self.where)
        return block

    def check(self) -> None:
        """One pass, checking every block (and keeping the matrix when it fits the budget)."""
        for _ in self.blocks():
            pass

    def _check(self, block: np.ndarray, X: np.ndarray, first_row: int) -> None:
        row_norms = check_features(self.approx, block, len(X), self.where)
        if self.approx.nystrom_type:
            check_below_kernel(row_norms, self.kernel.diag(X), self.where, first_row)


@dataclass
class Moments:
    """One pass over the training rows: ``gram`` = ΦᵀΦ (p×p), ``sum_squares`` = Σ‖z(x)‖²,
    and ``cross[name]`` = Φᵀt for the targets of :func:`training_targets`."""

    n: int
    gram: np.ndarray
    cross: dict[str, np.ndarray]
    sum_squares: float
    #: seconds spent accumulating (the feature computation itself is ``FeatureRows.seconds``)
    seconds: float


def training_targets(data) -> dict[str, np.ndarray]:
    """The columns the built-in tasks regress on: ``ones`` (centering), ``y`` (regression)
    or ``classes`` (one-hot over ``data.classes``) unless the data is unlabeled, and ``f``
    (f*, when the generator knows it)."""
    n = data.n_train
    targets = {"ones": np.ones((n, 1))}
    if data.task_type == "regression":
        targets["y"] = np.asarray(data.y_train, dtype=float)[:, None]
    elif data.y_train is not None:
        targets["classes"] = (data.y_train[:, None] == data.classes[None, :]).astype(float)
    if data.f_train is not None:
        targets["f"] = np.asarray(data.f_train, dtype=float)[:, None]
    return targets


class Features:
    """The training, validation and test features of one (dataset, fitted map), shared by its
    tasks."""

    def __init__(self, data, approx, kernel, budget_mb: float = DEFAULT_BUDGET_MB) -> None:
        budget = int(budget_mb * 2**20)
        self.data = data
        self.train = FeatureRows(approx, data.X_train, kernel, "training", budget,
                                 approx.train_features)
        self.validation = FeatureRows(approx, data.X_val, kernel, "validation", budget)
        self.test = FeatureRows(approx, data.X_test, kernel, "test", budget)
        self._moments: Moments | None = None

    @property
    def seconds(self) -> float:
        """Time spent computing one full pass of training, validation and test features."""
        return sum(rows.seconds or 0.0 for rows in (self.train, self.validation, self.test))

    def moments(self) -> Moments:
        """ΦᵀΦ, Φᵀ[targets] and Σ‖z(x)‖², from one pass over the training rows (cached)."""
        if self._moments is None:
            targets = training_targets(self.data)
            names = list(targets)
            widths = np.cumsum([0] + [targets[name].shape[1] for name in names])
            T = np.hstack([targets[name] for name in names])
            p = self.train.rank
            gram, cross, seconds = np.zeros((p, p)), np.zeros((p, T.shape[1])), 0.0
            for start, block in self.train.blocks():
                began = time.perf_counter()
                if start == 0 and len(block) == self.train.n:  # one block: no accumulation
                    gram = block.T @ block
                else:
                    gram += block.T @ block
                cross += block.T @ T[start : start + len(block)]
                seconds += time.perf_counter() - began
            sum_squares = float(np.trace(gram))  # Σ‖z(x)‖² = tr ΦᵀΦ
            self._moments = Moments(self.train.n, gram,
                                    {name: cross[:, widths[i] : widths[i + 1]]
                                     for i, name in enumerate(names)},
                                    sum_squares, seconds)
        return self._moments


def features_of(data, approx, kernel, budget_mb: float | None = None) -> Features:
    """The :class:`Features` of ``approx`` on ``data`` with ``kernel``: in a workspace
    (:class:`kbench.plugin.Workspace`), created on first use and shared by every task that scores
    the same fit with the same kernel (``budget_mb`` applies from the first call)."""
    budget_mb = (DEFAULT_BUDGET_MB if budget_mb is None
                 else BUDGET_MB.check(budget_mb, "features_of: budget_mb"))
    check_scored(data, approx, kernel)
    return cached((approx, data, kernel), "features",
                  lambda: Features(data, approx, kernel, budget_mb))


def check_scored(data, approx, kernel) -> None:
    """A ValueError naming the argument when a task is not given (data, approx, kernel): a
    kbench Dataset, the LowRank a sampler's ``fit`` returned, and the fitted kernel that map
    approximates (the kernel the sampler was given; a task scoring it with another would
    compare the map with a kernel it does not approximate)."""
    expected = {"data": (data, Dataset, "a kbench Dataset (kbench.load_dataset)"),
                "approx": (approx, LowRank, "the feature map a sampler's fit returns "
                                            "(sampler.fit(X, kernel, rank))"),
                "kernel": (kernel, Kernel, "a kbench kernel (kbench.make_kernel)")}
    for name, (value, kind, what) in expected.items():
        if not isinstance(value, kind):
            raise ValueError(f"evaluate(data, approx, kernel): {name} must be {what}, got "
                             f"{type(value).__name__}.")
    if approx.kernel_spec is None:
        return
    if not kernel.fitted:
        raise ValueError(f"evaluate: the kernel {kernel.spec()} is not fitted; score the map with "
                         f"the kernel it approximates, {approx.kernel_spec} "
                         "(kernel.fit(data.X_train) resolves it).")
    if kernel.spec() != approx.kernel_spec:
        raise ValueError(f"evaluate: the map approximates the kernel {approx.kernel_spec}, not "
                         f"{kernel.spec()}: score it with the kernel it was fitted with.")


def require_whole(rows: FeatureRows, who: str) -> np.ndarray:
    """The whole feature matrix for a learner that needs it, or Refused when it does not fit
    the budget."""
    if not rows.fits_budget:
        size = rows.n * rows.rank * _FLOAT_BYTES / 2**20
        raise Refused(f"{who} needs the {rows.n}×{rows.rank} {rows.where} features in memory "
                      f"({size:.0f} MiB), more than half the feature budget: use the least-squares "
                      "learner, or a larger memory limit")
    return rows.array()


__all__ = ["DEFAULT_BUDGET_MB", "FeatureRows", "Features", "Moments", "features_of",
           "training_targets"]


def check_fit(approx, requested_rank: int, data, kernel, budget_mb: float | None = None):
    """Check a fitted LowRank on a dataset's rows, in the passes the tasks use anyway: the
    training moments and the validation and test features (kept when they fit the budget).
    Returns the fit's :class:`Features`."""
    check_lowrank(approx, requested_rank)
    features = features_of(data, approx, kernel, budget_mb)
    features.moments()
    features.validation.check()
    features.test.check()
    return features
