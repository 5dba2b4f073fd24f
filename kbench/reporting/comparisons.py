"""The tests over datasets of a section's standings (kbench.reporting.standing, module
docstring 3): Friedman's test on the standings, and the leader against each other sampler,
the Wilcoxon signed-rank test of their per-dataset differences, Holm-adjusted, and the Bayesian
signed-rank test with the task's equivalence region as ROPE."""

from __future__ import annotations

import gc
import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from kbench.reporting.signed_rank import signed_rank_probabilities
from kbench.reporting.units import dataset_units

#: significance level of every test, and the posterior probability that separates two samplers
ALPHA = 0.05
PROBABILITY = 0.95
#: prior strength of the Bayesian signed-rank test: one pseudo-observation at zero difference
#: (baycomp's default, 0.5, reads P = 0.97 from a difference seen on only 2 datasets)
PRIOR = 1.0
#: posterior samples of the Bayesian signed-rank test (its probabilities to about ±0.003)
SAMPLES = 20_000


@dataclass
class Comparison:
    """The leader against one other sampler, over datasets."""

    sampler: str
    datasets: int
    better: int  # datasets where the leader is better, outside the equivalence region
    equivalent: int
    worse: int
    p_holm: float  # Wilcoxon signed-rank (two-sided), Holm-adjusted over the leader's comparisons
    probabilities: tuple[float, float, float]  # P(leader better), P(equivalent), P(other better)
    leader_ahead: bool = True  # the signed ranks favour the leader (W⁺ > W⁻)

    @property
    def separated(self) -> bool:
        """Whether the tests put the leader above this sampler (module docstring, 3)."""
        return (self.p_holm < ALPHA and self.leader_ahead) or self.probabilities[0] >= PROBABILITY


def dataset_differences(block_means: pd.DataFrame, ours: str, theirs: str, headline) -> pd.Series:
    """Per dataset, how much better ``ours`` is than ``theirs``: the mean over the dataset's
    complete blocks of ``Headline.difference`` of their repetition means (a failure: NaN,
    loses by 1); 0 where that mean lies inside the equivalence region."""
    gain = pd.Series(headline.difference(block_means[ours], block_means[theirs]),
                     index=block_means.index)
    per_dataset = gain.groupby(dataset_units(gain)).mean()
    return per_dataset.where(per_dataset.abs() > headline.equivalence, 0.0)


def friedman(standings: pd.DataFrame) -> float | None:
    """Friedman's test over datasets (None with fewer than 3 samplers or 2 datasets, or when
    every dataset is one tie)."""
    from scipy.stats import friedmanchisquare

    if standings.shape[1] < 3 or standings.shape[0] < 2 or (standings.nunique(axis=1) <= 1).all():
        return None
    p = friedmanchisquare(*(standings[c].to_numpy() for c in standings.columns)).pvalue
    return float(p) if math.isfinite(p) else None


def compare(leader: str, others: list[str], block_means: pd.DataFrame, headline, seed: int,
             samples: int = SAMPLES) -> dict[str, Comparison]:
    """The leader against each other sampler over datasets: Wilcoxon signed-rank (Holm over
    the comparisons) and the Bayesian signed-rank test with the equivalence region as ROPE."""
    from scipy.stats import rankdata, wilcoxon
    from statsmodels.stats.multitest import multipletests

    found, raw = {}, []
    for other in others:
        d = dataset_differences(block_means, leader, other, headline).to_numpy()
        if not np.any(d):
            p = 1.0
        else:
            p = float(wilcoxon(d, zero_method="zsplit").pvalue)
        probabilities = (math.nan, math.nan, math.nan)
        # baycomp: P(d < −rope), P(|d| ≤ rope), P(d > rope), d = the leader's advantage
        if len(d) >= 2:
            probs = signed_rank_probabilities(d, headline.equivalence, PRIOR, samples, seed)
            theirs, same, ours = probs if len(probs) == 3 else (probs[0], 0.0, probs[1])
            probabilities = (float(ours), float(same), float(theirs))
        raw.append(p)
        signed = rankdata(np.abs(d[d != 0])) * np.sign(d[d != 0])
        found[other] = Comparison(other, len(d), int((d > 0).sum()), int((d == 0).sum()),
                                  int((d < 0).sum()), p, probabilities, bool(signed.sum() > 0))
    if raw:
        # statsmodels' Holm runs gc.collect() each call: 60 ms over a page's frames, 0.2 ms frozen
        gc.freeze()
        try:
            adjusted = multipletests(raw, method="holm")[1]
        finally:
            gc.unfreeze()
        for other, p in zip(others, adjusted, strict=True):
            found[other].p_holm = float(p)
    return found
