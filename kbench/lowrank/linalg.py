"""Small dense linear-algebra and sampling helpers shared by samplers (and, later, tasks)."""

from __future__ import annotations

import numpy as np
import scipy.linalg
import scipy.sparse.linalg

#: below this order a dense eigendecomposition is as fast as Lanczos
DENSE_NORM_MAX_N = 200


def inverse_sqrt_psd(A: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """W with W Wᵀ = A⁺ for a PSD matrix A, from one eigendecomposition.

    Eigenvalues ≤ max(eig)·m·eps are dropped (docs/conventions.md), so the number of columns of W
    is the numerical rank of A. Columns come in decreasing eigenvalue order; returns
    (W, kept eigenvalues). LAPACK's divide-and-conquer driver (syevd, NumPy's eigh): on a
    500×500 gaussian kernel matrix it is faster than SciPy's default (syevr), and its
    eigenvectors are orthogonal to 3e-15 rather than 3e-13; NumPy's LAPACK is the library of
    the products around it (kbench._parallel.lapack_section says why that matters).
    """
    A = check_psd_input(A, "A")
    s, U = np.linalg.eigh(A)
    s, U = s[::-1], U[:, ::-1]
    cutoff = max(s[0], 0.0) * A.shape[0] * np.finfo(float).eps
    keep = s > cutoff
    return U[:, keep] / np.sqrt(s[keep]), s[keep]


def check_psd_input(A, name: str) -> np.ndarray:
    """``A`` as a float64 square matrix that may be PSD: finite, symmetric, with a nonnegative
    diagonal (a kernel matrix's k(x, x) ≥ 0), or a ValueError saying what it is instead."""
    A = np.asarray(A, dtype=float)
    if A.ndim != 2 or A.shape[0] != A.shape[1] or A.shape[0] == 0:
        raise ValueError(f"{name} must be a square matrix of at least one row, got shape "
                         f"{A.shape}.")
    if not np.isfinite(A).all() or not np.allclose(A, A.T) or (np.diag(A) < 0).any():
        raise ValueError(f"{name} must be a kernel matrix: finite, symmetric, with a nonnegative "
                         "diagonal (k(x, x) ≥ 0).")
    return A


def leverage_scores_from_eigh(s: np.ndarray, U: np.ndarray, ridge: float) -> np.ndarray:
    """Ridge leverage scores diag(K(K + ridge·I)⁻¹) = (U∘U)·(s/(s + ridge)) from K = U diag(s) Uᵀ.

    Negative eigenvalues (rounding) are clipped to 0; the form never computes
    1 − ridge·[(K + ridge·I)⁻¹]ᵢᵢ, which cancels for small scores (it loses every digit of scores
    near eps).
    """
    s = np.clip(s, 0.0, None)
    return (U * U) @ (s / (s + ridge))


def factor_diagnostics(F: np.ndarray, lams, block_rows: int = 8192) -> dict[str, np.ndarray]:
    """d_eff, d_mof and d_ave of L = FFᵀ (F n×r) at each λ of ``lams``, ridge nλ: with
    FᵀF = Q diag(e) Qᵀ, ℓᵢ(λ) = Σⱼ (FQ)ᵢⱼ²/(eⱼ + nλ), d_eff = Σⱼ eⱼ/(eⱼ + nλ) = Σᵢ ℓᵢ,
    d_mof = n·maxᵢ ℓᵢ and d_ave = Σⱼ (eⱼ/(eⱼ + nλ))². For L ≼ K each ℓᵢ(L) ≤ ℓᵢ(K) (A ↦ A(A + c)⁻¹
    is operator monotone), so d_eff and d_mof of L are lower bounds of K's. The scores are
    formed ``block_rows`` rows at a time: memory O(block_rows·r) beyond F."""
    n = F.shape[0]
    e, Q = np.linalg.eigh(F.T @ F)
    e = np.clip(e, 0.0, None)
    lams = np.atleast_1d(np.asarray(lams, dtype=float))
    inverse = 1.0 / (e[:, None] + n * lams[None, :])  # r×L
    ratio = e[:, None] * inverse
    largest = np.zeros(len(lams))
    for start in range(0, n, block_rows):
        FQ = F[start : start + block_rows] @ Q
        np.maximum(largest, ((FQ * FQ) @ inverse).max(axis=0), out=largest)
    return {"d_eff": ratio.sum(axis=0), "d_mof": n * largest, "d_ave": (ratio * ratio).sum(axis=0)}


def ridge_scores_cholesky(M: np.ndarray, ridge: float, overwrite: bool = False) -> np.ndarray:
    """diag(M(M + ridge·I)⁻¹) = 1 − ridge·diag((M + ridge·I)⁻¹) for a PSD M, by Cholesky.

    Two O(m³/3) factorisations (Cholesky, triangular inverse), 4× cheaper than an
    eigendecomposition. The subtraction costs relative accuracy on scores far below 1: the
    absolute error is about eps·(‖M‖ + ridge)/ridge, which is far below the resolution at
    which SQUEAK samples. Exact leverage scores (rls) use the eigh form instead.
    ``overwrite=True`` lets it factorise M in place (M is then garbage).
    """
    # LAPACK works in place, in Fortran order: Mᵀ is M (symmetric) in that order, uncopied
    A = M.T if overwrite and M.flags.c_contiguous else np.array(M, order="F")
    A[np.diag_indices_from(A)] += ridge
    L, info = scipy.linalg.lapack.dpotrf(A, lower=1, clean=1, overwrite_a=1)
    if info == 0:
        L, info = scipy.linalg.lapack.dtrtri(L, lower=1, overwrite_c=1)  # upper part stays 0
    if info != 0:
        raise np.linalg.LinAlgError(f"M + ridge·I is not positive definite (LAPACK info={info})")
    return np.clip(1.0 - ridge * np.einsum("kj,kj->j", L, L), 0.0, 1.0)


def sample_without_replacement(
    rng: np.random.Generator, weights: np.ndarray, size: int
) -> np.ndarray:
    """``size`` distinct indices drawn one after another with probability ∝ ``weights``.

    Efraimidis–Spirakis keys E/w (E ~ Exp(1), compared as log E − log w so that tiny
    weights cannot overflow): the ``size`` smallest keys are a successive sample without
    replacement, in O(n + size·log size). Entries of weight 0 are never drawn, so fewer
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


def symmetric_spectral_norm(A: np.ndarray) -> float:
    """‖A‖₂ = max |λᵢ| of a symmetric matrix: Lanczos (ARPACK, the largest-magnitude
    eigenvalue, converged to machine precision) costs a few dozen products A·v where a full
    eigendecomposition costs (4/3)n³; dense below :data:`DENSE_NORM_MAX_N` rows, or when
    Lanczos does not converge."""
    if len(A) > DENSE_NORM_MAX_N:
        try:
            found = scipy.sparse.linalg.eigsh(A, k=1, which="LM", return_eigenvectors=False,
                                              v0=np.ones(len(A)))
            return float(np.abs(found).max())
        except scipy.sparse.linalg.ArpackNoConvergence:
            pass
    return float(np.abs(np.linalg.eigvalsh(A)).max())
