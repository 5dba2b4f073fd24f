"""Planning a sweep: checked inputs, seeds, and the jobs and cells to run.

A cell is (dataset, kernel, sampler, task, rank, repetition) over the whole λ path: one
result file. A job is one sampler fit, shared by the cells of its tasks. Every name is
checked against the registry before anything runs (did-you-mean errors).

Seeds (docs/conventions.md): the split depends only on (seed, dataset, repetition); the
sampler's randomness on (seed, dataset, sampler, rank, repetition).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

from kbench._provenance import KBENCH_VERSION
from kbench.datasets import check_dataset_spec, data_version, known_task_type, split_sizes
from kbench.errors import describe
from kbench.registry import create, package_of, plugin_class
from kbench.spec import Spec
from kbench.sweep.config import DEFAULT_BLAS_THREADS, SweepConfig
from kbench.sweep.layout import cell_path, sweep_id
from kbench.sweep.schema import PACKAGE_COLUMNS, SCHEMA_VERSION
from kbench.tasks.selection import DEFAULT_SELECTION


def derive_seed(*parts) -> int:
    """A 31-bit seed from a stable hash of ``parts`` (same on every machine and run)."""
    digest = hashlib.sha256(json.dumps([str(p) for p in parts]).encode()).digest()
    return int.from_bytes(digest[:4], "little") & 0x7FFFFFFF


def split_seed(seed: int, dataset: Spec, repetition: int) -> int:
    """The seed of the train/test split of (dataset, repetition): shared by every sampler."""
    return derive_seed(seed, dataset.label, repetition)


def fit_seed(seed: int, dataset: Spec, sampler: Spec, rank: int, repetition: int) -> int:
    """The seed of the sampler fit of (dataset, sampler, rank, repetition)."""
    return derive_seed(seed, dataset.label, sampler.label, rank, repetition)


def sampler_lam(sampler: Spec, lams: list[float]) -> float | None:
    """The λ a sampler is fitted at: the smallest of the path for ridge-dependent samplers."""
    return min(lams) if plugin_class(sampler).needs_lam else None


@dataclass
class Cell:
    """One result file: a task evaluated on one sampler fit over the λ path."""

    dataset: Spec
    kernel: Spec
    sampler: Spec
    task: Spec
    rank: int
    repetition: int
    base_seed: int
    #: fingerprint of every input the cell's values depend on (a changed input reruns it)
    inputs: str
    #: whether the task reports one row per λ of the path
    uses_lams: bool
    path: Path
    #: the sweep's folder (kbench.sweep.layout.sweep_id)
    sweep: str = ""
    #: the distribution and version of the packages behind the cell (:func:`provenance`)
    packages: dict = field(default_factory=dict)
    run: bool = True

    def identity(self) -> dict:
        """The identity columns of the cell's rows, with its provenance."""
        return {"dataset": self.dataset.label, "kernel": self.kernel.label,
                "sampler": self.sampler.name, "sampler_params": _params_json(self.sampler),
                "sampler_label": self.sampler.label, "task": self.task.name,
                "task_params": _params_json(self.task), "task_label": self.task.label,
                "rank": self.rank, "repetition": self.repetition, "base_seed": self.base_seed,
                "sweep": self.sweep, "cell_inputs": self.inputs, **self.packages}


def _params_json(spec: Spec) -> str:
    return json.dumps(spec.params, sort_keys=True)


def provenance(dataset: Spec, kernel: Spec, sampler: Spec, task: Spec) -> dict[str, str]:
    """The distribution name and version that provided each of a cell's plugins (the dataset's
    provider for the dataset), as the row columns :data:`kbench.sweep.store.PACKAGE_COLUMNS`."""
    values = [part for spec in (dataset, kernel, sampler, task) for part in package_of(spec)]
    return dict(zip(PACKAGE_COLUMNS, values, strict=True))


def cell_inputs(dataset: Spec, kernel: Spec, sampler: Spec, task: Spec, rank: int, repetition: int,
                seed: int, sampler_lam: float | None, lams: list[float] | None,
                packages: dict[str, str] | None = None, lam_bounds=None,
                selection: str = DEFAULT_SELECTION,
                data: str | None = None, blas_threads: int = DEFAULT_BLAS_THREADS) -> str:
    """A hash of everything a cell's values depend on: the four specs, rank, repetition,
    base seed, the λ a ridge-dependent sampler is fitted at, the λ path of a task that uses
    one (its bounds and how λ is chosen), the result schema and kbench's version, the
    packages and versions that provided the plugins (:func:`provenance`): a new version of a
    plugin recomputes its cells only; the version of the ``data`` where its spec does not say
    it all (kbench.datasets.data_version: an edited file recomputes its cells); and the BLAS
    threads, which change the last digits (a rerun with others recomputes, never mixes).
    The last two count only when they are not their defaults, so the other cells' hashes
    stay the same."""
    path = None if lams is None else [lams, None if lam_bounds is None else list(lam_bounds),
                                      selection]
    inputs = [SCHEMA_VERSION, KBENCH_VERSION, dataset.label, kernel.label, sampler.label,
              task.label, rank,
              repetition, seed, sampler_lam, path,
              sorted((packages or {}).items())] + ([data] if data else []) + \
        ([blas_threads] if blas_threads != DEFAULT_BLAS_THREADS else [])
    return hashlib.sha256(json.dumps(inputs).encode()).hexdigest()[:16]


def check_validation_rows(dataset: str) -> None:
    """A ValueError when λ is to be chosen on validation rows and the dataset spec sets none
    apart."""
    if split_sizes(dataset)[1] == 0:
        raise ValueError(f"{dataset} has no validation rows (val_size=0), and λ is chosen on them: "
                         "pass val_size > 0, or choose λ on the test set (selection: oracle, for a "
                         "paper's reproduction).")


