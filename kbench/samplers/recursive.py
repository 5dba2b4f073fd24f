"""Recursive RLS-Nyström (Musco & Musco, NeurIPS 2017, Alg. 3, the fixed-size variant).

With p landmarks: an oversampling factor c = log p and a rank k' = ⌈p/(4 log p)⌉. A random
permutation orders the points; level sizes halve from n down to a base of at most p points,
which is the first sample (weights 1). Going back up,
each level's points (the first n_l of the permutation) get ridge leverage scores estimated
from the previous level's weighted sample S (weights w = 1/√score):

    λ = (Σ_{j∈S} w_j² K_jj − Σ_{i≤k'} σ_i(W K_SS W)) / k'      (the paper's ridge, from its
                                                                 tail beyond rank k')
    ℓ̃_i = min(1, c·(K_ii − k_iS (K_SS + λ W⁻²)⁻¹ k_Si)/λ)

and are kept independently with probability ℓ̃_i, so a level's sample size |S_l| is random
(about c·Σ ℓ̃ points, not a fixed p); at the top level (all n points, c = 1) p distinct
landmarks are drawn ∝ ℓ̃ without replacement. λ is chosen by the algorithm, not by the
sweep: the sampler does not use the sweep's λ. Kernel entries: the diagonal and
Σ_l n_l·|S_l| (the paper's O(np) in expectation; not a hard bound, since |S_l| is random),
plus p² for the landmarks' K_mm.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.linalg

from kbench._parallel import lapack_section
from kbench.hookspecs import hookimpl
from kbench.lowrank.linalg import sample_without_replacement
from kbench.lowrank.maps import nystrom
from kbench.samplers.base import Sampler

#: the ridge when a level's sample has at most k' points (no tail to estimate it from), and
#: a lower bound on it at every level, relative to the largest diagonal entry (the authors'
#: code uses 1e-5 for unit-diagonal kernels, only in the first case)
_FLOOR_RIDGE = 1e-5


class RecursiveRLSSampler(Sampler):
    """Recursive ridge-leverage-score Nyström sampling (Musco & Musco 2017)."""

    name = "recursive-rls"

    def _fit(self, X, kernel, rank, lam, rng):
        n = X.shape[0]
        diag = kernel.diag(X)
        oversample = max(math.log(rank), 1.0)
        k = max(1, math.ceil(rank / (4 * oversample)))
        levels = math.ceil(math.log2(n / rank)) if rank < n else 0
        sizes = [n]
        for _ in range(levels):
            sizes.append(math.ceil(sizes[-1] / 2))
        order = rng.permutation(n)
        sample, weights = np.arange(sizes[-1]), np.ones(sizes[-1])  # positions in ``order``
        ridges, sample_sizes, level_sizes = [], [], []
        with lapack_section():  # factorisations and solves alternate with kernel blocks
            for level in range(levels - 1, -1, -1):
                current = order[: sizes[level]]
                K_cs = kernel(X[current], X[order[sample]])
                ridge = self._ridge(K_cs[sample], weights, k, float(diag.max()))
                ridges.append(ridge)
                sample_sizes.append(int(sample.size))
                level_sizes.append(int(current.size))
                top = level == 0
                scores = self._scores(K_cs, K_cs[sample], weights, diag[current], ridge,
                                      1.0 if top else oversample)
                if top:
                    sample = sample_without_replacement(rng, scores, rank)
                    break
                sample = np.flatnonzero(rng.random(current.size) < scores)
                # improbable: fall back to a uniform sample, as the paper's code
                if sample.size == 0:
                    sample = rng.choice(current.size, size=min(rank, current.size), replace=False)
                    scores = np.full(current.size, sample.size / current.size)
                weights = 1.0 / np.sqrt(scores[sample])
        landmarks = order[sample]
        # per level, top last: the weighted sample S that scores the level's |current| rows
        info = {"warnings": [], "ridges": ridges, "levels": levels, "sample_sizes": sample_sizes,
                "level_sizes": level_sizes}
        if landmarks.size < rank:
            info["warnings"].append(f"only {landmarks.size} points have a positive score; "
                                    f"rank_realized < {rank}")
        return nystrom(X, kernel, landmarks, info)

    @staticmethod
    def _ridge(K_ss: np.ndarray, weights: np.ndarray, k: int, kappa2: float) -> float:
        """(tr(W K_SS W) − Σ_{i≤k} σ_i(W K_SS W))/k: the tail of the weighted sample's
        spectrum beyond rank k, averaged over k (Musco & Musco 2017, Alg. 3), never below
        the floor ``_FLOOR_RIDGE``·κ²."""
        if K_ss.shape[0] <= k:
            return _FLOOR_RIDGE * kappa2
        weighted = weights[:, None] * K_ss * weights[None, :]
        top = scipy.linalg.eigvalsh(weighted,
                                    subset_by_index=[K_ss.shape[0] - k, K_ss.shape[0] - 1],
                                    check_finite=False)
        return max(float(np.trace(weighted) - np.abs(top).sum()) / k, _FLOOR_RIDGE * kappa2)

    @staticmethod
    def _scores(K_cs, K_ss, weights, diag, ridge, oversample) -> np.ndarray:
        """min(1, c·(K_ii − k_iS (K_SS + λW⁻²)⁻¹ k_Si)/λ) for the rows of ``K_cs``."""
        A = K_ss + np.diag(ridge / weights**2)
        factor = scipy.linalg.cholesky(A, lower=True, check_finite=False)
        V = scipy.linalg.solve_triangular(factor, K_cs.T, lower=True, check_finite=False)
        residual = np.clip(diag - np.einsum("ij,ij->j", V, V), 0.0, None)
        return np.minimum(1.0, oversample * residual / ridge)


@hookimpl
def kbench_register_samplers():
    return [RecursiveRLSSampler]
