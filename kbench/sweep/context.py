"""What the jobs of one (dataset, kernel, repetition) share, prepared once in the parent
process: the split, the kernel resolved on it, the tasks' preparations, the exact baseline
and the λ path (:class:`JobContext`), inherited by the forked workers
(:mod:`kbench.sweep.worker`). A stage that fails is recorded in every cell that needs it,
naming the stage (``failed_in``).
"""

from __future__ import annotations

import hashlib
import json
import platform
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from importlib.metadata import version
from pathlib import Path

import numpy as np

from kbench._files import UNREADABLE, write_absent, write_text
from kbench._provenance import KBENCH_VERSION, kbench_commit
from kbench.datasets import Dataset, data_version, load_dataset, split_sizes
from kbench.datasets.split import load_split, save_split
from kbench.errors import Failure, Status, describe
from kbench.exact.baseline import DENSE_MAX_N, exact_baseline, save_requests
from kbench.kernels.base import Kernel, check_kernel
from kbench.lowrank.workspace import Workspace
from kbench.registry import create
from kbench.spec import Spec
from kbench.sweep.layout import exact_path, kernel_path, split_path
from kbench.sweep.plan import split_seed
from kbench.sweep.signals import TimeLimitReached
from kbench.tasks.selection import (
    DEFAULT_SELECTION,
    exact_curves,
    resolve_path,
)

#: a split's arrays, read-only in a sweep
SPLIT_ARRAYS = ("X_train", "y_train", "f_train", "X_val", "y_val", "f_val", "X_test", "y_test",
                "f_test")


def environment() -> dict:
    """Versions, BLAS threads and host, recorded with every row."""
    from threadpoolctl import threadpool_info

    pools = threadpool_info()
    return {
        "kbench_version": KBENCH_VERSION,
        "kbench_commit": kbench_commit(),
        "numpy_version": np.__version__,
        "scipy_version": version("scipy"),
        "sklearn_version": version("scikit-learn"),
        "blas_threads": max((p["num_threads"] for p in pools), default=None),
        "host": platform.node(),
    }


@dataclass
class JobContext:
    """What the jobs of one (dataset, kernel, repetition) share, prepared once in the parent and
    inherited by the forked workers: with the workspace of the preparations, which each job
    enters."""

    data: Dataset
    kernel: Kernel
    split_checksum: str
    environment: dict
    #: the folder of prepared splits and shared work (exact baselines, parts of fits built as jobs)
    data_cache: Path | None = None
    #: the λ path of every cell (the sweep's, extended until the exact kernel's choice is interior)
    lams: tuple[float, ...] = ()
    #: the bounds within which a cell extends its own path (None: it may not; a cell follows
    #: a matrix-free exact baseline's path, whose every λ costs passes over K)
    lam_bounds: tuple[float, float] | None = None
    #: how λ is chosen (kbench.tasks.selection.SELECTIONS)
    selection: str = DEFAULT_SELECTION
    #: the tasks whose ``prepare`` failed, and how: their cells record it without evaluating
    task_failures: dict[Spec, Failure] = field(default_factory=dict)
    workspace: Workspace = field(default_factory=Workspace, repr=False)

    def columns(self) -> dict:
        meta = self.data.meta
        return {"split_checksum": self.split_checksum, "kernel_resolved": self.kernel.spec(),
                "n_train": self.data.n_train, "n_features": self.data.X_train.shape[1],
                "n_rows": meta.get("n_total"), "dataset_source": meta.get("source"),
                "dataset_documentation": meta.get("documentation"),
                "dataset_preprocessing": meta.get("preprocessing_summary"), **self.environment}


# ---------------------------------------------------------------------------------------
# Splits and shared state
# ---------------------------------------------------------------------------------------
def exact_limit(tasks, ridge_samplers: bool) -> int | None:
    """The largest n_train for which a sweep needs the exact baseline: the tasks that compare
    with it, and ridge-dependent samplers, whose leverage scores are checked against the
    dense one; None when nothing needs it."""
    limits = [task.exact_max_n for task in tasks if task.needs_exact]
    limits += [DENSE_MAX_N] if ridge_samplers else []
    return max(limits, default=None)


def split_checksum(data: Dataset) -> str:
    """A fingerprint of a split's arrays (recorded in every row as ``split_checksum``)."""
    digest = hashlib.sha256()
    for array in (data.X_train, data.y_train, data.X_val, data.y_val, data.X_test, data.y_test):
        # unlabeled data has no target (an empty validation part adds nothing)
        if array is not None:
            digest.update(np.ascontiguousarray(array).tobytes())
    return digest.hexdigest()[:16]


