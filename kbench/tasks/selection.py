"""Choosing λ on held-out data, and λ paths that bracket the choice (docs/conventions.md).

A λ-path task reports one row per λ. The λ a cell uses is the one whose value of the task's
validation criterion (``Task.validation``: a loss on the validation rows) is best; the
exact kernel chooses its own λ the same way on its own values. The test metric is read at
those choices, never chosen on (except for a sweep that declares ``selection: oracle``: the
λ with the best test headline, as a paper chose it, e.g. Bach 2013). Ties go to the larger
λ, the simpler model.

A choice at an end of the path may lie beyond it. A path with bounds (``lams: auto``) is
extended by decades, within them, until the exact kernel's choice is interior
(:func:`resolve_path`, once per split and kernel), and a cell without an exact kernel to
follow extends its own (kbench.sweep.worker). A choice still at an end, because a bound
stops it or the path is fixed, is recorded: ``lam_at_edge``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

#: how λ is chosen: on the validation rows, or on the test rows (a paper's oracle)
SELECTIONS = ("validation", "oracle")
#: the selection of a sweep that does not declare one
DEFAULT_SELECTION = SELECTIONS[0]
#: the rows a selection reads, as recorded in ``selected_on``
SELECTED_ON = {"validation": "validation", "oracle": "test"}
#: the columns :func:`mark` adds to every row of a λ-path cell
COLUMNS = ("lam_selected", "lam_selected_exact", "selected_on", "lam_at_edge", "lam_at_edge_exact")
#: how far one extension reaches beyond an end of the path
DECADE = 10.0


def check_selection(selection: str) -> str:
    if selection not in SELECTIONS:
        raise ValueError(f"selection must be one of {', '.join(SELECTIONS)}, got {selection!r}.")
    return selection


def best_index(values, smaller_is_better: bool) -> int | None:
    """The index of the best finite value of ``values`` (in increasing λ order); among equal
    values the last, the largest λ. None when no value is finite."""
    values = np.asarray(values, dtype=float)
    finite = np.isfinite(values)
    if not finite.any():
        return None
    best = values[finite].min() if smaller_is_better else values[finite].max()
    return int(np.flatnonzero(finite & (values == best))[-1])


def at_edge(index: int | None, count: int) -> bool:
    """Whether a choice is at an end of a path of ``count`` λ (always, for one λ)."""
    return index is not None and (index == 0 or index == count - 1)


def followed(task, selection: str) -> str:
    """The selection a task follows: ``selection``; ``oracle`` for a λ-path task that
    declares no validation criterion (a plugin's), which its rows then record
    (``selected_on`` "test") and its page says."""
    return selection if task.validation is not None else "oracle"


def criterion(task, selection: str) -> tuple[str, str | None, bool] | None:
    """What a task's λ is chosen on: (column, the exact kernel's column, smaller is better):
    its validation criterion, or its test headline when it follows ``oracle``
    (:func:`followed`); None for a task that does not choose λ."""
    if not task.uses_lams or task.headline is None:
        return None
    if followed(task, selection) == "oracle":
        return task.headline.metric, task.headline.exact, task.headline.smaller_is_better
    return task.validation.metric, task.validation.exact, task.validation.smaller_is_better


def mark(rows: list[dict], task, selection: str) -> list[dict]:
    """The rows of one λ-path cell (one per λ), each with the λ the cell chose, the λ the
    exact kernel chose (NaN without one), the split they were chosen on and whether each
    choice lies at an end of the path (:data:`COLUMNS`). New dicts; ``rows`` are left as they
    are."""
    column, exact_column, smaller = criterion(task, selection)
    lams = np.array(sorted({row["lam"] for row in rows}), dtype=float)

    def choose(name: str | None) -> tuple[float, bool]:
        if name is None:
            return math.nan, False
        first = {row["lam"]: row.get(name) for row in reversed(rows)}
        index = best_index([_number(first[lam]) for lam in lams], smaller)
        return (math.nan if index is None else float(lams[index])), at_edge(index, len(lams))

    lam, edge = choose(column)
    lam_exact, edge_exact = choose(exact_column)
    chosen_on = SELECTED_ON[followed(task, selection)]
    chosen = dict(zip(COLUMNS, (lam, lam_exact, chosen_on, edge, edge_exact), strict=True))
    return [{**row, **chosen} for row in rows]


def _number(value) -> float:
    return math.nan if value is None else float(value)


def extension(lams: Sequence[float], side: int, bounds: tuple[float, float]) -> float | None:
    """The λ one decade beyond the lower (``side`` −1) or upper (+1) end of ``lams``, or
    None when it falls outside ``bounds``."""
    # 1e-7, not 9.999…e-8
    lam = float(f"{(min(lams) / DECADE if side < 0 else max(lams) * DECADE):.12g}")
    low, high = bounds
    return lam if low * (1 - 1e-12) <= lam <= high * (1 + 1e-12) else None


def extensions(lams: Sequence[float], values, smaller_is_better: bool,
               bounds: tuple[float, float] | None) -> list[float]:
    """The λ to add so that a choice at an end of ``lams`` (``values`` in the order of the
    sorted λ) may become interior: one decade beyond that end, within ``bounds``; [] when the
    choice is interior, there is none, or the bounds stop it."""
    if bounds is None:
        return []
    ordered = sorted(lams)
    index = best_index(values, smaller_is_better)
    if index is None or not at_edge(index, len(ordered)):
        return []
    sides = [-1, 1] if len(ordered) == 1 else [-1] if index == 0 else [1]
    return [lam for side in sides if (lam := extension(ordered, side, bounds)) is not None]


def resolve_path(start: Sequence[float], bounds: tuple[float, float] | None,
                 curves: Callable[[list[float]], list[tuple[np.ndarray, bool]]]) -> list[float]:
    """The λ path from ``start``, extended by decades within ``bounds`` until the choice of
    every curve is interior or a bound stops it. ``curves(path)`` gives, for a sorted path,
    each curve's values along it and whether smaller is better (the exact kernel's
    validation headline of each λ-path task)."""
    path = sorted(float(lam) for lam in start)
    while True:
        added = sorted({lam for values, smaller in curves(path)
                        for lam in extensions(path, values, smaller, bounds)})
        if not added:
            return path
        path = sorted(path + added)


def exact_curves(exact, data, tasks, path: list[float],
                 selection: str) -> list[tuple[np.ndarray, bool]]:
    """What :func:`resolve_path` extends a path by: for each λ-path task that compares with
    the exact baseline ``exact`` on ``data``, the exact kernel's values along ``path`` of
    what its λ is chosen on (:meth:`kbench.plugin.Task.exact_scores`), and whether smaller is
    better."""
    found = []
    for task in tasks:
        chosen_on = criterion(task, selection)
        if chosen_on is None or not task.needs_exact or data.n_train > task.exact_max_n:
            continue
        scores = task.exact_scores(exact, data, path)
        if chosen_on[1] in scores:
            found.append((scores[chosen_on[1]], chosen_on[2]))
    return found
