"""The built-in samplers against dense references and the properties their papers prove."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.kernel_approximation import Nystroem
from threadpoolctl import threadpool_limits

import kbench
from kbench.datasets.synthetic import smile, spiral_with_outliers
from kbench.kernels import GaussianKernel
from kbench.samplers import leverage
from tests.conftest import ALL_SAMPLERS, COLUMN_SAMPLERS, exact_leverage_scores

LAM = 1e-3


def dense_nystrom(K: np.ndarray, landmarks: np.ndarray) -> np.ndarray:
    """K_nm K_mm⁺ K_mn with numpy's SVD pseudo-inverse (independent of kbench.lowrank.linalg)."""
    K_nm = K[:, landmarks]
    K_mm = K[np.ix_(landmarks, landmarks)]
    return K_nm @ np.linalg.pinv(K_mm, rcond=len(landmarks) * np.finfo(float).eps,
                                 hermitian=True) @ K_nm.T


# ---------------------------------------------------------------------------------------
# Dense checks shared by all column samplers (n = 300)
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", COLUMN_SAMPLERS)
@pytest.mark.parametrize("rank", [10, 60])
def test_column_sampler_is_the_nystrom_approximation(name, rank, data300):
    X, kernel = data300
    K = kernel(X)
    approx = kbench.make_sampler(name).fit(X, kernel, rank=rank, lam=LAM, seed=0)
    landmarks = approx.landmarks
    assert len(np.unique(landmarks)) == len(landmarks) <= rank
    assert approx.rank <= len(landmarks)
    Z = approx.transform(X)
    assert Z.shape == (300, approx.rank)
    L = Z @ Z.T
    reference = dense_nystrom(K, landmarks)
    # float64 Nyström: errors ~ eps·cond(K_mm)·‖K‖; 1e-8 relative leaves room for cond ≤ 1e7
    assert np.abs(L - reference).max() <= 1e-8 * np.abs(K).max()
    # 0 ≼ L ≼ K: K − L is PSD up to eigensolver rounding (n·eps·‖K‖ ≈ 7e-14·tr K)
    assert np.linalg.eigvalsh(K - L).min() >= -1e-9 * np.trace(K)
    # L interpolates the sampled columns: L(V, I) = K(V, I)
    np.testing.assert_allclose(L[:, landmarks], K[:, landmarks], atol=1e-8)
    # new points: z(x)ᵀz(y) = k_m(x)ᵀ K_mm⁺ k_m(y)
    X_new = np.random.default_rng(5).standard_normal((40, 5))
    K_new = kernel(X_new, X[landmarks])
    cross = K_new @ np.linalg.pinv(K[np.ix_(landmarks, landmarks)], rcond=1e-13,
                                   hermitian=True) @ K[landmarks]
    np.testing.assert_allclose(approx.transform(X_new) @ Z.T, cross, atol=1e-8)
    if approx.train_features is not None:
        np.testing.assert_allclose(approx.train_features, Z, atol=1e-10)


@pytest.mark.parametrize("name", [s for s in COLUMN_SAMPLERS if s not in ("squeak", "bless")])
def test_all_landmarks_recover_the_kernel(name, data300):
    """L = K when I = V (rank = n): the approximation is exact. (SQUEAK and BLESS are left
    out: their landmarks are their dictionary atoms, which need not be all of V.)"""
    X, kernel = data300
    X = X[:80]
    approx = kbench.make_sampler(name).fit(X, kernel, rank=80, lam=LAM, seed=1)
    assert sorted(approx.landmarks) == list(range(80))
    Z = approx.transform(X)
    assert np.abs(Z @ Z.T - kernel(X)).max() <= 1e-8


@settings(max_examples=25, deadline=None, derandomize=True)  # same examples every run
@given(
    n=st.integers(2, 40),
    d=st.integers(1, 4),
    rank_fraction=st.floats(0.05, 1.0),
    name=st.sampled_from(COLUMN_SAMPLERS),
    seed=st.integers(0, 2**31),
    sigma=st.floats(0.2, 5.0),
)
def test_nystrom_order_holds_on_arbitrary_small_problems(n, d, rank_fraction, name, seed, sigma):
    """0 ≼ L ≼ K and L(V, I) = K(V, I) for any data, bandwidth and rank (hypothesis)."""
    X = np.random.default_rng(seed).uniform(-1, 1, size=(n, d))
    kernel = kbench.make_kernel("gaussian", sigma=sigma)
    K = kernel(X)
    rank = max(1, int(rank_fraction * n))
    approx = kbench.make_sampler(name).fit(X, kernel, rank=rank, lam=1e-2, seed=seed)
    Z = approx.transform(X)
    L = Z @ Z.T
    assert np.linalg.eigvalsh(L).min() >= -1e-9 * n
    assert np.linalg.eigvalsh(K - L).min() >= -1e-9 * n
    np.testing.assert_allclose(L[:, approx.landmarks], K[:, approx.landmarks], atol=1e-7)


