"""Sweeps of cells: load → sample → evaluate → rows, with failures recorded as data.

A cell is (dataset, kernel, sampler, task, rank, repetition) evaluated over the whole λ
path; it is one parquet file. The work unit is one sampler fit, shared by the tasks of
its cells, and it runs in a worker process (fork) so that ``cell_timeout`` can be
enforced by killing the worker and a crash cannot take the sweep down. Datasets, the
resolved kernel and the exact baselines are prepared once per (dataset, repetition) in
the parent and inherited by the workers.

Seeds (DESIGN §2): the split depends only on (seed, dataset, repetition); the sampler's
randomness on (seed, dataset, sampler, rank, repetition).
"""

from __future__ import annotations

import hashlib
import json
import math
import multiprocessing as mp
import os
import platform
import resource
import time
import traceback
from collections import deque
from dataclasses import dataclass, field
from datetime import datetime, timezone
from importlib.metadata import version
from pathlib import Path

import numpy as np
import pandas as pd

from kbench import registry
from kbench.datasets import check_dataset_spec, load_dataset
from kbench.datasets.base import load_split, parse_value, save_split
from kbench.exact import DEFAULT_EXACT_MAX_N, exact_baseline
from kbench.results import cell_path, cell_status, check_output_dir, read_cell, slug, write_cell

STATUSES = ("ok", "error", "timeout", "oom", "skipped")


# ---------------------------------------------------------------------------------------
# Specs and seeds
# ---------------------------------------------------------------------------------------
def parse_spec(text: str) -> tuple[str, dict]:
    """``name:key=value,...`` → (name, params); ``kpca:components=1;5;10`` gives a list."""
    name, _, rest = str(text).partition(":")
    params = {}
    for item in filter(None, rest.split(",")):
        key, eq, value = item.partition("=")
        if not eq or not key.strip():
            raise ValueError(f"parameter {item!r} in {text!r} must be key=value.")
        params[key.strip()] = parse_value(value.strip())
    return name.strip(), params


def split_list(text: str) -> list[str]:
    """Split a comma list of specs; a piece with '=' but no ':' continues the previous spec
    (so ``squeak:qbar=20,eps=0.3,uniform`` is two samplers)."""
    items: list[str] = []
    for piece in (p.strip() for p in str(text).split(",")):
        if not piece:
            continue
        if items and "=" in piece and ":" not in piece and ":" in items[-1]:
            items[-1] += "," + piece
        else:
            items.append(piece)
    return items


def label(name: str, params: dict) -> str:
    return name + (":" + ",".join(f"{k}={_text(v)}" for k, v in sorted(params.items())) if params else "")


def _text(value) -> str:
    return ";".join(map(str, value)) if isinstance(value, list | tuple) else str(value)


def derive_seed(*parts) -> int:
    """A 31-bit seed from a stable hash of ``parts`` (same on every machine and run)."""
    digest = hashlib.sha256(json.dumps([str(p) for p in parts]).encode()).digest()
    return int.from_bytes(digest[:4], "little") & 0x7FFFFFFF


# ---------------------------------------------------------------------------------------
# Planning
# ---------------------------------------------------------------------------------------
@dataclass
class Job:
    """One sampler fit and the cells (one per task) that share it."""

    dataset: str
    repetition: int
    sampler: str
    sampler_params: dict
    rank: int
    seed: int
    cells: list[dict] = field(default_factory=list)


def _check_ranks(ranks) -> list[int]:
    values = []
    for r in ([ranks] if np.isscalar(ranks) else list(ranks)):
        try:
            value = int(r)
        except (TypeError, ValueError):
            value = None
        if value is None or value != float(r) or value < 1:
            raise ValueError(f"ranks must be integers >= 1, got {r!r} in {ranks!r}.")
        values.append(value)
    if not values:
        raise ValueError("ranks is empty: pass at least one rank, e.g. --ranks 10,50,100.")
    return sorted(set(values))


def _check_lams(lams) -> list[float]:
    try:
        values = [float(x) for x in ([lams] if np.isscalar(lams) else list(lams))]
    except (TypeError, ValueError):
        raise ValueError(f"lams must be numbers > 0, e.g. --lams 1e-6,1e-4, got {lams!r}.") from None
    if not values or any(not math.isfinite(v) or v <= 0 for v in values):
        raise ValueError(f"lams must be a non-empty list of finite numbers > 0, got {lams!r}.")
    return sorted(set(values))


