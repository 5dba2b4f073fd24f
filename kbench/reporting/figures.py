"""The leaderboard's static figures (matplotlib PNGs): metric against rank and time,
critical-difference diagrams, cost in n; every file name from the labels' collision-free slugs."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pandas as pd

from kbench.reporting.comparisons import ALPHA
from kbench.reporting.scores import Section, pareto_front
from kbench.reporting.standing import Standing
from kbench.reporting.styles import Style
from kbench.spec import slug_of

#: characters per line of a figure's title (wrapped, not clipped)
TITLE_WIDTH = 70


def critical_difference(section: Section, result: Standing, path: Path,
                        look: dict[str, Style]) -> str | None:
    """The critical-difference diagram of a section's standings over datasets (PNG at
    ``path``; Demšar 2006: Friedman's test, then Nemenyi's, scikit-posthocs) and its
    caption; None when Friedman's test does not reject (or cannot run): the diagram would
    only draw noise."""
    import scikit_posthocs as sp
    from matplotlib.figure import Figure

    if result.friedman_p is None or result.friedman_p >= ALPHA:
        return None
    standings = result.standings
    ranks = standings.mean()
    pvalues = sp.posthoc_nemenyi_friedman(standings.reset_index(drop=True))
    n = result.datasets
    fig = Figure(figsize=(8, 0.6 + 0.3 * len(ranks)))
    ax = fig.subplots()
    drawn = sp.critical_difference_diagram(ranks, pvalues, ax=ax, alpha=ALPHA,
                                           label_fmt_left="{label} ({rank:.2f})",
                                           label_fmt_right="({rank:.2f}) {label}",
                                           color_palette={s: look[s].colour for s in ranks.index})
    # drawn through a set's points (string-hash order): sorted, the same image every run
    for lines in drawn["crossbars"]:
        for line in lines:
            line.set_xdata(sorted(line.get_xdata()))
    ax.set_title(f"{section.label}: mean standing over {n} datasets", fontsize=9)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    caption = (f"Critical difference over {n} datasets: the table's mean standings (a dataset's "
               "standing is the sampler's mean place over its ranks); Friedman's test over the "
               f"datasets p = {result.friedman_p:.2g}; samplers joined by a bar are not "
               f"significantly different (Nemenyi over the {n} datasets, α = {ALPHA}).")
    if result.left_out:
        caption += " Not ranked (cells in fewer than half of the blocks): " + ", ".join(
            f"{sampler} ({count} of {result.blocks})"
            for sampler, count in sorted(result.left_out.items())) + "."
    return caption


def figure(cells: pd.DataFrame, metric: str, smaller: bool, title: str, dataset: str, path: Path,
           look: dict[str, Style]) -> None:
    """Metric against rank (mean, and the band from the smallest to the largest value over
    repetitions: with a handful of repetitions a bootstrap interval says no more) and
    against time (Pareto), each sampler in its ``look`` (kbench.reporting.styles); one
    legend, right of the figure, names both panels' (matplotlib alone: seaborn's plots took
    a third of the page's build for the same lines)."""
    import matplotlib.ticker
    from matplotlib.figure import Figure

    data = cells[cells["dataset"] == dataset]
    stats = data.groupby(["sampler", "rank"])["metric"].agg(["mean", "min", "max"])
    means = data.groupby(["sampler", "rank"])[["metric", "seconds"]].mean().reset_index()
    fig = Figure(figsize=(11, 4))
    left, right = fig.subplots(1, 2)
    for sampler, rows in stats.groupby(level="sampler"):
        style, ranks = look[sampler], rows.index.get_level_values("rank")
        line = {"color": style.colour, "marker": style.marker, "markersize": 5,
                "linestyle": (0, style.dashes) if style.dashes else "-"}
        left.plot(ranks, rows["mean"], label=sampler, **line)
        left.fill_between(ranks, rows["min"], rows["max"], color=style.colour, alpha=0.15,
                          linewidth=0)
        mine = means[means["sampler"] == sampler]
        right.plot(mine["seconds"], mine["metric"], color=style.colour, marker=style.marker,
                   markersize=5,
                   linestyle="none")
    exact = data.groupby("rank")["exact"].mean().dropna()  # per rank: KPCA's ℓ follows the rank
    if len(exact):
        left.plot(exact.index, exact.to_numpy(), color="black", linestyle="--", linewidth=1,
                  label="exact kernel")
    left.set(xscale="log", xlabel="rank", ylabel=metric)
    left.set_title(textwrap.fill(f"{title} on {dataset}: {metric} vs rank", TITLE_WIDTH),
                   fontsize=9)
    ranks = sorted(data["rank"].unique())
    left.set_xticks(ranks, [str(r) for r in ranks])
    left.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    if smaller and (data["metric"] > 0).all():
        left.set_yscale("log")
        _plain_numbers(left.yaxis)
    front = pareto_front(means, smaller)
    if len(front):
        right.plot(front["seconds"], front["metric"], color="black", linewidth=1,
                   label="Pareto front")
    right.set(xscale="log", xlabel="seconds (sample + features + fit)", ylabel=metric)
    right.set_title(f"{metric} vs time", fontsize=9)
    right.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    if smaller and (means["metric"] > 0).all():
        right.set_yscale("log")
        _plain_numbers(right.yaxis)
    handles = left.get_legend_handles_labels()[0] + right.get_legend_handles_labels()[0]
    right.legend(handles=handles, fontsize=7, loc="center left", bbox_to_anchor=(1.02, 0.5),
                 frameon=False)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)