def test_pivoted_cholesky_matches_a_dense_greedy_loop_and_its_trace_error_decreases(data300):
    X, kernel = data300
    K = kernel(X)
    # reference: the textbook loop on the dense matrix
    d, G, pivots = np.diag(K).copy(), np.zeros((300, 80)), []
    for j in range(80):
        i = int(np.argmax(d))
        G[:, j] = (K[:, i] - G[:, :j] @ G[i, :j]) / np.sqrt(d[i])
        d -= G[:, j] ** 2
        pivots.append(i)
    panels = {}
    # panel 12 makes a second panel of 7 pivots after 1, the shape numpy 2.1–2.4's np.negative
    # got wrong on x86-64 (kbench negated an 8-wide matrix's first column in place)
    for panel in (1, 3, 12, 16, 100):
        approx = kbench.make_sampler("pivoted-cholesky", panel=panel).fit(X, kernel, rank=80)
        assert approx.landmarks.tolist() == pivots
        np.testing.assert_allclose(approx.train_features, G, atol=1e-10)
        panels[panel] = approx.info["panels"]
    # every way a panel ends is exercised: after one pivot, when its candidates can no longer
    # tell the largest residual (more panels than 80/3), and with every point a candidate
    assert panels[1] == 80 and panels[3] > 27 and panels[16] > 5 and panels[100] == 1, panels
    errors = []
    for rank in range(5, 81, 5):
        a = kbench.make_sampler("pivoted-cholesky").fit(X, kernel, rank=rank)
        Z = a.transform(X)
        errors.append(np.trace(K - Z @ Z.T) / np.trace(K))
        assert a.info["trace_residual"] == pytest.approx(np.trace(K - Z @ Z.T), abs=1e-9)
    assert all(b <= a + 1e-12 for a, b in zip(errors, errors[1:])), errors


def test_cholesky_samplers_evaluate_each_pivot_column_once_from_threads():
    """Both factorisations evaluate the diagonal and each pivot's kernel column once (rp-cholesky
    also each round's candidate block), from the column blocks of their eliminations, which
    run in threads here (20 000 points: several 4096-column blocks per thread)."""
    gen = np.random.default_rng(3)
    X = gen.standard_normal((20_000, 3))
    kernel = kbench.make_kernel("gaussian", sigma=1.0)
    with threadpool_limits(limits=2):
        greedy = kbench.make_sampler("pivoted-cholesky").fit(X, kernel, rank=150)
        rp = kbench.make_sampler("rp-cholesky").fit(X, kernel, rank=150, seed=0)
    assert sum(greedy.info["block_sizes"]) == sum(rp.info["block_sizes"]) == 150
    assert greedy.info["kernel_evals"] == 20_000 * (1 + 150)
    assert rp.info["kernel_evals"] == 20_000 * (1 + 150) + rp.info["rounds"] * 100**2


def test_uniform_reproduces_scikit_learn_nystroem(data300):
    X, kernel = data300
    approx = kbench.make_sampler("uniform").fit(X, kernel, rank=50, seed=3)
    ours = approx.transform(X)
    # scikit-learn on the same landmarks: its basis is the whole of X[landmarks]
    gamma = 1.0 / (2.0 * kernel.sigma_**2)
    sk = Nystroem(kernel="rbf", gamma=gamma, n_components=50).fit(X[approx.landmarks])
    theirs = sk.transform(X)
    np.testing.assert_allclose(ours @ ours.T, theirs @ theirs.T, rtol=0, atol=1e-10)


# ---------------------------------------------------------------------------------------
# Leverage scores
# ---------------------------------------------------------------------------------------
def test_rls_scores_equal_the_dense_formula(data300):
    X, kernel = data300
    approx = kbench.make_sampler("rls").fit(X, kernel, rank=30, lam=LAM, seed=0)
    expected = exact_leverage_scores(kernel(X), LAM)
    np.testing.assert_allclose(approx.info["scores"], expected, rtol=0, atol=1e-10)


def test_rls_decomposes_a_kernel_matrix_once_for_every_rank(data300, monkeypatch):
    """A sweep's worker fits rls at each rank of one split in turn: one eigh(K) serves them all,
    and the landmarks are those of a fit that decomposes K afresh (same seed, same scores)."""
    X, kernel = data300
    calls = []
    eigh = leverage.scipy.linalg.eigh
    monkeypatch.setattr(leverage.scipy.linalg, "eigh", lambda *a, **k: calls.append(1)
                        or eigh(*a, **k))
    leverage._last_eigh.clear()
    kept = [kbench.make_sampler("rls").fit(X, kernel, rank=r, lam=LAM, seed=0).landmarks
            for r in (10, 30, 60)]
    assert len(calls) == 1
    # another matrix: decomposed
    kbench.make_sampler("rls").fit(2 * X, kernel, rank=10, lam=LAM, seed=0)
    assert len(calls) == 2
    for rank, landmarks in zip((10, 30, 60), kept, strict=True):
        leverage._last_eigh.clear()
        np.testing.assert_array_equal(kbench.make_sampler("rls").fit(X, kernel, rank=rank, lam=LAM,
                                                                     seed=0).landmarks,
                                      landmarks)
    assert len(calls) == 5