def plan(datasets, samplers, tasks, ranks, repetitions, out, seed=0, kernel="gaussian:sigma=median"):
    """Check every name up front (did-you-mean errors) and list the jobs of a sweep."""
    reg = registry.get_registry()
    kernel_name, kernel_params = parse_spec(kernel)
    reg.create("kernel", kernel_name, **kernel_params)  # validates name and parameters
    for spec in datasets:
        check_dataset_spec(spec)
    sampler_specs = [parse_spec(s) for s in samplers]
    task_specs = [parse_spec(t) for t in tasks]
    for name, params in sampler_specs:
        reg.create("sampler", name, **params)
    for name, params in task_specs:
        reg.create("task", name, **params)
    if isinstance(repetitions, int):
        if repetitions < 1:
            raise ValueError(f"repetitions must be an integer >= 1, got {repetitions!r}.")
        repetitions = range(repetitions)
    elif not repetitions or any(not isinstance(r, int) or r < 0 for r in repetitions):
        raise ValueError(f"repetition indices must be integers >= 0, got {repetitions!r}.")
    kernel_label = label(kernel_name, kernel_params)
    jobs = []
    for dataset in datasets:
        for repetition in repetitions:
            for name, params in sampler_specs:
                for rank in ranks:
                    sampler_label = label(name, params)
                    job = Job(dataset, repetition, name, params, rank,
                              derive_seed(seed, dataset, sampler_label, rank, repetition))
                    for task_name, task_params in task_specs:
                        cell = {"dataset": dataset, "kernel": kernel_label, "sampler": name,
                                "sampler_params": json.dumps(params, sort_keys=True),
                                "task": task_name,
                                "task_params": json.dumps(task_params, sort_keys=True),
                                "rank": rank, "repetition": repetition,
                                "_task_params": task_params,
                                "sampler_label_params": sampler_label.partition(":")[2],
                                "task_label_params": label(task_name, task_params).partition(":")[2]}
                        cell["_path"] = str(cell_path(out, cell))
                        job.cells.append(cell)
                    jobs.append(job)
    return jobs


# ---------------------------------------------------------------------------------------
# Running one job (in a worker process)
# ---------------------------------------------------------------------------------------
def _environment() -> dict:
    from threadpoolctl import threadpool_info

    pools = threadpool_info()
    return {
        "kbench_version": version("kbench"),
        "numpy_version": np.__version__,
        "scipy_version": version("scipy"),
        "sklearn_version": version("scikit-learn"),
        "blas_threads": max((p["num_threads"] for p in pools), default=None),
        "host": platform.node(),
    }


def _base_row(cell: dict, context: dict, seed: int) -> dict:
    row = {k: v for k, v in cell.items() if not k.startswith("_") and not k.endswith("_label_params")}
    row.update(seed=seed, split_checksum=context["split_checksum"],
               kernel_resolved=context["kernel"].spec(), n_train=context["n_train"])
    return row


def failure_rows(cell: dict, context: dict, seed: int, lams, status: str, message: str) -> list[dict]:
    """A failed cell keeps its rows: one per λ (one for λ-free tasks), metrics missing."""
    task_lams = [float("nan")] if cell["task"] in ("kpca", "approximation") else lams
    stamp = datetime.now(timezone.utc).isoformat()
    return [{**_base_row(cell, context, seed), "lam": lam, "status": status, "error": message,
             "timestamp": stamp, **context["environment"]} for lam in task_lams]


def classify(exc: BaseException) -> str:
    """Exception → status: MemoryError is oom, a refused input (ValueError) skipped, else error."""
    if isinstance(exc, MemoryError):
        return "oom"
    if isinstance(exc, ValueError):
        return "skipped"
    return "error"


def _message(exc: BaseException) -> str:
    if isinstance(exc, ValueError | MemoryError):
        return f"{type(exc).__name__}: {exc}"
    return "".join(traceback.format_exception_only(type(exc), exc)).strip() + " | " + \
        traceback.format_tb(exc.__traceback__)[-1].strip().replace("\n", " ")


