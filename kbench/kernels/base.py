"""The kernel base class: blockwise evaluation, diagonal, evaluation counting, spectral samplers.

``kernel(X, Y)`` evaluates in row blocks of a fixed shape (rows chosen from the number of
columns, the last block zero-padded; a call on fewer rows than a block pads them to the
next power of two), so memory stays bounded and calls make the same BLAS calls whatever
their number of rows beyond one block. A call of many blocks spreads them over as many
threads as BLAS has, each block's GEMM on one BLAS thread (kbench._parallel): the
elementwise work (exp, the clamp) runs on every core, and a block's values do not depend on
which thread computed it. Entries agree across splits of ``X`` up to the rounding of their
inner products (BLAS kernels may round a row differently by the block's shape or the row's
position in it), and bit for bit with the same inputs and call shapes.
``kernel.evals`` counts the entries evaluated (diagonal entries included), also when calls
come from several threads. Stationary kernels with a spectral density expose
``sample_frequencies`` for random Fourier features; isotropic ones also expose the law of
the frequency norms (``sample_frequency_norms``) for orthogonal random features.
"""

from __future__ import annotations

import threading
from typing import ClassVar

import numpy as np

from kbench._parallel import for_each_block, scratch
from kbench._validation import check_features
from kbench.errors import ContractViolation, Refused
from kbench.parameters import Declared
from kbench.spec import Spec

#: entries of one row block (2 MiB of float64, cache-sized: at 50 000 rows, 1 to 1 000
#: columns run fastest so); rows per block are a power of two in [64, 4096]
_BLOCK_ENTRIES = 1 << 18
_MAX_BLOCK_ROWS = 1 << 12
#: a call on fewer entries runs its blocks in turn: handing blocks to threads and back costs
#: more than it saves on a kernel column (greedy pivoted Cholesky evaluates one per pivot)
_MIN_THREADED_ENTRIES = 1 << 20
#: guards ``evals`` against calls from several threads (a sampler's row blocks)
_COUNTING = threading.Lock()