def test_rls_refuses_large_n():
    X = np.zeros((50, 2)) + np.arange(50)[:, None]
    with pytest.raises(ValueError, match="max_n = 40.*rls-fast"):
        kbench.make_sampler("rls", max_n=40).fit(X, kbench.make_kernel("gaussian"), rank=5, lam=LAM)


def test_rls_fast_scores_never_exceed_the_exact_ones():
    X = np.random.default_rng(2).standard_normal((1000, 5))
    kernel = kbench.make_kernel("gaussian", sigma="median").fit(X)
    K = kernel(X)
    for lam, p1 in [(1e-2, 20), (1e-3, 60), (1e-4, 300)]:
        exact = exact_leverage_scores(K, lam)
        for seed in range(3):
            approx = kbench.make_sampler("rls-fast", p1=p1).fit(X, kernel, rank=20, lam=lam,
                                                                seed=seed)
            assert (approx.info["scores"] <= exact + 1e-10).all()


def test_rls_fast_captures_the_effective_dimension():
    """Σℓ̃ ≥ 0.9·d_eff when p₁ ≥ 4·d_eff (20 seeds; the smallest ratio seen is 0.95)."""
    X = np.random.default_rng(2).standard_normal((1000, 5))
    kernel = kbench.make_kernel("gaussian", sigma="median").fit(X)
    d_eff = exact_leverage_scores(kernel(X), 1e-3).sum()
    p1 = int(np.ceil(4 * d_eff))
    for seed in range(20):
        approx = kbench.make_sampler("rls-fast", p1=p1).fit(X, kernel, rank=p1, lam=1e-3, seed=seed)
        assert approx.info["scores"].sum() >= 0.9 * d_eff


# ---------------------------------------------------------------------------------------
# SQUEAK
# ---------------------------------------------------------------------------------------
class SpyKernel(GaussianKernel):
    """A Gaussian kernel that records which rows of X every call touches."""

    def __init__(self, X, sigma):
        super().__init__(sigma=sigma)
        self.index = {row.tobytes(): i for i, row in enumerate(X)}
        self.calls = []

    def __call__(self, A, B=None):
        rows = lambda M: [self.index[r.tobytes()] for r in np.asarray(M, dtype=float)]
        self.calls.append((rows(A), None if B is None else rows(B)))
        return super().__call__(A, B)


@pytest.fixture(scope="module")
def squeak_data():
    X = np.random.default_rng(3).standard_normal((2000, 3))
    kernel = kbench.make_kernel("gaussian", sigma="median").fit(X)
    return X, kernel.sigma_, exact_leverage_scores(kernel(X), LAM).sum()


@pytest.mark.parametrize("seed", range(3))
def test_squeak_dictionary_size_tracks_the_effective_dimension(squeak_data, seed):
    X, sigma, d_eff = squeak_data
    sampler = kbench.make_sampler("squeak", qbar=10, eps=0.5)
    approx = sampler.fit(X, kbench.make_kernel("gaussian", sigma=sigma), rank=2000, lam=LAM,
                         seed=seed)
    target = (1 - 0.5) * 10 * d_eff
    assert 0.3 * target <= approx.info["dictionary_size"] <= 3 * target
    assert approx.info["unique_atoms"] == len(approx.landmarks)


def test_squeak_evaluates_kernel_only_on_dictionary_and_block(squeak_data):
    X, sigma, _ = squeak_data
    kernel = SpyKernel(X, sigma)
    approx = kbench.make_sampler("squeak", block_size=100).fit(X, kernel, rank=60, lam=LAM, seed=0)
    history = approx.info["history"]
    # the counter: step t evaluates K(block, block) and K(dictionary, block), nothing else
    expected, atoms = 0, 0
    for merged, kept, _ in history:
        block = merged - atoms
        expected += block * block + atoms * block
        atoms = kept
    assert approx.info["kernel_evals"] == expected < 0.1 * 2000**2
    # the spy: each step evaluates K(block, block) for a new block of the stream, then
    # K(dictionary, block) with dictionary atoms from the previous dictionary ∪ block only
    pool, dictionary, block, seen = set(), set(), set(), set()
    for A, B in kernel.calls:
        if B is None:
            pool = dictionary | block
            block, dictionary = set(A), set()
            assert block.isdisjoint(seen)
            seen |= block
        else:
            assert set(B) == block and set(A) <= pool
            dictionary = set(A)
    assert set(approx.landmarks) <= dictionary | block


