"""Sweeps: scheduling jobs on worker processes, with failures recorded as data.

The work unit is one sampler fit (:class:`kbench.planning.Job`), shared by the cells of
its tasks. It runs in a forked worker (:func:`kbench.execution.run_job`) so that
``cell_timeout`` can be enforced by killing the worker and a crash cannot take the sweep
down. Datasets, the resolved kernel and the exact baselines are prepared once per
(dataset, repetition) in the parent and inherited by the workers.
"""

from __future__ import annotations

import math
import multiprocessing as mp
import signal
import time
from collections import deque
from dataclasses import dataclass

import pandas as pd
from threadpoolctl import threadpool_limits

from kbench._signals import raising_on
from kbench.execution import (
    FAILED,
    STATUSES,
    describe,
    environment,
    prepare_context,
    run_job,
    write_failure,
)
from kbench.planning import Job, check_lams, check_ranks, plan
from kbench.results import cell_status, check_output_dir, read_cell
from kbench.spec import split_specs

#: BLAS/OpenMP threads per process of a sweep, launched from the CLI or the workflow alike
DEFAULT_BLAS_THREADS = 1


@dataclass
class Summary:
    counts: dict
    wall_s: float
    cells: list[str]

    @property
    def failed(self) -> int:
        return sum(v for k, v in self.counts.items() if k in FAILED)

    def __str__(self) -> str:
        parts = ", ".join(f"{self.counts.get(s, 0)} {s}" for s in STATUSES)
        done = self.counts.get("already done", 0)
        return f"{len(self.cells)} cells: {parts}; {done} already done; wall time {self.wall_s:.1f} s"


def _as_list(specs) -> list[str]:
    return split_specs(specs) if isinstance(specs, str) else list(specs)


def run(datasets, samplers, tasks, ranks, lams, repetitions: int | list[int] = 3,
        kernel: str = "gaussian:sigma=median", out="results", jobs: int = 1,
        cell_timeout: float | None = None, memory_limit_mb: float | None = None, seed: int = 0,
        retry_failed: bool = False, progress: bool = True, return_summary: bool = False,
        data_cache=None, blas_threads: int = DEFAULT_BLAS_THREADS, time_limit: float | None = None):
    """Run a sweep; returns the rows of its cells as a DataFrame.

    ``time_limit`` (seconds) bounds the whole sweep, e.g. a cluster job's: each sampler fit
    may use the time left divided by the rounds of ``jobs`` fits still to start (and at most
    ``cell_timeout`` per cell), so every cell is written, as ``timeout`` past its share,
    before the limit.

    BLAS and OpenMP use ``blas_threads`` threads in every process of the sweep (recorded in
    every row): floating-point sums depend on the thread count, so the same count, whoever
    launches the sweep, gives the same numbers.

    ``repetitions`` is a count (0..R−1) or a list of repetition indices. A cell whose file
    holds the same inputs is not recomputed (failed ones are, with ``retry_failed``); a cell
    whose inputs changed (λ path, seed, schema) is. ``data_cache`` is a folder of prepared
    splits (``kbench prepare``), read before loading.
    """
    if isinstance(blas_threads, bool) or not isinstance(blas_threads, int) or blas_threads < 1:
        raise ValueError(f"blas_threads must be an integer >= 1, got {blas_threads!r}.")
    with threadpool_limits(limits=blas_threads):
        return _run(datasets, samplers, tasks, ranks, lams, repetitions, kernel, out, jobs, cell_timeout,
                    memory_limit_mb, seed, retry_failed, progress, return_summary, data_cache, time_limit)