def load_split_cached(dataset, repetition: int, seed: int = 0, data_cache=None) -> Dataset:
    """The split of (dataset, repetition): from the cache when there (a split of an older
    kbench, without the validation part the spec asks for, is not, nor is a file damaged
    outside kbench), else loaded (and cached)."""
    dataset = Spec.parse(dataset, "dataset")
    if data_cache is not None:
        path = split_path(data_cache, dataset, repetition, seed)
        try:
            cached = load_split(path) if path.is_file() else None
        except UNREADABLE:
            cached = None
        if cached is not None and cached.meta.get("val_size") == split_sizes(dataset.label)[1] and \
                cached.meta.get("version") == data_version(dataset.label):  # not of an edited file
            return cached
    data = load_dataset(dataset.label, seed=split_seed(seed, dataset, repetition))
    if data_cache is not None:
        save_split(data, path)
    return data


def fitted_kernel(kernel, data: Dataset, saved: tuple[Path, str] | None = None) -> Kernel:
    """The kernel of spec ``kernel`` resolved on a split: data-dependent parameters from its
    training rows, a validated one (``sigma="cv"``) on its validation rows. With ``saved`` (a
    file and the split's checksum) the resolved spec is read from the file when a job on the
    same split wrote it (σ by validation costs seconds a split, and every job of a sweep on
    the split needs it), else resolved and written there."""
    if saved is not None:
        path, checksum = saved
        try:
            record = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            record = {}
        if isinstance(record,
                      dict) and record.get("split_checksum") == checksum and "resolved" in record:
            return create(record["resolved"], "kernel").fit(data.X_train, data.y_train)
    validation = (data.X_val, data.y_val) if data.n_val and data.y_val is not None else None
    fitted = create(kernel, "kernel").fit(data.X_train, data.y_train, validation=validation)
    if saved is not None:
        write_text(saved[0], json.dumps({"split_checksum": saved[1], "resolved": fitted.spec()}))
    return fitted


def exact_and_path(data: Dataset, kernel: Kernel, limit: int, shared, tasks, lams, lam_bounds=None,
                   selection: str = DEFAULT_SELECTION):
    """The exact baseline of (data, kernel) (None past ``limit``) and the λ path of its cells:
    ``lams``, extended within ``lam_bounds`` until the λ the exact kernel chooses for every
    λ-path task is interior (kbench.tasks.selection.resolve_path). The baseline is asked for
    what the tasks will need along that path (a matrix-free one solves it now), and shared
    through ``shared`` (kbench.exact.baseline.exact_baseline) with all of it."""
    baseline, path = exact_baseline(data, kernel, limit, shared), sorted(lams)
    if baseline is not None and lam_bounds is not None:
        path = resolve_path(lams, lam_bounds,
                            lambda path: exact_curves(baseline, data, tasks, path, selection))
    # asked now, before the jobs fork, for what the tasks need
    if baseline is not None and not baseline.dense:
        for task in tasks:
            if task.needs_exact and data.n_train <= task.exact_max_n:
                task.prepare_exact(baseline, data, path)
        save_requests(baseline, data, kernel, shared)
    return baseline, path


class ContextFailed(Exception):
    """A job's shared state could not be had; ``failure`` says where and why."""

    def __init__(self, failure: Failure) -> None:
        super().__init__(failure.message)
        self.failure = failure


@contextmanager
def _stage(component: str, what: str):
    """Turn an exception in one stage of :func:`prepare_context` into :class:`ContextFailed`
    naming the stage (``failed_in``: the dataset, the kernel or the exact baseline), and
    :class:`TimeLimitReached` into a timeout of the stage."""
    try:
        yield
    except TimeLimitReached as exc:
        raise ContextFailed(Failure(Status.TIMEOUT, f"{what} did not finish within {exc}",
                                    component)) from None
    except Exception as exc:
        status = Status.OOM if isinstance(exc, MemoryError) else Status.ERROR
        raise ContextFailed(Failure(status, f"{what} failed: {describe(exc)}", component)) from exc


