"""Which sampler for my data: one line per task answering it, each dataset's regime, and
the first place per rank budget, all read off the sections' standings
(kbench.reporting.standing), so every number a sentence quotes is in its table.

A line names a sampler only when the tests over datasets separate it from every other;
otherwise it names every sampler they do not separate from the first, in order of mean
standing ("no detectable difference among ..."), with the number of datasets behind it.

The regime of a dataset is read at the λ the exact kernel chose on validation data for the
λ-path task: n, d, the effective dimension d_eff = Σᵢ ℓᵢ(λ) and d_mof = n·maxᵢ ℓᵢ(λ)
(Bach 2013 §3; Alaoui & Mahoney 2015), and the coherence d_mof/d_eff, which is 1 when every
point is as influential as every other and grows with outliers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from kbench.reporting.comparisons import ALPHA, PROBABILITY
from kbench.reporting.regimes import decay
from kbench.reporting.scores import Section, chosen_rows, dataset_keys
from kbench.reporting.standing import MIN_REPETITIONS, Standing, counted
from kbench.spec import Spec
from kbench.tasks.selection import DEFAULT_SELECTION, SELECTED_ON

REGIME_TEXT = ("Each dataset: its source, the rows used (after rows with missing values were "
               "dropped, and subsampling), n_train, n_features after preprocessing, what the "
               "preprocessing of a table did, and its documentation; and at the λ the exact kernel "
               "chose on the validation rows for the named task (the median over repetitions; none "
               "without the exact kernel): d_eff = Σ ℓᵢ(λ), d_mof = n·max ℓᵢ(λ) and the coherence "
               "d_mof/d_eff (1: every point equally influential; large: a few points matter most); "
               "decay: the growth of d_eff per decade of λ there (1/α for eigenvalues decaying as "
               "i^(−α), near 0 for an exponential decay); λ at edge: the exact kernel's choice lay "
               "at an end of the λ path (a bound stopped its extension) in that many repetitions. "
               "Estimated: from the matrix-free baseline's Nyström approximation.")
WINNER_TEXT = ("Per task and (dataset, rank) block: the first place and its outcome: won (first "
               "alone, outside the task's region of practical equivalence, and a paired t-test "
               f"against the runner-up over ≥ {MIN_REPETITIONS} repetitions gives p < {ALPHA}, in "
               "its favour), ahead (first alone, without that), or tie (first place shared: the "
               "samplers named are equivalent); its mean, the runner-up, the margin (in the units "
               "of the equivalence region: relative, or points), in how many paired repetitions "
               "the first is ahead, and the t-test's p.")


@dataclass
class Advice:
    """The "which sampler for my data" section: one regime row per dataset, the winners per
    (dataset, task, rank) and the pattern statements."""

    regimes: pd.DataFrame
    winners: pd.DataFrame
    statements: list[str]


def regimes(frame: pd.DataFrame, found: list[Section]) -> pd.DataFrame:
    """Per dataset key: n_train, n_features, the λ the exact kernel chose for its λ-path task
    (median over repetitions) and what it was chosen on, d_eff, d_mof and d_mof/d_eff there
    (repetition means), how they were computed, and in how many repetitions that λ lay at an
    end of the path."""
    records = {}
    for section in found:
        task = section.task
        headline = task.headline
        if not task.uses_lams or headline.exact is None:
            continue
        rows = frame[(frame["task_label"] == section.label) & (frame["status"] == "ok")]
        if rows.empty or "d_eff" not in rows or headline.exact not in rows:
            continue
        rows = rows.assign(dataset=dataset_keys(rows), sampler=rows["sampler_label"])
        on_validation = ("selected_on" in rows
                         and (rows["selected_on"] == SELECTED_ON[DEFAULT_SELECTION]).any())
        chosen_on = task.validation.exact if on_validation else f"{headline.exact} (oracle)"
        rows = rows.dropna(subset=[headline.exact, "d_eff", "d_mof"])
        at = chosen_rows(rows, "lam_selected_exact", headline.exact, headline.smaller_is_better)
        paths = dict(tuple(rows[["dataset", "repetition", "sampler", "rank", "lam",
                                 "d_eff"]].groupby("dataset")))
        for key, group in at.groupby("dataset"):
            if key in records:
                continue
            per_rep = group.groupby("repetition").first()
            d_eff, d_mof = float(per_rep["d_eff"].mean()), float(per_rep["d_mof"].mean())
            by_rep = paths[key].groupby("repetition")
            cells = ((rep, _one_cell(by_rep.get_group(rep))) for rep in per_rep.index)
            growth = np.array([decay(cell["lam"], cell["d_eff"], per_rep.loc[rep, "lam"])
                               for rep, cell in cells])
            growth = (float(np.median(growth[np.isfinite(growth)])) if np.isfinite(growth).any()
                      else np.nan)
            method = (per_rep["diagnostics_method"].dropna() if "diagnostics_method" in per_rep
                      else pd.Series(dtype=str))
            edge = (per_rep["lam_at_edge_exact"] if "lam_at_edge_exact" in per_rep
                    else pd.Series(dtype=bool))
            records[key] = {
                "λ (exact)": float(per_rep["lam"].median()),
                "chosen on": f"{section.label} {chosen_on}",
                "λ at edge": f"{int(edge.fillna(False).astype(bool).sum())} of {len(per_rep)}",
                "d_eff": d_eff, "d_mof": d_mof, "d_mof/d_eff": d_mof / d_eff, "decay": growth,
                "estimated": bool(len(method) and str(method.iloc[0]).startswith("estimate")),
            }
    table = dataset_facts(frame).join(pd.DataFrame.from_dict(records, orient="index"), how="left")
    return table.rename_axis("dataset") if len(table) else table


def _one_cell(rows: pd.DataFrame) -> pd.DataFrame:
    """The λ path of the first cell among ``rows`` (the exact diagnostics every cell of a split
    shares)."""
    first = rows.iloc[0]
    return rows[(rows["sampler"] == first["sampler"]) & (rows["rank"] == first["rank"])]


FACTS = {"dataset_source": "source", "n_rows": "rows", "n_train": "n_train",
         "n_features": "n_features",
         "dataset_preprocessing": "preprocessing", "dataset_documentation": "documentation"}


#: the regime columns the page shows in its table (the others are folded under
#: it: :func:`split_regimes`)
REGIME_COLUMNS = ("n_train", "n_features", "λ (exact)", "λ at edge", "d_eff", "d_mof/d_eff",
                  "decay")


def short_names(keys) -> dict[str, str]:
    """Dataset keys as tables show them: the spec's provider and name, with its size n and its
    kernel when they are part of the key; the whole key where two would read the same."""
    named = {}
    for key in keys:
        label, _, kernel = str(key).partition(" [")
        try:
            spec = Spec.parse(label, "dataset")
        except ValueError:
            named[key] = str(key)
            continue
        n = spec.params.get("n")
        named[key] = (spec.name + (f" (n={n})" if n is not None else "")
                      + (f" [{kernel}" if kernel else ""))
    counts = pd.Series(list(named.values())).value_counts()
    return {key: name if counts[name] == 1 else str(key) for key, name in named.items()}


def split_regimes(regimes: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The regimes table as the page shows it: one narrow row per dataset (:data:`REGIME_COLUMNS`,
    short names) and, folded under it, each dataset's whole spec, source, preprocessing and
    documentation."""
    names = short_names(regimes.index)
    compact = regimes.reindex(columns=[c for c in REGIME_COLUMNS
                                       if c in regimes]).rename(index=names)
    facts = regimes.drop(columns=list(REGIME_COLUMNS) + ["chosen on", "d_mof", "estimated"],
                         errors="ignore")
    facts = facts.assign(spec=list(regimes.index)).rename(index=names)
    return (compact.rename_axis("dataset"),
            facts[["spec", *(c for c in facts if c != "spec")]].rename_axis("dataset"))


