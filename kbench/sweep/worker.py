"""Executing one job in a worker process: fit the sampler once, check its result against
the contract, evaluate each cell's task, write one file per cell.

Every failure becomes data: a cell that cannot be computed writes its rows, with a status and
a message. :class:`kbench.Refused` (kbench declines the input) is ``skipped``, MemoryError
``oom``, everything else (a broken contract, a numerical failure) ``error``.
"""

from __future__ import annotations

import os
import resource
import time
from collections.abc import Callable
from datetime import datetime, timezone

from kbench.errors import ContractViolation, Failure, Status
from kbench.exact.baseline import DENSE_MAX_N, exact_baseline
from kbench.lowrank.checks import compared_with_exact, info_columns
from kbench.lowrank.features import DEFAULT_BUDGET_MB, check_fit
from kbench.lowrank.workspace import active
from kbench.registry import create
from kbench.sweep.context import JobContext
from kbench.sweep.plan import Cell, Job
from kbench.sweep.ranges import check_row_ranges
from kbench.sweep.store import write_cell
from kbench.tasks.base import check_columns, check_headline, check_rows, require_lam
from kbench.tasks.selection import (
    criterion,
    extensions,
    mark,
)

#: the columns of a cell's rows that its task writes among them
TASK_COLUMNS = ("lam", "components")
#: columns every row gets besides identity, shared context and task metrics
ROW_COLUMNS = ("lam", "components", "status", "error", "failed_in", "timestamp", "peak_rss_mb",
               "schema_version")
#: the columns of a cell's rows that describe its fit (the sampler's own follow, from its info)
FIT_COLUMNS = ("seed", "sampler_family", "rank_realized", "time_sample_s", "kernel_evals",
               "sampler_lam",
               "sampler_warnings")


# ---------------------------------------------------------------------------------------
# Statuses and rows
# ---------------------------------------------------------------------------------------
def failure_rows(cell: Cell, job: Job, lams, failure: Failure,
                 context: JobContext | None = None, env: dict | None = None) -> list[dict]:
    """A failed cell keeps its rows: one per λ (one for λ-free tasks), metrics missing."""
    stamp = datetime.now(timezone.utc).isoformat()
    shared = context.columns() if context is not None else dict(env or {})
    return [{**cell.identity(), "seed": job.seed, "sampler_lam": job.sampler_lam, **shared,
             "lam": lam, "status": failure.status.value, "error": failure.message,
             "failed_in": failure.component,
             "timestamp": stamp}
            for lam in (lams if cell.uses_lams else [float("nan")])]


def write_failure(cell: Cell, job: Job, lams, failure: Failure, context=None, env=None) -> None:
    write_cell(cell.path, failure_rows(cell, job, lams, failure, context, env))


def run_job(job: Job, context: JobContext, memory_limit_mb: float | None = None,
            prebuilt: dict | None = None, written: Callable[[], None] = lambda: None) -> None:
    """Fit the job's sampler once, check the contract, evaluate each of its cells' tasks
    along the context's λ path, write one file per cell, calling ``written`` after each.
    ``memory_limit_mb`` is the worker's (:func:`limit_memory`), of which the feature blocks
    take a share; ``prebuilt`` is work other processes did for the fit, handed to the
    sampler's ``use_prebuilt`` hook."""
    with context.workspace:
        _run_job(job, context, memory_limit_mb, prebuilt, written)


def _run_job(job: Job, context: JobContext, memory_limit_mb, prebuilt, written) -> None:
    data, kernel, lams = context.data, context.kernel, list(context.lams)
    todo, approx = job.todo, None
    try:
        sampler = create(job.sampler)
        if prebuilt:
            sampler.use_prebuilt(prebuilt)
        start, evals = time.perf_counter(), kernel.evals
        approx = sampler.fit(data.X_train, kernel, job.rank, lam=job.sampler_lam, seed=job.seed)
        if prebuilt and "prebuilt" not in approx.info:  # the jobs' work thrown away: say so
            approx.info["warnings"].append("the parts built as jobs were not used by this fit (its "
                                           "parts_seed draws another seed than _fit, or "
                                           "use_prebuilt keeps nothing)")
        time_sample = (time.perf_counter() - start
                       + approx.info.get("prebuilt", {}).get("seconds", 0.0))
        kernel_evals = int(approx.info.get("kernel_evals", kernel.evals - evals))
        check_fit(approx, job.rank, data, kernel, feature_budget_mb(memory_limit_mb))
        exact = exact_baseline(data, kernel, DENSE_MAX_N) if sampler.compares_with_exact else None
        common = dict(zip(FIT_COLUMNS,
                          (job.seed, sampler.family, approx.rank, time_sample, kernel_evals,
                                        job.sampler_lam,
                                        "; ".join(approx.info.get("warnings", []))), strict=True))
        reserved = {*todo[0].identity(), *common, *context.columns(), *ROW_COLUMNS}
        # the sampler's own comparison with the exact kernel (Sampler.against_exact)
        if exact is not None:
            owner = f"sampler {sampler.name!r}"
            common.update(compared_with_exact(owner, sampler, approx, exact, job.sampler_lam,
                                              reserved))
        common.update(info_columns(approx.info, {*reserved, *common}))
    # every failure becomes data (a worker ignores Ctrl-C)
    except BaseException as exc:  # noqa: BLE001
        _release(approx)
        for cell in todo:
            write_failure(cell, job, lams, Failure.of(exc, "sampler"), context)
            written()
        return
    try:
        _evaluate_cells(todo, job, context, approx, common,
                        {*reserved, *common} - set(TASK_COLUMNS), written)
    finally:
        _release(approx)


