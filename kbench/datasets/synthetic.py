"""Seeded synthetic point clouds from the papers kbench reproduces.

Each generator is a pure function of its arguments: the same seed gives the same array.
"""

from __future__ import annotations

import functools
import math
from dataclasses import replace

import numpy as np

from kbench.datasets.base import DatasetProvider, RawData
from kbench.hookspecs import hookimpl
from kbench.parameters import Param


def smile(n: int = 2000, seed: int = 0, n_scattered: int = 40, noise: float = 0.01) -> np.ndarray:
    """A face: two dense arcs (the mouth and a brow line) plus a few scattered points.

    Randomly pivoted Cholesky test set (Chen, Epperly, Tropp & Webber 2023): with a narrow
    bandwidth the arcs need few landmarks while every scattered point needs its own, so
    uniform sampling, which spends the budget in proportion to the mass, stays weak.
    """
    if n_scattered > n - 2:
        raise ValueError(f"smile: n_scattered must be at most n − 2 = {n - 2}, got {n_scattered}.")
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
    if n_outliers > n - 2:
        raise ValueError(f"outliers: n_outliers must be at most n − 2 = {n - 2}, got {n_outliers}.")
    rng = np.random.default_rng(seed)
    m = n - n_outliers
    t = np.sqrt(rng.uniform(0.0, 1.0, m)) * 3.0 * np.pi
    spiral = np.column_stack([t * np.cos(t), t * np.sin(t)]) / (3.0 * np.pi)
    spiral += noise * rng.standard_normal(spiral.shape)
    directions = rng.standard_normal((n_outliers, 2))
    directions /= np.linalg.norm(directions, axis=1, keepdims=True)
    outliers = directions * rng.uniform(3.0, 30.0, size=(n_outliers, 1))
    return np.vstack([spiral, outliers])


# ---------------------------------------------------------------------------------------
# The provider: generators by name, each returning RawData (targets, task type, f*)
# ---------------------------------------------------------------------------------------
#: points of Bach's periodic target evaluated together (its series has 2000 terms)
_BACH_BLOCK = 4096


def bach_periodic(n: int, seed: int, design: str = "uniform", a: float = 0.2, delta: float = 8.0,
                  noise: float = 0.5) -> RawData:
    """Bach (2013) App. D: x on [0, 1), f(x) = Σᵢ 2 i^(−δ) cos 2πix, y = f(x) + noise·ε.

    Designs: ``uniform`` (random), ``grid`` (i/n: circulant kernel matrix, constant
    leverage scores), ``beta`` (Beta(a, a), a < 1: dense near 0 and 1, sparse centre, so a
    few points carry large leverage: high coherence, Alaoui & Mahoney Table 1).
    Use it with ``periodic-sobolev`` (beta) or ``periodic-exp`` kernels.
    """
    rng = np.random.default_rng(seed)
    if design == "uniform":
        x = rng.uniform(0.0, 1.0, n)
    elif design == "grid":
        x = np.arange(n) / n
    else:  # beta
        x = rng.beta(a, a, n)
    i = np.arange(1, 2001)[:, None]  # tail of Σ 2i^(−δ) beyond 2000 terms < 1e-22 for δ = 8
    f = np.empty(n)
    for start in range(0, n, _BACH_BLOCK):  # 2000 × block terms at a time, not 2000 × n
        block = x[None, start : start + _BACH_BLOCK]
        f[start : start
          + _BACH_BLOCK] = (2.0 * i ** (-delta) * np.cos(2.0 * np.pi * i * block)).sum(axis=0)
    y = f + noise * rng.standard_normal(n)
    meta = {"kernel": "periodic-sobolev:beta=1", "design": design, "delta": delta, "noise": noise}
    return RawData(x[:, None], y, "regression", ["x"], meta, f=f, standardize=False)


