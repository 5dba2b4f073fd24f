"""The pivoted Cholesky samplers: greedy (``pivoted-cholesky``) and randomly pivoted
(``rp-cholesky``); their factorisations are :mod:`kbench.lowrank.cholesky`'s."""

from __future__ import annotations

from kbench.hookspecs import hookimpl
from kbench.lowrank.cholesky import greedy_cholesky, rp_cholesky
from kbench.parameters import Param
from kbench.samplers.base import Sampler

#: the stopping rule of both Cholesky samplers (the residual never exceeds max diag K)
TOL = Param(float, "stop when the residual diagonal falls below tol·max diag K", low=0, high=1,
            low_open=True,
            high_open=True)


class PivotedCholeskySampler(Sampler):
    """Greedy pivoted Cholesky: each pivot is the point of largest residual diagonal.

    The pivots are exactly the greedy ones, chosen panel by panel. A panel takes the
    8·``panel`` points of largest residual as candidates and follows their residuals alone:
    no other point's residual exceeds the largest one left out, so while a candidate's
    exceeds it, that candidate is the greedy pivot, and its column is needed on the
    candidates only. After at most ``panel`` pivots, or when the candidates can no longer
    tell, the rest of the panel's columns is evaluated and eliminated on all n points in
    one BLAS-3 product; every entry of K is evaluated once, as in the one-pivot loop.
    """

    name = "pivoted-cholesky"
    parameters = {"tol": TOL,
                  "panel": Param(int, "the most pivots chosen per panel before a BLAS-3 update",
                                 low=1)}

    def __init__(self, tol: float = 1e-10, panel: int = 64) -> None:
        self.tol, self.panel = tol, panel

    def _fit(self, X, kernel, rank, lam, rng):
        return greedy_cholesky(X, kernel, rank, self.tol, self.panel)


class RPCholeskySampler(Sampler):
    """Randomly pivoted Cholesky, pivots ∝ residual diagonal; accelerated block variant.

    Each round draws ``block_size`` candidates (at most n) iid ∝ d, evaluates their residual
    block G, and accepts candidate sᵢ with probability G'ᵢᵢ/d(sᵢ), where G' is the residual after
    eliminating the candidates accepted before it in the round. The accepted pivots have
    the distribution of the one-pivot loop; their n×t columns are eliminated in one
    BLAS-3 product.
    """

    name = "rp-cholesky"
    parameters = {"block_size": Param(int, "the candidates drawn per round", low=1), "tol": TOL}

    def __init__(self, block_size: int = 100, tol: float = 1e-10) -> None:
        self.block_size, self.tol = block_size, tol

    def _fit(self, X, kernel, rank, lam, rng):
        return rp_cholesky(X, kernel, rank, rng, self.block_size, self.tol)


@hookimpl
def kbench_register_samplers():
    return [PivotedCholeskySampler, RPCholeskySampler]
