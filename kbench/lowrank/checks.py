"""The sampler contract, checked on every fit before its result is scored.

A sampler's ``fit`` returns a :class:`~kbench.lowrank.maps.LowRank` whose ``transform`` gives
(n, rank) finite features with 1 ≤ rank ≤ the requested rank. A Nyström-type map
approximates K from below (0 ≼ ZZᵀ ≼ K), so every diagonal entry of K − ZZᵀ is ≥ 0:
k(x, x) − ‖z(x)‖² ≥ 0 on the training rows and on held-out rows alike. A map that breaks
this (features scaled up, say) would score a negative trace error and top a leaderboard;
the runner makes its cells ``error`` instead, naming the contract point.
"""

from __future__ import annotations

import numbers

import numpy as np

from kbench.errors import ContractViolation
from kbench.lowrank.maps import LowRank

#: k(x, x) − ‖z(x)‖² may dip below 0 by this fraction of max k(x, x) (float64 rounding
#: of the pseudo-inverse root is ~1e-12 relative; a scaled map breaks it by O(1))
DIAGONAL_TOLERANCE = 1e-6


def check_lowrank(approx, requested_rank: int) -> None:
    """The object a sampler returned is a LowRank of a rank within the budget."""
    if not isinstance(approx, LowRank):
        raise ContractViolation("contract: fit must return a kbench LowRank, got "
                                f"{type(approx).__name__}")
    if not 1 <= approx.rank <= requested_rank:
        raise ContractViolation(
            f"contract: rank must lie in [1, {requested_rank}] (the requested rank), got "
            f"{approx.rank}")


def check_features(approx: LowRank, features: np.ndarray, n_rows: int, where: str,
                   row_norms: np.ndarray | None = None) -> np.ndarray:
    """transform gave an (n_rows, rank) array of finite values. Returns the squared row norms
    ‖z(x)‖² (``row_norms`` if the caller has them): a row norm is finite exactly when its
    row is, so one pass serves this check and :func:`check_below_kernel`."""
    if not isinstance(features, np.ndarray) or features.shape != (n_rows, approx.rank):
        shape = getattr(features, "shape", type(features).__name__)
        raise ContractViolation(
            f"contract: transform of the {where} rows must have shape ({n_rows}, {approx.rank}) "
            f"(rows, rank), got {shape}")
    if row_norms is None:
        with np.errstate(over="ignore", invalid="ignore"):
            row_norms = np.einsum("ij,ij->i", features, features)
    if not np.all(np.isfinite(row_norms)):
        bad = int(np.sum(~np.isfinite(features)))
        if bad:
            raise ContractViolation(f"contract: transform of the {where} rows has {bad} NaN or "
                                    "infinite values")
        # finite features whose squares overflow: far above any kernel diagonal
        raise ContractViolation(f"contract: transform of the {where} rows has features beyond "
                                "1e154 in magnitude (their squared norms overflow)")
    return row_norms


def check_below_kernel(row_norms: np.ndarray, kernel_diagonal: np.ndarray, where: str,
                       first_row: int = 0) -> None:
    """Nyström-type maps: k(x, x) − ‖z(x)‖² ≥ −tol·max k(x, x) for every row (diag(K − ZZᵀ) ≥ 0),
    from the squared row norms ``row_norms`` (:func:`check_features`) of a block of rows
    starting at row ``first_row``."""
    excess = row_norms - kernel_diagonal
    tolerance = DIAGONAL_TOLERANCE * float(np.max(np.abs(kernel_diagonal)))
    worst = int(np.argmax(excess))
    if excess[worst] > tolerance:
        raise ContractViolation(
            f"contract: a Nyström-type map must satisfy ZZᵀ ≼ K, but on the {where} rows diag(K − "
            f"ZZᵀ) has {int(np.sum(excess > tolerance))} negative entries (row "
            f"{first_row + worst}: k(x, x) = {kernel_diagonal[worst]:.6g} < ‖z(x)‖² = "
            f"{kernel_diagonal[worst] + excess[worst]:.6g}); relative trace error "
            f"{float(-excess.sum() / kernel_diagonal.sum()):.3g}")


