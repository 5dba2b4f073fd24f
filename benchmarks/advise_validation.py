"""``kbench advise`` left out one dataset at a time, against the simple policies it replaces.

    python benchmarks/advise_validation.py advise     # the advice for every held-out dataset
    (seconds) python benchmarks/advise_validation.py measure    # sweep the advised ranks the board
    has not (resumes) python benchmarks/advise_validation.py table      # the table, from the
    evidence and the shipped cells python benchmarks/advise_validation.py check      # exit 1 unless
    the table regenerates byte for byte

Every dataset of the real-data board (results/real) is held out in turn with every dataset of
the same frame (kbench.reporting.units.unit_of), and advised from the rest of the published
evidence, at its regime as the board measured it (n_train, d_eff, coherence at the λ its
exact kernel chose on validation data). At the advised rank, every sampler of the board is
measured on it (the board's cells, or ``measure``'s where the rank is not one of the board's:
the same splits, λ path rule and repetitions), and each policy's regret is the relative gap
of its sampler's mean headline to the best sampler's mean there (a failed sampler: the worst
sampler's regret). The table is computed from ``kbench/advisor/evidence.parquet`` and
``benchmarks/results/advise_validation/cells.parquet`` alone, so it regenerates byte for byte.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

import kbench
from _common import update_readme
from kbench._files import atomic_path, write_text
from kbench.advisor import evidence as published_evidence
from kbench.advisor.answer import ADVISE_KERNEL, advise_on
from kbench.advisor.model import LEVEL, curves
from kbench.advisor.regime import Regime
from kbench.reporting.scores import task_of
from kbench.reporting.units import unit_of

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
OUT = HERE / "results" / "advise_validation"
CELLS = OUT / "cells.parquet"
BOARD = "results/real"
CONFIG = ROOT / "workflows" / "config" / "real.yaml"
POLICIES = ["advisor", "single best", "uniform", "rp-cholesky", "random", "oracle"]
WITHIN = 0.02
#: regrets on one held-out repetition at a time (:func:`held_out_repetitions`)
ONE_REPETITION = ["advisor, one repetition", "single best, one repetition", "own repetitions, one "
                                                                            "repetition"]


def regime_of(first: pd.Series) -> Regime:
    """A regime at the board's measured point: d_eff and d_mof at the λ its exact kernel chose
    (that λ best on the criterion, so the advice reads the regime there)."""
    lams = tuple(sorted({*published_evidence.path_of(first["path"]), float(first["lam"])}))
    scores = tuple(0.0 if np.isclose(v, first["lam"], rtol=1e-9) else 1.0 for v in lams)
    count = len(lams)
    return Regime(int(first["n_train"]), int(first["n_features"]), "validation", True, lams, scores,
                  (float(first["d_eff"]),) * count, (float(first["d_eff"]),) * count,
                  (float(first["d_mof"]),) * count, "as the board measured it", 0.0)


def advise_all(evidence: pd.DataFrame) -> pd.DataFrame:
    """One row per held-out dataset: its advice, left out with its frame."""
    cells = evidence[evidence["kernel"] == ADVISE_KERNEL]
    every = {task: curves(own, task_of(task).headline.smaller_is_better)
             for task, own in cells.groupby("task")}
    rows = []
    for (task, dataset), own in cells[cells["source"] == BOARD].groupby(["task", "dataset"]):
        unit = unit_of(dataset)
        advice = advise_on(every[task].without(unit), regime_of(own.iloc[0]), dataset, task,
                           ADVISE_KERNEL,
                           within=WITHIN)
        rec = advice.recommendation
        low, high = rec.interval(rec.best)
        rows.append({"task": task, "dataset": dataset, "unit": unit,
                     "n_train": int(own["n_train"].iloc[0]),
                     "close": advice.close, "rank": rec.rank, "advised": rec.best,
                     "single": rec.single,
                     "promised": rec.gap(rec.best), "low": low, "high": high,
                     "answer": advice.line})
    return pd.DataFrame(rows)


def measured(evidence: pd.DataFrame) -> pd.DataFrame:
    """The board's cells and the shipped cells at the ranks it had not swept."""
    board = evidence[(evidence["source"] == BOARD) & (evidence["kernel"] == ADVISE_KERNEL)]
    extra = pd.read_parquet(CELLS) if CELLS.exists() else board.iloc[:0]
    return pd.concat([board, extra], ignore_index=True)


