"""The regime of a dataset: the few numbers that predict which low-rank approximation wins.

At the λ a task would use, the ridge leverage scores ℓᵢ(λ) = [K(K + nλI)⁻¹]ᵢᵢ give the
effective dimension d_eff = Σᵢ ℓᵢ (Bach 2013 §3: Nyström with uniform columns needs a rank
of order d_mof, leverage-score sampling of order d_eff), d_mof = n·maxᵢ ℓᵢ (Alaoui & Mahoney
2015) and the coherence d_mof/d_eff: 1 when every point is as influential as every other,
large when a few points carry the kernel matrix.

They are estimated the way the published sweeps estimate them above the dense limit: from a
rank-r randomly pivoted Cholesky approximation L = FFᵀ ≼ K (Chen, Epperly, Tropp & Webber
2023), in time O(n r²) and memory O(n r). Since A ↦ A(A + c)⁻¹ is operator monotone,
every ℓᵢ(L) ≤ ℓᵢ(K): d_eff(L) and d_mof(L) are lower bounds; and since its derivative in
the direction E = K − L ≽ 0 is at most tr(E)/c, d_eff(K) ≤ d_eff(L) + tr(K − L)/(nλ). The
rank is doubled while that interval is wider than ``INTERVAL`` and the work stays bounded.
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass, replace

import numpy as np

from kbench.datasets.base import Dataset
from kbench.kernels.base import Kernel
from kbench.lowrank.cholesky import rp_cholesky_of
from kbench.lowrank.linalg import factor_diagnostics
from kbench.tasks.base import Task
from kbench.tasks.selection import best_index

#: the first rank of the estimate (doubled while its interval is wide: INTERVAL)
FIRST_RANK = 200
#: the rank is doubled while d_eff's upper bound exceeds its estimate by this factor …
INTERVAL = 1.25
#: … and n·r² stays under this many multiply-adds (about 20 s here at 10⁶ rows, r = 400)
MAX_WORK = 2e11


@dataclass(frozen=True)
class Regime:
    """Where a dataset sits, along a λ path: n, d, the task's validation criterion with the
    rank-r approximation at each λ, and there d_eff (an interval), d_mof and the coherence."""

    n_train: int
    n_features: int
    metric: str  # the task's validation criterion (what λ is chosen on)
    smaller_is_better: bool
    lams: tuple[float, ...]
    scores: tuple[float, ...]  # the criterion at each λ, with the rank-r approximation
    d_eff: tuple[float, ...]  # d_eff(L), a lower bound of d_eff(K)
    d_eff_upper: tuple[float, ...]  # d_eff(L) + tr(K − L)/(nλ)
    d_mof: tuple[float, ...]  # n·max ℓᵢ(L), a lower bound of d_mof(K)
    method: str
    seconds: float
    # the trivial predictor's criterion (the training mean's, the prior's)
    trivial: float = float("nan")

    def best(self, path=None) -> int:
        """The index of the λ where the validation criterion is best, among the λ of ``path``
        (all by default): a published dataset's regime is read at the λ of its sweep's path
        that its exact kernel chose on validation data."""
        lams = np.asarray(self.lams)
        allowed = np.ones(len(lams), bool) if path is None else np.isclose(
            lams[:, None], np.asarray(path, dtype=float)[None, :], rtol=1e-9, atol=0).any(axis=1)
        scores = np.where(allowed & np.isfinite(self.scores), self.scores, np.nan)
        if np.isnan(scores).all():
            asked = "the path" if path is None else f"the path {list(path)}"
            raise ValueError(f"no λ of {asked} has a finite {self.metric} on this data (λ tried: "
                             f"{list(self.lams)}); the approximation's fits failed numerically.")
        # ties to the larger λ, as the sweeps choose
        return best_index(scores, self.smaller_is_better)

    def at(self, path=None) -> dict[str, float]:
        """λ, d_eff (and its upper bound), d_mof and the coherence at :meth:`best`."""
        i = self.best(path)
        return {"lam": self.lams[i], "d_eff": self.d_eff[i], "d_eff_upper": self.d_eff_upper[i],
                "d_mof": self.d_mof[i], "coherence": self.d_mof[i] / self.d_eff[i]}

    def coordinates(self, path=None) -> np.ndarray:
        """log₁₀ of (n, d_eff, d_mof/d_eff) at :meth:`best`: where datasets are compared."""
        return coordinates(self.n_train, self.at(path))

    @property
    def uncertain(self) -> bool:
        """Whether d_eff's interval at the best λ stayed wider than ``INTERVAL`` (the rank
        could not be doubled further within ``MAX_WORK``)."""
        at = self.at()
        return at["d_eff_upper"] > INTERVAL * at["d_eff"]

    def moot(self, validation, rank: int) -> str | None:
        """Why no approximation advice is meaningful, or None: at ``rank`` ≥ n_train a Nyström
        map of every training row is the exact kernel; a target the approximation predicts no
        better than the trivial predictor on the validation rows (its skill at the best λ below
        the task's margin) is uninformative, and the boards leave such data out."""
        if rank >= self.n_train:
            return (f"rank {rank} ≥ your {self.n_train} training rows: a Nyström map of every "
                    "training row is the exact kernel, cheap at this size; use it (no "
                    "approximation is needed).")
        value = self.scores[self.best()]
        skill = float(validation.skill(value, self.trivial))
        if skill < validation.margin:
            return (f"your target looks uninformative: at the best λ the validation {self.metric} "
                    f"is {value:.3g}, the trivial predictor's {self.trivial:.3g} (skill "
                    f"{skill:.2g} < {validation.margin:g}); the published boards leave such data "
                    "out, so no approximation advice is meaningful.")
        return None

    def as_dict(self) -> dict:
        return {**asdict(self), "at_best": self.at()}


def estimate_regime(data: Dataset, kernel: Kernel, task: Task, lams, seed: int = 0,
                    rank: int = FIRST_RANK, max_work: float = MAX_WORK) -> Regime:
    """The regime of ``data`` under a fitted ``kernel`` along the path ``lams``: the task's
    validation criterion at each λ is the rank-r approximation's (published regimes are read
    at the λ the exact kernel chose, which the approximation's follows once r ≫ d_eff). The rank is
    doubled while d_eff's interval at the best λ is wider than ``INTERVAL`` and n·r² ≤
    ``max_work``."""
    start = time.perf_counter()
    n = data.X_train.shape[0]
    lams = np.asarray(sorted(lams), dtype=float)
    chosen_on = task.validation.metric  # the validation criterion, as the sweeps choose λ
    rank = min(rank, n)
    while True:
        approx = rp_cholesky_of(data.X_train, kernel, rank, seed)
        F = np.asarray(approx.train_features)
        rows = task.evaluate(data, approx, kernel, lams=lams)
        scores = np.array([row[chosen_on] for row in rows], dtype=float)
        found = factor_diagnostics(F, lams)
        d_eff, d_mof = found["d_eff"], found["d_mof"]
        # tr(K − L), from the factorisation
        upper = d_eff + approx.info["trace_residual"] / (n * lams)
        regime = Regime(n, data.X_train.shape[1], chosen_on, task.validation.smaller_is_better,
                        tuple(lams.tolist()), tuple(scores.tolist()), tuple(d_eff.tolist()),
                        tuple(upper.tolist()),
                        tuple(d_mof.tolist()), f"estimate: rank-{F.shape[1]} Nyström (rp-cholesky)",
                        0.0,
                        float(rows[0].get(task.validation.trivial, np.nan)))
        at = regime.at()
        doubled = min(2 * rank, n)
        if (at["d_eff_upper"] <= INTERVAL * at["d_eff"] or doubled == rank
                or n * doubled**2 > max_work):
            return replace(regime, seconds=time.perf_counter() - start)
        del approx, F, rows  # the n×r factor, before the doubled rank's fit
        rank = doubled


def coordinates(n_train: float, point) -> np.ndarray:
    """log₁₀ of (n, d_eff, d_mof/d_eff) of a regime ``point`` (a mapping with d_eff, coherence)."""
    return np.log10([n_train, point["d_eff"], point["coherence"]])


def distance(a: np.ndarray, b: np.ndarray) -> float:
    """Euclidean distance of two regimes' :meth:`Regime.coordinates` (log₁₀ units)."""
    return float(math.dist(a, b))
