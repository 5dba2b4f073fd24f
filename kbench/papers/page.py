"""A paper's page (results/papers/<paper>.md, its figures and claims) and the index of every
claim (results/papers/README.md)."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

import pandas as pd

from kbench.papers import PAPERS, evaluate
from kbench.reporting.figures import figure, figure_file
from kbench.reporting.scores import sections
from kbench.reporting.selection import chooses_lam, selection_text
from kbench.reporting.styles import styles
from kbench.sweep.store import check_one_sweep


def _protocol(frame: pd.DataFrame) -> str:
    """How these rows chose λ, against the paper's protocol (the oracle λ, its config's ``selection:
    oracle``)."""
    if not chooses_lam(frame):
        return ("These tasks choose no λ (their metrics do not depend on one): the figures and "
                "claims read each cell.")
    chosen = selection_text(frame)
    # (older rows: the oracle λ)
    chosen_by_kbench = "lam_selected" in frame and frame["lam_selected"].notna().any()
    if not chosen_by_kbench or set(frame["selected_on"].dropna()) == {"test"}:
        return (f"The paper's protocol: the figures read each cell at the λ chosen {chosen}; the "
                "claims read the rows as the paper did (the table's settings say at which λ). "
                "kbench's leaderboards choose λ on validation data instead.")
    return (f"These rows chose λ {chosen}, not as the paper did (its protocol reads each cell at "
            "the λ best on the test set: its config sets `selection: oracle`); the figures and "
            "claims read them as they are.")


def _rows_read(frame: pd.DataFrame) -> str:
    """What the claims read: the rows' kernels, repetitions, ranks and sizes (the summary above
    them is the paper's config, which other rows may not follow)."""
    def span(column: str) -> str:
        values = sorted(frame[column].dropna().unique()) if column in frame else []
        return "—" if not values else f"{values[0]:g}" + (f"–{values[-1]:g}" if len(values) > 1
                                                          else "")

    return (f"The rows read below: kernel {', '.join(sorted(frame['kernel'].dropna().unique()))}; "
            f"{frame['repetition'].nunique()} repetition(s); ranks {span('rank')}; n_train "
            f"{span('n_train')}.")


def write_page(paper: str, frame: pd.DataFrame, out) -> Path:
    """results/papers/<paper>.md (+ figures, + <paper>.claims.json) from the result rows."""
    check_one_sweep(frame)
    # (an unknown paper, rows it cannot read: refused before a folder is made)
    claims = evaluate(paper, frame)
    out = Path(out)
    (out / "figures").mkdir(parents=True, exist_ok=True)
    module = PAPERS[paper]
    lines = [f"# {module.TITLE}", "", module.SUMMARY, "", _rows_read(frame), "",
             "Regenerate: `snakemake --cores all --configfile "
             f"workflows/config/papers/{paper}.yaml`. Full size (needs the network): "
             f"`workflows/config/papers/full/{paper}.yaml`, {module.FULL_SIZE}.", "",
             _protocol(frame), "",
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
             "Verdicts are computed from the result rows by kbench/papers/ (never typed by hand).",
             "",
             "| paper | claim | setting | measured | verdict |", "|---|---|---|---|---|"]
    lines += [f"| [{r['paper']}]({r['paper']}.md) | {r['claim']} | {r['setting']} | "
              f"{r['measured']} | {r['verdict']}" + (f" ({r['reason']})" if r.get("reason") else "")
              + " |" for r in rows]
    lines += ["", "## Full-size versions (OpenML: need the network, not run here)", "",
              "The same sweeps on the papers' real data, configured in "
              "workflows/config/papers/full/ (`snakemake --cores all --configfile "
              "workflows/config/papers/full/<paper>.yaml`; results in "
              "results/papers/full/<paper>/).", "", "| paper | data |", "|---|---|"]
    lines += [f"| {paper} | {module.FULL_SIZE} |" for paper, module in PAPERS.items()]
    index = out / "README.md"
    index.write_text("\n".join(lines) + "\n")
    return index
