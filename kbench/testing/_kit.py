"""What every conformance kit shares: the time limit, the runner and its report, plugin
factories, the check of declared parameters, and small seeded problems."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from kbench.errors import describe
from kbench.parameters import Param, defaults, undeclared
from kbench.registry import create, make_sampler, make_task
from kbench.spec import Spec
from kbench.sweep.config import BOUNDS
from kbench.sweep.plan import Cell
from kbench.sweep.schema import PACKAGE_COLUMNS
from kbench.sweep.signals import alarm
from kbench.sweep.worker import ROW_COLUMNS


class NotChecked(UserWarning):
    """Part of a plugin the kit could not check (a dataset not downloaded), named."""


def small_problem(kernel: str, n: int = 120, d: int = 4, seed: int = 0):
    """Seeded points and the kernel ``kernel`` (a spec) fitted on them: gaussian in d
    dimensions, or uniform on [0, 1) in one for a kernel defined there
    (``Kernel.unit_interval``)."""
    made, rng = create(kernel, "kernel"), np.random.default_rng(seed)
    X = rng.random((n, 1)) if made.unit_interval else rng.standard_normal((n, d))
    return X, made.fit(X)



@contextlib.contextmanager
def time_limit(seconds: float | None) -> Iterator[None]:
    """Raise TimeoutError in the block after ``seconds`` (SIGALRM, main thread only; a
    plugin stuck in one long C call is stopped when the call returns)."""
    with alarm(seconds, lambda: TimeoutError(f"did not finish within {seconds:g} s "
                                             "(a loop without a bound?)")):
        yield


def check_timeout(timeout: float | None) -> float | None:
    """A kit's ``timeout``: seconds as ``kbench check-plugin --timeout`` takes them, or None."""
    return None if timeout is None else BOUNDS["cell_timeout"].check(timeout, "timeout")


def run_checks(what: str, checks: list[tuple[str, Callable]], problem,
               timeout: float | None) -> list[str]:
    """Run every check; the names of those that passed, or one AssertionError for the rest.
    ``timeout`` is checked first, as ``kbench check-plugin --timeout`` is (None: no limit)."""
    timeout = check_timeout(timeout)
    failures, passed = [], []
    for name, body in checks:
        try:
            with time_limit(timeout):
                body(problem)
        # report every failure, not only the first
        except (Exception, SystemExit, KeyboardInterrupt) as exc:
            failures.append(f"{name}: {describe(exc)}")
            # the plugin (or the user) asked to stop: the rest is not run
            if not isinstance(exc, Exception):
                failures.append(f"the checks after {name} were not run ({type(exc).__name__} stops "
                                "them)")
                break
        else:
            passed.append(name)
    if failures:
        raise AssertionError(f"{what} fails {len(failures)} contract check(s):\n  "
                             + "\n  ".join(failures))
    return passed


def plugin_factory(kind: str, plugin, params: dict) -> tuple[Callable[[], Any], str]:
    """A maker of fresh plugin objects from a spec, a class or an instance, and its label;
    an unknown name or a bad parameter stops here, once."""
    if isinstance(plugin, str | Spec):
        make = {"sampler": make_sampler, "task": make_task}[kind]
        make(plugin, **params)
        return (lambda: make(plugin, **params)), f"{kind} {str(plugin)!r}"
    if params and not isinstance(plugin, type):
        raise TypeError(f"parameters {sorted(params)} go with a {kind} name or class, not with an "
                        "instance.")
    label = f"{kind} {getattr(plugin, '__name__', type(plugin).__name__)!r}"
    return ((lambda: plugin(**params)) if isinstance(plugin, type) else (lambda: plugin)), label


def expect_value_errors(cases: dict[str, Callable[[], object]]) -> None:
    """Every case raises a ValueError."""
    for label, call in cases.items():
        try:
            call()
        except ValueError:
            continue
        raise AssertionError(f"{label} did not raise ValueError")


def same_values(a, b) -> bool:
    """Equal arrays, frames or None (NaN equal to NaN)."""
    return a is b if a is None or b is None else pd.DataFrame(a).equals(pd.DataFrame(b))


def kbench_columns() -> set[str]:
    """The columns kbench writes in every result row: a task's rows set none but lam and
    components, a sampler's info none at all."""
    specs = {kind: Spec.of(kind, "-") for kind in ("dataset", "kernel", "sampler", "task")}
    cell = Cell(**specs, rank=1, repetition=0, base_seed=0, inputs="", uses_lams=True, path=Path())
    return (set(cell.identity()) | set(PACKAGE_COLUMNS) | set(ROW_COLUMNS)) - {"lam", "components"}


def check_declared(parameters: dict, function, owner: str, make: Callable[[dict], object],
                   skip: tuple[str, ...] = ()) -> None:
    """Every keyword parameter of ``function`` (a plugin's constructor, a provider's
    ``load``) but ``skip`` is declared as a :class:`kbench.plugin.Param`, its default passes its
    declaration, and ``make`` (the plugin built with one parameter set) refuses every value
    :meth:`Param.invalid` generates with a one-line ValueError naming the parameter."""
    assert isinstance(parameters,
                      dict), f"{owner}: its parameters must be a dict of name → kbench.plugin.Param"
    missing = undeclared(function, parameters, skip)
    assert not missing, (f"{owner}: {', '.join(missing)} {'is' if len(missing) == 1 else 'are'} "
                         "not declared: give each a kbench.plugin.Param in its parameters "
                         "(docs/plugins.md, Parameters)")
    for name, param in parameters.items():
        assert isinstance(param, Param), \
            f"{owner}: {name} is declared as {param!r}, not as a kbench.plugin.Param"
    for name, default in defaults(function).items():
        if name in parameters:
            try:
                parameters[name].check(default, name, owner)
            except ValueError as exc:
                raise AssertionError(f"{owner}: the default {name}={default!r} breaks its "
                                     f"declaration: {exc}") from None
    for name, param in parameters.items():
        for value in param.invalid():
            try:
                make({name: value})
            except ValueError as exc:
                message = str(exc)
                assert "\n" not in message.strip() and name in message, \
                    (f"{owner}: {name}={value!r} is refused, but not in one line naming {name}: "
                     f"{message!r}")
                continue
            except Exception as exc:
                raise AssertionError(f"{owner}: {name}={value!r} raised {type(exc).__name__}, not "
                                     f"a ValueError: {exc}") from None
            raise AssertionError(f"{owner}: {name}={value!r} was accepted, but its declaration "
                                 f"allows {param.allowed}")
        # made with values it takes: one it does not keep is refused (Declared)
        for value in param.valid():
            make({name: value})
