"""Uniform column sampling (Bach 2013 §3): p landmarks drawn without replacement."""

from __future__ import annotations

from kbench.hookspecs import hookimpl
from kbench.lowrank.maps import nystrom
from kbench.samplers.base import Sampler


class UniformSampler(Sampler):
    """Nyström on p landmarks drawn uniformly without replacement (Bach 2013)."""

    name = "uniform"

    def _fit(self, X, kernel, rank, lam, rng):
        landmarks = rng.choice(X.shape[0], size=rank, replace=False)
        return nystrom(X, kernel, landmarks)


@hookimpl
def kbench_register_samplers():
    return [UniformSampler]
