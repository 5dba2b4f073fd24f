"""A sweep's configuration, validated once: what :func:`kbench.run` and ``kbench run`` take.

Planning, scheduling and collecting read this one object instead of threading a dozen
keyword arguments through each other.
"""

from __future__ import annotations

import dataclasses
import json
import math
import numbers
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from kbench._files import expand_home
from kbench._validation import INT64_MAX, LAMS, Bound, suggest
from kbench.datasets import canonical_spec, check_dataset_spec, spec_defaults
from kbench.errors import ConfigError, PluginError
from kbench.exact.baseline import EXACT_MAX_N
from kbench.kernels import DEFAULT_KERNEL
from kbench.registry import canonical_label, create
from kbench.spec import Spec, check_distinct, shown, split_specs
from kbench.tasks.selection import DEFAULT_SELECTION, check_selection

#: BLAS/OpenMP threads per process of a sweep, launched from the CLI or the workflow alike
DEFAULT_BLAS_THREADS = 1
#: a worker's memory limit leaves it room, past a MemoryError, to write its cell's rows
MIN_MEMORY_LIMIT_MB = 32
#: more repetitions than this is a mistake, not a sweep: each one refits every sampler
MAX_REPETITIONS = 1000
#: ``lams: auto``: this path, extended by decades within :data:`AUTO_LAM_BOUNDS` until the
#: λ chosen on validation data is interior (kbench.tasks.selection)
AUTO = "auto"
AUTO_LAMS = (1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1)
AUTO_LAM_BOUNDS = (1e-12, 1e3)

#: every number a sweep takes, declared once: SweepConfig, ``kbench run``'s options and the
#: workflow's config check all parse and check it here (docs/robustness.md lists them)
BOUNDS = {bound.name: bound for bound in (
    Bound("ranks", True, 1, 10**7, why="a rank-p map stores p×p and n×p blocks", most=100),
    LAMS,
    Bound("repetitions", True, 1, MAX_REPETITIONS, why="each repetition refits every sampler"),
    Bound("only_repetition", True, 0, MAX_REPETITIONS - 1,
          why="a repetition index below --repetitions"),
    Bound("seed", True, 0, INT64_MAX, why="stored as a 64-bit integer"),
    Bound("jobs", True, 1, 4096),
    Bound("blas_threads", True, 1, 4096),
    Bound("cell_timeout", False, 0, 1e8, low_open=True, why="seconds"),
    Bound("time_limit", False, 0, 1e8, low_open=True, why="seconds"),
    Bound("memory_limit_mb", False, MIN_MEMORY_LIMIT_MB, 1e9,
          why=f"MiB; below {MIN_MEMORY_LIMIT_MB} a worker cannot write its cell after a "
              "MemoryError"),
    dataclasses.replace(EXACT_MAX_N.bound, name="exact_max_n"),
)}

#: the longest list of specs a sweep config takes (the real-data board lists 173 datasets)
LONGEST = {"datasets": 10_000, "samplers": 1000, "tasks": 100, "tiers": 100}


#: what a job asks for when the config's ``resources`` does not say (mem_mb in MB, runtime
#: in minutes)
DEFAULT_RESOURCES = {"mem_mb": 4000, "runtime": 30, "cpus_per_task": 1}
#: the ranges of the config's ``resources``
RESOURCE_BOUNDS = {bound.name: bound for bound in (
    Bound("mem_mb", True, int(BOUNDS["memory_limit_mb"].low), int(BOUNDS["memory_limit_mb"].high),
          why="MB"),
    Bound("runtime", True, 1, 10**7, why="minutes"),
    Bound("cpus_per_task", True, BOUNDS["jobs"].low, BOUNDS["jobs"].high),
)}


def check_ranks(ranks) -> list[int]:
    """A sweep's ranks: integers in their declared range, each once; sorted."""
    return sorted(BOUNDS["ranks"].check_list(_listed(ranks, "ranks")))


def check_lams(lams, name: str = "lams") -> list[float]:
    """A sweep's λ path: finite per-sample ridges > 0, each once; sorted."""
    return sorted(LAMS.check_list(_listed(lams, name), name))


