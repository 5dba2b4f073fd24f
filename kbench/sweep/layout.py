"""Every file a sweep writes, named once: the one source of path patterns.

The store, the worker, the jobs that build a fit's parts and the Snakefile (through kbench.workflow)
all read their paths here. A template's fields are slugs (collision-free, kbench.Spec) and
numbers; :func:`pattern` keeps some fields as Snakemake wildcards.

Below ``OUT`` (a results directory)::

    cells/<sweep>/<kernel>/<dataset>/<sampler>/<task>/rank<r>_rep<i>.parquet    one cell's rows
    cells/<sweep>.txt                                                   the workflow config's cells
    data/                                                               the workflow's data cache
    logs/<rule>/...                                                     the workflow's logs (LOGS)

``<sweep>`` (:func:`sweep_id`) names what a cell's numbers depend on beyond its own
coordinates: the base seed and the λ path (its bounds, how λ is chosen). Sweeps that differ in
either write to separate folders, so no run overwrites another configuration's cells, and several
sweeps can share a results directory (a leaderboard then picks one, ``--sweep``). The plugin
versions a cell was computed with are part of its identity (kbench.sweep.plan.cell_inputs), not its
path: a new version recomputes the cell in place.

Below a data cache (``kbench prepare --data-cache``, ``OUT/data`` in the workflow)::

    <dataset>_rep<i>_seed<s>.npz                                        a prepared split
    exact/<kernel>/<dataset>_rep<i>_seed<s>.npz                         its exact baseline
    kernels/<kernel>/<dataset>_rep<i>_seed<s>.json                      the kernel resolved on it
    parts/<kernel>/<dataset>/<sampler>/rep<i>_seed<s>_<part>.npz        a part of a sampler's fits
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from pathlib import Path

from kbench.spec import Spec
from kbench.tasks.selection import DEFAULT_SELECTION

CELLS_DIR = "cells"
DATA_DIR = "data"
LOGS_DIR = "logs"

CELL = CELLS_DIR + "/{sweep}/{kernel}/{dataset}/{sampler}/{task}/rank{rank}_rep{rep}.parquet"
SPLIT = "{dataset}_rep{rep}_seed{seed}.npz"
EXACT = "exact/{kernel}/" + SPLIT
#: the kernel resolved on a split (σ chosen on its validation rows), for every job on it
KERNEL = "kernels/{kernel}/{dataset}_rep{rep}_seed{seed}.json"
#: a part of a sampler's fits built as a job (kbench.plugin.Sampler.parts)
PART = "parts/{kernel}/{dataset}/{sampler}/rep{rep}_seed{seed}_{part}.npz"
#: the cell files of a workflow's config, one per line: what its ``aggregate`` reads (so a
#: sampler or rank dropped from the config leaves the page, though its cells stay)
CELL_LIST = CELLS_DIR + "/{sweep}.txt"
#: a batch's aggregated cells, below ``OUT`` (a sweep of a catalogue: kbench.sweep.batches)
BATCH = "batches/{batch}.parquet"
#: each workflow rule's log, below ``OUT/logs``
LOGS = {
    "prepare": "prepare/{dataset}.log",
    "exact": "exact/{kernel}/{dataset}.log",
    "part": "parts/{kernel}/{dataset}/{sampler}_rep{rep}_{part}.log",
    "run": "run/{kernel}/{dataset}.log",
    "run_sampler": "run/{kernel}/{dataset}/{sampler}.log",  # a job per sampler (a large dataset)
    "cell_list": "cell_list.log",
    "aggregate": "aggregate.log",
    "batch": "batches/{batch}.log",
    "paper": "paper_{paper}.log",
    "leaderboard": "leaderboard.log",
}


class _Wildcards(dict):
    def __missing__(self, key: str) -> str:
        return "{" + key + "}"


def pattern(root, template: str, **known) -> str:
    """``root/template`` with the ``known`` fields filled in and the others kept as
    ``{wildcards}`` (a Snakemake output pattern)."""
    return str(Path(root) / template.format_map(_Wildcards(known)))


def slugs(**specs) -> dict[str, str]:
    return {kind: Spec.parse(text, kind).slug for kind, text in specs.items()}


def sweep_id(seed: int, lams: Sequence[float], lam_bounds: Sequence[float] | None = None,
             selection: str = DEFAULT_SELECTION) -> str:
    """The folder of a sweep's cells: ``seed<s>_lams-<hash of the λ path>``, e.g.
    ``seed0_lams-5d1c2e0a`` (the λ path as a set: its order changes no number; the bounds it
    may be extended to and an ``oracle`` selection are part of the hash when given)."""
    path: list = sorted(float(lam) for lam in lams)
    if lam_bounds is not None or selection != DEFAULT_SELECTION:
        path = [path, None if lam_bounds is None else [float(v) for v in lam_bounds], selection]
    text = json.dumps(path)
    return f"seed{int(seed)}_lams-{hashlib.sha256(text.encode()).hexdigest()[:8]}"


#: a sweep's folder name below cells/ (:func:`sweep_id`)
SWEEP_FOLDER = re.compile(r"seed-?\d+_lams-[0-9a-f]{8}")


def enclosing_results(path) -> Path | None:
    """The results directory whose ``cells/`` tree holds ``path`` (or is it), if any: a
    ``cells`` folder with a sweep folder in it."""
    for folder in (path := Path(path).absolute(), *path.parents):
        if folder.name == CELLS_DIR and folder.is_dir() and any(
                SWEEP_FOLDER.fullmatch(entry.name) for entry in folder.iterdir()):
            return folder.parent
    return None


#: a cell file's name (the last part of :data:`CELL`), its rank and repetition read back
CELL_FILE = re.compile(re.escape(Path(CELL).name).replace(r"\{rank\}", r"(?P<rank>\d+)").replace(
    r"\{rep\}", r"(?P<rep>\d+)"))


def cell_of_name(path) -> tuple[int, int] | None:
    """The (rank, repetition) a cell file's name says, None for a name of another form."""
    found = CELL_FILE.fullmatch(Path(path).name)
    return (int(found["rank"]), int(found["rep"])) if found else None


