# Shared definitions: the checked config and the sweep's jobs.
from pathlib import Path

from kbench.workflow import Sweep, check_config

check_config(config)  # stops before any job, naming the offending key
SWEEP = Sweep(config)
OUT = SWEEP.out
RESOURCES = config.get("resources", {})
TASK_SLUGS = list(SWEEP.by_slug("tasks"))
EXACT_MAX_N = SWEEP.exact_max_n()
PAPER_OUT = Path(config.get("paper_out", "results/papers"))
DEFAULT_CONFIG = Path(workflow.basedir) / "workflows" / "config" / "default.yaml"
COMMAND = "snakemake --cores all" + "".join(
    f" --configfile {Path(f).resolve().relative_to(Path(workflow.basedir).resolve())}"
    if Path(f).resolve().is_relative_to(Path(workflow.basedir).resolve()) else f" --configfile {f}"
    for f in workflow.configfiles if Path(f).resolve() != DEFAULT_CONFIG.resolve())


def spec_of(kind, wildcard):
    """The config entry behind a slug wildcard (kbench.spec.Spec.slug)."""
    return SWEEP.by_slug(kind)[wildcard]
