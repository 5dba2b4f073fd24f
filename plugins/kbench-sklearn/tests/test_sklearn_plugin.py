"""scikit-learn's kernel approximations load as kbench samplers and translate kbench's
kernel conventions exactly: the same landmarks give the same Gram matrix as kbench's own
Nyström map, and the random-feature maps are unbiased for kbench's kernel."""

import numpy as np
import pytest

import kbench
from kbench.testing import CHECKS, check_sampler

SAMPLERS = {"sklearn-nystroem": "gaussian:sigma=median", "sklearn-rff": "gaussian:sigma=median",
            "sklearn-tensorsketch": "polynomial:degree=2"}


def _data(n=300, d=5, seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n, d)), rng.standard_normal((50, d))


@pytest.mark.parametrize("name", SAMPLERS)
def test_registered_by_its_own_package(name):
    assert kbench.list_plugins("sampler")[name].source == "kbench-sklearn"


@pytest.mark.parametrize("name", SAMPLERS)
def test_passes_the_conformance_kit(name):
    assert len(check_sampler(name, kernel=SAMPLERS[name])) == len(CHECKS)


@pytest.mark.parametrize("kernel, rank", [("gaussian:sigma=median", 40), ("laplacian:sigma=3", 40),
                                          ("polynomial:degree=2,coef0=0.5", 15), ("linear", 5)])
def test_nystroem_gives_kbench_nystrom_gram_on_its_landmarks(kernel, rank):
    """Same landmarks, same Gram (train × train and test × train) to 1e-10: the σ → γ
    translation and the K_mm^{-1/2} normalisation agree with kbench's ``uniform``."""
    X, X_test = _data()
    k = kbench.create(kernel, "kernel").fit(X)
    approx = kbench.make_sampler("sklearn-nystroem").fit(X, k, rank=rank, seed=3)
    assert approx.info["kernel_evals"] == rank * rank
    reference = kbench.plugin.nystrom(X, k, approx.landmarks)
    assert reference.rank == rank  # K_mm is well conditioned: nothing thresholded
    for rows in (X, X_test):
        Z, R = approx.transform(rows), reference.transform(rows)
        scale = np.abs(k(rows, X)).max()
        assert (np.abs(Z @ approx.transform(X).T - R @ reference.transform(X).T).max()
                <= 1e-10 * scale)


def _unbiasedness_z(name, kernel, p, seeds=200, n=30):
    """max over entries of |mean ZZᵀ − K| / (standard error of the mean) over ``seeds`` fits."""
    X, _ = _data(n=n, d=4)
    k = kbench.create(kernel, "kernel").fit(X)
    grams = np.stack([(lambda Z: Z @ Z.T)(kbench.make_sampler(name).fit(X, k, rank=p,
                                                                        seed=s).transform(X))
                      for s in range(seeds)])
    error = np.abs(grams.mean(axis=0) - k(X))
    standard_error = grams.std(axis=0, ddof=1) / np.sqrt(seeds)
    return float((error / np.maximum(standard_error, 1e-12)).max()), float(error.max())


@pytest.mark.parametrize("name, kernel", [("sklearn-rff", "gaussian:sigma=median"),
                                          ("sklearn-tensorsketch", "polynomial:degree=2")])
def test_random_features_are_unbiased_for_kbench_kernel(name, kernel):
    """E ZZᵀ = K: every entry of the mean over 200 seeds is within 5 standard errors of
    kbench's K (about 1e-6 by chance for one entry of 435 under a normal law); a kernel
    parameter translated wrongly (γ off by 2×) is tens of standard errors off."""
    z, error = _unbiasedness_z(name, kernel, p=64)
    assert z < 5.0, (z, error)


def test_each_refuses_a_kernel_scikit_learn_cannot_approximate():
    X, _ = _data(n=50)
    cases = {"sklearn-nystroem": "matern", "sklearn-rff": "laplacian",
             "sklearn-tensorsketch": "gaussian"}
    for name, kernel in cases.items():
        with pytest.raises(kbench.Refused, match=name):
            kbench.make_sampler(name).fit(X, kbench.make_kernel(kernel), rank=5)


    # a plugin's kernel built on the gaussian: other values, not 'rbf'
    class Variant(kbench.GaussianKernel):
        name = "variant"

    for name in ("sklearn-nystroem", "sklearn-rff"):
        with pytest.raises(kbench.Refused, match="'variant'"):
            kbench.make_sampler(name).fit(X, Variant(sigma=1.0), rank=5)


def test_cli_check_plugin_with_a_polynomial_kernel():
    from click.testing import CliRunner

    from kbench.cli import main

    result = CliRunner().invoke(main, ["check-plugin", "sklearn-tensorsketch", "--kernel",
                                       "polynomial:degree=2"])
    assert result.exit_code == 0, result.output
    assert ("from kbench-sklearn 0.1.0" in result.output
            and "all 9 contract checks passed" in result.output)
    # its refusal, once: a usage error
    refused = CliRunner().invoke(main, ["check-plugin", "sklearn-tensorsketch"])
    assert refused.exit_code == 2 and (
        "PolynomialCountSketch approximates the polynomial kernel only"
        in " ".join(refused.output.split()))
