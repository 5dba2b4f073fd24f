"""Exact kernel ridge regression along a λ path from one eigendecomposition of K: the solver of
the dense exact baseline (:mod:`kbench.exact.dense`) and of the validated bandwidth
(``sigma="cv"``, :mod:`kbench.kernels.bandwidth`), so that σ is chosen by the fits the tasks
compare with.

With K = U diag(s) Uᵀ, α(λ) = (K + nλI)⁻¹Y = U diag(1/(s + nλ)) UᵀY for every λ of the path
from the one decomposition: n×n by n×(L·c) products for the whole path.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg


def eigendecomposition(K: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(s, U) with K = U diag(s) Uᵀ, s descending and clipped at 0 (round-off leaves a PSD
    matrix's smallest eigenvalues slightly negative); ``K`` is overwritten."""
    s, U = scipy.linalg.eigh(K, overwrite_a=True, check_finite=False, driver="evd")
    return np.clip(s[::-1], 0.0, None), np.ascontiguousarray(U[:, ::-1])


def ridge_coefficients(s: np.ndarray, U: np.ndarray, Y: np.ndarray,
                       lams: np.ndarray) -> np.ndarray:
    """C (n×(L·c)) with α(λ_l) = (U C)[:, l·c:(l + 1)·c] = (K + nλ_l I)⁻¹Y for the targets Y
    (n×c) and the path ``lams`` (L), n the rows of K."""
    n = len(s)
    projected = U.T @ Y  # n×c
    shrink = 1.0 / (s[:, None] + n * lams[None, :])  # n×L
    return (shrink[:, :, None] * projected[:, None, :]).reshape(n, len(lams) * Y.shape[1])
