"""DISQUEAK's merge tree, node by node through files, against the in-process fit."""

from __future__ import annotations

import numpy as np
import pytest
from click.testing import CliRunner

import kbench
from kbench.cli import main
from kbench.samplers.squeak import SqueakSampler, children, tree_nodes
from kbench.sweep.config import SweepConfig
from kbench.sweep.disqueak import (
    build_node,
    load_node,
    merge_tree_roots,
    node_key,
    node_name,
    node_path,
    tree_shards,
)
from kbench.sweep.plan import plan
from kbench.sweep.worker import environment, prepare_context

DATA, KERNEL, LAMS, RANKS = "synthetic:friedman1:n=600", "gaussian:sigma=median", [1e-4, 1e-2], [10, 40]


def pairwise_merges(shards: int) -> list[tuple[int, int]]:
    """The reference schedule: merge neighbours level by level, an odd last node carried up."""
    level, merges = [(i, i + 1) for i in range(shards)], []
    while len(level) > 1:
        merged = [(a[0], b[1]) for a, b in zip(level[::2], level[1::2])]
        merges += merged
        level = merged + ([level[-1]] if len(level) % 2 else [])
    return merges


@pytest.mark.parametrize("shards", range(1, 10))
def test_the_tree_is_pairwise_merging_level_by_level(shards):
    nodes = tree_nodes(shards)
    assert sorted(n for n in nodes if children(n)) == sorted(pairwise_merges(shards))
    assert [n for n in nodes if not children(n)] == [(i, i + 1) for i in range(shards)]
    position = {node: i for i, node in enumerate(nodes)}
    assert all(position[c] < position[n] for n in nodes for c in children(n) or ())  # children first


def build_tree(tmp_path, sampler: str, rank_list=RANKS):
    for node in tree_nodes(tree_shards(sampler)):
        path, failure = build_node(DATA, KERNEL, sampler, rank_list, LAMS, 0, 0, tmp_path, node_name(node))
        assert failure is None and path.is_file()


@pytest.mark.parametrize("sampler", ["squeak:shards=4", "squeak:shards=5,block_size=50"])
def test_jobs_give_the_in_process_dictionary_bit_for_bit(tmp_path, sampler):
    build_tree(tmp_path, sampler)
    jobs = plan(SweepConfig([DATA], [sampler], ["krr"], RANKS, LAMS, [0], KERNEL, tmp_path / "out"))
    context = prepare_context(jobs[0].dataset, jobs[0].kernel, 0, 0, [], environment())
    X, kernel, lam = context.data.X_train, context.kernel, jobs[0].sampler_lam
    shards = tree_shards(sampler)
    root = node_path(tmp_path, DATA, KERNEL, sampler, 0, 0, (0, shards))
    for job in jobs:
        instance = kbench.registry.create(job.sampler)
        seed = SqueakSampler.tree_seed(np.random.default_rng(job.seed))
        expected = instance.tree(X, kernel, lam, seed)
        loaded = load_node(root, _key(context, job))[seed]
        for name in ("atoms", "copies", "prob", "K", "history", "kernel_evals"):
            assert np.array_equal(getattr(loaded, name), getattr(expected, name)), name
        assert len(loaded.history) >= len(tree_nodes(shards))  # every node made at least one update
        # a fit from the root: the same landmarks and features as a fit that builds the tree
        instance.prebuilt = {seed: loaded}
        from_jobs = instance.fit(X, kernel, job.rank, lam=lam, seed=job.seed)
        in_process = kbench.registry.create(job.sampler).fit(X, kernel, job.rank, lam=lam, seed=job.seed)
        assert from_jobs.info["merge_tree"] == "jobs" and in_process.info["merge_tree"] == "in-process"
        assert np.array_equal(from_jobs.landmarks, in_process.landmarks)
        assert np.array_equal(from_jobs.transform(X), in_process.transform(X))
        assert from_jobs.info["kernel_evals"] == in_process.info["kernel_evals"]


def _key(context, job):
    return node_key(context.split_checksum, context.kernel, job.sampler, job.sampler_lam)


