"""Stationary kernels of ‖x − y‖/σ: gaussian, laplacian, matern (``sigma`` numeric,
``"median"`` or ``"cv"``: kbench.kernels.bandwidth), with their spectral samplers for random
Fourier features."""

from __future__ import annotations

import copy
import math
from typing import ClassVar

import numpy as np
from scipy.spatial.distance import cdist

from kbench._validation import check_features
from kbench.kernels.bandwidth import cv_sigma, median_distance
from kbench.kernels.base import Kernel
from kbench.parameters import Param

#: a numeric length scale: 1/(2σ²) must be a normal, finite float64 (σ = 1e-300 underflows σ² to 0)
#: the data-driven choices of sigma (kbench.kernels.bandwidth)
DATA_DRIVEN = ("median", "cv")
SIGMA = Param(float, "the length scale σ: a number, or chosen on the data", low=1e-150, high=1e150,
              why="1/σ² must be a finite float64", choices=DATA_DRIVEN, none="from gamma, else 1")
#: float64's machine epsilon, the unit of the GEMM form's round-off
EPS = float(np.finfo(np.float64).eps)


# ---------------------------------------------------------------------------------------
# Stationary kernels with a length scale
# ---------------------------------------------------------------------------------------
class _LengthScaleKernel(Kernel):
    """A stationary kernel of ‖x − y‖/σ with ``sigma`` numeric, ``"median"`` or ``"cv"``."""

    metric: ClassVar[str] = "euclidean"
    spectral = True

    def __init__(self, sigma: float | str | None = None, gamma: float | None = None) -> None:
        super().__init__()
        if sigma is not None and gamma is not None:
            raise ValueError(f"kernel {self.name!r}: pass sigma or gamma, not both (gamma = "
                             f"{self._gamma_rule}).")
        self.sigma, self.gamma = sigma, gamma
        #: the length scale in use: resolved from gamma or the default here, from data by fit
        self.sigma_ = (None if sigma in DATA_DRIVEN else float(sigma) if sigma is not None
                       else self._sigma_from_gamma(gamma) if gamma is not None else 1.0)

    _gamma_rule = "1/(2σ²)"

    @staticmethod
    def _sigma_from_gamma(gamma: float) -> float:
        return 1.0 / math.sqrt(2.0 * gamma)

    def resolved_params(self) -> dict:
        """σ in use; before ``fit`` resolves a data-driven σ, the choice itself ("median"), so
        that :meth:`spec` names this kernel and not σ = 1."""
        return {"sigma": self.sigma if self.sigma_ is None else self.sigma_}

    @property
    def fitted(self) -> bool:
        return self.sigma_ is not None

    def fit(self, X, y=None, validation=None) -> Kernel:
        """``sigma="median"``: ``sigma_`` is the median pairwise distance of (a subsample of)
        X; ``sigma="cv"``: the σ of a grid around it with the smallest error of kernel ridge
        regression on ``y``, on the ``validation`` rows (X_val, y_val) when given, else on a
        held-out part of X (kbench.kernels.bandwidth)."""
        if self.sigma in DATA_DRIVEN:
            X = check_features(X, "X")
            owner = f"{self.name}: sigma={self.sigma!r}"
            if self.sigma == "median":
                self.sigma_ = median_distance(X, self.metric, owner)
            else:
                self.sigma_ = cv_sigma(self._with_sigma, X, y, self.metric, owner, validation)
        return self

    def _with_sigma(self, sigma: float) -> Kernel:
        probe = copy.copy(self)
        probe.sigma_ = float(sigma)
        return probe

    @property
    def diag_value(self) -> float:
        return 1.0

    def _diag(self, X: np.ndarray) -> np.ndarray:
        return np.ones(X.shape[0])