def regimes_title(regimes: pd.DataFrame) -> str:
    """The regimes table's heading: its datasets counted as units (a frame under several
    kernels is one dataset, kbench.reporting.standing.counted)."""
    return f"Regimes ({counted(pd.Series(regimes.index))})"


def dataset_facts(frame: pd.DataFrame) -> pd.DataFrame:
    """Per dataset key, what its rows record about it (:data:`FACTS`, those present)."""
    columns = [c for c in FACTS if c in frame]
    if frame.empty or not columns:
        return pd.DataFrame(index=pd.Index([], name="dataset"))
    facts = frame[columns].groupby(dataset_keys(frame)).first().rename(columns=FACTS)
    return facts.dropna(axis=1, how="all")


def winners(found: list[Section], standings: dict[str, Standing]) -> pd.DataFrame:
    """Per (dataset, task, rank) block: its first place and outcome, read off the section's
    standing."""
    parts = [standings[section.label].won.assign(task=section.label, metric=section.metric)
             for section in found if len(standings[section.label].won)]
    if not parts:
        return pd.DataFrame()
    columns = ["dataset", "task", "metric", "rank", "winner", "outcome", "value", "runner-up",
               "margin",
               "ahead in", "p (paired t)"]
    table = pd.concat(parts, ignore_index=True)[columns]
    return table.assign(margin=table["margin"].map(percent))


