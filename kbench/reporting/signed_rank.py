"""The Bayesian signed-rank test (Benavoli et al. 2017, "Time for a change", JMLR 18(77),
Sec. 5), as baycomp samples it, with its Monte Carlo loop as two matrix products.

baycomp's ``SignedRankTest.sample`` draws Dirichlet weights w ~ Dir(prior, 1, …, 1) over the
differences with a pseudo-observation at 0, and for each draw sums wᵢwⱼ over the pairs whose
Walsh average (dᵢ + dⱼ)/2 lies below −rope (left) and above rope (right), one draw at a time
in Python (about 80 ms for 20 000 draws). The same draws, from the same seed, summed as
(W·B)∘W give the same posterior sample to round-off; baycomp's ``Posterior`` reads the
probabilities from it, so the decision rule stays baycomp's.
"""

from __future__ import annotations

import numpy as np
from baycomp.multiple import Posterior


def _heaviside(values: np.ndarray, threshold: float) -> np.ndarray:
    """1 above ``threshold``, ½ at it, 0 below (baycomp's step)."""
    return (values > threshold).astype(float) + 0.5 * (values == threshold).astype(float)


def signed_rank_probabilities(d: np.ndarray, rope: float, prior: float, samples: int,
                              seed: int) -> tuple[float, ...]:
    """baycomp's ``SignedRankTest.probs(zeros, d, rope, prior=prior, nsamples=samples,
    random_state=seed)``: (P(d < −rope), P(|d| ≤ rope), P(d > rope)) with a ROPE, else
    (P(d < 0), P(d > 0))."""
    differences = np.concatenate(([0.0], np.asarray(d, dtype=float)))
    walsh = differences[:, None] + differences[None, :]
    weights = np.ones(len(differences))
    weights[0] = prior
    draws = np.random.RandomState(seed).dirichlet(weights, samples)
    # Σᵢⱼ wᵢwⱼ step_ij per draw
    mass = lambda step: np.einsum("si,si->s", draws @ step, draws)  # noqa: E731
    right = mass(_heaviside(walsh, 2 * rope))
    left = mass(_heaviside(-walsh, 2 * rope)) if rope > 0 else 1.0 - right
    sample = np.column_stack([left, 1.0 - left - right if rope > 0 else np.zeros_like(left), right])
    return Posterior(sample).probs(rope > 0)
