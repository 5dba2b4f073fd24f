"""Data-driven length scales: the median heuristic (``sigma="median"``) and a validated
choice (``sigma="cv"``).

``sigma="median"`` is the median pairwise distance of (a subsample of) the training points,
which on one-hot and standardized columns can be far from a useful bandwidth. ``sigma="cv"``
picks σ on the grid median·2^k, k = −3…3, by the validation error of exact kernel ridge
regression (K + mλI)α = y, solved as the exact baseline solves it (:mod:`kbench.kernels.ridge`),
fitted on a seeded subsample of at most 1 000 training points,
the best λ of 10^-6…10^0 for each σ. The error is measured on (a seeded subsample of at
most 1 000 of) the split's validation rows when they are given, never on test rows; without
them on the last fifth of the training subsample. A classification target is regressed on
its one-hot classes (least squares, as the ``classification`` task's default learner).
"""

from __future__ import annotations

import numpy as np
from scipy.spatial.distance import pdist

from kbench.kernels.ridge import eigendecomposition, ridge_coefficients

#: points used by the median heuristic and by the validated choice
SUBSAMPLE = 1000
#: the validated choice's grid: multiples of the median distance, ridges
CV_FACTORS = 2.0 ** np.arange(-3, 4)
CV_LAMS = 10.0 ** np.arange(-6, 1)


def median_distance(X: np.ndarray, metric: str, owner: str) -> float:
    """The median pairwise distance of a seeded subsample of ``X``."""
    idx = np.random.default_rng(0).permutation(len(X))[:SUBSAMPLE]
    median = float(np.median(pdist(X[idx], metric))) if len(idx) > 1 else 0.0
    distinct = len(np.unique(X[idx], axis=0)) if not median > 0 else len(idx)
    # most pairs of rows are the same point
    if not median > 0 and distinct > 1 and np.isfinite(median):
        raise ValueError(f"{owner}: the median distance between the {len(idx)} rows is 0 (more "
                         f"than half the pairs of rows are identical: {distinct} distinct rows); "
                         "pass a numeric sigma, or remove the repeated rows.")
    if not median > 0:
        raise ValueError(f"{owner} needs at least two distinct points in X "
                         f"(got n_samples = {len(X)}); pass a numeric sigma.")
    if not np.isfinite(median):
        raise FloatingPointError(f"{owner} overflowed (distances between inputs up to |x| = "
                                 f"{np.abs(X).max():.3g} exceed float64); rescale the features.")
    return median


def targets(y: np.ndarray, classes: np.ndarray | None = None) -> np.ndarray:
    """The columns to regress on: a float target as is, class labels one-hot over
    ``classes`` (the training target's)."""
    y = np.asarray(y)
    if classes is None:
        return y[:, None].astype(float)
    return (y[:, None] == classes[None, :]).astype(float)


def validation_errors(kernel_at, X: np.ndarray, y: np.ndarray, sigmas: np.ndarray,
                      validation: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray:
    """Validation mean squared errors of exact KRR, shape (len(sigmas), len(CV_LAMS)), on the
    ``validation`` rows (X_val, y_val) or, without them, on a held-out fifth of the training
    subsample. ``kernel_at(sigma)`` is the kernel with that length scale."""
    rng = np.random.default_rng(0)
    idx = rng.permutation(len(X))[:SUBSAMPLE]
    classes = None if np.issubdtype(np.asarray(y).dtype, np.floating) else np.unique(y)
    X, Y = X[idx], targets(y, classes)[idx]
    if validation is None:
        m = len(idx) - max(1, len(idx) // 5)
        X_fit, Y_fit, X_held, Y_held = X[:m], Y[:m], X[m:], Y[m:]
    else:
        X_val, y_val = validation
        held = rng.permutation(len(X_val))[:SUBSAMPLE]
        X_fit, Y_fit, X_held, Y_held = X, Y, X_val[held], targets(y_val, classes)[held]
    errors = np.empty((len(sigmas), len(CV_LAMS)))
    for i, sigma in enumerate(sigmas):  # the exact baseline's solver (kbench.kernels.ridge)
        kernel = kernel_at(sigma)
        s, U = eigendecomposition(kernel(X_fit))
        alpha = U @ ridge_coefficients(s, U, Y_fit, CV_LAMS)  # m×(L·c)
        predictions = (kernel(X_held, X_fit) @ alpha).reshape(len(X_held), len(CV_LAMS), -1)
        errors[i] = np.mean((predictions - Y_held[:, None, :]) ** 2, axis=(0, 2))
    return errors


def cv_sigma(kernel_at, X: np.ndarray, y: np.ndarray | None, metric: str, owner: str,
             validation: tuple[np.ndarray, np.ndarray] | None = None) -> float:
    """The σ of the grid with the smallest validation error (module docstring)."""
    if y is None:
        raise ValueError(f"{owner} picks σ by the validation error of kernel ridge regression on "
                         "the target, and it was fitted without one (unlabeled data, or a "
                         "sampler's fit, which sees X alone); fit the kernel first, "
                         "kernel.fit(data.X_train, data.y_train, validation=(data.X_val, "
                         "data.y_val)), or pass sigma='median' or a number.")
    if validation is not None and len(validation[0]) < 2:
        validation = None  # a split without validation rows (val_size=0)
    sigmas = median_distance(X, metric, owner) * CV_FACTORS
    errors = validation_errors(kernel_at, X, y, sigmas, validation)
    if not np.isfinite(errors).any():
        raise FloatingPointError(f"{owner} found no finite validation error.")
    return float(sigmas[np.unravel_index(np.nanargmin(errors), errors.shape)[0]])