def cell_path(out, sweep: str, kernel, dataset, sampler, task, rank: int, repetition: int) -> Path:
    """The file of one cell's rows (``sweep``: :func:`sweep_id`; the four specs as text or
    :class:`kbench.Spec`)."""
    return Path(out) / CELL.format(
        **slugs(kernel=kernel, dataset=dataset, sampler=sampler, task=task),
        sweep=sweep, rank=rank, rep=repetition)


def cell_list_path(out, sweep: str) -> Path:
    """The list of a workflow config's cell files (:data:`CELL_LIST`)."""
    return Path(out) / CELL_LIST.format(sweep=sweep)


def unlisted_cells(folder) -> list[Path]:
    """The cell files under a workflow's results ``folder`` that none of its cell lists
    (:data:`CELL_LIST`) names: cells its config no longer asks for, which the workflow's page
    leaves out. [] for a folder without a list (``kbench run``'s)."""
    cells = Path(folder) / CELLS_DIR
    lists = sorted(cells.glob("*.txt")) if cells.is_dir() else []
    if not lists:
        return []
    listed = set()
    for path in lists:
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            parts = Path(line.strip()).parts
            starts = [i for i in range(1, len(parts)) if parts[i - 1] == CELLS_DIR
                      and SWEEP_FOLDER.fullmatch(parts[i])]
            if starts:
                listed.add(Path(*parts[starts[-1]:]))
    return [file for file in sorted(cells.glob("*/**/*.parquet"))
            if file.relative_to(cells) not in listed]


def dataset_folder(out, sweep: str, kernel, dataset) -> Path:
    """The folder of a dataset's cells with one kernel (every sampler, task, rank and
    repetition)."""
    return Path(out) / CELL.split("/{sampler}")[0].format(**slugs(kernel=kernel, dataset=dataset),
                                                          sweep=sweep)


def split_path(data_cache, dataset, repetition: int, seed: int = 0) -> Path:
    """Where the split of (dataset, repetition) is cached (``kbench prepare``, ``--data-cache``)."""
    return Path(data_cache) / SPLIT.format(**slugs(dataset=dataset), rep=repetition, seed=seed)


def exact_path(data_cache, dataset, kernel, repetition: int, seed: int = 0) -> Path:
    """Where the exact baseline of (dataset, kernel, repetition) is cached, beside the splits."""
    return Path(data_cache) / EXACT.format(**slugs(dataset=dataset, kernel=kernel), rep=repetition,
                                           seed=seed)


def kernel_path(data_cache, dataset, kernel, repetition: int, seed: int = 0) -> Path:
    """Where the kernel resolved on the split of (dataset, repetition) is cached."""
    return Path(data_cache) / KERNEL.format(**slugs(dataset=dataset, kernel=kernel), rep=repetition,
                                            seed=seed)


def part_path(data_cache, dataset, kernel, sampler, repetition: int, seed: int, part: str) -> Path:
    """Where a part of a sampler's fits is kept (:data:`PART`)."""
    return Path(data_cache) / PART.format(**slugs(dataset=dataset, kernel=kernel, sampler=sampler),
                                          rep=repetition, seed=seed, part=part)