def test_squeak_distributed_merge_matches_the_guarantee(squeak_data):
    X, sigma, d_eff = squeak_data
    approx = kbench.make_sampler("squeak", shards=4).fit(
        X, kbench.make_kernel("gaussian", sigma=sigma), rank=2000, lam=LAM, seed=0)
    assert 0.3 * 5 * d_eff <= approx.info["dictionary_size"] <= 3 * 5 * d_eff


def test_squeak_subsampling_by_copies_beats_drawing_by_probability():
    """Below the dictionary size, p landmarks drawn ∝ copies (uniform over the dictionary's
    columns) approximate K better in ‖K − L‖₂ than drawn ∝ p̃ (squeak:subsample=prob), which weights
    points by about τ² (high-coherence beta design, 8 seeds; the mean gap seen is 7×, the
    test asks for 1.5×). Both draw from the same dictionary: only the last draw differs."""
    kernel = kbench.make_kernel("periodic-sobolev", beta=2)
    errors = {"prob": [], "copies": []}
    for seed in range(8):
        X = kbench.load_dataset("synthetic:bach-periodic:design=beta,a=0.2,n=1000",
                                seed=seed).X_train
        K = kernel(X)
        for rule in errors:
            approx = kbench.make_sampler("squeak", subsample=rule).fit(X, kernel, rank=20, lam=1e-4,
                                                                       seed=seed)
            Z = approx.transform(X)
            errors[rule].append(np.linalg.eigvalsh(K - Z @ Z.T).max() / np.linalg.eigvalsh(K).max())
    assert np.mean(errors["copies"]) * 1.5 <= np.mean(errors["prob"]), errors
    with pytest.raises(ValueError, match="subsample must be 'copies' or 'prob'"):
        kbench.make_sampler("squeak", subsample="uniform")


@pytest.mark.parametrize("seed", range(3))
def test_bless_dictionary_size_tracks_the_effective_dimension(squeak_data, seed):
    """Rudi et al. 2018, Thm. 1: about q̄·d_eff(nλ) atoms."""
    X, sigma, d_eff = squeak_data
    approx = kbench.make_sampler("bless", qbar=10).fit(X,
                                                       kbench.make_kernel("gaussian", sigma=sigma),
                                                       rank=2000, lam=LAM, seed=seed)
    assert 0.3 * 10 * d_eff <= approx.info["dictionary_size"] <= 3 * 10 * d_eff
    assert approx.info["dictionary_size"] == len(approx.landmarks)


def test_bless_goes_on_past_levels_that_preselect_no_point():
    """An unbounded kernel (polynomial on diabetes: max K_ii ≫ mean K_ii) starts from a ridge
    so large that a level can pre-select no point; the next levels refill the dictionary."""
    data = kbench.load_dataset("sklearn:diabetes", seed=0)
    approx = kbench.make_sampler("bless").fit(data.X_train,
                                              kbench.make_kernel("polynomial", degree=3),
                                              rank=50, lam=1e-6, seed=0)
    assert any(candidates == 0 for _, candidates, _ in approx.info["history"])
    assert approx.rank == 50 and approx.info["dictionary_size"] > 50


def test_bless_estimator_is_exact_on_the_whole_set(data300):
    """With every point in the dictionary at probability 1, the estimator
    (K_ii − k_iᵀ(K + γI)⁻¹k_i)/γ is the exact ridge leverage score."""
    from kbench.samplers.bless import BlessSampler

    X, kernel = data300
    n, everything = len(X), np.arange(len(X))
    scores = BlessSampler._estimate_scores(X, kernel, kernel.diag(X), everything, everything,
                                           np.ones(n),
                                           kernel(X), n * LAM)
    np.testing.assert_allclose(scores, exact_leverage_scores(kernel(X), LAM), rtol=1e-8, atol=1e-12)


def test_bless_spectral_error_is_close_to_exact_rls(squeak_data):
    """At equal rank, ‖K − L‖₂ within 2× that of exact rls (median over 5 seeds; measured
    ratio about 1.0, so the margin is a factor 2). K − L ≽ 0 for Nyström maps: its norm is
    its largest eigenvalue."""
    X, sigma, _ = squeak_data
    X = X[:1500]
    kernel = kbench.make_kernel("gaussian", sigma=sigma)
    K = kernel(X)

    def median_error(name):
        errors = []
        for seed in range(5):
            Z = kbench.make_sampler(name).fit(X, kernel, rank=60, lam=LAM, seed=seed).transform(X)
            errors.append(np.linalg.eigvalsh(K - Z @ Z.T)[-1])
        return np.median(errors)

    assert median_error("bless") <= 2 * median_error("rls")