#: info entries kbench itself writes (Sampler.fit); they do not become sampler columns
MANAGED_INFO = ("sampler", "params", "rank_requested", "kernel_evals", "warnings", "prebuilt")
_SCALARS = (bool, int, float, str, np.integer, np.floating, np.bool_)


def info_columns(info: dict, reserved) -> dict:
    """The sampler's own result columns: every scalar entry of ``approx.info`` but the ones
    kbench manages; a key that would overwrite one of kbench's columns breaks the contract."""
    columns = {key: value.item() if isinstance(value, np.generic) else value
               for key, value in info.items() if key not in MANAGED_INFO
               and isinstance(value, _SCALARS)}
    clash = sorted(set(columns) & set(reserved))
    if clash:
        raise ContractViolation(f"contract: info key(s) {clash} would overwrite kbench's own "
                                "result columns; rename them")
    wide = sorted(key for key, value in columns.items() if isinstance(value, int)
                  and not -2**63 <= value < 2**63)
    if wide:
        raise ContractViolation(f"contract: info entry {wide[0]!r} is an integer beyond 64 bits, "
                                "which a result file cannot hold; record it as a float")
    return columns


def compared_with_exact(owner: str, sampler, approx: LowRank, exact, lam,
                        reserved) -> dict[str, float]:
    """The columns of ``sampler.against_exact(approx, exact, lam)``, checked
    (:func:`exact_columns`); the hook reads the exact baseline every cell shares and must not
    replace any of its values (its arrays are read-only, so writing into one raises)."""
    before = dict(vars(exact))
    try:
        found = sampler.against_exact(approx, exact, lam)
    except ValueError as exc:
        if "read-only" not in str(exc):
            raise
        raise ContractViolation(f"{owner}: against_exact wrote into an array of the exact "
                                f"baseline, which every cell shares ({exc}); compute on a "
                                "copy") from None
    changed = sorted(name for name, value in before.items()
                     if getattr(exact, name, None) is not value)
    if changed:
        raise ContractViolation(f"{owner}: against_exact changed the exact baseline's {changed}, "
                                "which every cell shares; read it, and compute on copies")
    return exact_columns(owner, found, reserved, approx.info)


def exact_columns(owner: str, found, reserved, info: dict | None = None) -> dict[str, float]:
    """The columns a sampler's ``against_exact`` returned, checked: a dict of new column
    names (letters, digits, ``_``; none of kbench's ``reserved`` ones, none of the columns its
    fit's ``info`` gives) to real numbers."""
    if not isinstance(found, dict):
        raise ContractViolation(f"{owner}: against_exact must return a dict of column names to "
                                f"numbers, not {type(found).__name__}")
    bad = [key for key in found if not (isinstance(key, str) and key.isidentifier())]
    if bad:
        raise ContractViolation(f"{owner}: against_exact returned the key {bad[0]!r}, which is not "
                                "a column name (letters, digits and _)")
    clash = sorted(set(found) & set(reserved))
    if clash:
        raise ContractViolation(f"{owner}: against_exact returned {clash}, which kbench writes "
                                "itself; rename them")
    shared = sorted(set(found) & set(info_columns(info or {}, ())))
    if shared:
        raise ContractViolation(f"{owner}: against_exact returned {shared}, which the fit's info "
                                "also holds (a column of its own); rename one of them")
    numbers_ = {k: v for k, v in found.items() if isinstance(v, numbers.Real)
                and not isinstance(v, bool | np.bool_)}
    if len(numbers_) < len(found):
        raise ContractViolation(f"{owner}: against_exact gave non-numbers "
                                f"{ {k: v for k, v in found.items() if k not in numbers_}!r}")
    return {k: float(v) for k, v in found.items()}
