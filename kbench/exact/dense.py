"""The dense exact baseline (up to kbench.exact.baseline.DENSE_MAX_N training rows): K_train
eigendecomposed once, with K(validation, train), K(test, train) and diag K(test), from which
every diagnostic, λ path and KPCA error is a few products; and the :class:`Predictions` along a
λ path that both exact baselines return."""

from __future__ import annotations

import time
from functools import cached_property
from typing import NamedTuple

import numpy as np

from kbench._files import read_keyed_npz, write_keyed_npz
from kbench._validation import check_components, check_lam, check_lam_path, check_ridge_path
from kbench.datasets.base import Dataset
from kbench.kernels.base import Kernel
from kbench.kernels.ridge import eigendecomposition, ridge_coefficients

#: what a saved baseline holds besides its key
_ARRAYS = ("s", "U", "K_val", "K_test", "diag_test")
_SCALARS = ("n", "trace", "ones_K_ones", "seconds")


def check_arguments(data, kernel, owner: str) -> None:
    """A ValueError naming the argument unless ``data`` is a Dataset and ``kernel`` a Kernel."""
    for name, value, kind, what in (
            ("data", data, Dataset, "a kbench Dataset (kbench.load_dataset)"),
            ("kernel", kernel, Kernel, "a kbench kernel (kbench.make_kernel)")):
        if not isinstance(value, kind):
            raise ValueError(f"{owner}: {name} must be {what}, got {type(value).__name__}.")


def _read_only(baseline, names) -> None:
    """The baseline's arrays cannot be written: every cell of a repetition reads them."""
    for name in names:
        getattr(baseline, name).flags.writeable = False


class Predictions(NamedTuple):
    """Exact KRR predictions along a λ path on the training, validation and test rows, each
    of shape (len(lams), rows, targets)."""

    train: np.ndarray
    validation: np.ndarray
    test: np.ndarray


class ExactBaseline:
    """K_train = U diag(s) Uᵀ (s descending, clipped ≥ 0), K(validation, train),
    K(test, train) and diag K(test); ``seconds`` is the time this took (the cost of the exact
    methods, reported as ``time_exact_s``)."""

    dense = True
    method = "dense"
    #: whether the baseline holds work its shared file does not (never: it is computed whole)
    unsaved = False

    def __init__(self, data, kernel) -> None:
        check_arguments(data, kernel, "ExactBaseline")
        start = time.perf_counter()
        X = data.X_train
        self.n = X.shape[0]
        K = kernel(X)
        self.trace = float(np.trace(K))
        self.s, self.U = eigendecomposition(K)
        # val_size=0: none
        self.K_val = kernel(data.X_val, X) if len(data.X_val) else np.zeros((0, self.n))
        self.K_test = kernel(data.X_test, X)
        self.diag_test = kernel.diag(data.X_test)
        self.ones_K_ones = float(self.s @ (self.U.sum(axis=0) ** 2))  # 1ᵀK1, for centered KPCA
        self.seconds = time.perf_counter() - start
        _read_only(self, _ARRAYS)

    # -- sharing between processes ---------------------------------------------------------
    def save(self, path, key: dict) -> None:
        """Write the baseline to ``path`` (npz, atomically) with ``key``, which :meth:`load`
        checks."""
        write_keyed_npz(path, key, **{name: getattr(self, name) for name in _ARRAYS + _SCALARS})

    @classmethod
    def load(cls, path, key: dict) -> ExactBaseline | None:
        """The baseline saved at ``path`` for ``key``; None when there is none or it was
        computed from something else (another split or kernel: a stale file is never used)."""
        archive = read_keyed_npz(path, key, _ARRAYS + _SCALARS)
        if not isinstance(archive, dict):
            return None
        baseline = cls.__new__(cls)
        for name in _ARRAYS:
            setattr(baseline, name, archive[name])
        baseline.n = int(archive["n"])
        for name in _SCALARS[1:]:
            setattr(baseline, name, float(archive[name]))
        _read_only(baseline, _ARRAYS)
        return baseline

    # -- diagnostics ---------------------------------------------------------------------
    @cached_property
    def U_squared(self) -> np.ndarray:
        """U∘U, computed once: leverage scores for any λ are one product with it."""
        squares = self.U * self.U
        squares.flags.writeable = False  # shared, as the baseline's arrays are
        return squares

    def leverage_scores(self, lam: float) -> np.ndarray:
        """ℓᵢ(λ) = [K(K + nλI)⁻¹]ᵢᵢ = (U∘U)·(s/(s + nλ)) (Alaoui & Mahoney 2015, eq. 3)."""
        lam = check_lam(lam, "leverage_scores")
        return self.U_squared @ (self.s / (self.s + self.n * lam))

    def diagnostics_path(self, lams) -> list[dict[str, float]]:
        """Per λ of the path: d_eff = Σℓᵢ, d_mof = n·max ℓᵢ (docs/conventions.md) and Bach's
        d_ave = tr K²(K + nλI)⁻², from one (U∘U)·R product (BLAS-3)."""
        ratio = self.s[:, None] / (self.s[:, None] + self.n * check_lam_path(lams)[None, :])
        scores = self.U_squared @ ratio  # n×L
        return [{"d_eff": float(scores[:, j].sum()), "d_mof": float(self.n * scores[:, j].max()),
                 "d_ave": float(ratio[:, j] @ ratio[:, j]), "diagnostics_method": "exact"}
                for j in range(ratio.shape[1])]

    # -- kernel ridge regression along a λ path ---------------------------------------------
    def ridge_path(self, Y: np.ndarray, lams: np.ndarray) -> Predictions:
        """Exact KRR fits of the columns of Y (n×c) with α(λ) = (K + nλI)⁻¹Y: their
        :class:`Predictions` on the training, validation and test rows; n×n by n×(L·c)
        products for the whole path."""
        Y, lams = check_ridge_path(Y, lams, self.n)
        L, c = len(lams), Y.shape[1]
        coef = ridge_coefficients(self.s, self.U, Y, lams)
        alpha = self.U @ coef  # n×(L·c)
        train = self.U @ (self.s[:, None] * coef)

        def by_lambda(block):
            return block.reshape(block.shape[0], L, c).transpose(1, 0, 2)

        return Predictions(by_lambda(train), by_lambda(self.K_val @ alpha),
                           by_lambda(self.K_test @ alpha))

    def solver_path(self, Y: np.ndarray, lams) -> list[dict]:
        """How each λ's exact fit was computed (one row per λ, as the iterative baseline's)."""
        return [{"exact_method": self.method} for _ in np.atleast_1d(lams)]

    # -- kernel PCA -----------------------------------------------------------------------
    def kpca_errors(self, components) -> dict[int, tuple[float, float]]:
        """Uncentered exact KPCA for each ℓ in ``components``: in-sample (1/n)Σ_{j>ℓ} s_j and
        held-out mean_x k(x, x) − Σ_{j≤ℓ} (u_jᵀk_x)²/s_j, from one product K_test·U."""
        top = min(max(check_components(components)), self.n)
        s = self.s[:top]
        inverse = np.divide(1.0, s, out=np.zeros_like(s),
                            where=s > self.s[0] * self.n * np.finfo(float).eps)
        captured = np.cumsum(((self.K_test @ self.U[:, :top]) ** 2 * inverse).mean(axis=0))
        return {ell: (float(self.s[ell:].sum()) / self.n,
                      float(self.diag_test.mean() - captured[min(ell, top) - 1]))
                for ell in components}
