"""Pivoted Cholesky column selection: greedy (Bach 2013 §3) and randomly pivoted
(Chen, Epperly, Tropp & Webber 2023), the latter in its accelerated block form
(Epperly, Tropp & Webber 2024, "Embrace rejection").

Both build the factor G (n×k) with GGᵀ = K_nI K_II⁻¹ K_In on the pivot set I and return
it as ``train_features``; new points get g(x) = G_I⁻¹ k_I(x) by a triangular solve.
The residual diagonal d = diag(K − GGᵀ) is updated after every pivot (greedy)
or every accepted block of pivots (rp-cholesky), clamped at 0 against round-off, so Σd = tr(K − L) online.
"""

from __future__ import annotations

import numpy as np

from kbench._validation import check_positive
from kbench.hookspecs import hookimpl
from kbench.lowrank.maps import CholeskyMap
from kbench.samplers.base import Sampler


def _cholesky_map(X, kernel, pivots, factor_rows, info):
    """Wrap the first k rows of Gᵀ (k×n) as a CholeskyMap."""
    pivots = np.asarray(pivots, dtype=np.int64)
    G = factor_rows[: len(pivots)].T  # n×k view, Fortran order
    L = np.ascontiguousarray(G[pivots])
    info["trace_residual"] = info.pop("_trace_residual")
    return CholeskyMap(kernel, np.ascontiguousarray(X[pivots]), pivots, L, info, train_features=G)


def _stopped_early(info, k, rank, tol):
    if k < rank:
        info["warnings"].append(
            f"residual diagonal fell below tol·max diag K (tol={tol:g}) after {k} pivots: "
            f"the kernel matrix has numerical rank {k} < {rank}"
        )


class PivotedCholeskySampler(Sampler):
    """Greedy pivoted Cholesky: each pivot is the point of largest residual diagonal.

    The pivots are exactly the greedy ones; for speed, each panel of ``panel`` pivots
    first corrects the columns of the 2·panel points of largest residual for all earlier
    columns in one BLAS-3 product, so a pivot among them (the usual case) needs only a
    short GEMV over the current panel instead of one over all earlier columns.
    """

    name = "pivoted-cholesky"

    def __init__(self, tol: float = 1e-10, panel: int = 64) -> None:
        self.tol = check_positive(tol, "tol", "pivoted-cholesky")
        self.panel = check_positive(panel, "panel", "pivoted-cholesky", integer=True)

    def _fit(self, X, kernel, rank, lam, rng):
        n = X.shape[0]
        d = kernel.diag(X)
        floor = self.tol * d.max()
        Gt = np.zeros((rank, n))  # row j holds column j of G, contiguous for the GEMV
        pivots: list[int] = []
        done, misses = False, 0
        while len(pivots) < rank and not done:
            start = len(pivots)
            # candidates: largest residuals, ties by index as argmax breaks them
            candidates = np.argsort(-d, kind="stable")[: 2 * self.panel]
            slot = {int(c): t for t, c in enumerate(candidates)}
            # the candidates' columns corrected for all earlier pivots, one row each (2·panel×n)
            earlier = Gt[:start, candidates].T @ Gt[:start] if start else None
            for j in range(start, min(start + self.panel, rank)):
                i = int(np.argmax(d))
                if d[i] <= floor:
                    done = True
                    break
                column = kernel._evaluate(X, X[i : i + 1])[:, 0]
                if start:
                    t = slot.get(i)
                    if t is None:
                        misses += 1
                        column -= Gt[:start].T @ Gt[:start, i]
                    else:
                        column -= earlier[t]
                if j > start:
                    column -= Gt[start:j].T @ Gt[start:j, i]
                column /= np.sqrt(d[i])
                Gt[j] = column
                d -= column * column
                np.maximum(d, 0.0, out=d)
                d[i] = 0.0
                pivots.append(i)
        # candidate_misses: pivots outside the panel's precomputed candidates (slow path)
        info = {"warnings": [], "_trace_residual": float(d.sum()), "candidate_misses": misses}
        _stopped_early(info, len(pivots), rank, self.tol)
        return _cholesky_map(X, kernel, pivots, Gt, info)


