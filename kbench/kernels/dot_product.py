"""Dot-product kernels: linear and polynomial."""

from __future__ import annotations

import math
import sys

import numpy as np

from kbench.kernels.base import Kernel
from kbench.parameters import Param


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
    parameters = {
        "degree": Param(int, "the degree d", low=1),
        "gamma": Param(float, "the scale γ of xᵀy", low=0, low_open=True, none="1/n_features"),
        # (γxᵀy + c)^d is a kernel for c >= 0 (a sum of products of kernels); c < 0 makes
        # it indefinite
        "coef0": Param(float, "the constant c", low=0,
                       why="a negative c makes the kernel indefinite"),
    }

    def __init__(self, degree: int = 3, gamma: float | None = None, coef0: float = 1.0) -> None:
        super().__init__()
        if coef0 > 0 and degree * math.log(coef0) >= math.log(sys.float_info.max):
            raise ValueError(f"kernel 'polynomial': coef0^degree = {coef0:g}^{degree} overflows "
                             "float64; lower coef0 or degree.")
        self.degree, self.gamma, self.coef0 = degree, gamma, coef0

    def gamma_for(self, d: int) -> float:
        """The γ in use on d features: the given one, else 1/d (scikit-learn's default)."""
        return 1.0 / d if self.gamma is None else self.gamma

    def fit(self, X, y=None, validation=None) -> Kernel:
        """Check that float64 can hold the kernel on the training rows: with coef0 > 0, k(x, x)
        lies in [coef0^d, max]; a span past 1/ε leaves the smaller rows' entries, and any
        ridge nλ, below the round-off of the largest (a high degree or gamma). With
        γ·max‖x‖² below the round-off of coef0, every entry is coef0^d: a constant kernel."""
        X = self._check(X, "X")
        # ≥ |γxᵀy| (Cauchy–Schwarz)
        top = self.gamma_for(X.shape[1]) * float(np.max(np.einsum("ij,ij->i", X, X)))
        if top <= np.finfo(float).eps * self.coef0 or (self.coef0 == 0
                                                       and not top**self.degree > 0):
            raise ValueError(
                "the polynomial kernel is constant on the training rows to float64's precision "
                f"(γ·max‖x‖² = {top:.1e} against coef0 = {self.coef0:g}, degree {self.degree}): "
                "raise gamma (or lower coef0).")
        if self.coef0 > 0:
            with np.errstate(over="ignore"):
                span = float(np.max(self._diag(X))) / self.coef0**self.degree
            if not span <= 1.0 / np.finfo(float).eps:
                raise ValueError(
                    f"the polynomial kernel of degree {self.degree} spans {span:.1e} on the "
                    "training rows (k(x, x) from coef0^degree to its largest), past float64's "
                    "precision (1/ε = 4.5e15): the exact kernel's solution would be round-off. "
                    "Lower degree or gamma (or raise coef0).")
        return self

    def _block(self, Xb, Y, out):
        np.matmul(Xb, Y.T, out=out)
        out *= self.gamma_for(Xb.shape[1])
        out += self.coef0
        np.power(out, self.degree, out=out)

    def _diag(self, X):
        return (self.gamma_for(X.shape[1]) * np.einsum("ij,ij->i", X, X)
                + self.coef0) ** self.degree


