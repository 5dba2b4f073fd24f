"""LowRank: the one object every sampler returns, a feature map z with z(x)ᵀz(y) ≈ k(x, y).

Tasks only ever see this object, so a task knows nothing of samplers (docs/plugins.md). Three
maps cover the built-in samplers:

* :class:`NystromMap`, z(x) = Wᵀk_m(x) with WWᵀ = K_mm⁺ (eigenvalues below a relative
  cutoff dropped; K_mm^{-1/2} up to a rotation), built by :func:`nystrom`, the one
  Nyström builder shared by all column samplers;
* :class:`CholeskyMap`, z(x) = G_I⁻¹ k_I(x) for pivoted Cholesky factors (the same
  approximation on the pivot set, by a triangular solve);
* :class:`FourierMap`, random Fourier features √(2k(0)/p)·[cos ωᵀx, sin ωᵀx], and
  :class:`HadamardFourierMap`, the same with structured frequencies applied by fast
  Walsh–Hadamard transforms.
"""

from __future__ import annotations

import math
import numbers
from functools import lru_cache

import numpy as np
import scipy.linalg

from kbench._parallel import for_each_block
from kbench._validation import check_features, check_landmarks
from kbench.kernels.base import Kernel
from kbench.lowrank.linalg import check_psd_input, inverse_sqrt_psd

#: rows transformed at once (bounded memory: a chunk of the kernel block per thread)
_CHUNK_ROWS = 2048


class LowRank:
    """A fitted feature map.

    ``nystrom_type`` is True when z(x)ᵀz(y) is a Nyström approximation (0 ≼ L ≼ K): the
    RKHS formulas of KPCA and the trace error apply; random features are scored in their
    own metric.

    Attributes:
        rank: number of features (columns of ``transform``), after thresholding.
        landmarks: indices of the training rows the map is built on (None for random features).
        info: what the sampler records: ``kernel_evals``, ``warnings``, dictionary sizes, scores,
        ... train_features: z(X_fit) when the sampler computed it as a by-product (pivoted
            Cholesky factors), else None; tasks use it to skip a second kernel block.
    """

    nystrom_type: bool = True
    #: True when ``_transform_chunk`` may run on several chunks at once, in threads (the
    #: built-in maps: kbench._parallel); a subclass that keeps the default runs them in turn
    parallel_chunks: bool = False
    #: the spec of the (fitted) kernel the map approximates, set by
    #: :meth:`kbench.plugin.Sampler.fit` and the Nyström and Cholesky maps; tasks refuse to
    #: score the map with another kernel
    #: (None: not recorded)
    kernel_spec: str | None = None
    #: which fit of the process returned the map (:meth:`kbench.plugin.Sampler.fit`): a map an
    #: earlier fit returned is refused (None: not recorded)
    fit_number: int | None = None

    def __init__(self, n_features_in: int, rank: int, landmarks: np.ndarray | None = None,
                 info: dict | None = None, train_features: np.ndarray | None = None) -> None:
        self.n_features_in = n_features_in
        self.rank = int(rank)
        self.landmarks = landmarks
        self.info = {} if info is None else info
        self.info.setdefault("warnings", [])
        self.train_features = train_features

    def transform(self, X) -> np.ndarray:
        """Features of the rows of ``X``: an array of shape (len(X), rank)."""
        X = check_features(X, "X", self.n_features_in)
        out = np.empty((X.shape[0], self.rank))
        starts = range(0, X.shape[0], _CHUNK_ROWS)
        chunk = lambda start: self._transform_chunk(X[start : start + _CHUNK_ROWS],  # noqa: E731
                                                    out[start : start + _CHUNK_ROWS])
        if self.parallel_chunks:
            for_each_block(chunk, starts)
        else:
            for start in starts:
                chunk(start)
        return out

    def _transform_chunk(self, X: np.ndarray, out: np.ndarray) -> None:
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}(rank={self.rank}, n_features_in={self.n_features_in})"


class NystromMap(LowRank):
    """z(x) = Wᵀ k(X_I, x) with W Wᵀ = K_mm⁺."""

    parallel_chunks = True

    def __init__(self, kernel: Kernel, X_landmarks: np.ndarray, landmarks: np.ndarray,
                 projection: np.ndarray, info: dict | None = None) -> None:
        super().__init__(X_landmarks.shape[1], projection.shape[1], landmarks, info)
        self.kernel = kernel
        self.kernel_spec = kernel.spec() if kernel.fitted else None
        self.X_landmarks = X_landmarks
        self.projection = projection

    def _transform_chunk(self, X, out):
        np.matmul(self.kernel._evaluate(X, self.X_landmarks), self.projection, out=out)


