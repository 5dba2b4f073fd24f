"""The dataset-provider conformance kit: declarations, RawData that kbench accepts,
determinism under a seed, unknown names refused with a ValueError."""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from kbench.datasets import (
    DEFAULT_TEST_SIZE,
    DEFAULT_VAL_SIZE,
    check_dataset_spec,
    check_parameters,
    load_dataset,
)
from kbench.datasets.base import TASK_TYPES, DatasetProvider, RawData, check_raw
from kbench.datasets.split import check_n, split_and_scale
from kbench.errors import NotDownloaded
from kbench.registry import get_registry
from kbench.spec import Spec
from kbench.testing._kit import (
    NotChecked,
    check_declared,
    check_timeout,
    run_checks,
    same_values,
    time_limit,
)

#: load_dataset's own options: a provider parameter of one of these names would be shadowed
_OWN = ("name",
        *(p for p in inspect.signature(load_dataset).parameters if p not in ("spec", "params")))
#: a dataset name no provider has
_UNKNOWN = "kbench-no-such-dataset"
#: the datasets loaded when none are named: the first ones the provider lists
_MAX_NAMES = 10


@dataclass
class _ProviderProblem:
    """The provider under check, the datasets it loads, with their parameters and size."""

    make: Callable[[], DatasetProvider]
    names: list[str]
    params: dict
    n: int | None

    def load(self, name: str) -> RawData:
        return self.make().load(name, self.n, 0, **self.params)


def _declarations(p: _ProviderProblem) -> None:
    provider = p.make()
    assert isinstance(provider, DatasetProvider), \
        f"{type(provider).__name__} does not subclass kbench.plugin.DatasetProvider"
    assert isinstance(provider.name, str) and provider.name and ":" not in provider.name, \
        f"name must be a non-empty string without ':' (the spec prefix), got {provider.name!r}"
    names = provider.names()
    assert isinstance(names, list) and all(isinstance(n, str) and n
                                           for n in names) and len(set(names)) == len(names), \
        "names() must return a list of distinct non-empty strings"
    for name in names:
        spec = f"{provider.name}:{name}"
        assert Spec.parse(spec,
                          "dataset").name == spec, f"{spec!r} does not read back as a dataset spec"
    for name in p.names:
        provider.check_name(name, f"{provider.name}:{name}")
        declared = provider.parameters(name)
        assert isinstance(declared, dict), \
            f"parameters({name!r}) returned {type(declared).__name__}, not a dict"
        assert not set(declared) & set(_OWN), \
            (f"parameters({name!r}) declares {sorted(set(declared) & set(_OWN))}: kbench's own "
             "options")
        check_declared(declared, provider.load,
                       f"dataset provider {provider.name!r}, dataset {name!r}",
                       lambda given, name=name: check_parameters(provider, name, given,
                                                                 f"{provider.name}:{name}"),
                       skip=("name", "n", "seed"))
        kind = provider.task_type(name, **p.params)
        assert kind is None or kind in TASK_TYPES, \
            f"task_type({name!r}) is {kind!r}, not None or one of {TASK_TYPES}"


def _loads(p: _ProviderProblem) -> None:
    """Every dataset loads as RawData that load_dataset takes; all broken ones are named."""
    provider, broken = p.make(), []
    for name in p.names:
        try:
            _load(p, provider, name)
        except Exception as exc:  # noqa: BLE001 - every dataset is reported, not only the first
            broken.append(f"{name}: {exc}")
    assert not broken, f"{len(broken)} of {len(p.names)} datasets are broken: " + "; ".join(broken)


def _load(p: _ProviderProblem, provider: DatasetProvider, name: str) -> None:
    spec = f"{provider.name}:{name}"
    raw = p.load(name)
    assert isinstance(raw, RawData), \
        f"{spec}: load returned {type(raw).__name__}, not kbench.plugin.RawData"
    X = raw.X
    assert isinstance(X, np.ndarray | pd.DataFrame) and X.ndim == 2, \
        f"{spec}: X must be a 2-D array or a data frame"
    for label, values in (("y", raw.y), ("f", raw.f)):
        assert values is None or np.shape(values) == (X.shape[0],), \
            f"{spec}: {label} has shape {np.shape(values)}, X has {X.shape[0]} rows"
    assert raw.task_type in TASK_TYPES, \
        f"{spec}: task_type {raw.task_type!r} is not one of {TASK_TYPES}"
    known = provider.task_type(name, **p.params)
    assert known in (None, raw.task_type), \
        f"{spec}: task_type() says {known!r}, the data is {raw.task_type!r}"
    if isinstance(X, pd.DataFrame):
        assert set(raw.categorical) <= set(X.columns), \
            f"{spec}: categorical names columns X does not have"
        text = [c for c in X.columns if X[c].dtype.kind in "OSU" and c not in raw.categorical]
        assert not text, (f"{spec}: columns {text[:5]} hold {X[text[0]].dtype} values, not "
                          "numbers: convert them, or name them in categorical")
    else:
        assert not raw.categorical, f"{spec}: categorical columns need X as a data frame"
        assert raw.feature_names is None or len(raw.feature_names) == X.shape[1], \
            f"{spec}: {len(raw.feature_names)} feature names for {X.shape[1]} columns"
        assert X.dtype.kind in "biuf", (f"{spec}: X has dtype {X.dtype}{_first_text(X)}; return "
                                        "numbers (float64), not text that kbench would have to "
                                        "convert")
    # as load_dataset
    split_and_scale(check_raw(raw, spec), spec, p.n, 0, DEFAULT_TEST_SIZE, True, DEFAULT_VAL_SIZE)


