"""Fits built in parts, as separate jobs: the sweep's side of the sampler hook
(:meth:`kbench.plugin.Sampler.parts`; DISQUEAK's merge tree is one, a part per node).

The workflow runs one job per part of a sampler's fits: a part made from the training rows
alone, or from the parts it names (:meth:`kbench.plugin.Sampler.part_inputs`), whose files it
reads. The run job's fits then start from the last part
(:meth:`kbench.plugin.Sampler.use_prebuilt`). A part is seeded by the fit's generator
(:meth:`kbench.plugin.Sampler.parts_seed`), so a fit from parts equals the fit built in one process.

A part's file holds the part of every rank's fit (each has its own seed) and the key of what
it was computed from (split checksum, resolved kernel, sampler, λ): a file computed from
anything else is never used. A part that fails writes why instead, and so do the parts made
from it; the run job then builds the fit itself and records the failure in its cells, like
any fit.
"""

from __future__ import annotations

import functools
import json
import numbers
import re
from pathlib import Path

import numpy as np

from kbench._files import read_keyed_npz, write_absent, write_keyed_npz
from kbench._validation import check_features
from kbench.datasets import canonical_spec, check_dataset_spec
from kbench.errors import ContractViolation, describe
from kbench.registry import canonical_label, create
from kbench.spec import Spec
from kbench.sweep import layout
from kbench.sweep.config import check_lams, check_ranks
from kbench.sweep.context import JobContext, fitted_kernel, load_split_cached, split_checksum
from kbench.sweep.plan import Job, fit_seed, sampler_lam

#: a part's name: it goes into file names and job wildcards
PART_NAME = re.compile(r"[A-Za-z0-9._-]{1,64}")


#: the most parts a sampler's fits may have (a job each; squeak's 1024 shards make 2047)
MAX_PARTS = 4096


def parts_of(sampler) -> list[str]:
    """The parts a sampler spec's fits are built from as separate jobs ([]: built in one
    piece), checked (:func:`part_graph`)."""
    return list(part_graph(Spec.parse(sampler, "sampler").label))


def part_inputs(sampler, part: str) -> list[str]:
    """The parts ``part`` of a sampler spec's fits is made from."""
    return list(part_graph(Spec.parse(sampler, "sampler").label)[part])


@functools.cache
def part_graph(label: str) -> dict[str, tuple[str, ...]]:
    """:func:`graph_of` the sampler of spec ``label``, once per spec (a workflow asks for it per
    job)."""
    return graph_of(create(label, "sampler"))


def graph_of(instance) -> dict[str, tuple[str, ...]]:
    """Each part of a sampler's fits and the parts it is made from: names of
    :data:`PART_NAME`, each once, each after its inputs, at most :data:`MAX_PARTS`; else a
    ContractViolation naming the sampler."""
    owner = f"sampler {instance.name!r}"
    parts = instance.parts()
    if not isinstance(parts, list | tuple):
        raise ContractViolation(f"{owner}: parts() returned {type(parts).__name__}, not a list of "
                                "part names.")
    if len(parts) > MAX_PARTS:
        raise ContractViolation(f"{owner}: {len(parts)} parts, a job each; kbench takes at most "
                                f"{MAX_PARTS}.")
    graph: dict[str, tuple[str, ...]] = {}
    for part in parts:
        if (not isinstance(part, str) or not PART_NAME.fullmatch(part) or part in graph
                or part in (".", "..")):
            raise ContractViolation(f"{owner}: part {part!r} is not a name of its own (letters, "
                                    "digits, '.', '_', '-', not '.' or '..'; each part once).")
        inputs = tuple(instance.part_inputs(part))
        if any(name not in graph for name in inputs):
            raise ContractViolation(f"{owner}: part {part!r} is made from {list(inputs)}, which "
                                    "its parts() list does not all name before it.")
        graph[part] = inputs
    return graph


def check_part(text: str, sampler) -> str:
    """``text`` when it names a part of the sampler's fits, else a ValueError listing them."""
    parts = parts_of(sampler)
    if not parts:
        raise ValueError(f"sampler {Spec.parse(sampler, 'sampler').label!r} builds its fits in one "
                         "piece: it has no parts to build as jobs.")
    if text not in parts:
        raise ValueError(f"{text!r} is not a part of the fits of "
                         f"{Spec.parse(sampler, 'sampler').label}; its parts are "
                         f"{', '.join(parts)}.")
    return text


def part_path(data_cache, dataset, kernel, sampler, repetition: int, seed: int, part: str) -> Path:
    """Where a part of the fits is kept, beside the splits."""
    return layout.part_path(data_cache, dataset, kernel, sampler, repetition, seed, part)


def part_key(checksum: str, kernel, sampler: Spec, lam: float | None, part: str) -> str:
    """What a part is: the part, and what it is computed from (split checksum, resolved kernel,
    sampler, λ): another part's file is never read as this one."""
    return json.dumps({"split": checksum, "kernel": kernel.spec(), "sampler": sampler.label,
                       "lam": lam,
                       "part": part}, sort_keys=True)


def save_part(path, key: str, made: dict[int, dict[str, np.ndarray]]) -> None:
    """Write one part's arrays for each fit's seed (atomically)."""
    arrays = {f"t{seed}_{name}": value for seed, part in made.items()
              for name, value in part.items()}
    write_keyed_npz(path, key, seeds=np.array(list(made), dtype=np.int64), **arrays)


