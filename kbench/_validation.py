"""Input checks shared by kernels, samplers and feature maps.

Every check raises a ValueError that names the argument and says how to fix it.
"""

from __future__ import annotations

import numbers

import numpy as np


def check_features(X, name: str = "X", n_features: int | None = None) -> np.ndarray:
    """Return ``X`` as a C-contiguous float64 (n, d) array, or raise a clear ValueError."""
    if np.iscomplexobj(X):
        raise ValueError(
            f"{name} is complex; kernels take real features: pass X.real, or the real and "
            "imaginary parts as separate columns."
        )
    try:
        arr = np.asarray(X, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(
            f"{name} must be a numeric array of shape (n_samples, n_features); "
            f"converting it to float64 failed: {exc}"
        ) from None
    if arr.ndim != 2:
        hint = " Use X.reshape(-1, 1) for a single feature." if arr.ndim == 1 else ""
        raise ValueError(
            f"{name} must be 2-D (n_samples, n_features), got an array of shape {arr.shape}.{hint}"
        )
    if arr.shape[0] == 0 or arr.shape[1] == 0:
        raise ValueError(f"{name} is empty (shape {arr.shape}); pass at least one row and column.")
    if n_features is not None and arr.shape[1] != n_features:
        raise ValueError(
            f"{name} has {arr.shape[1]} features but {n_features} were expected (the number of "
            f"columns of the data the approximation was fitted on); pass data with the same columns."
        )
    if not np.isfinite(arr).all():
        bad = ~np.isfinite(arr)
        rows = np.flatnonzero(bad.any(axis=1))
        cols = np.flatnonzero(bad.any(axis=0))
        raise ValueError(
            f"{name} contains NaN or infinite values ({int(bad.sum())} entries, rows "
            f"{rows[:5].tolist()}{'...' if len(rows) > 5 else ''}, columns "
            f"{cols[:5].tolist()}{'...' if len(cols) > 5 else ''}); drop or impute them first."
        )
    return np.ascontiguousarray(arr)


def check_rank(rank) -> int:
    """A rank is an integer >= 1."""
    if isinstance(rank, bool) or not isinstance(rank, numbers.Integral) or rank < 1:
        raise ValueError(f"rank must be an integer >= 1 (the number of features), got {rank!r}.")
    return int(rank)


def check_lam(lam, owner: str) -> float:
    """λ is the per-sample ridge (docs/conventions.md): a finite float > 0."""
    if lam is None:
        raise ValueError(
            f"{owner} needs lam, the per-sample ridge λ > 0 (the ridge added to K is n·λ); "
            "pass lam=1e-3, for example."
        )
    if isinstance(lam, bool) or not isinstance(lam, numbers.Real) or not np.isfinite(lam) or lam <= 0:
        raise ValueError(f"lam must be a finite number > 0 (the per-sample ridge λ), got {lam!r}.")
    return float(lam)


def check_positive(value, name: str, owner: str, integer: bool = False) -> float | int:
    """A strictly positive (optionally integer) parameter."""
    kind = numbers.Integral if integer else numbers.Real
    if isinstance(value, bool) or not isinstance(value, kind) or not np.isfinite(value) or value <= 0:
        what = "an integer" if integer else "a number"
        raise ValueError(f"{owner}: {name} must be {what} > 0, got {value!r}.")
    return int(value) if integer else float(value)


def check_in_open_unit_interval(value, name: str, owner: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not 0 < value < 1:
        raise ValueError(f"{owner}: {name} must lie strictly between 0 and 1, got {value!r}.")
    return float(value)


def check_nonnegative(value, name: str, owner: str, integer: bool = False) -> float | int:
    """A parameter >= 0 (optionally integer)."""
    kind = numbers.Integral if integer else numbers.Real
    if isinstance(value, bool) or not isinstance(value, kind) or not np.isfinite(value) or value < 0:
        what = "an integer" if integer else "a number"
        raise ValueError(f"{owner}: {name} must be {what} >= 0, got {value!r}.")
    return int(value) if integer else float(value)
