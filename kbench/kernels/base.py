"""The kernel base class: blockwise evaluation, diagonal, evaluation counting, spectral samplers.

``kernel(X, Y)`` evaluates in row blocks of a fixed shape (rows chosen from the number of
columns only, the last block zero-padded), so memory stays bounded and every call makes
the same BLAS calls whatever its number of rows. Entries agree across splits of ``X`` up
to the rounding of their inner products (some BLAS kernels, OpenBLAS's AVX-512 ones, round
a row differently by its position in the block), and bit for bit with the same inputs,
call shapes and thread count. ``kernel.evals`` counts the entries
evaluated (diagonal entries included). Stationary kernels with a spectral density expose
``sample_frequencies`` for random Fourier features; isotropic ones also expose the law of
the frequency norms (``sample_frequency_norms``) for orthogonal random features.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from kbench._validation import check_features
from kbench.errors import Refused
from kbench.spec import Spec

#: entries of one row block (2 MiB of float64, cache-sized); rows per block are a power of
#: two in [64, 2048], so a call on few rows pads at most to one block
_BLOCK_ENTRIES = 1 << 18


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
        params = {k: v for k, v in self.resolved_params().items() if v is not None}
        return Spec.of("kernel", self.name, params).label

    def __repr__(self) -> str:
        params = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({params})"

    @property
    def fitted(self) -> bool:
        """False while a parameter waits to be resolved from data (``sigma="median"``)."""
        return True

    def fit(self, X, y=None) -> Kernel:
        """Resolve data-dependent parameters from training data (and its target ``y``, for a
        parameter validated on it, ``sigma="cv"``); returns ``self``."""
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


