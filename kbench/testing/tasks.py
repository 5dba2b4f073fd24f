"""The task conformance kit: declarations, rows and columns, the headline metric,
determinism (with and without ``prepare``), data left unchanged, bad input."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from kbench.datasets import load_dataset
from kbench.datasets.base import TASK_TYPES, Dataset
from kbench.errors import ContractViolation, describe
from kbench.exact.baseline import exact_baseline
from kbench.kernels import DEFAULT_KERNEL
from kbench.lowrank.maps import LowRank
from kbench.lowrank.workspace import Workspace
from kbench.registry import create, make_sampler
from kbench.spec import Spec
from kbench.sweep.context import fitted_kernel
from kbench.sweep.ranges import check_row_ranges
from kbench.tasks.base import FAMILIES, Headline, Task, Validation, check_headline, check_rows
from kbench.testing._kit import (
    check_declared,
    expect_value_errors,
    kbench_columns,
    plugin_factory,
    run_checks,
    same_values,
)

#: a small seeded dataset of each task type (unlabeled: the multiclass one without target)
_TASK_DATA = {"regression": "synthetic:bach-periodic",
              "binary": "synthetic:gaussian-blobs:n_classes=2",
              "multiclass": "synthetic:gaussian-blobs:n_classes=3"}
#: the sampler that makes the feature map of each family, its rank, and the λ path
_FAMILY_SAMPLERS, _TASK_RANK, _LAMS = ({"nystrom": "uniform", "random-features": "rff"}, 10,
                                       [1e-3, 1e-1])
#: the arrays of a Dataset, which a task leaves as they were
_ARRAYS = ("X_train", "y_train", "X_val", "y_val", "X_test", "y_test", "f_train", "f_val", "f_test")


def _labelled_as(data: Dataset, kind: str) -> Dataset:
    """Regression data (one feature in [0, 1), for a kernel defined there) with its target cut
    into the classes of ``kind`` at the training target's median (binary) or terciles."""
    if kind not in ("binary", "multiclass"):
        return data
    edges = np.quantile(data.y_train, [0.5] if kind == "binary" else [1 / 3, 2 / 3])
    return replace(data, task_type=kind, f_train=None, f_val=None, f_test=None,
                   **{part: np.digitize(getattr(data, part), edges)
                      for part in ("y_train", "y_val", "y_test")})


@dataclass
class _TaskProblem:
    """The task under check and, by task type and family, a seeded dataset, kernel and map."""

    make: Callable[[], Task]
    kernel: str
    _cache: dict = field(default_factory=dict)

    def settings(self, task: Task) -> list[tuple[str, str]]:
        return [(kind, family) for kind in task.accepts for family in self.families(task)]

    def families(self, task: Task) -> list[str]:
        """The task's families whose sampler approximates the check's kernel (no random
        features of a kernel without a spectral measure)."""
        kernel = create(self.kernel, "kernel")
        return [family for family in task.families
                if make_sampler(_FAMILY_SAMPLERS[family]).refuses(kernel) is None]

    def setting(self, kind: str, family: str,
                extra_column: bool = False) -> tuple[Dataset, Any, LowRank]:
        """A fresh copy of the data (its arrays copied), the fitted kernel and the feature map
        (fitted on one column more with ``extra_column``)."""
        key = (kind, family, extra_column)
        if key not in self._cache:
            # one feature in [0, 1): every kind from it
            if create(self.kernel, "kernel").unit_interval:
                data = _labelled_as(load_dataset(_TASK_DATA["regression"], n=120, seed=0,
                                                 standardize=False), kind)
            else:
                data = load_dataset(_TASK_DATA.get(kind, _TASK_DATA["multiclass"]), n=120, seed=0)
            if kind == "unlabeled":
                data = replace(data, y_train=None, y_val=None, y_test=None, task_type=kind)
            kernel = fitted_kernel(self.kernel, data)
            X = np.hstack([data.X_train, data.X_train[:, :1]]) if extra_column else data.X_train
            self._cache[key] = (data, kernel,
                                make_sampler(_FAMILY_SAMPLERS[family]).fit(X, kernel, _TASK_RANK))
        data, kernel, approx = self._cache[key]
        arrays = {name: getattr(data, name).copy() for name in _ARRAYS
                  if getattr(data, name) is not None}
        return replace(data, **arrays), kernel, approx  # a change a task makes stays in its copy

    def rows(self, kind: str, family: str) -> list[dict]:
        """The rows of a fresh task on a fresh copy of the data, computed once (the checks
        that read them share them)."""
        if ("rows", kind, family) not in self._cache:
            data, kernel, approx = self.setting(kind, family)
            task = self.make()
            # as the sweep does: the exact values the task compares with, then its own preparation
            with Workspace():
                exact_baseline(data, kernel)
                task.prepare(data, kernel)
                rows = task.evaluate(data, approx, kernel, lams=_LAMS)
            try:  # the check every sweep makes: a check reading the rows fails with its reason
                self._cache["rows", kind, family] = check_rows(rows, self.make().name)
            except ContractViolation as exc:
                raise AssertionError(f"on {kind} data with a {family} map: {exc}") from None
        return self._cache["rows", kind, family]


