"""Kernel functions: blockwise evaluation, diagonal, evaluation counting, spectral samplers.

``kernel(X, Y)`` evaluates in row blocks of a fixed shape (rows chosen from the number of
columns only, the last block zero-padded), so memory stays bounded and every entry is
bit-for-bit the same however ``X`` is split into calls: BLAS picks its code path by
matrix shape, and every block has the same shape. ``kernel.evals`` counts the entries
evaluated (diagonal entries included). Stationary kernels with a spectral density expose
``sample_frequencies`` for random Fourier features; isotropic ones also expose the law of
the frequency norms (``sample_frequency_norms``) for orthogonal random features.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import ClassVar

import numpy as np
from scipy.spatial.distance import cdist, pdist
from scipy.special import zeta

from kbench._validation import check_features, check_positive
from kbench.errors import Refused
from kbench.hookspecs import hookimpl

#: entries of one row block (2 MiB of float64, cache-sized); rows per block are a power of
#: two in [64, 2048], so a call on few rows pads at most to one block
_BLOCK_ENTRIES = 1 << 18
#: points used by the median heuristic
_MEDIAN_SUBSAMPLE = 1000


def block_rows(n_columns: int) -> int:
    """Rows of one evaluation block for a kernel block with ``n_columns`` columns."""
    rows = max(1, _BLOCK_ENTRIES // max(n_columns, 1))
    return int(min(2048, max(64, 1 << (rows.bit_length() - 1))))


class Kernel:
    """Base class of kernels. Subclasses implement ``_prepare``, ``_block`` and ``diag``."""

    name: ClassVar[str] = ""
    #: True when frequencies can be sampled from the spectral measure (rff)
    spectral: ClassVar[bool] = False
    #: True when the spectral measure is rotation invariant (orf)
    isotropic: ClassVar[bool] = False

    def __init__(self) -> None:
        self.evals = 0

    # -- parameters ----------------------------------------------------------------
    def get_params(self) -> dict:
        """Constructor parameters, as given."""
        return {}

    def resolved_params(self) -> dict:
        """The parameters in use, data-dependent ones resolved by ``fit`` (``sigma_``)."""
        return self.get_params()

    def spec(self) -> str:
        """``name:key=value,...`` with the resolved parameters, the form the command line accepts."""
        from kbench.spec import Spec

        params = {k: v for k, v in self.resolved_params().items() if v is not None}
        return Spec.of("kernel", self.name, params).label

    def __repr__(self) -> str:
        params = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({params})"

    @property
    def fitted(self) -> bool:
        """False while a parameter waits to be resolved from data (``sigma="median"``)."""
        return True

    def fit(self, X) -> Kernel:
        """Resolve data-dependent parameters from training data; returns ``self``."""
        return self

    # -- evaluation ----------------------------------------------------------------
    def __call__(self, X, Y=None) -> np.ndarray:
        """The kernel matrix k(X, Y) (``Y=None`` means ``Y = X``), shape (len(X), len(Y))."""
        X = self._check(X, "X")
        Y = X if Y is None else self._check(Y, "Y", X.shape[1])
        return self._evaluate(X, Y)

    def _evaluate(self, X: np.ndarray, Y: np.ndarray) -> np.ndarray:
        """``__call__`` without input checks, for callers that hold checked float64 arrays."""
        n, m = X.shape[0], Y.shape[0]
        out = np.empty((n, m))
        with np.errstate(over="ignore", invalid="ignore"):  # non-finite values raise below
            prepared = self._prepare(Y)
            rows = block_rows(m)
            padded = scratch = None
            for start in range(0, n, rows):
                stop = min(start + rows, n)
                if stop - start == rows:
                    self._block(X[start:stop], prepared, out[start:stop])
                else:
                    if padded is None:
                        padded, scratch = np.zeros((rows, X.shape[1])), np.empty((rows, m))
                    padded[: stop - start] = X[start:stop]
                    padded[stop - start :] = 0.0
                    self._block(padded, prepared, scratch)
                    out[start:stop] = scratch[: stop - start]
                self._check_values(out[start:stop], X[start:stop])
        self.evals += n * m
        return out

    def _check_values(self, values: np.ndarray, X: np.ndarray) -> None:
        """Kernel values must be finite: inputs near the float64 range overflow silently."""
        if not np.isfinite(values).all():
            raise FloatingPointError(
                f"the {self.name} kernel gave non-finite values (inputs up to |x| = "
                f"{np.abs(X).max():.3g}; kernel parameters {self.resolved_params()}): inputs this large "
                "overflow float64. Rescale the features (datasets standardize by default) or the kernel."
            )

    def diag(self, X) -> np.ndarray:
        """k(x, x) for every row of X, without forming a kernel matrix."""
        X = self._check(X, "X")
        self.evals += X.shape[0]
        with np.errstate(over="ignore", invalid="ignore"):
            values = self._diag(X)
        self._check_values(values, X)
        return values

    def _check(self, X, name: str, n_features: int | None = None) -> np.ndarray:
        if not self.fitted:
            raise ValueError(
                f"{self!r} has a parameter resolved from data; call kernel.fit(X_train) first "
                "(samplers do it on the data they are fitted on)."
            )
        return check_features(X, name, n_features)

    def _prepare(self, Y: np.ndarray):
        return Y

    def _block(self, Xb: np.ndarray, prepared, out: np.ndarray) -> None:
        raise NotImplementedError

    def _diag(self, X: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    # -- spectral sampling -----------------------------------------------------------
    def sample_frequencies(self, rng: np.random.Generator, n_frequencies: int, d: int) -> np.ndarray:
        """(n_frequencies, d) draws ω from the spectral measure: k(x, y) = k(0)·E cos ωᵀ(x − y)."""
        raise self._no_spectral_sampler()

    def _no_spectral_sampler(self) -> Refused:
        return Refused(
            f"the {self.name} kernel has no spectral sampler, so random Fourier features cannot "
            "approximate it; use a Nyström sampler (uniform, rls, rp-cholesky, ...) or a kernel "
            "with one (gaussian, laplacian, matern, periodic-sobolev, periodic-exp)."
        )

    def sample_frequency_norms(self, rng: np.random.Generator, n: int, d: int) -> np.ndarray:
        """n draws of ‖ω‖ for an isotropic spectral measure (orthogonal random features)."""
        if not self.spectral:
            raise self._no_spectral_sampler()
        raise Refused(
            f"orthogonal random features need a rotation-invariant spectral measure; the {self.name} "
            "kernel has none. Use rff, or an isotropic kernel (gaussian, matern)."
        )

    @property
    def diag_value(self) -> float:
        """k(x, x) of a stationary kernel: the scale of its random Fourier features."""
        raise Refused(f"the {self.name} kernel is not stationary: random Fourier features need one.")


# ---------------------------------------------------------------------------------------
# Stationary kernels with a length scale
# ---------------------------------------------------------------------------------------
class _LengthScaleKernel(Kernel):
    """A stationary kernel of ‖x − y‖/σ with ``sigma`` numeric or ``"median"``."""

    metric: ClassVar[str] = "euclidean"
    spectral = True

    def __init__(self, sigma: float | str | None = None, gamma: float | None = None) -> None:
        super().__init__()
        if sigma is not None and gamma is not None:
            raise ValueError(f"{self.name}: pass sigma or gamma, not both (gamma = {self._gamma_rule}).")
        if gamma is not None:
            check_positive(gamma, "gamma", self.name)
        elif sigma is not None and sigma != "median":
            check_positive(sigma, "sigma", f"{self.name} kernel (or pass sigma='median')")
        self.sigma, self.gamma = sigma, gamma
        #: the length scale in use: resolved from gamma or the default here, from data by fit
        self.sigma_ = (None if sigma == "median" else float(sigma) if sigma is not None
                       else self._sigma_from_gamma(gamma) if gamma is not None else 1.0)

    _gamma_rule = "1/(2σ²)"

    @staticmethod
    def _sigma_from_gamma(gamma: float) -> float:
        return 1.0 / math.sqrt(2.0 * gamma)

    def get_params(self) -> dict:
        return {"sigma": self.sigma, "gamma": self.gamma}

    def resolved_params(self) -> dict:
        return {"sigma": self.sigma_}

    @property
    def fitted(self) -> bool:
        return self.sigma_ is not None

    def fit(self, X) -> Kernel:
        """``sigma="median"``: ``sigma_`` is the median pairwise distance of (a subsample of) X."""
        if self.sigma == "median":
            X = check_features(X, "X")
            idx = np.random.default_rng(0).permutation(len(X))[:_MEDIAN_SUBSAMPLE]
            median = float(np.median(pdist(X[idx], self.metric))) if len(idx) > 1 else 0.0
            if not median > 0:
                raise ValueError(
                    f"{self.name}: sigma='median' needs at least two distinct points in X "
                    f"(got n_samples = {len(X)}); pass a numeric sigma."
                )
            if not np.isfinite(median):
                raise FloatingPointError(
                    f"{self.name}: sigma='median' overflowed (distances between inputs up to |x| = "
                    f"{np.abs(X).max():.3g} exceed float64); rescale the features."
                )
            self.sigma_ = median
        return self

    @property
    def diag_value(self) -> float:
        return 1.0

    def _diag(self, X: np.ndarray) -> np.ndarray:
        return np.ones(X.shape[0])


class _EuclideanKernel(_LengthScaleKernel):
    """Kernels of the squared Euclidean distance, evaluated with one GEMM per block."""

    def _prepare(self, Y):
        return Y, np.einsum("ij,ij->i", Y, Y)

    def _block(self, Xb, prepared, out):
        Y, yy = prepared
        np.matmul(Xb, Y.T, out=out)
        out *= -2.0
        out += np.einsum("ij,ij->i", Xb, Xb)[:, None]
        out += yy[None, :]
        np.maximum(out, 0.0, out=out)
        self._from_sq_distance(out)

    def _from_sq_distance(self, sq: np.ndarray) -> None:
        raise NotImplementedError


class GaussianKernel(_EuclideanKernel):
    """Gaussian kernel exp(−‖x − y‖²/(2σ²)); gamma = 1/(2σ²) is accepted."""

    name = "gaussian"
    isotropic = True

    def _from_sq_distance(self, sq):
        sq *= -1.0 / (2.0 * self.sigma_**2)
        np.exp(sq, out=sq)

    def sample_frequencies(self, rng, n_frequencies, d):
        return rng.standard_normal((n_frequencies, d)) / self.sigma_

    def sample_frequency_norms(self, rng, n, d):
        return np.sqrt(rng.chisquare(d, size=n)) / self.sigma_


class MaternKernel(_EuclideanKernel):
    """Matérn kernel with smoothness nu ∈ {0.5, 1.5, 2.5} and length scale sigma."""

    name = "matern"
    isotropic = True

    def __init__(self, sigma: float | str | None = None, nu: float = 1.5) -> None:
        super().__init__(sigma=sigma)
        if nu not in (0.5, 1.5, 2.5):
            raise ValueError(f"matern: nu must be 0.5, 1.5 or 2.5 (closed forms), got {nu!r}.")
        self.nu = float(nu)

    def get_params(self) -> dict:
        return {"sigma": self.sigma, "nu": self.nu}

    def resolved_params(self) -> dict:
        return {"sigma": self.sigma_, "nu": self.nu}

    def _from_sq_distance(self, sq):
        np.sqrt(sq, out=sq)
        sq *= math.sqrt(2.0 * self.nu) / self.sigma_  # sq now holds s = √(2ν)·r/σ
        if self.nu == 0.5:
            poly = 1.0
        elif self.nu == 1.5:
            poly = 1.0 + sq
        else:
            poly = 1.0 + sq + sq * sq / 3.0
        np.exp(-sq, out=sq)
        sq *= poly

    def _radial_scale(self, rng, n):
        # Student-t with 2ν degrees of freedom, scale 1/σ (the Matérn spectral density)
        return np.sqrt(2.0 * self.nu / rng.chisquare(2.0 * self.nu, size=n)) / self.sigma_

    def sample_frequencies(self, rng, n_frequencies, d):
        g = rng.standard_normal((n_frequencies, d))
        return g * self._radial_scale(rng, n_frequencies)[:, None]

    def sample_frequency_norms(self, rng, n, d):
        return np.sqrt(rng.chisquare(d, size=n)) * self._radial_scale(rng, n)


class LaplacianKernel(_LengthScaleKernel):
    """Laplacian kernel exp(−‖x − y‖₁/σ) (L1, as scikit-learn); gamma = 1/σ is accepted."""

    name = "laplacian"
    metric = "cityblock"
    _gamma_rule = "1/σ"

    @staticmethod
    def _sigma_from_gamma(gamma):
        return 1.0 / gamma

    def _block(self, Xb, Y, out):
        cdist(Xb, Y, "cityblock", out=out)
        out *= -1.0 / self.sigma_
        np.exp(out, out=out)

    def sample_frequencies(self, rng, n_frequencies, d):
        # the Fourier transform of exp(−|t|/σ) is a Cauchy density of scale 1/σ, per coordinate
        return rng.standard_cauchy((n_frequencies, d)) / self.sigma_


# ---------------------------------------------------------------------------------------
# Dot-product kernels
# ---------------------------------------------------------------------------------------
class LinearKernel(Kernel):
    """Linear kernel xᵀy."""

    name = "linear"

    def _block(self, Xb, Y, out):
        np.matmul(Xb, Y.T, out=out)

    def _diag(self, X):
        return np.einsum("ij,ij->i", X, X)


class PolynomialKernel(Kernel):
    """Polynomial kernel (gamma·xᵀy + coef0)^degree; gamma defaults to 1/n_features."""

    name = "polynomial"

    def __init__(self, degree: int = 3, gamma: float | None = None, coef0: float = 1.0) -> None:
        super().__init__()
        self.degree = check_positive(degree, "degree", "polynomial kernel", integer=True)
        self.gamma = None if gamma is None else check_positive(gamma, "gamma", "polynomial kernel")
        self.coef0 = float(coef0)

    def get_params(self) -> dict:
        return {"degree": self.degree, "gamma": self.gamma, "coef0": self.coef0}

    def _gamma(self, d: int) -> float:
        return 1.0 / d if self.gamma is None else self.gamma

    def _block(self, Xb, Y, out):
        np.matmul(Xb, Y.T, out=out)
        out *= self._gamma(Xb.shape[1])
        out += self.coef0
        np.power(out, self.degree, out=out)

    def _diag(self, X):
        return (self._gamma(X.shape[1]) * np.einsum("ij,ij->i", X, X) + self.coef0) ** self.degree


# ---------------------------------------------------------------------------------------
# Periodic kernels on [0, 1) (Bach 2013 §5 and App. D)
# ---------------------------------------------------------------------------------------
class _PeriodicKernel(Kernel):
    """k(x, y) = Σ_{i≥1} 2 μ_i cos 2πi(x − y) on one feature, period 1."""

    spectral = True
    isotropic = True  # in one dimension the law of |ω| is the whole spectral measure

    def _check(self, X, name, n_features=None):
        X = super()._check(X, name, n_features)
        if X.shape[1] != 1:
            raise ValueError(
                f"the {self.name} kernel is defined on [0, 1) with one feature; {name} has "
                f"{X.shape[1]} features. Pass {name}[:, :1] or use another kernel."
            )
        return X

    def _block(self, Xb, Y, out):
        np.subtract(Xb[:, :1], Y[:, 0][None, :], out=out)
        np.mod(out, 1.0, out=out)
        self._of_difference(out)

    def _diag(self, X):
        return np.full(X.shape[0], self.diag_value)

    def sample_frequencies(self, rng, n_frequencies, d):
        return self.sample_frequency_norms(rng, n_frequencies, d)[:, None]

    def sample_frequency_norms(self, rng, n, d):
        return 2.0 * np.pi * self._sample_index(rng, n)


def _bernoulli_numbers(n: int) -> list[Fraction]:
    """B_0..B_n exactly (B_1 = −1/2), by the Akiyama–Tanigawa algorithm.

    Exact rationals: scipy.special.bernoulli is off by ~2e-12 relative at B_4, which is
    visible in the kernel at 1e-10.
    """
    a, numbers = [Fraction(0)] * (n + 1), []
    for m in range(n + 1):
        a[m] = Fraction(1, m + 1)
        for j in range(m, 0, -1):
            a[j - 1] = j * (a[j - 1] - a[j])
        numbers.append(a[0])
    if n >= 1:
        numbers[1] = Fraction(-1, 2)
    return numbers


class PeriodicSobolevKernel(_PeriodicKernel):
    """Periodic Sobolev kernel μ_i = i^(−2β): (−1)^(β+1)(2π)^(2β)/(2β)!·B_2β({x − y}).

    Bach (2013) App. D writes 1/(2β)!·B_2β, which misses the sign and the scale and is
    negative definite for even β; this is the corrected closed form (docs/conventions.md).
    """

    name = "periodic-sobolev"
    #: above it the closed form overflows float64; the kernel is 2cos(2π(x − y)) to within
    #: 2·2^(−2β) ≤ 2e-30 anyway, so larger β adds nothing.
    max_beta = 50

    def __init__(self, beta: int = 1) -> None:
        super().__init__()
        self.beta = check_positive(beta, "beta", "periodic-sobolev kernel", integer=True)
        if self.beta > self.max_beta:
            raise ValueError(
                f"periodic-sobolev kernel: beta must be <= {self.max_beta}, got {beta}; beyond it the "
                "closed form overflows float64 and the kernel equals 2cos(2π(x − y)) to machine precision.")
        n = 2 * self.beta
        numbers = _bernoulli_numbers(n)
        # B_n(t) = Σ_k C(n, k) B_k t^(n−k), coefficients from the highest power down
        scale = (-1) ** (self.beta + 1) * (2 * np.pi) ** n / math.factorial(n)
        self._coefficients = scale * np.array([float(math.comb(n, k) * numbers[k]) for k in range(n + 1)])

    def get_params(self) -> dict:
        return {"beta": self.beta}

    def _of_difference(self, t):
        values = np.full_like(t, self._coefficients[0])
        for c in self._coefficients[1:]:  # Horner, O(2β) passes over the block
            values *= t
            values += c
        t[...] = values

    @property
    def diag_value(self) -> float:
        return float(2.0 * zeta(2 * self.beta))

    def _sample_index(self, rng, n):
        return rng.zipf(2 * self.beta, size=n)  # P(i) ∝ i^(−2β)


class PeriodicExpKernel(_PeriodicKernel):
    """Periodic kernel with geometric spectrum μ_i = e^(−ρi) (Bach 2013 Table 1).

    Closed form 2(r cos θ − r²)/(1 − 2r cos θ + r²), r = e^(−ρ), θ = 2π(x − y).
    """

    name = "periodic-exp"

    def __init__(self, rho: float = 1.0) -> None:
        super().__init__()
        self.rho = check_positive(rho, "rho", "periodic-exp kernel")

    def get_params(self) -> dict:
        return {"rho": self.rho}

    def _of_difference(self, t):
        r = math.exp(-self.rho)
        c = np.cos(2.0 * np.pi * t)
        t[...] = 2.0 * (r * c - r * r) / (1.0 - 2.0 * r * c + r * r)

    @property
    def diag_value(self) -> float:
        r = math.exp(-self.rho)
        return 2.0 * r / (1.0 - r)

    def _sample_index(self, rng, n):
        return rng.geometric(1.0 - math.exp(-self.rho), size=n)  # P(i) ∝ r^i, i ≥ 1


BUILTIN_KERNELS = [
    GaussianKernel,
    LaplacianKernel,
    MaternKernel,
    PolynomialKernel,
    LinearKernel,
    PeriodicSobolevKernel,
    PeriodicExpKernel,
]


@hookimpl
def kbench_register_kernels():
    return BUILTIN_KERNELS