def _listed(values, name: str):
    """``values``, unless text, which the Python API takes as a list (the CLI reads the comma
    text)."""
    if isinstance(values, str | bytes):
        items = [item.strip() for item in values.split(",")] if isinstance(values, str) else []
        listed = ", ".join(items) if items and all(re.fullmatch(r"[-+.0-9eE]+", item)
                                                   for item in items) else "..."
        raise ValueError(f"{name} must be a list of numbers, got the text {values!r}; pass a list, "
                         f"e.g. {name}=[{listed}].")
    return values


def check_lam_bounds(bounds) -> tuple[float, float]:
    """The bounds a λ path may be extended to: two λ, the lower first."""
    values = check_lams(bounds, "lam_bounds")
    if len(values) != 2:
        raise ValueError("lam_bounds must be two λ, the lowest and the highest a path may reach "
                         f"(e.g. 1e-12,1e3), got {list(bounds)!r}.")
    return values[0], values[1]


def lam_path(lams, lam_bounds=None) -> tuple[tuple[float, ...], tuple[float, float] | None]:
    """The starting λ path and the bounds it may be extended to: ``"auto"`` is
    :data:`AUTO_LAMS` within ``lam_bounds`` or :data:`AUTO_LAM_BOUNDS`; a list is a fixed
    path unless ``lam_bounds`` reaches beyond its ends (None: a fixed path)."""
    auto = isinstance(lams, str) and lams.strip() == AUTO
    if isinstance(lams, str) and not auto:
        raise ValueError(f"lams must be a list of λ > 0 or {AUTO!r} (a path extended until the λ "
                         f"chosen on validation data is interior), got {lams!r}.")
    path = tuple(check_lams(AUTO_LAMS if auto else lams))
    if lam_bounds is None:
        return path, (AUTO_LAM_BOUNDS if auto else None)
    low, high = check_lam_bounds(lam_bounds)
    if path[0] < low or path[-1] > high:
        raise ValueError(f"the λ path {list(path)} reaches beyond lam_bounds [{low:g}, {high:g}]; "
                         "widen the "
                         + ("bounds to hold the path lams: auto starts from, or list λ explicitly."
                            if auto
                            else "bounds or shorten the path."))
    longest = (len(path) + math.ceil(math.log10(path[0] / low))
               + math.ceil(math.log10(high / path[-1])))
    if longest > LAMS.most:  # extended by decades, it could outgrow what a sweep takes
        raise ValueError(f"lam_bounds [{low:g}, {high:g}] let the λ path grow by decades to "
                         f"{longest} values; a path holds at most {LAMS.most}: narrow the bounds.")
    # its own ends: a fixed path
    return path, (None if (low, high) == (path[0], path[-1]) else (low, high))


def check_repetitions(repetitions) -> list[int]:
    """A count R (repetitions 0..R−1) or a list of repetition indices, each once."""
    if isinstance(repetitions, numbers.Integral) and not isinstance(repetitions, bool):
        return list(range(BOUNDS["repetitions"].check(repetitions)))
    return BOUNDS["only_repetition"].check_list(repetitions, "repetition indices")


def check_numbers(config: dict) -> None:
    """A workflow config's numbers against their declarations (:data:`BOUNDS`), each
    failure a ConfigError naming its key."""
    for key in ("ranks", "lams", "lam_bounds"):
        values = config.get(key)
        if values is None or values == AUTO:  # the schema allows "auto" for lams only
            continue
        bound = BOUNDS["lams" if key == "lam_bounds" else key]
        for index, value in enumerate(values):
            _check(f"{key}[{index}]", bound.check, value, key)
        _check(key, bound.check_list, values, key)
    _check("lam_bounds", lam_path, config["lams"], config.get("lam_bounds"))
    _check("selection", check_selection, config.get("selection", DEFAULT_SELECTION))
    for key in ("seed", "repetitions", "cell_timeout", "memory_limit_mb"):
        if config.get(key) is not None:
            _check(key, BOUNDS[key].check, config[key])
    for key, value in config.get("resources", {}).items():
        if key not in RESOURCE_BOUNDS:
            raise ConfigError(f"config key 'resources.{key}': unknown "
                              f"resource{suggest(key, RESOURCE_BOUNDS)}; resources are: "
                              f"{', '.join(RESOURCE_BOUNDS)}.")
        _check(f"resources.{key}", RESOURCE_BOUNDS[key].check, value)