class _EuclideanKernel(_LengthScaleKernel):
    """Kernels of the squared Euclidean distance, evaluated with one GEMM per block. The
    kernel's factor c (``_sq_factor``) is folded into Y: for a block of many columns,
    x̃ = [x, ‖x‖², 1] and ỹ = c·[−2y, 1, ‖y‖²] give x̃ᵀỹ = c‖x − y‖² in the GEMM alone;
    for a few columns copying x̃ costs more than it saves, and c‖x‖², c‖y‖² are added to
    the GEMM's −2c·xᵀy. One elementwise pass remains besides the clamp."""

    #: fewer columns than this take the second form
    _MIN_AUGMENTED_COLUMNS = 64

    def _sq_factor(self) -> float:
        """The factor c the block holds the squared distances multiplied by."""
        return 1.0

    def _prepare(self, Y):
        c = self._sq_factor()
        prepared = np.empty((Y.shape[0], Y.shape[1] + 2))
        np.multiply(Y, -2.0 * c, out=prepared[:, :-2])
        prepared[:, -2] = c
        prepared[:, -1] = c * np.einsum("ij,ij->i", Y, Y)
        return prepared

    def _prepare_padded(self, Y, padding):
        prepared = self._prepare(Y)  # row by row: the zero rows prepared in place
        if len(padding):
            prepared[padding] = self._prepare(np.zeros((1, Y.shape[1])))
        return prepared

    def _block(self, Xb, prepared, out):
        c = self._sq_factor()
        if prepared.shape[0] >= self._MIN_AUGMENTED_COLUMNS:
            augmented = np.empty((Xb.shape[0], Xb.shape[1] + 2))
            augmented[:, :-2] = Xb
            augmented[:, -2] = np.einsum("ij,ij->i", Xb, Xb)
            augmented[:, -1] = 1.0
            np.matmul(augmented, prepared.T, out=out)
            x_terms = c * augmented[:, -2]
        else:
            np.matmul(Xb, prepared[:, :-2].T, out=out)
            x_terms = c * np.einsum("ij,ij->i", Xb, Xb)
            out += x_terms[:, None]
            out += prepared[:, -1][None, :]
        self._zero_round_off(out, x_terms, prepared[:, -1], Xb.shape[1])
        # c‖x − y‖² has the sign of c; round-off may give it the other one
        (np.minimum if c < 0 else np.maximum)(out, 0.0, out=out)
        self._from_sq_distance(out)

    def _zero_round_off(self, out, x_terms, y_terms, d):
        """Set to 0 the entries of c‖x − y‖² = c‖x‖² + c‖y‖² − 2c·xᵀy within its round-off,
        about (d + 2)·ε·(|c‖x‖²| + |c‖y‖²|) (Higham 2002, Accuracy and Stability of
        Numerical Algorithms, §3.1): a row against itself gives exactly k(x, x), however
        small σ. The pass runs only when the bound moves a kernel value by more than √ε,
        e.g. σ ≲ 1e-7 on standardized data or large offsets with standardize=false."""
        bound = (d + 2) * EPS
        worst = bound * (np.abs(x_terms).max(initial=0.0) + np.abs(y_terms).max(initial=0.0))
        probe = np.array([[math.copysign(worst, self._sq_factor())]])
        self._from_sq_distance(probe)
        if abs(probe[0, 0] - self.diag_value) <= math.sqrt(EPS):
            return
        tolerance = bound * (np.abs(x_terms)[:, None] + np.abs(y_terms)[None, :])
        out[np.abs(out) <= tolerance] = 0.0

    def _from_sq_distance(self, sq: np.ndarray) -> None:
        """Turn the block of c‖x − y‖² into kernel values, in place."""
        raise NotImplementedError


class GaussianKernel(_EuclideanKernel):
    """Gaussian kernel exp(−‖x − y‖²/(2σ²)); sigma 1 unless given (or "median", "cv" from the
    data); gamma = 1/(2σ²) is accepted."""

    name = "gaussian"
    isotropic = True
    parameters = {"sigma": SIGMA,
                  "gamma": Param(float, "the scale written as γ = 1/(2σ²) instead of σ", low=5e-301,
                                                 high=5e299, why="σ in [1e-150, 1e+150]",
                                                 none="from σ")}

    def _sq_factor(self):
        return -0.5 / self.sigma_**2

    def _from_sq_distance(self, sq):
        np.exp(sq, out=sq)

    def sample_frequencies(self, rng, n_frequencies, d):
        return rng.standard_normal((n_frequencies, d)) / self.sigma_

    def sample_frequency_norms(self, rng, n, d):
        return np.sqrt(rng.chisquare(d, size=n)) / self.sigma_


class MaternKernel(_EuclideanKernel):
    """Matérn kernel with smoothness nu ∈ {0.5, 1.5, 2.5} (1.5 unless given) and length scale
    sigma (1 unless given, or "median", "cv")."""

    name = "matern"
    isotropic = True
    parameters = {"sigma": SIGMA, "nu": Param(float, "the smoothness ν (the closed forms)",
                                              choices=(0.5, 1.5, 2.5))}

    def __init__(self, sigma: float | str | None = None, nu: float = 1.5) -> None:
        super().__init__(sigma=sigma)
        self.nu = nu

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
    """Laplacian kernel exp(−‖x − y‖₁/σ) (L1, as scikit-learn); sigma 1 unless given (or
    "median", "cv"); gamma = 1/σ is accepted."""

    name = "laplacian"
    metric = "cityblock"
    parameters = {"sigma": SIGMA,
                  "gamma": Param(float, "the scale written as γ = 1/σ instead of σ", low=1e-150,
                                                 high=1e150, why="σ in [1e-150, 1e+150]",
                                                 none="from σ")}
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


