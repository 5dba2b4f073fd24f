"""The sampler base class: arguments are never mutated; fitted state lives on the fit."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.distance import pdist

import kbench


@pytest.mark.parametrize("sampler", ["uniform", "rp-cholesky", "rff"])
def test_fit_resolves_its_own_median_sigma_and_leaves_the_callers_kernel_as_given(sampler):
    gen = np.random.default_rng(0)
    small, large = gen.standard_normal((300, 3)), 100.0 * gen.standard_normal((300, 3))
    kernel = kbench.make_kernel("gaussian", sigma="median")
    given = (small.copy(), large.copy())
    instance = kbench.make_sampler(sampler)
    params = instance.get_params()
    fits = [instance.fit(X, kernel, rank=200, seed=1) for X in (small, large)]
    # the caller's kernel is unchanged: still unresolved, nothing counted
    assert (not kernel.fitted and kernel.sigma == "median" and kernel.sigma_ is None
            and kernel.evals == 0)
    assert np.array_equal(small, given[0]) and np.array_equal(large, given[1])
    assert instance.get_params() == params
    # each fit used the median distance of its own data (the heuristic's subsample is all 300 rows)
    for X, approx in zip((small, large), fits):
        sigma = float(np.median(pdist(X)))
        Z = approx.transform(X[:50])
        exact = np.exp(-np.square(X[:50, None] - X[None, :50]).sum(-1) / (2 * sigma**2))
        # the approximation of the Gram matrix is on the scale of this data's σ: with the other
        # data set's σ (100× off) the kernel would be ~0 or ~1 everywhere
        assert np.abs(Z @ Z.T - exact).mean() < 0.1, (sampler, sigma)
