"""A sweep's configuration, validated once: what :func:`kbench.run` and ``kbench run`` take.

Planning, scheduling and collecting read this one object instead of threading a dozen
keyword arguments through each other.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from pathlib import Path

from kbench._validation import check_lams, check_ranks, check_repetitions
from kbench.spec import split_specs

#: BLAS/OpenMP threads per process of a sweep, launched from the CLI or the workflow alike
DEFAULT_BLAS_THREADS = 1


def _specs(value, name: str) -> tuple[str, ...]:
    specs = tuple(split_specs(value) if isinstance(value, str) else (str(v) for v in value))
    if not specs:
        raise ValueError(f"no {name} given: pass at least one.")
    return specs


def _positive_or_none(value, name: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}.")
    return float(value)


def _count(value, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be an integer >= 1, got {value!r}.")
    return value


@dataclass(frozen=True)
class SweepConfig:
    """Every input of a sweep, checked on construction (a clear error names the argument).

    ``repetitions`` is a count R (repetitions 0..R−1) or a list of repetition indices;
    ``cell_timeout`` and ``time_limit`` are seconds; ``memory_limit_mb`` caps each worker;
    ``data_cache`` is a folder of prepared splits (``kbench prepare``).
    """

    datasets: tuple[str, ...]
    samplers: tuple[str, ...]
    tasks: tuple[str, ...]
    ranks: tuple[int, ...]
    lams: tuple[float, ...]
    repetitions: tuple[int, ...] = (0, 1, 2)
    kernel: str = "gaussian:sigma=median"
    out: Path = Path("results")
    jobs: int = 1
    cell_timeout: float | None = None
    memory_limit_mb: float | None = None
    time_limit: float | None = None
    seed: int = 0
    retry_failed: bool = False
    data_cache: Path | None = None
    blas_threads: int = DEFAULT_BLAS_THREADS

    def __post_init__(self) -> None:
        fix = lambda name, value: object.__setattr__(self, name, value)  # noqa: E731 - frozen
        for name in ("datasets", "samplers", "tasks"):
            fix(name, _specs(getattr(self, name), name))
        fix("ranks", tuple(check_ranks(self.ranks)))
        fix("lams", tuple(check_lams(self.lams)))
        fix("repetitions", tuple(check_repetitions(self.repetitions)))
        fix("jobs", _count(self.jobs, "jobs"))
        fix("blas_threads", _count(self.blas_threads, "blas_threads"))
        for name in ("cell_timeout", "memory_limit_mb", "time_limit"):
            fix(name, _positive_or_none(getattr(self, name), name))
        if isinstance(self.seed, bool) or not isinstance(self.seed, numbers.Integral):
            raise ValueError(f"seed must be an integer, got {self.seed!r}.")
        fix("seed", int(self.seed))
        if str(self.out).strip() == "":
            raise ValueError("out is empty: pass the results directory, e.g. out='results'.")
        fix("out", Path(self.out))
        fix("data_cache", None if self.data_cache is None else Path(self.data_cache))
