"""Sweeps: scheduling jobs on worker processes, with failures recorded as data.

The work unit is one sampler fit (:class:`kbench.sweep.plan.Job`), shared by the cells of
its tasks. The fits of one (dataset, repetition, sampler), its ranks, run one after the
other in a forked worker (:mod:`kbench.sweep.processes`; each fit
:func:`kbench.sweep.worker.run_job`): one fork for all of them, ``cell_timeout`` enforced by
killing the worker (its finished cells stay), and no crash can take the sweep down.
Datasets, the resolved kernel and the exact baselines are prepared once per (dataset,
repetition) in the parent and inherited by the workers.

:func:`run` is three steps: :func:`pending` (what is left to compute), :class:`Scheduler`
(compute it), :func:`collect` (the rows of every planned cell).
"""

from __future__ import annotations

import math
import multiprocessing as mp
import os
import signal
import time
from collections import Counter, deque
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait

import pandas as pd
from threadpoolctl import threadpool_limits

from kbench.errors import ConfigError, Failure, Status
from kbench.kernels import DEFAULT_KERNEL
from kbench.registry import create
from kbench.sweep.config import DEFAULT_BLAS_THREADS, SweepConfig
from kbench.sweep.context import ContextFailed, JobContext, environment, prepare_context
from kbench.sweep.plan import Job, not_planned, nothing_planned, plan
from kbench.sweep.processes import CANNOT_WRITE, drain, killed, oom_kills, work
from kbench.sweep.signals import TimeLimitReached, alarm, held, raising_on
from kbench.sweep.store import cell_status, check_output_dir, read_cells
from kbench.sweep.summary import Summary
from kbench.sweep.worker import write_failure
from kbench.tasks.selection import DEFAULT_SELECTION

#: the longest wait poll() takes, in seconds (milliseconds in a C int): a later deadline is
#: waited for in turns
LONGEST_WAIT = (2**31 - 1) // 1000


def run(datasets, samplers, tasks, ranks, lams, repetitions: int | list[int] = 3,
        kernel: str = DEFAULT_KERNEL, out="results", jobs: int = 1,
        cell_timeout: float | None = None, memory_limit_mb: float | None = None, seed: int = 0,
        retry_failed: bool = False, progress: bool = True, return_summary: bool = False,
        data_cache=None, blas_threads: int = DEFAULT_BLAS_THREADS, time_limit: float | None = None,
        lam_bounds=None, selection: str = DEFAULT_SELECTION):
    """Run a sweep; returns the rows of its cells as a DataFrame.

    Parameters
    ----------
    datasets, samplers, tasks : list of specs, or a comma-separated text
        e.g. ``["sklearn:diabetes"]``, ``"uniform,squeak:qbar=20"``, ``["krr", "kpca"]``.
    ranks, lams : the ranks and the λ path (per-sample ridge) of every cell; ``lams="auto"``
        starts from 1e-6 … 1e-1 and extends by decades (within ``lam_bounds``, default
        1e-12 … 1e3) until the λ chosen on validation data is interior.
    lam_bounds : (lowest, highest) λ a path may be extended to; None with a list: a fixed path.
    selection : ``"validation"`` (λ chosen on the validation rows, the test metric read
        there) or ``"oracle"`` (chosen on the test rows: a paper's reproduction only).
    repetitions : a count R (repetitions 0..R−1) or a list of repetition indices.
    kernel : the kernel spec, e.g. ``"gaussian:sigma=median"``.
    out : the results directory (one parquet file per cell).
    jobs : worker processes.
    cell_timeout, time_limit : seconds per cell, and for the whole sweep (e.g. a cluster
        job's): each fit may use the time left divided by the rounds of ``jobs`` fits still
        to start, so every cell is written, as ``timeout`` past its share, before the limit.
    memory_limit_mb : the address-space cap of each worker.
    seed : the base seed of splits and samplers.
    retry_failed : recompute cells whose file records a failure.
    progress, return_summary : a progress bar; return ``(frame, Summary)``.
    data_cache : a folder of prepared splits (``kbench prepare``), read before loading.
    blas_threads : BLAS and OpenMP threads in every process of the sweep (recorded in every
        row): floating-point sums depend on the thread count, so the same count, whoever
        launches the sweep, gives the same numbers.

    Returns
    -------
    pandas.DataFrame, one row per (cell, λ[, components]); with ``return_summary``, also
    the :class:`Summary`. A cell whose file holds the same inputs is not recomputed; a cell
    whose inputs changed (λ path, seed, schema) is.
    """
    for name, flag in (("progress", progress), ("return_summary", return_summary)):
        if not isinstance(flag, bool):  # (a text "no" is truthy)
            raise ValueError(f"{name} must be True or False, got {flag!r}.")
    config = SweepConfig(datasets, samplers, tasks, ranks, lams, repetitions, kernel, out, jobs,
                         cell_timeout, memory_limit_mb, time_limit, seed, retry_failed, data_cache,
                         blas_threads, lam_bounds, selection)
    planned, summary = execute(config, progress)
    frame = collect(planned)
    return (frame, summary) if return_summary else frame


