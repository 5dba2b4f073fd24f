"""Leaderboard sections from result rows: one per task configuration, with one row per cell
(its headline value, the exact kernel's, its time and status), and the page's other
tables (cells by status, failures, cost in n, Pareto fronts).

Every row of a ranking is one sampler configuration (sampler label) and every dataset is
one (dataset, kernel) pair, so a page never merges variants. What a cell scores is its
task's headline (``Task.headline``): on λ-path tasks its value at the best λ of the path
(the oracle λ, as Bach 2013 reports), on KPCA at one number of components per rank, the
same for every sampler (``Task.headline_rows``). A failed cell (error, timeout, oom) is a
cell too, with no value: kbench.reporting.standing ranks it last. The rankings themselves
are kbench.reporting.standing's.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from kbench.registry import create
from kbench.reporting.standing import FAILED
from kbench.spec import Spec
from kbench.sweep.plan import not_planned
from kbench.sweep.store import CELL_KEYS

KEYS = ["dataset", "sampler", "rank", "repetition"]


@dataclass
class Section:
    """The leaderboard of one task configuration."""

    label: str
    task: object  # the Task instance
    cells: pd.DataFrame  # one row per cell: KEYS, metric, exact, seconds, status, error, failed_in
    unscored: dict[str, str]  # sampler label → why it has no headline value

    @property
    def scored(self) -> pd.DataFrame:
        """The cells with a headline value (status ok)."""
        return self.cells[self.cells["status"] == "ok"]

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
    λ path when the task has one), the exact kernel's value likewise, its time and status
    (failed cells too, with no values; skipped ones are not cells of a ranking); with the
    ``extra`` columns of the same row (the sampler's oracle λ), ``dataset_name`` (the dataset
    label without the kernel) and ``kernel`` among them, and the ``exact_extra`` columns of
    the exact kernel's oracle row."""
    task = task if task is not None else task_of(label)
    columns = [*KEYS, "metric", "exact", "seconds", "status", "error", "failed_in", *extra, *exact_extra]
    if task is None or task.headline is None:
        return pd.DataFrame(columns=columns)
    rows = frame[frame["task_label"] == label]
    rows = rows.assign(dataset_name=rows["dataset"], dataset=dataset_keys(rows), sampler=rows["sampler_label"])
    scored = _scored_cells(rows[rows["status"] == "ok"], task, extra, exact_extra)
    failed = rows[rows["status"].isin(FAILED)].drop_duplicates(KEYS)
    failed = failed.reindex(columns=[c for c in columns if c not in ("metric", "exact", "seconds")])
    parts = [part for part in (scored.assign(status="ok", error="", failed_in=""), failed) if len(part)]
    if not parts:
        return pd.DataFrame(columns=columns)
    return pd.concat(parts, ignore_index=True).reindex(columns=columns)


def _scored_cells(rows: pd.DataFrame, task, extra, exact_extra) -> pd.DataFrame:
    """The ok cells of one task configuration with their headline values (see cell_table)."""
    metric, smaller, exact_column = task.headline.metric, task.headline.smaller_is_better, task.headline.exact
    if rows.empty or metric not in rows:
        return pd.DataFrame()
    rows = task.headline_rows(rows)
    rows = rows[rows[metric].notna()]
    if rows.empty:
        return pd.DataFrame()
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
    return best.rename(columns={metric: "metric"})[[*KEYS, "metric", "exact", "seconds", *extra, *exact_extra]]


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


def status_table(frame: pd.DataFrame) -> pd.DataFrame:
    """Cells by sampler and status; a failed cell counts in the column of the component that
    failed (``failed_in``: the dataset, the sampler, the task, or the job when its worker was
    killed), so a failing task is not blamed on the samplers."""
    cells = frame.drop_duplicates(subset=CELL_KEYS)
    where = cells["failed_in"].fillna("job") if "failed_in" in cells else pd.Series("job", index=cells.index)
    column = cells["status"].where(~cells["status"].isin(FAILED), cells["status"] + " in " + where)
    return cells.groupby([cells["sampler_label"], column]).size().unstack(fill_value=0).rename_axis(
        index="sampler", columns=None)


NOT_PLANNED_TEXT = ("Combinations of the sweep's datasets, kernels, samplers and tasks that cannot run by design "
                    "(a sampler that refuses the kernel, a task that refuses the dataset's type): never planned, so "
                    "never counted as skipped cells.")


def by_design(frame: pd.DataFrame) -> list[dict]:
    """The combinations of the rows' datasets, kernels, samplers and tasks that cannot run by
    design (kbench.sweep.plan.not_planned's rows); none when a plugin of these rows is not
    installed here, since only it could say."""
    kernels = frame.groupby("dataset")["kernel"].unique().map(list).to_dict()
    try:
        return not_planned(list(kernels), kernels, sorted(frame["sampler_label"].unique()),
                           sorted(frame["task_label"].unique()))
    except ValueError:
        return []


def without_by_design(frame: pd.DataFrame, combinations: list[dict]) -> pd.DataFrame:
    """The rows outside ``combinations`` (:func:`by_design`'s) or not skipped: a cell that an
    older kbench planned and recorded as skipped for a combination that cannot run by design
    is not a cell today, and is listed among the combinations not planned instead."""
    if not combinations:
        return frame
    keys = pd.MultiIndex.from_frame(frame[["dataset", "kernel", "sampler_label", "task_label"]])
    refused = pd.MultiIndex.from_tuples([(row["dataset"], row["kernel"], row["sampler"], row["task"])
                                         for row in combinations])
    return frame[~(keys.isin(refused) & (frame["status"] == "skipped").to_numpy())]


def not_planned_table(combinations: list[dict]) -> pd.DataFrame:
    """:func:`by_design`'s combinations, one row per reason with how many (dataset, kernel,
    sampler, task) combinations it covers."""
    if not combinations:
        return pd.DataFrame()
    return pd.DataFrame(combinations).groupby("reason").size().rename("combinations").reset_index()


FAILURES_TEXT = "Failed cells by component and kind, with the first message of each kind."


def failures(section: Section) -> pd.DataFrame:
    """A section's failed cells grouped by the component that failed, status and exception
    type: how many, which samplers, and the first message."""
    failed = section.cells[section.cells["status"].isin(FAILED)]
    if failed.empty:
        return pd.DataFrame()
    kind = failed["error"].fillna("").str.split(":", n=1).str[0]
    groups = failed.assign(kind=kind, failed_in=failed["failed_in"].fillna("job")).groupby(
        ["failed_in", "status", "kind"], sort=True)
    return pd.DataFrame({"cells": groups.size(),
                         "samplers": groups["sampler"].agg(lambda s: ", ".join(sorted(s.unique()))),
                         "first message": groups["error"].first()}).reset_index().rename(
        columns={"failed_in": "failed in"})


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