def _release(approx) -> None:
    """Free the fit's features when its job returns, not at the garbage collector's next
    run, while the worker's next job fits."""
    if approx is not None:
        active().release(approx)


def evaluate_cell(task, context: JobContext, approx) -> list[dict]:
    """A task's rows on a fit, checked; a λ-path task's along the context's path, extended
    within the context's bounds while the λ the cell chooses is at an end of it, and marked
    with the choices (kbench.tasks.selection)."""
    data, kernel, lams = context.data, context.kernel, list(context.lams)
    rows = check_rows(task.evaluate(data, approx, kernel, lams=lams), task.name)
    chosen_on = criterion(task, context.selection)
    if chosen_on is None:
        return rows
    column, _, smaller = chosen_on
    require_lam(rows, task.name)
    while True:
        by_lam = {row["lam"]: row.get(column) for row in reversed(rows)}
        ordered = sorted(by_lam)
        values = [float("nan") if by_lam[lam] is None else by_lam[lam] for lam in ordered]
        added = extensions(ordered, values, smaller, context.lam_bounds)
        if not added:
            break
        rows += check_rows(task.evaluate(data, approx, kernel, lams=added), task.name)
    return mark(sorted(rows, key=lambda row: row["lam"]), task, context.selection)


def _evaluate_cells(todo, job: Job, context: JobContext, approx, common: dict, reserved: set[str],
                    written: Callable[[], None]) -> None:
    """Each cell's task on the fit, one file per cell; a task's row holds none of the
    ``reserved`` columns kbench writes itself."""
    for cell in todo:
        if cell.task in context.task_failures:
            write_failure(cell, job, list(context.lams), context.task_failures[cell.task], context)
            written()
            continue
        stage = "task"
        try:
            rows = evaluate_cell(task := create(cell.task), context, approx)
            stage = "sampler"
            _check_sampler_columns(rows, set(common) - set(FIT_COLUMNS), job.sampler.name,
                                   cell.task.name)
            stage = "task"
            rows = check_columns(rows, cell.task.name, reserved)
            check_row_ranges(rows, cell.task.name)
            check_headline(task, rows, job.rank)
        # every failure becomes data (a worker ignores Ctrl-C)
        except BaseException as exc:  # noqa: BLE001
            write_failure(cell, job, list(context.lams), Failure.of(exc, stage), context)
        else:
            peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            stamp = datetime.now(timezone.utc).isoformat()
            write_cell(cell.path, [{**cell.identity(), **common, **context.columns(), **row,
                                    "peak_rss_mb": peak, "status": Status.OK.value, "error": "",
                                    "timestamp": stamp}
                                   for row in rows])
        written()


def _check_sampler_columns(rows: list[dict], own: set[str], sampler: str, task: str) -> None:
    """A sampler's own columns (its ``against_exact`` and ``info``) are not among a task's."""
    shared = sorted({key for row in rows for key in row} & own)
    if shared:
        raise ContractViolation(f"sampler {sampler!r} writes the column(s) "
                                f"{', '.join(map(repr, shared[:5]))} (its against_exact or its "
                                f"fit's info), which task {task!r} writes too; rename the "
                                "sampler's")


def feature_budget_mb(memory_limit_mb: float | None) -> float:
    """Memory for a fit's feature blocks (kbench.lowrank.features): the default, or a quarter of the
    worker's memory limit when that is smaller."""
    return DEFAULT_BUDGET_MB if not memory_limit_mb else min(DEFAULT_BUDGET_MB, memory_limit_mb / 4)


def limit_memory(limit_mb: float) -> None:
    """Cap this worker's address space at its current size + limit_mb (RLIMIT_AS)."""
    with open("/proc/self/statm") as fh:
        current = int(fh.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    cap = current + int(limit_mb * 2**20)
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
