"""DISQUEAK's merge tree as separate jobs (Calandriello, Lazaric & Valko 2016, Alg. 2).

The workflow runs one job per node of the tree of a distributed ``squeak`` (``shards`` > 1,
:func:`kbench.samplers.squeak.tree_nodes`): a leaf streams its shard, a merge node joins
its two children's dictionaries. The run job's fits then start from the root. Every node
draws from a generator derived from the fit's seed and the node, so the root equals the
dictionary the in-process fit builds, bit for bit.

A node file holds the node's dictionary for every rank of the sweep (each rank's fit has
its own seed, so its own tree) and the key of what it was computed from (split checksum,
resolved kernel, sampler, λ): a file computed from anything else is never used. A node that
fails writes why instead, and so do its parents; the run job then builds the tree itself and
records the failure in its cells, like any fit.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np

from kbench._files import read_keyed_npz, write_absent, write_keyed_npz
from kbench._validation import check_features
from kbench.errors import describe
from kbench.registry import create
from kbench.samplers.squeak import Dictionary, Node, SqueakSampler, children, tree_nodes
from kbench.spec import Spec
from kbench.sweep import layout
from kbench.sweep.config import check_lams, check_ranks
from kbench.sweep.plan import Job, fit_seed, sampler_lam
from kbench.sweep.worker import JobContext, fitted_kernel, load_split_cached, split_checksum

_NODE = re.compile(r"([0-9]+)-([0-9]+)")  # ASCII digits: \d takes ０ too


def tree_shards(sampler) -> int:
    """The number of leaves of a sampler spec's merge tree: ``shards`` of a distributed
    ``squeak``, 0 for every other sampler (no tree to run as jobs)."""
    instance = create(sampler, "sampler")
    return instance.shards if isinstance(instance, SqueakSampler) and instance.shards > 1 else 0


def node_name(node: Node) -> str:
    return f"{node[0]}-{node[1]}"


def parse_node(text: str, shards: int) -> Node:
    """``"first-stop"`` → the node of a tree over ``shards`` leaves covering those shards."""
    match = _NODE.fullmatch(text)
    node = (int(match[1]), int(match[2])) if match else None
    if node not in tree_nodes(shards):
        raise ValueError(f"{text!r} is not a node of the merge tree over {shards} shards; its nodes are "
                         f"{', '.join(map(node_name, tree_nodes(shards)))}.")
    return node


def node_path(data_cache, dataset, kernel, sampler, repetition: int, seed: int, node: Node) -> Path:
    """Where a node's dictionaries are cached, beside the splits."""
    return layout.node_path(data_cache, dataset, kernel, sampler, repetition, seed, node_name(node))


def node_key(checksum: str, kernel, sampler: Spec, lam: float) -> str:
    """What a node's dictionaries are computed from: split checksum, resolved kernel, sampler, λ."""
    return json.dumps({"split": checksum, "kernel": kernel.spec(), "sampler": sampler.label, "lam": lam},
                      sort_keys=True)


def save_node(path, key: str, dictionaries: dict[int, Dictionary]) -> None:
    """Write one node's dictionary per tree seed (atomically)."""
    arrays = {}
    for seed, d in dictionaries.items():
        arrays.update({f"t{seed}_atoms": d.atoms, f"t{seed}_copies": d.copies, f"t{seed}_prob": d.prob,
                       f"t{seed}_K": d.K, f"t{seed}_history": np.array(d.history, dtype=np.int64).reshape(-1, 3),
                       f"t{seed}_cost": np.array([d.seconds, d.span_s, d.kernel_evals], dtype=float)})
    write_keyed_npz(path, key, seeds=np.array(list(dictionaries), dtype=np.int64), **arrays)


