"""Leaderboards from result rows: the markdown page with seaborn figures and
critical-difference diagrams, and the numbers behind the interactive HTML page
(kbench.webpage), the "which sampler" advice (kbench.advice) and the sampler-author view
(kbench.focus).

One section per task configuration (task label); every row of a table is one sampler
configuration (sampler label) and every dataset is one (dataset, kernel) pair, so a page
never merges variants. What a cell scores is its task's headline (``Task.headline``):
on λ-path tasks its value at the best λ of the path (the oracle λ, as Bach 2013 reports),
on KPCA at one number of components per rank, the same for every sampler
(``Task.headline_rows``). Per task: each sampler's mean rank over (dataset, rank) blocks,
its win rate against ``uniform`` on paired cells (same dataset, rank and repetition, hence
the same split) with a bootstrap 95% interval, the smallest rank whose mean result is
within 1% and 5% of the exact kernel's ("rank to match exact", Bach 2013 §5), and a
critical-difference diagram (Friedman test, Nemenyi post-hoc; scikit-posthocs). Per task
and dataset: metric against rank and against time with the Pareto front.
"""

from __future__ import annotations

import platform
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pandas as pd

from kbench._files import write_text
from kbench.spec import Spec

KEYS = ["dataset", "sampler", "rank", "repetition"]
BASELINE = "uniform"
#: written where a table has no value
MISSING = "—"
TOLERANCES = (0.01, 0.05)
#: significance level of the Friedman test and its post-hoc comparisons
ALPHA = 0.05


@dataclass
class Section:
    """The leaderboard of one task configuration."""

    label: str
    task: object  # the Task instance
    cells: pd.DataFrame  # one row per cell: KEYS, metric, exact, seconds
    unscored: dict[str, str]  # sampler label → why it has no headline value

    @property
    def metric(self) -> str:
        return self.task.headline.metric

    @property
    def smaller(self) -> bool:
        return self.task.headline.smaller_is_better

    @property
    def title(self) -> str:
        return f"{self.label}: {self.metric} ({'lower' if self.smaller else 'higher'} is better)"


def dataset_keys(rows: pd.DataFrame) -> pd.Series:
    """The dataset label, with " [kernel]" when the rows hold that dataset under several
    kernels, so rankings never mix kernels."""
    several = rows.groupby("dataset")["kernel"].transform("nunique") > 1
    return rows["dataset"].where(~several, rows["dataset"] + " [" + rows["kernel"] + "]")


def task_of(label: str):
    """The task instance of a task label (from the registry), or None when not installed."""
    try:
        return Spec.parse(label, "task").create()
    except ValueError:
        return None


def cell_table(frame: pd.DataFrame, label: str, task=None, extra: tuple[str, ...] = (),
               exact_extra: tuple[str, ...] = ()) -> pd.DataFrame:
    """One row per cell of task configuration ``label``: its headline value (best over the
    λ path when the task has one), the exact kernel's value likewise, and its time; with
    the ``extra`` columns of the same row (the sampler's oracle λ), ``dataset_name`` (the
    dataset label without the kernel) and ``kernel`` among them, and the ``exact_extra``
    columns of the exact kernel's oracle row."""
    task = task if task is not None else task_of(label)
    empty = pd.DataFrame(columns=[*KEYS, "metric", "exact", "seconds", *extra, *exact_extra])
    if task is None or task.headline is None:
        return empty
    metric, smaller, exact_column = task.headline.metric, task.headline.smaller_is_better, task.headline.exact
    rows = frame[(frame["task_label"] == label) & (frame["status"] == "ok")]
    if rows.empty or metric not in rows:
        return empty
    rows = task.headline_rows(rows.assign(dataset_name=rows["dataset"], dataset=dataset_keys(rows),
                                          sampler=rows["sampler_label"]))
    rows = rows[rows[metric].notna()]
    if rows.empty:
        return empty
    group = rows.groupby(KEYS)[metric]
    best = rows.loc[(group.idxmin() if smaller else group.idxmax()).values].copy()
    exact_rows = rows[rows[exact_column].notna()] if exact_column in rows else rows.iloc[:0]
    if len(exact_rows):
        group = exact_rows.groupby(KEYS)[exact_column]
        exact = exact_rows.loc[(group.idxmin() if smaller else group.idxmax()).values].set_index(KEYS)
        exact = exact.reindex(columns=[exact_column, *exact_extra]).rename(columns={exact_column: "exact"})
        best = best.drop(columns=list(exact_extra), errors="ignore").join(exact, on=KEYS)
    else:
        best["exact"] = np.nan
    times = [c for c in ("time_sample_s", "time_features_s", "time_fit_s") if c in best]
    best["seconds"] = best[times].fillna(0).sum(axis=1)
    best = best.reindex(columns=[*best.columns, *(c for c in (*extra, *exact_extra) if c not in best)])
    return best.rename(columns={metric: "metric"})[
        [*KEYS, "metric", "exact", "seconds", *extra, *exact_extra]].reset_index(drop=True)


