"""Reproductions of the claims of kbench's source papers (results/papers/).

Each paper module (``TITLE``, ``SUMMARY``, ``FULL_SIZE``, ``FIGURES``, ``COLUMNS``, ``TASKS``, ``claims``)
turns result rows (a paper config's sweep) into claims with a measured
value and a verdict computed from the rows, never typed by hand; kbench.papers.page renders
the pages. This package imports no plotting or statistics: the workflow reads it to check
a config.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from kbench.papers import alaoui2015, bach2013, squeak2016, sterge2020, yang2012
from kbench.spec import Spec

#: where a config's paper page goes by default (the workflow's schema says so too)
PAPER_OUT = "results/papers"
PAPERS = {"alaoui2015": alaoui2015, "bach2013": bach2013, "squeak2016": squeak2016, "sterge2020": sterge2020,
          "yang2012": yang2012}


@dataclass
class Claim:
    paper: str
    claim: str
    setting: str
    measured: str
    verdict: str  # "holds", "does not hold" or "not measured"
    reason: str = ""


def check_paper(paper: str | None, tasks: list[str] | None = None) -> None:
    """A known paper (None: a config that sets where its page goes, and names none) and,
    before a sweep naming it runs, its ``tasks`` those whose cells hold the columns the
    paper's claims read."""
    if paper is None:
        raise ValueError(f"no paper named, and paper_out says where its page goes; name one (papers are: "
                         f"{', '.join(sorted(PAPERS))}) or drop paper_out.")
    if paper not in PAPERS:
        raise ValueError(f"unknown paper {paper!r}; papers are: {', '.join(sorted(PAPERS))}.")
    names = {Spec.parse(task, "task").name for task in tasks or ()}
    missing = [task for task in PAPERS[paper].TASKS if tasks is not None and task not in names]
    if missing:
        raise ValueError(f"{paper}'s claims read cells of the task(s) {', '.join(missing)}, which 'tasks' does not "
                         f"list; add them, or run its config (workflows/config/papers/{paper}.yaml).")


def evaluate(paper: str, frame: pd.DataFrame) -> list[Claim]:
    check_paper(paper)
    run_config = f"run its config: snakemake --cores all --configfile workflows/config/papers/{paper}.yaml"
    missing = [c for c in PAPERS[paper].COLUMNS if c not in frame.columns]
    if missing:
        raise ValueError(f"these rows are not {paper}'s sweep: they lack the column(s) "
                         f"{', '.join(missing)} its claims read; {run_config}")
    try:
        return [Claim(paper, *claim) for claim in PAPERS[paper].claims(frame)]
    except (KeyError, IndexError, ValueError) as exc:  # rows of another sweep: say so, with the cause
        raise ValueError(f"{paper}'s claims cannot be read from these rows ({type(exc).__name__}: "
                         f"{exc}); are they its sweep? {run_config}") from exc