def load_node(path, key: str) -> dict[int, Dictionary] | str | None:
    """The dictionaries saved at ``path`` for ``key`` by tree seed; the reason written by a
    node that failed; None when there is no file or it was computed from something else."""
    archive = read_keyed_npz(path, key, ("seeds",))
    if not isinstance(archive, dict):
        return archive
    loaded = {}
    for seed in archive["seeds"].tolist():
        seconds, span, evals = archive[f"t{seed}_cost"]
        loaded[seed] = Dictionary(archive[f"t{seed}_atoms"], archive[f"t{seed}_copies"],
                                  archive[f"t{seed}_prob"], archive[f"t{seed}_K"],
                                  [tuple(step) for step in archive[f"t{seed}_history"].tolist()],
                                  float(seconds), float(span), int(evals))
    return loaded


def build_node(dataset, kernel, sampler, ranks, lams, repetition: int, seed: int, data_cache,
               node: str) -> tuple[Path, str | None]:
    """Compute one node of a distributed squeak's merge tree for every rank's fit of
    (dataset, kernel, sampler, repetition) into the data cache; a merge node reads its
    children's files. Returns the node's file and, when the node failed, why."""
    dataset, kernel, sampler = (Spec.parse(dataset, "dataset"), Spec.parse(kernel, "kernel"),
                                Spec.parse(sampler, "sampler"))
    shards = tree_shards(sampler)
    if not shards:
        raise ValueError(f"sampler {sampler.label!r} has no merge tree: DISQUEAK jobs need squeak "
                         "with shards > 1.")
    node = parse_node(node, shards)
    ranks, lam = check_ranks(ranks), sampler_lam(sampler, check_lams(lams))
    path = node_path(data_cache, dataset, kernel, sampler, repetition, seed, node)
    absent = [node_name(child) for child in children(node) or ()
              if not node_path(data_cache, dataset, kernel, sampler, repetition, seed, child).exists()]
    if absent:  # (a child that failed has its file, which says why: this node records that)
        raise ValueError(f"node {node_name(node)} merges nodes {' and '.join(absent)}, not computed in {data_cache}: "
                         f"compute them first (--node {absent[0]}).")
    instance = create(sampler)
    trees = {rank: SqueakSampler.tree_seed(np.random.default_rng(fit_seed(seed, dataset, sampler, rank, repetition)))
             for rank in ranks}
    try:
        data = load_split_cached(dataset, repetition, seed, data_cache)
        X = check_features(data.X_train, "X")
        checksum = split_checksum(data)
        fitted = fitted_kernel(kernel, data, (layout.kernel_path(data_cache, dataset, kernel, repetition, seed), checksum))
        key = node_key(checksum, fitted, sampler, lam)
        parts = []
        for child in children(node) or ():
            loaded = load_node(node_path(data_cache, dataset, kernel, sampler, repetition, seed, child), key)
            if not isinstance(loaded, dict):
                raise ValueError(f"node {node_name(child)} has no dictionaries: "
                                 f"{loaded or 'no file computed from this split, kernel and λ'}")
            missing = [rank for rank, tree in trees.items() if tree not in loaded]
            if missing:
                raise ValueError(f"node {node_name(child)} has no dictionary for the fits of ranks {missing}")
            parts.append(loaded)
        made = {tree: instance.node(X, fitted, lam, tree, node, tuple(part[tree] for part in parts) or None)
                for tree in trees.values()}
    except Exception as exc:  # noqa: BLE001 - the run job meets it again and records it in its cells
        write_absent(path, describe(exc))
        return path, describe(exc)
    save_node(path, key, made)
    return path, None


def merge_tree_roots(job: Job, context: JobContext) -> dict[int, Dictionary]:
    """The root dictionaries the workflow's DISQUEAK jobs left in the data cache for a
    distributed squeak's job (this split, kernel and λ only), by tree seed; empty when there
    are none (the fit then builds its tree) or the job's sampler has no merge tree."""
    shards = tree_shards(job.sampler)
    if not shards or context.data_cache is None:
        return {}
    path = node_path(context.data_cache, job.dataset, job.kernel, job.sampler, job.repetition,
                     job.cells[0].base_seed, (0, shards))
    roots = load_node(path, node_key(context.split_checksum, context.kernel, job.sampler, job.sampler_lam))
    return roots if isinstance(roots, dict) else {}
