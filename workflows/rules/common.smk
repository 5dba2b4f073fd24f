# Shared definitions: the checked config and the sweep's jobs.
import shlex
import sys
from pathlib import Path

from kbench.workflow import Sweep, check_config

check_config(config)  # stops before any job, naming the offending key
SWEEP = Sweep(config)
OUT = SWEEP.out
TASK_SLUGS = list(SWEEP.by_slug("tasks"))
EXACT_MAX_N = SWEEP.exact_max_n
PAPER_OUT = Path(config.get("paper_out", "results/papers"))


def spec_of(kind, wildcard):
    """The config entry behind a slug wildcard (kbench.spec.Spec.slug)."""
    return SWEEP.by_slug(kind)[wildcard]


class _Later:
    """Text computed when a shell command is formatted, not when the Snakefile is read."""

    def __init__(self, make):
        self.make = make

    def __str__(self):
        return self.make()


def _executor():
    name = workflow.executor_plugin.name if workflow.executor_plugin is not None else "local"
    return f"{name}; " + ", ".join(f"{count} {rule}" for rule, count in SWEEP.job_counts().items()) + " jobs"


# The leaderboard header: this run's command line and where its jobs ran. Globals of the
# shell command rather than params, so a rerun with other flags does not rerun the
# leaderboard; formatted by the main Snakemake process (the report rules are local rules).
COMMAND = shlex.join(["snakemake", *sys.argv[1:]])
EXECUTOR = _Later(_executor)