def sections(frame: pd.DataFrame) -> tuple[list[Section], list[str]]:
    """A Section per task label in ``frame``; and notes for labels that cannot have one."""
    found, notes = [], []
    for label in sorted(frame["task_label"].dropna().unique()):
        task = task_of(label)
        if task is None:
            notes.append(f"{label}: its task plugin is not installed here, so it has no section.")
            continue
        if task.headline is None:
            notes.append(f"{label}: the task declares no headline metric, so it has no section.")
            continue
        cells = cell_table(frame, label, task)
        ok = frame[(frame["task_label"] == label) & (frame["status"] == "ok")]
        unscored = {}
        for sampler, rows in ok.groupby("sampler_label"):
            if sampler in set(cells["sampler"]):
                continue
            family = rows["sampler_family"].iloc[0] if "sampler_family" in rows else None
            notes_column = rows["note"].dropna() if "note" in rows else pd.Series(dtype=str)
            if family is not None and family not in task.families:
                unscored[sampler] = f"{task.headline.metric} is not defined for {family} samplers"
            elif len(notes_column):
                unscored[sampler] = str(notes_column.iloc[0])
            else:
                unscored[sampler] = f"no {task.headline.metric} value in its ok cells"
        if not cells.empty or unscored:
            found.append(Section(label, task, cells, unscored))
    return found, notes


def ranking(cells: pd.DataFrame, smaller: bool, seed: int = 0, n_boot: int = 2000) -> pd.DataFrame:
    """Mean rank, win rate against uniform (paired, bootstrap 95% interval), rank to match exact."""
    if cells.empty:
        return pd.DataFrame()
    mean = cells.groupby(["dataset", "rank", "sampler"])["metric"].mean().reset_index()
    mean["place"] = mean.groupby(["dataset", "rank"])["metric"].rank(ascending=smaller, method="average")
    table = mean.groupby("sampler")["place"].mean().rename("mean rank").to_frame()
    rng = np.random.default_rng(seed)
    if BASELINE in set(cells["sampler"]):
        for sampler, group in cells.groupby("sampler"):
            if sampler == BASELINE:
                continue
            win = win_rate(group, cells[cells["sampler"] == BASELINE], smaller, rng, n_boot)
            if win is None:
                continue
            table.loc[sampler, f"win rate vs {BASELINE}"] = win.text
            table.loc[sampler, "pairs"] = win.pairs
    if cells["exact"].notna().any():  # a task with an exact-kernel value of its headline
        for tolerance in TOLERANCES:
            table[f"rank within {tolerance:.0%} of exact"] = rank_to_match(cells, smaller, tolerance)
    return table.sort_values("mean rank")


@dataclass
class WinRate:
    """How often one sampler beats another on paired cells, with a bootstrap 95% interval."""

    rate: float
    low: float
    high: float
    pairs: int

    @property
    def text(self) -> str:
        return f"{self.rate:.2f} [{self.low:.2f}, {self.high:.2f}]"

    @classmethod
    def of(cls, score: np.ndarray, rng: np.random.Generator, n_boot: int = 2000) -> WinRate:
        """The mean of per-pair scores (1 win, 0.5 tie, 0 loss), percentile bootstrap interval."""
        boot = score[rng.integers(0, len(score), size=(n_boot, len(score)))].mean(axis=1)
        low, high = np.percentile(boot, [2.5, 97.5])
        return cls(float(score.mean()), float(low), float(high), len(score))


