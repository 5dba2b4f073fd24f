"""Leaderboards from result rows: tables (markdown, HTML) and seaborn figures.

For every task the headline metric of a cell is its value at the best λ of the path (the
oracle λ, as Bach 2013 reports) and, for KPCA, at the largest number of components.
Per task: the mean rank of each sampler over datasets and ranks, its win rate against
``uniform`` on paired cells (same dataset, rank and repetition, hence the same split)
with a bootstrap 95% interval, and the smallest rank whose mean result is within 1% and
5% of the exact-kernel result ("rank to match exact", Bach 2013 §5). Per task and
dataset: metric against rank (mean and 95% interval over repetitions) and against time
with the Pareto front.
"""

from __future__ import annotations

import base64
import html
import platform
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pandas as pd

#: the headline metric of each task and whether smaller is better
HEADLINE = {
    "krr": ("test_mse", True),
    "classification": ("accuracy", False),
    "kpca": ("kpca_error_in", True),
    "approximation": ("rel_trace_error", True),
}
EXACT = {"krr": "test_mse_exact", "classification": "accuracy_exact", "kpca": "kpca_error_in_exact"}
KEYS = ["dataset", "sampler", "rank", "repetition"]


def _label_kernels(rows: pd.DataFrame) -> pd.DataFrame:
    """A dataset swept with several kernels becomes one "dataset [kernel]" per kernel, so
    rankings never mix kernels."""
    if rows.empty or "kernel" not in rows:
        return rows
    several = rows.groupby("dataset")["kernel"].transform("nunique") > 1
    if not several.any():
        return rows
    rows = rows.copy()
    rows.loc[several, "dataset"] = rows.loc[several, "dataset"] + " [" + rows.loc[several, "kernel"] + "]"
    return rows


def cell_table(frame: pd.DataFrame, task: str) -> pd.DataFrame:
    """One row per cell of ``task``: best headline metric over λ, its exact value, total time."""
    metric, smaller = HEADLINE[task]
    rows = _label_kernels(frame[(frame["task"] == task) & (frame["status"] == "ok")])
    if rows.empty or metric not in rows:
        return pd.DataFrame(columns=[*KEYS, "metric", "exact", "seconds"])
    rows = rows[rows[metric].notna()]
    if task == "kpca":
        rows = rows[rows["components"] == rows.groupby(KEYS)["components"].transform("max")]
    pick = rows.groupby(KEYS)[metric].idxmin() if smaller else rows.groupby(KEYS)[metric].idxmax()
    best = rows.loc[pick.values].copy()
    exact_column = EXACT.get(task)
    if exact_column in rows:
        agg = "min" if smaller else "max"
        exact = rows.groupby(KEYS)[exact_column].agg(agg).rename("exact")
        best = best.join(exact, on=KEYS)
    else:
        best["exact"] = np.nan
    times = [c for c in ("time_sample_s", "time_features_s", "time_fit_s") if c in best]
    best["seconds"] = best[times].fillna(0).sum(axis=1)
    return best.rename(columns={metric: "metric"})[[*KEYS, "metric", "exact", "seconds"]].reset_index(drop=True)


def ranking(cells: pd.DataFrame, smaller: bool, seed: int = 0, n_boot: int = 2000) -> pd.DataFrame:
    """Mean rank, win rate against uniform (paired, bootstrap 95% interval), rank to match exact."""
    if cells.empty:
        return pd.DataFrame()
    mean = cells.groupby(["dataset", "rank", "sampler"])["metric"].mean().reset_index()
    mean["place"] = mean.groupby(["dataset", "rank"])["metric"].rank(ascending=smaller, method="average")
    table = mean.groupby("sampler")["place"].mean().rename("mean rank").to_frame()
    rng = np.random.default_rng(seed)
    if "uniform" in set(cells["sampler"]):
        base = cells[cells["sampler"] == "uniform"].set_index(["dataset", "rank", "repetition"])["metric"]
        for sampler, group in cells.groupby("sampler"):
            if sampler == "uniform":
                continue
            paired = group.set_index(["dataset", "rank", "repetition"])["metric"].to_frame("ours").join(
                base.rename("uniform"), how="inner")
            if paired.empty:
                continue
            better = paired["ours"] < paired["uniform"] if smaller else paired["ours"] > paired["uniform"]
            score = better.astype(float) + 0.5 * (paired["ours"] == paired["uniform"])
            boot = score.to_numpy()[rng.integers(0, len(score), size=(n_boot, len(score)))].mean(axis=1)
            low, high = np.percentile(boot, [2.5, 97.5])
            table.loc[sampler, "win rate vs uniform"] = f"{score.mean():.2f} [{low:.2f}, {high:.2f}]"
            table.loc[sampler, "pairs"] = len(score)
    for tolerance in (0.01, 0.05):
        table[f"rank within {tolerance:.0%} of exact"] = _rank_to_match(cells, smaller, tolerance)
    return table.sort_values("mean rank")


def _rank_to_match(cells: pd.DataFrame, smaller: bool, tolerance: float) -> pd.Series:
    """Per sampler: the median over datasets of the smallest rank whose mean metric is within
    ``tolerance`` of the exact result (inf-free: NaN when never reached or no exact value)."""
    mean = cells.groupby(["dataset", "sampler", "rank"])[["metric", "exact"]].mean().reset_index()
    if smaller:
        ok = mean["metric"] <= (1 + tolerance) * mean["exact"]
    else:
        ok = mean["metric"] >= (1 - tolerance) * mean["exact"]
    reached = mean[ok & mean["exact"].notna()].groupby(["sampler", "dataset"])["rank"].min()
    return reached.groupby("sampler").median()


