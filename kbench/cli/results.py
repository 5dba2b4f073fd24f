"""``kbench aggregate``, ``leaderboard`` and ``papers``: the commands that read result files."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import click

from kbench.cli.params import (
    FOLDER,
    PATH,
    OptionsOnce,
    page_folder,
    sweep_option,
    usage,
)


@click.command("aggregate", cls=OptionsOnce)
@click.argument("paths", nargs=-1, type=PATH)
@click.option("--out", required=True, type=PATH, help="The merged parquet file.")
@sweep_option
@click.option("--files-from", type=click.File(encoding="utf-8"),
              help="A file naming a path per line (blank ends and '#' lines skipped), read with "
                   "PATHS: the workflow lists its config's cells so, past a command line's size.")
def aggregate_command(paths, out, sweep, files_from) -> None:
    """Merge results directories (or folders below one, cell files or aggregated files) into
    one parquet file (newest row of each identity)."""
    from kbench.sweep.aggregate import check_merged_out
    from kbench.sweep.store import read_results, write_frame

    listed = [line.strip() for line in files_from or () if line.strip()
              and not line.strip().startswith("#")]
    if not (paths := [*paths, *(PATH.convert(line, None, None) for line in listed)]):
        raise click.UsageError("--files-from names no path (blank lines and '#' lines are "
                               "skipped): name the results to merge there, or as PATHS."
                               if files_from else
                               "name the results to merge: PATHS, or --files-from FILE.")
    usage(lambda: check_merged_out(Path(out), paths))
    frame = usage(lambda: read_results(paths, sweep))
    usage(lambda: check_merged_out(Path(out), paths, frame))  # (one sweep, none of out's lost)
    usage(lambda: write_frame(frame, Path(out)))
    replaced = frame.attrs.get("replaced")
    click.echo(f"wrote {out}: {len(frame)} row{'s' * (len(frame) != 1)}" + (
        f" ({replaced} older rows of the same cells left out: the newest row of each wins)"
        if replaced else ""))


@click.command("leaderboard", cls=OptionsOnce)
@click.argument("directory", type=PATH)
@click.option("--out", type=FOLDER, help="Where to write (default: DIRECTORY).")
@click.option("--command", "command_line", envvar="KBENCH_COMMAND",
              help="The command that produced the results (page header; default: $KBENCH_COMMAND, "
                   "which the workflow sets).")
@click.option("--executor", envvar="KBENCH_EXECUTOR",
              help="Where the jobs ran, e.g. 'slurm; 96 run jobs' (page header; default: "
                   "$KBENCH_EXECUTOR).")
@click.option("--focus", metavar="SAMPLER", help="A sampler label to put against every other "
                                                 "(paired win rates per dataset and rank): the "
                                                 "view a plugin author looks at first.")
@sweep_option
def leaderboard_command(directory, out, command_line, executor, focus, sweep) -> None:
    """Leaderboard of a results directory (or all.parquet): leaderboard.md with figures/*.png,
    and leaderboard.html, an interactive page that opens offline."""
    from kbench.reporting.build import build
    from kbench.sweep.layout import unlisted_cells
    from kbench.sweep.store import read_results

    if focus is not None and not focus.strip():
        raise click.BadParameter("is empty: name a sampler label of the results, or leave --focus "
                                 "out.",
                                 param_hint="'--focus'")
    target = page_folder(directory, out)
    frame = usage(lambda: read_results(directory, sweep))
    unlisted = unlisted_cells(directory)
    if unlisted:  # a workflow's folder: its page ranks the cells its config lists
        click.echo(f"kbench: warning: {len(unlisted)} cell file(s) under "
                   f"{Path(directory) / 'cells'} are not in the workflow's cell list (e.g. "
                   f"{unlisted[0].relative_to(directory)}): cells its config no longer names. This "
                   "page ranks them too, in place of the workflow's; 'kbench leaderboard "
                   f"{Path(directory) / 'all.parquet'}' ranks the config's cells only.", err=True)
    command_line = command_line or shlex.join(["kbench", *sys.argv[1:]])
    page = usage(lambda: build(frame, target, command_line, executor, focus))
    for verdict in page.verdicts:
        click.echo(verdict)
    click.echo("wrote " + ", ".join(str(p) for p in page.files.values())
               + f" (figures in {Path(target) / 'figures'})")


@click.command("papers", cls=OptionsOnce)
@click.argument("results", type=PATH)
@click.option("--paper", required=True, help="Paper name (kbench/papers/), e.g. yang2012.")
@click.option("--out", default="results/papers", show_default=True, type=FOLDER)
@sweep_option
def papers_command(results, paper, out, sweep) -> None:
    """Check a paper's claims on a results directory or all.parquet; write its page."""
    from kbench.papers.page import write_page
    from kbench.sweep.store import read_results

    frame = usage(lambda: read_results(results, sweep))
    page = usage(lambda: write_page(paper, frame, out))
    click.echo(f"wrote {page}")