class CholeskyMap(LowRank):
    """z(x) = G_I⁻¹ k(X_I, x) with G_I the (lower-triangular) pivot rows of a Cholesky factor."""

    parallel_chunks = True

    def __init__(self, kernel: Kernel, X_landmarks: np.ndarray, landmarks: np.ndarray,
                 factor: np.ndarray, info: dict | None = None,
                 train_features: np.ndarray | None = None) -> None:
        super().__init__(X_landmarks.shape[1], factor.shape[0], landmarks, info, train_features)
        self.kernel = kernel
        self.kernel_spec = kernel.spec() if kernel.fitted else None
        self.X_landmarks = X_landmarks
        self.factor = factor

    def _transform_chunk(self, X, out):
        K_chunk = self.kernel._evaluate(X, self.X_landmarks)
        out[...] = scipy.linalg.solve_triangular(
            self.factor, K_chunk.T, lower=True, check_finite=False
        ).T


class FourierMap(LowRank):
    """√(2k(0)/p)·[cos Ωx, sin Ωx] for p//2 frequencies, plus √(2k(0)/p)·cos(ωᵀx + b) if p is odd.

    Each (cos, sin) pair estimates k(0)·cos ωᵀ(x − y); the random-phase feature estimates it
    too (E 2cos(ωᵀx + b)cos(ωᵀy + b) = cos ωᵀ(x − y)), so the map is unbiased for every p.
    """

    nystrom_type = False
    parallel_chunks = True

    def __init__(self, frequencies: np.ndarray, n_pairs: int, phase: float | None,
                 scale: float, info: dict | None = None) -> None:
        frequencies = np.asarray(frequencies, dtype=float)
        _check_fourier(n_pairs, phase, scale)
        if not np.isfinite(frequencies).all():
            raise ValueError("FourierMap: the frequencies must be finite numbers (draws of the "
                             "kernel's spectral density).")
        wanted = n_pairs + (phase is not None)
        if frequencies.ndim != 2 or frequencies.shape[0] != wanted:
            raise ValueError(f"FourierMap: {n_pairs} (cos, sin) "
                             f"pairs{' and a random phase' if phase is not None else ''} take "
                             f"{wanted} frequency rows, got frequencies of shape "
                             f"{frequencies.shape}; n_pairs is the number of frequencies, not the "
                             "rank.")
        self._setup(frequencies.shape[1], n_pairs, phase, scale, info)
        self.frequencies = frequencies

    def _setup(self, n_features_in: int, n_pairs: int, phase: float | None, scale: float,
               info: dict | None) -> None:
        _check_fourier(n_pairs, phase, scale)
        rank = 2 * n_pairs + (phase is not None)
        LowRank.__init__(self, n_features_in, rank, None, info)
        self.n_pairs = n_pairs
        self.phase = phase
        self.coefficient = np.sqrt(2.0 * scale / rank)

    def _project(self, X: np.ndarray) -> np.ndarray:
        """Ωx for the rows of X: (len(X), number of frequencies)."""
        return X @ self.frequencies.T

    def _transform_chunk(self, X, out):
        k = self.n_pairs
        projection = self._project(X)
        np.cos(projection[:, :k], out=out[:, :k])
        np.sin(projection[:, :k], out=out[:, k : 2 * k])
        if self.phase is not None:
            np.cos(projection[:, k] + self.phase, out=out[:, 2 * k])
        out *= self.coefficient


def _check_fourier(n_pairs, phase, scale) -> None:
    """A ValueError naming the argument of a Fourier map that would give NaN or no features."""
    if isinstance(n_pairs, bool) or not isinstance(n_pairs, numbers.Integral) or n_pairs < 0:
        raise ValueError("FourierMap: n_pairs is the number of (cos, sin) pairs, an integer >= 0, "
                         f"got {n_pairs!r}.")
    if phase is not None and (isinstance(phase, bool) or not isinstance(phase, numbers.Real)
                              or not math.isfinite(phase)):
        raise ValueError("FourierMap: phase is the random phase b of the odd feature, a finite "
                         f"number or None, got {phase!r}.")
    if 2 * n_pairs + (phase is not None) == 0:
        raise ValueError("FourierMap: no feature: give n_pairs >= 1 or a phase.")
    if (isinstance(scale, bool) or not isinstance(scale, numbers.Real)
            or not (math.isfinite(scale) and scale > 0)):
        raise ValueError("FourierMap: scale is the kernel's k(0), a finite number > 0, got "
                         f"{scale!r}.")


#: the Walsh–Hadamard transform is applied in factors of at most this size (a GEMM each)
_HADAMARD_RADIX = 32


@lru_cache(maxsize=None)
def _hadamard(size: int) -> np.ndarray:
    return scipy.linalg.hadamard(size).astype(float)


