"""Random Fourier features (Rahimi & Recht 2007) and orthogonal random features (Yu et al. 2016).

For a stationary kernel k(x − y) = k(0)·E cos ωᵀ(x − y), p features come from p//2
frequencies × (cos, sin) (plus one random-phase cosine when p is odd): see FourierMap.
"""

from __future__ import annotations

import numpy as np

from kbench.hookspecs import hookimpl
from kbench.lowrank import FourierMap
from kbench.samplers.base import Sampler


class RFFSampler(Sampler):
    """Random Fourier features: frequencies iid from the kernel's spectral measure."""

    name = "rff"
    family = "random-features"

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

    def _frequencies(self, kernel, rng, k, d):
        blocks = []
        for _ in range(-(-k // d)):
            Q, R = np.linalg.qr(rng.standard_normal((d, d)))
            blocks.append(Q * np.sign(np.diag(R)))  # sign fix makes Q Haar-distributed
        directions = np.vstack(blocks)[:k]
        return directions * kernel.sample_frequency_norms(rng, k, d)[:, None]


@hookimpl
def kbench_register_samplers():
    return [RFFSampler, ORFSampler]
