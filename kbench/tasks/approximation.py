"""How well the feature map approximates the kernel matrix (Bach 2013 §3; Yang et al. 2012)."""

from __future__ import annotations

import time

import numpy as np

from kbench._validation import INT64_MAX
from kbench.datasets.base import TASK_TYPES
from kbench.hookspecs import hookimpl
from kbench.lowrank.features import features_of
from kbench.lowrank.linalg import symmetric_spectral_norm
from kbench.lowrank.workspace import cached
from kbench.parameters import Param
from kbench.tasks.base import Headline, Task


class ApproximationTask(Task):
    """Relative Frobenius and spectral errors ‖K − ΦΦᵀ‖/‖K‖ for every sampler, on the
    training set or a seeded subsample of at most ``max_n`` points (``approximation_points``;
    the headline is the Frobenius error); the relative trace error tr(K − L)/tr K of
    Nyström-type maps on the whole training set (from the streamed training moments)."""

    name = "approximation"
    accepts = TASK_TYPES  # needs no target
    # ‖K − L‖_F/‖K‖_F below 1e-10 is zero: past K's numerical rank only round-off is left;
    # errors within 5% of each other approximate K equally well for any use downstream
    headline = Headline("rel_fro_error", smaller_is_better=True, atol=1e-10, equivalence=0.05)
    metrics = (Headline("rel_trace_error", smaller_is_better=True),
               Headline("rel_spec_error", smaller_is_better=True))
    uses_lams = False
    needs_exact = False
    parameters = {
        "max_n": Param(int, "the most training rows the errors are read on (a seeded subsample "
                            "above)", low=1),
        "seed": Param(int, "the seed of that subsample", low=0, high=INT64_MAX),
    }

    def __init__(self, max_n: int = 3000, seed: int = 0) -> None:
        super().__init__()
        self.max_n, self.seed = max_n, seed

    def check_ranks(self, ranks) -> None:
        """The error of a rank-p map is read on at least p points (max_n >= the largest rank)."""
        if self.max_n < max(ranks):
            raise ValueError(f"approximation: max_n = {self.max_n} is below the sweep's largest "
                             f"rank {max(ranks)}: a rank-{max(ranks)} map's error would be read on "
                             f"fewer points than its rank; pass max_n >= {max(ranks)}.")

    def prepare(self, data, kernel) -> None:
        self._reference(data, kernel)

    def _reference(self, data, kernel) -> tuple[np.ndarray, np.ndarray, float]:
        """The rows compared, their kernel matrix K and ‖K‖₂: the same for every sampler of
        a repetition (a paired comparison), so computed once per data set and kernel."""
        def compute():
            n = data.X_train.shape[0]
            rows = np.arange(n) if n <= self.max_n else np.sort(
                np.random.default_rng(self.seed).choice(n, size=self.max_n, replace=False))
            K = kernel(data.X_train[rows])
            K.flags.writeable = False  # shared by every evaluation
            return rows, K, symmetric_spectral_norm(K)

        return cached((data,), ("approximation", kernel.spec(), self.max_n, self.seed), compute)

    def evaluate(self, data, approx, kernel, lams=None) -> list[dict]:
        features = features_of(data, approx, kernel)
        moments = features.moments()
        start = time.perf_counter()
        row = {"lam": float("nan"), "time_features_s": features.seconds}
        if approx.nystrom_type:
            trace = float(kernel.diag(data.X_train).sum())
            row["rel_trace_error"] = (trace - moments.sum_squares) / trace
        rows, K, norm = self._reference(data, kernel)
        Phi = features.train.take(rows)
        error = K - Phi @ Phi.T
        row["rel_fro_error"] = float(np.linalg.norm(error) / np.linalg.norm(K))
        row["kernel_spec_norm"] = norm
        row["rel_spec_error"] = symmetric_spectral_norm(error) / norm
        row["approximation_points"] = int(len(rows))
        row["time_fit_s"] = time.perf_counter() - start
        return [row]


@hookimpl
def kbench_register_tasks():
    return [ApproximationTask]
