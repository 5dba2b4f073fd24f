"""The cells that are not ok, and the combinations never planned: a page's cells by sampler
and status, its cells not ok by kind, a section's failures by the component that failed, and
the combinations of datasets, kernels, samplers and tasks that cannot run by design."""

from __future__ import annotations

import pandas as pd

from kbench.reporting.scores import Section
from kbench.reporting.standing import FAILED
from kbench.sweep.plan import not_planned
from kbench.sweep.schema import CELL_KEYS


def status_table(frame: pd.DataFrame) -> pd.DataFrame:
    """Cells by sampler and status; a failed cell counts in the column of the component that
    failed (``failed_in``: the dataset, the sampler, the task, or the job when its worker was
    killed), so a failing task is not blamed on the samplers."""
    cells = frame.drop_duplicates(subset=CELL_KEYS)
    where = (cells["failed_in"].fillna("job") if "failed_in" in cells
             else pd.Series("job", index=cells.index))
    column = cells["status"].where(~cells["status"].isin(FAILED), cells["status"] + " in " + where)
    return cells.groupby([cells["sampler_label"], column]).size().unstack(fill_value=0).rename_axis(
        index="sampler", columns=None)


NOT_OK_TEXT = ("Every cell that is not ok, by sampler, status and kind: how many cells, on how "
               "many datasets, and the first message (a skipped cell: a sampler that refuses a "
               "regime, e.g. a size past its bound).")


def _error_kind(errors: pd.Series) -> pd.Series:
    """Each message's kind: its exception's name, the text before the first colon ("" without
    one)."""
    return errors.fillna("").str.split(":", n=1).str[0]


def not_ok_table(frame: pd.DataFrame) -> pd.DataFrame:
    """The cells that are not ok grouped by sampler, status, the component that failed and the
    message's kind (its exception's name): their number, their datasets' and the first message."""
    cells = frame.drop_duplicates(subset=CELL_KEYS)
    bad = cells[cells["status"] != "ok"]
    if bad.empty:
        return pd.DataFrame()
    error = bad["error"].fillna("") if "error" in bad else pd.Series("", index=bad.index)
    where = bad["failed_in"].fillna("") if "failed_in" in bad else pd.Series("", index=bad.index)
    groups = bad.assign(kind=_error_kind(error), where=where, error=error).groupby(
        ["sampler_label", "status", "where", "kind"], sort=True)
    return pd.DataFrame({"cells": groups.size(), "datasets": groups["dataset"].nunique(),
                         "first message": groups["error"].first()}).reset_index().rename(
        columns={"sampler_label": "sampler", "where": "failed in"})


NOT_PLANNED_TEXT = ("Combinations of the sweep's datasets, kernels, samplers and tasks that cannot "
                    "run by design (a sampler that refuses the kernel, a task that refuses the "
                    "dataset's type): never planned, so never counted as skipped cells.")


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
    refused = pd.MultiIndex.from_tuples([(row["dataset"], row["kernel"], row["sampler"],
                                          row["task"])
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
    groups = failed.assign(kind=_error_kind(failed["error"]),
                           failed_in=failed["failed_in"].fillna("job")).groupby(
        ["failed_in", "status", "kind"], sort=True)
    return pd.DataFrame({"cells": groups.size(),
                         "samplers": groups["sampler"].agg(lambda s: ", ".join(sorted(s.unique()))),
                         "first message": groups["error"].first()}).reset_index().rename(
        columns={"failed_in": "failed in"})