def win_rate(ours: pd.DataFrame, theirs: pd.DataFrame, smaller: bool, rng: np.random.Generator,
             n_boot: int = 2000) -> WinRate | None:
    """Share of paired cells (same dataset, rank and repetition, hence the same split) where
    ``ours`` beats ``theirs``, ties counting one half; None when no cell pairs up."""
    pairing = ["dataset", "rank", "repetition"]
    paired = ours.set_index(pairing)["metric"].to_frame("ours").join(
        theirs.set_index(pairing)["metric"].rename("theirs"), how="inner")
    if paired.empty:
        return None
    return WinRate.of(pair_scores(paired["ours"], paired["theirs"], smaller), rng, n_boot)


def pair_scores(ours: pd.Series, theirs: pd.Series, smaller: bool) -> np.ndarray:
    """Per pair of values: 1 where ours is better, 0.5 on a tie, 0 where it is worse."""
    better = ours < theirs if smaller else ours > theirs
    return (better.astype(float) + 0.5 * (ours == theirs)).to_numpy()


def ranks_to_match(cells: pd.DataFrame, smaller: bool, tolerance: float) -> pd.Series:
    """Per (sampler, dataset) with an exact value: the smallest rank whose mean metric is
    within ``tolerance`` of the exact kernel's, +inf when no swept rank gets there."""
    mean = cells.groupby(["dataset", "sampler", "rank"])[["metric", "exact"]].mean().reset_index()
    mean = mean[mean["exact"].notna()]
    if mean.empty:
        return pd.Series(dtype=float)
    if smaller:
        ok = mean["metric"] <= (1 + tolerance) * mean["exact"]
    else:
        ok = mean["metric"] >= (1 - tolerance) * mean["exact"]
    return mean["rank"].where(ok, np.inf).groupby([mean["sampler"], mean["dataset"]]).min()


def rank_to_match(cells: pd.DataFrame, smaller: bool, tolerance: float) -> pd.Series:
    """Per sampler: the median over datasets of :func:`ranks_to_match` (+inf counted). Every
    tolerance uses the same datasets, so a stricter tolerance never reads a smaller rank.
    inf: not reached at the median."""
    first = ranks_to_match(cells, smaller, tolerance)
    return first.groupby("sampler").median() if len(first) else first


def friedman_nemenyi(cells: pd.DataFrame, smaller: bool):
    """Friedman test over (dataset, rank) blocks of repetition means, samplers as groups,
    with the Nemenyi post-hoc p-values (scikit-posthocs). The test needs complete blocks:
    samplers with a value in fewer than half of the blocks (a sampler made for one kernel
    family, say) are left out, then only blocks where every remaining sampler has a value
    count. Returns (mean ranks, p-value matrix, Friedman p, blocks, left-out samplers with
    their number of blocks, total blocks) or None when fewer than 3 samplers or 2 blocks
    remain."""
    import scikit_posthocs as sp
    from scipy.stats import friedmanchisquare

    wide = cells.groupby(["dataset", "rank", "sampler"])["metric"].mean().unstack("sampler")
    total, present = len(wide), wide.notna().sum()
    left_out = {sampler: int(count) for sampler, count in present.items() if count < total / 2}
    wide = wide.drop(columns=list(left_out)).dropna()
    if wide.shape[1] < 3 or wide.shape[0] < 2:
        return None
    ranks = wide.rank(axis=1, ascending=smaller).mean()
    statistic = friedmanchisquare(*(wide[c].to_numpy() for c in wide.columns))
    pvalues = sp.posthoc_nemenyi_friedman(wide.reset_index(drop=True))
    return ranks, pvalues, float(statistic.pvalue), wide.shape[0], left_out, total


def critical_difference(section: Section, path: Path) -> str | None:
    """The critical-difference diagram of a section (PNG at ``path``) and its caption, or None."""
    import scikit_posthocs as sp
    from matplotlib.figure import Figure

    result = friedman_nemenyi(section.cells, section.smaller)
    if result is None:
        return None
    ranks, pvalues, friedman_p, blocks, left_out, total = result
    fig = Figure(figsize=(8, 0.6 + 0.3 * len(ranks)))
    ax = fig.subplots()
    sp.critical_difference_diagram(ranks, pvalues, ax=ax, alpha=ALPHA)
    ax.set_title(f"{section.label}: mean rank over {blocks} (dataset, rank) blocks", fontsize=9)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    caption = (f"Critical difference: Friedman test over {blocks} of {total} (dataset, rank) blocks (those where "
               f"every ranked sampler has a value), p = {friedman_p:.2g}; samplers joined by a bar are not "
               f"significantly different (Nemenyi, α = {ALPHA}).")
    if left_out:
        caption += " Not ranked (a value in fewer than half of the blocks): " + ", ".join(
            f"{sampler} ({count} of {total})" for sampler, count in sorted(left_out.items())) + "."
    return caption