def execute(config: SweepConfig, progress: bool = True) -> tuple[list[Job], Summary]:
    """Plan the sweep of ``config`` and compute what is left of it: its jobs and the
    :class:`Summary` (:func:`run` without reading the rows back, as ``kbench run`` needs)."""
    started = time.perf_counter()
    with threadpool_limits(limits=config.blas_threads):
        kernels = {d.label: [config.kernel_spec] for d in config.dataset_specs}
        excluded = not_planned(config.dataset_specs, kernels, config.sampler_specs,
                               config.task_specs)
        planned = plan(config, excluded)  # every name and value checked before anything is written
        if not planned:
            raise ConfigError(nothing_planned(excluded))
        check_output_dir(config.out, config.data_cache)
        queue, done = pending(planned, config.retry_failed)
        counts = Scheduler(config, planned, progress).run(batches(queue, config.jobs))
    counts["already done"] = sum(done.values())
    cells = [cell for job in planned for cell in job.cells]
    failed_before = {status: n for status, n in done.items() if Status(status).failed}
    return planned, Summary(dict(counts), time.perf_counter() - started,
                            [str(cell.path) for cell in cells], excluded,
                            failed_before)


def pending(planned: list[Job], retry_failed: bool) -> tuple[deque[Job], Counter]:
    """Mark the cells to compute (no result of these inputs; with ``retry_failed``, a failed
    one too): the jobs with such cells, and the cells already done, by status."""
    queue: deque[Job] = deque()
    done: Counter = Counter()
    for job in planned:
        for cell in job.cells:
            status = cell_status(cell.path, cell.inputs)
            cell.run = status is None or (retry_failed and status != Status.OK)
            if not cell.run:
                done[str(status)] += 1
        if job.todo:
            queue.append(job)
    return queue, done


def batches(queue: deque[Job], workers: int) -> deque[list[Job]]:
    """What one worker runs each: the fits of a (dataset, repetition, sampler), its ranks in
    order, one after the other (a fork, and a fresh process's first writes, cost tens of
    milliseconds a fit); a fit each when there are fewer such batches than ``workers``, so
    that every worker has work."""
    grouped: dict[tuple, list[Job]] = {}
    for job in queue:
        grouped.setdefault((job.dataset, job.kernel, job.repetition, job.sampler), []).append(job)
    if len(grouped) < workers:
        return deque([job] for job in queue)
    return deque(grouped.values())


def collect(planned: list[Job]) -> pd.DataFrame:
    """The rows of every planned cell that has a file."""
    return read_cells([cell.path for job in planned for cell in job.cells if cell.path.is_file()])


