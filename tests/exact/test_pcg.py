"""Matrix-free exact KRR (kbench.exact.pcg) against dense solves."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest
import scipy.linalg

import kbench
from kbench.exact.dense import ExactBaseline
from kbench.exact.iterative import IterativeBaseline
from kbench.exact.pcg import kernel_product, solve_krr_path

N, LAMS = 2000, [1e-3, 1e-4, 1e-5]


@pytest.fixture(scope="module")
def problem():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((N + 300, 5))
    Y = np.column_stack([np.sin(X[:, 0]), X[:, 1] * X[:, 2]]) + 0.1 * rng.standard_normal((N + 300,
                                                                                           2))
    kernel = kbench.make_kernel("gaussian", sigma="median").fit(X[:N])
    return X[:N], Y[:N], X[N:], kernel, kernel(X[:N])


def test_blocked_products_equal_the_dense_ones(problem):
    X, _, X_test, kernel, K = problem
    V = np.random.default_rng(1).standard_normal((N, 3))
    # 0.5 MiB blocks: 32 rows of K at a time, the last block short
    np.testing.assert_allclose(kernel_product(kernel, X, V, block_mb=0.5), K @ V, rtol=1e-12,
                               atol=1e-12)
    np.testing.assert_allclose(kernel_product(kernel, X, V, Z=X_test, block_mb=0.5),
                               kernel(X_test, X) @ V,
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
        np.testing.assert_allclose(solution.train_predictions[:, j], K @ alpha, rtol=1e-6,
                                   atol=1e-8)
        test = kernel_product(kernel, X, solution.alpha[:, j], Z=X_test)
        np.testing.assert_allclose(test, K_test @ alpha, rtol=1e-6, atol=1e-8)
    # one pass per iteration of the slowest λ, plus the pass of the final residual
    assert solution.passes == solution.iterations.max() + 1
    # smaller λ, worse conditioned, more iterations
    assert (np.diff(solution.iterations) >= 0).all()


def test_the_preconditioner_saves_passes(problem):
    X, Y, _, kernel, _ = problem
    plain = solve_krr_path(kernel, X, Y[:, 0], LAMS, preconditioner_rank=0)
    preconditioned = solve_krr_path(kernel, X, Y[:, 0], LAMS, preconditioner_rank=200)
    assert plain.converged.all() and preconditioned.converged.all()
    assert preconditioned.passes * 3 < plain.passes, (preconditioned.passes, plain.passes)


def test_a_solve_out_of_passes_is_reported_not_converged(problem):
    X, Y, _, kernel, _ = problem
    solution = solve_krr_path(kernel, X, Y[:, 0], [1e-6], tol=1e-8, max_passes=3,
                              preconditioner_rank=0)
    assert solution.passes == 3 and solution.iterations.tolist() == [2]
    assert not solution.converged[0] and solution.residual[0] > 1e-8


def test_no_n_by_n_array_is_allocated(problem):
    X, Y, _, kernel, _ = problem
    tracemalloc.start()
    solve_krr_path(kernel, X, Y, LAMS, preconditioner_rank=100, block_mb=4)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < 0.5 * 8 * N**2, (f"peak {peak / 2**20:.0f} MiB, an n×n array is "
                                   f"{8 * N**2 / 2**20:.0f} MiB")


# -- the matrix-free exact baseline (kbench.exact.iterative.IterativeBaseline) in the tasks
# ----------
@pytest.fixture(scope="module")
def datasets():
    """A regression and a classification split, each with a dense and a matrix-free baseline."""
    out = {}
    for spec, kernel in (("sklearn:diabetes", "laplacian:sigma=median"),
                         ("sklearn:breast_cancer", "gaussian:sigma=median")):
        data = kbench.load_dataset(spec, seed=0)
        fitted = kbench.create(kernel, "kernel").fit(data.X_train)
        # a preconditioner of rank 100 < n_train: the solves iterate, the diagnostics are estimates
        out[data.task_type] = (data, fitted, ExactBaseline(data, fitted),
                               IterativeBaseline(data, fitted, preconditioner_rank=100))
    return out


def _rows(task, data, kernel, baseline, lams=LAMS):
    """A task's rows with ``baseline`` as the exact one (seeded into a workspace, under the key
    kbench.exact_baseline keeps it by)."""
    approx = kbench.make_sampler("uniform").fit(data.X_train, kernel, rank=30, seed=0)
    with kbench.Workspace() as workspace:
        workspace.get((data,), ("exact", kernel.spec()), lambda: baseline)
        return kbench.create(task, "task").evaluate(data, approx, kernel, lams=lams)


@pytest.mark.parametrize("task", ["krr", "classification", "kpca", "kpca:centered=true"])
def test_tasks_score_the_same_against_the_matrix_free_baseline(datasets, task):
    data, kernel, dense, iterative = datasets["regression" if task != "classification"
                                              else "binary"]
    expected = _rows(task, data, kernel, dense)
    rows = _rows(task, data, kernel, iterative)
    exact_columns = [k for k in expected[0] if k.endswith("_exact") or k.startswith("rel_excess")]
    if task == "kpca:centered=true":  # centering takes 1ᵀK1 from the exact baseline
        exact_columns = ["kpca_error_in"]
    assert exact_columns
    for want, got in zip(expected, rows):
        for key in exact_columns:
            assert got[key] == pytest.approx(want[key], rel=1e-6, abs=1e-12), key
        if task in ("krr", "classification"):
            assert want["exact_method"] == "dense" and want["diagnostics_method"] == "exact"
            assert (got["exact_method"] == "pcg" and got["exact_converged"]
                    and got["exact_residual"] <= 1e-8)
            assert got["diagnostics_method"] == "estimate: rank-100 Nyström"
            # a rank-r Nyström approximation L ≼ K has a smaller d_eff: a lower bound
            assert 0 < got["d_eff"] <= want["d_eff"] * (1 + 1e-9)


def test_a_matrix_free_solve_that_does_not_converge_is_not_reported_as_exact(datasets):
    data, kernel, _, _ = datasets["regression"]
    starved = IterativeBaseline(data, kernel, preconditioner_rank=100, max_passes=3)
    rows = _rows("krr", data, kernel, starved)
    assert not any(row["exact_converged"] for row in rows)
    assert all(np.isnan(row["test_mse_exact"]) and np.isnan(row["rel_excess_test_mse"])
               for row in rows)
    assert all(row["exact_residual"] > 1e-8 and row["exact_passes"] == 3 for row in rows)
    assert all(np.isfinite(row["test_mse"]) for row in rows)


def test_the_matrix_free_baseline_is_solved_once_and_shared_through_its_file(tmp_path, monkeypatch):
    """Above the dense limit, ``kbench prepare --exact --tasks --lams`` solves the λ path
    and computes the KPCA eigenpairs once; a run loading the file computes neither. The
    dense limit is lowered to 500 training rows, so that 600 are above it (the path is the
    same at any size: 6 000 rows cost 17 s)."""
    from kbench.sweep.context import prepare_exact
    from kbench.sweep.layout import exact_path

    for module in ("kbench.exact.baseline", "kbench.sweep.context", "kbench.sweep.worker"):
        monkeypatch.setattr(f"{module}.DENSE_MAX_N", 500)
    # n_train 600
    spec, kernel, lams = "synthetic:friedman1:n=1000", "gaussian:sigma=median", [1e-3, 1e-2]
    tasks = ["krr", "kpca:components=5"]
    path = prepare_exact(spec, kernel, 0, 0, tmp_path, 50_000,
                         [kbench.make_task("krr"), kbench.make_task("kpca", components=5)], lams)
    assert path == exact_path(tmp_path, spec, kernel, 0)
    assert {"solution0_train", "solution0_validation", "eigenpairs5_theta",
            "eigenpairs5_captured_test"} <= set(np.load(path).files)

    def computed_again(*args, **kwargs):
        raise AssertionError("the run computed the exact baseline again")

    monkeypatch.setattr("kbench.exact.iterative.solve_krr_path", computed_again)
    monkeypatch.setattr(IterativeBaseline, "_top_eigenpairs", computed_again)
    frame = kbench.run([spec], ["uniform"], tasks, [20], lams, repetitions=1, out=tmp_path / "out",
                       data_cache=tmp_path, progress=False)
    assert (frame.status == "ok").all() and (frame.n_train == 600).all()
    krr, kpca = frame[frame.task == "krr"], frame[frame.task == "kpca"]
    assert len(krr) == 2 and len(kpca) == 1
    assert (krr.exact_method == "pcg").all() and krr.exact_converged.all()
    assert (krr.exact_residual <= 1e-8).all() and krr.test_mse_exact.notna().all()
    assert kpca.kpca_error_in_exact.notna().all() and kpca.kpca_error_out_exact.notna().all()


def test_an_extended_path_solves_only_its_new_lambdas(monkeypatch):
    """A λ path extended by a decade (kbench.tasks.selection) costs the matrix-free baseline
    the new λ only; its validation and test predictions equal the dense baseline's (the
    solves' relative residual 1e-8 pins predictions to about 1e-6)."""
    import kbench.exact.iterative as iterative_module

    data = kbench.load_dataset("synthetic:friedman1:n=1000", seed=0)
    kernel = kbench.make_kernel("gaussian", sigma="median").fit(data.X_train)
    iterative, dense = IterativeBaseline(data, kernel), ExactBaseline(data, kernel)
    solved, solve = [], iterative_module.solve_krr_path

    def recording(kernel, X, Y, lams, **kwargs):
        solved.append(list(lams))
        return solve(kernel, X, Y, lams, **kwargs)

    monkeypatch.setattr(iterative_module, "solve_krr_path", recording)
    Y = data.y_train[:, None]
    iterative.ridge_path(Y, [1e-3, 1e-2])
    assert iterative.unsaved
    extended = iterative.ridge_path(Y, [1e-4, 1e-3, 1e-2])
    assert solved == [[1e-3, 1e-2], [1e-4]]
    reference = dense.ridge_path(Y, [1e-4, 1e-3, 1e-2])
    for part in ("validation", "test"):
        np.testing.assert_allclose(getattr(extended, part), getattr(reference, part), rtol=1e-5,
                                   atol=1e-7)
    assert [row["exact_converged"] for row in iterative.solver_path(Y, [1e-2, 1e-4])] == [True,
                                                                                          True]