def test_bless_kernel_evaluations_grow_sub_quadratically():
    """n = 1000 → 8000: kernel evaluations grow far less than 64× (measured about 4×)."""
    counts = []
    for n in (1000, 8000):
        X = np.random.default_rng(0).standard_normal((n, 5))
        kernel = kbench.make_kernel("gaussian", sigma="median").fit(X)
        counts.append(kbench.make_sampler("bless").fit(X, kernel, rank=100, lam=1e-3,
                                                       seed=0).info["kernel_evals"])
    assert counts[1] < 16 * counts[0]


def test_squeak_warns_when_qbar_is_tiny(data300):
    X, kernel = data300
    with pytest.warns(UserWarning, match="collapse"):
        approx = kbench.make_sampler("squeak", qbar=2).fit(X, kernel, rank=10, lam=LAM)
    assert any("collapse" in w for w in approx.info["warnings"])


# ---------------------------------------------------------------------------------------
# Randomly pivoted Cholesky
# ---------------------------------------------------------------------------------------
def test_rp_cholesky_has_the_one_pivot_distribution():
    """Ordered pairs of the first two pivots vs their exact law d_i/Σd · d'_j/Σd'.

    4000 seeded fits on 5 points with block_size 3 (rejections and several rounds); the
    chi-square statistic on 20 cells must stay below the 0.1% critical value (43.8).
    """
    X = np.array([[0.0, 0.0], [0.3, 0.0], [0.0, 0.5], [1.5, 1.0], [-1.0, 0.2]])
    kernel = kbench.make_kernel("gaussian", sigma=0.6)
    K = kernel(X)
    d = np.diag(K)
    exact = np.zeros((5, 5))
    for i in range(5):
        residual = np.diag(K - np.outer(K[:, i], K[i]) / K[i, i])
        exact[i] = d[i] / d.sum() * residual / residual.sum()
    counts = np.zeros((5, 5))
    sampler = kbench.make_sampler("rp-cholesky", block_size=3)
    runs = 4000
    for seed in range(runs):
        first, second = sampler.fit(X, kernel, rank=2, seed=seed).landmarks[:2]
        counts[first, second] += 1
    cells = exact > 0
    chi2 = ((counts[cells] - runs * exact[cells]) ** 2 / (runs * exact[cells])).sum()
    assert counts[~cells].sum() == 0
    assert chi2 < 43.8, chi2


def _trace_error(X, kernel, name, rank, seed):
    Z = kbench.make_sampler(name).fit(X, kernel, rank=rank, lam=LAM, seed=seed).transform(X)
    return 1.0 - (Z * Z).sum() / kernel.diag(X).sum()


def test_rp_cholesky_beats_uniform_tenfold_on_the_smile():
    X = smile(2000, seed=0)
    kernel = kbench.make_kernel("gaussian", sigma=0.2)
    for seed in range(3):
        rp = _trace_error(X, kernel, "rp-cholesky", 100, seed)
        uniform = _trace_error(X, kernel, "uniform", 100, seed)
        assert rp * 10 <= uniform, (rp, uniform)


def test_greedy_pivoting_fails_on_a_spiral_with_outliers():
    """A known failure, kept visible: greedy pivoted Cholesky picks the 200 outliers one by
    one (each keeps residual k(x, x) = 1), so at rank 100 it explains almost nothing of the
    spiral, while randomly pivoted Cholesky and even uniform sampling do."""
    X = spiral_with_outliers(2000, seed=0, n_outliers=200)
    kernel = kbench.make_kernel("gaussian", sigma=0.1)
    greedy = kbench.make_sampler("pivoted-cholesky").fit(X, kernel, rank=100)
    assert (greedy.landmarks >= 1800).sum() >= 90  # nearly every pivot is an outlier
    greedy_error = _trace_error(X, kernel, "pivoted-cholesky", 100, 0)
    assert greedy_error > 0.7
    assert greedy_error > 3 * _trace_error(X, kernel, "rp-cholesky", 100, 0)
    assert greedy_error > 3 * _trace_error(X, kernel, "uniform", 100, 0)


def test_recursive_rls_scores_and_ridge_are_the_dense_ones(data300):
    """With the whole set as its sample (weights 1, c = 1) the level's estimate is the exact
    ridge leverage score at ridge λ, and λ is the spectrum's tail beyond rank k over k."""
    from kbench.samplers.recursive import RecursiveRLSSampler

    X, kernel = data300
    K, n = kernel(X), len(X)
    ridge = RecursiveRLSSampler._ridge(K, np.ones(n), 10, 1.0)
    eigenvalues = np.linalg.eigvalsh(K)
    assert ridge == pytest.approx((eigenvalues.sum() - eigenvalues[-10:].sum()) / 10, rel=1e-10)
    scores = RecursiveRLSSampler._scores(K, K, np.ones(n), kernel.diag(X), ridge, 1.0)
    np.testing.assert_allclose(scores, exact_leverage_scores(K, ridge / n), rtol=1e-8, atol=1e-12)


