"""Kernel PCA reconstruction error (Schölkopf et al. 1998; Sterge et al. 2020).

Uncentered by default (``centered=True`` is a labelled variant). The approximate KPCA of a
feature map Φ keeps the top ℓ eigenvectors V_ℓ of ΦᵀΦ/n; its rank-ℓ Gram matrix is
K̂_ℓ = Φ V_ℓ V_ℓᵀ Φᵀ. The headline, for every sampler family alike, is the in-sample error

    kpca_error_in = (1/n) ‖K − K̂_ℓ‖_*    (nuclear norm, training set),

which no rank-ℓ approximation can push below the exact (1/n) Σ_{j>ℓ} s_j (Ky Fan). For a
Nyström-type map K − K̂_ℓ ≽ 0, so the norm is the trace (1/n)[tr K − Σ_{j≤ℓ} μ_j], the
RKHS reconstruction error, from the training moments ΦᵀΦ (one streamed pass). Random
features are not below K: their norm takes the dense kernel and one eigendecomposition per
ℓ, so it is computed when n ≤ ``max_n`` (a row note says when it is not). Nyström maps
also get the held-out error mean_x k(x, x) − ‖P_ℓ z(x)‖²; random features the
reconstruction errors in their own feature space (``kpca_feature_error_in/out``). A map
with fewer than ℓ features is scored with all of them.
"""

from __future__ import annotations

import time
from dataclasses import replace

import numpy as np
import scipy.linalg

from kbench.datasets.base import TASK_TYPES
from kbench.exact.baseline import DEFAULT_EXACT_MAX_N
from kbench.hookspecs import hookimpl
from kbench.lowrank.features import features_of
from kbench.parameters import Param
from kbench.tasks.base import Headline, Task, relative_excess

DEFAULT_COMPONENTS = (1, 2, 5, 10, 20, 50)


