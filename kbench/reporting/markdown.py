"""The markdown leaderboard: its header (command, versions, conventions) and tables."""

from __future__ import annotations

import platform
import re
from datetime import datetime, timezone

import pandas as pd

from kbench.errors import one_line
from kbench.reporting.advice import REGIME_TEXT, WINNER_TEXT, regimes_title, split_regimes
from kbench.reporting.focus import FOCUS_TEXT
from kbench.reporting.regimes import BY_REGIME_TEXT
from kbench.reporting.scores import (
    COST_TEXT,
    FAILURES_TEXT,
    NOT_OK_TEXT,
    NOT_PLANNED_TEXT,
    UNINFORMATIVE_TEXT,
)
from kbench.reporting.selection import chooses_lam, selection_text
from kbench.reporting.standing import MIN_REPETITIONS, MISSING, STANDING_TEXT, Standing
from kbench.sweep.store import CELL_KEYS

#: more kbench commits than this are counted, not listed, in a page's header
MAX_COMMITS = 3


def versions(frame: pd.DataFrame) -> str:
    """Every version the rows were computed with: kbench's (and its commit), numpy's, scipy's,
    scikit-learn's and each plugin package's, several values of one joined by " / "."""
    found = {}
    for package, column in (("kbench", "kbench_version"), ("numpy", "numpy_version"), ("scipy", "scipy_version"),
                            ("scikit-learn", "sklearn_version")):
        if column in frame:
            found[package] = set(frame[column].dropna().astype(str))
    if frame.get("kbench_commit") is not None and frame["kbench_commit"].notna().any():
        pairs = frame[["kbench_version", "kbench_commit"]].dropna().drop_duplicates()
        if len(pairs) <= MAX_COMMITS:
            found["kbench"] = {f"{v} (commit {c})" for v, c in pairs.itertuples(index=False)}
        else:  # a board computed in batches over many commits: each row records its own
            found["kbench"] = {f"{v} ({len(c)} commits, {c.str.endswith('+dirty').sum()} with local changes: each "
                               "row records its own)" for v, c in pairs.groupby("kbench_version")["kbench_commit"]}
    for kind in ("dataset", "kernel", "sampler", "task"):
        if f"{kind}_package" in frame:
            pairs = frame[[f"{kind}_package", f"{kind}_package_version"]].dropna().drop_duplicates()
            for package, version in pairs.itertuples(index=False):
                if package != "kbench":
                    found.setdefault(package, set()).add(str(version))
    return ", ".join(f"{package} {' / '.join(sorted(v))}" for package, v in found.items() if v)


def code_span(text: str) -> str:
    """``text`` on one line as a markdown code span (no markup inside it is read): fenced
    by one backtick more than its longest run of them (CommonMark 6.1)."""
    text = one_line(text)
    fence = "`" * (1 + max((len(run) for run in re.findall("`+", text)), default=0))
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def header(frame: pd.DataFrame, command: str | None, executor: str | None = None) -> list[str]:
    first = frame.iloc[0]
    cells = frame.drop_duplicates(CELL_KEYS)
    sweep = f" (sweep {first['sweep']})" if pd.notna(first.get("sweep")) else ""
    return [
        f"Generated {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC from {len(frame)} rows ({len(cells)} cells){sweep}.",
        f"Command: {code_span(command or 'kbench leaderboard')}"
        + (f" (executor: {code_span(executor)})." if executor else "."),
        f"Versions: {versions(frame)}; BLAS threads {first.get('blas_threads')}; host {first.get('host')} "
        f"({platform.machine()}, Python {platform.python_version()}).",
        "A row is one sampler configuration, a section one task configuration. Metric of a cell: its test "
        + (f"value at the λ it chose {selection_text(frame)}; the exact kernel's at the λ it chose the same way; "
           if chooses_lam(frame) else "value (these tasks choose no λ: their metrics do not depend on one); ")
        + "KPCA at one number of components per rank for every sampler (the largest of the task's list not above "
        "the rank). Rankings: datasets are the unit (a sampler's standing on a dataset averages its places over "
        "the dataset's ranks), differences inside the task's region of practical equivalence are ties, failures "
        "are last, and datasets where the exact kernel does not beat a trivial predictor are left out (the text "
        "under each table says how).",
    ]


def format_ranking(result: Standing, unscored: dict[str, str]) -> tuple[pd.DataFrame, list[str]]:
    """A section's table for the page, with a row per sampler that has no headline value, and
    its footnotes: how the table is computed, and which samplers are not ranked and why."""
    table = result.table.copy()
    for sampler, why in unscored.items():
        table.loc[sampler] = MISSING
        table.loc[sampler, "note"] = why
    for sampler, count in result.left_out.items():
        if sampler in table.index:
            table.loc[sampler, "note"] = f"cells in {count} of {result.blocks} blocks: not ranked"
    if table.empty:  # every dataset uninformative: nothing to rank
        return table, []
    friedman = ("" if result.friedman_p is None else
                f" Friedman's test over the {result.datasets} datasets' standings: p = {result.friedman_p:.2g}.")
    footnotes = [f"Standings over {result.datasets} dataset(s), from {result.ranked} of {result.blocks} (dataset, "
                 f"rank) blocks.{friedman} {STANDING_TEXT}"]
    if "budgets won" not in table:
        footnotes.append(f"No rank budget is counted as won: a win needs a paired t-test over ≥ {MIN_REPETITIONS} "
                         "repetitions and these cells have fewer; ahead: the blocks where a sampler is first alone.")
    return table.fillna(""), footnotes


