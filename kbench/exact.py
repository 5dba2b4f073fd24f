"""Exact (full-kernel) baselines and diagnostics, from one eigendecomposition of K_train.

Computed when n_train ≤ ``exact_max_n`` and cached on the Dataset object by kernel spec,
so every sampler and task of a repetition reuses the same eigendecomposition
(docs/conventions.md). Processes share it through a file (:meth:`ExactBaseline.save`,
:func:`exact_baseline` with ``shared``): the workflow computes it once per (dataset, kernel,
repetition) and every run job loads it.
"""

from __future__ import annotations

import json
import time
from functools import cached_property
from pathlib import Path

import numpy as np
import scipy.linalg

DEFAULT_EXACT_MAX_N = 5000
#: what a saved baseline holds besides its key
_ARRAYS = ("s", "U", "K_test", "diag_test")
_SCALARS = ("n", "trace", "ones_K_ones", "seconds")


class ExactBaseline:
    """K_train = U diag(s) Uᵀ (s descending, clipped ≥ 0), K(test, train) and diag K(test);
    ``seconds`` is the time this took (the cost of the exact methods, reported as
    ``time_exact_s``)."""

    def __init__(self, data, kernel) -> None:
        start = time.perf_counter()
        X = data.X_train
        self.n = X.shape[0]
        K = kernel(X)
        self.trace = float(np.trace(K))
        s, U = scipy.linalg.eigh(K, overwrite_a=True, check_finite=False, driver="evd")
        self.s, self.U = np.clip(s[::-1], 0.0, None), np.ascontiguousarray(U[:, ::-1])
        self.K_test = kernel(data.X_test, X)
        self.diag_test = kernel.diag(data.X_test)
        self.ones_K_ones = float(self.s @ (self.U.sum(axis=0) ** 2))  # 1ᵀK1, for centered KPCA
        self.seconds = time.perf_counter() - start

    # -- sharing between processes ---------------------------------------------------------
    def save(self, path, key: dict) -> None:
        """Write the baseline to ``path`` (npz, atomically) with ``key``, what it was computed
        from (split checksum, resolved kernel): :meth:`load` checks it."""
        from kbench._files import write_npz

        write_npz(path, key=np.array(json.dumps(key, sort_keys=True)),
                  **{name: getattr(self, name) for name in _ARRAYS + _SCALARS})

    @classmethod
    def load(cls, path, key: dict) -> ExactBaseline | None:
        """The baseline saved at ``path`` for ``key``; None when there is none or it was
        computed from something else (another split or kernel: a stale file is never used)."""
        if not Path(path).is_file():
            return None
        with np.load(path, allow_pickle=False) as archive:
            if ("key" not in archive.files or str(archive["key"]) != json.dumps(key, sort_keys=True)
                    or not set(_ARRAYS + _SCALARS) <= set(archive.files)):
                return None
            baseline = cls.__new__(cls)
            for name in _ARRAYS:
                setattr(baseline, name, archive[name])
            baseline.n = int(archive["n"])
            for name in _SCALARS[1:]:
                setattr(baseline, name, float(archive[name]))
        return baseline

    # -- diagnostics ---------------------------------------------------------------------
    @cached_property
    def U_squared(self) -> np.ndarray:
        """U∘U, computed once: leverage scores for any λ are one product with it."""
        return self.U * self.U

    def leverage_scores(self, lam: float) -> np.ndarray:
        """ℓᵢ(λ) = [K(K + nλI)⁻¹]ᵢᵢ = (U∘U)·(s/(s + nλ)) (Alaoui & Mahoney 2015, eq. 3)."""
        return self.U_squared @ (self.s / (self.s + self.n * lam))

    def diagnostics_path(self, lams) -> list[dict[str, float]]:
        """Per λ of the path: d_eff = Σℓᵢ, d_mof = n·max ℓᵢ (docs/conventions.md) and Bach's
        d_ave = tr K²(K + nλI)⁻², from one (U∘U)·R product (BLAS-3)."""
        ratio = self.s[:, None] / (self.s[:, None] + self.n * np.asarray(lams, dtype=float)[None, :])
        scores = self.U_squared @ ratio  # n×L
        return [{"d_eff": float(scores[:, j].sum()), "d_mof": float(self.n * scores[:, j].max()),
                 "d_ave": float(ratio[:, j] @ ratio[:, j])} for j in range(ratio.shape[1])]

    def score_check(self, scores: np.ndarray, lam: float) -> dict[str, float]:
        """A sampler's leverage scores against the exact ones at the same λ: the largest
        excess max(ℓ̃ᵢ − ℓᵢ) (≤ 0 up to rounding for rls-fast, Alaoui & Mahoney Lemma 2) and
        Σℓ̃/d_eff."""
        exact = self.leverage_scores(lam)
        return {"scores_max_excess": float(np.max(scores - exact)),
                "scores_sum_ratio": float(scores.sum() / exact.sum())}

    # -- kernel ridge regression along a λ path ---------------------------------------------
    def ridge_path(self, Y: np.ndarray, lams: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Exact KRR fits of the columns of Y (n×c): (train predictions, test predictions),
        each of shape (len(lams), n, c), with α(λ) = (K + nλI)⁻¹Y; two n×n by n×(L·c)
        products for the whole path."""
        lams = np.asarray(lams, dtype=float)
        L, c = len(lams), Y.shape[1]
        projected = self.U.T @ Y  # n×c
        shrink = 1.0 / (self.s[:, None] + self.n * lams[None, :])  # n×L
        coef = (shrink[:, :, None] * projected[:, None, :]).reshape(self.n, L * c)
        alpha = self.U @ coef  # n×(L·c)
        train = self.U @ (self.s[:, None] * coef)
        test = self.K_test @ alpha

        def by_lambda(block):
            return block.reshape(block.shape[0], L, c).transpose(1, 0, 2)

        return by_lambda(train), by_lambda(test)

    # -- kernel PCA -----------------------------------------------------------------------
    def kpca_errors(self, components) -> dict[int, tuple[float, float]]:
        """Uncentered exact KPCA for each ℓ in ``components``: in-sample (1/n)Σ_{j>ℓ} s_j and
        held-out mean_x k(x, x) − Σ_{j≤ℓ} (u_jᵀk_x)²/s_j, from one product K_test·U."""
        top = min(max(components), self.n)
        s = self.s[:top]
        inverse = np.divide(1.0, s, out=np.zeros_like(s), where=s > self.s[0] * self.n * np.finfo(float).eps)
        captured = np.cumsum(((self.K_test @ self.U[:, :top]) ** 2 * inverse).mean(axis=0))
        return {ell: (float(self.s[ell:].sum()) / self.n,
                      float(self.diag_test.mean() - captured[min(ell, top) - 1]))
                for ell in components}


def exact_baseline(data, kernel, exact_max_n: int = DEFAULT_EXACT_MAX_N,
                   shared: tuple[Path, str] | None = None) -> ExactBaseline | None:
    """The cached ExactBaseline of (data, kernel), or None when n_train > exact_max_n. With
    ``shared`` = (file, split checksum) it is shared between processes through the file:
    loaded when the file holds the baseline of this split and kernel, else computed and
    saved there."""
    if data.X_train.shape[0] > exact_max_n:
        return None
    cached = ("exact", kernel.spec())
    if cached not in data.cache:
        key = None if shared is None else {"split_checksum": shared[1], "kernel": kernel.spec()}
        baseline = None if shared is None else ExactBaseline.load(shared[0], key)
        if baseline is None:
            baseline = ExactBaseline(data, kernel)
            if shared is not None:
                baseline.save(shared[0], key)
        data.cache[cached] = baseline
    return data.cache[cached]
