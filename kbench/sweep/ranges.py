"""The ranges kbench writes its numbers in: a result file holding a value outside one was
edited or written by another program, and is refused before it is ranked
(:func:`kbench.sweep.store.check_values`); the conformance kit checks a task's rows against
the same table."""

import numbers

import numpy as np

from kbench.errors import ContractViolation
from kbench.registry import plugin_class

_SQUARES = (lambda v: v >= 0, "means of squares >= 0")
_RATE = (lambda v: (v >= 0) & (v <= 1), "rates in [0, 1]")
_R2 = (lambda v: v <= 1, "R² <= 1 (1 - SSE/SST)")
#: column → (the test a value kbench writes passes, what kbench writes)
VALUE_RANGES = {
    "rank": (lambda v: (v >= 1) & (v % 1 == 0), "whole ranks >= 1"),
    "lam": (lambda v: v > 0, "λ > 0"),
    "repetition": (lambda v: (v >= 0) & (v % 1 == 0), "repetition indices 0, 1, …"),
    **dict.fromkeys([f"{part}_mse{exact}" for part in ("train", "val", "test")
                     for exact in ("", "_exact")], _SQUARES),
    **dict.fromkeys(["test_r2", "test_r2_exact"], _R2),
    **dict.fromkeys([f"{rate}{exact}" for rate in ("accuracy", "balanced_accuracy", "auc")
                     for exact in ("", "_exact")],
                    _RATE),
}
#: the columns kbench writes as numbers in its own rows; text there means an edited file
#: (its digests, split_checksum and cell_inputs, are text that may read as a number:
#: 4266312564274040, 4702e58031050134)
NUMERIC_COLUMNS = (*VALUE_RANGES, "components", "seed", "base_seed", "rank_realized", "n_train",
                   "sampler_lam", "lam_selected", "kernel_evals", "blas_threads", "peak_rss_mb",
                   *(f"time_{part}_s"
                     for part in ("sample", "features", "fit", "predict", "exact")))


def check_row_ranges(rows: list[dict], task: str) -> None:
    """A ContractViolation when a task's row holds a finite number outside the range kbench
    writes that column in (:data:`VALUE_RANGES`; λ is checked on its own): a leaderboard would
    refuse the cell's file."""
    for row in rows:
        for column, (inside, kbench_writes) in VALUE_RANGES.items():
            value = row.get(column)
            number = isinstance(value, numbers.Real) and np.isfinite(value)
            if column != "lam" and number and not inside(value):
                raise ContractViolation(f"task {task!r} wrote {column} = {value}, where kbench "
                                        f"writes {kbench_writes}; fix the task, or name the column "
                                        "otherwise")


def numeric_columns(tasks) -> set[str]:
    """:data:`NUMERIC_COLUMNS` and the metric columns the named tasks declare (their
    headline, exact and validation metrics; none for a task this kbench does not have): the
    columns whose values must be numbers (a plugin's own info columns may be any text)."""
    names = set(NUMERIC_COLUMNS)
    for name in tasks:
        try:
            task = plugin_class(str(name), "task")
        except (KeyError, ValueError):
            continue
        for declared in (task.headline, *task.metrics, task.validation):
            names |= {getattr(declared, "metric", None), getattr(declared, "exact", None)} - {None}
    return names
