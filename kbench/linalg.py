"""Small dense linear-algebra and sampling helpers shared by samplers (and, later, tasks)."""

from __future__ import annotations

import numpy as np
import scipy.linalg


def inverse_sqrt_psd(A: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """W with W Wᵀ = A⁺ for a PSD matrix A, from one eigendecomposition.

    Eigenvalues ≤ max(eig)·m·eps are dropped (DESIGN §2), so the number of columns of W
    is the numerical rank of A. Columns come in decreasing eigenvalue order; returns
    (W, kept eigenvalues).
    """
    s, U = scipy.linalg.eigh(A, overwrite_a=False, check_finite=False)
    s, U = s[::-1], U[:, ::-1]
    cutoff = max(s[0], 0.0) * A.shape[0] * np.finfo(float).eps
    keep = s > cutoff
    return U[:, keep] / np.sqrt(s[keep]), s[keep]


def leverage_scores_from_eigh(s: np.ndarray, U: np.ndarray, ridge: float) -> np.ndarray:
    """Ridge leverage scores diag(K(K + ridge·I)⁻¹) = (U∘U)·(s/(s + ridge)) from K = U diag(s) Uᵀ.

    Negative eigenvalues (rounding) are clipped to 0; the form never computes
    1 − ridge·[(K + ridge·I)⁻¹]ᵢᵢ, which cancels for small scores (ALGORITHMS.md, rls).
    """
    s = np.clip(s, 0.0, None)
    return (U * U) @ (s / (s + ridge))


def ridge_scores_cholesky(M: np.ndarray, ridge: float) -> np.ndarray:
    """diag(M(M + ridge·I)⁻¹) for a PSD M, by one Cholesky factorisation (no eigendecomposition).

    With M + ridge·I = LLᵀ, [M(M + ridge·I)⁻¹]_jj = Σ_k (L⁻¹M)_kj (L⁻¹)_kj: a sum of
    products rather than 1 − ridge·‖L⁻¹e_j‖², so small scores keep their relative accuracy.
    """
    A = M + ridge * np.eye(M.shape[0])
    L = scipy.linalg.cholesky(A, lower=True, check_finite=False)
    L_inv, info = scipy.linalg.lapack.dtrtri(L, lower=1)
    if info != 0:  # pragma: no cover - A is positive definite by construction
        raise np.linalg.LinAlgError(f"dtrtri failed with info={info}")
    L_inv = np.tril(L_inv)
    Y = L_inv @ M
    return np.clip(np.einsum("kj,kj->j", Y, L_inv), 0.0, None)


def sample_without_replacement(
    rng: np.random.Generator, weights: np.ndarray, size: int
) -> np.ndarray:
    """``size`` distinct indices drawn one after another with probability ∝ ``weights``.

    Efraimidis–Spirakis keys E/w (E ~ Exp(1), compared as log E − log w so that tiny
    weights cannot overflow): the ``size`` smallest keys are a successive sample without
    replacement, in O(n). Entries of weight 0 are never drawn, so fewer
    than ``size`` indices come back when fewer weights are positive.
    """
    weights = np.asarray(weights, dtype=float)
    positive = np.flatnonzero(weights > 0)
    keys = np.log(rng.exponential(size=positive.size)) - np.log(weights[positive])
    if size < positive.size:
        chosen = np.argpartition(keys, size)[:size]
    else:
        chosen = np.arange(positive.size)
    return positive[chosen[np.argsort(keys[chosen], kind="stable")]]
