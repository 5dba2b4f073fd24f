"""The matrix-free exact baseline, above the dense limit (kbench.exact.baseline.DENSE_MAX_N
training rows) and up to ``exact_max_n``: kernel ridge regression along a λ path solved by
preconditioned conjugate gradients (:mod:`kbench.exact.pcg`), top eigenpairs of K by LOBPCG
for KPCA, diagnostics estimated from the preconditioner's factor; K evaluated in row blocks,
never stored."""

from __future__ import annotations

import hashlib
import time
from functools import cached_property

import numpy as np

from kbench._files import read_keyed_npz, write_keyed_npz
from kbench._validation import check_components, check_lam_path, check_ridge_path
from kbench.exact.dense import Predictions, check_arguments
from kbench.exact.pcg import kernel_product, solve_krr_path
from kbench.lowrank.cholesky import rp_cholesky_of
from kbench.lowrank.linalg import factor_diagnostics

#: relative residual ‖y − (K + nλI)α‖/‖y‖ at which a matrix-free solve counts as exact
PCG_TOL = 1e-8
#: passes over K a matrix-free λ path may take (the final residual pass included)
PCG_MAX_PASSES = 200
#: rank of the randomly pivoted Cholesky preconditioner of the matrix-free solves (min with n):
#: the preconditioned condition number is at most 1 + tr(K − L)/(nλ) (Díaz et al. 2023); on
#: diamonds (n_train 32 364, σ validated, λ = 1e-6) it is 532 at rank 200 (the 200-pass cap:
#: over 15 min), 8.4 at 1000 (5 passes, 37 s)
PRECONDITIONER_RANK = 1000
#: residual ‖Ku − θu‖/‖K‖₂ at which a matrix-free KPCA eigenpair counts as exact
KPCA_TOL = 1e-8
#: what a matrix-free baseline keeps of each set of top eigenpairs
#: (IterativeBaseline._top_eigenpairs)
_EIGENPAIR_ARRAYS = ("theta", "U", "converged", "captured_test")
#: what a matrix-free baseline keeps of the solves of one set of targets, per λ
#: (IterativeBaseline._solution)
_SOLUTION_ARRAYS = ("lams", "train", "validation", "test", "iterations", "residual")


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
        check_arguments(data, kernel, "IterativeBaseline")
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
        digest = array_digest(Y)
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


def array_digest(Y: np.ndarray) -> str:
    """16 hex digits of the SHA-256 of an array's bytes (C order)."""
    return hashlib.sha256(np.ascontiguousarray(Y).tobytes()).hexdigest()[:16]
