# kbench main workflow: datasets × samplers × tasks × ranks × λ × repetitions.
#
#   snakemake --cores all                                   # the default sweep (README)
#   snakemake --cores all --configfile my.yaml              # another sweep (replaces the default)
#   snakemake --workflow-profile profiles/slurm             # the same on a SLURM cluster
import sys
from pathlib import Path

from snakemake.utils import min_version, validate

from kbench.sweep.document import check_document

min_version("9.0")

# --configfile replaces the default config instead of merging into it; --config KEY=VALUE
# overrides a key of whichever config is read (snakemake --cores all --config out=elsewhere)
if not workflow.configfiles:
    configfile: Path(workflow.basedir) / "workflows" / "config" / "default.yaml"

SCHEMA = Path(workflow.basedir) / "workflows" / "schemas" / "config.schema.yaml"
# the files without a repeated key, the config bounded in size and depth, then its structure,
# each in one line, before anything walks it; Snakemake's own check then fills the defaults
check_document(config, SCHEMA, files=workflow.configfiles, argv=sys.argv)
validate(config, SCHEMA)

include: "workflows/rules/common.smk"
include: "workflows/rules/sweep.smk"
include: "workflows/rules/report.smk"


rule all:
    input:
        SWEEP.job_targets,  # cells of each run job (Sweep.targets): a deleted cell file reruns its job
        [SWEEP.batches.file(b) for b in SWEEP.batches.missing],  # likewise (a catalogue's sweep)
        # the page, unless the run computes one batch (--config batch=...)
        [OUT / "leaderboard.md", OUT / "leaderboard.html", OUT / "all.parquet"] if "batch" not in config else [],
        [PAPER_OUT / f"{config['paper']}.md"] if "paper" in config else [],
    default_target: True
