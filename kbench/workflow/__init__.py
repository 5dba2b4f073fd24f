"""Helpers of the Snakemake workflow (Snakefile, workflows/rules/*.smk): the config's values
checked against the plugin registry (:mod:`kbench.workflow.checks`), its jobs and their
files (:mod:`kbench.workflow.jobs`) and what the jobs ask the scheduler for
(:mod:`kbench.workflow.resources`)."""

from kbench.sweep.config import DEFAULT_RESOURCES
from kbench.workflow.checks import check_config, labelled
from kbench.workflow.jobs import RunRule, Sweep
from kbench.workflow.resources import RUNTIME_REFERENCE_N

__all__ = ["DEFAULT_RESOURCES", "RUNTIME_REFERENCE_N", "RunRule", "Sweep", "check_config",
           "labelled"]