def prepare_context(dataset: Spec, kernel: Spec, repetition: int, seed: int, tasks, env: dict,
                    data_cache=None, ridge_samplers: bool = False, lams=(), lam_bounds=None,
                    selection: str = DEFAULT_SELECTION,
                    say: Callable[[str], None] = lambda text: None) -> JobContext:
    """Load the split, resolve the kernel on it, let each task (``tasks``: label → task)
    prepare what its evaluations share (:meth:`kbench.plugin.Task.prepare`; a failure is its cells'
    to record), get the exact baseline and the cells' λ path
    (:func:`exact_and_path`) once, in the parent, so that every forked worker shares them
    (:func:`exact_limit` says when the baseline is needed). With a ``data_cache`` the baseline
    is read from there when another process computed it (the workflow's ``exact`` jobs), else
    computed and saved there. ``say`` announces a matrix-free baseline, which takes minutes."""
    with _stage("dataset", f"loading {dataset.label}"):
        data = load_split_cached(dataset, repetition, seed, data_cache)
        # a plugin writing into them fails its own cell
        for array in (getattr(data, part) for part in SPLIT_ARRAYS):
            if isinstance(array, np.ndarray):
                array.flags.writeable = False
        checksum = split_checksum(data)
    with _stage("kernel", f"the kernel {kernel.label} on {dataset.label}"):
        fitted = fitted_kernel(kernel, data, None if data_cache is None else (
            kernel_path(data_cache, dataset, kernel, repetition, seed), checksum))
        check_kernel(fitted, data.X_train)
    workspace = Workspace()  # the jobs' shared state, filled here, before they fork
    with workspace:
        tasks, task_failures = dict(tasks), {}
        for label, task in tasks.items():
            try:
                task.prepare(data, fitted)
            # the user's Ctrl-C, the sweep's --time-limit
            except (KeyboardInterrupt, TimeLimitReached):
                raise
            # every failure becomes data (a SystemExit too): the task's cells
            except BaseException as exc:  # noqa: BLE001
                failure = Failure.of(exc, "task")
                task_failures[label] = replace(failure, message="preparing the task failed: "
                                                                f"{failure.message}")
        tasks = [task for label, task in tasks.items() if label not in task_failures]
        limit = exact_limit(tasks, ridge_samplers)
        baseline, path = None, sorted(lams)
        if limit is not None:
            if DENSE_MAX_N < data.n_train <= limit:
                say(f"{dataset.label}: the exact baseline on {data.n_train} training rows is "
                    f"matrix-free, a few passes over K ({float(data.n_train) ** 2:.1e} kernel "
                    "values each; minutes past ~20 000 rows). A task's exact_max_n (e.g. "
                    f"krr:exact_max_n={DENSE_MAX_N}) sets where it stops.")
            shared = (None if data_cache is None
                      else (exact_path(data_cache, dataset, kernel, repetition, seed), checksum))
            with _stage("exact", f"the exact baseline on {dataset.label}"):
                baseline, path = exact_and_path(data, fitted, limit, shared, tasks, lams,
                                                lam_bounds, selection)
    own_bounds = lam_bounds if baseline is None or baseline.dense else None
    return JobContext(data, fitted, checksum, env, None if data_cache is None else Path(data_cache),
                      tuple(path), own_bounds, selection, task_failures, workspace)


def prepare_exact(dataset, kernel, repetition: int, seed: int, data_cache, exact_max_n: int,
                  tasks=(), lams=(), lam_bounds=None, selection: str = DEFAULT_SELECTION) -> Path:
    """Compute the exact baseline of (dataset, kernel, repetition) into the data cache, for the
    run jobs of a workflow to load; a matrix-free one with what the ``tasks`` will ask of it
    along the λ path ``lams``, extended within ``lam_bounds`` (:func:`exact_and_path`: ridge
    solves, KPCA eigenpairs). Past ``exact_max_n``, or when it fails (a kernel that
    overflows, say), the file records why there is none: a run job that needs it then tries
    itself and records the failure in its cells, like ``kbench run``."""
    dataset, kernel = Spec.parse(dataset, "dataset"), Spec.parse(kernel, "kernel")
    data = load_split_cached(dataset, repetition, seed, data_cache)
    path = exact_path(data_cache, dataset, kernel, repetition, seed)
    if data.n_train > exact_max_n:
        write_absent(path, f"{data.n_train} training rows > exact_max_n {exact_max_n}")
        return path
    checksum = split_checksum(data)
    try:
        fitted = fitted_kernel(
            kernel, data, (kernel_path(data_cache, dataset, kernel, repetition, seed), checksum))
        exact_and_path(data, fitted, exact_max_n, (path, checksum), tasks, lams, lam_bounds,
                       selection)
    # the run jobs meet it again and record it in their cells
    except Exception as exc:  # noqa: BLE001
        write_absent(path, f"it failed: {describe(exc)}")
    return path