def block_rows(n_columns: int, n_rows: int | None = None) -> int:
    """Rows of one evaluation block for a kernel block with ``n_columns`` columns (and
    ``n_rows`` rows: a call on fewer rows than a block pads them to a power of two only)."""
    rows = max(1, _BLOCK_ENTRIES // max(n_columns, 1))
    rows = min(_MAX_BLOCK_ROWS, max(64, 1 << (rows.bit_length() - 1)))
    if n_rows is not None:
        rows = min(rows, max(64, 1 << max(n_rows - 1, 0).bit_length()))
    return int(rows)


class Kernel(Declared):
    """Base class of kernels. Subclasses implement ``_prepare``, ``_block`` and ``diag``."""

    kind = "kernel"
    #: True when frequencies can be sampled from the spectral measure (rff)
    spectral: ClassVar[bool] = False
    #: True when the spectral measure is rotation invariant (orf)
    isotropic: ClassVar[bool] = False
    #: defined on one feature in one period, [0, 1) (the periodic kernels): the conformance
    #: kits check such a kernel on points drawn there
    unit_interval: ClassVar[bool] = False
    #: kernel entries evaluated (a subclass whose ``__init__`` skips this one's counts from 0 too)
    evals: int = 0

    def __init__(self) -> None:
        self.evals = 0

    # -- parameters ----------------------------------------------------------------
    def resolved_params(self) -> dict:
        """The parameters in use, data-dependent ones resolved by ``fit`` (``sigma_``)."""
        return self.get_params()

    def spec(self) -> str:
        """``name:key=value,...`` with the resolved parameters, the form the command line
        accepts."""
        params = {k: v for k, v in self.resolved_params().items() if v is not None}
        return Spec.of("kernel", self.name, params).label

    def __repr__(self) -> str:
        params = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({params})"

    @property
    def fitted(self) -> bool:
        """False while a parameter waits to be resolved from data (``sigma="median"``)."""
        return True

    def fit(self, X, y=None, validation=None) -> Kernel:
        """Resolve data-dependent parameters from training data (and its target ``y``, for a
        parameter validated on it, ``sigma="cv"``, on the ``validation`` rows (X_val, y_val)
        when given); returns ``self``."""
        return self

    # -- evaluation ----------------------------------------------------------------
    def check_points(self, X, name: str = "X", n_features: int | None = None) -> np.ndarray:
        """``X`` as float64 rows a map fitted with this kernel may be applied to (finite, 2-D,
        ``n_features`` columns when given, as ``__call__`` checks, and in the kernel's domain
        as its training rows: a periodic kernel's period), else a ValueError naming ``name``."""
        return self._check(X, name, n_features)

    def __call__(self, X, Y=None) -> np.ndarray:
        """The kernel matrix k(X, Y) (``Y=None`` means ``Y = X``), shape (len(X), len(Y))."""
        X = self._check(X, "X")
        Y = X if Y is None else self._check(Y, "Y")
        if Y.shape[1] != X.shape[1]:
            raise ValueError(f"kernel {self.name!r}: X has {X.shape[1]} features and Y has "
                             f"{Y.shape[1]}; a kernel compares rows of the same width.")
        return self._evaluate(X, Y)

    def _evaluate(self, X: np.ndarray, Y: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """``__call__`` without input checks, for callers that hold checked float64 arrays;
        ``out``, if given, is a C-contiguous (len(X), len(Y)) array to write into."""
        n, m = X.shape[0], Y.shape[0]
        out = np.empty((n, m)) if out is None else out
        with np.errstate(over="ignore", invalid="ignore"):  # non-finite values raise below
            prepared = self._prepare(Y)
            rows = block_rows(m, n)
            starts = range(0, n, rows)
            if n * m >= _MIN_THREADED_ENTRIES:
                for_each_block(lambda start: self._rows(X, prepared, out, start, rows), starts)
            else:
                for start in starts:
                    self._rows(X, prepared, out, start, rows)
        with _COUNTING:
            self.evals += n * m
        return out

    def _rows_into(self, X: np.ndarray, Y: np.ndarray, out: np.ndarray,
                   padding: np.ndarray | None = None, prepared=None) -> None:
        """K(X, Y) for a few rows X into ``out`` (a C-contiguous (len(X), len(Y)) array), in one
        block on this thread, for a caller that spreads its own column blocks over threads (a
        pivoted Cholesky panel). The rows ``padding`` of Y are evaluated as zero rows, as in a
        padded block, and not counted: the caller holds those columns already; they are set
        to 0 here, for the caller to overwrite. ``prepared``: ``_prepare(Y)``, when the caller
        evaluates many rows against the same Y (then without padding)."""
        padding = np.empty(0, dtype=np.intp) if padding is None else padding
        with np.errstate(over="ignore", invalid="ignore"):
            if prepared is None:
                prepared = self._prepare_padded(Y, padding)
            self._block(X, prepared, out)
        if len(padding):
            out[:, padding] = 0.0
        self._check_values(out, X)
        with _COUNTING:
            self.evals += X.shape[0] * (Y.shape[0] - len(padding))

    def _prepare_padded(self, Y: np.ndarray, padding: np.ndarray):
        """``_prepare(Y)`` with the rows ``padding`` of Y replaced by zeros."""
        if len(padding):
            Y = Y.copy()
            Y[padding] = 0.0
        return self._prepare(Y)

    def _rows(self, X: np.ndarray, prepared, out: np.ndarray, start: int, rows: int) -> None:
        """Rows start … start + rows of the kernel block, in a block of exactly ``rows`` rows
        (the last one zero-padded), checked for non-finite values."""
        stop = min(start + rows, X.shape[0])
        if stop - start == rows:
            self._block(X[start:stop], prepared, out[start:stop])
        else:
            with scratch("padded rows", (rows, X.shape[1])) as padded, \
                    scratch("padded block", (rows, out.shape[1])) as block:
                padded[: stop - start] = X[start:stop]
                padded[stop - start :] = 0.0
                self._block(padded, prepared, block)
                out[start:stop] = block[: stop - start]
        self._check_values(out[start:stop], X[start:stop])

    def _check_values(self, values: np.ndarray, X: np.ndarray) -> None:
        """Kernel values must be finite: inputs near the float64 range overflow silently."""
        if not np.isfinite(values).all():
            raise FloatingPointError(
                f"the {self.name} kernel gave non-finite values (inputs up to |x| = "
                f"{np.abs(X).max():.3g}; kernel parameters {self.resolved_params()}): inputs this "
                "large overflow float64. Rescale the features (datasets standardize by default) or "
                "the kernel."
            )

    def diag(self, X) -> np.ndarray:
        """k(x, x) for every row of X, without forming a kernel matrix."""
        X = self._check(X, "X")
        with _COUNTING:
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
    def sample_frequencies(self, rng: np.random.Generator, n_frequencies: int,
                           d: int) -> np.ndarray:
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
            "orthogonal random features need a rotation-invariant spectral measure; the "
            f"{self.name} kernel has none. Use rff, or an isotropic kernel (gaussian, matern)."
        )

    @property
    def diag_value(self) -> float:
        """k(x, x) of a stationary kernel: the scale of its random Fourier features."""
        raise Refused(f"the {self.name} kernel is not stationary: random Fourier features need "
                      "one.")


#: rows on which :func:`check_kernel` compares a kernel's diagonal with its matrix
_CHECKED_ROWS = 64
#: float64 round-off of one kernel value computed two ways (a matrix by BLAS, a diagonal row by row)
_DIAGONAL_RTOL = 1e-8


def check_kernel(kernel: Kernel, X: np.ndarray) -> None:
    """A ContractViolation when a (fitted) kernel's ``diag`` disagrees with the diagonal of its
    matrix on rows spread over ``X``, or the matrix is not symmetric: every Nyström bound and
    trace error reads ``diag`` as k(x, x). Relative to the kernel's own scale, whatever its
    units."""
    rows = X[np.unique(np.linspace(0, len(X) - 1, _CHECKED_ROWS).round().astype(int))]
    K, diagonal = kernel(rows), kernel.diag(rows)
    magnitude = np.maximum(np.abs(np.diag(K)), np.abs(diagonal))
    # (a diagonal entry 0 among others is not a unit)
    scale = np.maximum(magnitude, 1e-12 * magnitude.max())
    wrong = np.flatnonzero(np.abs(diagonal - np.diag(K)) > _DIAGONAL_RTOL * scale)
    if len(wrong):
        i = wrong[0]
        raise ContractViolation(f"kernel {kernel.spec()}: diag(X)[{i}] = {diagonal[i]:.6g} but "
                                f"k(X, X)[{i}, {i}] = {K[i, i]:.6g}; a kernel's diag is the "
                                "diagonal of its matrix (_diag and _block compute one kernel).")
    if not np.allclose(K, K.T, rtol=_DIAGONAL_RTOL, atol=_DIAGONAL_RTOL * float(np.abs(K).max())):
        i, j = np.unravel_index(np.argmax(np.abs(K - K.T)), K.shape)
        raise ContractViolation(f"kernel {kernel.spec()}: k(X, X) is not symmetric (entry [{i}, "
                                f"{j}] = {K[i, j]:.6g}, [{j}, {i}] = {K[j, i]:.6g}); a kernel is "
                                "symmetric, k(x, y) = k(y, x).")
