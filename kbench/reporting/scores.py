"""Leaderboards from result rows: the markdown page with seaborn figures and
critical-difference diagrams, and the numbers behind the interactive HTML page
(kbench.reporting.html), the "which sampler" advice (kbench.reporting.advice) and the sampler-author view
(kbench.reporting.focus).

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

from dataclasses import dataclass

import numpy as np
import pandas as pd

from kbench.registry import create
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
        return create(label, "task")
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
