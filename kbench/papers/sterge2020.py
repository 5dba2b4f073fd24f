"""Sterge, Sriperumbudur, Rosasco & Rudi (2020), "Gain with no pain: efficiency of kernel
PCA by Nyström sampling".

Claims checked (workflows/config/papers/sterge2020.yaml, digits, uncentered KPCA):
1. The Nyström reconstruction error is never below the exact one, for every ℓ.
2. Its excess over the exact error falls as the number of landmarks m grows.
3. With m ≈ √n·log n landmarks it matches exact KPCA within 5% for small ℓ (ℓ ≤ 5).
4. Run time: Nyström KPCA with m ≈ √n·log n (sampling + features + eigendecomposition)
   against exact KPCA (kernel matrix + its eigendecomposition), same process and BLAS.
"""

from __future__ import annotations

import math

import pandas as pd

TITLE = "Sterge et al. (2020): kernel PCA by Nyström sampling"
SUMMARY = ("Uncentered KPCA on scikit-learn's digits with uniform Nyström landmarks against exact "
           "KPCA (eigenvalues of K/n), in-sample reconstruction error, 20 repetitions.")
FULL_SIZE = "OpenML mnist_784 (id 554, 6000 rows, m up to √n·log n = 570)"
FIGURES = ("kpca",)
#: the result columns the claims read (kbench papers refuses rows without them)
COLUMNS = ("kpca_error_in",)
#: the tasks whose cells hold COLUMNS (a config naming the paper runs them)
TASKS = ("kpca",)
#: the samplers whose cells the claims read (by plugin name)
SAMPLERS = ("uniform",)
#: the datasets its claims are about (provider:name; the reduced and the full-size configs')
DATASETS = ("sklearn:digits", "openml:554")
#: "matches exact KPCA": relative excess at most this, for ℓ up to SMALL_ELL
MATCH_TOLERANCE = 0.05
SMALL_ELL = 5


def claims(frame: pd.DataFrame) -> list[tuple[str, str, str, str, str]]:
    rows = frame[(frame.task == "kpca") & (frame.status == "ok") & (frame.sampler == "uniform")]
    if rows.empty or "kpca_error_in_exact" not in rows:
        return [("Nyström KPCA error ≥ exact", "digits", "no rows", "not measured", "")]
    out = []
    below = (rows["kpca_error_in"] < rows["kpca_error_in_exact"] - 1e-9).sum()
    out.append(("Nyström KPCA error ≥ exact for every ℓ", f"digits, {len(rows)} (cell, ℓ) rows",
                f"{below} rows below the exact error (tolerance 1e-9)",
                "holds" if below == 0 else "does not hold", ""))
    reps = rows["repetition"].nunique()
    excess = rows.groupby(["components", "rank"])["rel_excess_kpca_error_in"].mean().unstack()
    ranks = [r for r in excess.columns if r < _root_log(rows)]
    falling = all((excess.loc[ell, ranks].diff().dropna() < 0).all() for ell in excess.index)
    trend = ("holds" if falling else "does not hold",
             "") if len(ranks) > 1 and excess[ranks].notna().all().all() else (
        "not measured", "a trend needs two m below √n·log n, each with an exact error above "
                        "round-off")
    out.append(("the excess falls as m grows", f"digits, m ∈ {ranks}, ℓ ∈ {list(excess.index)}, "
                                               f"{reps} repetitions",
                "mean relative excess at m = " + ", ".join(
                    f"{m}: {excess[m].mean():.3f}" for m in ranks) + " (averaged over ℓ)", *trend))
    m_star = max(excess.columns)
    small = excess.loc[[ell for ell in excess.index if ell <= SMALL_ELL], m_star]
    match = ("holds" if (small <= MATCH_TOLERANCE).all() else "does not hold",
             "") if small.notna().all() else (
        "not measured", "an exact error at round-off has no relative excess")
    # the claim is about m ≈ √n·log n: a much smaller m does not test it
    if not _root_log(rows) / 2 <= m_star:
        match = ("not measured", f"the largest m swept, {m_star}, is below half of √n·log n = "
                                 f"{_root_log(rows):.0f}")
    out.append((f"m ≈ √n·log n matches exact KPCA within {MATCH_TOLERANCE:.0%} (ℓ ≤ {SMALL_ELL})",
                f"digits, n = {int(rows['n_train'].iloc[0])}, m = {m_star}",
                "relative excess " + ", ".join(f"ℓ={ell}: {v:.4f}" for ell, v in small.items()),
                *match))
    if "time_exact_s" in rows:
        cells = rows[rows["rank"] == m_star].drop_duplicates(["rank", "repetition"])
        nystrom = cells[["time_sample_s", "time_features_s", "time_fit_s"]].sum(axis=1).median()
        exact = cells["time_exact_s"].median()
        faster = nystrom < exact
        out.append(("Nyström KPCA is faster than exact KPCA",
                    f"digits, n = {int(rows['n_train'].iloc[0])}, m = {m_star}, median over "
                    f"{len(cells)} repetitions, BLAS threads {cells['blas_threads'].iloc[0]}",
                    f"Nyström {nystrom:.3f} s, exact {exact:.3f} s ({exact / nystrom:.0f}× faster)"
                    if faster else f"Nyström {nystrom:.3f} s, exact {exact:.3f} s",
                    "holds" if faster else "does not hold", ""))
    return out


def _root_log(rows: pd.DataFrame) -> float:
    n = int(rows["n_train"].iloc[0])
    return math.sqrt(n) * math.log(n)
