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
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from kbench.results import SCHEMA_VERSION, cell_path
from kbench.spec import Spec


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
    return min(lams) if sampler.plugin_class().needs_lam else None


def check_ranks(ranks) -> list[int]:
    values = []
    for r in ([ranks] if np.isscalar(ranks) else list(ranks)):
        try:
            value = int(r)
        except (TypeError, ValueError, OverflowError):
            value = None
        if value is None or value != float(r) or value < 1:
            raise ValueError(f"ranks must be integers >= 1, got {r!r} in {ranks!r}.")
        values.append(value)
    if not values:
        raise ValueError("ranks is empty: pass at least one rank, e.g. --ranks 10,50,100.")
    return sorted(set(values))


def check_lams(lams) -> list[float]:
    try:
        values = [float(x) for x in ([lams] if np.isscalar(lams) else list(lams))]
    except (TypeError, ValueError):
        raise ValueError(f"lams must be numbers > 0, e.g. --lams 1e-6,1e-4, got {lams!r}.") from None
    if not values or any(not math.isfinite(v) or v <= 0 for v in values):
        raise ValueError(f"lams must be a non-empty list of finite numbers > 0, got {lams!r}.")
    return sorted(set(values))


def check_repetitions(repetitions) -> list[int]:
    """A count R (repetitions 0..R−1) or a list of repetition indices."""
    if isinstance(repetitions, int) and not isinstance(repetitions, bool):
        if repetitions < 1:
            raise ValueError(f"repetitions must be an integer >= 1, got {repetitions!r}.")
        return list(range(repetitions))
    values = list(repetitions) if repetitions is not None else []
    if not values or any(not isinstance(r, int) or isinstance(r, bool) or r < 0 for r in values):
        raise ValueError(f"repetition indices must be integers >= 0, got {repetitions!r}.")
    return values


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
    run: bool = True

    def identity(self) -> dict:
        """The identity columns of the cell's rows."""
        return {"dataset": self.dataset.label, "kernel": self.kernel.label,
                "sampler": self.sampler.name, "sampler_params": _params_json(self.sampler),
                "sampler_label": self.sampler.label, "task": self.task.name,
                "task_params": _params_json(self.task), "task_label": self.task.label,
                "rank": self.rank, "repetition": self.repetition, "base_seed": self.base_seed,
                "cell_inputs": self.inputs}


def _params_json(spec: Spec) -> str:
    return json.dumps(spec.params, sort_keys=True)


def cell_inputs(dataset: Spec, kernel: Spec, sampler: Spec, task: Spec, rank: int, repetition: int,
                seed: int, sampler_lam: float | None, lams: list[float] | None) -> str:
    """A hash of everything a cell's values depend on: the four specs, rank, repetition,
    base seed, the λ a ridge-dependent sampler is fitted at and the λ path of a task that
    uses one (and the result schema)."""
    inputs = [SCHEMA_VERSION, dataset.label, kernel.label, sampler.label, task.label, rank, repetition,
              seed, sampler_lam, lams]
    return hashlib.sha256(json.dumps(inputs).encode()).hexdigest()[:16]


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


def plan(datasets, samplers, tasks, ranks, lams, repetitions, out, seed: int = 0,
         kernel: str = "gaussian:sigma=median") -> list[Job]:
    """Check every name up front (did-you-mean errors) and list the jobs of a sweep."""
    ranks, lams = check_ranks(ranks), check_lams(lams)
    repetitions = check_repetitions(repetitions)
    kernel = Spec.parse(kernel, "kernel")
    kernel.create()  # validates name and parameters
    dataset_specs = [Spec.parse(d, "dataset") for d in datasets]
    for spec in dataset_specs:
        spec.create()
    sampler_specs = [Spec.parse(s, "sampler") for s in samplers]
    task_specs = [Spec.parse(t, "task") for t in tasks]
    for spec in (*sampler_specs, *task_specs):
        spec.create()
    for kind, specs in (("datasets", dataset_specs), ("samplers", sampler_specs), ("tasks", task_specs)):
        if not specs:
            raise ValueError(f"no {kind} given: pass at least one.")
    jobs = []
    for dataset in dataset_specs:
        for repetition in repetitions:
            for sampler in sampler_specs:
                lam = sampler_lam(sampler, lams)
                for rank in ranks:
                    job = Job(dataset, kernel, repetition, sampler, rank,
                              fit_seed(seed, dataset, sampler, rank, repetition), lam)
                    for task in task_specs:
                        uses_lams = task.plugin_class().uses_lams
                        inputs = cell_inputs(dataset, kernel, sampler, task, rank, repetition, seed,
                                             lam, lams if uses_lams else None)
                        path = cell_path(out, kernel, dataset, sampler, task, rank, repetition)
                        job.cells.append(Cell(dataset, kernel, sampler, task, rank, repetition, seed,
                                              inputs, uses_lams, path))
                    jobs.append(job)
    return jobs