class KPCATask(Task):
    """Kernel PCA: in-sample and held-out reconstruction errors for each number of components."""

    name = "kpca"
    accepts = TASK_TYPES  # needs no target
    # (1/n)(tr K − Σ μ_j) loses about 1e-12·tr K/n to cancellation; relative 1e-9 is round-off;
    # 1% of the reconstruction error is too small to matter
    headline = Headline("kpca_error_in", smaller_is_better=True, exact="kpca_error_in_exact",
                        atol=1e-12,
                        rtol=1e-9, equivalence=0.01)
    metrics = (Headline("kpca_error_out", smaller_is_better=True, exact="kpca_error_out_exact"),
               Headline("rel_excess_kpca_error_in", smaller_is_better=True))
    uses_lams = False
    parameters = {
        "components": Param(int, "the numbers of components ℓ whose errors are read", low=1,
                            many=True,
                            none=f"{', '.join(map(str, DEFAULT_COMPONENTS))}, those up to the "
                                 "rank"),
        "centered": Param(bool, "center the features (the exact columns are then left out)"),
        "max_n": Param(int, "the most training rows the errors are read on (a seeded subsample "
                            "above)", low=1),
        **Task.parameters,
    }

    def __init__(self, components: int | list[int] | None = None, centered: bool = False,
                 max_n: int = 3000,
                 exact_max_n: int = DEFAULT_EXACT_MAX_N) -> None:
        super().__init__(exact_max_n)
        #: whether the components were chosen (then each must fit the sweep's ranks), not
        #: the default
        self.components_given = components is not None
        components = DEFAULT_COMPONENTS if components is None else components
        # (each once: declared)
        components = [components] if np.isscalar(components) else list(components)
        self.components = sorted(int(c) for c in components)
        self.centered = centered
        # the exact baseline's eigenvalues are of the uncentered K: no exact columns
        if self.centered:
            self.headline, self.metrics = replace(self.headline, exact=None), ()
        self.max_n = max_n

    def check_ranks(self, ranks) -> None:
        """Every number of components chosen fits the sweep's largest rank (a map of rank p
        has at most p components; a smaller rank scores its smaller counts). The default
        counts go up to 50 whatever the ranks."""
        beyond = [c for c in self.components if c > max(ranks)] if self.components_given else []
        if beyond:
            raise ValueError(f"kpca: components {', '.join(map(str, beyond))} exceed the sweep's "
                             f"largest rank {max(ranks)}; pass components <= {max(ranks)} or a "
                             "larger rank.")

    def headline_component(self, rank: int) -> int:
        """The ℓ a leaderboard compares at rank p, one for every sampler: the largest number
        of components ≤ p (the smallest one when none is)."""
        fitting = [c for c in self.components if c <= rank]
        return fitting[-1] if fitting else self.components[0]

    def headline_setting(self, rank: int) -> str:
        return f"ℓ = {self.headline_component(rank)}"

    def headline_rows(self, rows):
        ell = rows["rank"].map(lambda rank: self.headline_component(int(rank)))
        return rows[rows["components"] == ell]

    def prepare_exact(self, exact, data, lams) -> None:
        if not self.centered:
            exact.kpca_errors(self.components)

    def evaluate(self, data, approx, kernel, lams=None) -> list[dict]:
        features = features_of(data, approx, kernel)
        moments = features.moments()
        n = moments.n
        exact = self.exact(data, kernel)  # cached; its own cost is time_exact_s
        start = time.perf_counter()
        gram, sum_squares = moments.gram, moments.sum_squares
        mean = moments.cross["ones"][:, 0] / n if self.centered else np.zeros(approx.rank)
        if self.centered:  # (Φ − 1mᵀ)ᵀ(Φ − 1mᵀ) = ΦᵀΦ − n·mmᵀ
            gram = gram - n * np.outer(mean, mean)
            sum_squares -= n * float(mean @ mean)
        mu, V = np.linalg.eigh(gram / n)
        mu, V = np.clip(mu[::-1], 0.0, None), V[:, ::-1]
        time_fit = moments.seconds + time.perf_counter() - start
        captured_out, norms_test, time_predict = self._held_out(features, mean, V)
        n_test = len(data.X_test)
        trace = float(kernel.diag(data.X_train).sum())
        in_sample = self._in_sample_errors(data, approx, kernel, features, mean, V, mu, exact,
                                           trace)
        diag_test = kernel.diag(data.X_test)
        exact_errors = (exact.kpca_errors(self.components)
                        if exact is not None and not self.centered else {})
        floor = np.finfo(float).eps * trace  # ε·tr K: round-off of an error
        in_sample = {ell: _above_round_off(error, floor) for ell, error in in_sample.items()}
        exact_errors = {ell: (_above_round_off(inside, floor), outside)
                        for ell, (inside, outside) in exact_errors.items()}
        cumulative_mu = np.cumsum(mu)
        cumulative_out = np.cumsum(captured_out) / n_test
        feature_trace = sum_squares / n
        feature_norms_test = norms_test / n_test
        rows = []
        for ell in self.components:
            used = min(ell, len(mu))  # a map with fewer features uses all of them
            row = {"lam": float("nan"), "components": ell, "centered": self.centered,
                   "kpca_error_in": in_sample.get(used, float("nan")),
                   "time_features_s": features.seconds, "time_fit_s": time_fit,
                   "time_predict_s": time_predict}
            if notes := self._notes(ell, len(mu), in_sample, n):
                row["note"] = "; ".join(notes)
            if exact is not None:
                row["time_exact_s"] = exact.seconds
            if approx.nystrom_type:
                if not self.centered:
                    row["kpca_error_out"] = float(diag_test.mean() - cumulative_out[used - 1])
            else:
                row["kpca_feature_error_in"] = feature_trace - float(cumulative_mu[used - 1])
                row["kpca_feature_error_out"] = feature_norms_test - float(cumulative_out[used - 1])
            if ell in exact_errors:
                row["kpca_error_in_exact"], row["kpca_error_out_exact"] = exact_errors[ell]
                row["rel_excess_kpca_error_in"] = relative_excess(row["kpca_error_in"],
                                                                  row["kpca_error_in_exact"])
            rows.append(row)
        return rows

    def _notes(self, ell: int, rank: int, in_sample: dict, n: int) -> list[str]:
        """What a row of ``ell`` components leaves out: components past the map's ``rank``, and
        the in-sample error when it is not computed (``in_sample`` empty: random features past
        max_n, or a centered KPCA without the exact baseline)."""
        notes = []
        if ell > rank:
            notes.append(f"{ell} components > rank {rank} of the feature map: all {rank} used")
        if not in_sample:
            notes.append("kpca_error_in of random features needs the dense kernel: n_train = "
                         f"{n} > max_n = {self.max_n}" if n > self.max_n else
                         "centered kpca_error_in needs the exact baseline")
        return notes

    def _held_out(self, features, mean, V) -> tuple[np.ndarray, float, float]:
        """Per component, the held-out squared norm its direction captures; the test rows'
        total squared feature norm; the seconds it took (one pass over the test blocks)."""
        captured_out, norms_test, seconds = np.zeros(V.shape[1]), 0.0, 0.0
        for _, block in features.test.blocks():
            start = time.perf_counter()
            if self.centered:
                block = block - mean
            projected = block @ V
            captured_out += np.einsum("ij,ij->j", projected, projected)
            norms_test += float(np.einsum("ij,ij->", block, block))
            seconds += time.perf_counter() - start
        return captured_out, norms_test, seconds

    def _in_sample_errors(self, data, approx, kernel, features, mean, V, mu, exact,
                          trace) -> dict[int, float]:
        """(1/n)‖K − K̂_ℓ‖_* for every ℓ of the components list (capped at the rank); ``trace``
        is tr K on the training rows."""
        n = data.n_train
        wanted = sorted({min(ell, len(mu)) for ell in self.components})
        if approx.nystrom_type:  # K − K̂_ℓ ≽ 0: the nuclear norm is the trace
            if self.centered and exact is None:
                return {}
            # tr of the (centered) K
            total = exact.trace - exact.ones_K_ones / n if self.centered else trace
            cumulative = np.cumsum(mu)
            return {ell: total / n - float(cumulative[ell - 1]) for ell in wanted}
        if n > self.max_n:
            return {}
        residual = kernel(data.X_train)
        if self.centered:
            residual -= residual.mean(axis=0)[None, :]
            residual -= residual.mean(axis=1)[:, None]
        # the components' values on the training rows (n ≤ max_n)
        scores = (features.train.array() - mean) @ V
        errors, done = {}, 0
        for ell in wanted:
            block = scores[:, done:ell]
            residual -= block @ block.T
            done = ell
            eigenvalues = scipy.linalg.eigvalsh(residual, check_finite=False)
            errors[ell] = float(np.abs(eigenvalues).sum()) / n
        return errors


def _above_round_off(error: float, floor: float) -> float:
    """A reconstruction error (a nuclear norm, ≥ 0) within its round-off ``floor`` of 0 as 0,
    so that neither it nor a relative excess over it reads digits the arithmetic has not
    got (a kernel of rank ≤ ℓ leaves only round-off: ±1e-16, an excess of −32)."""
    return 0.0 if abs(error) <= floor else error


@hookimpl
def kbench_register_tasks():
    return [KPCATask]
