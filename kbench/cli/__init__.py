"""The ``kbench`` command line: one module per group of commands (``listing``, ``sweep``,
``results``, ``inspection``); their option types and checks are kbench.cli.params."""

from __future__ import annotations

import sys

import click

from kbench.cli import inspection, listing, results, sweep
from kbench.cli.params import Commands


@click.group(cls=Commands, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="kbench")
def main() -> None:
    """Benchmark low-rank kernel approximations."""


for command in (listing.list_command, sweep.run_command, sweep.prepare_command, sweep.part_command,
                results.aggregate_command, results.leaderboard_command, results.papers_command,
                inspection.check_plugin_command, inspection.describe_command,
                inspection.advise_command,
                inspection.info_command):
    main.add_command(command)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