class RPCholeskySampler(Sampler):
    """Randomly pivoted Cholesky, pivots ∝ residual diagonal; accelerated block variant.

    Each round draws ``block_size`` candidates iid ∝ d, evaluates their residual block G,
    and accepts candidate sᵢ with probability G'ᵢᵢ/d(sᵢ), where G' is the residual after
    eliminating the candidates accepted before it in the round. The accepted pivots have
    the distribution of the one-pivot loop; the n×t column update is one BLAS-3 product.
    """

    name = "rp-cholesky"
    #: the first candidate of a round is accepted with probability ≈ 1 in exact arithmetic
    #: (its residual equals d), so this many idle rounds in a row means the numbers are broken
    max_idle_rounds = 50

    def __init__(self, block_size: int = 100, tol: float = 1e-10) -> None:
        self.block_size = check_positive(block_size, "block_size", "rp-cholesky", integer=True)
        self.tol = check_positive(tol, "tol", "rp-cholesky")

    def _fit(self, X, kernel, rank, lam, rng):
        n = X.shape[0]
        d = kernel.diag(X)
        floor = self.tol * d.max()
        Gt = np.zeros((rank, n))
        pivots: list[int] = []
        rounds = idle = 0
        while len(pivots) < rank:
            k = len(pivots)
            weights = np.where(d > floor, d, 0.0)
            total = weights.sum()
            if total <= 0:
                break
            candidates = rng.choice(n, size=self.block_size, p=weights / total)
            residual = kernel._evaluate(X[candidates], X[candidates]) - Gt[:k, candidates].T @ Gt[:k, candidates]
            accepted = self._accept(residual, weights[candidates], floor, rng)[: rank - k]
            rounds += 1
            idle = 0 if accepted else idle + 1
            if idle == self.max_idle_rounds:
                raise FloatingPointError(
                    f"rp-cholesky accepted no pivot in {idle} consecutive rounds after {k} pivots: "
                    "the kernel's residual block disagrees with the residual diagonal, so the kernel "
                    "matrix is not numerically positive semidefinite."
                )
            if not accepted:
                continue
            new = candidates[accepted]
            R = np.linalg.cholesky(residual[np.ix_(accepted, accepted)])
            H = kernel._evaluate(X, X[new])
            H -= Gt[:k].T @ Gt[:k, new]  # residual columns, n×t
            # R⁻¹Hᵀ by the t×t inverse and one GEMM, written straight into its rows of Gᵀ: NumPy's
            # BLAS only (no second library's threads, kbench._parallel.lapack_section)
            F_new = Gt[k : k + len(new)]
            np.matmul(np.linalg.inv(R), H.T, out=F_new)
            F_new[:, new] = R.T  # the pivot rows of H R^{-T} are R, exactly triangular
            d -= np.einsum("ij,ij->j", F_new, F_new)
            np.maximum(d, 0.0, out=d)
            d[new] = 0.0
            pivots.extend(new.tolist())
        info = {"warnings": [], "_trace_residual": float(d.sum()), "rounds": rounds}
        _stopped_early(info, len(pivots), rank, self.tol)
        return _cholesky_map(X, kernel, pivots, Gt, info)

    @staticmethod
    def _accept(G, d_candidates, floor, rng) -> list[int]:
        """Rejection sampling on the candidates' residual block (Schur complement in place)."""
        G = G.copy()
        u = rng.random(len(d_candidates))
        accepted = []
        for i in range(len(d_candidates)):
            g = G[i, i]
            if g > floor and u[i] * d_candidates[i] < g:
                accepted.append(i)
                G[i:, i:] -= np.outer(G[i:, i], G[i, i:]) / g
        return accepted


@hookimpl
def kbench_register_samplers():
    return [PivotedCholeskySampler, RPCholeskySampler]