def score(advised: pd.DataFrame, cells: pd.DataFrame) -> pd.DataFrame:
    """Each held-out dataset's regret under every policy, and the advised sampler's measured gap."""
    rows, groups = [], cells.groupby(["task", "dataset", "rank"]).indices
    for case in advised.itertuples():
        if (case.task, case.dataset, case.rank) not in groups:
            rows.append({"measured": False})
            continue
        own = cells.iloc[groups[case.task, case.dataset, case.rank]]
        smaller = task_of(case.task).headline.smaller_is_better
        found = curves(own.assign(source=BOARD), smaller)
        regret, gap = found.regret.iloc[0], found.gap.iloc[0]
        rows.append({"measured": True, "advisor": regret[case.advised],
                     "single best": regret[case.single],
                     "uniform": regret["uniform"], "rp-cholesky": regret["rp-cholesky"],
                     "random": regret.mean(),
                     "oracle": regret.min(), "gap": gap[case.advised],
                     **held_out_repetitions(own, smaller, case.advised, case.single)})
    return pd.concat([advised.reset_index(drop=True), pd.DataFrame(rows)], axis=1)


def held_out_repetitions(own: pd.DataFrame, smaller: bool, advised: str, single: str) -> dict:
    """The regret on one repetition at a time (to the best sampler on it) of the advised
    sampler, the single best, and the sampler best on the dataset's own other repetitions:
    how much of the oracle's lead any choice made before seeing that repetition can take."""
    values = own[own["status"] == "ok"].pivot_table(index="repetition", columns="sampler",
                                                    values="metric")
    values = values if smaller else -values
    found = []
    for held in values.index:
        test = values.loc[held]
        regret = ((test - test.min()) / abs(test.min())).fillna(
            (test - test.min()).max() / abs(test.min()))
        found.append([regret.get(advised, regret.max()), regret.get(single, regret.max()),
                      regret[values.drop(index=held).mean().idxmin()]])
    advisor, single_best, selected = np.mean(found, axis=0)
    return {"advisor, one repetition": advisor, "single best, one repetition": single_best,
            "own repetitions, one repetition": selected}


def summary(scored: pd.DataFrame) -> pd.DataFrame:
    """Per task and overall, over units (a frame's sizes averaged): regret statistics per
    policy, the share of the single-best-to-oracle gap closed, the promise reached, the
    interval's coverage, and how many were answered."""
    scored = scored.assign(reached=scored["gap"] <= scored["promised"],
                           covered=(scored["low"] <= scored["gap"])
                           & (scored["gap"] <= scored["high"]))
    units = scored.groupby(["task", "unit"])[[*POLICIES, *ONE_REPETITION, "reached",
                                              "covered"]].mean()
    rows = {}
    for label, part in [*units.groupby(level="task"), ("all", units)]:
        row = {"datasets": len(part)}
        for policy in POLICIES:
            values = 100 * part[policy]
            for statistic, value in (("mean", values.mean()), ("median", values.median()),
                                     ("p90", values.quantile(0.9))):
                # no "-0.00" for a round-off below zero
                row[(policy, statistic)] = round(value, 2) + 0.0
        single, advisor = part["single best"].mean(), part["advisor"].mean()
        oracle = part["oracle"].mean()
        row["gap closed"] = (single - advisor) / (single - oracle) if single > oracle else np.nan
        row["reached"], row["covered"] = part["reached"].mean(), part["covered"].mean()
        for column in ONE_REPETITION:
            row[column] = 100 * part[column].mean()
        rows[label] = row
    return pd.DataFrame(rows).T


def to_measure(advised: pd.DataFrame, cells: pd.DataFrame) -> pd.DataFrame:
    have = cells[["dataset", "task", "rank"]].drop_duplicates()
    merged = advised.merge(have, how="left", on=["dataset", "task", "rank"], indicator=True)
    return merged[merged["_merge"] == "left_only"][["task", "dataset", "n_train", "rank"]]


def measure(missing: pd.DataFrame) -> None:
    """Sweep every board sampler at each missing (dataset, task, rank) as the board does, and
    after each, collect every cell swept so far into ``CELLS`` (commit it: a batch done)."""
    board = yaml.safe_load(CONFIG.read_text())
    # the board's splits and exact baselines, where this checkout has them
    data = ROOT / BOARD / "data"
    for done, case in enumerate(missing.itertuples(), start=1):
        print(f"[{done}/{len(missing)}] {case.task} {case.dataset} at rank {case.rank}", flush=True)
        kbench.run([case.dataset], board["samplers"], [case.task], [case.rank], board["lams"],
                   board["repetitions"], kernel=board["kernel"], out=OUT / "sweep",
                   seed=board["seed"],
                   cell_timeout=board["cell_timeout"], memory_limit_mb=board["resources"]["mem_mb"],
                   jobs=2,
                   data_cache=data if data.exists() else None)
        collected = published_evidence.collect(kbench.read_results(OUT / "sweep"),
                                               "benchmarks/results/advise_validation")
        with atomic_path(CELLS) as partial:
            collected.to_parquet(partial, index=False)