def _declarations(p: _TaskProblem) -> None:
    task = p.make()
    assert isinstance(task, Task), f"{type(task).__name__} does not subclass kbench.plugin.Task"
    assert isinstance(task.name, str) and task.name, "name must be a non-empty string"
    assert task.headline is None or isinstance(task.headline, Headline), \
        "headline must be a kbench.plugin.Headline or None"
    assert all(isinstance(m, Headline) for m in task.metrics), \
        "metrics must be a tuple of kbench.plugin.Headline"
    names = [m.metric for m in ((task.headline,) if task.headline else ()) + tuple(task.metrics)]
    assert len(set(names)) == len(names), (f"metrics repeat a metric ({names}): the headline is "
                                           "charted already; list each further metric once")
    assert task.accepts and set(task.accepts) <= set(TASK_TYPES), \
        f"accepts {task.accepts!r} is not among {TASK_TYPES}"
    assert task.families and set(task.families) <= set(FAMILIES), \
        f"families {task.families!r} not among {FAMILIES}"
    assert isinstance(task.uses_lams, bool) and isinstance(task.needs_exact, bool), \
        "uses_lams and needs_exact must be booleans"
    assert task.validation is None or (isinstance(task.validation, Validation)
                                       and task.uses_lams), \
        ("validation must be a kbench.plugin.Validation, and only a λ-path task (uses_lams) "
         "chooses λ")
    cls = type(task)
    check_declared(getattr(cls, "parameters", None), cls, f"task {cls.name!r}",
                   lambda given: cls(**given))
    try:
        task.check_ranks([_TASK_RANK])
    except ValueError:
        pass
    # kbench run makes it a usage error: no sweep of the task runs
    except Exception as exc:  # noqa: BLE001
        raise AssertionError(f"check_ranks([{_TASK_RANK}]) raised {describe(exc)}: it raises a "
                             "ValueError for ranks the task cannot score, and nothing "
                             "else") from None


def _rows(p: _TaskProblem) -> None:
    task, reserved = p.make(), kbench_columns()
    for kind, family in p.settings(task):
        where = f"on {kind} data with a {family} map"
        rows = p.rows(kind, family)
        for row in rows:
            assert not set(row) & reserved, \
                f"{where}: columns {sorted(set(row) & reserved)} are kbench's own"
            assert "lam" in row, f"{where}: a row without 'lam'"
        try:  # as a sweep checks them
            check_row_ranges(rows, task.name)
        except ContractViolation as exc:
            raise AssertionError(f"{where}: {exc}") from None
        lams = [row["lam"] for row in rows]
        if task.uses_lams:
            assert sorted(set(lams)) == _LAMS, \
                f"{where}: uses_lams, but the rows' λ are {lams}, the path {_LAMS}"
        else:
            assert all(isinstance(lam, float | np.floating) and np.isnan(lam) for lam in lams), \
                f"{where}: a λ-free task (uses_lams = False) has lam NaN, got {lams}"


