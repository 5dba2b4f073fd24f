"""Which sampler for my data: each dataset's regime, the winner per rank budget, and the
pattern across datasets, all computed from the result rows (nothing on the page is typed).

The regime of a dataset is read at its oracle λ (the λ of the path where the exact kernel
scores best on the λ-path task's headline): n, d, the effective dimension
d_eff = Σᵢ ℓᵢ(λ) and d_mof = n·maxᵢ ℓᵢ(λ) (Bach 2013 §3; Alaoui & Mahoney 2015), and the
coherence d_mof/d_eff, which is 1 when every point is as influential as every other and
grows with outliers. Column samplers that follow the leverage scores should pay off where
the coherence is high; the pattern statements measure whether they do.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from kbench.reporting.scores import (
    BASELINE,
    TOLERANCES,
    Section,
    dataset_keys,
    pair_scores,
    ranks_to_match,
)

#: where the statements split datasets into coherent and incoherent ones (d_mof/d_eff)
COHERENCE_SPLIT = 3.0
#: how close to the exact kernel "matching" means in the pattern statements
MATCH_TOLERANCE = TOLERANCES[1]

REGIME_TEXT = ("Each dataset at its oracle λ (where the exact kernel scores best on the named task): "
               "n_train, n_features, d_eff = Σ ℓᵢ(λ), d_mof = n·max ℓᵢ(λ) and the coherence d_mof/d_eff "
               "(1: every point equally influential; large: a few points matter most). Estimated: from the "
               "matrix-free baseline's Nyström approximation.")
WINNER_TEXT = ("Per task and rank: the sampler with the best mean over repetitions, its value, the runner-up, "
               "the relative margin between them, in how many paired repetitions the winner is ahead, and "
               "the winner's seconds (sample + features + fit).")


@dataclass
class Advice:
    """The "which sampler for my data" section: one regime row per dataset, the winners per
    (dataset, task, rank) and the pattern statements."""

    regimes: pd.DataFrame
    winners: pd.DataFrame
    statements: list[str]


def regimes(frame: pd.DataFrame, found: list[Section]) -> pd.DataFrame:
    """Per dataset key: n_train, n_features, the oracle λ of its λ-path task, d_eff, d_mof and
    d_mof/d_eff there (repetition means), and how they were computed."""
    records = {}
    for section in found:
        headline = section.task.headline
        if not section.task.uses_lams or headline.exact is None:
            continue
        rows = frame[(frame["task_label"] == section.label) & (frame["status"] == "ok")]
        if rows.empty or "d_eff" not in rows or headline.exact not in rows:
            continue
        rows = rows.assign(key=dataset_keys(rows)).dropna(subset=[headline.exact, "d_eff", "d_mof"])
        for key, group in rows.groupby("key"):
            if key in records:
                continue
            exact = group.groupby("lam")[headline.exact].mean()
            lam = exact.idxmin() if headline.smaller_is_better else exact.idxmax()
            at = group[group["lam"] == lam]
            d_eff, d_mof = float(at["d_eff"].mean()), float(at["d_mof"].mean())
            method = at["diagnostics_method"].dropna() if "diagnostics_method" in at else pd.Series(dtype=str)
            records[key] = {
                "n_train": int(group["n_train"].iloc[0]) if "n_train" in group else np.nan,
                "n_features": int(group["n_features"].iloc[0]) if "n_features" in group and
                group["n_features"].notna().any() else np.nan,
                "oracle λ": float(lam), "by": f"{section.label} {headline.exact}",
                "d_eff": d_eff, "d_mof": d_mof, "d_mof/d_eff": d_mof / d_eff,
                "estimated": bool(len(method) and str(method.iloc[0]).startswith("estimate")),
            }
    table = pd.DataFrame.from_dict(records, orient="index")
    return table.rename_axis("dataset") if len(table) else table


def winners(found: list[Section]) -> pd.DataFrame:
    """Per (dataset, task, rank): the sampler with the best repetition mean, its value, the
    runner-up, the relative margin between them, in how many paired repetitions the winner
    is ahead, and the winner's seconds (sample + features + fit)."""
    records = []
    for section in found:
        cells = section.cells
        if cells.empty:
            continue
        for (dataset, rank), block in cells.groupby(["dataset", "rank"]):
            means = block.groupby("sampler")[["metric", "seconds"]].mean().dropna(subset=["metric"])
            if means.empty:
                continue
            order = means["metric"].sort_values(ascending=section.smaller)
            best = order.index[0]
            record = {"dataset": dataset, "task": section.label, "metric": section.metric, "rank": int(rank),
                      "winner": best, "value": order.iloc[0],
                      "seconds": float(means.loc[best, "seconds"])}
            if len(order) > 1:
                second = order.index[1]
                ours = block[block["sampler"] == best].set_index("repetition")["metric"]
                theirs = block[block["sampler"] == second].set_index("repetition")["metric"]
                paired = ours.to_frame("ours").join(theirs.rename("theirs"), how="inner")
                ahead = pair_scores(paired["ours"], paired["theirs"], section.smaller) == 1
                scale = abs(order.iloc[1]) if order.iloc[1] != 0 else np.nan
                record.update({"runner-up": second, "relative margin": abs(order.iloc[0] - order.iloc[1]) / scale,
                               "ahead in": f"{int(ahead.sum())} of {len(paired)}"})
            records.append(record)
    return pd.DataFrame.from_records(records)