def _run(datasets, samplers, tasks, ranks, lams, repetitions, kernel, out, jobs, cell_timeout,
         memory_limit_mb, seed, retry_failed, progress, return_summary, data_cache, time_limit):
    started = time.perf_counter()
    ranks, lams = check_ranks(ranks), check_lams(lams)
    if not (isinstance(jobs, int) and jobs >= 1):
        raise ValueError(f"jobs must be an integer >= 1, got {jobs!r}.")
    for name, value in (("cell_timeout", cell_timeout), ("time_limit", time_limit)):
        if value is not None and not value > 0:
            raise ValueError(f"{name} must be > 0 seconds, got {value!r}.")
    end = None if time_limit is None else time.monotonic() + time_limit
    out = check_output_dir(out)
    planned = plan(_as_list(datasets), _as_list(samplers), _as_list(tasks), ranks, lams, repetitions,
                   out, seed, kernel)
    tasks = list({cell.task: cell.task.create() for cell in planned[0].cells}.values()) if planned else []
    ridge_samplers = any(job.sampler_lam is not None for job in planned)
    counts = {"already done": 0}
    queue: deque[Job] = deque()
    for job in planned:
        for cell in job.cells:
            status = cell_status(cell.path, cell.inputs)
            cell.run = status is None or (retry_failed and status != "ok")
            counts["already done"] += not cell.run
        if job.todo:
            queue.append(job)
    env = environment()
    contexts: dict[tuple, object] = {}
    remaining: dict[tuple, int] = {}
    for job in queue:
        remaining[job.dataset, job.repetition] = remaining.get((job.dataset, job.repetition), 0) + 1
    total = sum(len(job.todo) for job in queue)
    fork = mp.get_context("fork")
    running: dict = {}
    bar = _progress(total) if progress and total else None

    def finish(job: Job, status: str = "error", message: str = "the worker wrote no result") -> None:
        """Count the job's cells; a cell without a result of these inputs gets failure rows."""
        key = (job.dataset, job.repetition)
        context = contexts.get(key)
        for cell in job.todo:
            if cell_status(cell.path, cell.inputs) is None:
                write_failure(cell, job, lams, status, message,
                              context if not isinstance(context, str) else None, env)
            final = cell_status(cell.path, cell.inputs) or "error"
            counts[final] = counts.get(final, 0) + 1
            if bar:
                bar[0].advance(bar[1])
        remaining[key] -= 1
        if remaining[key] == 0:
            contexts.pop(key, None)

    # SIGTERM stops the sweep like Ctrl-C: the ``finally`` that kills the workers runs
    with raising_on(signal.SIGTERM, lambda: SystemExit(128 + signal.SIGTERM)):
        try:
            while queue or running:
                while queue and len(running) < jobs:
                    job = queue.popleft()
                    key = (job.dataset, job.repetition)
                    if key not in contexts:
                        try:
                            contexts[key] = prepare_context(job.dataset, job.kernel, job.repetition, seed,
                                                            tasks, env, data_cache, ridge_samplers, lams)
                        except Exception as exc:  # the dataset cannot be loaded: its cells fail
                            contexts[key] = f"loading {job.dataset.label} failed: {describe(exc)}"
                    if isinstance(contexts[key], str):
                        finish(job, "error", contexts[key])
                        continue
                    process = fork.Process(target=_work, args=(job, contexts[key], lams, memory_limit_mb))
                    process.start()
                    rounds = math.ceil((len(queue) + 1) / jobs)  # of fits still to start, this one's included
                    running[process] = (job, *_deadline(job, cell_timeout, end, rounds))
                time.sleep(0.01)
                for process, (job, deadline, reason) in list(running.items()):
                    if not process.is_alive():
                        process.join()
                        code = process.exitcode
                        if code == -9:
                            finish(job, "oom", f"worker exited with code {code} (killed: out of memory?)")
                        else:
                            finish(job, "error", f"worker exited with code {code} without writing the cell")
                        del running[process]
                    elif deadline is not None and time.monotonic() > deadline:
                        process.kill()
                        process.join()
                        finish(job, "timeout", f"no result within {reason}; the worker was killed")
                        del running[process]
        finally:
            for process in running:
                process.kill()
                process.join()
            if bar:
                bar[0].stop()
    cells = [str(cell.path) for job in planned for cell in job.cells]
    summary = Summary(counts, time.perf_counter() - started, cells)
    frames = [read_cell(cell.path) for job in planned for cell in job.cells if cell.path.is_file()]
    frame = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    return (frame, summary) if return_summary else frame


def _deadline(job: Job, cell_timeout: float | None, end: float | None, rounds: int) -> tuple[float | None, str]:
    """When a fit starting now is killed, and why: ``cell_timeout`` per cell, or its share of
    the sweep's time left (that time over the ``rounds`` of fits still to start, this one's
    included), whichever comes first."""
    now = time.monotonic()
    limits = []
    if cell_timeout is not None:
        limits.append((now + cell_timeout * len(job.cells), f"--cell-timeout {cell_timeout:g} s per cell"))
    if end is not None:
        share = max(end - now, 0.0) / rounds
        limits.append((now + share, f"its share ({share:.0f} s) of the sweep's --time-limit"))
    return min(limits, default=(None, ""), key=lambda limit: limit[0])


def _work(job: Job, context, lams, memory_limit_mb) -> None:
    """A worker: SIGTERM kills it at once (the parent's handler is inherited by fork)."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    run_job(job, context, lams, memory_limit_mb)


def _progress(total: int):
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    bar = Progress(TextColumn("cells"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    task = bar.add_task("cells", total=total)
    bar.start()
    return bar, task