def task_refuses(task, dataset: Spec, kind: str | None) -> str | None:
    """Why ``task`` cannot run on ``dataset`` by design (its type ``kind``, when the provider
    knows it before loading: kbench.datasets.known_task_type, is not one the task accepts),
    else None."""
    if kind is None or kind in task.accepts:
        return None
    return (f"task {task.name!r} needs a {' or '.join(task.accepts)} dataset; {dataset.label} is "
            f"{kind}")


def not_planned(datasets, kernels, samplers, tasks) -> list[dict]:
    """The combinations that cannot run by design, with the component that refuses them
    (``refused_by``) and the reason: a sampler that refuses a kernel (``Sampler.refuses``:
    none of its cells), a task that refuses a dataset's type. ``kernels`` maps each dataset
    label to its kernel specs; specs as text (read back from stored rows, or a workflow job's
    arguments) or Spec."""
    found = []
    # keyed by dataset label, however the spec is written
    kernels = {Spec.parse(d, "dataset").label: specs for d, specs in kernels.items()}
    for dataset in (Spec.parse(d, "dataset") for d in datasets):
        kind = known_task_type(dataset.label)  # once: a provider may read the data to tell
        for kernel in (Spec.parse(k, "kernel") for k in kernels[dataset.label]):
            kernel_object = create(kernel)
            for sampler in (Spec.parse(s, "sampler") for s in samplers):
                why = create(sampler).refuses(kernel_object)
                for task in (Spec.parse(t, "task") for t in tasks):
                    refused_by, reason = (("sampler", why) if why else
                                          ("task", task_refuses(create(task), dataset, kind)))
                    if reason:
                        found.append({"dataset": dataset.label, "kernel": kernel.label,
                                      "sampler": sampler.label,
                                      "task": task.label, "refused_by": refused_by,
                                      "reason": reason})
    return found


def nothing_planned(excluded: list[dict], shown: int = 8) -> str:
    """Why a sweep has no cell to compute: each combination and the reason it is refused."""
    lines = [f"{r['dataset']} × {r['kernel']} × {r['sampler']} × {r['task']}: {r['reason']}"
             for r in excluded]
    more = f"; and {len(lines) - shown} more" if len(lines) > shown else ""
    return ("the sweep plans no cell: every combination is refused by design ("
            + "; ".join(lines[:shown]) + more
            + "). Add a dataset, sampler or task that fits.")


@dataclass
class Job:
    """One sampler fit and the cells (one per task) that share it."""

    dataset: Spec
    kernel: Spec
    repetition: int
    sampler: Spec
    rank: int
    seed: int
    sampler_lam: float | None
    cells: list[Cell] = field(default_factory=list)

    @property
    def todo(self) -> list[Cell]:
        return [cell for cell in self.cells if cell.run]


def plan(config: SweepConfig, excluded: list[dict] | None = None) -> list[Job]:
    """Check every name up front (did-you-mean errors) and list the jobs of a sweep, without
    the combinations that cannot run by design (``excluded``: :func:`not_planned`'s rows,
    computed here when not given)."""
    kernel, dataset_specs = config.kernel_spec, config.dataset_specs
    sampler_specs, task_specs = config.sampler_specs, config.task_specs
    create(kernel)  # validates name and parameters
    for spec in dataset_specs:
        check_dataset_spec(spec.label)
    for spec in sampler_specs:
        create(spec)
    for spec in task_specs:
        task = create(spec)
        try:
            task.check_ranks(config.ranks)
        except (ValueError, KeyboardInterrupt):
            raise
        except BaseException as exc:  # noqa: BLE001 - a plugin's: a usage error naming it
            raise ValueError(f"task {spec.label!r}: check_ranks failed: {describe(exc)}") from None
    lams, seed = list(config.lams), config.seed
    if config.selection == DEFAULT_SELECTION and any(plugin_class(t).uses_lams for t in task_specs):
        for spec in dataset_specs:
            check_validation_rows(spec.label)
    sweep = sweep_id(seed, lams, config.lam_bounds, config.selection)
    if excluded is None:
        excluded = not_planned(dataset_specs, {d.label: [kernel] for d in dataset_specs},
                               sampler_specs, task_specs)
    refused = {(r["dataset"], r["sampler"], r["task"]) for r in excluded}
    jobs = []
    for dataset in dataset_specs:
        version = data_version(dataset.label)
        for repetition in config.repetitions:
            for sampler in sampler_specs:
                lam = sampler_lam(sampler, lams)
                tasks = [t for t in task_specs
                         if (dataset.label, sampler.label, t.label) not in refused]
                if not tasks:
                    continue
                for rank in config.ranks:
                    job = Job(dataset, kernel, repetition, sampler, rank,
                              fit_seed(seed, dataset, sampler, rank, repetition), lam)
                    for task in tasks:
                        uses_lams = plugin_class(task).uses_lams
                        packages = provenance(dataset, kernel, sampler, task)
                        inputs = cell_inputs(dataset, kernel, sampler, task, rank, repetition, seed,
                                             lam, lams if uses_lams else None, packages,
                                             config.lam_bounds,
                                             config.selection, version, config.blas_threads)
                        path = cell_path(config.out, sweep, kernel, dataset, sampler, task, rank,
                                         repetition)
                        job.cells.append(Cell(dataset, kernel, sampler, task, rank, repetition,
                                              seed,
                                              inputs, uses_lams, path, sweep, packages))
                    jobs.append(job)
    return jobs