def _plain_numbers(axis) -> None:
    """A log axis labelled 0.5, 0.6, … (not 5 × 10⁻¹): its decades as plain numbers, and its
    minor ticks too when it spans less than a decade (matplotlib labels them then)."""
    import matplotlib.ticker

    plain = matplotlib.ticker.FuncFormatter(lambda value, _: f"{value:.2g}")
    axis.set_major_formatter(plain)
    low, high = axis.get_view_interval()
    axis.set_minor_formatter(plain if 0 < low and high / low < 10
                             else matplotlib.ticker.NullFormatter())


def cost_figure(seconds: pd.DataFrame, rank: int, family: str, path: Path,
                look: dict[str, Style]) -> None:
    """Log-log seconds against n_train, one line per sampler in its ``look``."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6, 4))
    ax = fig.subplots()
    sizes = [float(c.removeprefix("n = ").replace(",", "")) for c in seconds.columns
             if c.startswith("n = ")]
    for sampler, row in seconds.drop(columns="slope in n").iterrows():
        style = look[sampler]
        ax.plot(sizes, row.to_numpy(dtype=float), color=style.colour, marker=style.marker,
                linestyle=(0, style.dashes) if style.dashes else "-",
                label=f"{sampler} ({seconds.loc[sampler, 'slope in n']:.2f})")
    ax.set(xscale="log", yscale="log", xlabel="n_train", ylabel="seconds (fit + features)",
           title=f"{family}: cost in n at rank {rank}\n(legend: log-log slope)")
    ax.legend(fontsize=7)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)


def figure_file(*labels: str) -> str:
    """A figure's file name from the labels it shows (a kind, a task label, a dataset):
    each label's collision-free slug, so two labels never share a file."""
    return "_".join(slug_of(label) for label in labels) + ".png"


#: the name :func:`figure_file` gives: slugs (a readable part, a 10-digit hash) joined by "_"
FIGURE_FILE = re.compile(r"[A-Za-z0-9.+_-]*-[0-9a-f]{10}(?:_[A-Za-z0-9.+_-]*-[0-9a-f]{10})*\.png")


def prune_figures(folder: Path, kept) -> list[Path]:
    """Remove the figures of an earlier page from ``folder``: files named as
    :func:`figure_file` names them that are not in ``kept`` (other files stay)."""
    kept = set(kept)
    stale = [path for path in sorted(Path(folder).glob("*.png"))
             if FIGURE_FILE.fullmatch(path.name) and path.name not in kept]
    for path in stale:
        path.unlink(missing_ok=True)
    return stale