def test_recursive_rls_is_cheap_and_robust_to_outliers():
    """Musco & Musco 2017: at most about 3·n·k kernel entries; on the spiral with 200
    outliers at k = 50 its trace error is at most 1.2× exact rls's (median over 5 seeds;
    measured 0.29 against 0.52: rls at λ = 1e-3 spends its landmarks on the outliers)."""
    X = spiral_with_outliers(2000, seed=0, n_outliers=200)
    kernel = kbench.make_kernel("gaussian", sigma=0.1)
    fitted = kbench.make_sampler("recursive-rls").fit(X, kernel, rank=50, seed=0)
    assert fitted.info["kernel_evals"] <= 3 * 2000 * 50
    recursive = np.median([_trace_error(X, kernel, "recursive-rls", 50, seed) for seed in range(5)])
    exact = np.median([_trace_error(X, kernel, "rls", 50, seed) for seed in range(5)])
    assert recursive <= 1.2 * exact


# ---------------------------------------------------------------------------------------
# Random features
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["rff", "orf"])
def test_random_features_approximate_the_kernel(name):
    X = np.random.default_rng(4).standard_normal((200, 10))
    kernel = kbench.make_kernel("gaussian", sigma="median").fit(X)
    approx = kbench.make_sampler(name).fit(X, kernel, rank=20_000, seed=0)
    Z = approx.transform(X)
    assert Z.shape == (200, 20_000) and approx.landmarks is None
    assert np.abs(Z @ Z.T - kernel(X)).max() < 0.05


def test_orf_has_lower_error_than_rff():
    X = np.random.default_rng(4).standard_normal((200, 10))
    kernel = kbench.make_kernel("gaussian", sigma="median").fit(X)
    K = kernel(X)

    def mean_error(name):
        errors = []
        for seed in range(20):
            Z = kbench.make_sampler(name).fit(X, kernel, rank=40, seed=seed).transform(X)
            errors.append(np.linalg.norm(Z @ Z.T - K) / np.linalg.norm(K))
        return np.mean(errors)

    assert mean_error("orf") < mean_error("rff")


@pytest.mark.parametrize("rank", [1, 7])
def test_odd_rank_random_features_are_unbiased(rank):
    """p odd adds one random-phase cosine: the map keeps p columns and E ZZᵀ = K."""
    X = np.random.default_rng(0).standard_normal((30, 3))
    kernel = kbench.make_kernel("gaussian", sigma=1.5)
    mean = np.zeros((30, 30))
    runs = 3000
    for seed in range(runs):
        Z = kbench.make_sampler("rff").fit(X, kernel, rank=rank, seed=seed).transform(X)
        assert Z.shape[1] == rank
        mean += Z @ Z.T / runs
    # each entry of ZZᵀ lies in [−2k(0)·(p+1)/p, ...]: standard error ≤ 2/√3000 ≈ 0.037; 0.15 is 4σ
    assert np.abs(mean - kernel(X)).max() < 0.15


# ---------------------------------------------------------------------------------------
# Seeds
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ALL_SAMPLERS)
def test_same_seed_same_result_different_seed_different(name, data300):
    X, kernel = data300
    fit = lambda seed: kbench.make_sampler(name).fit(X, kernel, rank=20, lam=LAM, seed=seed)
    a, b, c = fit(11), fit(11), fit(12)
    assert np.array_equal(a.transform(X), b.transform(X))
    if name == "pivoted-cholesky":  # deterministic by design: no randomness to seed
        assert np.array_equal(a.landmarks, c.landmarks)
        return
    if a.landmarks is not None:
        assert np.array_equal(a.landmarks, b.landmarks)
        assert not np.array_equal(np.sort(a.landmarks), np.sort(c.landmarks))
    assert not np.allclose(a.transform(X), c.transform(X))