@dataclass
class _Running:
    """A worker's batch, the pipe on which it reports each cell it writes, and its limits:
    ``cell_end``, ``cell_timeout`` after its start or its last cell, and ``share_end``, its
    share of the sweep's ``time_limit`` (:func:`_share`)."""

    batch: list[Job]
    progress: Connection
    cell_end: float | None
    share_end: float | None
    share_reason: str
    oom_kills: int | None = None

    @property
    def deadline(self) -> float | None:
        return min((end for end in (self.cell_end, self.share_end) if end is not None),
                   default=None)


@dataclass
class Scheduler:
    """Runs jobs on forked workers, at most ``config.jobs`` at a time, and counts the
    statuses of their cells. The split, kernel and exact baseline of a (dataset,
    repetition) are prepared when its first job starts and dropped after its last."""

    config: SweepConfig
    planned: list[Job]
    progress: bool = True
    counts: Counter = field(default_factory=Counter)

    def __post_init__(self) -> None:
        self.tasks = {cell.task: create(cell.task) for job in self.planned for cell in job.cells}
        self.ridge_samplers = any(job.sampler_lam is not None for job in self.planned)
        self.environment = environment()
        self.contexts: dict[tuple, JobContext | Failure] = {}
        self.remaining: Counter = Counter()
        self.running: dict = {}
        self.end = (None if self.config.time_limit is None
                    else time.monotonic() + self.config.time_limit)

    def run(self, queue: deque[list[Job]]) -> Counter:
        """Run every batch of jobs of ``queue`` (:func:`batches`), a worker each; SIGTERM
        stops the sweep like Ctrl-C (the workers are killed, finished cells stay)."""
        self.remaining.update((job.dataset, job.repetition) for batch in queue for job in batch)
        total = sum(len(job.todo) for batch in queue for job in batch)
        self.bar = _progress(total) if self.progress and total else None
        with raising_on(signal.SIGTERM, lambda: SystemExit(128 + signal.SIGTERM)):
            try:
                while queue or self.running:
                    while queue and len(self.running) < self.config.jobs:
                        self._start(queue.popleft(),
                                    rounds=math.ceil((len(queue) + 1) / self.config.jobs))
                    self._wait()
                    self._reap()
            finally:
                for process, state in self.running.items():
                    process.kill()
                    process.join()
                    state.progress.close()
                if self.bar:
                    self.bar[0].stop()
        return self.counts

    def _context(self, job: Job) -> JobContext | Failure:
        """The shared state of the job's (dataset, repetition), or why it could not be had."""
        key = (job.dataset, job.repetition)
        if key not in self.contexts:
            c = self.config
            limit = (f"the sweep's --time-limit ({c.time_limit:g} s)" if c.time_limit is not None
                     else "")
            left = None if self.end is None else self.end - time.monotonic()
            try:
                if left is not None and left <= 0:
                    raise ContextFailed(Failure(Status.TIMEOUT,
                                                f"{limit} had passed before its data were loaded",
                                                "dataset"))
                # the parent's share: every fit waits on it
                with alarm(left, lambda: TimeLimitReached(limit)):
                    self.contexts[key] = prepare_context(
                        job.dataset, job.kernel, job.repetition, c.seed, self.tasks,
                        self.environment, c.data_cache, self.ridge_samplers, list(c.lams),
                        c.lam_bounds, c.selection, say=self._say)
            # the dataset, its kernel or its baseline failed: the cells fail
            except ContextFailed as exc:
                self.contexts[key] = exc.failure
            except TimeLimitReached:  # between stages (a task's prepare)
                self.contexts[key] = Failure(Status.TIMEOUT,
                                             f"preparing its tasks did not finish within {limit}",
                                             "task")
        return self.contexts[key]

    def _say(self, text: str) -> None:
        """A line above the progress bar (none without one: ``--quiet``)."""
        if self.bar:
            self.bar[0].console.print(text)

    def _start(self, batch: list[Job], rounds: int) -> None:
        """Fork a worker for ``batch`` (``rounds``: of batches still to start, this one's
        included)."""
        context = self._context(batch[0])
        if isinstance(context, Failure):
            return self._finish(batch, context)
        progress, report = mp.get_context("fork").Pipe(duplex=False)
        process = mp.get_context("fork").Process(
            target=work, args=(batch, context, self.config.memory_limit_mb, report, os.getpid()))
        timeout = self.config.cell_timeout
        try:
            # Ctrl-C or SIGTERM now would leave a worker the sweep does not know to kill
            with held():
                process.start()
                cell_end = None if timeout is None else time.monotonic() + timeout
                self.running[process] = _Running(batch, progress, cell_end,
                                                 *_share(self.end, rounds), oom_kills=oom_kills())
        except BaseException:
            progress.close()
            raise
        finally:
            report.close()  # the worker's end: the parent only reads

    def _wait(self) -> None:
        """Until a worker writes a cell or exits, or the first deadline passes: an event, not
        a polling loop."""
        deadlines = [state.deadline for state in self.running.values()
                     if state.deadline is not None]
        timeout = min(max(min(deadlines) - time.monotonic(), 0.0),
                      LONGEST_WAIT) if deadlines else None
        if self.running:
            wait([process.sentinel for process in self.running]
                 + [state.progress for state in self.running.values()], timeout)

    def _reap(self) -> None:
        """Count finished workers' cells; restart the cell timer of a worker that wrote a cell;
        kill the ones past their deadline."""
        for process, state in list(self.running.items()):
            if drain(state.progress) and self.config.cell_timeout is not None:
                state.cell_end = time.monotonic() + self.config.cell_timeout
            if not process.is_alive():
                process.join()
                code = process.exitcode
                if code == -signal.SIGKILL:
                    failure = killed(state.oom_kills)
                elif code == CANNOT_WRITE:
                    why = "the worker could not write its cell (the line above says why)"
                    failure = Failure(Status.ERROR, why, "job")
                else:
                    failure = Failure(Status.ERROR,
                                      f"worker exited with code {code} without writing the cell")
            elif state.deadline is not None and time.monotonic() > state.deadline:
                process.kill()
                process.join()
                reason = (f"--cell-timeout {self.config.cell_timeout:g} s per cell"
                          if state.deadline == state.cell_end
                          else state.share_reason)
                failure = Failure(Status.TIMEOUT,
                                  f"no result within {reason}; the worker was killed")
            else:
                continue
            del self.running[process]
            state.progress.close()
            self._finish(state.batch, failure)

    def _finish(self, batch: list[Job], failure: Failure) -> None:
        """Count the batch's cells; a cell without a result of these inputs gets ``failure``'s
        rows."""
        key = (batch[0].dataset, batch[0].repetition)
        context = self.contexts.get(key)
        for job in batch:
            for cell in job.todo:
                status = cell_status(cell.path, cell.inputs)
                if status is None:
                    known = context if not isinstance(context, Failure) else None
                    write_failure(cell, job, list(known.lams if known else self.config.lams),
                                  failure, known, self.environment)
                    status = failure.status.value
                self.counts[status] += 1
                if self.bar:
                    self.bar[0].advance(self.bar[1])
        self.remaining[key] -= len(batch)
        if self.remaining[key] == 0:
            self.contexts.pop(key, None)


def _share(end: float | None, rounds: int) -> tuple[float | None, str]:
    """When a worker starting now must stop to leave the sweep's ``time_limit`` (ending at
    ``end``) to the ``rounds`` of batches still to start, this one's included, and why."""
    if end is None:
        return None, ""
    now = time.monotonic()
    share = max(end - now, 0.0) / rounds
    return now + share, f"its share ({share:.0f} s) of the sweep's --time-limit"


def _progress(total: int):
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    bar = Progress(TextColumn("cells"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    task = bar.add_task("cells", total=total)
    bar.start()
    return bar, task
