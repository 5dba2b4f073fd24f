"""scikit-learn adapter: any kbench sampler as a transformer for Pipelines.

    from kbench.sklearn import KernelApproximation
    make_pipeline(KernelApproximation("rp-cholesky", n_components=500), RidgeClassifier())
"""

from __future__ import annotations

import numbers

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted, validate_data

from kbench.registry import make_kernel, make_sampler

#: kernels whose default bandwidth, when no kernel_params are given, is the median heuristic
MEDIAN_KERNELS = ("gaussian", "laplacian", "matern")


class KernelApproximation(TransformerMixin, BaseEstimator):
    """Feature map z with z(x)ᵀz(y) ≈ k(x, y) from a kbench sampler.

    Parameters: ``sampler`` and ``kernel`` are registry names with their parameters in
    ``sampler_params`` / ``kernel_params``; ``n_components`` is the rank; ``lam`` the
    per-sample ridge used by leverage-score samplers; ``random_state`` seeds the sampler.
    Without ``kernel_params`` a gaussian kernel takes ``sigma="median"`` (the median
    pairwise distance of the data it is fitted on), as ``kbench run`` does: a fixed σ = 1
    on unscaled data gives a kernel matrix close to the identity.
    """

    def __init__(self, sampler: str = "rp-cholesky", n_components: int = 100,
                 kernel: str = "gaussian", kernel_params: dict | None = None,
                 sampler_params: dict | None = None, lam: float = 1e-3, random_state=None):
        self.sampler = sampler
        self.n_components = n_components
        self.kernel = kernel
        self.kernel_params = kernel_params
        self.sampler_params = sampler_params
        self.lam = lam
        self.random_state = random_state

    def fit(self, X, y=None):
        n = self.n_components
        if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 1:
            raise ValueError(f"n_components must be an integer >= 1 (the rank), got {n!r}.")
        if "lam" in (self.sampler_params or {}):
            raise ValueError("lam is given as KernelApproximation(lam=...), the sampler's ridge, "
                             "not in sampler_params.")
        X = validate_data(self, X, dtype=np.float64)
        params = self.kernel_params if self.kernel_params is not None else (
            {"sigma": "median"} if self.kernel in MEDIAN_KERNELS else {})
        kernel = make_kernel(self.kernel, **params).fit(X, y)
        sampler = make_sampler(self.sampler, **(self.sampler_params or {}))
        seed = int(check_random_state(self.random_state).randint(np.iinfo(np.int32).max))
        self.approximation_ = sampler.fit(X, kernel, rank=self.n_components, lam=self.lam,
                                          seed=seed)
        self.kernel_ = kernel
        self.n_components_ = self.approximation_.rank
        return self

    def transform(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        # (a periodic kernel's period)
        return self.approximation_.transform(self.kernel_.check_points(X))

    def get_feature_names_out(self, input_features=None):
        check_is_fitted(self)
        return np.array([f"kernelapproximation{i}" for i in range(self.n_components_)],
                        dtype=object)
