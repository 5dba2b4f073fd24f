"""DPPy's samplers load as kbench samplers, draw from the law they claim, and translate
kbench's ridge convention (per-sample λ, ridge nλ)."""

import itertools

import numpy as np
import pytest

import kbench
from kbench.testing import CHECKS, check_sampler


@pytest.mark.parametrize("name", ["dppy-bless", "dppy-k-dpp"])
def test_registered_by_its_own_package_and_passes_the_conformance_kit(name):
    assert kbench.list_plugins("sampler")[name].source == "kbench-dppy"
    assert len(check_sampler(name)) == len(CHECKS)


def test_k_dpp_inclusion_frequencies_match_the_enumerated_law():
    """P(S) ∝ det K_S over |S| = 3 on 10 points, enumerated over all 120 subsets; the
    inclusion frequency of each point over 2 000 seeds is within 5 binomial standard
    errors (≤ 0.055) of its exact marginal. The points form a tight cluster of five
    (marginals 0.17) and five spread ones (0.41–0.45): uniform landmarks (0.3) would be
    10–15 standard errors off."""
    X = np.array([0.0, 0.02, 0.04, 0.06, 0.08, 1.5, 3.0, 4.5, 6.0, 7.5])[:, None]
    kernel = kbench.make_kernel("gaussian", sigma=1.0)
    K, k = kernel(X), 3
    subsets = list(itertools.combinations(range(len(X)), k))
    weights = np.array([np.linalg.det(K[np.ix_(s, s)]) for s in subsets])
    marginals = np.zeros(len(X))
    for s, w in zip(subsets, weights / weights.sum()):
        marginals[list(s)] += w
    seeds = 2000
    counts = np.zeros(len(X))
    for seed in range(seeds):
        counts[kbench.make_sampler("dppy-k-dpp").fit(X, kernel, rank=k, seed=seed).landmarks] += 1
    standard_error = np.sqrt(marginals * (1 - marginals) / seeds)
    assert np.all(np.abs(counts / seeds - marginals) <= 5 * standard_error), (counts / seeds,
                                                                              marginals)
    assert marginals[:5].max() < 0.2 and marginals[5:].min() > 0.4  # the test can tell laws apart


def test_k_dpp_refuses_beyond_the_rank_of_k_and_above_max_n():
    X = np.random.default_rng(0).standard_normal((40, 2))
    with pytest.raises(kbench.Refused, match="needs 3 positive eigenvalues"):
        kbench.make_sampler("dppy-k-dpp").fit(X, kbench.make_kernel("linear"), rank=3)
    with pytest.raises(kbench.Refused, match="max_n = 30"):
        kbench.make_sampler("dppy-k-dpp", max_n=30).fit(X, kbench.make_kernel("gaussian"), rank=3)


def test_bless_dictionary_follows_the_effective_dimension_at_ridge_n_lambda():
    """DPPy's dictionary holds about q̄·d_eff(λ) atoms, d_eff(λ) = tr K(K + nλI)⁻¹ from a
    dense eigendecomposition: within [0.3, 3]× at two λ a decade apart (a ridge passed as
    λ instead of nλ would make d_eff, and the dictionary, about 10× larger here)."""
    data = kbench.load_dataset("synthetic:two-balls", n=1250, seed=0)
    X = data.X_train
    n = len(X)
    kernel = kbench.make_kernel("gaussian", sigma="median").fit(X)
    eigenvalues = np.linalg.eigvalsh(kernel(X))
    for lam in (1e-3, 1e-4):
        d_eff = float(np.sum(eigenvalues / (eigenvalues + n * lam)))
        approx = kbench.make_sampler("dppy-bless", qbar=4).fit(X, kernel, rank=n, lam=lam, seed=0)
        ratio = approx.info["dictionary_size"] / (4 * d_eff)
        assert 0.3 <= ratio <= 3.0, (lam, ratio, d_eff)
        assert approx.rank == min(approx.info["dictionary_size"], n)
