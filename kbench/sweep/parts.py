"""Fits built in parts, as separate jobs: the sweep's side of the sampler hook
(:meth:`kbench.Sampler.parts`; DISQUEAK's merge tree is one, a part per node).

The workflow runs one job per part of a sampler's fits: a part made from the training rows
alone, or from the parts it names (:meth:`kbench.Sampler.part_inputs`), whose files it
reads. The run job's fits then start from the last part (:meth:`kbench.Sampler.use_prebuilt`).
A part is seeded by the fit's generator (:meth:`kbench.Sampler.parts_seed`), so a fit from
parts equals the fit built in one process.

A part's file holds the part of every rank's fit (each has its own seed) and the key of what
it was computed from (split checksum, resolved kernel, sampler, λ): a file computed from
anything else is never used. A part that fails writes why instead, and so do the parts made
from it; the run job then builds the fit itself and records the failure in its cells, like
any fit.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np

from kbench._files import read_keyed_npz, write_absent, write_keyed_npz
from kbench._validation import check_features
from kbench.errors import ContractViolation, describe
from kbench.registry import create
from kbench.spec import Spec
from kbench.sweep import layout
from kbench.sweep.config import check_lams, check_ranks
from kbench.sweep.context import JobContext, fitted_kernel, load_split_cached, split_checksum
from kbench.sweep.plan import Job, fit_seed, sampler_lam

#: a part's name: it goes into file names and job wildcards
PART_NAME = re.compile(r"[A-Za-z0-9._-]{1,64}")


def parts_of(sampler) -> list[str]:
    """The parts a sampler spec's fits are built from as separate jobs ([]: built in one
    piece), checked: names of :data:`PART_NAME`, each once, each after its inputs."""
    instance = create(sampler, "sampler")
    parts = list(instance.parts())
    seen: set[str] = set()
    for part in parts:
        if not isinstance(part, str) or not PART_NAME.fullmatch(part) or part in seen:
            raise ContractViolation(f"sampler {instance.name!r}: part {part!r} is not a name of its own (letters, "
                                    "digits, '.', '_', '-'; each part once).")
        later = [p for p in instance.part_inputs(part) if p not in seen]
        if later:
            raise ContractViolation(f"sampler {instance.name!r}: part {part!r} is made from {later}, which its "
                                    "parts() list does not name before it.")
        seen.add(part)
    return parts


def check_part(text: str, sampler) -> str:
    """``text`` when it names a part of the sampler's fits, else a ValueError listing them."""
    parts = parts_of(sampler)
    if not parts:
        raise ValueError(f"sampler {Spec.parse(sampler, 'sampler').label!r} builds its fits in one piece: it has "
                         "no parts to build as jobs.")
    if text not in parts:
        raise ValueError(f"{text!r} is not a part of the fits of {Spec.parse(sampler, 'sampler').label}; its parts "
                         f"are {', '.join(parts)}.")
    return text


def part_path(data_cache, dataset, kernel, sampler, repetition: int, seed: int, part: str) -> Path:
    """Where a part of the fits is kept, beside the splits."""
    return layout.part_path(data_cache, dataset, kernel, sampler, repetition, seed, part)


def part_key(checksum: str, kernel, sampler: Spec, lam: float | None) -> str:
    """What a part is computed from: split checksum, resolved kernel, sampler, λ."""
    return json.dumps({"split": checksum, "kernel": kernel.spec(), "sampler": sampler.label, "lam": lam},
                      sort_keys=True)


def save_part(path, key: str, made: dict[int, dict[str, np.ndarray]]) -> None:
    """Write one part's arrays for each fit's seed (atomically)."""
    arrays = {f"t{seed}_{name}": value for seed, part in made.items() for name, value in part.items()}
    write_keyed_npz(path, key, seeds=np.array(list(made), dtype=np.int64), **arrays)


def load_part(path, key: str) -> dict[int, dict[str, np.ndarray]] | str | None:
    """A part's arrays by fit seed; the reason written by a part that failed; None when there
    is no file or it was computed from something else."""
    archive = read_keyed_npz(path, key, ("seeds",))
    if not isinstance(archive, dict):
        return archive
    return {seed: {name.removeprefix(f"t{seed}_"): archive[name] for name in archive if name.startswith(f"t{seed}_")}
            for seed in archive["seeds"].tolist()}


def build_part(dataset, kernel, sampler, ranks, lams, repetition: int, seed: int, data_cache,
               part: str) -> tuple[Path, str | None]:
    """Compute one part of the fits of (dataset, kernel, sampler, repetition) at every rank into
    the data cache; a part made from others reads their files. Returns the part's file and,
    when the part failed, why."""
    dataset, kernel, sampler = (Spec.parse(dataset, "dataset"), Spec.parse(kernel, "kernel"),
                                Spec.parse(sampler, "sampler"))
    instance, part = create(sampler), check_part(part, sampler)
    ranks, lam = check_ranks(ranks), sampler_lam(sampler, check_lams(lams))
    path = part_path(data_cache, dataset, kernel, sampler, repetition, seed, part)
    inputs = instance.part_inputs(part)
    absent = [p for p in inputs if not part_path(data_cache, dataset, kernel, sampler, repetition, seed, p).exists()]
    if absent:  # (an input that failed has its file, which says why: this part records that)
        raise ValueError(f"part {part} is made from parts {' and '.join(absent)}, not computed in {data_cache}: "
                         f"compute them first (--part {absent[0]}).")
    seeds = {rank: instance.parts_seed(np.random.default_rng(fit_seed(seed, dataset, sampler, rank, repetition)))
             for rank in ranks}
    try:
        data = load_split_cached(dataset, repetition, seed, data_cache)
        X = check_features(data.X_train, "X")
        checksum = split_checksum(data)
        fitted = fitted_kernel(kernel, data, (layout.kernel_path(data_cache, dataset, kernel, repetition, seed), checksum))
        key = part_key(checksum, fitted, sampler, lam)
        loaded = []
        for name in inputs:
            found = load_part(part_path(data_cache, dataset, kernel, sampler, repetition, seed, name), key)
            if not isinstance(found, dict):
                raise ValueError(f"part {name} has nothing to build on: "
                                 f"{found or 'no file computed from this split, kernel and λ'}")
            missing = [rank for rank, fit in seeds.items() if fit not in found]
            if missing:
                raise ValueError(f"part {name} was not built for the fits of ranks {missing}")
            loaded.append(found)
        made = {fit: instance.build_part(X, fitted, lam, fit, part, [found[fit] for found in loaded])
                for fit in seeds.values()}
    except Exception as exc:  # noqa: BLE001 - the run job meets it again and records it in its cells
        write_absent(path, describe(exc))
        return path, describe(exc)
    save_part(path, key, made)
    return path, None


def prebuilt_parts(job: Job, context: JobContext) -> dict[int, dict[str, np.ndarray]]:
    """The last parts the workflow's jobs left in the data cache for a job's fits (this
    split, kernel and λ only), by fit seed; empty when there are none (the fits are then built
    in one piece) or the job's sampler has no parts."""
    parts = parts_of(job.sampler)
    if not parts or context.data_cache is None:
        return {}
    path = part_path(context.data_cache, job.dataset, job.kernel, job.sampler, job.repetition,
                     job.cells[0].base_seed, parts[-1])
    found = load_part(path, part_key(context.split_checksum, context.kernel, job.sampler, job.sampler_lam))
    return found if isinstance(found, dict) else {}
