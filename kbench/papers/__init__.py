"""Reproductions of the claims of kbench's source papers (results/papers/).

Each paper module (``TITLE``, ``SUMMARY``, ``FULL_SIZE``, ``FIGURES``, ``COLUMNS``, ``claims``)
turns result rows (a paper config's sweep) into claims with a measured
value and a verdict computed from the rows, never typed by hand; ``write_page`` renders
one page per paper (the leaderboard figures of the module's ``FIGURES`` tasks, and its own
``figures(frame, directory)`` when it has them) and ``write_index`` the table of every claim.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

import pandas as pd

from kbench.papers import alaoui2015, bach2013, squeak2016, sterge2020, yang2012
from kbench.reporting.figures import figure, figure_file
from kbench.reporting.scores import sections, selection_text
from kbench.reporting.styles import styles
from kbench.sweep.store import check_one_sweep

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


def evaluate(paper: str, frame: pd.DataFrame) -> list[Claim]:
    if paper not in PAPERS:
        raise ValueError(f"unknown paper {paper!r}; papers are: {', '.join(sorted(PAPERS))}.")
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


def write_page(paper: str, frame: pd.DataFrame, out) -> Path:
    """results/papers/<paper>.md (+ figures, + <paper>.claims.json) from the result rows."""
    check_one_sweep(frame)
    out = Path(out)
    (out / "figures").mkdir(parents=True, exist_ok=True)
    claims = evaluate(paper, frame)
    module = PAPERS[paper]
    lines = [f"# {module.TITLE}", "", module.SUMMARY, "",
             f"Regenerate: `snakemake --cores all --configfile workflows/config/papers/{paper}.yaml`. "
             f"Full size (needs the network): `workflows/config/papers/full/{paper}.yaml`, "
             f"{module.FULL_SIZE}.", "",
             f"The paper's protocol: the figures read each cell at the λ chosen {selection_text(frame)}; "
             "the claims read the rows as the paper did (the table's settings say at which λ). kbench's "
             "leaderboards choose λ on validation data instead.", "",
             "| claim | setting | measured | verdict |", "|---|---|---|---|"]
    for c in claims:
        lines.append(f"| {c.claim} | {c.setting} | {c.measured} | **{c.verdict}**"
                     + (f" ({c.reason})" if c.reason else "") + " |")
    lines.append("")
    if hasattr(module, "figures"):  # the paper's own figures
        for caption, name in module.figures(frame, out / "figures"):
            lines += [f"![{caption}](figures/{name})", ""]
    look = styles(frame["sampler_label"].dropna().unique())
    for section in sections(frame)[0]:
        if section.task.name not in module.FIGURES:
            continue
        for dataset in sorted(section.scored["dataset"].unique()):
            name = f"{paper}_{figure_file(section.label, dataset)}"
            figure(section.scored, section.metric, section.smaller, section.label, dataset,
                   out / "figures" / name, look)
            lines += [f"![{section.label} on {dataset}](figures/{name})", ""]
    page = out / f"{paper}.md"
    page.write_text("\n".join(lines))
    (out / f"{paper}.claims.json").write_text(json.dumps([asdict(c) for c in claims], indent=2))
    write_index(out)
    return page


def write_index(out) -> Path:
    """results/papers/README.md: one line per claim of every paper page present."""
    out = Path(out)
    rows = []
    for path in sorted(out.glob("*.claims.json")):
        rows += json.loads(path.read_text())
    lines = ["# Paper reproductions", "",
             "Verdicts are computed from the result rows by kbench/papers/ (never typed by hand).", "",
             "| paper | claim | setting | measured | verdict |", "|---|---|---|---|---|"]
    lines += [f"| [{r['paper']}]({r['paper']}.md) | {r['claim']} | {r['setting']} | {r['measured']} | "
              f"{r['verdict']}" + (f" ({r['reason']})" if r.get("reason") else "") + " |" for r in rows]
    lines += ["", "## Full-size versions (OpenML: need the network, not run here)", "",
              "The same sweeps on the papers' real data, configured in workflows/config/papers/full/ "
              "(`snakemake --cores all --configfile workflows/config/papers/full/<paper>.yaml`; results "
              "in results/papers/full/<paper>/).", "", "| paper | data |", "|---|---|"]
    lines += [f"| {paper} | {module.FULL_SIZE} |" for paper, module in PAPERS.items()]
    index = out / "README.md"
    index.write_text("\n".join(lines) + "\n")
    return index
