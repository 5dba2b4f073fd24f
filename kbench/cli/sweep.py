"""``kbench run``, ``prepare`` and ``part``: the commands that compute cells, splits,
exact baselines and the parts of fits built as jobs."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import click

from kbench import registry
from kbench._files import absent_reason, check_writable_option
from kbench._parallel import blas_ceiling
from kbench.cli.params import (
    ABSOLUTE_FOLDER,
    FOLDER,
    ONE_DATASET,
    OptionsOnce,
    PartLams,
    blas_threads_option,
    bounded,
    kernel_option,
    lam_path_options,
    only,
    seed_option,
    usage,
)
from kbench.datasets import canonical_spec, check_dataset_spec
from kbench.errors import ContractViolation
from kbench.exact.baseline import DEFAULT_EXACT_MAX_N, DENSE_MAX_N
from kbench.spec import split_specs
from kbench.sweep.config import BOUNDS, lam_path


@click.command("run", cls=OptionsOnce)
@click.option("--datasets", required=True, help="Comma list, e.g. "
                                                "synthetic:two-balls:n=2000,sklearn:diabetes")
@click.option("--samplers", required=True, help="Comma list, e.g. "
                                                "uniform,squeak:qbar=20,rp-cholesky")
@click.option("--tasks", required=True,
              help="Comma list, e.g. krr,kpca:components=1;5;10. Each compares with the exact "
                   f"kernel up to its exact_max_n training rows ({DEFAULT_EXACT_MAX_N}; dense up "
                   f"to {DENSE_MAX_N}, matrix-free above: minutes past ~20000 rows), e.g. "
                   f"krr:exact_max_n={DENSE_MAX_N}.")
@click.option("--ranks", required=True, type=bounded("ranks", many=True),
              help="Comma list of integers, each once, e.g. 10,50,100")
@lam_path_options(required=True)
@click.option("--repetitions", default=3, show_default=True, type=bounded("repetitions"))
@click.option("--only-repetition", type=bounded("only_repetition"),
              help="Run repetition index R < --repetitions only (seeds as in the full sweep).")
@kernel_option()
@click.option("--jobs", default=1, show_default=True, type=bounded("jobs"),
              help="Worker processes.")
@click.option("--cell-timeout", type=bounded("cell_timeout"),
              help="Seconds per cell: a worker runs the ranks of one sampler and repetition, and "
                   "is killed when a cell is not written this long after the previous one (or its "
                   "start): that cell and the ones after it get status timeout.")
@click.option("--memory-limit", "memory_limit", type=bounded("memory_limit_mb"),
              help=f"MiB a worker may allocate beyond its start (status oom past it); at least "
                   f"{BOUNDS['memory_limit_mb'].low:g}.")
@click.option("--time-limit", type=bounded("time_limit"),
              help="Seconds for the whole run (a cluster job's limit): each worker gets its share "
                   "of the time left, and cells past it are recorded as timeout before the limit.")
@seed_option()
@blas_threads_option("BLAS/OpenMP threads per process (recorded in every row; the same count, the "
                     "same numbers).")
@click.option("--retry-failed", is_flag=True, help="Rerun cells whose file records a failure.")
@click.option("--out", required=True, type=FOLDER, help="Results directory (one file per cell).")
@click.option("--data-cache", type=FOLDER, help="Folder of prepared splits (kbench prepare).")
@click.option("--quiet", is_flag=True, help="No progress bar.")
def run_command(datasets, samplers, tasks, ranks, lams, lam_bounds, selection, repetitions,
                only_repetition, kernel,
                jobs, cell_timeout, memory_limit, time_limit, seed, blas_threads, retry_failed, out,
                data_cache,
                quiet) -> None:
    """Run a sweep of cells; finished cells are skipped, so a rerun resumes.

    Exit code 0 when every cell is ok or skipped, 1 when a cell failed, 2 on bad input.
    """
    from kbench.sweep.config import SweepConfig
    from kbench.sweep.scheduler import execute

    indices = only(repetitions, only_repetition)
    if (most := blas_ceiling(blas_threads)) < blas_threads:
        click.echo(f"kbench: --blas-threads {blas_threads}: this BLAS runs {most} at most; rows "
                   f"record {most}.", err=True)
    for broken in registry.get_registry().broken:
        error = " ".join(broken.error.split())
        click.echo(f"kbench: plugin {broken.entry_point} from '{broken.source}' is not loaded: "
                   f"{error}", err=True)
    _, summary = usage(lambda: execute(SweepConfig(
        split_specs(datasets, "--datasets", "dataset"),
        split_specs(samplers, "--samplers", "sampler"),
        split_specs(tasks, "--tasks", "task"),
        ranks, lams, repetitions=indices, kernel=kernel, out=out, jobs=jobs,
        cell_timeout=cell_timeout,
        memory_limit_mb=memory_limit, seed=seed, retry_failed=retry_failed, data_cache=data_cache,
        blas_threads=blas_threads, time_limit=time_limit, lam_bounds=lam_bounds,
        selection=selection),
        progress=not quiet))
    click.echo(str(summary))
    click.echo(f"cells in {Path(out) / 'cells'}; their page: kbench leaderboard "
               f"{shlex.quote(str(out))}")
    sys.exit(1 if summary.failed else 0)


@click.command("prepare", cls=OptionsOnce)
@click.option("--datasets", required=True, help="Comma list of dataset specs.")
@click.option("--repetitions", default=3, show_default=True, type=bounded("repetitions"))
@click.option("--only-repetition", type=bounded("only_repetition"),
              help="Prepare repetition index R only.")
@seed_option("Base seed of the splits.")
@click.option("--data-cache", required=True, type=ABSOLUTE_FOLDER, help="Folder for the splits.")
@kernel_option("Also compute the exact baseline of this kernel on each split, for the runs to "
               "share.", None,
               "--exact", "exact_kernel")
@click.option("--exact-max-n", default=DEFAULT_EXACT_MAX_N, show_default=True,
              type=bounded("exact_max_n"),
              help="With --exact: no baseline for a split of more training rows.")
@click.option("--tasks", help="With --exact: the sweep's tasks, whose λ path is extended on the "
                              "exact kernel and whose exact ridge fits a matrix-free baseline "
                              "(n_train > 5000) solves now.")
@lam_path_options(required=False)
@blas_threads_option()
def prepare_command(datasets, repetitions, only_repetition, seed, data_cache, exact_kernel,
                    exact_max_n,
                    tasks, lams, lam_bounds, selection, blas_threads) -> None:
    """Load each dataset once per repetition and cache its split (and with --exact, the exact
    baseline) for `kbench run --data-cache`."""
    from threadpoolctl import threadpool_limits

    from kbench.sweep.context import load_split_cached, prepare_exact
    from kbench.sweep.layout import split_path

    context = click.get_current_context()
    idle = [f"--{name.replace('_', '-')}"
            for name in ("exact_max_n", "tasks", "lams", "lam_bounds", "selection")
            if context.get_parameter_source(name) is click.core.ParameterSource.COMMANDLINE]
    if exact_kernel is None and idle:
        raise click.UsageError(f"{', '.join(idle)} {'matters' if len(idle) == 1 else 'matter'} "
                               "only with --exact KERNEL (the exact baseline); add it, or drop "
                               "them.")
    indices = only(repetitions, only_repetition)
    # as `run` labels them
    specs = [canonical_spec(spec)
             for spec in usage(lambda: split_specs(datasets, "--datasets", "dataset"))]
    for spec in specs:
        usage(lambda spec=spec: check_dataset_spec(spec))
    if exact_kernel is not None:
        usage(lambda: registry.create(exact_kernel, "kernel"))
    if (tasks is None) != (lams is None):
        raise click.UsageError("--tasks and --lams go together.")
    task_objects = [] if tasks is None else [
        usage(lambda t=t: registry.create(t, "task"))
        for t in usage(lambda: split_specs(tasks, "--tasks", "task"))]
    lam_values, bounds = (usage(lambda: lam_path(lams, lam_bounds)) if lams is not None
                          else ((), None))
    usage(lambda: check_writable_option("--data-cache", data_cache))  # before any split is computed
    for spec in specs:
        for repetition in indices:
            data = usage(lambda spec=spec, r=repetition:
                         load_split_cached(spec, r, seed, data_cache))
            path = split_path(data_cache, spec, repetition, seed)
            click.echo(f"{path}  ({data.n_train} train, {data.n_val} validation, "
                       f"{len(data.X_test)} test, {data.task_type})")
            if exact_kernel is not None:
                with threadpool_limits(limits=blas_threads):
                    path = usage(lambda spec=spec, r=repetition: prepare_exact(
                        spec, exact_kernel, r, seed, data_cache, exact_max_n, task_objects,
                        lam_values, bounds, selection))
                why = absent_reason(path)
                click.echo(f"{path}  (" + (f"no exact baseline: {why})" if why
                                           else f"exact baseline of {exact_kernel})"))


@click.command("part", cls=OptionsOnce)
@click.option("--dataset", required=True, type=ONE_DATASET, help="Dataset spec.")
@kernel_option("Kernel spec.", None)
@click.option("--sampler", required=True, help="A sampler whose fits are built in parts, e.g. "
                                               "squeak:shards=4.")
@click.option("--ranks", required=True, type=bounded("ranks", many=True),
              help="Comma list of the sweep's ranks (the part of each rank's fit).")
@click.option("--lams", required=True, type=PartLams(),
              help="Comma list of the sweep's λ (the fits use the smallest).")
@click.option("--only-repetition", "repetition", required=True, type=bounded("only_repetition"),
              help="Repetition index R.")
@seed_option("Base seed of the sweep.")
@click.option("--part", required=True, help="The part to build: for squeak a merge-tree node "
                                            "FIRST-STOP (0-1 a leaf, 0-4 the root of 4 shards); an "
                                            "error lists a sampler's parts.")
@click.option("--data-cache", required=True, type=ABSOLUTE_FOLDER,
              help="Folder of the splits and parts.")
@blas_threads_option()
def part_command(dataset, kernel, sampler, ranks, lams, repetition, seed, part, data_cache,
                 blas_threads) -> None:
    """Build one part of a sampler's fits into the data cache (a distributed squeak's merge-tree
    node: a leaf streams its shard, a merge joins its children), after the parts it is made
    from. `kbench run --data-cache` fits start from the last part, and equal the fits built
    in one piece."""
    from threadpoolctl import threadpool_limits

    from kbench.sweep.parts import build_part

    with threadpool_limits(limits=blas_threads):
        def build():
            try:
                return build_part(dataset, kernel, sampler, ranks, lams, repetition, seed,
                                  data_cache, part)
            # the sampler's parts hook: its author's to fix, a usage error
            except ContractViolation as exc:
                raise ValueError(str(exc)) from None
        path, failure = usage(build)
    click.echo(f"{path}  (part {part} of {sampler}" + (f"; none: {failure})" if failure else ")"))