def _check(key: str, method, *args) -> None:
    """``method(*args)``, its ValueError a ConfigError naming the config's ``key``."""
    try:
        method(*args)
    except ValueError as exc:
        raise ConfigError(f"config key '{key}': {exc}") from None


def _specs(value, name: str) -> tuple[str, ...]:
    kind = name.removesuffix("s")
    if isinstance(value, bytes):
        raise ValueError(f"{name} must be text or a list of specs, got bytes {value!r}; decode it "
                         "first.")
    specs = tuple(split_specs(value, name, kind) if isinstance(value, str) else
                  # (an object refused)
                  (v if isinstance(v, str) else Spec.parse(v, kind).label for v in value))
    if not specs:
        raise ValueError(f"no {name} given: pass at least one.")
    check_distinct(specs, kind, name)
    check_configurations(specs, kind, name)
    return specs


def check_config_lists(lists) -> None:
    """No config list (``(key, specs, kind)``) names one configuration twice."""
    for key, specs, kind in lists:
        try:
            check_distinct(specs, kind, f"config key '{key}'")
            check_configurations(specs, kind, f"config key '{key}'")
        except ValueError as exc:
            raise ConfigError(str(exc)) from None


def check_configurations(specs, kind: str, name: str) -> None:
    """Refuse two of ``specs`` that configure the same thing written two ways (a default
    given: ``squeak`` and ``squeak:qbar=10``; ``gaussian:sigma=1`` and ``gamma=0.5``): they
    would be computed twice and ranked as two. A spec that cannot be read is left to the
    checks that name its problem."""
    seen: dict[str, str] = {}
    for spec in specs:
        try:
            key = configuration(spec, kind)
        except (ValueError, TypeError, PluginError):
            continue
        if key in seen:
            raise ValueError(f"{name} lists {shown(seen[key])} and {shown(str(spec))}: one {kind} "
                             "configuration (the same values, defaults included, written two "
                             "ways); list it once.")
        seen[key] = str(spec)


def configuration(spec: str, kind: str) -> str:
    """What ``spec`` configures, however written: a plugin's name and every parameter, defaults
    filled in; a kernel's canonical spec; a dataset's name (its files' resolved paths) and
    parameters with its provider's and its split's defaults."""
    if kind == "kernel":
        return create(spec, "kernel").spec()
    if kind == "dataset":
        provider, name, params = check_dataset_spec(spec)
        defaults = spec_defaults(provider)
        # one file, however its path is written
        files = [str(path.resolve()) for path in provider.files(name)]
        label, values = (files or Spec.parse(spec, "dataset").name,
                         {**defaults, **provider.resolved(name, params)})
        # a dataset's lists name columns (drop=, categorical=, features=): sets, however
        # ordered or repeated
        values = {key: _column_set(value) if isinstance(value, list) else value
                  for key, value in values.items()}
    else:
        plugin = create(spec, kind)
        label, values = plugin.name, plugin.get_params()
    return json.dumps([label, {key: _plain(value) for key, value in sorted(values.items())}],
                      default=str)


def _column_set(names: list):
    """A list of column names as compared: sorted, each once, one name as itself (``drop=a;a``
    is ``drop=a``)."""
    names = sorted(set(names), key=str)
    return names[0] if len(names) == 1 else names


def same_configuration(spec: str, specs, kind: str) -> str | None:
    """The one of ``specs`` that configures what ``spec`` does, however each is written
    (:func:`configuration`), or None."""
    try:
        key = configuration(spec, kind)
    except (ValueError, TypeError, PluginError):
        return None
    for other in specs:
        try:
            if configuration(other, kind) == key:
                return other
        except (ValueError, TypeError, PluginError):
            continue
    return None


def _plain(value):
    """A parameter's value as compared: an integer as the float it equals (1 and 1.0 are one
    value)."""
    return (float(value) if isinstance(value, numbers.Real) and not isinstance(value, bool)
            else value)


def _absolute(path, name: str) -> Path:
    """``path`` made absolute now, so that no later step depends on the working directory
    (a plugin may change it in a worker)."""
    if not isinstance(path, str | os.PathLike):
        raise ValueError(f"{name} must be a directory path (text), got {shown(path)}: pass e.g. "
                         f"{name}='results'.")
    if str(path).strip() == "":
        raise ValueError(f"{name} is empty: pass a directory, e.g. {name}='results'.")
    return Path(os.path.abspath(expand_home(str(path))))