def test_a_node_computed_from_another_split_or_lam_is_never_used(tmp_path):
    sampler = "squeak:shards=2"
    build_tree(tmp_path, sampler)
    job = plan(SweepConfig([DATA], [sampler], ["krr"], RANKS, LAMS, [0], KERNEL, tmp_path / "out"))[0]
    context = prepare_context(job.dataset, job.kernel, 0, 0, [], environment(), tmp_path)
    root = node_path(tmp_path, DATA, KERNEL, sampler, 0, 0, (0, 2))
    assert isinstance(load_node(root, _key(context, job)), dict)
    assert len(merge_tree_roots(job, context)) == len(RANKS)  # the root's dictionary of each rank's fit
    other_split = type(context)(**{**vars(context), "split_checksum": "0" * 16})
    assert load_node(root, _key(other_split, job)) is None
    job.sampler_lam = 1e-3
    assert merge_tree_roots(job, context) == {}


def test_a_failing_node_says_why_and_its_parent_too(tmp_path):
    """The root before its children's files: a ValueError naming them (no node file); a child
    without the dictionaries the root needs: the root's file says why, and the run job builds
    the tree itself."""
    with pytest.raises(ValueError, match=r"node 0-2 merges nodes 0-1 and 1-2, not computed in .*--node 0-1"):
        build_node(DATA, KERNEL, "squeak:shards=2", RANKS, LAMS, 0, 0, tmp_path, "0-2")
    assert not any(tmp_path.rglob("*node0-2*"))
    for leaf in ("0-1", "1-2"):  # leaves of a sweep with rank 10 only
        build_node(DATA, KERNEL, "squeak:shards=2", [10], LAMS, 0, 0, tmp_path, leaf)
    _, failure = build_node(DATA, KERNEL, "squeak:shards=2", [10, 40], LAMS, 0, 0, tmp_path, "0-2")
    assert failure == "ValueError: node 0-1 has no dictionary for the fits of ranks [40]"
    assert build_node(DATA, KERNEL, "squeak:shards=2", [10], LAMS, 0, 0, tmp_path, "0-2")[1] is None


@pytest.mark.parametrize(("args", "message"), [
    (["--sampler", "squeak:shards=4", "--node", "1-3"], "'1-3' is not a node of the merge tree over 4 shards"),
    (["--sampler", "squeak:shards=4", "--node", "0-4;rm"], "its nodes are 0-1, 1-2, 0-2, 2-3, 3-4, 2-4, 0-4"),
    (["--sampler", "uniform", "--node", "0-1"], "'uniform' has no merge tree"),
    (["--sampler", "squeak:shards=2", "--node", "0-1", "--ranks", "ten"], "--ranks must be an integer in [1, 10000000]"),
])
def test_the_cli_refuses_what_is_not_a_tree_node(tmp_path, args, message):
    base = {"--dataset": DATA, "--kernel": KERNEL, "--ranks": "10", "--lams": "1e-4", "--only-repetition": "0",
            "--data-cache": str(tmp_path)}
    given = dict(zip(args[::2], args[1::2]))
    result = CliRunner().invoke(main, ["disqueak", *[x for k, v in {**base, **given}.items() for x in (k, v)]])
    assert result.exit_code == 2 and message in result.output, result.output


def test_the_cli_writes_a_leaf(tmp_path):
    result = CliRunner().invoke(main, ["disqueak", "--dataset", DATA, "--kernel", KERNEL, "--sampler",
                                       "squeak:shards=2", "--ranks", "10", "--lams", "1e-4",
                                       "--only-repetition", "0", "--data-cache", str(tmp_path), "--node", "1-2"])
    assert result.exit_code == 0, result.output
    assert "(node 1-2 of squeak:shards=2)" in result.output
    assert node_path(tmp_path, DATA, KERNEL, "squeak:shards=2", 0, 0, (1, 2)).is_file()


def test_only_a_distributed_squeak_has_a_tree():
    assert [tree_shards(s) for s in ("squeak", "squeak:shards=1", "squeak:shards=3", "uniform")] == [0, 0, 3, 0]
    assert kbench.make_sampler("squeak", shards=3).prebuilt == {}