def fwht(A: np.ndarray) -> np.ndarray:
    """The (unnormalised) Walsh–Hadamard transform H·a of every row a of A along its last
    axis, of length d' a power of two. Sylvester's H_{d'} is the Kronecker product of
    smaller Hadamard matrices, so the row, viewed as a tensor with modes of size ≤ 32, is
    multiplied by one small Hadamard matrix per mode: ⌈log₃₂ d'⌉ GEMMs, O(d' log d') per
    row, at BLAS-3 speed."""
    d = A.shape[-1]
    factors = []
    while d > 1:
        factors.append(min(_HADAMARD_RADIX, d))
        d //= factors[-1]
    Y = A.reshape(-1, *factors)
    for mode, size in enumerate(factors, start=1):
        Y = np.moveaxis(np.moveaxis(Y, mode, -1) @ _hadamard(size), -1, mode)
    return np.ascontiguousarray(Y).reshape(A.shape)


class HadamardFourierMap(FourierMap):
    """Random Fourier features whose frequencies come in blocks of d' = 2^⌈log₂ d⌉ (x zero-
    padded to d'), each block a product of diagonal, permutation and Walsh–Hadamard
    matrices applied to x by :func:`fwht` in O(d' log d'), never stored as a matrix.

    ``steps`` lists, first applied first, ("diag", B×d' array), ("perm", B×d' indices) or
    ("hadamard", None), the B blocks side by side; ``factor`` multiplies the result (``scale``
    is k(0), as for FourierMap). With d' ≤ 32 (one Hadamard factor) the map keeps the
    explicit frequencies, at most 32 floats per frequency, and projects with one GEMM: the
    structured steps cost more passes than that product saves; their O(d' log d') pays from
    d' = 64 on."""

    def __init__(self, n_features_in: int, steps: list, factor: float, n_frequencies: int,
                 n_pairs: int, phase: float | None, scale: float, info: dict | None = None) -> None:
        self._setup(n_features_in, n_pairs, phase, scale, info)
        self.steps, self.factor, self.n_frequencies = steps, factor, n_frequencies
        self.padded = steps[0][1].shape[1]
        self._explicit = self.frequencies if self.padded <= _HADAMARD_RADIX else None

    @property
    def frequencies(self) -> np.ndarray:
        """Ω (n_frequencies × d), explicitly: the structured map applied to the unit vectors."""
        return self.structured_projection(np.eye(self.n_features_in)).T

    def _project(self, X):
        if self._explicit is not None:
            return X @ self._explicit.T
        return self.structured_projection(X)

    def structured_projection(self, X: np.ndarray) -> np.ndarray:
        """Ωx for the rows of X by the diagonal, permutation and Walsh–Hadamard steps."""
        Y = np.zeros((X.shape[0], 1, self.padded))
        Y[:, 0, : X.shape[1]] = X
        for kind, value in self.steps:
            if kind == "diag":
                Y = Y * value
            elif kind == "perm":
                Y = Y[:, np.arange(value.shape[0])[:, None], value]
            else:
                Y = fwht(Y)
        return self.factor * Y.reshape(X.shape[0], -1)[:, : self.n_frequencies]


def nystrom(X: np.ndarray, kernel: Kernel, landmarks: np.ndarray, info: dict | None = None,
            K_mm: np.ndarray | None = None) -> NystromMap:
    """The Nyström feature map on rows ``landmarks`` of ``X`` (W with WWᵀ = K_mm⁺ by eigh, relative
    cutoff).

    ``K_mm`` may be passed when the sampler already holds it (no kernel entry is evaluated twice).
    """
    landmarks = check_landmarks(landmarks, len(X))
    X_landmarks = np.ascontiguousarray(X[landmarks])
    if K_mm is None:
        K_mm = kernel(X_landmarks)
    else:
        K_mm = _checked_K_mm(K_mm, len(landmarks))
    projection, _ = inverse_sqrt_psd(K_mm)
    info = {} if info is None else info
    dropped = len(landmarks) - projection.shape[1]
    if dropped:
        info.setdefault("warnings", []).append(
            f"K_mm is numerically rank-deficient: {dropped} of {len(landmarks)} directions "
            "dropped by the pseudo-inverse cutoff (rank_realized < landmarks)"
        )
    return NystromMap(kernel, X_landmarks, landmarks, projection, info)


def _checked_K_mm(K_mm, m: int) -> np.ndarray:
    """A given K_mm as the m×m kernel matrix of the landmarks: finite, symmetric, with a
    nonnegative diagonal (k(x, x) ≥ 0), or a ValueError saying what it is instead."""
    K_mm = np.asarray(K_mm, dtype=float)
    if K_mm.shape != (m, m):
        raise ValueError(f"K_mm must be the {m}×{m} kernel matrix of the {m} landmarks, got shape "
                         f"{K_mm.shape}.")
    return check_psd_input(K_mm, "K_mm")


__all__ = ["LowRank", "NystromMap", "CholeskyMap", "FourierMap", "HadamardFourierMap", "fwht",
           "nystrom"]
