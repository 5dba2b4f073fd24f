"""Reproductions of the claims of kbench's source papers (results/papers/).

Each paper module (``TITLE``, ``SUMMARY``, ``FULL_SIZE``, ``FIGURES``, ``COLUMNS``, ``TASKS``,
``SAMPLERS``, ``DATASETS``, ``claims``) turns result rows (a paper config's sweep) into claims with
a measured value and a verdict computed from the rows, never typed by hand; kbench.papers.page
renders the pages. This package imports no plotting or statistics: the workflow reads it to check a
config.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from kbench.papers import alaoui2015, bach2013, squeak2016, sterge2020, yang2012
from kbench.spec import Spec

#: where a config's paper page goes by default (the workflow's schema says so too)
PAPER_OUT = "results/papers"
PAPERS = {"alaoui2015": alaoui2015, "bach2013": bach2013, "squeak2016": squeak2016,
          "sterge2020": sterge2020,
          "yang2012": yang2012}


@dataclass
class Claim:
    paper: str
    claim: str
    setting: str
    measured: str
    verdict: str  # "holds", "does not hold" or "not measured"
    reason: str = ""


def check_paper(paper: str | None, tasks: list[str] | None = None,
                samplers: list[str] | None = None) -> None:
    """A known paper (None: a config that sets where its page goes, and names none) and,
    before a sweep naming it runs, its ``tasks`` and ``samplers`` those whose cells the
    paper's claims read."""
    if paper is None:
        raise ValueError("no paper named, and paper_out says where its page goes; name one (papers "
                         f"are: {', '.join(sorted(PAPERS))}) or drop paper_out.")
    if paper not in PAPERS:
        raise ValueError(f"unknown paper {paper!r}; papers are: {', '.join(sorted(PAPERS))}.")
    for kind, listed, needed in (("task", tasks, PAPERS[paper].TASKS),
                                 ("sampler", samplers, PAPERS[paper].SAMPLERS)):
        names = {Spec.parse(spec, kind).name for spec in listed or ()}
        missing = [name for name in needed if listed is not None and name not in names]
        if missing:
            raise ValueError(f"{paper}'s claims read cells of the {kind}(s) {', '.join(missing)}, "
                             f"which '{kind}s' does not list; add them, or run its config "
                             f"(workflows/config/papers/{paper}.yaml).")


def evaluate(paper: str, frame: pd.DataFrame) -> list[Claim]:
    """The claims of ``paper`` on result rows of its sweep: rows lacking a column or a sampler
    its claims read, holding a dataset its claims are not about, or a dataset under several
    kernels (unless the paper compares kernels), are refused, never pooled."""
    check_paper(paper)
    module = PAPERS[paper]
    run_config = ("run its config: snakemake --cores all --configfile "
                  f"workflows/config/papers/{paper}.yaml")
    missing = [c for c in module.COLUMNS if c not in frame.columns]
    if missing:
        raise ValueError(f"these rows are not {paper}'s sweep: they lack the column(s) "
                         f"{', '.join(missing)} its claims read; {run_config}")
    absent = [s for s in module.SAMPLERS if s not in set(frame["sampler"])]
    if absent:
        raise ValueError(f"these rows are not {paper}'s sweep: they hold no cells of the "
                         f"sampler(s) {', '.join(absent)} its claims read; {run_config}")
    foreign = sorted({label for label in frame["dataset"].dropna().unique()
                      if Spec.parse(label, "dataset").name not in module.DATASETS})
    if foreign:
        more = f" and {len(foreign) - 1} more datasets" if len(foreign) > 1 else ""
        raise ValueError(f"these rows are not {paper}'s sweep: they hold {foreign[0]}{more}, and "
                         f"its claims are about {', '.join(module.DATASETS)}; {run_config}")
    kernels = frame.groupby("dataset")["kernel"].unique()
    pooled = kernels[kernels.map(len) > 1]
    if len(pooled) and not getattr(module, "SEVERAL_KERNELS", False):
        raise ValueError(f"these rows hold {pooled.index[0]} under {len(pooled.iloc[0])} kernels "
                         f"({', '.join(sorted(pooled.iloc[0]))}); {paper}'s claims read one kernel "
                         "per dataset and would pool them: give the rows of one sweep, or "
                         f"{run_config}")
    try:
        return [Claim(paper, *claim) for claim in module.claims(frame)]
    # rows of another sweep: say so, with the cause
    except (KeyError, IndexError, ValueError) as exc:
        raise ValueError(f"{paper}'s claims cannot be read from these rows ({type(exc).__name__}: "
                         f"{exc}); are they its sweep? {run_config}") from exc
