"""Leaderboard sections from result rows: one per task configuration, with one row per cell
(its headline value, the exact kernel's, its time and status), the datasets left out as
uninformative, and the cost in n and Pareto fronts (the cells that are not ok are
kbench.reporting.status').

Every row of a ranking is one sampler configuration (sampler label) and every dataset is
one (dataset, kernel) pair, so a page never merges variants. What a cell scores is its
task's headline (``Task.headline``): on λ-path tasks its test value at the λ the cell chose
on the validation rows (``lam_selected``; kbench.tasks.selection), the exact kernel's at the
λ it chose; on KPCA at one number of components per rank, the same for every sampler
(``Task.headline_rows``). Rows of a sweep that chose λ on the test set (``selected_on``
"test": a paper's oracle, or rows from before kbench chose on validation data) are read at
their best test value. A failed cell (error, timeout, oom) is a cell too, with no value:
kbench.reporting.standing ranks it last. A dataset on which the exact kernel (or, without
one, the best sampler) does not beat the task's trivial predictor by its margin on
validation data is uninformative (:func:`informative`): listed, not ranked.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from kbench.errors import ContractViolation, describe
from kbench.registry import create
from kbench.reporting.standing import FAILED
from kbench.spec import Spec

KEYS = ["dataset", "sampler", "rank", "repetition"]
#: what a cell carries besides its keys: its headline at the λ it chose and the exact kernel's
#: at the λ that chose; the validation criterion of both and of the trivial predictor; the
#: two λ, whether each lies at an end of the path, and the split they were chosen on
CELL_COLUMNS = [*KEYS, "metric", "exact", "seconds", "status", "error", "failed_in", "lam",
                "lam_exact",
                "at_edge", "at_edge_exact", "selected_on", "validation", "validation_exact",
                "trivial"]


@dataclass
class Section:
    """The leaderboard of one task configuration."""

    label: str
    task: object  # the Task instance
    cells: pd.DataFrame  # one row per cell of the informative datasets: CELL_COLUMNS
    unscored: dict[str, str]  # sampler label → why it has no headline value
    #: per dataset left out as uninformative: what judged it, its numbers and why
    #: (:func:`informative`)
    uninformative: pd.DataFrame = field(default_factory=pd.DataFrame)
    #: per dataset left out because its cells cannot be compared: why (:func:`not_comparable`)
    not_comparable: pd.DataFrame = field(default_factory=pd.DataFrame)

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


#: the message of a cell whose test headline is NaN or infinite at the λ it chose
NOT_FINITE = "the test headline is not finite at the chosen λ"


def cell_table(frame: pd.DataFrame, label: str, task=None, extra: tuple[str, ...] = (),
               exact_extra: tuple[str, ...] = ()) -> pd.DataFrame:
    """One row per cell of task configuration ``label`` (:data:`CELL_COLUMNS`): its headline
    value at the λ it chose, the exact kernel's at the λ that chose, its time and status
    (failed cells too, with no values; skipped ones are not cells of a ranking); with the
    ``extra`` columns of the same row, ``dataset_name`` (the dataset label without the
    kernel) and ``kernel`` among them, and the ``exact_extra`` columns of the exact kernel's
    chosen row."""
    task = task if task is not None else task_of(label)
    columns = [*CELL_COLUMNS, *extra, *exact_extra]
    if task is None or task.headline is None:
        return pd.DataFrame(columns=columns)
    rows = frame[frame["task_label"] == label]
    rows = rows.assign(dataset_name=rows["dataset"], dataset=dataset_keys(rows),
                       sampler=rows["sampler_label"])
    scored = _scored_cells(rows[rows["status"] == "ok"], task, extra, exact_extra)
    # a test headline that is not finite at the chosen λ is a numerical failure: last
    if len(scored):
        finite = np.isfinite(scored["metric"].to_numpy(dtype=float))
        scored = scored.assign(metric=scored["metric"].where(finite),
                               status=np.where(finite, "ok", "error"),
                               error=np.where(finite, "", NOT_FINITE),
                               failed_in=np.where(finite, "", "task"))
    failed = rows[rows["status"].isin(FAILED)].drop_duplicates(KEYS)
    failed = failed.reindex(columns=[c for c in columns if c not in ("metric", "exact", "seconds")])
    parts = [part for part in (scored, failed) if len(part)]
    if not parts:
        return pd.DataFrame(columns=columns)
    return pd.concat(parts, ignore_index=True).reindex(columns=columns)


def chosen_rows(rows: pd.DataFrame, lam_column: str, value: str, smaller: bool) -> pd.DataFrame:
    """One row per cell (:data:`KEYS`): the row of the λ in ``lam_column`` (the λ the cell
    chose, whatever its ``value`` there: a NaN is the cell's value); for a cell without one
    (rows of schema 3 and before, which chose on the test set: ``selected_on`` "test") the
    row of the best finite ``value``."""
    if lam_column in rows:
        lam, at = rows["lam"].to_numpy(dtype=float), rows[lam_column].to_numpy(dtype=float)
        picked = rows[np.isclose(lam, at, rtol=1e-9, atol=0.0)].drop_duplicates(KEYS)
        unmarked = rows[np.isnan(at)]
    else:
        picked, unmarked = rows.iloc[:0], rows
    unmarked = unmarked[unmarked[value].notna()]
    if len(unmarked):
        group = unmarked.groupby(KEYS)[value]
        picked = pd.concat([picked,
                            unmarked.loc[(group.idxmin() if smaller else group.idxmax()).values]])
    return picked


def _scored_cells(rows: pd.DataFrame, task, extra, exact_extra) -> pd.DataFrame:
    """The ok cells of one task configuration with their headline values (see cell_table)."""
    headline, validation = task.headline, task.validation
    metric, smaller, exact_column = headline.metric, headline.smaller_is_better, headline.exact
    if rows.empty or metric not in rows:
        return pd.DataFrame()
    headline.check_numbers(rows, task.name)
    try:
        rows = task.headline_rows(rows)
    # a plugin's: its section is dropped with the reason (sections)
    except Exception as exc:  # noqa: BLE001
        raise ContractViolation(f"its headline_rows failed: {describe(exc)}") from None
    if not isinstance(rows, pd.DataFrame):
        raise ContractViolation(f"its headline_rows returned a {type(rows).__name__}, not a "
                                "DataFrame of rows.")
    if rows.empty or rows[metric].isna().all():
        return pd.DataFrame()
    own = {"lam_at_edge": "at_edge"}
    if validation is not None:
        own |= {validation.metric: "validation", validation.trivial: "trivial"}
    best = chosen_rows(rows, "lam_selected", metric, smaller).rename(columns=own)
    exact_rows = rows[rows[exact_column].notna()] if exact_column in rows else rows.iloc[:0]
    if len(exact_rows):
        exact = chosen_rows(exact_rows, "lam_selected_exact", exact_column, smaller).set_index(KEYS)
        renamed = {exact_column: "exact", "lam": "lam_exact", "lam_at_edge_exact": "at_edge_exact"}
        if validation is not None:
            renamed[validation.exact] = "validation_exact"
        exact = exact.reindex(columns=[*renamed, *exact_extra]).rename(columns=renamed)
        best = best.drop(columns=[*exact_extra, *(c for c in renamed.values() if c in best)],
                         errors="ignore")
        best = best.join(exact, on=KEYS)
    times = [c for c in ("time_sample_s", "time_features_s", "time_fit_s") if c in best]
    best["seconds"] = best[times].fillna(0).sum(axis=1)
    if not task.uses_lams:
        best["lam"] = np.nan
    best = best.rename(columns={metric: "metric"})
    return best.reindex(columns=[c for c in CELL_COLUMNS
                                 if c not in ("status", "error", "failed_in")]
                        + [c for c in (*extra, *exact_extra) if c not in CELL_COLUMNS])


UNINFORMATIVE_TEXT = ("Datasets left out of this task's ranking, win counts and advice: on the "
                      "validation rows the exact kernel (or, without one, the best sampler) does "
                      "not beat the task's trivial predictor (the training mean; the class prior) "
                      "by its margin. Skill: the share of the way from the trivial predictor's "
                      "loss to zero (R² for a squared error), mean over repetitions, at the λ each "
                      "chose.")


def informative(cells: pd.DataFrame, task) -> pd.DataFrame:
    """Per dataset of a section's cells, whether it is informative for ``task``: the skill
    (``Validation.skill``) of the exact kernel on the validation rows at the λ it chose (the
    best sampler's, by its mean over repetitions, where there is no exact kernel) against the
    trivial predictor, mean over repetitions, and the task's margin. A dataset without
    validation values (λ chosen on the test set) is not judged, and stays."""
    validation = task.validation
    columns = ["judged by", "value", "trivial", "skill", "margin", "informative"]
    if validation is None or cells.empty:
        return pd.DataFrame(columns=columns)
    ok = cells[cells["status"] == "ok"]
    found = {}
    for dataset, group in ok.groupby("dataset"):
        per_rep = group.groupby("repetition")[["validation_exact", "trivial"]].first()
        trivial = per_rep["trivial"].mean()
        if per_rep["validation_exact"].notna().any():
            judged_by, value = "exact kernel", per_rep["validation_exact"].mean()
        else:
            means = group.groupby(["sampler", "rank"])["validation"].mean().dropna()
            if means.empty:
                continue
            at = means.idxmin() if validation.smaller_is_better else means.idxmax()
            judged_by, value = f"best sampler ({at[0]}, rank {at[1]})", means[at]
        if pd.isna(trivial) or pd.isna(value):
            continue
        skill = float(validation.skill(value, trivial))
        found[dataset] = [judged_by, float(value), float(trivial), skill, validation.margin,
                          bool(skill >= validation.margin)]
    return pd.DataFrame(list(found.values()), index=pd.Index(list(found), name="dataset"),
                        columns=columns)


NOT_COMPARABLE_TEXT = ("Datasets left out of this task's ranking, win counts and advice because "
                       "their cells say nothing about the samplers: none could run (every cell "
                       "failed while loading the data or evaluating the kernel), or the cells of "
                       "one repetition were computed on different splits (the data changed between "
                       "runs: rerun them into a new folder).")
#: the stages before any sampler runs: a cell failing there fails for every sampler
_BEFORE_SAMPLERS = ("dataset", "kernel")


def not_comparable(rows: pd.DataFrame) -> pd.DataFrame:
    """Per dataset (:func:`dataset_keys`) of one task's ``rows`` whose cells cannot be compared,
    why: every cell failed before its sampler ran, or one repetition's cells hold several
    ``split_checksum`` values (paired comparisons need one split)."""
    keys = dataset_keys(rows)
    why = {}
    failed_in = rows["failed_in"] if "failed_in" in rows else pd.Series(np.nan, index=rows.index)
    before = rows["status"].isin(FAILED) & failed_in.isin(_BEFORE_SAMPLERS)
    for dataset, group in rows[before].groupby(keys[before]):
        if len(group) == int((keys == dataset).sum()):
            stage, message = group["failed_in"].iloc[0], str(group["error"].iloc[0])
            why[dataset] = (f"no sampler ran: every cell failed in the {stage} "
                            f"({textwrap.shorten(message, 200, placeholder=' …')})")
    if "split_checksum" in rows:
        splits = rows.groupby([keys, rows["repetition"]])["split_checksum"].nunique()
        for (dataset, repetition), count in splits[splits > 1].items():
            why.setdefault(dataset, f"repetition {repetition}: its cells were computed on {count} "
                                    "different splits (the data changed between runs)")
    return pd.DataFrame({"why": list(why.values())}, index=pd.Index(list(why), name="dataset"))


def sections(frame: pd.DataFrame) -> tuple[list[Section], list[str]]:
    """A Section per task label in ``frame``, its uninformative datasets set apart; and notes
    for labels that cannot have one."""
    found, notes = [], []
    for label in sorted(frame["task_label"].dropna().unique()):
        task = task_of(label)
        if task is None:
            notes.append(f"{label}: its task plugin is not installed here, so it has no section.")
            continue
        if task.headline is None:
            notes.append(f"{label}: the task declares no headline metric, so it has no section.")
            continue
        try:
            cells = cell_table(frame, label, task)
        except ContractViolation as exc:
            notes.append(f"{label}: {exc} So it has no section.")
            continue
        scored = set(cells["sampler"])
        judged = informative(cells, task)
        left_out = judged.loc[~judged["informative"].astype(bool)].drop(columns="informative")
        apart = not_comparable(frame[frame["task_label"] == label])
        cells = cells[~cells["dataset"].isin(left_out.index) & ~cells["dataset"].isin(apart.index)]
        ok = frame[(frame["task_label"] == label) & (frame["status"] == "ok")]
        unscored = {}
        for sampler, rows in ok.groupby("sampler_label"):
            if sampler in scored:
                continue
            family = rows["sampler_family"].iloc[0] if "sampler_family" in rows else None
            notes_column = rows["note"].dropna() if "note" in rows else pd.Series(dtype=str)
            if family is not None and family not in task.families:
                unscored[sampler] = f"{task.headline.metric} is not defined for {family} samplers"
            elif task.headline.metric not in rows or rows[task.headline.metric].isna().all():
                unscored[sampler] = f"its rows have no {task.headline.metric} value" + (
                    f" (its cells note: {notes_column.iloc[0]})" if len(notes_column) else "")
            elif len(notes_column):
                unscored[sampler] = str(notes_column.iloc[0])
            else:
                unscored[sampler] = f"no {task.headline.metric} value in its ok cells" + (
                    " at the λ they chose (lam_selected)" if "lam_selected" in rows else "")
        if cells.empty and len(ok) and left_out.empty and apart.empty:
            reasons = "; ".join(f"{s}: {why}" for s, why in unscored.items())
            notes.append(f"{label}: no ok row gives a {task.headline.metric} value to rank "
                         f"({reasons or 'none at a chosen λ'}), so it has no section.")
        elif not cells.empty or unscored or len(left_out) or len(apart):
            found.append(Section(label, task, cells, unscored, left_out, apart))
    return found, notes


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


COST_TEXT = ("Median seconds of one fit and its training and test features (shared by the fit's "
             "tasks), the log-log slope of time in n, and the largest peak RSS (MB) of a worker.")


def cost_in_n(frame: pd.DataFrame) -> dict[str, tuple[pd.DataFrame, pd.DataFrame, int]]:
    """How each sampler's cost grows with n_train on data that differs only in its size
    (dataset specs equal but for ``n``, same kernel) swept at three sizes or more: per such
    family, at its largest rank, the median seconds of fit + training and test features
    (one value per fit: shared by its tasks), the log-log slope of time in n, and the
    largest peak RSS."""
    ok = frame[frame["status"] == "ok"]
    if ok.empty:
        return {}
    pairs = ok[["dataset", "kernel"]].drop_duplicates()
    family_of = {(d, k): size_family(d, k) for d, k in zip(pairs["dataset"], pairs["kernel"])}
    families = pd.Series([family_of[d, k] for d, k in zip(ok["dataset"], ok["kernel"])],
                         index=ok.index)
    found = {}
    for family, rows in ok.groupby(families):
        if rows["n_train"].nunique() < 3:
            continue
        rank = int(rows["rank"].max())
        fits = (rows[rows["rank"] == rank]
                .drop_duplicates(["dataset", "kernel", "sampler_label", "rank", "repetition"]))
        fits = fits.assign(seconds=fits["time_sample_s"] + fits["time_features_s"].fillna(0.0))
        seconds = fits.pivot_table(index="sampler_label", columns="n_train", values="seconds",
                                   aggfunc="median")
        memory = fits.pivot_table(index="sampler_label", columns="n_train", values="peak_rss_mb",
                                  aggfunc="max")
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
    return float(np.polyfit(np.log(row.index.astype(float)),
                            np.log(row.to_numpy(dtype=float)), 1)[0])
