"""Kernels: agreement with scikit-learn, closed forms, PSD, blockwise bit-equality, spectra."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.spatial.distance import cdist, pdist
from scipy.special import zeta
from sklearn.gaussian_process.kernels import Matern
from sklearn.metrics.pairwise import (
    laplacian_kernel,
    linear_kernel,
    polynomial_kernel,
    rbf_kernel,
)
from threadpoolctl import threadpool_limits

import kbench
from kbench.kernels import block_rows

rng = np.random.default_rng(0)
X = rng.standard_normal((150, 4))
Y = rng.standard_normal((70, 4))


@pytest.mark.parametrize(
    "name, params, reference",
    [
        ("gaussian", {"sigma": 1.7}, lambda A, B: rbf_kernel(A, B, gamma=1 / (2 * 1.7**2))),
        ("gaussian", {"gamma": 0.3}, lambda A, B: rbf_kernel(A, B, gamma=0.3)),
        ("laplacian", {"sigma": 2.0}, lambda A, B: laplacian_kernel(A, B, gamma=0.5)),
        ("laplacian", {"gamma": 0.7}, lambda A, B: laplacian_kernel(A, B, gamma=0.7)),
        ("linear", {}, linear_kernel),
        ("polynomial", {"degree": 3, "gamma": 0.5, "coef0": 1.5},
         lambda A, B: polynomial_kernel(A, B, degree=3, gamma=0.5, coef0=1.5)),
        ("polynomial", {}, lambda A, B: polynomial_kernel(A, B, degree=3, coef0=1)),
        ("matern", {"sigma": 1.3, "nu": 0.5}, Matern(length_scale=1.3, nu=0.5)),
        ("matern", {"sigma": 1.3, "nu": 1.5}, Matern(length_scale=1.3, nu=1.5)),
        ("matern", {"sigma": 0.8, "nu": 2.5}, Matern(length_scale=0.8, nu=2.5)),
    ],
)
def test_agrees_with_scikit_learn(name, params, reference):
    kernel = kbench.make_kernel(name, **params)
    expected = reference(X, Y)
    scale = max(1.0, np.abs(expected).max())
    np.testing.assert_allclose(kernel(X, Y), expected, rtol=0, atol=1e-12 * scale)
    # a few columns take the Euclidean kernels' other form (norms added to the GEMM's result)
    np.testing.assert_allclose(kernel(X, Y[:5]), expected[:, :5], rtol=0, atol=1e-12 * scale)
    np.testing.assert_allclose(kernel.diag(X), np.diag(reference(X, X)), rtol=0, atol=1e-12 * scale)


def _fourier_series(t: np.ndarray, mu, n_terms: int) -> np.ndarray:
    """Σ_{i ≤ N} 2 μ_i cos 2πit, summed from the small terms up."""
    i = np.arange(n_terms, 0, -1, dtype=float)
    return np.array([np.sum(2.0 * mu(i) * np.cos(2.0 * np.pi * i * ti)) for ti in t])


@pytest.mark.parametrize("beta", range(1, 9))
def test_periodic_sobolev_equals_its_fourier_series(beta):
    kernel = kbench.make_kernel("periodic-sobolev", beta=beta)
    x = np.linspace(0.05, 0.95, 19)[:, None]
    zero = np.zeros((1, 1))
    closed = kernel(x, zero)[:, 0]
    # Abel summation: |Σ_{i>N} a_i cos iθ| ≤ a_{N+1}/|sin(θ/2)| for decreasing a_i. With
    # a_i = 2 i^(-2β), N = 4e5 and |sin πt| ≥ sin(0.05π) the tail is < 8e-11.
    series = _fourier_series(x[:, 0], lambda i: i ** (-2.0 * beta), 400_000)
    np.testing.assert_allclose(closed, series, rtol=0, atol=1e-10)
    assert kernel(zero, zero)[0, 0] == pytest.approx(2 * zeta(2 * beta), abs=1e-10)
    assert kernel.diag_value == pytest.approx(2 * zeta(2 * beta), rel=1e-14)


@pytest.mark.parametrize("beta", range(1, 9))
def test_periodic_sobolev_is_psd(beta):
    x = np.random.default_rng(beta).uniform(0, 1, size=(200, 1))
    K = kbench.make_kernel("periodic-sobolev", beta=beta)(x)
    # rounding of a symmetric eigensolver: |error| ≲ n·eps·‖K‖ ≤ 200·2.2e-16·tr K
    assert np.linalg.eigvalsh(K).min() >= -1e-12 * np.trace(K)


def test_periodic_exp_equals_its_fourier_series():
    rho = 0.7
    kernel = kbench.make_kernel("periodic-exp", rho=rho)
    t = np.linspace(0.0, 0.95, 20)
    series = _fourier_series(t, lambda i: np.exp(-rho * i), 200)  # tail < e^(-140)
    np.testing.assert_allclose(kernel(t[:, None], np.zeros((1, 1)))[:, 0], series, atol=1e-12)
    np.testing.assert_allclose(kernel.diag_value, series[0], rtol=1e-13)


KERNELS = [
    ("gaussian", {"sigma": 1.0}),
    ("laplacian", {"sigma": 1.0}),
    ("matern", {"nu": 2.5}),
    ("polynomial", {}),
    ("linear", {}),
]


@pytest.mark.parametrize("name, params", KERNELS)
@pytest.mark.parametrize("m, d", [(1, 2), (7, 60), (500, 3)])
def test_blockwise_equals_one_shot_to_rounding(name, params, m, d):
    """However the rows are split into calls, every entry is the one-shot value up to the
    rounding of its inner products. A GEMM's result may depend on a row's position in its
    block (OpenBLAS's AVX-512 kernels do), so bits are not promised: an inner product of d
    terms is off by at most d·ε·‖a‖‖b‖ (Higham, Accuracy and Stability, Thm 3.5), and each
    kernel here changes by at most (1 + ‖a‖‖b‖)²-fold that (the cubic polynomial's slope)."""
    gen = np.random.default_rng(m + d)
    n = 2 * block_rows(m) + 404  # the one-shot call itself runs several blocks, the last one padded
    A, B = gen.standard_normal((n, d)), gen.standard_normal((m, d))
    kernel = kbench.make_kernel(name, **params)
    full = kernel(A, B)
    products = np.linalg.norm(A, axis=1)[:, None] * np.linalg.norm(B, axis=1)[None, :]
    tolerance = 4 * d * np.finfo(float).eps * (1 + products) ** 3
    for step in (37, 300, block_rows(m) + 1, n - 1):
        pieces = np.vstack([kernel(A[s : s + step], B) for s in range(0, len(A), step)])
        assert (np.abs(pieces - full) <= tolerance).all(), f"rows in slices of {step} differ"
    for i in gen.choice(len(A), size=20, replace=False):  # single rows, anywhere in a block
        assert (np.abs(kernel(A[i : i + 1], B)[0] - full[i]) <= tolerance[i]).all()


@pytest.mark.parametrize("name", ["gaussian", "matern"])
@pytest.mark.parametrize("sigma", [1e-10, 1e-7, 1e-3])
@pytest.mark.parametrize("m", [5, 200])  # a few columns, then the one-GEMM form
def test_a_tiny_length_scale_keeps_the_diagonal(name, sigma, m):
    """At σ ≪ ‖x‖ the GEMM form's round-off on ‖x − x‖² is multiplied by 1/σ²: before the
    round-off was zeroed, k(x, x) came out anywhere in [0, 1]. The reference takes the
    differences first (scipy's cdist), so it has no cancellation; both have the same zero
    pattern and agree to rounding (1e-12 absolute: 1e-3 gives exponents of order 1e6·ε·d)."""
    A = np.random.default_rng(5).standard_normal((m, 3)) * 10  # ‖x‖² ≈ 300
    kernel = kbench.make_kernel(name, sigma=sigma)
    K = kernel(A, A)
    assert (np.diag(K) == 1.0).all()
    r = cdist(A, A) / sigma
    reference = (np.exp(-(r**2) / 2) if name == "gaussian"
                 else (1 + math.sqrt(3) * r) * np.exp(-math.sqrt(3) * r))
    np.testing.assert_allclose(K, reference, rtol=0, atol=1e-12)


@pytest.mark.parametrize("name, params", KERNELS + [("periodic-sobolev", {"beta": 2})])
def test_diag_and_evaluation_counter(name, params):
    A = np.random.default_rng(3).uniform(size=(40, 1 if name.startswith("periodic") else 3))
    kernel = kbench.make_kernel(name, **params)
    K = kernel(A)
    assert kernel.evals == 40 * 40
    np.testing.assert_allclose(kernel.diag(A), np.diag(K), rtol=1e-13, atol=1e-13)
    assert kernel.evals == 40 * 40 + 40
    kernel(A[:5], A[:3])
    assert kernel.evals == 40 * 40 + 40 + 15


@pytest.mark.parametrize("name, params", KERNELS + [("periodic-sobolev", {"beta": 2})])
@pytest.mark.parametrize("m", [5, 200])  # Euclidean kernels: a few columns, then the one-GEMM form
def test_rows_of_a_pivot_panel_skip_the_padding_columns(name, params, m):
    """``_rows_into`` (a Cholesky panel's rows against a block of columns) gives the kernel's
    values up to the rounding of its inner products (the tolerance of the test above), zeros
    on the padding columns, and counts only the others."""
    d = 1 if name.startswith("periodic") else 3
    gen = np.random.default_rng(m)
    A, B = gen.uniform(size=(7, d)), gen.uniform(size=(m, d))
    kernel = kbench.make_kernel(name, **params)
    full = kernel(A, B)
    products = np.linalg.norm(A, axis=1)[:, None] * np.linalg.norm(B, axis=1)[None, :]
    tolerance = 4 * d * np.finfo(float).eps * (1 + products) ** 3
    padding = np.array([0, 3, m - 1])
    before, out = kernel.evals, np.full((7, m), np.nan)
    kernel._rows_into(A, B, out, padding=padding)
    assert kernel.evals - before == 7 * (m - 3)
    others = np.delete(np.arange(m), padding)
    assert (np.abs(out[:, others] - full[:, others]) <= tolerance[:, others]).all()
    assert (out[:, padding] == 0.0).all()
    kernel._rows_into(A, B, out)
    assert kernel.evals - before == 7 * (m - 3) + 7 * m
    assert (np.abs(out - full) <= tolerance).all()


def test_median_bandwidth_is_resolved_by_fit():
    kernel = kbench.make_kernel("gaussian", sigma="median")
    with pytest.raises(ValueError, match=r"kernel.fit\(X_train\)"):
        kernel(X)
    assert kernel.fit(X) is kernel
    assert kernel.sigma_ == pytest.approx(np.median(pdist(X)), rel=1e-14)
    assert kernel.sigma == "median" and kernel.get_params()["sigma"] == "median"  # as given
    assert kernel.spec() == f"gaussian:sigma={kernel.sigma_!r}"  # the resolved value
    lap = kbench.make_kernel("laplacian", sigma="median").fit(X)
    assert lap.sigma_ == pytest.approx(np.median(pdist(X, "cityblock")), rel=1e-14)
    kernel.fit(X[:20])  # refitting resolves again, on the new data
    assert kernel.sigma_ == pytest.approx(np.median(pdist(X[:20])), rel=1e-14)


def test_gamma_and_sigma_are_the_same_parameter():
    a = kbench.make_kernel("gaussian", gamma=0.125)
    assert a.sigma_ == pytest.approx(2.0) and a.get_params() == {"sigma": None, "gamma": 0.125}
    assert np.array_equal(a(X, Y), kbench.make_kernel("gaussian", sigma=2.0)(X, Y))


SPECTRAL = [
    ("gaussian", {"sigma": 1.5}, 3),
    ("laplacian", {"sigma": 1.5}, 3),
    ("matern", {"sigma": 1.5, "nu": 0.5}, 3),
    ("matern", {"sigma": 1.5, "nu": 1.5}, 3),
    ("matern", {"sigma": 1.5, "nu": 2.5}, 3),
    ("periodic-sobolev", {"beta": 2}, 1),
    ("periodic-exp", {"rho": 0.5}, 1),
]


@pytest.mark.parametrize("name, params, d", SPECTRAL)
def test_spectral_sampler_reproduces_the_kernel(name, params, d):
    """k(δ) = k(0)·E cos ωᵀδ: 200 000 draws, each term in [−1, 1], so the standard error is
    ≤ 1/√200000 = 0.0022 and 0.012 is a 5.5σ margin (the draws are seeded)."""
    kernel = kbench.make_kernel(name, **params)
    gen = np.random.default_rng(7)
    deltas = gen.uniform(-0.6, 0.6, size=(12, d))
    omega = kernel.sample_frequencies(gen, 200_000, d)
    estimate = kernel.diag_value * np.cos(omega @ deltas.T).mean(axis=0)
    exact = kernel(deltas, np.zeros((1, d)))[:, 0]
    np.testing.assert_allclose(estimate, exact, atol=0.012 * kernel.diag_value)
    if kernel.isotropic:
        norms = kernel.sample_frequency_norms(gen, 200_000, d)
        reference = np.linalg.norm(omega, axis=1)
        # same law: compare quartiles of |ω| with a tolerance of a few sampling errors
        np.testing.assert_allclose(np.quantile(norms, [0.25, 0.5, 0.75]),
                                   np.quantile(reference, [0.25, 0.5, 0.75]), rtol=0.02)


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: kbench.make_kernel("gaussian", sigma=-1.0), r"sigma must be a finite number in "
                                                             r"\[1e-150, 1e\+150\]"),
        (lambda: kbench.make_kernel("gaussian", sigma=1.0, gamma=1.0), "sigma or gamma, not both"),
        (lambda: kbench.make_kernel("matern", nu=1.0), "nu must be 0.5, 1.5 or 2.5"),
        (lambda: kbench.make_kernel("periodic-sobolev", beta=0), r"beta must be an integer in \[1, "
                                                                 r"50\]"),
        (lambda: kbench.make_kernel("periodic-sobolev")(X), "one feature"),
        (lambda: kbench.make_kernel("gaussian")(X, Y[:, :2]),
         "X has 4 features and Y has 2; a kernel compares rows of the same width"),
        (lambda: kbench.make_kernel("gaussian")(np.array([[np.nan, 1.0]])), "NaN or infinite"),
        (lambda: kbench.make_kernel("gaussian")(np.ones(3)), r"reshape\(-1, 1\)"),
        (lambda: kbench.make_kernel("gaussian", sigma="median").fit(np.ones((5, 2))),
         "two distinct points"),
        (lambda: kbench.make_kernel("gaussian", sigma="cv").fit(X), "sigma='cv' picks σ .* fitted "
                                                                    "without one"),
        (lambda: kbench.make_kernel("gaussian", sigma="median-ish"),
         "'median' or 'cv', .*got 'median-ish' \\(did you mean 'median'\\?\\)"),
        (lambda: kbench.make_kernel("polynomial").sample_frequencies(rng, 3, 2),
         "no spectral sampler"),
        (lambda: kbench.make_kernel("gaussian", sigmaa=1.0), "did you mean 'sigma'"),
    ],
)
def test_bad_kernel_input_is_a_clear_error(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_spec_round_trip_text():
    assert kbench.make_kernel("matern", sigma=2.0, nu=0.5).spec() == "matern:nu=0.5,sigma=2.0"
    assert math.isclose(kbench.make_kernel("periodic-exp", rho=2.0).diag_value,
                        2 * math.exp(-2) / (1 - math.exp(-2)))


def test_validated_bandwidth_errors_equal_scikit_learns_kernel_ridge():
    # the hold-out errors of the σ × λ grid against sklearn's KernelRidge on the same split
    # (α = m·λ: kbench's ridge is (K + mλI)); float64 solves of condition ≤ 1e6: 1e-7 relative
    from sklearn.kernel_ridge import KernelRidge

    from kbench.kernels.bandwidth import CV_LAMS, SUBSAMPLE, validation_errors
    rng = np.random.default_rng(4)
    X, y = rng.standard_normal((300, 3)), rng.standard_normal(300)
    kernel = kbench.make_kernel("gaussian", sigma=1.0)
    sigmas = np.array([0.7, 2.0])
    errors = validation_errors(kernel._with_sigma, X, y, sigmas)
    idx = np.random.default_rng(0).permutation(len(X))[:SUBSAMPLE]
    m = len(idx) - len(idx) // 5
    train, held = idx[:m], idx[m:]
    for i, sigma in enumerate(sigmas):
        for j, lam in enumerate(CV_LAMS[-4:], start=len(CV_LAMS) - 4):
            model = KernelRidge(alpha=m * lam, kernel="rbf", gamma=1 / (2 * sigma**2)).fit(X[train],
                                                                                           y[train])
            reference = np.mean((model.predict(X[held]) - y[held]) ** 2)
            np.testing.assert_allclose(errors[i, j], reference, rtol=1e-7)


def test_the_validated_bandwidth_solves_as_the_exact_baseline_does():
    # sigma=cv's errors are the exact baseline's validation errors on the same rows (one solver,
    # kbench.kernels.ridge): the same products in the same order, 1e-12 relative for BLAS's sums
    from dataclasses import replace

    from kbench.kernels.bandwidth import CV_LAMS, SUBSAMPLE, validation_errors
    data = kbench.load_dataset("synthetic:friedman1:n=400", seed=0)
    kernel = kbench.make_kernel("gaussian", sigma=1.0)
    errors = validation_errors(kernel._with_sigma, data.X_train, data.y_train, np.array([2.0]),
                               (data.X_val, data.y_val))
    rng = np.random.default_rng(0)  # the rows validation_errors draws
    idx = rng.permutation(data.n_train)[:SUBSAMPLE]
    held = rng.permutation(len(data.X_val))[:SUBSAMPLE]
    rows = replace(data, X_train=data.X_train[idx], y_train=data.y_train[idx],
                   X_val=data.X_val[held], y_val=data.y_val[held])
    exact = kbench.exact_baseline(rows, kbench.make_kernel("gaussian", sigma=2.0))
    predicted = exact.ridge_path(rows.y_train[:, None], CV_LAMS).validation[:, :, 0]
    expected = np.mean((predicted - rows.y_val) ** 2, axis=1)
    np.testing.assert_allclose(errors[0], expected, rtol=1e-12)


def test_a_validated_bandwidth_beats_the_median_on_unseen_points():
    # a fine-scale target: the median distance smooths it away, the validated σ does not
    rng = np.random.default_rng(5)
    X = rng.uniform(0, 1, (1600, 1))
    y = np.sin(12 * np.pi * X[:, 0]) + 0.1 * rng.standard_normal(1600)
    train, test = slice(0, 800), slice(800, None)
    errors = {}
    for sigma in ("median", "cv"):
        kernel = kbench.make_kernel("gaussian", sigma=sigma).fit(X[train], y[train])
        K = kernel(X[train])
        alpha = np.linalg.solve(K + 800 * 1e-6 * np.eye(800), y[train])
        errors[sigma] = np.mean((kernel(X[test], X[train]) @ alpha - y[test]) ** 2)
    assert kbench.make_kernel("gaussian", sigma="cv").fit(X[train], y[train]).sigma_ < \
        kbench.make_kernel("gaussian", sigma="median").fit(X[train]).sigma_ / 2
    assert errors["cv"] < 0.05 < errors["median"], errors


def test_blocks_spread_over_threads_give_the_values_of_one_thread():
    """A call of many blocks runs them in as many threads as BLAS has, each block's GEMM on
    one BLAS thread: the values are those of the same blocks run in turn on one BLAS thread
    (the same BLAS calls, so equal bit for bit), and a block's failure reaches the caller."""
    gen = np.random.default_rng(5)
    A, B = gen.standard_normal((5000, 6)), gen.standard_normal((1000, 6))
    kernel = kbench.make_kernel("gaussian", sigma=2.0)
    assert A.shape[0] * B.shape[0] >= kbench.kernels.base._MIN_THREADED_ENTRIES
    with threadpool_limits(limits=2):
        threaded = kernel(A, B)
    with threadpool_limits(limits=1):
        in_turn = kernel(A, B)
    np.testing.assert_array_equal(threaded, in_turn)
    A[4000, 0] = 1e200  # (γxᵀy + c)³ overflows in a block handled by a worker thread
    with threadpool_limits(limits=2), pytest.raises(FloatingPointError, match="non-finite"):
        kbench.make_kernel("polynomial")(A, B)
