"""``kbench list``: the registered plugins, their declared parameters (as a table, JSON or
the markdown of docs/parameters.md), and the plugins that failed to load."""

from __future__ import annotations

import contextlib
import json
import sys

import click
from rich.console import Console
from rich.table import Table

from kbench import registry
from kbench.cli.params import OptionsOnce, plain
from kbench.datasets import SPLIT_OPTIONS, load_dataset
from kbench.parameters import declarations
from kbench.spec import format_value

KINDS = ["samplers", "kernels", "tasks", "datasets"]
#: the per-dataset parameters listed for a provider that lists at most this many datasets
_MOST_LISTED = 50


def plugin_rows(kinds: list[str]) -> dict[str, list[dict]]:
    """Kind → each plugin's ``to_dict``, with a provider's per-dataset parameters when they
    differ from its options (the synthetic generators')."""
    payload = {k: [info.to_dict() for info in registry.list_plugins(k.rstrip("s")).values()]
               for k in kinds}
    for row in payload.get("datasets", []):
        provider = registry.get_registry().get("dataset", row["name"]).obj()
        names = provider.names()
        if len(names) <= _MOST_LISTED:
            each = {name: declarations(provider.parameters(name), provider.load) for name in names}
            row["datasets"] = {name: declared for name, declared in each.items()
                               if declared != row["parameters"]}
    return payload


def _cell(text) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _table(declared: dict[str, dict]) -> list[str]:
    lines = ["| parameter | allowed | default | meaning |", "|---|---|---|---|"]
    for name, d in declared.items():
        default = f"`{format_value(d['default'])}`" if "default" in d else ""
        lines.append(f"| `{name}` | {_cell(d['allowed'])} | {_cell(default)} | "
                     f"{_cell(d['meaning'])} |")
    return lines


def parameters_markdown(payload: dict[str, list[dict]]) -> str:
    """The markdown of docs/parameters.md: every plugin's declared parameters."""
    lines = ["# Plugin parameters", "",
             "Every parameter a spec can give a built-in plugin, as the plugin declares it "
             "([plugins.md](plugins.md#parameters)). Written by `kbench list --markdown`, which "
             "lists your plugins' too; a test keeps this page in step.",
             "A value outside what *allowed* says is refused before any work, with one line naming "
             "the plugin and the parameter."]
    for kind, rows in payload.items():
        lines += ["", f"## {kind.capitalize()}"]
        if kind == "datasets":
            lines += ["", "Every dataset spec takes its split's options:", "", *_table(
                declarations(SPLIT_OPTIONS, load_dataset))]
        for row in rows:
            lines += ["", f"### {row['name']}", "", row["description"]]
            if row["parameters"]:
                lines += ["", *_table(row["parameters"])]
            for name, declared in row.get("datasets", {}).items():
                lines += ["", f"`{row['name']}:{name}`:", "", *_table(declared)]
            if not row["parameters"] and not row.get("datasets"):
                lines += ["", "No parameters."]
    return "\n".join(lines) + "\n"


@click.command("list", cls=OptionsOnce)
@click.argument("kind", required=False, type=click.Choice(KINDS))
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output, with each "
                                                      "parameter's declaration.")
@click.option("--markdown", "as_markdown", is_flag=True,
              help="Every plugin's parameters as markdown (docs/parameters.md).")
def list_command(kind: str | None, as_json: bool, as_markdown: bool) -> None:
    """List the registered plugins (all kinds, or one) with their parameters and, with the
    reason, the plugins that failed to load or whose name two packages claim (a listing:
    exit code 0 all the same)."""
    if as_json and as_markdown:
        raise click.UsageError("--json and --markdown are two formats of one listing: pick one.")
    kinds = [kind] if kind else KINDS
    # a plugin that prints while it loads writes to stderr: the formats a program reads stay whole
    with (contextlib.redirect_stdout(sys.stderr) if as_json or as_markdown
          else contextlib.nullcontext()):
        reg = registry.get_registry()
        payload = plugin_rows(kinds)
    if as_markdown:
        click.echo(parameters_markdown(payload), nl=False)
        return
    if as_json:
        click.echo(json.dumps({**payload, "broken": [b.to_dict() for b in reg.broken]}, indent=2,
                              default=str))
        return
    console = Console(width=max(120, Console().width))
    for k in kinds:
        table = Table("name", "source", "parameters", "description", title=k, title_justify="left")
        for row in payload[k]:
            names = [*row["parameters"],
                     *dict.fromkeys(p for d in row.get("datasets", {}).values() for p in d)]
            table.add_row(plain(row["name"]), plain(f"{row['source']} {row['version']}"),
                          plain(", ".join(names)),
                          plain(row["description"]))  # a docstring's "[2017]" is text, not markup
        console.print(table)
    if reg.broken:
        table = Table("entry point", "source", "error", title="broken plugins (not loaded)",
                      title_justify="left",
                      style="red")
        for b in reg.broken:
            table.add_row(plain(b.entry_point), plain(b.source), plain(b.error))
        console.print(table)
