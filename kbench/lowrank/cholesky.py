"""Pivoted Cholesky factorisations: greedy (Bach 2013 §3) and randomly pivoted (Chen,
Epperly, Tropp & Webber 2023), the latter in its accelerated block form (Epperly, Tropp &
Webber 2024, "Embrace rejection"): the ``pivoted-cholesky`` and ``rp-cholesky`` samplers' fits,
and the factor the exact baseline's preconditioner and the advisor use (:func:`rp_cholesky_of`).

Both build the factor G (n×k) with GGᵀ = K_nI K_II⁻¹ K_In on the pivot set I and return
it as ``train_features``; new points get g(x) = G_I⁻¹ k_I(x) by a triangular solve.
Pivots are chosen on a few candidates and then eliminated together (a greedy panel, an
rp-cholesky round): their n×t columns in one BLAS-3 product, after which the residual
diagonal d = diag(K − GGᵀ) is updated, clamped at 0 against round-off, so Σd = tr(K − L).
The loops run with BLAS on one thread: their large products run in column blocks spread
over the cores (``_eliminate``), and threaded BLAS calls between them would leave BLAS's
threads spinning against those blocks.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from functools import partial

import numpy as np

from kbench._parallel import blas_threads, blocks_only, for_each_block, scratch
from kbench._validation import check_features
from kbench.kernels.base import Kernel
from kbench.lowrank.maps import CholeskyMap

#: candidates per pivot of a greedy panel (at n = 50 000, d = 20: a panel makes ~25 pivots)
CANDIDATES_PER_PIVOT = 8
#: the first candidate of an rp-cholesky round is accepted with probability ≈ 1 in exact
#: arithmetic (its residual equals d), so this many idle rounds in a row means the numbers
#: are broken
MAX_IDLE_ROUNDS = 50

#: an elimination's column blocks of Gᵀ (each block's kernel rows and GEMM on one thread):
#: at least this many columns, and for a panel of few pivots about _ELIMINATION_ENTRIES
#: entries of kernel rows and of the block's rows of X
_ELIMINATION_COLUMNS = 4096
_ELIMINATION_ENTRIES = 1 << 18


def _cholesky_map(X, kernel, pivots, factor_rows, info):
    """Wrap the first k rows of Gᵀ (k×n) as a CholeskyMap."""
    pivots = np.asarray(pivots, dtype=np.int64)
    G = factor_rows[: len(pivots)].T  # n×k view, Fortran order
    L = np.ascontiguousarray(G[pivots])
    info["trace_residual"] = info.pop("_trace_residual")
    return CholeskyMap(kernel, np.ascontiguousarray(X[pivots]), pivots, L, info, train_features=G)


def _eliminate(Gt, d, k, new, L, kernel_rows: Callable[[int, int, np.ndarray], None],
               n_features: int) -> None:
    """Append the t pivots ``new`` to the factor after its k earlier columns, in place.

    Rows k … k + t of Gᵀ become L⁻¹(K(new, ·) − G_new G_{:k}ᵀ), with L (t×t, lower) the
    factor's block on the new pivots: one GEMM of inner size k + t per column block,
    [−L⁻¹G_new | L⁻¹]·[G_{:k}ᵀ; K(new, ·)], the blocks spread over threads, each with its
    kernel entries: ``kernel_rows(start, stop, target)`` writes K(X[new], X[start:stop]) into
    target, rows k … k + t of the block. The residual diagonal d loses the new columns' squares."""
    t, n = len(new), Gt.shape[1]
    L_inv = np.linalg.inv(L)
    combined = np.empty((t, k + t))
    combined[:, k:] = L_inv
    # negated before the product: numpy 2.1–2.4's np.negative on x86-64 (AVX2) reads an input
    # of stride 64 bytes as contiguous, and combined[:, :1] has that stride when k + t = 8
    np.matmul(np.negative(L_inv), Gt[:k, new].T, out=combined[:, :k])

    bounds = _column_blocks(n, t, n_features)

    def block(i):
        start, stop = bounds[i], bounds[i + 1]
        kernel_rows(start, stop, Gt[k : k + t, start:stop])
        with scratch("factor rows", (t, stop - start)) as columns:
            np.matmul(combined, Gt[: k + t, start:stop], out=columns)
            Gt[k : k + t, start:stop] = columns
            d[start:stop] -= np.einsum("ij,ij->j", columns, columns)

    for_each_block(block, range(len(bounds) - 1), min_per_thread=1)
    Gt[k : k + t, new] = L.T  # the pivot rows of the factor are L, exactly triangular
    np.maximum(d, 0.0, out=d)
    d[new] = 0.0