def _headline(p: _TaskProblem) -> None:
    task = p.make()
    if task.headline is None:
        return
    written: set = set()
    for kind, family in p.settings(task):
        rows, where = p.rows(kind, family), f"on {kind} data with a {family} map"
        try:  # the check every sweep makes of a cell's rows
            check_headline(task, rows, _TASK_RANK)
        except ContractViolation as exc:
            raise AssertionError(f"{where}: {str(exc).partition(': ')[2]}") from None
        written.update(pd.DataFrame(rows))
        for column in (task.validation.metric, task.validation.trivial) if task.validation else ():
            # what λ is chosen on, its baseline
            found = pd.to_numeric(pd.DataFrame(rows).get(column), errors="coerce")
            assert found is not None and np.all(np.isfinite(found)), \
                (f"{where}: validation declares {column!r}, and the rows' values are "
                 f"{None if found is None else list(found)}")
    # what compares with the exact kernel is written only within the task's exact_max_n (the
    # settings' training rows): past it, the headline is
    compared = any(p.setting(*setting)[0].n_train <= getattr(task, "exact_max_n", math.inf)
                   for setting in p.settings(task))
    declared = ({column for m in (task.headline, *task.metrics) for column in (m.metric, m.exact)
                 if column} if compared else {task.headline.metric})
    assert declared <= written, (f"no setting writes the columns {sorted(declared - written)}, "
                                 "which the headline or metrics declare")


def _without_timings(rows: list[dict]) -> pd.DataFrame:
    return pd.DataFrame([{k: v for k, v in row.items() if not k.startswith("time_")}
                         for row in rows])


def _task_determinism(p: _TaskProblem) -> None:
    kind = p.make().accepts[0]
    for family in p.families(p.make()):
        first = p.rows(kind, family)
        data, kernel, approx = p.setting(kind, family)
        p.make().prepare(data, kernel)
        for label in ("after prepare", "evaluated twice"):
            rows = p.make().evaluate(data, approx, kernel, lams=_LAMS)
            assert _without_timings(rows).equals(_without_timings(first)), \
                (f"with a {family} map, the rows {label} differ from a first evaluation "
                 "(time_* columns aside)")



def _data_unchanged(p: _TaskProblem) -> None:
    task = p.make()
    for family in p.families(task):
        data, kernel, approx = p.setting(task.accepts[0], family)
        before = {name: None if getattr(data, name) is None else getattr(data, name).copy()
                  for name in _ARRAYS}
        task.prepare(data, kernel)
        task.evaluate(data, approx, kernel, lams=_LAMS)
        changed = [name for name, value in before.items()
                   if not same_values(value, getattr(data, name))]
        assert not changed, (f"prepare or evaluate changed the data's {changed} (keep results in "
                             "the workspace: kbench.plugin.cached)")


def _task_bad_input(p: _TaskProblem) -> None:
    task = p.make()
    kind, family = task.accepts[0], p.families(task)[0]
    data, kernel, approx = p.setting(kind, family)
    cases = {"a feature map of another dimension":
             lambda: task.evaluate(data, p.setting(kind, family, extra_column=True)[2], kernel,
                                   lams=_LAMS)}
    for other in (t for t in TASK_TYPES if t not in task.accepts):
        other_data, other_kernel, other_map = p.setting(other, family)
        cases[f"{other} data (not in accepts)"] = \
            lambda d=other_data, k=other_kernel, m=other_map: task.evaluate(d, m, k, lams=_LAMS)
    if task.uses_lams:
        cases["a λ ≤ 0"] = lambda: task.evaluate(data, approx, kernel, lams=[-1e-3])
        cases["an empty λ path"] = lambda: task.evaluate(data, approx, kernel, lams=[])
    expect_value_errors(cases)


#: the task contract checks, by name
TASK_CHECKS: list[tuple[str, Callable[[_TaskProblem], None]]] = [
    ("declarations", _declarations), ("rows and columns", _rows), ("headline metric", _headline),
    ("determinism", _task_determinism), ("data left unchanged", _data_unchanged),
                                  ("bad input", _task_bad_input)]


def check_task(task: str | Spec | type | Task, timeout: float | None = 60.0,
               kernel: str = DEFAULT_KERNEL, **params) -> list[str]:
    """Run the contract checks on a task: a spec (``"kpca:components=1;2"``), a Task
    subclass or an instance; ``params`` are its parameters (with a spec or a class).

    The task evaluates a Nyström and a random-feature map (its ``families``) on small
    seeded data of each type it ``accepts``. ``timeout`` and ``kernel`` as for
    :func:`check_sampler`. Returns the names of the checks that passed; raises
    AssertionError naming the ones that failed.
    """
    make, label = plugin_factory("task", task, params)
    problem = _TaskProblem(make, kernel)
    if not problem.families(make()):
        raise ValueError(f"{label} scores the {', '.join(make().families)} family, whose samplers "
                         f"refuse the kernel {kernel!r}: check it with a kernel they take (kbench "
                         "check-plugin --kernel).")
    return run_checks(label, TASK_CHECKS, problem, timeout)
