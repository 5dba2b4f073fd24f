"""Matrix-free exact KRR (kbench.pcg) against dense solves."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest
import scipy.linalg

import kbench
from kbench.pcg import kernel_product, solve_krr_path

N, LAMS = 2000, [1e-3, 1e-4, 1e-5]


@pytest.fixture(scope="module")
def problem():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((N + 300, 5))
    Y = np.column_stack([np.sin(X[:, 0]), X[:, 1] * X[:, 2]]) + 0.1 * rng.standard_normal((N + 300, 2))
    kernel = kbench.make_kernel("gaussian", sigma="median").fit(X[:N])
    return X[:N], Y[:N], X[N:], kernel, kernel(X[:N])


def test_blocked_products_equal_the_dense_ones(problem):
    X, _, X_test, kernel, K = problem
    V = np.random.default_rng(1).standard_normal((N, 3))
    # 0.5 MiB blocks: 32 rows of K at a time, the last block short
    np.testing.assert_allclose(kernel_product(kernel, X, V, block_mb=0.5), K @ V, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(kernel_product(kernel, X, V, Z=X_test, block_mb=0.5), kernel(X_test, X) @ V,
                               rtol=1e-12, atol=1e-12)


def test_the_path_equals_dense_solves_in_its_predictions(problem):
    """Predictions K α and K(test, X) α, which a relative residual of 1e-10 pins to about
    that (the dual weights themselves carry the condition number of K + nλI)."""
    X, Y, X_test, kernel, K = problem
    solution = solve_krr_path(kernel, X, Y, LAMS, tol=1e-10, preconditioner_rank=200)
    assert solution.converged.all() and (solution.residual <= 1e-10).all(), solution.residual
    K_test = kernel(X_test, X)
    for j, lam in enumerate(LAMS):
        alpha = scipy.linalg.solve(K + N * lam * np.eye(N), Y, assume_a="pos")
        np.testing.assert_allclose(solution.train_predictions[:, j], K @ alpha, rtol=1e-6, atol=1e-8)
        test = kernel_product(kernel, X, solution.alpha[:, j], Z=X_test)
        np.testing.assert_allclose(test, K_test @ alpha, rtol=1e-6, atol=1e-8)
    # one pass per iteration of the slowest λ, plus the pass of the final residual
    assert solution.passes == solution.iterations.max() + 1
    assert (np.diff(solution.iterations) >= 0).all()  # smaller λ, worse conditioned, more iterations


def test_the_preconditioner_saves_passes(problem):
    X, Y, _, kernel, _ = problem
    plain = solve_krr_path(kernel, X, Y[:, 0], LAMS, preconditioner_rank=0)
    preconditioned = solve_krr_path(kernel, X, Y[:, 0], LAMS, preconditioner_rank=200)
    assert plain.converged.all() and preconditioned.converged.all()
    assert preconditioned.passes * 3 < plain.passes, (preconditioned.passes, plain.passes)


def test_a_solve_out_of_passes_is_reported_not_converged(problem):
    X, Y, _, kernel, _ = problem
    solution = solve_krr_path(kernel, X, Y[:, 0], [1e-6], tol=1e-8, max_passes=3, preconditioner_rank=0)
    assert solution.passes == 3 and solution.iterations.tolist() == [2]
    assert not solution.converged[0] and solution.residual[0] > 1e-8


def test_no_n_by_n_array_is_allocated(problem):
    X, Y, _, kernel, _ = problem
    tracemalloc.start()
    solve_krr_path(kernel, X, Y, LAMS, preconditioner_rank=100, block_mb=4)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < 0.5 * 8 * N**2, f"peak {peak / 2**20:.0f} MiB, an n×n array is {8 * N**2 / 2**20:.0f} MiB"
