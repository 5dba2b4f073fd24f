"""The worker processes a sweep's scheduler (kbench.sweep.scheduler) forks: what a worker runs
(:func:`work`: its signals, its memory cap, its batch's fits in order), how the parent reads
the cells it reports (:func:`drain`), and how it died (:data:`CANNOT_WRITE`, or SIGKILL: the
kernel's out-of-memory killer, :func:`oom_kills`, or someone else)."""

from __future__ import annotations

import sys
from multiprocessing.connection import Connection

from kbench.errors import Failure, Status
from kbench.sweep.context import JobContext
from kbench.sweep.parts import prebuilt_parts
from kbench.sweep.plan import Job
from kbench.sweep.signals import worker_signals
from kbench.sweep.worker import limit_memory, run_job

#: a worker's exit code when a cell file cannot be written (sysexits' EX_IOERR)
CANNOT_WRITE = 74


def oom_kills() -> int | None:
    """How many processes the kernel's out-of-memory killer has killed since boot (its
    ``oom_kill`` counter in /proc/vmstat, Linux ≥ 4.13), or None where it cannot be read."""
    try:
        with open("/proc/vmstat") as stream:
            return next(int(line.split()[1]) for line in stream if line.startswith("oom_kill "))
    except (OSError, StopIteration, ValueError, IndexError):
        return None


def killed(before: int | None) -> Failure:
    """A worker killed by SIGKILL: ``oom`` when the out-of-memory killer has killed since it
    started (``before``), else ``killed`` (by a user, or a job scheduler), which a rerun retries."""
    after = oom_kills()
    if before is None or after is None:
        return Failure(Status.OOM, "worker killed by SIGKILL (out of memory? the kernel's oom_kill "
                                   "counter cannot be read here)", "job")
    if after > before:
        return Failure(Status.OOM, "worker killed by the kernel's out-of-memory killer", "job")
    return Failure(Status.KILLED, "worker killed by SIGKILL from outside kbench (not out of "
                                  "memory: the kernel's oom_kill counter did not move); a rerun "
                                  "computes the cell again", "job")


def drain(progress: Connection) -> bool:
    """Read every message waiting on a worker's pipe; whether there was one."""
    got = False
    try:
        while progress.poll():
            progress.recv()
            got = True
    except EOFError:  # the worker is gone: its sentinel says so
        pass
    return got


def work(batch: list[Job], context: JobContext, memory_limit_mb, report: Connection,
          parent: int) -> None:
    """A worker of process ``parent``: its signals set (:func:`worker_signals`); its
    address space is capped once, then it runs the batch's fits in order, reporting each
    cell it writes on ``report``. The last part of fits other processes built in parts
    (kbench.sweep.parts) is handed to the sampler."""
    worker_signals(parent)
    if memory_limit_mb:
        limit_memory(memory_limit_mb)
    for job in batch:
        try:
            prebuilt = prebuilt_parts(job, context)
        except Exception:  # noqa: BLE001 - an unreadable part file: the fit is built in one piece
            prebuilt = {}
        try:
            run_job(job, context, memory_limit_mb, prebuilt, written=lambda: report.send(None))
        except OSError as exc:  # a cell cannot be written: one line, and the parent names it too
            print(f"kbench: cannot write {exc.filename}: {exc.strerror or exc}", file=sys.stderr)
            sys.exit(CANNOT_WRITE)