def _first_text(X: np.ndarray) -> str:
    """Where the first string of an object array is (', e.g. X[3, 1] = '2.5'')."""
    found = np.argwhere(np.frompyfunc(lambda v: isinstance(v, str | bytes), 1, 1)(X).astype(bool))
    return f", e.g. X[{found[0][0]}, {found[0][1]}] = {X[tuple(found[0])]!r}" if len(found) else ""


def _determinism(p: _ProviderProblem) -> None:
    for name in p.names:
        first, again = p.load(name), p.load(name)
        changed = [label for label in ("X", "y", "f")
                   if not same_values(getattr(first, label), getattr(again, label))]
        assert not changed, f"{name}: the same seed gave different {changed}"


def _unknown_name(p: _ProviderProblem) -> None:
    provider = p.make()
    spec = f"{provider.name}:{_UNKNOWN}"
    try:
        provider.check_name(_UNKNOWN, spec)
        provider.load(_UNKNOWN, p.n, 0)
    except ValueError:
        return
    except Exception as exc:
        raise AssertionError(f"{spec} raised {type(exc).__name__} ({exc}), not a "
                             "ValueError") from None
    raise AssertionError(f"{spec} was accepted: check_name or load must raise a ValueError naming "
                         "it")


#: the dataset-provider contract checks, by name
PROVIDER_CHECKS: list[tuple[str, Callable[[_ProviderProblem], None]]] = [
    ("declarations", _declarations), ("RawData that kbench accepts", _loads),
                                  ("determinism", _determinism),
    ("unknown name refused", _unknown_name)]


def check_dataset_provider(provider: str | Spec | type | DatasetProvider,
                           names: Sequence[str] | None = None,
                           n: int | None = None, timeout: float | None = 60.0) -> list[str]:
    """Run the contract checks on a dataset provider: a registered name (``"synthetic"``), a
    dataset spec (``"synthetic:moons:noise=0.2"``: that dataset, with its parameters), a
    DatasetProvider subclass or an instance.

    ``names`` are the datasets loaded (by default the first 10 the provider lists; one that
    lists none needs them), ``n`` the points each load asks for (None: the provider's
    default), ``timeout`` the seconds each check may take. Returns the names of the checks
    that passed; raises AssertionError naming the ones that failed.
    """
    params: dict = {}
    # one dataset, the spec's
    named = names is None and isinstance(provider, str | Spec) and ":" in str(provider)
    if isinstance(provider, str | Spec):
        text = str(provider)
        name = text.split(":", 1)[0].strip()
        get_registry().get("dataset", name)  # an unknown provider stops here, once
        if ":" in text:
            _, dataset, params = check_dataset_spec(text)
            names, n = ([dataset] if names is None else names,
                        check_n(params.pop("n", n), None, text))
            params = {k: v for k, v in params.items() if k not in _OWN}
        make, label = (lambda: get_registry().create("dataset", name)), text
    else:
        make = provider if isinstance(provider, type) else (lambda: provider)
        label = getattr(provider, "__name__", type(provider).__name__)
    names = list(make().names()[:_MAX_NAMES] if names is None else names)
    if not names:
        raise ValueError(f"dataset provider {label!r} lists no dataset (names()): pass the ones to "
                         f"load, names=[...] (kbench check-plugin {label}:NAME).")
    problem = _available(_ProviderProblem(make, names, params, n), label, check_timeout(timeout))
    if named:
        _loads_as_named(problem, label, check_timeout(timeout))
    return run_checks(f"dataset provider {label!r}", PROVIDER_CHECKS, problem, timeout)


def _available(p: _ProviderProblem, label: str, timeout: float | None) -> _ProviderProblem:
    """The problem without the datasets that are downloaded on first use and could not be
    (:class:`kbench.errors.NotDownloaded`): a warning names them; a ValueError when none is left."""
    missing = {}
    for name in p.names:
        try:
            with time_limit(timeout):
                p.load(name)
        except NotDownloaded as exc:
            missing[name] = str(exc)
        except Exception:  # noqa: BLE001, S110 - any other failure is the checks' to report
            pass
    if not missing:
        return p
    if len(missing) == len(p.names):
        raise ValueError(f"no dataset of {label!r} could be loaded to check: "
                         f"{next(iter(missing.values()))}")
    warnings.warn(f"{label}: {len(missing)} of {len(p.names)} datasets are not downloaded, so not "
                  f"checked: {', '.join(missing)} ({next(iter(missing.values()))})", NotChecked,
                  stacklevel=3)
    return replace(p, names=[name for name in p.names if name not in missing])


def _loads_as_named(p: _ProviderProblem, spec: str, timeout: float | None) -> None:
    """The dataset a spec names, with its parameters, is one the provider loads: its refusal
    (a column the file lacks, say) is the spec's problem, not a broken contract."""
    try:
        with time_limit(timeout):
            p.load(p.names[0])
    except ValueError as exc:
        raise ValueError(f"the provider refuses {spec}, so the checks cannot run on it: {exc} Fix "
                         "the spec, or name another dataset.") from None