def status_table(frame: pd.DataFrame) -> pd.DataFrame:
    cells = frame.drop_duplicates(subset=["dataset", "kernel", "sampler_label", "task_label", "rank",
                                          "repetition"])
    return cells.groupby(["sampler_label", "status"]).size().unstack(fill_value=0).rename_axis(
        index="sampler", columns=None)


def pareto_front(points: pd.DataFrame, smaller: bool) -> pd.DataFrame:
    """Points not dominated in (seconds, metric)."""
    ordered = points.sort_values(["seconds", "metric"], ascending=[True, smaller])
    running = ordered["metric"].cummin() if smaller else ordered["metric"].cummax()
    improves = ordered["metric"] < running.shift(fill_value=np.inf) if smaller else \
        ordered["metric"] > running.shift(fill_value=-np.inf)
    return ordered[improves]


def figure(cells: pd.DataFrame, metric: str, smaller: bool, title: str, dataset: str, path: Path) -> None:
    """Metric against rank (mean, 95% interval over repetitions) and against time (Pareto)."""
    import matplotlib.ticker
    import seaborn as sns
    from matplotlib.figure import Figure

    data = cells[cells["dataset"] == dataset]
    fig = Figure(figsize=(11, 4))
    left, right = fig.subplots(1, 2)
    sns.lineplot(data=data, x="rank", y="metric", hue="sampler", marker="o", errorbar=("ci", 95),
                 seed=0, ax=left)
    exact = data.groupby("rank")["exact"].mean().dropna()  # per rank: KPCA's ℓ follows the rank
    if len(exact):
        left.plot(exact.index, exact.to_numpy(), color="black", linestyle="--", linewidth=1,
                  label="exact kernel")
    left.set(xscale="log", ylabel=metric, title=f"{title} on {dataset}: {metric} vs rank")
    ranks = sorted(data["rank"].unique())
    left.set_xticks(ranks, [str(r) for r in ranks])
    left.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    if smaller and (data["metric"] > 0).all():
        left.set_yscale("log")
    left.legend(fontsize=7)
    means = data.groupby(["sampler", "rank"])[["metric", "seconds"]].mean().reset_index()
    sns.scatterplot(data=means, x="seconds", y="metric", hue="sampler", ax=right, legend=False)
    front = pareto_front(means, smaller)
    if len(front):
        right.plot(front["seconds"], front["metric"], color="black", linewidth=1, label="Pareto front")
        right.legend(fontsize=7)
    right.set(xscale="log", xlabel="seconds (sample + features + fit)", ylabel=metric,
              title=f"{metric} vs time")
    right.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    if smaller and (means["metric"] > 0).all():
        right.set_yscale("log")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)


def size_family(dataset: str, kernel: str) -> str:
    """The data a dataset spec draws, its size aside: the label without ``n`` (and the kernel)."""
    spec = Spec.parse(dataset, "dataset")
    family = Spec.of("dataset", spec.name, {k: v for k, v in spec.params.items() if k != "n"}).label
    return f"{family} [{kernel}]"


COST_TEXT = ("Median seconds of one fit and its training and test features (shared by the fit's tasks), "
             "the log-log slope of time in n, and the largest peak RSS (MB) of a worker.")


