"""Verdicts by regime: the standing of each slice of a task's datasets, for the question a
practitioner asks (which sampler for data like mine), each with the number of datasets
behind it.

A dataset's regime is read at the λ its exact kernel chose on validation data
(kbench.reporting.advice.regimes): n_train; the effective dimension d_eff; the coherence
d_mof/d_eff; and the spectrum's decay, the growth of d_eff per decade of λ there,
g = −d log₁₀ d_eff / d log₁₀ λ. For eigenvalues μᵢ ∝ i^(−α), d_eff(λ) ∝ λ^(−1/α) (Bach 2013
§3.1), so g = 1/α; an exponential decay gives g → 0. The size slices are fixed (the board's
tiers); the others are the tertiles of the section's informative datasets, so that each
holds a third of them.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pandas as pd

from kbench.reporting.scores import Section
from kbench.reporting.standing import standing

#: the n_train edges of the size slices (the real board's tiers: ≤ 3 000, 12 000–20 000, full)
SIZE_EDGES = (5_000, 50_000)
#: the Bayesian signed-rank test's Monte Carlo samples in a slice (a quarter of the ranking's,
#: for a dozen slices a task: its probabilities to about ±0.006 instead of ±0.003)
SLICE_SAMPLES = 5_000
#: the regime columns sliced by tertiles, and how the page names them
SLICED = {"d_eff": "d_eff", "d_mof/d_eff": "coherence", "decay": "d_eff growth per decade (1/α)"}

BY_REGIME_TEXT = ("The standing of each slice of this task's informative datasets: by n_train (the "
                  "size tiers: how the verdict moves with n) and by the tertiles of d_eff, the "
                  "coherence d_mof/d_eff and the spectrum's decay (the growth of d_eff per decade "
                  "of λ, 1/α for eigenvalues decaying as i^(−α)), read at the λ the exact kernel "
                  "chose on validation data. First: the best mean standing; tied: the samplers no "
                  "test over the slice's datasets separates from the first (Wilcoxon–Holm and "
                  f"Bayesian signed-rank, as in the ranking above, with {SLICE_SAMPLES:,} "
                  "samples); Friedman's p over the slice.")


def decay(lams, d_eff, at: float) -> float:
    """The growth of d_eff per decade of λ at ``at`` (module docstring), from the values on
    a λ path: the secant over the decades either side of ``at`` that the path has."""
    lams, d_eff = np.asarray(lams, dtype=float), np.asarray(d_eff, dtype=float)
    keep = np.isfinite(lams) & np.isfinite(d_eff) & (lams > 0) & (d_eff > 0)
    lams, d_eff = lams[keep], d_eff[keep]
    if len(lams) < 2:
        return math.nan
    order = np.argsort(lams)
    logs, values = np.log10(lams[order]), np.log10(d_eff[order])
    centre = np.log10(at)
    near = np.abs(logs - centre) <= 1 + 1e-9
    if near.sum() < 2:
        return math.nan
    low, high = np.flatnonzero(near)[[0, -1]]
    return float(-(values[high] - values[low]) / (logs[high] - logs[low]))


def _edges(first: float, second: float) -> tuple[str, str]:
    """The tertile bounds with the fewest significant digits (two at least) that tell them
    apart: 10.07 and 10.2, not 10 and 10."""
    for digits in range(2, 8):
        shown = tuple(f"{float(f'{value:.{digits}g}'):g}" for value in (first, second))
        if shown[0] != shown[1]:
            break
    return shown


def slices(regimes: pd.DataFrame, datasets) -> dict[tuple[str, str], list[str]]:
    """(dimension, slice) → the datasets in it, among ``datasets`` (keys of ``regimes``)."""
    table = regimes.reindex(pd.Index(sorted(datasets)))
    found: dict[tuple[str, str], list[str]] = {}
    if "n_train" in table:
        n = pd.to_numeric(table["n_train"], errors="coerce")
        low, high = SIZE_EDGES
        for label, inside in ((f"n_train < {low:,}", n < low),
                              (f"{low:,} ≤ n_train < {high:,}", (n >= low) & (n < high)),
                              (f"n_train ≥ {high:,}", n >= high)):
            if inside.any():
                found["n_train", label] = list(table.index[inside])
    for column, name in SLICED.items():
        if column not in table:
            continue
        values = pd.to_numeric(table[column], errors="coerce").dropna()
        if len(values) < 6:  # fewer than two datasets a slice
            continue
        first, second = values.quantile([1 / 3, 2 / 3])
        low, high = _edges(first, second)
        for label, inside in ((f"{name} ≤ {low}", values <= first),
                              (f"{low} < {name} ≤ {high}", (values > first) & (values <= second)),
                              (f"{name} > {high}", values > second)):
            if inside.any():
                found[name, label] = list(values.index[inside])
    return found


def by_regime(section: Section, regimes: pd.DataFrame) -> pd.DataFrame:
    """Per slice of the section's informative datasets (:func:`slices`): its datasets, the
    first sampler, those tied with it, and Friedman's p."""
    rows = []
    for (dimension, label), keys in slices(regimes, section.cells["dataset"].unique()).items():
        result = standing(replace(section,
                                  cells=section.cells[section.cells["dataset"].isin(keys)]),
                          table=False,
                          samples=SLICE_SAMPLES)
        if not result.order:
            continue
        tied = result.tied_with_leader()
        rows.append({"regime": dimension, "slice": label, "datasets": result.datasets,
                     "first": result.leader,
                     "tied with the first": ", ".join(s for s in tied if s != result.leader)
                     or "none",
                     "Friedman p": math.nan if result.friedman_p is None else result.friedman_p})
    return pd.DataFrame(rows, columns=["regime", "slice", "datasets", "first",
                                       "tied with the first", "Friedman p"])