def two_balls(n: int, seed: int, noise_features: int = 100) -> RawData:
    """Yang et al. (2012) §5: two classes uniform in 2-D balls of radius 0.5 at (±0.5, 0.5),
    plus ``noise_features`` U[0, 1] features; their kernel is Gaussian with σ = 6."""
    rng = np.random.default_rng(seed)
    y = np.repeat([0, 1], [n - n // 2, n // 2])
    radius = 0.5 * np.sqrt(rng.uniform(size=n))
    angle = rng.uniform(0.0, 2.0 * np.pi, n)
    centre = np.where(y == 0, -0.5, 0.5)
    balls = np.column_stack([centre + radius * np.cos(angle), 0.5 + radius * np.sin(angle)])
    X = np.hstack([balls, rng.uniform(size=(n, noise_features))])
    meta = {"kernel": "gaussian:sigma=6"}
    return RawData(X, y, "binary", None, meta, standardize=False)


def _smooth_target(X, rng, noise=0.1):
    f = np.sin(2.0 * X[:, 0]) + np.cos(3.0 * X[:, 1])
    return f + noise * rng.standard_normal(len(f)), f


def spiral(n: int = 2000, seed: int = 0, noise: float = 0.02) -> np.ndarray:
    """A 2-D spiral with no outliers."""
    return spiral_with_outliers(n, seed, n_outliers=0, noise=noise)


def _geometry(points_fn, kernel):
    def make(n, seed, **params):
        X = points_fn(n, seed=seed, **params)
        y, f = _smooth_target(X, np.random.default_rng(seed + 1))
        return RawData(X, y, "regression", ["x1", "x2"], {"kernel": kernel}, f=f, standardize=False)

    functools.update_wrapper(make, points_fn, assigned=("__annotations__",))  # its parameters
    make.__doc__ = (points_fn.__doc__ or "").split("\n")[0] + (
        " Target: sin 2x₁ + cos 3x₂ + 0.1·noise (f* known).")
    return make


def gaussian_blobs(n: int, seed: int, n_classes: int = 5, ratio: float = 0.3, d: int = 5,
                   spread: float = 0.3) -> RawData:
    """Imbalanced Gaussian clusters (sizes ∝ ratio^k): small far clusters carry high
    leverage, the setting where leverage-score sampling beats uniform."""
    owner = "gaussian-blobs"
    if n_classes > n // 2:
        raise ValueError(f"{owner}: n_classes must be between 2 and n/2 = {n // 2}, got "
                         f"{n_classes}.")
    rng = np.random.default_rng(seed)
    weights = ratio ** np.arange(n_classes)
    sizes = np.maximum(1, np.floor(n * weights / weights.sum()).astype(int))
    sizes[0] += n - sizes.sum()
    if sizes[-1] < 2:  # a class of one row cannot be split (nor be learnt)
        needed = math.ceil(2 * weights.sum() / weights[-1])
        raise ValueError(f"{owner}: n={n} leaves the smallest of its {n_classes} classes (sizes ∝ "
                         f"ratio^k, ratio {ratio:g}) one row; give n ≥ {needed}, fewer n_classes, "
                         "or a ratio closer to 1.")
    centres = rng.uniform(-3.0, 3.0, size=(n_classes, d))
    y = np.repeat(np.arange(n_classes), sizes)
    X = centres[y] + spread * rng.standard_normal((n, d))
    return RawData(X, y, "multiclass" if n_classes > 2 else "binary", None,
                   {"kernel": "gaussian:sigma=1", "class_sizes": sizes.tolist()}, standardize=False)


def known_spectrum(n: int, seed: int, std: float = 1.0, sigma: float = 1.0,
                   noise: float = 0.1) -> RawData:
    """x ~ N(0, std²) in 1-D with the Gaussian kernel of width σ: the integral operator has
    eigenvalues √(2a/A)·Bᵏ (Rasmussen & Williams §4.3.1), so the population uncentered
    KPCA error with ℓ components is √(2a/A)·B^ℓ/(1 − B) (in meta)."""
    rng = np.random.default_rng(seed)
    x = std * rng.standard_normal(n)
    a, b = 1.0 / (4.0 * std**2), 1.0 / (2.0 * sigma**2)
    c = math.sqrt(a * a + 2.0 * a * b)
    A, B = a + b + c, b / (a + b + c)
    if not B < 1.0:  # σ/std below ~1e-16: the eigenvalues Bᵏ do not decay in float64
        raise ValueError(f"known-spectrum: sigma = {sigma:g} against std = {std:g} gives "
                         "eigenvalues that do not decay in float64 (B = 1); raise sigma / std "
                         "above 1e-15.")
    lead = math.sqrt(2.0 * a / A)
    f = np.sin(2.0 * x)
    meta = {
        "kernel": f"gaussian:sigma={sigma}",
        "population_eigenvalues": [lead * B**k for k in range(50)],
        "population_kpca_error": {ell: lead * B**ell / (1.0 - B) for ell in range(51)},
    }
    return RawData(x[:, None], f + noise * rng.standard_normal(n), "regression", ["x"], meta,
                   f=f, standardize=False)


def _sklearn_generator(kind):
    def make(n, seed, noise: float | None = None, **params):
        from sklearn import datasets as _sk
        if kind == "friedman1":
            X, y = _sk.make_friedman1(n, noise=1.0 if noise is None else noise, random_state=seed,
                                      **params)
            return RawData(X, y, "regression", None, {"generator": "sklearn.make_friedman1"})
        maker = {"moons": _sk.make_moons, "circles": _sk.make_circles}[kind]
        X, y = maker(n, noise=0.1 if noise is None else noise, random_state=seed, **params)
        return RawData(X, y, "binary", None, {"generator": f"sklearn.make_{kind}"})

    make.__doc__ = f"scikit-learn's make_{kind} generator."
    return make


GENERATORS = {
    "bach-periodic": bach_periodic,
    "two-balls": two_balls,
    "smile": _geometry(smile, "gaussian:sigma=0.2"),
    "spiral": _geometry(spiral, "gaussian:sigma=0.1"),
    "outliers": _geometry(spiral_with_outliers, "gaussian:sigma=0.1"),
    "gaussian-blobs": gaussian_blobs,
    "known-spectrum": known_spectrum,
    "friedman1": _sklearn_generator("friedman1"),
    "moons": _sklearn_generator("moons"),
    "circles": _sklearn_generator("circles"),
}


#: each generator's parameters
_NOISE = Param(float, "the standard deviation of the noise", low=0)
_SPECTRUM_RANGE = "the closed form's squares stay within float64"
PARAMETERS = {
    "bach-periodic": {
        "design": Param(str, "the design of x: random, the grid i/n, or Beta(a, a)",
                        choices=("uniform", "grid", "beta")),
        "a": Param(float, "the parameter of the beta design (a < 1: high coherence)", low=0,
                   low_open=True),
        "delta": Param(float, "the decay δ of the target's coefficients 2i^(−δ)", low=0,
                       low_open=True),
        "noise": _NOISE},
    "two-balls": {"noise_features": Param(int, "U[0, 1] features added to the two balls' 2",
                                          low=0)},
    "smile": {"n_scattered": Param(int, "the scattered points (at most n − 2)", low=0),
              "noise": _NOISE},
    "spiral": {"noise": _NOISE},
    "outliers": {"n_outliers": Param(int, "the far outliers (at most n − 2)", low=0),
                 "noise": _NOISE},
    "gaussian-blobs": {
        "n_classes": Param(int, "the clusters, one class each (at most n/2)", low=2),
        "ratio": Param(float, "the ratio of consecutive cluster sizes", low=0, low_open=True),
        "d": Param(int, "the dimension", low=1),
        "spread": Param(float, "the standard deviation of a cluster", low=0)},
    "known-spectrum": {
        "std": Param(float, "the standard deviation of x", low=1e-50, high=1e50,
                     why=_SPECTRUM_RANGE),
        "sigma": Param(float, "the Gaussian kernel's σ the spectrum is of", low=1e-50, high=1e50,
                       why=_SPECTRUM_RANGE),
        "noise": _NOISE},
    "friedman1": {"noise": replace(_NOISE, none="1.0")},
    "moons": {"noise": replace(_NOISE, none="0.1")},
    "circles": {"noise": replace(_NOISE, none="0.1")},
}

TASK_TYPES_BY_GENERATOR = {
    "bach-periodic": "regression", "two-balls": "binary", "smile": "regression",
    "spiral": "regression", "outliers": "regression", "known-spectrum": "regression",
    "friedman1": "regression", "moons": "binary", "circles": "binary",
}


class SyntheticProvider(DatasetProvider):
    """Seeded synthetic generators from the papers (and scikit-learn's)."""

    name = "synthetic"
    default_n = 1000

    def names(self):
        return sorted(GENERATORS)

    def task_type(self, name, **params):
        if name == "gaussian-blobs":
            return "binary" if params.get("n_classes", 5) == 2 else "multiclass"
        return TASK_TYPES_BY_GENERATOR[name]

    def parameters(self, name):
        return dict(PARAMETERS[name])

    def load(self, name, n, seed, **params):
        return GENERATORS[name](self.default_n if n is None else n, seed, **params)


@hookimpl
def kbench_register_datasets():
    return [SyntheticProvider]