def ratios_to_uniform(section: Section, tolerance: float = MATCH_TOLERANCE) -> pd.DataFrame:
    """Per (sampler, dataset) where both it and uniform get within ``tolerance`` of the exact
    kernel at some swept rank: uniform's rank to match over the sampler's."""
    first = ranks_to_match(section.cells, section.smaller, tolerance)
    if first.empty or BASELINE not in first.index.get_level_values("sampler"):
        return pd.DataFrame(columns=["sampler", "dataset", "ratio"])
    first = first.rename("rank").reset_index()
    uniform = first[first["sampler"] == BASELINE].set_index("dataset")["rank"].rename("uniform")
    table = first[first["sampler"] != BASELINE].join(uniform, on="dataset")
    table = table[np.isfinite(table["rank"]) & np.isfinite(table["uniform"])]
    return table.assign(ratio=table["uniform"] / table["rank"])[["sampler", "dataset", "ratio"]]


def statements(found: list[Section], regime: pd.DataFrame, winner: pd.DataFrame) -> list[str]:
    """The pattern across datasets, each sentence computed from the rows."""
    said = []
    for section in found:
        if not section.task.uses_lams or section.task.headline.exact is None:
            continue
        ratios = ratios_to_uniform(section)
        ratios = ratios[ratios["dataset"].isin(regime.index)] if len(regime) else ratios.iloc[:0]
        if ratios.empty:
            continue
        coherence = regime["d_mof/d_eff"]
        groups = {f"d_mof/d_eff > {COHERENCE_SPLIT:g}": coherence[coherence > COHERENCE_SPLIT].index,
                  f"d_mof/d_eff ≤ {COHERENCE_SPLIT:g}": coherence[coherence <= COHERENCE_SPLIT].index}
        for where, datasets in groups.items():
            group = ratios[ratios["dataset"].isin(datasets)]
            if group.empty:
                continue
            median = group.groupby("sampler")["ratio"].agg(["median", "size"])
            median = median[median["size"] == group["dataset"].nunique()]  # reached on every dataset
            if median.empty:
                continue
            top = median["median"].max()
            best = ", ".join(median.index[median["median"] == top])
            names = ", ".join(sorted(group["dataset"].unique()))
            goal = (f"to get within {MATCH_TOLERANCE:.0%} of the exact kernel's {section.metric} (median over "
                    f"{group['dataset'].nunique()} dataset(s))")
            if top > 1:
                said.append(f"{section.label}, where {where} ({names}): {best} need(s) {top:.2g}× fewer columns "
                            f"than {BASELINE} {goal}.")
            else:
                said.append(f"{section.label}, where {where} ({names}): no sampler needs fewer columns than "
                            f"{BASELINE} {goal}; {(median['median'] == 1).sum()} need as many.")
    if len(winner):
        counts = winner["winner"].value_counts()
        top = counts.index[0]
        said.append(f"Over all {len(winner)} (dataset, task, rank) budgets, {top} wins {counts.iloc[0]}"
                    + (f", {counts.index[1]} {counts.iloc[1]}" if len(counts) > 1 else "") + ".")
    return said


def advise(frame: pd.DataFrame, found: list[Section]) -> Advice:
    regime = regimes(frame, found)
    winner = winners(found)
    return Advice(regime, winner, statements(found, regime, winner))
