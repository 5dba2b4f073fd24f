"""Seeded synthetic point clouds from the papers kbench reproduces.

Each generator is a pure function of its arguments: the same seed gives the same array.
"""

from __future__ import annotations

import numpy as np


def smile(n: int = 2000, seed: int = 0, n_scattered: int = 40, noise: float = 0.01) -> np.ndarray:
    """A face: two dense arcs (the mouth and a brow line) plus a few scattered points.

    Randomly pivoted Cholesky test set (Chen, Epperly, Tropp & Webber 2023): with a narrow
    bandwidth the arcs need few landmarks while every scattered point needs its own, so
    uniform sampling, which spends the budget in proportion to the mass, stays weak.
    """
    rng = np.random.default_rng(seed)
    n_arcs = n - n_scattered
    mouth = n_arcs // 2
    theta = np.concatenate([
        rng.uniform(1.15 * np.pi, 1.85 * np.pi, mouth),  # the smile
        rng.uniform(0.2 * np.pi, 0.8 * np.pi, n_arcs - mouth),  # the brow, upside down
    ])
    centre = np.where(np.arange(n_arcs) < mouth, 0.0, -0.2)[:, None]
    radius = np.where(np.arange(n_arcs) < mouth, 1.0, 0.6)[:, None]
    arcs = np.hstack([np.cos(theta)[:, None], np.sin(theta)[:, None]]) * radius
    arcs[:, 1:] += centre
    arcs += noise * rng.standard_normal(arcs.shape)
    scattered = rng.uniform(-1.5, 1.5, size=(n_scattered, 2))
    return np.vstack([arcs, scattered])


def spiral_with_outliers(n: int = 2000, seed: int = 0, n_outliers: int = 200,
                         noise: float = 0.02) -> np.ndarray:
    """A 2-D spiral plus far outliers: greedy pivoting spends its budget on the outliers.

    Every outlier keeps a residual diagonal of k(x, x) until it is picked, larger than the
    residual anywhere on the spiral, so greedy pivoted Cholesky picks outliers one by one
    while randomly pivoted Cholesky samples in proportion to the residual mass.
    """
    rng = np.random.default_rng(seed)
    m = n - n_outliers
    t = np.sqrt(rng.uniform(0.0, 1.0, m)) * 3.0 * np.pi
    spiral = np.column_stack([t * np.cos(t), t * np.sin(t)]) / (3.0 * np.pi)
    spiral += noise * rng.standard_normal(spiral.shape)
    directions = rng.standard_normal((n_outliers, 2))
    directions /= np.linalg.norm(directions, axis=1, keepdims=True)
    outliers = directions * rng.uniform(3.0, 30.0, size=(n_outliers, 1))
    return np.vstack([spiral, outliers])