def percent(value: float) -> str:
    """A margin or gap as a percentage with two significant digits ("0.066%", "3.2%")."""
    if pd.isna(value):
        return ""
    return f"{float(f'{100 * value:.2g}'):g}%"


def gap_text(gap: float) -> str:
    """A relative gap to the exact kernel as words before "exact": "within 2.3% of", "4.5%
    better than", or "no estimate of its distance to"."""
    if not math.isfinite(gap):
        return "no estimate of its distance to"
    return f"within {percent(gap)} of" if gap >= 0 else f"{percent(-gap)} better than"


def answer(section: Section, result: Standing) -> str | None:
    """The one-line answer of a section: a sampler only when the tests over datasets separate
    it from every other (``kbench.reporting.comparisons.Comparison.separated``), else every
    sampler they do not separate from the first, in order of mean standing; with the number
    of datasets behind it and the failure rate. Every number is a cell of the section's table."""
    table, order = result.table, result.order
    n = result.datasets
    if not order:
        if len(section.uninformative) and section.cells.empty:
            return (f"{section.label}: every dataset is uninformative for this task (the exact "
                    "kernel does not beat its trivial predictor), so no sampler is ranked.")
        return None
    leader = order[0]
    if table.loc[leader, "failure rate"] == "100%":
        return (f"{section.label}: every cell failed, so no sampler can be recommended; its "
                "section lists the errors.")
    on = f"over {n} dataset{'s' if n != 1 else ''}"
    if len(order) < 2:
        return f"{section.label} ({section.metric}): {leader} is the only sampler ranked ({on})."
    tied = result.tied_with_leader()
    if len(tied) == 1:
        runner = result.comparisons[order[1]]
        return (f"{section.label} ({section.metric}): {leader}, ahead of every other sampler {on}: "
                f"against the runner-up {order[1]}, p = {runner.p_holm:.2g} (Wilcoxon–Holm), "
                f"P(better) = {runner.probabilities[0]:.2f}; mean standing "
                f"{table.loc[leader, 'mean standing']}, failure rate "
                f"{table.loc[leader, 'failure rate']}, "
                + (f"budgets won {table.loc[leader, 'budgets won']}."
                if "budgets won" in table else f"first alone in {table.loc[leader, 'ahead']} "
                                               "budgets."))
    separated = [s for s in order if s not in tied]
    said = (f"{section.label} ({section.metric}): no detectable difference among {', '.join(tied)} "
            f"{on} (mean standing {' vs '.join(table.loc[s, 'mean standing'] for s in tied)}; no "
            f"test separates them from {leader}: Wilcoxon–Holm p ≥ {ALPHA} and P(better) < "
            f"{PROBABILITY})")
    if separated:
        said += f"; the tests separate {leader} from (put it above) {', '.join(separated)}"
    return said + "."


def advise(frame: pd.DataFrame, found: list[Section], standings: dict[str, Standing]) -> Advice:
    statements = [line for section in found if (line := answer(section, standings[section.label]))]
    return Advice(regimes(frame, found), winners(found, standings), statements)
