"""Shared fixtures: small seeded data and kernels."""

from __future__ import annotations

import numpy as np
import pytest

import kbench

COLUMN_SAMPLERS = ["uniform", "rls", "rls-fast", "squeak", "pivoted-cholesky", "rp-cholesky"]
FEATURE_SAMPLERS = ["rff", "orf"]
ALL_SAMPLERS = COLUMN_SAMPLERS + FEATURE_SAMPLERS


@pytest.fixture
def data300():
    """300 points in 5-D with a Gaussian kernel at the median bandwidth."""
    X = np.random.default_rng(1).standard_normal((300, 5))
    kernel = kbench.make_kernel("gaussian", sigma="median").fit(X)
    return X, kernel


def exact_leverage_scores(K: np.ndarray, lam: float) -> np.ndarray:
    """diag(K(K + nλI)⁻¹) by a dense solve (independent of kbench.linalg)."""
    n = K.shape[0]
    return np.diag(np.linalg.solve(K + n * lam * np.eye(n), K)).copy()