def load_part(path, key: str) -> dict[int, dict[str, np.ndarray]] | str | None:
    """A part's arrays by fit seed; the reason written by a part that failed; None when there
    is no file or it was computed from something else."""
    archive = read_keyed_npz(path, key, ("seeds",))
    if not isinstance(archive, dict):
        return archive
    return {seed: {name.removeprefix(f"t{seed}_"): archive[name] for name in archive
                   if name.startswith(f"t{seed}_")}
            for seed in archive["seeds"].tolist()}


def build_part(dataset, kernel, sampler, ranks, lams, repetition: int, seed: int, data_cache,
               part: str) -> tuple[Path, str | None]:
    """Compute one part of the fits of (dataset, kernel, sampler, repetition) at every rank into
    the data cache; a part made from others reads their files. Returns the part's file and,
    when the part failed, why. A sampler that breaks the hook's contract is a ContractViolation."""
    check_dataset_spec(str(dataset))  # (an unknown dataset: a usage error, before any file)
    dataset, kernel = (Spec.parse(canonical_spec(str(dataset)), "dataset"),
                       Spec.parse(kernel, "kernel"))
    # as kbench run labels it
    sampler = Spec.parse(canonical_label(str(sampler), "sampler"), "sampler")
    instance, part = create(sampler), check_part(part, sampler)
    ranks, lam = check_ranks(ranks), sampler_lam(sampler, check_lams(lams))
    path = part_path(data_cache, dataset, kernel, sampler, repetition, seed, part)
    inputs = part_inputs(sampler, part)
    absent = [p for p in inputs
              if not part_path(data_cache, dataset, kernel, sampler, repetition, seed, p).exists()]
    if absent:  # (an input that failed has its file, which says why: this part records that)
        raise ValueError(f"part {part} is made from parts {' and '.join(absent)}, not computed in "
                         f"{data_cache}: compute them first (--part {absent[0]}).")
    seeds = {rank: fits_seed(instance, fit_seed(seed, dataset, sampler, rank, repetition))
             for rank in ranks}
    try:
        data = load_split_cached(dataset, repetition, seed, data_cache)
        X = check_features(data.X_train, "X")
        checksum = split_checksum(data)
        cached = (layout.kernel_path(data_cache, dataset, kernel, repetition, seed), checksum)
        fitted = fitted_kernel(kernel, data, cached)
        loaded = []
        for name in inputs:
            found = load_part(
                part_path(data_cache, dataset, kernel, sampler, repetition, seed, name),
                part_key(checksum, fitted, sampler, lam, name))
            if not isinstance(found, dict):
                why = found or "its file is missing, damaged, or from another split, kernel or λ"
                raise ValueError(f"part {name} has nothing to build on: {why}; build it again "
                                 f"(--part {name})")
            missing = [rank for rank, fit in seeds.items() if fit not in found]
            if missing:
                raise ValueError(f"part {name} was not built for the fits of ranks {missing}")
            loaded.append(found)
        made = {fit: part_arrays(instance.build_part(X, fitted, lam, fit, part,
                                                     [found[fit] for found in loaded]),
                                 instance.name, part) for fit in seeds.values()}
    except ContractViolation:
        raise
    # the run job meets it again and records it in its cells
    except Exception as exc:  # noqa: BLE001
        write_absent(path, describe(exc))
        return path, describe(exc)
    save_part(path, part_key(checksum, fitted, sampler, lam, part), made)
    return path, None


def fits_seed(instance, fit_seed_value: int) -> int:
    """The parts seed of the fit seeded ``fit_seed_value``
    (:meth:`kbench.plugin.Sampler.parts_seed`), checked: an integer in [0, 2⁶³)."""
    try:
        value = instance.parts_seed(np.random.default_rng(fit_seed_value))
    except NotImplementedError as exc:
        raise ContractViolation(str(exc)) from None
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or not 0 <= value < 2**63:
        raise ContractViolation(f"sampler {instance.name!r}: parts_seed returned {value!r}; a "
                                "fit's parts seed is an integer in [0, 2⁶³).")
    return int(value)


def part_arrays(made, sampler: str, part: str) -> dict[str, np.ndarray]:
    """What build_part returned, checked: a dict from names to numeric or boolean arrays (what
    a part's file holds), else a ContractViolation naming the entry."""
    if not isinstance(made, dict) or not made:
        raise ContractViolation(f"sampler {sampler!r}: build_part returned {type(made).__name__} "
                                f"for part {part!r}, not a non-empty dict of arrays.")
    arrays = {}
    for name, value in made.items():
        try:
            array = np.asarray(value) if not isinstance(value, dict) else None
        except ValueError:  # a ragged list
            array = None
        if (not isinstance(name, str) or not PART_NAME.fullmatch(name) or array is None
                or array.dtype.kind not in "biuf"):
            raise ContractViolation(f"sampler {sampler!r}: the entry {name!r} of part {part!r} is "
                                    f"{type(value).__name__}, not a numeric or boolean array under "
                                    "a plain name.")
        arrays[name] = array
    return arrays


def prebuilt_parts(job: Job, context: JobContext) -> dict[int, dict[str, np.ndarray]]:
    """The last parts the workflow's jobs left in the data cache for a job's fits (this
    split, kernel and λ only), by fit seed; empty when there are none (the fits are then built
    in one piece) or the job's sampler has no parts."""
    parts = parts_of(job.sampler)
    if not parts or context.data_cache is None:
        return {}
    path = part_path(context.data_cache, job.dataset, job.kernel, job.sampler, job.repetition,
                     job.cells[0].base_seed, parts[-1])
    found = load_part(path, part_key(context.split_checksum, context.kernel, job.sampler,
                                     job.sampler_lam, parts[-1]))
    return found if isinstance(found, dict) else {}
