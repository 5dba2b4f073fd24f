"""Which sampler for my data: one line per task answering it, each dataset's regime, and
the winner per rank budget, all read off the sections' standings
(kbench.reporting.standing), so every number a sentence quotes is in its table.

The regime of a dataset is read at its oracle λ (the λ of the path where the exact kernel
scores best on the λ-path task's headline): n, d, the effective dimension
d_eff = Σᵢ ℓᵢ(λ) and d_mof = n·maxᵢ ℓᵢ(λ) (Bach 2013 §3; Alaoui & Mahoney 2015), and the
coherence d_mof/d_eff, which is 1 when every point is as influential as every other and
grows with outliers.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from kbench.reporting.scores import Section, dataset_keys
from kbench.reporting.standing import ALPHA, Standing

REGIME_TEXT = ("Each dataset: its source, the rows used (after rows with missing values were dropped, and "
               "subsampling), n_train, n_features after preprocessing, what the preprocessing of a table did, "
               "and its documentation; and at its oracle λ "
               "(where the exact kernel scores best on the named task; none without the exact kernel): "
               "d_eff = Σ ℓᵢ(λ), d_mof = n·max ℓᵢ(λ) and the coherence d_mof/d_eff "
               "(1: every point equally influential; large: a few points matter most). Estimated: from the "
               "matrix-free baseline's Nyström approximation.")
WINNER_TEXT = ("Per task and (dataset, rank) block: the winner, first alone over two or more paired repetitions "
               "(\"tie: ...\" names the samplers sharing first place: within the noise floor or one standard "
               "error; \"tie: one repetition (X ahead)\" when there is no spread to tell a win from noise), its mean, the "
               "runner-up, the relative margin, and in how many paired repetitions the winner is ahead.")


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
                "oracle λ": float(lam), "by": f"{section.label} {headline.exact}",
                "d_eff": d_eff, "d_mof": d_mof, "d_mof/d_eff": d_mof / d_eff,
                "estimated": bool(len(method) and str(method.iloc[0]).startswith("estimate")),
            }
    table = dataset_facts(frame).join(pd.DataFrame.from_dict(records, orient="index"), how="left")
    return table.rename_axis("dataset") if len(table) else table


FACTS = {"dataset_source": "source", "n_rows": "rows", "n_train": "n_train", "n_features": "n_features",
         "dataset_preprocessing": "preprocessing", "dataset_documentation": "documentation"}


def dataset_facts(frame: pd.DataFrame) -> pd.DataFrame:
    """Per dataset key, what its rows record about it (:data:`FACTS`, those present)."""
    columns = [c for c in FACTS if c in frame]
    if frame.empty or not columns:
        return pd.DataFrame(index=pd.Index([], name="dataset"))
    facts = frame[columns].groupby(dataset_keys(frame)).first().rename(columns=FACTS)
    return facts.dropna(axis=1, how="all")


def winners(found: list[Section], standings: dict[str, Standing]) -> pd.DataFrame:
    """Per (dataset, task, rank) block: its winner, read off the section's standing."""
    parts = [standings[section.label].won.assign(task=section.label, metric=section.metric)
             for section in found if len(standings[section.label].won)]
    if not parts:
        return pd.DataFrame()
    columns = ["dataset", "task", "metric", "rank", "winner", "value", "runner-up", "relative margin", "ahead in"]
    return pd.concat(parts, ignore_index=True)[columns]


def answer(section: Section, result: Standing) -> str | None:
    """The one-line answer of a section: the sampler with the best mean rank, its evidence
    (blocks, datasets, failure rate, budgets won) and its doubt (can the Nemenyi test tell it
    from the runner-up?); every number is a cell of the section's table."""
    table = result.table
    ranked = [s for s in table.index if table.loc[s, "mean rank"] != "not ranked"]
    if not ranked:
        return None
    best, row = ranked[0], table.loc[ranked[0]]
    if row["failure rate"] == "100%":
        return f"{section.label}: every cell failed, so no sampler can be recommended; its section lists the errors."
    said = (f"{section.label} ({section.metric}): {best}, mean rank {row['mean rank']} over {result.ranked} "
            f"(dataset, rank) blocks on {result.datasets} dataset(s), failure rate {row['failure rate']}, "
            f"budgets won {row['budgets won']}")
    if len(ranked) < 2:
        return said + "; no other sampler is ranked."
    second = ranked[1]
    p = table.loc[second, "p vs best"]
    versus = f"{second} (mean rank {table.loc[second, 'mean rank']})"
    if result.pvalues is None:
        return said + f"; against {versus} there are too few blocks or samplers for a test: read it as a tie."
    if float(p) >= ALPHA:
        return said + f"; a tie with {versus}: the Nemenyi test cannot separate them (p vs best {p} ≥ {ALPHA})."
    return said + f"; ahead of {versus}, p vs best {p} < {ALPHA} (Nemenyi)."


def advise(frame: pd.DataFrame, found: list[Section], standings: dict[str, Standing]) -> Advice:
    statements = [line for section in found if (line := answer(section, standings[section.label]))]
    return Advice(regimes(frame, found), winners(found, standings), statements)
