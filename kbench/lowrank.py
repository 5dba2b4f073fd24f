"""LowRank: the one object every sampler returns, a feature map z with z(x)ᵀz(y) ≈ k(x, y).

Tasks only ever see this object, so a task knows nothing of samplers (docs/plugins.md). Three
maps cover the built-in samplers:

* :class:`NystromMap`, z(x) = K_mm^{-1/2} k_m(x), built by :func:`nystrom`, the one
  Nyström builder shared by all column samplers;
* :class:`CholeskyMap`, z(x) = G_I⁻¹ k_I(x) for pivoted Cholesky factors (the same
  approximation on the pivot set, by a triangular solve);
* :class:`FourierMap`, random Fourier features √(2k(0)/p)·[cos ωᵀx, sin ωᵀx].
"""

from __future__ import annotations

import numpy as np
import scipy.linalg

from kbench._validation import check_features
from kbench.kernels import Kernel
from kbench.linalg import inverse_sqrt_psd

#: rows transformed at once (bounded memory: one chunk of the kernel block at a time)
_CHUNK_ROWS = 8192


class LowRank:
    """A fitted feature map.

    ``nystrom_type`` is True when z(x)ᵀz(y) is a Nyström approximation (0 ≼ L ≼ K): the
    RKHS formulas of KPCA and the trace error apply; random features are scored in their
    own metric.

    Attributes:
        rank: number of features (columns of ``transform``), after thresholding.
        landmarks: indices of the training rows the map is built on (None for random features).
        info: what the sampler records: ``kernel_evals``, ``warnings``, dictionary sizes, scores, ...
        train_features: z(X_fit) when the sampler computed it as a by-product (pivoted
            Cholesky factors), else None; tasks use it to skip a second kernel block.
    """

    nystrom_type: bool = True

    def __init__(self, n_features_in: int, rank: int, landmarks: np.ndarray | None = None,
                 info: dict | None = None, train_features: np.ndarray | None = None) -> None:
        self.n_features_in = n_features_in
        self.rank = int(rank)
        self.landmarks = landmarks
        self.info = {} if info is None else info
        self.info.setdefault("warnings", [])
        self.train_features = train_features
        #: feature matrices computed by tasks, keyed by dataset (kbench.tasks.base)
        self.cache: dict = {}

    def transform(self, X) -> np.ndarray:
        """Features of the rows of ``X``: an array of shape (len(X), rank)."""
        X = check_features(X, "X", self.n_features_in)
        out = np.empty((X.shape[0], self.rank))
        for start in range(0, X.shape[0], _CHUNK_ROWS):
            self._transform_chunk(X[start : start + _CHUNK_ROWS], out[start : start + _CHUNK_ROWS])
        return out

    def _transform_chunk(self, X: np.ndarray, out: np.ndarray) -> None:
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}(rank={self.rank}, n_features_in={self.n_features_in})"


class NystromMap(LowRank):
    """z(x) = Wᵀ k(X_I, x) with W Wᵀ = K_mm⁺."""

    def __init__(self, kernel: Kernel, X_landmarks: np.ndarray, landmarks: np.ndarray,
                 projection: np.ndarray, info: dict | None = None) -> None:
        super().__init__(X_landmarks.shape[1], projection.shape[1], landmarks, info)
        self.kernel = kernel
        self.X_landmarks = X_landmarks
        self.projection = projection

    def _transform_chunk(self, X, out):
        np.matmul(self.kernel(X, self.X_landmarks), self.projection, out=out)


class CholeskyMap(LowRank):
    """z(x) = G_I⁻¹ k(X_I, x) with G_I the (lower-triangular) pivot rows of a Cholesky factor."""

    def __init__(self, kernel: Kernel, X_landmarks: np.ndarray, landmarks: np.ndarray,
                 factor: np.ndarray, info: dict | None = None,
                 train_features: np.ndarray | None = None) -> None:
        super().__init__(X_landmarks.shape[1], factor.shape[0], landmarks, info, train_features)
        self.kernel = kernel
        self.X_landmarks = X_landmarks
        self.factor = factor

    def _transform_chunk(self, X, out):
        K_chunk = self.kernel(X, self.X_landmarks)
        out[...] = scipy.linalg.solve_triangular(
            self.factor, K_chunk.T, lower=True, check_finite=False
        ).T


class FourierMap(LowRank):
    """√(2k(0)/p)·[cos Ωx, sin Ωx] for p//2 frequencies, plus √(2k(0)/p)·cos(ωᵀx + b) if p is odd.

    Each (cos, sin) pair estimates k(0)·cos ωᵀ(x − y); the random-phase feature estimates it
    too (E 2cos(ωᵀx + b)cos(ωᵀy + b) = cos ωᵀ(x − y)), so the map is unbiased for every p.
    """

    nystrom_type = False

    def __init__(self, frequencies: np.ndarray, n_pairs: int, phase: float | None,
                 scale: float, info: dict | None = None) -> None:
        rank = 2 * n_pairs + (phase is not None)
        super().__init__(frequencies.shape[1], rank, None, info)
        self.frequencies = frequencies
        self.n_pairs = n_pairs
        self.phase = phase
        self.coefficient = np.sqrt(2.0 * scale / rank)

    def _transform_chunk(self, X, out):
        k = self.n_pairs
        projection = X @ self.frequencies.T
        np.cos(projection[:, :k], out=out[:, :k])
        np.sin(projection[:, :k], out=out[:, k : 2 * k])
        if self.phase is not None:
            np.cos(projection[:, k] + self.phase, out=out[:, 2 * k])
        out *= self.coefficient


def nystrom(X: np.ndarray, kernel: Kernel, landmarks: np.ndarray, info: dict | None = None,
            K_mm: np.ndarray | None = None) -> NystromMap:
    """The Nyström feature map on rows ``landmarks`` of ``X`` (K_mm^{-1/2} by eigh, relative cutoff).

    ``K_mm`` may be passed when the sampler already holds it (no kernel entry is evaluated twice).
    """
    landmarks = np.asarray(landmarks, dtype=np.int64)
    X_landmarks = np.ascontiguousarray(X[landmarks])
    if K_mm is None:
        K_mm = kernel(X_landmarks)
    projection, _ = inverse_sqrt_psd(K_mm)
    info = {} if info is None else info
    dropped = len(landmarks) - projection.shape[1]
    if dropped:
        info.setdefault("warnings", []).append(
            f"K_mm is numerically rank-deficient: {dropped} of {len(landmarks)} directions "
            "dropped by the pseudo-inverse cutoff (rank_realized < landmarks)"
        )
    return NystromMap(kernel, X_landmarks, landmarks, projection, info)


__all__ = ["LowRank", "NystromMap", "CholeskyMap", "FourierMap", "nystrom"]