def cost_in_n(frame: pd.DataFrame) -> dict[str, tuple[pd.DataFrame, pd.DataFrame, int]]:
    """How each sampler's cost grows with n_train on data that differs only in its size
    (dataset specs equal but for ``n``, same kernel) swept at three sizes or more: per such
    family, at its largest rank, the median seconds of fit + training and test features
    (one value per fit: shared by its tasks), the log-log slope of time in n, and the
    largest peak RSS."""
    ok = frame[frame["status"] == "ok"]
    if ok.empty:
        return {}
    families = pd.Series([size_family(d, k) for d, k in zip(ok["dataset"], ok["kernel"])], index=ok.index)
    found = {}
    for family, rows in ok.groupby(families):
        if rows["n_train"].nunique() < 3:
            continue
        rank = int(rows["rank"].max())
        fits = rows[rows["rank"] == rank].drop_duplicates(["dataset", "kernel", "sampler_label", "rank", "repetition"])
        fits = fits.assign(seconds=fits["time_sample_s"] + fits["time_features_s"].fillna(0.0))
        seconds = fits.pivot_table(index="sampler_label", columns="n_train", values="seconds", aggfunc="median")
        memory = fits.pivot_table(index="sampler_label", columns="n_train", values="peak_rss_mb", aggfunc="max")
        seconds["slope in n"] = seconds.apply(_slope, axis=1)
        for table in (seconds, memory):
            table.index.name = "sampler"
            table.columns = [c if isinstance(c, str) else f"n = {int(c):,}" for c in table.columns]
        found[family] = (seconds, memory, rank)
    return found


def _slope(row: pd.Series) -> float:
    """Least-squares slope of log(seconds) in log(n) over the sizes a sampler has."""
    row = row.dropna()
    if len(row) < 3:
        return np.nan
    return float(np.polyfit(np.log(row.index.astype(float)), np.log(row.to_numpy(dtype=float)), 1)[0])


