"""The published evidence: every scored cell of the published sweeps' λ-path tasks, with
the regime of its dataset, in one table shipped with kbench (``evidence.parquet``).

Regenerate it when the published results change::

    python -m kbench.advisor.collect results/all.parquet results/{real,large,evidence}/all.parquet

A cell's value is its task's headline at the λ it chose on validation data, as on the
leaderboards (kbench.reporting.scores), and datasets the leaderboards leave out as
uninformative are left out here too; the regime is the leaderboard's
(kbench.reporting.advice): n_train, n_features and, at the λ the exact kernel chose on
validation data, d_eff, d_mof and their coherence. ``path`` is the sweep's λ path.
"""

from __future__ import annotations

from importlib import resources

import pandas as pd
import pyarrow.parquet as pq

from kbench.reporting.advice import regimes
from kbench.reporting.scores import dataset_keys, sections
from kbench.reporting.standing import FAILED
from kbench.spec import Spec

#: the table shipped with the package
PUBLISHED = "evidence.parquet"
CELL_COLUMNS = ["dataset", "sampler", "rank", "repetition", "metric", "exact", "status", "error",
                "failed_in",
                "seconds"]
REGIME_COLUMNS = {"n_train": "n_train", "n_features": "n_features", "λ (exact)": "lam",
                  "d_eff": "d_eff",
                  "d_mof": "d_mof", "estimated": "estimated"}


def collect(frame: pd.DataFrame, source: str) -> pd.DataFrame:
    """The evidence of one sweep's results (published at ``source``, e.g. "results/real"):
    the cells of its λ-path sections that compare with the exact kernel on informative
    datasets, and the regime of each dataset (datasets without one left out)."""
    found, _ = sections(frame)
    table = regimes(frame, found)
    if table.empty or "d_eff" not in table:
        return pd.DataFrame()
    table = (table[list(REGIME_COLUMNS)].rename(columns=REGIME_COLUMNS)
             .dropna(subset=["d_eff", "d_mof"]))
    kernels = frame.groupby(dataset_keys(frame))["kernel"].first()
    parts, path = [], lam_path(frame)
    for section in found:
        headline = section.task.headline
        if not section.task.uses_lams or headline.exact is None:
            continue
        cells = (section.cells[section.cells["dataset"].isin(table.index)]
                 .reindex(columns=CELL_COLUMNS))
        parts.append(cells.assign(task=section.label, source=source, path=path,
                                  kernel=cells["dataset"].map(kernels))
                     .join(table, on="dataset"))
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()


def lam_path(frame: pd.DataFrame) -> str:
    """Every λ the sweep's rows carry (its path with the extensions ``lams: auto`` made), as
    text ("1e-06,1e-05,…"): a user's regime is read at the best of these λ it was estimated on."""
    return ",".join(repr(float(v)) for v in sorted(frame["lam"].dropna().unique()))


def path_of(text: str) -> list[float]:
    return [float(v) for v in text.split(",")]


def collect_all(results: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """The evidence of several published sweeps ({source: rows}) in one table, a dataset
    named by its source and key."""
    parts = [part for source, frame in results.items() if len(part := collect(frame, source))]
    if not parts:
        raise ValueError("no evidence: none of the results has a λ-path task scored against the "
                         "exact kernel")
    evidence = pd.concat(parts, ignore_index=True)
    evidence["rank"] = evidence["rank"].astype("int64")
    evidence["repetition"] = evidence["repetition"].astype("int64")
    return evidence


def published() -> pd.DataFrame:
    """The evidence shipped with kbench."""
    with resources.as_file(resources.files("kbench.advisor") / PUBLISHED) as path:
        return pd.read_parquet(path)


def check_evidence(cells) -> pd.DataFrame:
    """An evidence table given in place of the published one: a DataFrame with its columns."""
    with resources.as_file(resources.files("kbench.advisor") / PUBLISHED) as path:
        columns = pq.read_schema(path).names
    missing = [c for c in columns if not isinstance(cells, pd.DataFrame) or c not in cells.columns]
    if missing:
        raise ValueError("cells must be an evidence table as kbench.advisor.evidence.collect_all "
                         f"makes it, with the columns {', '.join(columns)}; "
                         + (f"it lacks {', '.join(missing)}." if isinstance(cells, pd.DataFrame)
                            else f"got {type(cells).__name__}."))
    return cells


def task_name(label: str) -> str:
    return Spec.parse(label, "task").name


def kernel_name(spec: str) -> str:
    return Spec.parse(spec, "kernel").name


def of_task_and_kernel(cells: pd.DataFrame, task: str, kernel: str) -> pd.DataFrame:
    """The cells of the task named like ``task`` under a kernel of the family of ``kernel``."""
    tasks = {label: task_name(label) for label in cells["task"].unique()}
    kernels = {spec: kernel_name(spec) for spec in cells["kernel"].unique()}
    return cells[(cells["task"].map(tasks) == task_name(task))
                 & (cells["kernel"].map(kernels) == kernel_name(kernel))]


def relative_gap(metric, exact, smaller: bool):
    """How far a headline is from the exact kernel's, relative to it (> 0: worse); NaN where
    the exact value is 0."""
    gap = metric / exact - 1.0 if smaller else 1.0 - metric / exact
    return gap.where(exact.abs() > 0)


def mean_gaps(cells: pd.DataFrame, by: list[str], smaller: bool) -> pd.Series:
    """The relative gap to exact of the mean headline of each group ``by`` of the cells that
    did not fail (:func:`relative_gap` of the group means of ``metric`` and ``exact``)."""
    means = cells[~cells["status"].isin(FAILED)].groupby(by)[["metric", "exact"]].mean()
    return relative_gap(means["metric"], means["exact"], smaller)
