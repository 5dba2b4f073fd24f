"""Exact (full-kernel) baselines and diagnostics.

Up to ``DENSE_MAX_N`` training rows, :class:`ExactBaseline` eigendecomposes K_train once;
above, up to ``exact_max_n``, :class:`IterativeBaseline` solves exact kernel ridge
regression matrix-free, by preconditioned conjugate gradients (:mod:`kbench.exact.pcg`). Either
is kept in the workspace by dataset and kernel spec (:mod:`kbench.lowrank.workspace`), so
every sampler and task of a repetition reuses it (docs/conventions.md). Processes share it through a
file (``save``/``load``, :func:`exact_baseline` with ``shared``): the workflow computes it once per
(dataset, kernel, repetition), with the λ path's solves, and every run job loads it.
"""

from __future__ import annotations

import hashlib
import os
import time
from functools import cached_property
from pathlib import Path
from typing import NamedTuple

import numpy as np
import scipy.linalg

from kbench._files import read_keyed_npz, write_keyed_npz
from kbench._validation import (
    INT64_MAX,
    check_components,
    check_lam,
    check_lam_path,
    check_ridge_path,
)
from kbench.datasets.base import Dataset
from kbench.exact.pcg import kernel_product, solve_krr_path
from kbench.kernels.base import Kernel
from kbench.lowrank.cholesky import rp_cholesky_of
from kbench.lowrank.linalg import factor_diagnostics
from kbench.lowrank.workspace import cached
from kbench.parameters import Param

#: the dense eigendecomposition up to this many training rows (3 n² floats: 600 MB at 5000)
DENSE_MAX_N = 5000
#: exact baselines up to this many training rows, matrix-free above DENSE_MAX_N
DEFAULT_EXACT_MAX_N = 50_000
EXACT_MAX_N = Param(int, "the most training rows of an exact baseline", low=1, high=INT64_MAX,
                    why="training rows")
#: relative residual ‖y − (K + nλI)α‖/‖y‖ at which a matrix-free solve counts as exact
PCG_TOL = 1e-8
#: passes over K a matrix-free λ path may take (the final residual pass included)
PCG_MAX_PASSES = 200
#: rank of the randomly pivoted Cholesky preconditioner of the matrix-free solves (min with n): the
#: preconditioned condition number is at most 1 + tr(K − L)/(nλ) (Díaz et al. 2023); on diamonds
#: (n_train
#: 32 364, σ validated, λ = 1e-6) it is 532 at rank 200 (the 200-pass cap: over 15 min), 8.4 at 1000
#: (5 passes, 37 s)
PRECONDITIONER_RANK = 1000
#: residual ‖Ku − θu‖/‖K‖₂ at which a matrix-free KPCA eigenpair counts as exact
KPCA_TOL = 1e-8
#: the version of a saved baseline's layout (part of its key: a file of another layout is stale)
FORMAT = 2
#: what a saved baseline holds besides its key
_ARRAYS = ("s", "U", "K_val", "K_test", "diag_test")
_SCALARS = ("n", "trace", "ones_K_ones", "seconds")
#: what a matrix-free baseline keeps of each set of top eigenpairs
#: (IterativeBaseline._top_eigenpairs)
_EIGENPAIR_ARRAYS = ("theta", "U", "converged", "captured_test")
#: what a matrix-free baseline keeps of the solves of one set of targets, per λ
#: (IterativeBaseline._solution)
_SOLUTION_ARRAYS = ("lams", "train", "validation", "test", "iterations", "residual")


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
        _check_arguments(data, kernel, "ExactBaseline")
        start = time.perf_counter()
        X = data.X_train
        self.n = X.shape[0]
        K = kernel(X)
        self.trace = float(np.trace(K))
        s, U = scipy.linalg.eigh(K, overwrite_a=True, check_finite=False, driver="evd")
        self.s, self.U = np.clip(s[::-1], 0.0, None), np.ascontiguousarray(U[:, ::-1])
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
        projected = self.U.T @ Y  # n×c
        shrink = 1.0 / (self.s[:, None] + self.n * lams[None, :])  # n×L
        coef = (shrink[:, :, None] * projected[:, None, :]).reshape(self.n, L * c)
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