def cost_figure(seconds: pd.DataFrame, rank: int, family: str, path: Path) -> None:
    """Log-log seconds against n_train, one line per sampler."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6, 4))
    ax = fig.subplots()
    sizes = [float(c.removeprefix("n = ").replace(",", "")) for c in seconds.columns if c.startswith("n = ")]
    for sampler, row in seconds.drop(columns="slope in n").iterrows():
        ax.plot(sizes, row.to_numpy(dtype=float), marker="o", label=f"{sampler} ({seconds.loc[sampler, 'slope in n']:.2f})")
    ax.set(xscale="log", yscale="log", xlabel="n_train", ylabel="seconds (fit + features)",
           title=f"{family}: cost in n at rank {rank}\n(legend: log-log slope)")
    ax.legend(fontsize=7)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)


def figure_slug(text: str) -> str:
    """A label as part of a figure file name."""
    return "".join(c if c.isalnum() or c in ".-" else "-" for c in text).strip("-")


def header(frame: pd.DataFrame, command: str | None, executor: str | None = None) -> list[str]:
    first = frame.iloc[0]
    versions = ", ".join(f"{k.removesuffix('_version')} {first[k]}" for k in
                         ("kbench_version", "numpy_version", "scipy_version", "sklearn_version") if k in frame)
    cells = frame.drop_duplicates(["dataset", "kernel", "sampler_label", "task_label", "rank", "repetition"])
    return [
        f"Generated {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC from {len(frame)} rows ({len(cells)} cells).",
        f"Command: `{command or 'kbench leaderboard'}`" + (f" (executor: {executor})." if executor else "."),
        f"Versions: {versions}; BLAS threads {first.get('blas_threads')}; host {first.get('host')} "
        f"({platform.machine()}, Python {platform.python_version()}).",
        "A row is one sampler configuration, a section one task configuration. Metric of a cell: "
        "its value at the best λ of the path (oracle λ, as Bach 2013); KPCA at one number of "
        "components per rank for every sampler (the largest of the task's list not above the rank). "
        "Rank to match exact: median over the datasets with an exact value of the smallest rank "
        "whose mean result is within 1% / 5% of the exact kernel's.",
    ]


def _format_ranking(table: pd.DataFrame, unscored: dict[str, str]) -> tuple[pd.DataFrame, list[str]]:
    """Table for the page: missing values read "—", unreached ranks "> max", footnotes."""
    table = table.copy()
    footnotes = []
    reach = [c for c in table.columns if c.startswith("rank within")]
    if reach:
        footnotes.append(f"{MISSING} in a rank-to-match column: no exact value, or the median dataset "
                         "gets within the tolerance at no swept rank.")
    for column in reach:
        table[column] = table[column].map(lambda v: MISSING if not np.isfinite(v) else f"{v:g}")
    if "mean rank" in table:
        table["mean rank"] = table["mean rank"].map(lambda v: f"{v:.2f}")
    if "pairs" in table:
        table["pairs"] = table["pairs"].map(lambda v: MISSING if pd.isna(v) else f"{int(v)}")
    for sampler, why in unscored.items():
        table.loc[sampler] = MISSING
        table.loc[sampler, "note"] = why
    if "note" in table:
        table["note"] = table["note"].fillna("")
    return table.fillna(MISSING), footnotes


def _markdown(table: pd.DataFrame) -> str:
    """A numeric table as markdown, missing values as "—"."""
    return table.astype(object).where(table.notna(), None).to_markdown(floatfmt=".4g", missingval=MISSING)


def build(frame: pd.DataFrame, out, command: str | None = None, executor: str | None = None,
          focus: str | None = None) -> dict[str, Path]:
    """Write leaderboard.md (seaborn figures in figures/*.png) and the interactive, self-contained
    leaderboard.html into ``out``; with ``focus``, a section of that sampler against every other."""
    from kbench import webpage
    from kbench.advice import REGIME_TEXT, WINNER_TEXT, advise
    from kbench.focus import FOCUS_TEXT
    from kbench.focus import focus as focus_tables

    out = Path(out)
    (out / "figures").mkdir(parents=True, exist_ok=True)
    found, notes = sections(frame)
    views = focus_tables(found, focus) if focus else None
    lines = header(frame, command, executor)
    md = ["# kbench leaderboard", "", *lines, "", *(f"Note: {note}\n" for note in notes)]
    advice = advise(frame, found)
    md += ["## Which sampler for my data", "", *(f"- {s}" for s in advice.statements), ""]
    if len(advice.regimes):
        md += ["### Regimes", "", REGIME_TEXT, "", _markdown(advice.regimes), ""]
    if len(advice.winners):
        md += ["### Winner per rank budget", "", WINNER_TEXT, "",
               advice.winners.to_markdown(index=False, floatfmt=".4g"), ""]
    if views is not None:
        md += [f"## Focus: {focus}", "", FOCUS_TEXT, ""]
        for view in views:
            md += [f"### {view.section.title}", "", view.overall.to_markdown(), ""]
            for dataset, table in view.per_dataset.items():
                md += [f"#### {dataset}", "", table.to_markdown(), ""]
    boards = []
    for section in found:
        md += [f"## {section.title}", ""]
        table, footnotes = _format_ranking(ranking(section.cells, section.smaller), section.unscored)
        md += [table.to_markdown(), "", *footnotes, ""]
        diagram = out / "figures" / f"cd_{figure_slug(section.label)}.png"
        caption = critical_difference(section, diagram)
        if caption:
            md += [f"![critical difference, {section.label}](figures/{diagram.name})", "", caption, ""]
        boards.append(webpage.Board(section, table, footnotes, diagram if caption else None, caption))
        for dataset in sorted(section.cells["dataset"].unique()):
            path = out / "figures" / f"{figure_slug(section.label)}_{figure_slug(dataset)}.png"
            figure(section.cells, section.metric, section.smaller, section.label, dataset, path)
            means = section.cells[section.cells["dataset"] == dataset].pivot_table(
                index="sampler", columns="rank", values="metric", aggfunc="mean")
            means.columns = [f"{r} ({setting})" if (setting := section.task.headline_setting(r)) else str(r)
                             for r in means.columns]
            md += [f"### {dataset}", "", _markdown(means), "",
                   f"![{section.label} on {dataset}](figures/{path.name})", ""]
    costs = cost_in_n(frame)
    for family, (seconds, memory, rank) in costs.items():
        path = out / "figures" / f"cost_in_n_{figure_slug(family)}.png"
        cost_figure(seconds, rank, family, path)
        title = f"Sampler cost in n: {family}, rank {rank}"
        md += [f"## {title}", "", COST_TEXT, "", _markdown(seconds), "", _markdown(memory), "",
               f"![{title}](figures/{path.name})", ""]
    statuses = status_table(frame)
    md += ["## Cells by status", "", statuses.to_markdown(), ""]
    page = webpage.render(frame, lines, notes, boards, advice, views, focus, costs, statuses)
    write_text(out / "leaderboard.md", "\n".join(md))
    write_text(out / "leaderboard.html", page)
    return {"markdown": out / "leaderboard.md", "html": out / "leaderboard.html"}