def plain(value):
    """A text as markdown shows it: "|" escaped, so that it does not end a table cell (a
    traceback's, a file name's), and a "<" that would open an HTML tag (``<i>``, ``</script``)."""
    if not isinstance(value, str):
        return value
    return re.sub(r"<(?=[A-Za-z/!?])", "&lt;", value).replace("|", "\\|")


def markdown_table(table: pd.DataFrame, **options) -> str:
    """A table as markdown, missing values as "—", every text (cells, index, column names)
    :func:`plain`; ``options`` go to ``DataFrame.to_markdown``."""
    cells = table.map(plain).astype(object).where(table.notna(), None)
    cells.index = cells.index.map(plain)
    cells.columns = cells.columns.map(plain)
    return cells.to_markdown(**{"floatfmt": ".4g", "missingval": MISSING, **options})


def page(header_lines: list[str], notes: list[str], advice, focused: str | None, focus_views, boards,
         costs: dict, statuses: tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame], figures: dict) -> str:
    """The markdown leaderboard. ``statuses``: the cells by status, those not ok by reason
    and the combinations not planned; ``figures`` names each figure file by its key: ("cd",
    task label), (task label, dataset) and ("cost", family), relative to the page."""
    md = ["# kbench leaderboard", "", *header_lines, "", *(f"Note: {note}\n" for note in notes)]
    md += ["## Which sampler for my data", "", *(f"- {s}" for s in advice.statements), ""]
    if focus_views is not None:
        md += [f"## Focus: {focused}", "", FOCUS_TEXT, ""]
        for view in focus_views:
            md += [f"### {view.section.title}", "", markdown_table(view.overall), ""]
            for dataset, table in view.per_dataset.items():
                md += [f"#### {plain(dataset)}", "", markdown_table(table), ""]
    for board in boards:
        section = board.section
        md += [f"## {section.title}", ""]
        if len(board.ranking):
            md += [markdown_table(board.ranking, disable_numparse=True), "", *board.footnotes, ""]
        if len(board.by_regime):
            md += ["### By regime", "", BY_REGIME_TEXT, "", markdown_table(board.by_regime.set_index("regime")), ""]
        if len(section.uninformative):
            md += ["### Uninformative datasets", "", UNINFORMATIVE_TEXT, "", markdown_table(section.uninformative), ""]
        if len(board.failures):
            md += [FAILURES_TEXT, "", markdown_table(board.failures, index=False), ""]
        if board.caption:
            md += [f"![critical difference, {section.label}]({figures['cd', section.label]})", "",
                   board.caption, ""]
        for dataset in sorted(section.scored["dataset"].unique()):
            means = section.scored[section.scored["dataset"] == dataset].pivot_table(
                index="sampler", columns="rank", values="metric", aggfunc="mean")
            means.columns = [f"{r} ({setting})" if (setting := section.task.headline_setting(r)) else str(r)
                             for r in means.columns]
            chart = (f"![{section.label} on {dataset}]({figures[section.label, dataset]})"
                     if (section.label, dataset) in figures else "Its charts: leaderboard.html.")
            md += [f"<details><summary>{plain(section.label)} on {plain(dataset)}</summary>", "", markdown_table(means), "",
                   chart, "", "</details>", ""]
    if len(advice.regimes) or len(advice.winners):
        md += ["## Datasets", ""]
    if len(advice.regimes):
        compact, facts = split_regimes(advice.regimes)
        md += [f"### {regimes_title(advice.regimes)}", "", REGIME_TEXT, "", markdown_table(compact), "",
               "<details><summary>Each dataset's spec, source, preprocessing and documentation</summary>", "",
               markdown_table(facts), "", "</details>", ""]
    if len(advice.winners):
        md += ["### First place per rank budget", "", WINNER_TEXT, "",
               markdown_table(advice.winners.set_index("dataset")), ""]
    for family, (seconds, memory, rank) in costs.items():
        title = f"Sampler cost in n: {family}, rank {rank}"
        md += [f"## {title}", "", COST_TEXT, "", markdown_table(seconds), "", markdown_table(memory), "",
               f"![{title}]({figures['cost', family]})", ""]
    by_status, not_ok, unplanned = statuses
    md += ["## Cells by status", "", markdown_table(by_status), ""]
    if len(not_ok):
        md += ["### Cells not ok", "", NOT_OK_TEXT, "", markdown_table(not_ok.set_index("sampler")), ""]
    if len(unplanned):
        md += ["### Not planned, by design", "", NOT_PLANNED_TEXT, "", markdown_table(unplanned, index=False), ""]
    return "\n".join(md)
