"""What a workflow job asks the scheduler for: its runtime and memory, from the config's
``resources`` and the size a dataset's spec states, and the limits ``kbench run`` is given
inside them (``--time-limit``, ``--memory-limit``), so that kbench records a timeout or an
oom before the scheduler kills the job."""

from __future__ import annotations

import math

from kbench.datasets import stated_size
from kbench.exact.baseline import DEFAULT_EXACT_MAX_N, DENSE_MAX_N
from kbench.exact.iterative import PRECONDITIONER_RANK
from kbench.exact.pcg import DEFAULT_BLOCK_MB
from kbench.lowrank.features import DEFAULT_BUDGET_MB
from kbench.sweep.config import BOUNDS, DEFAULT_RESOURCES

#: the config's runtime is meant for jobs on up to this many rows (and for exact baselines
#: up to DEFAULT_EXACT_MAX_N training rows); larger datasets ask for more (Sweep.runtime_min)
RUNTIME_REFERENCE_N = 100_000


class JobResources:
    """The resources of a :class:`kbench.workflow.jobs.Sweep`'s jobs, read from its ``config``,
    ``exact_max_n`` and ``lams``."""

    def resources(self, key: str):
        """The config's ``resources`` value of ``key``, else :data:`DEFAULT_RESOURCES`."""
        return self.config.get("resources", {}).get(key, DEFAULT_RESOURCES[key])

    @staticmethod
    def time_limit(runtime_min: float) -> int:
        """``kbench run --time-limit`` (s) in a job granted ``runtime_min`` minutes: 85% of it
        less 20 s for the job's start-up (Snakemake, Python, the split), at least half of it.
        A fit past its share is recorded as timeout by kbench before the scheduler kills the job."""
        seconds = runtime_min * 60
        return int(min(max(0.85 * seconds - 20, 0.5 * seconds), BOUNDS["time_limit"].high))

    def memory_limit(self, mem_mb: float, workers: int) -> int:
        """``kbench run --memory-limit`` (MiB per worker) in a job granted ``mem_mb`` MB: 80% of
        it shared by the ``workers``, or the config's ``memory_limit_mb`` if lower. A fit past
        it is recorded as oom by kbench before the scheduler kills the job."""
        share = min(0.8 * mem_mb / workers, self.config.get("memory_limit_mb", float("inf")))
        return max(int(share), math.ceil(BOUNDS["memory_limit_mb"].low))

    def runtime_min(self, dataset: str, attempt: int = 1, exact: bool = False,
                    repetitions: int = 1) -> int:
        """The runtime (minutes) of a job on ``dataset`` covering ``repetitions`` repetitions
        (a run job covers all of them), times the attempt: the config's ``runtime`` per
        repetition, raised when the dataset spec gives its size n past what that runtime is
        meant for. A job's cost grows linearly in n past ``RUNTIME_REFERENCE_N`` (samplers
        and streamed tasks are O(n) at a fixed rank); an ``exact`` job's quadratically in
        n_train past ``DEFAULT_EXACT_MAX_N`` (every pass of the matrix-free solver evaluates
        all of K)."""
        base = self.resources("runtime") * repetitions
        size = stated_size(dataset)
        if size is None:
            return base * attempt
        n, n_train = size
        scale = (n_train / DEFAULT_EXACT_MAX_N) ** 2 if exact else n / RUNTIME_REFERENCE_N
        return math.ceil(base * max(1.0, scale)) * attempt

    def memory_mb(self, dataset: str, attempt: int = 1) -> int:
        """The memory of a job on ``dataset``, times the attempt (a job killed for memory is
        retried with more): the config's ``mem_mb``, raised when the dataset spec gives its
        size n to what n takes: the exact baseline (three n×n float64 arrays up to the dense
        limit; above, kernel blocks and the conjugate-gradient vectors of the λ path for up
        to 10 targets), one n × max-rank array (a pivoted Cholesky factor) and the feature
        budget (tasks stream their features, kbench.lowrank.features), plus 1000 MB for Python."""
        base = self.resources("mem_mb")
        size = stated_size(dataset)
        if size is None:
            return base * attempt
        n, n_train = size
        limit = self.exact_max_n
        exact = 0
        if limit is not None and n_train <= DENSE_MAX_N:
            exact = 3 * 8 * n_train**2
        elif limit is not None and n_train <= limit:  # matrix-free: blocks of K, CG vectors
            exact = (DEFAULT_BLOCK_MB * 2**20
                     + 8 * n_train * (6 * 10 * len(self.lams[0]) + PRECONDITIONER_RANK))
        factor = 8 * n * max(self.config["ranks"])
        return max(base, 1000 + DEFAULT_BUDGET_MB + (exact + factor) // 2**20) * attempt