def run_job(job: Job, context: dict, lams: list[float], memory_limit_mb: float | None = None) -> None:
    """Fit the job's sampler once, evaluate each of its cells' tasks, write one file per cell."""
    if memory_limit_mb:
        _limit_memory(memory_limit_mb)
    data, kernel = context["data"], context["kernel"]
    reg = registry.get_registry()
    todo = [cell for cell in job.cells if cell.get("_run", True)]
    try:
        sampler = reg.create("sampler", job.sampler, **job.sampler_params)
        start, evals = time.perf_counter(), kernel.evals
        lam = min(lams) if sampler.needs_lam else None
        approx = sampler.fit(data.X_train, kernel, job.rank, lam=lam, seed=job.seed)
        time_sample = time.perf_counter() - start
        kernel_evals = int(approx.info.get("kernel_evals", kernel.evals - evals))
        exact = exact_baseline(data, kernel) if "scores" in approx.info and lam is not None else None
        # leverage-score samplers: their scores against the exact ones (ALGORITHMS.md, Diagnostics)
        score_check = exact.score_check(approx.info["scores"], lam) if exact is not None else {}
    except BaseException as exc:  # noqa: BLE001 - every failure becomes data
        if isinstance(exc, KeyboardInterrupt):
            raise
        for cell in todo:
            write_cell(Path(cell["_path"]),
                       failure_rows(cell, context, job.seed, lams, classify(exc), _message(exc)))
        return
    common = {"rank_realized": approx.rank, "time_sample_s": time_sample,
              "kernel_evals": kernel_evals, "sampler_lam": lam,
              "dictionary_size": approx.info.get("dictionary_size"),
              "unique_atoms": approx.info.get("unique_atoms"),
              "sampler_warnings": "; ".join(approx.info.get("warnings", [])), **score_check}
    for cell in todo:
        try:
            task = reg.create("task", cell["task"], **cell["_task_params"])
            rows = task.evaluate(data, approx, kernel, lams=lams)
        except BaseException as exc:  # noqa: BLE001
            if isinstance(exc, KeyboardInterrupt):
                raise
            write_cell(Path(cell["_path"]),
                       failure_rows(cell, context, job.seed, lams, classify(exc), _message(exc)))
            continue
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        stamp = datetime.now(timezone.utc).isoformat()
        full = [{**_base_row(cell, context, job.seed), **common, **row, "peak_rss_mb": peak,
                 "status": "ok", "error": "", "timestamp": stamp, **context["environment"]}
                for row in rows]
        write_cell(Path(cell["_path"]), full)


def _limit_memory(limit_mb: float) -> None:
    """Cap this worker's address space at its current size + limit_mb (RLIMIT_AS)."""
    with open("/proc/self/statm") as fh:
        current = int(fh.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    cap = current + int(limit_mb * 2**20)
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))


# ---------------------------------------------------------------------------------------
# The sweep
# ---------------------------------------------------------------------------------------
def prepared_path(data_cache, dataset: str, repetition: int, seed: int = 0) -> Path:
    """Where the split of (dataset, repetition) is cached (``kbench prepare``, ``--data-cache``)."""
    return Path(data_cache) / f"{slug(dataset)}_rep{repetition}_seed{seed}.npz"


def load_split_cached(dataset: str, repetition: int, seed: int = 0, data_cache=None):
    """The split of (dataset, repetition): from the cache when there, else loaded (and cached)."""
    if data_cache is not None:
        path = prepared_path(data_cache, dataset, repetition, seed)
        if path.is_file():
            return load_split(path)
    data = load_dataset(dataset, seed=derive_seed(seed, dataset, repetition))
    if data_cache is not None:
        save_split(data, path)
    return data


def _prepare(dataset: str, repetition: int, kernel_spec: str, seed: int, task_specs, environment,
             data_cache=None, ridge_samplers: bool = False):
    """Load the split, resolve the kernel on it and compute the exact baseline once, in the
    parent, so that every forked worker shares it: for the tasks that compare with it, and
    for ridge-dependent samplers, whose leverage scores are checked against it."""
    data = load_split_cached(dataset, repetition, seed, data_cache)
    name, params = parse_spec(kernel_spec)
    kernel = registry.make_kernel(name, **params).fit(data.X_train)
    needs_exact = [registry.make_task(t, **p).exact_max_n for t, p in task_specs
                   if t in ("krr", "kpca", "classification")]
    needs_exact += [DEFAULT_EXACT_MAX_N] if ridge_samplers else []
    if needs_exact and data.n_train <= max(needs_exact):
        exact_baseline(data, kernel, max(needs_exact))
    digest = hashlib.sha256()
    for array in (data.X_train, data.y_train, data.X_test, data.y_test):
        digest.update(np.ascontiguousarray(array).tobytes())
    return {"data": data, "kernel": kernel, "split_checksum": digest.hexdigest()[:16],
            "n_train": data.n_train, "environment": environment}


@dataclass
class Summary:
    counts: dict
    wall_s: float
    cells: list[str]

    @property
    def failed(self) -> int:
        return sum(v for k, v in self.counts.items() if k in ("error", "timeout", "oom"))

    def __str__(self) -> str:
        parts = ", ".join(f"{self.counts.get(s, 0)} {s}" for s in ("ok", "error", "timeout", "oom", "skipped"))
        done = self.counts.get("already done", 0)
        return f"{len(self.cells)} cells: {parts}; {done} already done; wall time {self.wall_s:.1f} s"