# ---------------------------------------------------------------------------------------
# Bad input
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ALL_SAMPLERS)
def test_bad_input_is_a_clear_error(name, data300):
    X, kernel = data300
    sampler = kbench.make_sampler(name)
    fit = lambda **kw: sampler.fit(**{"X": X, "kernel": kernel, "rank": 10, "lam": LAM, **kw})
    bad_X = X.copy()
    bad_X[3, 2] = np.nan
    with pytest.raises(ValueError, match=r"X contains NaN or infinite.*rows \[3\].*columns \[2\]"):
        fit(X=bad_X)
    bad_X[3, 2] = np.inf
    with pytest.raises(ValueError, match="X contains NaN or infinite"):
        fit(X=bad_X)
    with pytest.raises(ValueError, match=r"X must be 2-D.*reshape\(-1, 1\)"):
        fit(X=X[:, 0])
    for rank in (0, -3, 2.5, "10"):
        with pytest.raises(ValueError, match="rank must be an integer >= 1"):
            fit(rank=rank)
    for lam in (0.0, -1e-3, float("nan")):
        with pytest.raises(ValueError, match="lam must be a finite number > 0"):
            fit(lam=lam)
    if sampler.needs_lam:
        with pytest.raises(ValueError, match=f"{name}' needs lam"):
            fit(lam=None)
    approx = fit()
    with pytest.raises(ValueError, match="X has 3 features but 5 were expected"):
        approx.transform(X[:, :3])
    with pytest.raises(ValueError, match="seed must be an int"):
        fit(seed="abc")


@pytest.mark.parametrize("name", COLUMN_SAMPLERS)
def test_rank_above_n_is_clamped_with_a_warning(name, data300):
    X, kernel = data300
    approx = kbench.make_sampler(name).fit(X[:40], kernel, rank=100, lam=LAM, seed=0)
    assert len(approx.landmarks) <= 40 and approx.info["rank_requested"] == 100
    assert any("rank 100 exceeds n = 40" in w for w in approx.info["warnings"])


@pytest.mark.parametrize("name", ["rff", "orf"])
def test_random_features_refuse_a_kernel_without_spectral_sampler(name, data300):
    X, _ = data300
    with pytest.raises(ValueError, match="no spectral sampler.*Nyström sampler"):
        kbench.make_sampler(name).fit(X, kbench.make_kernel("polynomial"), rank=10)


def test_fwht_is_the_walsh_hadamard_matrix():
    import scipy.linalg

    from kbench.lowrank.maps import fwht

    A = np.random.default_rng(0).standard_normal((3, 4, 32))
    assert np.allclose(fwht(A), A @ scipy.linalg.hadamard(32).T, rtol=0, atol=1e-12)


@pytest.mark.parametrize("name", ["sorf", "fastfood"])
def test_structured_features_are_their_explicit_frequencies(name):
    """The fast Walsh–Hadamard path equals random Fourier features on the explicit Ω,
    padding (d = 5 → 8) and a random-phase feature included."""
    from kbench.lowrank.maps import FourierMap

    X = np.random.default_rng(2).standard_normal((50, 5))
    kernel = kbench.make_kernel("gaussian", sigma="median").fit(X)
    approx = kbench.make_sampler(name).fit(X, kernel, rank=23, seed=0)
    explicit = FourierMap(approx.frequencies, approx.n_pairs, approx.phase, kernel.diag_value)
    assert approx.frequencies.shape == (12, 5)
    assert np.allclose(approx.transform(X), explicit.transform(X), rtol=0, atol=1e-12)
    # d' = 8 keeps Ω explicit; the structured steps give the same projections
    assert np.allclose(approx.structured_projection(X), X @ approx.frequencies.T, rtol=0,
                       atol=1e-12)
    X = np.random.default_rng(3).standard_normal((50, 40))  # d' = 64: the structured path
    kernel = kbench.make_kernel("gaussian", sigma="median").fit(X)
    approx = kbench.make_sampler(name).fit(X, kernel, rank=150, seed=0)
    explicit = FourierMap(approx.frequencies, approx.n_pairs, approx.phase, kernel.diag_value)
    assert approx.padded == 64
    assert np.allclose(approx.transform(X), explicit.transform(X), rtol=0, atol=1e-12)


def test_sorf_blocks_are_scaled_orthogonal_matrices():
    """Yu et al. 2016 §4: each block (√d/σ)·HD₁HD₂HD₃ has orthogonal rows of norm √d/σ."""
    X = np.random.default_rng(3).standard_normal((20, 16))
    kernel = kbench.make_kernel("gaussian", sigma=2.0).fit(X)
    W = kbench.make_sampler("sorf").fit(X, kernel, rank=64, seed=0).frequencies
    for block in (W[:16], W[16:]):
        assert np.allclose(block @ block.T, (16 / 4.0) * np.eye(16), rtol=0, atol=1e-12)


@pytest.mark.parametrize("name", ["sorf", "fastfood"])
def test_structured_features_are_unbiased_at_moderate_d(name):
    """Mean of ZZᵀ over 200 seeds within 0.02 of K (d = 32, p = 256; rff's own sampling
    error here is 0.009). SORF's rows all have norm √d/σ where a gaussian draw's have a χ_d
    law, so it is biased at small d (0.24 at d = 4): docs/conventions.md."""
    X = np.random.default_rng(1).standard_normal((30, 32))
    kernel = kbench.make_kernel("gaussian", sigma="median").fit(X)
    mean = np.mean([(Z := kbench.make_sampler(name).fit(X, kernel, rank=256,
                                                        seed=seed).transform(X)) @ Z.T
                    for seed in range(200)], axis=0)
    assert np.abs(mean - kernel(X)).max() < 0.02


