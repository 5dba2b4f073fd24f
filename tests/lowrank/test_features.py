"""Streaming features: every task scores the same from row blocks as from whole matrices."""

from __future__ import annotations

import numpy as np
import pytest

import kbench
from kbench.errors import ContractViolation, Refused
from kbench.lowrank.features import Features, features_of
from kbench.lowrank.linalg import DENSE_NORM_MAX_N, symmetric_spectral_norm

#: a budget whose blocks hold a few dozen rows (p ≤ 40): many blocks, nothing kept
TINY_BUDGET_MB = 40 * 40 * 8 * 4 / 2**20
LAMS = np.logspace(-6, -1, 7)
TASKS = ("krr", "kpca", "kpca:centered=true", "approximation", "classification")


@pytest.fixture(autouse=True)
def workspace():
    """As in a sweep's job: the tasks share the features a first call made with a budget."""
    with kbench.Workspace() as opened:
        yield opened


def _score(data, kernel, sampler, task, budget_mb):
    approx = kbench.make_sampler(sampler).fit(data.X_train, kernel, rank=40, lam=1e-3, seed=0)
    if budget_mb is not None:
        features_of(data, approx, kernel, budget_mb)
    rows = kbench.create(task, "task").evaluate(data, approx, kernel, lams=LAMS)
    return rows, approx


def _metrics(row):
    return {k: v for k, v in row.items() if isinstance(v, float) and not k.startswith("time_")}


@pytest.fixture(scope="module")
def datasets():
    regression = kbench.load_dataset("synthetic:bach-periodic", n=900, seed=0)
    classes = kbench.load_dataset("sklearn:digits", seed=0)
    fitted = {}
    for data, kernel in ((regression, kbench.make_kernel("periodic-sobolev", beta=1)),
                         (classes, kbench.make_kernel("gaussian", sigma="median"))):
        fitted[data.task_type] = (data, kernel.fit(data.X_train))
    return fitted


@pytest.mark.parametrize("sampler", ["uniform", "rp-cholesky", "rff", "rls-fast"])
@pytest.mark.parametrize("task", TASKS)
def test_streamed_tasks_equal_whole_matrix_tasks(datasets, sampler, task):
    data, kernel = datasets["multiclass" if task == "classification" else "regression"]
    whole, _ = _score(data, kernel, sampler, task, None)
    streamed, approx = _score(data, kernel, sampler, task, TINY_BUDGET_MB)
    features = features_of(data, approx, kernel)
    assert features.test.block_rows < 100 and not features.test.fits_budget
    if approx.train_features is None:  # a by-product is handed over whole, never copied
        assert features.train.block_rows < 100 and not features.train.fits_budget
    else:
        assert next(features.train.blocks())[1] is approx.train_features
    assert len(whole) == len(streamed)
    for a, b in zip(whole, streamed):
        a, b = _metrics(a), _metrics(b)
        assert a.keys() == b.keys()
        for key in a:
            assert b[key] == pytest.approx(a[key], rel=1e-10, abs=1e-13, nan_ok=True), key


def test_training_errors_from_moments_equal_the_residuals(datasets):
    """train_mse and the fixed-design risk come from quadratic forms: checked against the
    residuals of the whole feature matrix, λ by λ."""
    data, kernel = datasets["regression"]
    rows, approx = _score(data, kernel, "uniform", "krr", TINY_BUDGET_MB)
    Phi, Phi_test = approx.transform(data.X_train), approx.transform(data.X_test)
    n = data.n_train
    for row, lam in zip(rows, LAMS):
        w = np.linalg.solve(Phi.T @ Phi + n * lam * np.eye(Phi.shape[1]), Phi.T @ data.y_train)
        assert row["train_mse"] == pytest.approx(np.mean((Phi @ w - data.y_train) ** 2), rel=1e-9)
        assert row["risk_fixed_design"] == pytest.approx(np.mean((Phi @ w - data.f_train) ** 2),
                                                         rel=1e-9)
        assert row["test_mse"] == pytest.approx(np.mean((Phi_test @ w - data.y_test) ** 2),
                                                rel=1e-9)


def test_moments_are_accumulated_over_blocks(datasets):
    data, kernel = datasets["multiclass"]
    approx = kbench.make_sampler("uniform").fit(data.X_train, kernel, rank=30, seed=0)
    moments = Features(data, approx, kernel, TINY_BUDGET_MB).moments()
    Phi = approx.transform(data.X_train)
    onehot = (data.y_train[:, None] == data.classes[None, :]).astype(float)
    np.testing.assert_allclose(moments.gram, Phi.T @ Phi, rtol=0,
                               atol=1e-12 * np.abs(Phi.T @ Phi).max())
    np.testing.assert_allclose(moments.cross["classes"], Phi.T @ onehot, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(moments.cross["ones"][:, 0], Phi.sum(axis=0), rtol=1e-12, atol=1e-12)
    assert moments.sum_squares == pytest.approx(np.sum(Phi * Phi), rel=1e-13)
    assert set(moments.cross) == {"ones", "classes"}


def test_logistic_learner_refuses_features_beyond_the_budget(datasets):
    data, kernel = datasets["multiclass"]
    approx = kbench.make_sampler("uniform").fit(data.X_train, kernel, rank=30, seed=0)
    features_of(data, approx, kernel, TINY_BUDGET_MB)
    with pytest.raises(Refused, match=r"logistic learner needs the \d+×30 training features"):
        kbench.make_task("classification", learner="logistic").evaluate(data, approx, kernel,
                                                                        lams=[1e-3])


def test_a_contract_breach_in_a_later_block_names_its_row(datasets):
    data, kernel = datasets["regression"]
    approx = kbench.make_sampler("uniform").fit(data.X_train, kernel, rank=40, seed=0)
    scaled = kbench.NystromMap(kernel, approx.X_landmarks, approx.landmarks,
                               approx.projection.copy())
    original = scaled._transform_chunk

    def breaks_on_row_500(X, out):  # rows from 500 on get doubled features
        original(X, out)
        out[np.isin(X[:, 0], data.X_train[500:, 0])] *= 2.0

    scaled._transform_chunk = breaks_on_row_500
    features = Features(data, scaled, kernel, TINY_BUDGET_MB)
    assert features.train.block_rows < 100
    with pytest.raises(ContractViolation, match=r"training rows .*\(row 5\d\d:"):
        features.moments()


@pytest.mark.parametrize("n", [DENSE_NORM_MAX_N - 1, 600])
@pytest.mark.parametrize("sampler", ["uniform", "rff"])
def test_the_spectral_norm_of_an_approximation_error_is_the_largest_eigenvalue_in_magnitude(n,
                                                                                            sampler):
    """K − L is PSD for a Nyström map and indefinite for random features: Lanczos finds the
    largest |λ| either way; converged to machine precision, it agrees with a dense
    eigendecomposition to 1e-10 relative (each product A·v is exact to ~n·ε)."""
    X = np.random.default_rng(n).standard_normal((n, 4))
    kernel = kbench.make_kernel("gaussian", sigma="median").fit(X)
    Z = kbench.make_sampler(sampler).fit(X, kernel, rank=20, seed=0).transform(X)
    error = kernel(X) - Z @ Z.T
    dense = np.abs(np.linalg.eigvalsh(error)).max()
    assert symmetric_spectral_norm(error) == pytest.approx(dense, rel=1e-10)
