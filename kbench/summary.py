"""A plain markdown summary of result rows (the workflow's leaderboard builds on it)."""

from __future__ import annotations

import pandas as pd

#: the headline metric of each task and whether smaller is better
HEADLINE = {
    "krr": ("test_mse", True),
    "classification": ("accuracy", False),
    "kpca": ("kpca_error_in", True),
    "approximation": ("rel_trace_error", True),
}


def best_per_cell(frame: pd.DataFrame, metric: str, smaller: bool) -> pd.DataFrame:
    """Each cell's best value over its λ path (and KPCA components: the largest ℓ)."""
    ok = frame[(frame["status"] == "ok") & frame[metric].notna()] if metric in frame else frame.iloc[:0]
    if "components" in ok and ok["components"].notna().any():
        ok = ok[ok["components"] == ok.groupby(["dataset", "sampler", "rank", "repetition"])
                ["components"].transform("max")]
    keys = ["dataset", "sampler", "rank", "repetition"]
    return ok.groupby(keys, as_index=False)[metric].agg("min" if smaller else "max")


def markdown_summary(frame: pd.DataFrame) -> str:
    """Per task and dataset: mean over repetitions of the best headline metric, sampler × rank;
    then the failed and skipped cells per sampler."""
    lines = ["# kbench results", ""]
    for task, (metric, smaller) in HEADLINE.items():
        rows = frame[frame["task"] == task]
        if rows.empty:
            continue
        best = best_per_cell(rows, metric, smaller)
        lines += [f"## {task}: {metric} ({'lower' if smaller else 'higher'} is better, best λ, "
                  "mean over repetitions)", ""]
        for dataset, group in best.groupby("dataset"):
            table = group.pivot_table(index="sampler", columns="rank", values=metric, aggfunc="mean")
            lines += [f"### {dataset}", "", table.to_markdown(floatfmt=".4g"), ""]
    cells = frame.drop_duplicates(subset=["dataset", "sampler", "sampler_params", "task", "rank",
                                          "repetition"])
    counts = cells.groupby(["sampler", "status"]).size().unstack(fill_value=0)
    lines += ["## Cells by status", "", counts.to_markdown(), ""]
    return "\n".join(lines)