def markdown(scored: pd.DataFrame, table: pd.DataFrame) -> str:
    lines = ["# kbench advise, left out one dataset at a time", "",
             "Written by `python benchmarks/advise_validation.py table` from "
             "`kbench/advisor/evidence.parquet` and "
             "`benchmarks/results/advise_validation/cells.parquet`. Every dataset of the real-data "
             f"board ({len(scored)} datasets of {scored['unit'].nunique()} frames) is advised from "
             f"the rest of the evidence, its frame left out, for a gap within {WITHIN:.0%} of "
             f"exact (kernel {ADVISE_KERNEL}); every board sampler is measured at the advised "
             "rank, 3 repetitions. Regret: the relative gap of a policy's sampler's mean headline "
             "to the best sampler's there, in %, over frames (a frame's sizes averaged). Reached: "
             f"the advised sampler's measured gap within the promise (the gap {LEVEL:.0%} of the "
             "neighbours reach). Covered: within the 90% interval (the 19 neighbours' span).", "",
             "| task | datasets | " + " | ".join(f"{p} mean / median / p90" for p in POLICIES)
             + " | gap closed | reached | covered |",
             "|---|---:|" + "---:|" * len(POLICIES) + "---:|---:|---:|"]
    for label, row in table.iterrows():
        cells = [f"{row[(p, 'mean')]:.2f} / {row[(p, 'median')]:.2f} / {row[(p, 'p90')]:.2f}"
                 for p in POLICIES]
        lines.append(f"| {label} | {row['datasets']:.0f} | " + " | ".join(cells)
                     + f" | {row['gap closed']:.0%} | {row['reached']:.0%} | {row['covered']:.0%} "
                       "|")
    lines += ["", "On one repetition at a time (the regret to the best sampler on that repetition, "
                  "mean over frames, in %): the advisor's, the single best's, and that of the "
                  "sampler best on the dataset's own other two repetitions, a choice no advice "
                  "made before running on the data can better. The share of the single best's lead "
                  "taken is (single best − choice) / single best.", "",
              "| task | advisor | single best | own repetitions | share taken by the advisor | by "
              "own repetitions |",
              "|---|---:|---:|---:|---:|---:|"]
    for label, row in table.iterrows():
        advisor, single, own = (row[c] for c in ONE_REPETITION)
        lines.append(f"| {label} | {advisor:.2f} | {single:.2f} | {own:.2f} | "
                     f"{(single - advisor) / single:.0%} | {(single - own) / single:.0%} |")
    answered = scored["rank"].notna().mean()
    lines += ["", f"Answered: {answered:.0%} of the datasets ({int((~scored['close']).sum())} from "
                  "neighbours beyond the close distance, with wider intervals). Advised ranks: "
                  + ", ".join(f"{r} ({c})"
                              for r, c in scored["rank"].value_counts().sort_index().items())
                  + ". Advised samplers: "
                  + ", ".join(f"{s} ({c})"
                              for s, c in scored["advised"].value_counts().sort_index().items())
              + "."]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("step", choices=["advise", "measure", "table", "check"])
    args = parser.parse_args()
    evidence = published_evidence.published()
    advised = advise_all(evidence)
    cells = measured(evidence)
    missing = to_measure(advised, cells)
    if args.step == "advise":
        print(advised.drop(columns="answer").to_string())
        print(f"{len(missing)} advised ranks to measure:\n{missing.to_string()}")
    elif args.step == "measure":
        measure(missing)
    else:
        if len(missing):
            raise SystemExit(f"{len(missing)} advised ranks are not measured yet: run the measure "
                             "step first")
        scored = score(advised, cells)
        text = markdown(scored, summary(scored))
        if args.step == "check":
            if text != (HERE / "advise_validation.md").read_text():
                raise SystemExit("benchmarks/advise_validation.md differs from the table its cells "
                                 "give")
            print("benchmarks/advise_validation.md regenerates byte for byte")
            return
        write_text(HERE / "advise_validation.md", text)
        update_readme("validation", text.split("\n", 2)[2], ROOT / "docs" / "advise.md")
        print(text)


if __name__ == "__main__":
    main()
