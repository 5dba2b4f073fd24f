"""k-means Nyström landmarks (Zhang, Tsang & Kwok 2008) as a kbench sampler plugin."""

from __future__ import annotations

import numpy as np

import kbench


class KMeansSampler(kbench.plugin.Sampler):
    """Nyström on the centres of k-means++ seeded Lloyd iterations (landmarks are not data rows)."""

    name = "kmeans"
    parameters = {"max_iter": kbench.plugin.Param(int, "the most Lloyd iterations", low=1)}

    def __init__(self, max_iter: int = 20) -> None:
        self.max_iter = max_iter

    def _fit(self, X, kernel, rank, lam, rng):
        from sklearn.cluster import KMeans  # imported late: registry loading stays fast

        seed = int(rng.integers(np.iinfo(np.int32).max))
        centres = KMeans(n_clusters=rank, init="k-means++", n_init=1, max_iter=self.max_iter,
                         random_state=seed).fit(X).cluster_centers_
        centres = np.ascontiguousarray(centres)
        projection, _ = kbench.plugin.inverse_sqrt_psd(kernel(centres))
        return kbench.plugin.NystromMap(kernel, centres, None, projection, {"warnings": []})


@kbench.plugin.hookimpl
def kbench_register_samplers():
    return [KMeansSampler]