def _column_blocks(n: int, t: int, n_features: int) -> list[int]:
    """Bounds of an elimination's column blocks for t pivots on points of n_features: equal
    blocks of at least _ELIMINATION_COLUMNS columns (fewer only when n is smaller), as many
    for each thread, so that a panel of few pivots pays few blocks' fixed costs."""
    threads = blas_threads()
    count = max(-(-n // max(_ELIMINATION_COLUMNS, _ELIMINATION_ENTRIES // (t + n_features))),
                min(threads, n // _ELIMINATION_COLUMNS), 1)
    if count > 1:
        count = threads * -(-count // threads)
    return [n * i // count for i in range(count + 1)]


def _kernel_rows(kernel, X, X_new, start, stop, target, known=None) -> None:
    """K(X_new, X[start:stop]) into target (t rows of Gᵀ). ``known`` = (columns, values): the
    entries on these sorted columns are already evaluated (a greedy panel's candidates), in
    the t×len(columns) values; the kernel skips them."""
    inside = values = None
    if known is not None:
        columns, values = known
        low, high = np.searchsorted(columns, [start, stop])
        inside, values = columns[low:high] - start, values[:, low:high]
    with scratch("kernel rows", target.shape) as rows:
        kernel._rows_into(X_new, X[start:stop], rows, padding=inside)
        if known is not None:
            rows[:, inside] = values
        target[...] = rows


def _largest(d: np.ndarray, count: int) -> tuple[np.ndarray, float]:
    """The indices of the ``count`` largest entries of d in increasing order (ties at the
    cut taken by index, as ``argmax`` takes them) and the largest value left out."""
    n = len(d)
    if count >= n:
        return np.arange(n), -np.inf
    cut = np.partition(d, n - count - 1)[n - count - 1]
    above = np.flatnonzero(d > cut)
    tied = np.flatnonzero(d == cut)[: count - len(above)]
    return np.sort(np.concatenate([above, tied])), float(cut)


def _stopped_early(info, k, rank, tol):
    if k < rank:
        info["warnings"].append(
            f"residual diagonal fell below tol·max diag K (tol={tol:g}) after {k} pivots: "
            f"the kernel matrix has numerical rank {k} < {rank}"
        )


def greedy_cholesky(X: np.ndarray, kernel: Kernel, rank: int, tol: float = 1e-10,
                    panel: int = 64) -> CholeskyMap:
    """Greedy pivoted Cholesky (Bach 2013 §3): each pivot is the point of largest residual
    diagonal, chosen panel by panel (kbench's ``pivoted-cholesky`` sampler describes how), on
    checked float64 rows ``X`` and a fitted ``kernel``; stops early below tol·max diag K."""
    with blocks_only():
        return _greedy(X, kernel, rank, tol, panel)


def _greedy(X, kernel, rank, tol, panel):
    n = X.shape[0]
    d = kernel.diag(X)
    floor = tol * d.max()
    Gt = np.zeros((rank, n))  # row j holds column j of G
    pivots: list[int] = []
    sizes: list[int] = []  # pivots per panel
    done = False
    while len(pivots) < rank and not done:
        k = len(pivots)
        candidates, bound = _largest(d, CANDIDATES_PER_PIVOT * panel)
        X_candidates, residual = X[candidates], d[candidates]
        with np.errstate(over="ignore", invalid="ignore"):  # non-finite values raise in _rows_into
            prepared = kernel._prepare(X_candidates)  # for each pivot's kernel row on them
        size = min(panel, rank - k)
        # the panel's kernel columns, and the factor's rows on the candidates (k earlier columns,
        # then the panel's)
        K_panel, factor = np.empty((size, len(candidates))), np.empty((len(candidates), k + size))
        factor[:, :k] = Gt[:k, candidates].T
        slots: list[int] = []
        for m in range(size):
            a = int(np.argmax(residual))
            if m and residual[a] <= bound:  # another point may have the largest residual
                break
            if residual[a] <= floor:
                done = True
                break
            kernel._rows_into(X_candidates[a : a + 1], X_candidates, K_panel[m : m + 1],
                              prepared=prepared)
            column = K_panel[m] - factor[:, : k + m] @ factor[a, : k + m]
            column /= np.sqrt(residual[a])
            factor[:, k + m] = column
            residual -= column * column
            np.maximum(residual, 0.0, out=residual)
            residual[a] = 0.0
            slots.append(a)
        if not slots:
            break
        t, new = len(slots), candidates[slots]
        rows = partial(_kernel_rows, kernel, X, X[new], known=(candidates, K_panel[:t]))
        _eliminate(Gt, d, k, new, np.tril(factor[slots, k : k + t]), rows, X.shape[1])
        pivots.extend(new.tolist())
        sizes.append(t)
    info = {"warnings": [], "_trace_residual": float(d.sum()), "panels": len(sizes),
            "block_sizes": sizes}
    _stopped_early(info, len(pivots), rank, tol)
    return _cholesky_map(X, kernel, pivots, Gt, info)


def rp_cholesky(X: np.ndarray, kernel: Kernel, rank: int, rng: np.random.Generator,
                block_size: int = 100,
                tol: float = 1e-10) -> CholeskyMap:
    """Randomly pivoted Cholesky (Chen, Epperly, Tropp & Webber 2023), pivots ∝ residual
    diagonal, in its accelerated block form (Epperly, Tropp & Webber 2024): each round draws
    ``block_size`` candidates iid ∝ d and accepts candidate sᵢ with probability G'ᵢᵢ/d(sᵢ), G' the
    residual after the candidates accepted before it, so that the pivots have the one-pivot
    loop's law; on checked float64 rows ``X`` and a fitted ``kernel``."""
    with blocks_only():
        return _randomly_pivoted(X, kernel, rank, rng, block_size, tol)


def _randomly_pivoted(X, kernel, rank, rng, block_size, tol):
    n = X.shape[0]
    d = kernel.diag(X)
    floor = tol * d.max()
    Gt = np.zeros((rank, n))
    pivots: list[int] = []
    sizes: list[int] = []  # pivots accepted per round that accepted any
    rounds = idle = 0
    while len(pivots) < rank:
        k = len(pivots)
        weights = np.where(d > floor, d, 0.0)
        total = weights.sum()
        if total <= 0:
            break
        candidates = rng.choice(n, size=min(block_size, n), p=weights / total)  # (a block² matrix)
        residual = kernel._evaluate(X[candidates],
                                    X[candidates]) - Gt[:k, candidates].T @ Gt[:k, candidates]
        accepted = _accept(residual, weights[candidates], floor, rng)[: rank - k]
        rounds += 1
        idle = 0 if accepted else idle + 1
        if idle == MAX_IDLE_ROUNDS:
            raise FloatingPointError(
                f"rp-cholesky accepted no pivot in {idle} consecutive rounds after {k} pivots: "
                "the kernel's residual block disagrees with the residual diagonal, so the kernel "
                "matrix is not numerically positive semidefinite."
            )
        if not accepted:
            continue
        new = candidates[accepted]
        R = np.linalg.cholesky(residual[np.ix_(accepted, accepted)])
        _eliminate(Gt, d, k, new, R, partial(_kernel_rows, kernel, X, X[new]), X.shape[1])
        pivots.extend(new.tolist())
        sizes.append(len(new))
    info = {"warnings": [], "_trace_residual": float(d.sum()), "rounds": rounds,
            "block_sizes": sizes}
    _stopped_early(info, len(pivots), rank, tol)
    return _cholesky_map(X, kernel, pivots, Gt, info)


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


def rp_cholesky_of(X, kernel: Kernel, rank: int, seed: int) -> CholeskyMap:
    """:func:`rp_cholesky` of ``X`` (checked) with ``kernel`` (fitted on ``X`` as a copy when
    it has a data-dependent parameter left) and a generator seeded by ``seed``, as the
    ``rp-cholesky`` sampler's fit draws it: the exact baseline's preconditioner and the
    advisor's estimate."""
    X = check_features(X, "X")
    if not kernel.fitted:
        kernel = copy.copy(kernel).fit(X)
    return rp_cholesky(X, kernel, rank, np.random.default_rng(seed))