def run(datasets, samplers, tasks, ranks, lams, repetitions: int | list[int] = 3,
        kernel: str = "gaussian:sigma=median", out="results", jobs: int = 1,
        cell_timeout: float | None = None, memory_limit_mb: float | None = None, seed: int = 0,
        retry_failed: bool = False, progress: bool = True, return_summary: bool = False,
        data_cache=None):
    """Run a sweep; returns the rows of its cells as a DataFrame (DESIGN §3).

    ``repetitions`` is a count (0..R−1) or a list of repetition indices.
    Finished cells (a file exists) are skipped, failed ones too unless ``retry_failed``.
    ``data_cache`` is a folder of prepared splits (``kbench prepare``), read before loading.
    """
    started = time.perf_counter()
    datasets = split_list(datasets) if isinstance(datasets, str) else list(datasets)
    samplers = split_list(samplers) if isinstance(samplers, str) else list(samplers)
    tasks = split_list(tasks) if isinstance(tasks, str) else list(tasks)
    ranks, lams = _check_ranks(ranks), _check_lams(lams)
    if not (isinstance(jobs, int) and jobs >= 1):
        raise ValueError(f"jobs must be an integer >= 1, got {jobs!r}.")
    if cell_timeout is not None and not cell_timeout > 0:
        raise ValueError(f"cell_timeout must be > 0 seconds, got {cell_timeout!r}.")
    out = check_output_dir(out)
    planned = plan(datasets, samplers, tasks, ranks, repetitions, out, seed, kernel)
    task_specs = [parse_spec(t) for t in tasks]
    reg = registry.get_registry()
    ridge_samplers = any(getattr(reg.get("sampler", name).obj, "needs_lam", False)
                         for name in {job.sampler for job in planned})
    counts = {"already done": 0}
    queue: deque[Job] = deque()
    for job in planned:
        for cell in job.cells:
            status = cell_status(Path(cell["_path"]), lams)
            cell["_run"] = status is None or (retry_failed and status != "ok")
            counts["already done"] += not cell["_run"]
        if any(c["_run"] for c in job.cells):
            queue.append(job)
    environment = _environment()
    contexts: dict[tuple, dict] = {}
    remaining = {}
    for job in queue:
        remaining[(job.dataset, job.repetition)] = remaining.get((job.dataset, job.repetition), 0) + 1
    total = sum(sum(c["_run"] for c in job.cells) for job in queue)
    context_ctx = mp.get_context("fork")
    running: dict = {}
    bar = _progress(total) if progress and total else None

    def finish(job, status=None, message=""):
        key = (job.dataset, job.repetition)
        for cell in job.cells:
            if not cell["_run"]:
                continue
            path = Path(cell["_path"])
            if status is not None and cell_status(path) is None:
                write_cell(path, failure_rows(cell, contexts[key], job.seed, lams, status, message))
            final = cell_status(path) or "error"
            counts[final] = counts.get(final, 0) + 1
            if bar:
                bar[0].advance(bar[1])
        remaining[key] -= 1
        if remaining[key] == 0:
            contexts.pop(key, None)

    try:
        while queue or running:
            while queue and len(running) < jobs:
                job = queue.popleft()
                key = (job.dataset, job.repetition)
                if key not in contexts:
                    try:
                        contexts[key] = _prepare(job.dataset, job.repetition, kernel, seed,
                                                 task_specs, environment, data_cache, ridge_samplers)
                    except Exception as exc:  # the dataset cannot be loaded: its cells fail
                        contexts[key] = {"data": None, "kernel": _NoKernel(), "split_checksum": "",
                                         "n_train": 0, "environment": environment,
                                         "error": ("error", f"loading {job.dataset} failed: "
                                                            f"{_message(exc)}")}
                if "error" in contexts[key]:
                    finish(job, *contexts[key]["error"])
                    continue
                process = context_ctx.Process(target=run_job,
                                              args=(job, contexts[key], lams, memory_limit_mb))
                process.start()
                deadline = None if cell_timeout is None else time.monotonic() + cell_timeout * len(job.cells)
                running[process] = (job, deadline)
            time.sleep(0.01)
            for process, (job, deadline) in list(running.items()):
                if not process.is_alive():
                    process.join()
                    code = process.exitcode
                    message = f"worker exited with code {code}" + (
                        " (killed: out of memory?)" if code == -9 else "")
                    finish(job, "oom" if code == -9 else "error", message) if code else finish(job)
                    del running[process]
                elif deadline is not None and time.monotonic() > deadline:
                    process.kill()
                    process.join()
                    finish(job, "timeout", f"no result within --cell-timeout {cell_timeout:g} s "
                                           f"per cell; the worker was killed")
                    del running[process]
    finally:
        for process in running:
            process.kill()
        if bar:
            bar[0].stop()
    cells = [cell["_path"] for job in planned for cell in job.cells]
    summary = Summary(counts, time.perf_counter() - started, cells)
    frames = [read_cell(Path(p)) for p in cells if Path(p).is_file()]
    frame = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    return (frame, summary) if return_summary else frame


class _NoKernel:
    def spec(self) -> str:
        return ""


def _progress(total: int):
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    bar = Progress(TextColumn("cells"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    task = bar.add_task("cells", total=total)
    bar.start()
    return bar, task
