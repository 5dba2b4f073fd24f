"""Tasks against exact references: scikit-learn KernelRidge, dense KPCA, dense traces."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from sklearn.kernel_ridge import KernelRidge

import kbench
from kbench.tasks.base import RidgePath
from kbench.tasks.classification import decide, encode

LAMS = np.logspace(-6, -1, 20)


@pytest.fixture(scope="module")
def regression():
    data = kbench.load_dataset("sklearn:diabetes", seed=0)
    kernel = kbench.make_kernel("gaussian", sigma="median").fit(data.X_train)
    return data, kernel


def test_krr_at_full_rank_equals_scikit_learn_kernel_ridge(regression):
    data, kernel = regression
    n = data.n_train
    approx = kbench.make_sampler("uniform").fit(data.X_train, kernel, rank=n, seed=0)
    Phi, Phi_test = approx.transform(data.X_train), approx.transform(data.X_test)
    for lam in (1e-4, 1e-2):
        path = RidgePath(Phi.T @ Phi, n, np.array([lam]))
        W = path.weights(Phi.T @ data.y_train[:, None])[0, :, 0]
        ours = Phi_test @ W
        sk = KernelRidge(alpha=n * lam, kernel="rbf", gamma=1 / (2 * kernel.sigma_**2))
        theirs = sk.fit(data.X_train, data.y_train).predict(data.X_test)
        np.testing.assert_allclose(ours, theirs, rtol=1e-6, atol=1e-6 * np.abs(theirs).max())
    rows = kbench.make_task("krr").evaluate(data, approx, kernel, lams=[1e-4, 1e-2])
    for row in rows:  # at rank n the approximation is the exact kernel
        assert row["test_mse"] == pytest.approx(row["test_mse_exact"], rel=1e-6)


def test_krr_path_equals_separate_solves(regression):
    data, kernel = regression
    approx = kbench.make_sampler("rp-cholesky").fit(data.X_train, kernel, rank=60, seed=0)
    rows = kbench.make_task("krr").evaluate(data, approx, kernel, lams=LAMS)
    Phi, Phi_test = approx.transform(data.X_train), approx.transform(data.X_test)
    n = data.n_train
    for row, lam in zip(rows, LAMS):
        w = np.linalg.solve(Phi.T @ Phi + n * lam * np.eye(Phi.shape[1]), Phi.T @ data.y_train)
        assert row["lam"] == lam
        assert row["test_mse"] == pytest.approx(np.mean((Phi_test @ w - data.y_test) ** 2),
                                                rel=1e-8)
        assert row["train_mse"] == pytest.approx(np.mean((Phi @ w - data.y_train) ** 2), rel=1e-8)


def test_krr_exact_baseline_and_fixed_design_risk():
    """Every λ of the path against dense solves: exact predictions, risk, d_eff, d_mof, d_ave."""
    data = kbench.load_dataset("synthetic:bach-periodic", n=400, seed=0)
    kernel = kbench.make_kernel("periodic-sobolev", beta=1)
    K = kernel(data.X_train)
    n, lams = data.n_train, [1e-5, 1e-4, 1e-3]
    approx = kbench.make_sampler("uniform").fit(data.X_train, kernel, rank=40, seed=0)
    rows = kbench.make_task("krr").evaluate(data, approx, kernel, lams=lams)
    for lam, row in zip(lams, rows):
        alpha = np.linalg.solve(K + n * lam * np.eye(n), data.y_train)
        exact_test = kernel(data.X_test, data.X_train) @ alpha
        assert row["test_mse_exact"] == pytest.approx(np.mean((exact_test - data.y_test) ** 2),
                                                      rel=1e-8)
        assert row["risk_fixed_design_exact"] == pytest.approx(
            np.mean((K @ alpha - data.f_train) ** 2), rel=1e-8)
        assert row["rel_excess_test_mse"] == pytest.approx(
            (row["test_mse"] - row["test_mse_exact"]) / row["test_mse_exact"])
        hat = np.linalg.solve(K + n * lam * np.eye(n), K)
        scores = np.diag(hat)
        assert row["d_eff"] == pytest.approx(scores.sum(), rel=1e-8)
        assert row["d_mof"] == pytest.approx(n * scores.max(), rel=1e-8)
        assert row["d_ave"] == pytest.approx(np.trace(hat @ hat), rel=1e-8)
        assert row["time_exact_s"] > 0


@pytest.mark.parametrize("sampler", ["uniform", "pivoted-cholesky", "squeak"])
def test_kpca_nystrom_error_is_never_below_exact(sampler, regression):
    data, kernel = regression
    m = 30
    approx = kbench.make_sampler(sampler).fit(data.X_train, kernel, rank=m, lam=1e-3, seed=0)
    m = approx.rank
    task = kbench.make_task("kpca", components=list(range(1, m + 1)))
    rows = task.evaluate(data, approx, kernel)
    K = kernel(data.X_train)
    eig = np.sort(np.linalg.eigvalsh(K))[::-1]
    n = data.n_train
    for row in rows:
        ell = row["components"]
        assert row["kpca_error_in"] >= row["kpca_error_in_exact"] - 1e-9
        assert row["kpca_error_in_exact"] == pytest.approx(eig[ell:].clip(0).sum() / n, abs=1e-10)
    Z = approx.transform(data.X_train)
    assert rows[-1]["kpca_error_in"] == pytest.approx(np.trace(K - Z @ Z.T) / n, abs=1e-10)


def test_kpca_held_out_formula_on_training_points_is_the_in_sample_error(regression):
    data, kernel = regression
    same = dataclasses.replace(data, X_test=data.X_train, y_test=data.y_train)
    approx = kbench.make_sampler("uniform").fit(same.X_train, kernel, rank=40, seed=1)
    for row in kbench.make_task("kpca", components=[1, 5, 20, 40]).evaluate(same, approx, kernel):
        assert row["kpca_error_out"] == pytest.approx(row["kpca_error_in"], abs=1e-10)
        assert row["kpca_error_out_exact"] == pytest.approx(row["kpca_error_in_exact"], abs=1e-8)


def test_kpca_random_features_also_get_their_feature_space_metric(regression):
    data, kernel = regression
    approx = kbench.make_sampler("rff").fit(data.X_train, kernel, rank=50, seed=0)
    row = kbench.make_task("kpca", components=[5]).evaluate(data, approx, kernel)[0]
    assert "kpca_error_out" not in row  # the RKHS projection does not exist for random features
    Z = approx.transform(data.X_train)
    eig = np.sort(np.linalg.eigvalsh(Z.T @ Z / len(Z)))[::-1]
    assert row["kpca_feature_error_in"] == pytest.approx(eig[5:].sum(), abs=1e-10)


def test_classification_at_full_rank_equals_the_exact_classifier():
    data = kbench.load_dataset("sklearn:wine", seed=0)
    kernel = kbench.make_kernel("gaussian", sigma="median").fit(data.X_train)
    approx = kbench.make_sampler("uniform").fit(data.X_train, kernel, rank=data.n_train, seed=0)
    rows = kbench.make_task("classification").evaluate(data, approx, kernel, lams=[1e-5, 1e-3])
    n = data.n_train
    K, K_test = kernel(data.X_train), kernel(data.X_test, data.X_train)
    Y = encode(data.y_train, data.classes)
    for row, lam in zip(rows, [1e-5, 1e-3]):
        predicted = decide(K_test @ np.linalg.solve(K + n * lam * np.eye(n), Y), data.classes)
        assert row["accuracy"] == row["accuracy_exact"] == np.mean(predicted == data.y_test)
        assert row["balanced_accuracy"] == pytest.approx(row["balanced_accuracy_exact"])


def test_uniform_rank_100_classifies_two_balls():
    data = kbench.load_dataset("synthetic:two-balls", n=4000, seed=0)
    kernel = kbench.make_kernel("gaussian", sigma=6.0)
    approx = kbench.make_sampler("uniform").fit(data.X_train, kernel, rank=100, seed=0)
    rows = kbench.make_task("classification", exact_max_n=1).evaluate(  # no exact baseline
        data, approx, kernel, lams=[1e-6, 1e-5, 1e-4])
    assert max(row["accuracy"] for row in rows) >= 0.97
    assert 0.4 < rows[0]["majority_baseline"] < 0.6 and 0.5 < rows[0]["auc"] <= 1


def test_logistic_learner_matches_scikit_learn():
    from sklearn.linear_model import LogisticRegression

    data = kbench.load_dataset("sklearn:breast_cancer", seed=0)
    kernel = kbench.make_kernel("gaussian", sigma="median").fit(data.X_train)
    approx = kbench.make_sampler("uniform").fit(data.X_train, kernel, rank=50, seed=0)
    lam = 1e-3
    row = kbench.make_task("classification", learner="logistic").evaluate(data, approx, kernel,
                                                                          lams=[lam])[0]
    Phi, Phi_test = approx.transform(data.X_train), approx.transform(data.X_test)
    # Σ log(1 + e^(−y wᵀφ)) + nλ‖w‖²  ⇔  scikit-learn's C = 1/(2nλ), no intercept
    sk = LogisticRegression(C=1 / (2 * data.n_train * lam), fit_intercept=False, tol=1e-12,
                            max_iter=10_000)
    sk.fit(Phi, data.y_train)
    assert row["accuracy"] == pytest.approx(np.mean(sk.predict(Phi_test) == data.y_test))
    assert row["auc"] == pytest.approx(
        __import__("sklearn.metrics").metrics.roc_auc_score(data.y_test, Phi_test @ sk.coef_[0]),
        abs=1e-6)


@pytest.mark.filterwarnings("ignore:y_pred contains classes not in y_true")
@pytest.mark.parametrize("seed", range(5))
def test_balanced_accuracy_and_auc_equal_scikit_learn(seed):
    from sklearn.metrics import balanced_accuracy_score, roc_auc_score

    from kbench.tasks.classification import balanced_accuracy, roc_auc

    rng = np.random.default_rng(seed)
    y_true = rng.integers(0, 4, 200)
    # a class y_true lacks
    y_pred = np.where(rng.random(200) < 0.6, y_true, rng.integers(0, 5, 200))
    assert balanced_accuracy(y_true,
                             y_pred) == pytest.approx(balanced_accuracy_score(y_true, y_pred),
                                                      abs=1e-12)
    positive = rng.random(200) < 0.3
    scores = np.round(rng.normal(size=200) + positive, 1)  # rounded: many ties
    assert roc_auc(positive, scores) == pytest.approx(roc_auc_score(positive, scores), abs=1e-12)


def test_approximation_trace_error_equals_the_dense_computation(regression):
    data, kernel = regression
    for sampler in ("uniform", "rp-cholesky"):
        approx = kbench.make_sampler(sampler).fit(data.X_train, kernel, rank=25, seed=0)
        row = kbench.make_task("approximation").evaluate(data, approx, kernel)[0]
        K = kernel(data.X_train)
        Z = approx.transform(data.X_train)
        assert row["rel_trace_error"] == pytest.approx(np.trace(K - Z @ Z.T) / np.trace(K),
                                                       abs=1e-10)
        E = K - Z @ Z.T
        assert row["rel_fro_error"] == pytest.approx(np.linalg.norm(E) / np.linalg.norm(K),
                                                     rel=1e-10)
        assert row["rel_spec_error"] == pytest.approx(np.linalg.norm(E, 2) / np.linalg.norm(K, 2),
                                                      rel=1e-8)
        assert row["kernel_spec_norm"] == pytest.approx(np.linalg.norm(K, 2), rel=1e-10)
    approx = kbench.make_sampler("rff").fit(data.X_train, kernel, rank=25, seed=0)
    row = kbench.make_task("approximation", max_n=100).evaluate(data, approx, kernel)[0]
    assert "rel_trace_error" not in row and row["approximation_points"] == 100


def test_bad_task_input(regression):
    data, kernel = regression
    approx = kbench.make_sampler("uniform").fit(data.X_train, kernel, rank=10, seed=0)
    for lams in ([], [0.0], [-1e-3], [float("nan")], "abc"):
        with pytest.raises(ValueError, match="lams (must be|is empty)"):
            kbench.make_task("krr").evaluate(data, approx, kernel, lams=lams)
    with pytest.raises(ValueError, match="needs a binary or multiclass dataset.*use the 'krr' "
                                         "task"):
        kbench.make_task("classification").evaluate(data, approx, kernel, lams=[1e-3])
    with pytest.raises(ValueError, match="learner must be 'least-squares' or 'logistic'"):
        kbench.make_task("classification", learner="svm")
    with pytest.raises(ValueError, match="components must be an integer >= 1"):
        kbench.make_task("kpca", components=[0, 2])
    with pytest.raises(ValueError, match="did you mean 'krr'"):
        kbench.make_task("kr")


def test_exact_baseline_is_computed_once_per_dataset_and_kernel_in_a_workspace(regression):
    data, kernel = regression
    task = kbench.make_task("krr")
    kernel.evals = 0
    with kbench.Workspace() as workspace:
        for sampler in ("uniform", "rp-cholesky", "rff"):
            approx = kbench.make_sampler(sampler).fit(data.X_train, kernel, rank=20, seed=0)
            evals_before = kernel.evals
            task.evaluate(data, approx, kernel, lams=[1e-3])
            spent = kernel.evals - evals_before
            if sampler == "uniform":  # the one eigendecomposition: K_train, K_test·train, diag
                n, t = data.n_train, len(data.X_test)
                assert spent >= n * n + t * n
            else:
                assert spent < data.n_train * data.n_train / 10
            assert len(workspace) == 2  # the baseline, and this fit's features
            workspace.release(approx)  # as a sweep's worker does when the job returns
        assert len(workspace) == 1
