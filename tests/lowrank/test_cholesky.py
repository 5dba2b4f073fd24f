"""The pivoted Cholesky factorisations of kbench.lowrank: the samplers' fits and the factor
the exact baseline's preconditioner and the advisor use."""

from __future__ import annotations

import numpy as np

import kbench
from kbench.lowrank.cholesky import greedy_cholesky, rp_cholesky_of


def test_the_factor_outside_the_sampler_is_the_samplers_fit():
    """The same calls in the same order on the same arrays: the same floats (no BLAS call of
    another shape is involved), and K − GGᵀ ⪰ 0 with its trace the residual recorded."""
    X = np.random.default_rng(1).standard_normal((300, 4))
    kernel = kbench.make_kernel("gaussian:sigma=median")  # unfitted: both fit a copy on X
    approx = kbench.make_sampler("rp-cholesky").fit(X, kernel, rank=40, seed=7)
    factor = rp_cholesky_of(X, kernel, 40, 7)
    assert np.array_equal(factor.train_features, approx.train_features)
    assert np.array_equal(factor.landmarks, approx.landmarks)
    fitted = kernel.__class__(sigma=factor.kernel.sigma_)
    G = factor.train_features
    residual = fitted(X, X) - G @ G.T
    # float64 round-off of a 300×300 Gram matrix with entries ≤ 1: eigenvalues above −1e-10
    assert np.linalg.eigvalsh(residual).min() > -1e-10
    np.testing.assert_allclose(np.trace(residual), factor.info["trace_residual"], atol=1e-9)


def test_greedy_pivots_are_the_largest_residuals_in_turn():
    """Against the one-pivot loop written out densely (Bach 2013 §3)."""
    X = np.random.default_rng(2).standard_normal((120, 3))
    kernel = kbench.make_kernel("laplacian:sigma=2")
    K = kernel(X, X)
    residual, pivots, columns = K.copy(), [], []
    for _ in range(15):
        i = int(np.argmax(np.diag(residual)))
        column = residual[:, i] / np.sqrt(residual[i, i])
        residual -= np.outer(column, column)
        pivots.append(i)
        columns.append(column)
    factor = greedy_cholesky(np.ascontiguousarray(X), kernel, 15, panel=4)
    assert factor.landmarks.tolist() == pivots
    # panels reorder the same sums: agreement to float64 round-off on entries ≤ 1
    np.testing.assert_allclose(factor.train_features, np.column_stack(columns), atol=1e-10)
