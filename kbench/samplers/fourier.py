"""Random Fourier features (Rahimi & Recht 2007), orthogonal random features (Yu et al.
2016), and their structured variants for the gaussian kernel: SORF (Yu et al. 2016 §4)
and Fastfood (Le, Sarlós & Smola 2013).

For a stationary kernel k(x − y) = k(0)·E cos ωᵀ(x − y), p features come from p//2
frequencies × (cos, sin) (plus one random-phase cosine when p is odd): see FourierMap.
"""

from __future__ import annotations

import numpy as np

from kbench.hookspecs import hookimpl
from kbench.kernels.stationary import GaussianKernel
from kbench.lowrank.maps import FourierMap, HadamardFourierMap
from kbench.samplers.base import Sampler


class RFFSampler(Sampler):
    """Random Fourier features: frequencies iid from the kernel's spectral measure."""

    name = "rff"
    family = "random-features"

    def refuses(self, kernel):
        return None if kernel.spectral else str(kernel._no_spectral_sampler())

    def _fit(self, X, kernel, rank, lam, rng):
        n_pairs, odd = divmod(rank, 2)
        frequencies = self._frequencies(kernel, rng, n_pairs + odd, X.shape[1])
        phase = float(rng.uniform(0.0, 2.0 * np.pi)) if odd else None
        return FourierMap(frequencies, n_pairs, phase, kernel.diag_value)

    def _frequencies(self, kernel, rng, k, d):
        return kernel.sample_frequencies(rng, k, d)


class ORFSampler(RFFSampler):
    """Orthogonal random features: Haar-orthogonal directions in blocks of d, χ-law norms."""

    name = "orf"

    def refuses(self, kernel):
        if not kernel.spectral or kernel.isotropic:
            return super().refuses(kernel)
        return ("orthogonal random features need a rotation-invariant spectral measure; the "
                f"{kernel.name} kernel has none. Use rff, or an isotropic kernel (gaussian, "
                "matern).")

    def _frequencies(self, kernel, rng, k, d):
        blocks = []
        for _ in range(-(-k // d)):
            Q, R = np.linalg.qr(rng.standard_normal((d, d)))
            blocks.append(Q * np.sign(np.diag(R)))  # sign fix makes Q Haar-distributed
        directions = np.vstack(blocks)[:k]
        return directions * kernel.sample_frequency_norms(rng, k, d)[:, None]


class StructuredSampler(Sampler):
    """Frequencies in blocks of d' = 2^⌈log₂ d⌉ (x zero-padded), each block applied by fast
    Walsh–Hadamard transforms in O(d' log d') per point: gaussian kernel only."""

    family = "random-features"

    def refuses(self, kernel):
        if isinstance(kernel, GaussianKernel):
            return None
        return (f"{self.name} builds gaussian frequencies: it needs the gaussian kernel, "
                f"got {kernel.name!r} (rff takes any stationary kernel, orf an isotropic one).")

    def _fit(self, X, kernel, rank, lam, rng):
        n_pairs, odd = divmod(rank, 2)
        n_frequencies, d = n_pairs + odd, X.shape[1]
        padded = 1 << (d - 1).bit_length()
        blocks = -(-n_frequencies // padded)
        steps, factor = self._blocks(rng, blocks, padded, kernel.sigma_)
        phase = float(rng.uniform(0.0, 2.0 * np.pi)) if odd else None
        return HadamardFourierMap(d, steps, factor, n_frequencies, n_pairs, phase,
                                  kernel.diag_value)

    def _blocks(self, rng, blocks: int, padded: int, sigma: float) -> tuple[list, float]:
        raise NotImplementedError


class SORFSampler(StructuredSampler):
    """Structured orthogonal random features (Yu et al. 2016 §4): each block of frequencies
    is (√d'/σ)·H D₁ H D₂ H D₃ with H the normalised Walsh–Hadamard matrix and D_i Rademacher
    diagonals: orthogonal rows of norm √d'/σ, like orf's on average (of the d'×d' block; with x
    zero-padded only its first d columns act, whose rows have E‖ω‖² = d/σ²)."""

    name = "sorf"

    def _blocks(self, rng, blocks, padded, sigma):
        D1, D2, D3 = rng.choice([-1.0, 1.0], size=(3, blocks, padded))
        H = ("hadamard", None)
        # (√d'/σ)·(H/√d')³ = H³/(σ d')
        return [("diag", D3), H, ("diag", D2), H, ("diag", D1), H], 1.0 / (sigma * padded)


class FastfoodSampler(StructuredSampler):
    """Fastfood (Le, Sarlós & Smola 2013, eq. 7): each block of frequencies is
    (1/(σ√d'))·S H G Π H B with H the unnormalised Walsh–Hadamard matrix, B a Rademacher
    diagonal, Π a permutation, G a gaussian diagonal and S = diag(s_i/‖G‖_F), s_i ~ χ_{d'}:
    rows of norm s_i/σ, the norms of N(0, σ⁻²I_{d'}) draws (of the d'×d' block; with x
    zero-padded only its first d columns act, whose rows have E‖ω‖² = d/σ²)."""

    name = "fastfood"

    def _blocks(self, rng, blocks, padded, sigma):
        B = rng.choice([-1.0, 1.0], size=(blocks, padded))
        permutation = rng.permuted(np.tile(np.arange(padded), (blocks, 1)), axis=1)
        G = rng.standard_normal((blocks, padded))
        S = (np.sqrt(rng.chisquare(padded, size=(blocks, padded)))
             / np.linalg.norm(G, axis=1, keepdims=True))
        H = ("hadamard", None)
        return [("diag", B), H, ("perm", permutation), ("diag", G), H,
                ("diag", S)], 1.0 / (sigma * np.sqrt(padded))


@hookimpl
def kbench_register_samplers():
    return [RFFSampler, ORFSampler, SORFSampler, FastfoodSampler]