def status_table(frame: pd.DataFrame) -> pd.DataFrame:
    cells = frame.drop_duplicates(subset=["dataset", "sampler", "sampler_params", "task", "rank",
                                          "repetition"])
    return cells.groupby(["sampler", "status"]).size().unstack(fill_value=0)


def pareto_front(points: pd.DataFrame, smaller: bool) -> pd.DataFrame:
    """Points not dominated in (seconds, metric)."""
    ordered = points.sort_values(["seconds", "metric"], ascending=[True, smaller])
    front, best = [], np.inf if smaller else -np.inf
    for _, row in ordered.iterrows():
        if (row["metric"] < best) if smaller else (row["metric"] > best):
            front.append(row)
            best = row["metric"]
    return pd.DataFrame(front)


def figure(cells: pd.DataFrame, task: str, dataset: str, path: Path) -> None:
    """Metric against rank (mean, 95% interval over repetitions) and against time (Pareto)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker
    import seaborn as sns

    metric, smaller = HEADLINE[task]
    data = cells[cells["dataset"] == dataset]
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
    sns.lineplot(data=data, x="rank", y="metric", hue="sampler", marker="o", errorbar=("ci", 95),
                 seed=0, ax=left)
    exact = data["exact"].dropna()
    if len(exact):
        left.axhline(exact.mean(), color="black", linestyle="--", linewidth=1, label="exact kernel")
    left.set(xscale="log", ylabel=metric, title=f"{task} on {dataset}: {metric} vs rank")
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
    plt.close(fig)


def figure_slug(text: str) -> str:
    """A dataset spec as part of a figure file name."""
    return "".join(c if c.isalnum() or c in ".-" else "-" for c in text).strip("-")


def header(frame: pd.DataFrame, command: str | None) -> list[str]:
    first = frame.iloc[0]
    versions = ", ".join(f"{k.removesuffix('_version')} {first[k]}" for k in
                         ("kbench_version", "numpy_version", "scipy_version", "sklearn_version") if k in frame)
    return [
        f"Generated {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC from {len(frame)} rows "
        f"({frame.drop_duplicates(KEYS + ['task']).shape[0]} cells).",
        f"Command: `{command or 'kbench leaderboard'}`.",
        f"Versions: {versions}; BLAS threads {first.get('blas_threads')}; host {first.get('host')} "
        f"({platform.machine()}, Python {platform.python_version()}).",
        "Metric of a cell: its value at the best λ of the path (oracle λ, as Bach 2013), KPCA at "
        "the largest number of components; rank to match exact: median over datasets of the "
        "smallest rank whose mean result is within 1% / 5% of the exact kernel's.",
    ]


def build(frame: pd.DataFrame, out, command: str | None = None) -> dict[str, Path]:
    """Write leaderboard.md, leaderboard.html and figures/*.png into ``out``."""
    out = Path(out)
    (out / "figures").mkdir(parents=True, exist_ok=True)
    md = ["# kbench leaderboard", "", *header(frame, command), ""]
    body = []  # (kind, payload) for the HTML page
    for task, (metric, smaller) in HEADLINE.items():
        cells = cell_table(frame, task)
        if cells.empty:
            continue
        title = f"{task}: {metric} ({'lower' if smaller else 'higher'} is better)"
        table = ranking(cells, smaller)
        md += [f"## {title}", "", table.to_markdown(floatfmt=".3g"), ""]
        body += [("h2", title), ("table", table)]
        for dataset in sorted(cells["dataset"].unique()):
            path = out / "figures" / f"{task}_{figure_slug(dataset)}.png"
            figure(cells, task, dataset, path)
            means = cells[cells["dataset"] == dataset].pivot_table(
                index="sampler", columns="rank", values="metric", aggfunc="mean")
            md += [f"### {dataset}", "", means.to_markdown(floatfmt=".4g"), "",
                   f"![{task} on {dataset}](figures/{path.name})", ""]
            body += [("h3", dataset), ("table", means), ("img", path)]
    statuses = status_table(frame)
    md += ["## Cells by status", "", statuses.to_markdown(), ""]
    body += [("h2", "Cells by status"), ("table", statuses)]
    (out / "leaderboard.md").write_text("\n".join(md))
    (out / "leaderboard.html").write_text(_html(header(frame, command), body))
    return {"markdown": out / "leaderboard.md", "html": out / "leaderboard.html"}


def _html(lines: list[str], body) -> str:
    parts = ["<!DOCTYPE html><html><head><meta charset='utf-8'><title>kbench leaderboard</title>",
             "<style>body{font-family:sans-serif;max-width:1100px;margin:auto;padding:1em}"
             "table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:3px 8px;"
             "text-align:right}img{max-width:100%}</style></head><body><h1>kbench leaderboard</h1>"]
    parts += [f"<p>{html.escape(line)}</p>" for line in lines]
    for kind, payload in body:
        if kind in ("h2", "h3"):
            parts.append(f"<{kind}>{html.escape(payload)}</{kind}>")
        elif kind == "table":
            parts.append(payload.to_html(float_format=lambda v: f"{v:.4g}", na_rep=""))
        else:
            data = base64.b64encode(Path(payload).read_bytes()).decode()
            parts.append(f"<img alt='{html.escape(payload.stem)}' src='data:image/png;base64,{data}'>")
    parts.append("</body></html>")
    return "\n".join(parts)
