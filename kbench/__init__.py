"""kbench: benchmarks for low-rank kernel approximations.

Public API (README, docs/plugins.md)::

    kernel = kbench.make_kernel("gaussian", sigma=1.0)
    approx = kbench.make_sampler("rls-fast").fit(X, kernel, rank=200, lam=1e-3, seed=0)
    approx.transform(X_new)
"""

from importlib.metadata import PackageNotFoundError, version

from kbench.datasets import Dataset, load_dataset
from kbench.errors import ContractViolation, Refused
from kbench.exact import ExactBaseline, exact_baseline
from kbench.features import Features, features_of
from kbench.hookspecs import hookimpl
from kbench.kernels import Kernel
from kbench.lowrank import CholeskyMap, FourierMap, LowRank, NystromMap, nystrom
from kbench.registry import (
    PluginError,
    PluginInfo,
    UnknownPluginError,
    get_registry,
    list_plugins,
    make_kernel,
    make_sampler,
    make_task,
)
from kbench.samplers.base import Sampler
from kbench.spec import Spec
from kbench.tasks.base import Headline, Task


def __getattr__(name):
    """``kbench.run`` and ``kbench.read_results`` load pandas and pyarrow on first use only."""
    if name == "run":
        from kbench.runner import run

        return run
    if name == "read_results":
        from kbench.results import read_results

        return read_results
    raise AttributeError(f"module 'kbench' has no attribute {name!r}")


try:
    __version__ = version("kbench")
except PackageNotFoundError:  # pragma: no cover - running from a source tree without install
    __version__ = "0+unknown"

__all__ = [
    "CholeskyMap",
    "ContractViolation",
    "Headline",
    "Refused",
    "Spec",
    "Dataset",
    "ExactBaseline",
    "Features",
    "features_of",
    "Task",
    "exact_baseline",
    "load_dataset",
    "make_task",
    "read_results",
    "run",
    "FourierMap",
    "Kernel",
    "LowRank",
    "NystromMap",
    "PluginError",
    "PluginInfo",
    "Sampler",
    "UnknownPluginError",
    "__version__",
    "get_registry",
    "hookimpl",
    "list_plugins",
    "make_kernel",
    "make_sampler",
    "nystrom",
]
