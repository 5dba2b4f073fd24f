"""Yang, Li, Mahdavi, Jin & Zhou (2012), "Nyström method vs random Fourier features".

Claims checked (workflows/config/papers/yang2012.yaml):
1. On two-balls (σ = 6) Nyström (uniform) beats RFF at every number of features m.
2. ‖K − K̃‖₂ decays like 1/m for Nyström and like 1/√m for RFF (fitted log-log slopes).
3. On bundled real data (breast_cancer) the accuracy gap is significant over the
   repetitions (paired Wilcoxon test per m, p < 0.05).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

TITLE = "Yang et al. (2012): Nyström method vs random Fourier features"
SUMMARY = ("Uniform Nyström against random Fourier features at equal feature count m, on the "
           "paper's two-balls data (σ = 6, 100 noise features) and on scikit-learn's "
           "breast_cancer.")
FULL_SIZE = "OpenML adult (id 1590) and covertype (id 1596), the paper's ADULT and COVTYPE"
FIGURES = ("classification", "approximation")
#: the result columns the claims read (kbench papers refuses rows without them)
COLUMNS = ("accuracy", "rel_spec_error")
#: the tasks whose cells hold COLUMNS (a config naming the paper runs them)
TASKS = ("classification", "approximation")
#: the samplers whose cells the claims read (by plugin name)
SAMPLERS = ("uniform", "rff")
#: the datasets its claims are about (provider:name; the reduced and the full-size configs')
DATASETS = ("synthetic:two-balls", "sklearn:breast_cancer", "openml:1590", "openml:1596")
SYNTHETIC = "synthetic:two-balls"
REAL = "sklearn:breast_cancer"
#: RFF's 1/√m: log-log slope in this band; Nyström's at least SLOPE_GAP steeper; the
#: Wilcoxon test's level
RFF_SLOPE = (-0.7, -0.3)
SLOPE_GAP = 0.3
ALPHA = 0.05
#: the fewest repetitions whose one-sided Wilcoxon test can reach p < ALPHA (all n differences
#: positive gives its smallest p, 2^−n)
MIN_REPETITIONS = math.ceil(math.log2(1 / ALPHA))
#: the claims, each named once
BEATS = "Nyström beats RFF at every m"
DECAY = "‖K − K̃‖₂ ~ 1/m (Nyström), 1/√m (RFF)"
SIGNIFICANT = "Nyström significantly better on real data"


def _best_accuracy(frame: pd.DataFrame, prefix: str) -> pd.DataFrame:
    rows = frame[(frame.task == "classification") & (frame.status == "ok")
                 & frame.dataset.str.startswith(prefix)]
    return rows.groupby(["sampler", "rank", "repetition"])["accuracy"].max().reset_index()


def _slope(rows: pd.DataFrame) -> float:
    mean = rows.groupby("rank")["rel_spec_error"].mean()
    return float(np.polyfit(np.log(mean.index.to_numpy(float)), np.log(mean.to_numpy()), 1)[0])


def claims(frame: pd.DataFrame) -> list[tuple[str, str, str, str, str]]:
    out = []
    accuracy = _best_accuracy(frame, SYNTHETIC)
    if accuracy.empty:
        out.append((BEATS, "two-balls", "no rows", "not measured",
                    "the sweep has no two-balls classification cells"))
    else:
        mean = accuracy.groupby(["rank", "sampler"])["accuracy"].mean().unstack()
        wins = (mean["uniform"] > mean["rff"]).sum()
        gap = (mean["uniform"] - mean["rff"])
        # one kernel per dataset (kbench.papers.evaluate)
        kernel = frame.loc[frame.dataset.str.startswith(SYNTHETIC), "kernel"].iloc[0]
        out.append((BEATS, f"two-balls, {kernel}, m ∈ {list(mean.index)}",
                    f"uniform ahead at {wins}/{len(mean)} m; accuracy gap {gap.min():.3f} to "
                    f"{gap.max():.3f}",
                    "holds" if wins == len(mean) else "does not hold", ""))
    spectral = frame[(frame.task == "approximation") & (frame.status == "ok")
                     & frame.dataset.str.startswith(SYNTHETIC)]
    if spectral.empty:
        out.append((DECAY, "two-balls", "no rows", "not measured", ""))
    else:
        nystrom, rff = (_slope(spectral[spectral.sampler == "uniform"]),
                        _slope(spectral[spectral.sampler == "rff"]))
        low, high = RFF_SLOPE
        holds = low <= rff <= high and nystrom <= rff - SLOPE_GAP
        reason = "" if holds else (
            "Nyström's decay depends on the eigengap; the paper's 1/m needs a large gap"
            if nystrom > rff - SLOPE_GAP else f"RFF slope outside [{low}, {high}]")
        out.append((DECAY, "two-balls, log-log slope of relative spectral error",
                    f"slopes: Nyström {nystrom:.2f}, RFF {rff:.2f}", "holds" if holds
                    else "does not hold", reason))
    out.append(_significant(_best_accuracy(frame, REAL)))
    return out


def _significant(real: pd.DataFrame) -> tuple[str, str, str, str, str]:
    """Claim 3: Nyström's accuracy above RFF's at every m, by a one-sided paired Wilcoxon
    test over the repetitions; not measured with fewer than MIN_REPETITIONS of them."""
    from scipy.stats import wilcoxon  # (scipy.stats loads when a page is written)

    if real.empty:
        return SIGNIFICANT, "breast_cancer", "no rows", "not measured", ""
    paired = real.pivot_table(index=["rank", "repetition"], columns="sampler", values="accuracy")
    reps = paired.index.get_level_values(1).nunique()
    setting = f"breast_cancer, {reps} repetition{'s' * (reps != 1)}, paired Wilcoxon"
    if reps < MIN_REPETITIONS:
        return (SIGNIFICANT, setting, "too few repetitions", "not measured",
                f"a one-sided Wilcoxon test over {reps} pairs cannot reach p < {ALPHA}: it needs "
                f"{MIN_REPETITIONS} repetitions or more")
    ranks = sorted(paired.index.get_level_values(0).unique())
    failing = []
    for rank in ranks:
        diff = (paired.loc[rank, "uniform"] - paired.loc[rank, "rff"]).to_numpy()
        if not (np.any(diff != 0) and diff.mean() > 0
                and wilcoxon(diff, alternative="greater").pvalue < ALPHA):
            failing.append(int(rank))
    return (SIGNIFICANT, setting, f"significant (p < {ALPHA}) at "
                                  f"{len(ranks) - len(failing)}/{len(ranks)} m",
            "holds" if not failing else "does not hold", f"not significant at m = {failing}"
            if failing else "")
