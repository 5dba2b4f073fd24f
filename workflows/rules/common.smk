# Shared definitions: the checked config and the sweep's jobs.
import os
import re
import shlex
import sys
from pathlib import Path

from kbench._files import write_text
from kbench.datasets import data_files
from kbench.errors import ConfigError
from kbench.spec import Spec
from kbench.sweep import layout
from kbench.sweep.config import job_environment
from kbench.sweep.plan import nothing_planned
from kbench.workflow import Sweep, check_config, labelled

check_config(config)  # stops before any job, naming the offending key
os.environ.update(job_environment())  # the jobs' BLAS threads, set before their numpy loads
SWEEP = Sweep(labelled(config))  # as kbench run labels its cells
if "datasets" in config and not SWEEP.all_cells:  # (a catalogue's sweep has none left once its batches are in)
    raise ConfigError(nothing_planned(SWEEP.not_planned))
for batch in SWEEP.batches.missing:  # a batch of datasets no task or sampler takes: its file would have no cell
    if not SWEEP.batch_folders(batch):
        labels = {Spec.parse(spec, "dataset").label for spec in SWEEP.batches.specs[batch]}
        raise ConfigError(f"batch {batch}: " + nothing_planned([r for r in SWEEP.not_planned if r["dataset"] in labels]))
OUT = SWEEP.out
EXACT_MAX_N = SWEEP.exact_max_n
PAPER_OUT = Path(config["paper_out"])  # the schema's default: kbench.papers.PAPER_OUT


def spec_of(kind, wildcard):
    """The config entry behind a slug wildcard (kbench.spec.Spec.slug)."""
    return SWEEP.by_slug(kind)[wildcard]


def dataset_files(wildcards):
    """The local files a job's dataset is read from (file:<path>): an edited one reruns its
    prepare job, and so its jobs, whose cells kbench recomputes (their inputs hold its version)."""
    return data_files(spec_of("datasets", wildcards.dataset))


def _executor():
    name = workflow.executor_plugin.name if workflow.executor_plugin is not None else "local"
    return f"{name}; " + ", ".join(f"{count} {rule}" for rule, count in SWEEP.job_counts().items()) + " jobs"


# The leaderboard header: this run's command line and where its jobs ran, handed to the
# local `kbench leaderboard` job through its environment (kbench reads both variables as
# the defaults of --command and --executor).
os.environ.update(KBENCH_COMMAND=shlex.join(["snakemake", *sys.argv[1:]]))


onstart:
    os.environ.update(KBENCH_EXECUTOR=_executor())


onsuccess:
    # the last lines of a run: its batches (a catalogue's sweep), its cells by status and where
    # the leaderboard is (once every batch is in)
    if SWEEP.batches.specs:
        print(SWEEP.batches.progress())
    if "batch" in config:  # the page is not rebuilt by a run of one batch: it may be older than the batches
        print(f"kbench: a run of one batch does not rebuild {OUT / 'leaderboard.html'}; run again without "
              "batch= to rebuild it from every batch")
    elif (OUT / "all.parquet").is_file() and not SWEEP.batches.left():
        print(SWEEP.summary())
