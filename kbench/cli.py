"""The ``kbench`` command line."""

from __future__ import annotations

import json
import platform
import sys

import click
from rich.console import Console
from rich.table import Table

from kbench import registry

_KIND_CHOICES = ["samplers", "kernels", "tasks", "datasets"]


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="kbench")
def main() -> None:
    """Benchmark low-rank kernel approximations."""


@main.command("list")
@click.argument("kind", required=False, type=click.Choice(_KIND_CHOICES))
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def list_command(kind: str | None, as_json: bool) -> None:
    """List the registered plugins (all kinds, or one) and the plugins that failed to load."""
    reg = registry.get_registry()
    kinds = [kind] if kind else _KIND_CHOICES
    payload = {
        k: [info.to_dict() for info in registry.list_plugins(k).values()] for k in kinds
    }
    payload["broken"] = [b.to_dict() for b in reg.broken]
    if as_json:
        click.echo(json.dumps(payload, indent=2))
        return
    console = Console(width=max(120, Console().width))
    for k in kinds:
        table = Table(title=k, title_justify="left")
        for column in ("name", "source", "description"):
            table.add_column(column)
        for row in payload[k]:
            table.add_row(row["name"], f"{row['source']} {row['version']}", row["description"])
        console.print(table)
    if reg.broken:
        table = Table(title="broken plugins (not loaded)", title_justify="left", style="red")
        for column in ("entry point", "source", "error"):
            table.add_column(column)
        for b in reg.broken:
            table.add_row(b.entry_point, b.source, b.error)
        console.print(table)


@main.command("check-plugin")
@click.argument("name")
def check_plugin_command(name: str) -> None:
    """Run kbench's sampler contract checks (kbench.testing) on sampler NAME."""
    from kbench.testing import check_sampler

    try:
        info = registry.get_registry().get("sampler", name)
    except (registry.UnknownPluginError, registry.PluginError) as exc:
        raise click.UsageError(str(exc)) from None
    click.echo(f"checking sampler {name!r} from {info.source} {info.version} ({info.entry_point})")
    try:
        passed = check_sampler(name)
    except AssertionError as exc:
        click.echo(str(exc), err=True)
        sys.exit(1)
    for check in passed:
        click.echo(f"  ok  {check}")
    click.echo(f"{name}: all {len(passed)} contract checks passed")


@main.command("info")
def info_command() -> None:
    """Versions, BLAS libraries and thread counts, and plugin counts."""
    from importlib.metadata import version

    from threadpoolctl import threadpool_info

    lines = [f"python {platform.python_version()} on {platform.platform()}"]
    for package in ("kbench", "numpy", "scipy", "scikit-learn", "pandas", "pluggy"):
        lines.append(f"{package} {version(package)}")
    for pool in threadpool_info():
        lines.append(
            f"{pool['internal_api']} ({pool.get('version') or '?'}): {pool['num_threads']} threads"
        )
    reg = registry.get_registry()
    counts = ", ".join(f"{len(reg.plugins[k])} {k}s" for k in registry.KINDS)
    lines.append(f"plugins: {counts}; {len(reg.broken)} broken")
    click.echo("\n".join(lines))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