class IterativeBaseline:
    """Exact kernel ridge regression above the dense limit, matrix-free: every (targets,
    λ path) asked is solved once by preconditioned conjugate gradients (:mod:`kbench.exact.pcg`)
    and kept; K is evaluated in row blocks, never stored.

    A λ whose solve does not reach ``tol`` is not exact: its predictions are NaN, and
    :meth:`solver_path` says so. The diagnostics are estimates from the preconditioner's
    rank-r Nyström approximation L = FFᵀ ≼ K (randomly pivoted Cholesky): d_eff and d_ave
    of L are lower bounds of K's, d_mof is n times L's largest ridge leverage score."""

    dense = False
    method = "pcg"
    #: whether solves or eigenpairs were computed since the baseline was loaded or saved
    unsaved = False

    def __init__(self, data, kernel, tol: float = PCG_TOL,
                 preconditioner_rank: int = PRECONDITIONER_RANK,
                 seed: int = 0, max_passes: int = PCG_MAX_PASSES) -> None:
        _check_arguments(data, kernel, "IterativeBaseline")
        start = time.perf_counter()
        self.kernel, self.X, self.X_val, self.X_test = kernel, data.X_train, data.X_val, data.X_test
        self.n, self.tol, self.max_passes = data.X_train.shape[0], float(tol), int(max_passes)
        self.trace = float(kernel.diag(self.X).sum())
        self.diag_test = kernel.diag(self.X_test)
        rank = min(preconditioner_rank, self.n)
        self.F = np.asarray(rp_cholesky_of(self.X, kernel, rank, seed).train_features)
        #: targets digest → the solves of those targets, per λ solved (see :meth:`_solution`)
        self.solutions: dict[str, dict[str, np.ndarray]] = {}
        #: number of eigenpairs → their arrays (see :meth:`_top_eigenpairs`)
        self.eigenpairs: dict[int, dict[str, np.ndarray]] = {}
        self.seconds = time.perf_counter() - start

    def _solution(self, Y: np.ndarray, lams) -> dict[str, np.ndarray]:
        """The solves of the targets Y at each λ of ``lams`` (their arrays of
        :data:`_SOLUTION_ARRAYS`, in the order of ``lams``, and ``passes``: the passes over K
        the solves of these targets took so far). λ not solved before are solved now, in
        one path: a λ path extended later costs only its new λ."""
        Y = np.asarray(Y, dtype=float).reshape(self.n, -1)
        lams = np.asarray(lams, dtype=float)
        digest = _digest(Y)
        held = self.solutions.get(digest)
        known = np.zeros(0) if held is None else held["lams"]
        missing = np.array([lam for lam in lams
                            if not np.isclose(known, lam, rtol=1e-12, atol=0).any()])
        if missing.size:
            start = time.perf_counter()
            missing = np.unique(missing)
            solved = solve_krr_path(self.kernel, self.X, Y, missing, tol=self.tol, factor=self.F,
                                    max_passes=self.max_passes)
            L, c = len(missing), Y.shape[1]
            alpha = solved.alpha.reshape(self.n, L * c)
            new = {"lams": missing, "train": solved.train_predictions.transpose(1, 0, 2),
                   "validation": kernel_product(self.kernel, self.X, alpha, Z=self.X_val)
                                 .reshape(-1, L, c).transpose(1, 0, 2),
                   "test": kernel_product(self.kernel, self.X, alpha, Z=self.X_test)
                           .reshape(-1, L, c).transpose(1, 0, 2),
                   "iterations": solved.iterations, "residual": solved.residual,
                   "passes": np.array(solved.passes)}
            if held is not None:
                new = {name: np.concatenate([held[name], new[name]])
                       for name in _SOLUTION_ARRAYS} | {
                    "passes": held["passes"] + new["passes"]}
            order = np.argsort(new["lams"])
            held = {name: new[name][order] for name in _SOLUTION_ARRAYS} | {"passes": new["passes"]}
            self.solutions[digest] = held
            self.unsaved = True
            self.seconds += time.perf_counter() - start
        index = [int(np.flatnonzero(np.isclose(held["lams"], lam, rtol=1e-12, atol=0))[0])
                 for lam in lams]
        return {name: held[name][index] for name in _SOLUTION_ARRAYS} | {"passes": held["passes"]}

    def ridge_path(self, Y: np.ndarray, lams) -> Predictions:
        """Exact KRR fits of the columns of Y (n×c): their :class:`Predictions`, NaN for a λ
        whose solve did not converge."""
        Y, lams = check_ridge_path(Y, lams, self.n)
        solution = self._solution(Y, lams)
        failed = ~(solution["residual"] <= self.tol)
        parts = [solution[name].copy() for name in Predictions._fields]
        for part in parts:
            part[failed] = np.nan
        return Predictions(*parts)

    def solver_path(self, Y: np.ndarray, lams) -> list[dict]:
        """Per λ: the solver, its iterations, final relative residual, tolerance and whether
        it converged; the passes over K of every solve of these targets."""
        solution = self._solution(Y, lams)
        return [{"exact_method": self.method, "exact_iterations": int(solution["iterations"][i]),
                 "exact_residual": float(solution["residual"][i]), "exact_tol": self.tol,
                 "exact_converged": bool(solution["residual"][i] <= self.tol),
                 "exact_passes": int(solution["passes"]),
                 "exact_preconditioner_rank": int(self.F.shape[1])} for i in range(len(lams))]

    def diagnostics_path(self, lams) -> list[dict[str, float]]:
        """d_eff, d_mof and d_ave of the preconditioner's Nyström approximation L = FFᵀ
        (kbench.lowrank.linalg.factor_diagnostics): lower bounds of K's d_eff and d_mof."""
        found = factor_diagnostics(self.F, check_lam_path(lams))
        label = f"estimate: rank-{self.F.shape[1]} Nyström"
        return [{"d_eff": float(found["d_eff"][j]), "d_mof": float(found["d_mof"][j]),
                 "d_ave": float(found["d_ave"][j]), "diagnostics_method": label}
                for j in range(len(found["d_eff"]))]

    @cached_property
    def ones_K_ones(self) -> float:
        """1ᵀK1 (centered KPCA), by one blocked pass."""

        return float(kernel_product(self.kernel, self.X, np.ones((self.n, 1))).sum())

    def kpca_errors(self, components) -> dict[int, tuple[float, float]]:
        """Uncentered exact KPCA for each ℓ in ``components``, as the dense baseline's, from the
        top eigenpairs of K by LOBPCG (Knyazev 2001) on the blocked operator, started from the
        preconditioner's Nyström eigenvectors. An ℓ whose eigenpairs j ≤ ℓ are not all
        converged (‖Ku − θu‖ > ``KPCA_TOL``·‖K‖₂, checked by one more pass) gets NaN."""
        components = check_components(components)
        top = min(max(components), self.n)
        if top not in self.eigenpairs:
            self.eigenpairs[top] = self._top_eigenpairs(top)
            self.unsaved = True
        pairs = self.eigenpairs[top]
        theta, converged, captured = pairs["theta"], pairs["converged"], pairs["captured_test"]
        errors = {}
        for ell in components:
            used = min(ell, top)
            ok = bool(converged[:used].all())
            errors[ell] = ((self.trace - float(theta[:used].sum())) / self.n if ok
                           else float("nan"),
                           float(self.diag_test.mean() - captured[used - 1]) if ok
                           else float("nan"))
        return errors

    def _top_eigenpairs(self, top: int) -> dict[str, np.ndarray]:
        """θ, U (the top eigenpairs), whether each converged, and the held-out variance they
        capture, cumulatively: mean_x Σ_{j≤ℓ} (u_jᵀk_x)²/θ_j."""
        import scipy.sparse.linalg

        start = time.perf_counter()
        block = min(self.n, top + max(10, top // 5), max(self.F.shape[1], top))
        U0, singular, _ = np.linalg.svd(self.F, full_matrices=False)
        scale = float(singular[0] ** 2) if singular.size else self.trace  # ≈ ‖K‖₂
        if U0.shape[1] < block:  # pad a low-rank factor with random directions
            extra = np.random.default_rng(0).standard_normal((self.n, block - U0.shape[1]))
            U0 = np.linalg.qr(np.hstack([U0, extra]))[0]
        operator = scipy.sparse.linalg.LinearOperator(
            (self.n, self.n),
            matvec=lambda v: kernel_product(self.kernel, self.X, v.reshape(-1, 1))[:, 0],
            matmat=lambda V: kernel_product(self.kernel, self.X, V), dtype=float)
        theta, U = scipy.sparse.linalg.lobpcg(operator, U0[:, :block], largest=True,
                                              tol=0.1 * KPCA_TOL * scale, maxiter=200)
        order = np.argsort(theta)[::-1][:top]
        theta, U = theta[order], U[:, order]
        residual = np.linalg.norm(kernel_product(self.kernel, self.X, U) - U * theta,
                                  axis=0) / theta[0]
        inverse = np.divide(1.0, theta, out=np.zeros_like(theta),
                            where=theta > theta[0] * self.n * np.finfo(float).eps)
        captured = np.cumsum(
            (kernel_product(self.kernel, self.X, U, Z=self.X_test) ** 2 * inverse).mean(axis=0))
        self.seconds += time.perf_counter() - start
        return dict(zip(_EIGENPAIR_ARRAYS, (theta, U, residual <= KPCA_TOL, captured), strict=True))


    # -- sharing between processes ---------------------------------------------------------
    def save(self, path, key: dict) -> None:
        """Write the preconditioner factor, every solution and every set of eigenpairs to
        ``path`` (npz, atomically)."""
        arrays = {"method": np.array(self.method),
                  "F": self.F, "diag_test": self.diag_test, "trace": np.array(self.trace),
                  "tol": np.array(self.tol), "seconds": np.array(self.seconds)}
        for i, (digest, solution) in enumerate(self.solutions.items()):
            arrays[f"solution{i}_digest"] = np.array(digest)
            arrays.update({f"solution{i}_{name}": value for name, value in solution.items()})
        for top, pairs in self.eigenpairs.items():
            arrays.update({f"eigenpairs{top}_{name}": value for name, value in pairs.items()})
        write_keyed_npz(path, key, **arrays)
        self.unsaved = False

    @classmethod
    def load(cls, path, key: dict, data, kernel) -> IterativeBaseline | None:
        """The baseline saved at ``path`` for ``key`` (None: absent or stale); solves use ``data``,
        ``kernel``."""
        archive = read_keyed_npz(path, key, ("method",))
        if not isinstance(archive, dict):
            return None
        baseline = cls.__new__(cls)
        baseline.kernel, baseline.X = kernel, data.X_train
        baseline.X_val, baseline.X_test = data.X_val, data.X_test
        baseline.n = data.X_train.shape[0]
        baseline.F, baseline.diag_test = archive["F"], archive["diag_test"]
        baseline.trace, baseline.tol = float(archive["trace"]), float(archive["tol"])
        baseline.max_passes = PCG_MAX_PASSES
        baseline.seconds = float(archive["seconds"])
        baseline.solutions, baseline.eigenpairs = {}, {}
        i = 0
        while f"solution{i}_digest" in archive:
            baseline.solutions[str(archive[f"solution{i}_digest"])] = {
                name: archive[f"solution{i}_{name}"] for name in (*_SOLUTION_ARRAYS, "passes")}
            i += 1
        for name in archive:
            if name.startswith("eigenpairs") and name.endswith("_theta"):
                top = int(name[len("eigenpairs"):-len("_theta")])
                baseline.eigenpairs[top] = {part: archive[f"eigenpairs{top}_{part}"]
                                            for part in _EIGENPAIR_ARRAYS}
        return baseline


def _digest(Y: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(Y).tobytes()).hexdigest()[:16]


def exact_baseline(data, kernel, exact_max_n: int = DEFAULT_EXACT_MAX_N,
                   shared: tuple[Path, str] | None = None):
    """The exact baseline of (data, kernel), kept in the workspace
    (:class:`kbench.plugin.Workspace`): dense up to ``DENSE_MAX_N`` training rows, matrix-free up to
    ``exact_max_n``, None above. With ``shared`` = (file, split checksum) it is shared between
    processes through the file: loaded when the file holds the baseline of this split and kernel,
    else computed and saved there (:func:`save_requests` saves what is asked of it later)."""
    _check_arguments(data, kernel, "exact_baseline")
    shared = _check_shared(shared)
    exact_max_n = EXACT_MAX_N.check(exact_max_n, "exact_max_n", "exact_baseline")
    n = data.X_train.shape[0]
    if n > exact_max_n:
        return None
    dense = n <= DENSE_MAX_N
    key = None if shared is None else _shared_key(data, kernel, shared, dense)
    computed = []  # whether this call computed it (then it is saved below)

    def load_or_compute():
        loaded = None if shared is None else (ExactBaseline.load(shared[0], key) if dense else
                                              IterativeBaseline.load(shared[0], key, data, kernel))
        computed.append(loaded is None)
        return (ExactBaseline(data, kernel) if dense
                else IterativeBaseline(data, kernel)) if loaded is None else loaded

    baseline = cached((data,), ("exact", kernel.spec()), load_or_compute)
    if shared is not None and (any(computed) or baseline.unsaved):
        baseline.save(shared[0], key)  # once, with what earlier callers asked of it
    return baseline


def _check_arguments(data, kernel, owner: str) -> None:
    for name, value, kind, what in (("data", data, Dataset, "a kbench Dataset "
                                                            "(kbench.load_dataset)"),
                                    ("kernel", kernel, Kernel, "a kbench kernel "
                                                               "(kbench.make_kernel)")):
        if not isinstance(value, kind):
            raise ValueError(f"{owner}: {name} must be {what}, got {type(value).__name__}.")


def _check_shared(shared) -> tuple[Path, str] | None:
    """``shared`` as (file, split checksum), checked: None, or a pair of a file path and text."""
    if shared is None:
        return None
    if not (isinstance(shared, tuple) and len(shared) == 2
            and isinstance(shared[0], str | os.PathLike)
            and isinstance(shared[1], str) and shared[1]):
        raise ValueError("exact_baseline: shared must be a pair (file path, split checksum text), "
                         f"got {shared!r}.")
    path = Path(shared[0])
    if path.is_dir():
        raise ValueError(f"exact_baseline: the shared file {path} is a folder; name a file in it "
                         f"(e.g. {path / 'exact.npz'}).")
    return path, shared[1]


def _read_only(baseline, names) -> None:
    """The baseline's arrays cannot be written: every cell of a repetition reads them."""
    for name in names:
        getattr(baseline, name).flags.writeable = False


def _shared_key(data, kernel, shared: tuple[Path, str], dense: bool) -> dict:
    """What a shared baseline file must hold to stand for this split, kernel and method: the
    caller's split checksum, and the training rows' shape and a digest of up to 256 of them
    (so that another split is never served under a wrong checksum)."""
    X = data.X_train
    rows = {"split_checksum": shared[1], "train_shape": list(X.shape),
            "train_rows": _digest(X[::max(1, X.shape[0] // 256)])}
    key = {**rows, "kernel": kernel.spec(), "format": FORMAT}
    if not dense:
        key.update(method="pcg", tol=PCG_TOL, preconditioner_rank=PRECONDITIONER_RANK)
    return key


def save_requests(baseline, data, kernel, shared: tuple[Path, str] | None) -> None:
    """Save into ``shared`` what was asked of a matrix-free ``baseline`` since it was saved,
    once."""
    if shared is not None and baseline.unsaved:
        baseline.save(shared[0], _shared_key(data, kernel, shared, baseline.dense))
