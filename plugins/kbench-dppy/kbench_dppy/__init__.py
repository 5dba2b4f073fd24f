"""DPPy's samplers (Gautier, Polito, Bardenet & Valko, JMLR 2019) as kbench samplers.

- ``dppy-bless``: ``dppy.bless.bless`` (Rudi, Calandriello, Carratino & Rosasco 2018),
  DPPy's copy of the authors' BLESS (atoms weighted by p, like kbench's ``bless``, not by
  LCSL's p/u; its own ridge schedule from n); DPPy's ridge is unnormalised (K + λ'I), so it runs at
  λ' = nλ, and ``qbar`` is its ``rls_oversample_param``. The rank's landmarks are drawn from its
  dictionary as kbench's ``bless`` draws them.
- ``dppy-k-dpp``: ``FiniteDPP("likelihood", L=K).sample_exact_k_dpp`` (Kulesza & Taskar
  2012, Alg. 8 then a projection DPP): P(S) ∝ det K_S over |S| = k, the landmark law of
  Nyström with a volume sampling guarantee (Belabbas & Wolfe 2009). It needs the n×n
  kernel matrix and its eigendecomposition, so it refuses n > ``max_n``.

DPPy draws from a ``numpy.random.RandomState`` seeded from kbench's generator and evaluates
the kernel through kbench's kernel object (its ``__call__(X, Y)`` and ``diag(X)`` are the
interface DPPy expects), so kernel evaluations are counted as for a built-in sampler.
"""

from __future__ import annotations

import numpy as np

import kbench


def _random_state(rng: np.random.Generator) -> np.random.RandomState:
    """DPPy's generator, seeded from kbench's."""
    return np.random.RandomState(int(rng.integers(np.iinfo(np.int32).max)))


class DppyBless(kbench.plugin.Sampler):
    """DPPy's BLESS at ridge nλ; ``qbar`` oversamples the leverage scores (dictionary ≈
    q̄·d_eff(λ))."""

    name = "dppy-bless"
    needs_lam = True
    parameters = {"qbar": kbench.plugin.Param(float, "oversampling of the leverage scores", low=1)}

    def __init__(self, qbar: float = 10.0) -> None:
        self.qbar = qbar
        import dppy.bless  # noqa: F401  (imported when a sampler is made, not in the timed fit)

    def _fit(self, X, kernel, rank, lam, rng):
        from dppy.bless import bless

        n = X.shape[0]
        dictionary = bless(X, kernel, lam_final=n * lam, rls_oversample_param=self.qbar,
                           random_state=_random_state(rng), verbose=False)
        atoms = np.asarray(dictionary.idx, dtype=np.int64)
        info = {"warnings": [], "qbar": self.qbar, "dictionary_size": int(atoms.size)}
        chosen = kbench.plugin.landmarks_from_dictionary(atoms.size, rank, rng, info)
        return kbench.plugin.nystrom(X, kernel, atoms[chosen], info)


class DppyKDpp(kbench.plugin.Sampler):
    """DPPy's exact k-DPP with likelihood L = K and k = rank; refuses n > ``max_n``."""

    name = "dppy-k-dpp"
    parameters = {"max_n": kbench.plugin.Param(int, "the most training rows it takes: it forms the "
                                                    "n×n kernel matrix",
                                        low=1)}

    def __init__(self, max_n: int = 5000) -> None:
        self.max_n = max_n
        # 0.7 s the first time: imported when a sampler is made, not in the timed fit
        import dppy.finite_dpps  # noqa: F401

    def _fit(self, X, kernel, rank, lam, rng):
        from dppy.finite_dpps import FiniteDPP

        n = X.shape[0]
        if n > self.max_n:
            raise kbench.Refused("dppy-k-dpp: an exact k-DPP eigendecomposes the n×n kernel matrix "
                                 f"and refuses n = {n} > max_n = {self.max_n} (raise it with "
                                 "dppy-k-dpp:max_n=...).")
        K = kernel(X)
        if rank == n:  # the only subset of size n: no sampling (DPPy's sampler is unstable there)
            return kbench.plugin.nystrom(X, kernel, np.arange(n), {"warnings": []}, K_mm=K)
        dpp = FiniteDPP("likelihood", L=K)
        try:
            sample = dpp.sample_exact_k_dpp(size=rank, random_state=_random_state(rng))
        except ValueError as exc:
            if "> rank" not in str(exc):
                raise
            raise kbench.Refused(f"dppy-k-dpp: a k-DPP of size {rank} needs {rank} positive "
                                 f"eigenvalues of K; DPPy says {exc} (numerical rank).") from None
        landmarks = np.unique(np.asarray(sample, dtype=np.int64))
        if landmarks.size != rank:
            raise FloatingPointError(
                f"dppy-k-dpp: DPPy returned {landmarks.size} distinct points for k = {rank}: its "
                "elementary symmetric polynomials of K's eigenvalues under- or overflowed.")
        return kbench.plugin.nystrom(X, kernel, landmarks, {"warnings": []},
                                     K_mm=K[np.ix_(landmarks, landmarks)])


@kbench.plugin.hookimpl
def kbench_register_samplers():
    return [DppyBless, DppyKDpp]