def test_sorf_has_lower_error_than_rff():
    X = np.random.default_rng(4).standard_normal((200, 32))
    kernel = kbench.make_kernel("gaussian", sigma="median").fit(X)
    K = kernel(X)

    def mean_error(name):
        return np.mean([np.linalg.norm((Z := kbench.make_sampler(name).fit(X, kernel, rank=128,
                                                                           seed=seed)
                                        .transform(X)) @ Z.T - K) / np.linalg.norm(K)
                        for seed in range(20)])

    assert mean_error("sorf") < 0.7 * mean_error("rff")


@pytest.mark.parametrize("d", [16, 64])
def test_fastfood_squared_error_is_within_a_constant_of_rffs(d):
    """Le et al. 2013 Thm 8 bound fastfood's variance by rff's plus a term of the same
    order in 1/d (its frequencies within a block are correlated through G), not by rff's
    alone: the mean squared entry error of ZZᵀ (100 seeds, p = 256) is 1.7–2.0× rff's
    here, and stays below 2.5×. Reusing one G in every block correlates the blocks too
    (3.1–6.8×) and fails."""
    X = np.random.default_rng(5).standard_normal((100, d))
    kernel = kbench.make_kernel("gaussian", sigma="median").fit(X)
    K = kernel(X)

    def mean_squared_error(name):
        return np.mean([np.mean(((Z := kbench.make_sampler(name).fit(X, kernel, rank=256, seed=seed)
                                  .transform(X)) @ Z.T - K) ** 2) for seed in range(100)])

    assert mean_squared_error("fastfood") < 2.5 * mean_squared_error("rff")


@pytest.mark.parametrize("name", ["sorf", "fastfood"])
def test_structured_features_refuse_other_kernels(data300, name):
    X, _ = data300
    with pytest.raises(kbench.Refused, match=f"{name} builds gaussian frequencies.*laplacian"):
        kbench.make_sampler(name).fit(X, kbench.make_kernel("laplacian"), rank=10)


def test_orf_refuses_a_kernel_that_is_not_isotropic(data300):
    X, _ = data300
    kbench.make_sampler("rff").fit(X, kbench.make_kernel("laplacian"), rank=10)  # fine
    with pytest.raises(ValueError, match="rotation-invariant.*Use rff"):
        kbench.make_sampler("orf").fit(X, kbench.make_kernel("laplacian"), rank=10)


@pytest.mark.parametrize(
    "name, params, message",
    [
        ("squeak", {"qbar": 0}, r"qbar must be an integer in \[1, 1000000\]"),
        ("squeak", {"eps": 1.5}, r"eps must be a finite number in \(0, 1\)"),
        ("rp-cholesky", {"block_size": 0}, "block_size must be an integer >= 1"),
        ("rls-fast", {"p1": -1}, "p1 must be an integer >= 1"),
        ("squeak", {"qbarr": 20}, "no parameter 'qbarr' .did you mean 'qbar'"),
        ("bless", {"q": 1.0}, r"q must be a finite number >= 1.01 \(each ridge is a level of work"),
        ("bless", {"qbar": 0}, "qbar must be"),
    ],
)
def test_bad_sampler_parameters(name, params, message):
    with pytest.raises(ValueError, match=message):
        kbench.make_sampler(name, **params)


def test_the_lcsl_variant_of_bless_has_its_levels_and_weights(data300):
    """variant="lcsl": ⌈ln n⌉ levels whatever λ, atoms weighted by their acceptance ratio p/u;
    the default: levels of ratio q from n·κ² down to nλ, atoms weighted by p."""
    from kbench.samplers.bless import atom_weights

    X, kernel = data300
    n, gamma0 = len(X), len(X) * kernel.diag(X).max()
    for variant in ("paper", "lcsl"):
        for lam in (1e-2, 1e-5):
            approx = kbench.make_sampler("bless", variant=variant).fit(X, kernel, rank=20, lam=lam,
                                                                       seed=0)
            levels = len(approx.info["history"]) - 1
            expected = (math.ceil(math.log(n)) if variant == "lcsl"
                        else math.ceil(math.log2(gamma0 / (n * lam))))
            assert levels == expected and approx.info["variant"] == variant
    p, u = np.array([0.1, 0.2, 0.5]), np.array([0.4, 0.2, 1.0])
    np.testing.assert_array_equal(atom_weights(p, u, "paper"), p)
    np.testing.assert_array_equal(atom_weights(p, u, "lcsl"), [0.25, 1.0, 0.5])
    with pytest.raises(ValueError, match="variant must be 'paper' or 'lcsl'"):
        kbench.make_sampler("bless", variant="authors")