@dataclass(frozen=True)
class SweepConfig:
    """Every input of a sweep, checked on construction (a clear error names the argument).

    ``lams`` is the λ path, or ``"auto"`` (:func:`lam_path`); with ``lam_bounds`` it is
    extended within them until the λ chosen is interior; ``selection`` chooses λ on the
    validation rows, or on the test rows (``"oracle"``, for a paper's reproduction).
    ``repetitions`` is a count R (repetitions 0..R−1) or a list of repetition indices;
    ``cell_timeout`` and ``time_limit`` are seconds; ``memory_limit_mb`` caps each worker;
    ``data_cache`` is a folder of prepared splits (``kbench prepare``). Numbers are checked
    against :data:`BOUNDS`; ``out``, ``data_cache`` and a ``file:`` dataset's path are made
    absolute (kbench.datasets.canonical_spec).
    """

    datasets: tuple[str, ...]
    samplers: tuple[str, ...]
    tasks: tuple[str, ...]
    ranks: tuple[int, ...]
    lams: tuple[float, ...]
    repetitions: tuple[int, ...] = (0, 1, 2)
    kernel: str = DEFAULT_KERNEL
    out: Path = Path("results")
    jobs: int = 1
    cell_timeout: float | None = None
    memory_limit_mb: float | None = None
    time_limit: float | None = None
    seed: int = 0
    retry_failed: bool = False
    data_cache: Path | None = None
    blas_threads: int = DEFAULT_BLAS_THREADS
    lam_bounds: tuple[float, float] | None = None
    selection: str = DEFAULT_SELECTION
    #: the lists above and the kernel, parsed once here: what the plan carries
    dataset_specs: tuple[Spec, ...] = field(init=False, repr=False, compare=False)
    sampler_specs: tuple[Spec, ...] = field(init=False, repr=False, compare=False)
    task_specs: tuple[Spec, ...] = field(init=False, repr=False, compare=False)
    kernel_spec: Spec = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        fix = lambda name, value: object.__setattr__(self, name, value)  # noqa: E731 - frozen
        for name in ("datasets", "samplers", "tasks"):
            fix(name, _specs(getattr(self, name), name))
        # as results label them: a file's absolute path
        fix("datasets", tuple(map(canonical_spec, self.datasets)))
        for name in ("samplers", "tasks"):  # as results label them: no default written out
            fix(name, tuple(canonical_label(spec, name.removesuffix("s"))
                            for spec in getattr(self, name)))
        # text (a kernel object is refused, naming its spec)
        fix("kernel_spec", Spec.parse(self.kernel, "kernel"))
        for name in ("datasets", "samplers", "tasks"):
            fix(f"{name.removesuffix('s')}_specs",
                tuple(Spec.parse(text, name.removesuffix("s")) for text in getattr(self, name)))
        fix("ranks", tuple(check_ranks(self.ranks)))
        lams, bounds = lam_path(self.lams, self.lam_bounds)
        fix("lams", lams)
        fix("lam_bounds", bounds)
        fix("selection", check_selection(self.selection))
        fix("repetitions", tuple(check_repetitions(self.repetitions)))
        for name in ("jobs", "blas_threads", "seed"):
            fix(name, BOUNDS[name].check(getattr(self, name)))
        for name in ("cell_timeout", "memory_limit_mb", "time_limit"):
            if getattr(self, name) is not None:
                fix(name, BOUNDS[name].check(getattr(self, name)))
        if not isinstance(self.retry_failed, bool):  # (a text "no" or "false" is truthy)
            raise ValueError(f"retry_failed must be True or False, got {self.retry_failed!r}.")
        fix("out", _absolute(self.out, "out"))
        fix("data_cache", None if self.data_cache is None
            else _absolute(self.data_cache, "data_cache"))


def job_environment() -> dict[str, str]:
    """The environment of every job: the BLAS thread count it computes with
    (DEFAULT_BLAS_THREADS), in the variables BLAS and OpenMP read when they load, so that a
    job's BLAS never starts, and spins, threads it will not use (a quarter of a CPU second
    per process start and more per forked worker, for the same numbers: kbench pins the
    count either way)."""
    return dict.fromkeys(("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"),
                         str(DEFAULT_BLAS_THREADS))
