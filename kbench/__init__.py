"""kbench: benchmarks for low-rank kernel approximations.

The public API is ``kbench.__all__``, what users call (README, docs/architecture.md), and
``kbench.plugin.__all__``, what plugin authors subclass and call (docs/plugins.md); both
names stay importable from ``kbench``. Everything else is internal and may change::

    kernel = kbench.make_kernel("gaussian", sigma=1.0)
    approx = kbench.make_sampler("rls-fast").fit(X, kernel, rank=200, lam=1e-3, seed=0)
    approx.transform(X_new)
"""

from kbench import plugin
from kbench._provenance import KBENCH_VERSION
from kbench.datasets import load_dataset
from kbench.datasets.base import Dataset
from kbench.errors import (
    ConfigError,
    ContractViolation,
    Failure,
    KbenchError,
    NotDownloaded,
    PluginError,
    Refused,
    Status,
    UnknownPluginError,
)
from kbench.exact.baseline import exact_baseline
from kbench.kernels import (
    GaussianKernel,
    LaplacianKernel,
    LinearKernel,
    MaternKernel,
    PeriodicExpKernel,
    PeriodicSobolevKernel,
    PolynomialKernel,
)
from kbench.lowrank.maps import LowRank
from kbench.registry import PluginInfo, create, list_plugins, make_kernel, make_sampler, make_task
from kbench.spec import Spec
from kbench.sweep.scheduler import run
from kbench.sweep.store import read_results

__version__ = KBENCH_VERSION

__all__ = [
    "Advice",
    "ConfigError",
    "ContractViolation",
    "Dataset",
    "Failure",
    "GaussianKernel",
    "KbenchError",
    "LaplacianKernel",
    "LinearKernel",
    "LowRank",
    "MaternKernel",
    "NotDownloaded",
    "PeriodicExpKernel",
    "PeriodicSobolevKernel",
    "PluginError",
    "PluginInfo",
    "PolynomialKernel",
    "Refused",
    "Spec",
    "Status",
    "UnknownPluginError",
    "__version__",
    "advise",
    "create",
    "exact_baseline",
    "list_plugins",
    "load_dataset",
    "make_kernel",
    "make_sampler",
    "make_task",
    "plugin",
    "read_results",
    "run",
]


def __getattr__(name: str):
    """``advise`` and ``Advice``, loaded when first used (PEP 562): the advisor needs
    scipy.stats and the reporting layer, which ``import kbench`` in a sweep's worker does not;
    and the plugin authors' names (:mod:`kbench.plugin`), which ``kbench`` still answers to."""
    if name in ("Advice", "advise"):
        from kbench import advisor

        return getattr(advisor, name)
    if name in plugin.__all__:  # kbench.Sampler, as plugins written before kbench.plugin import it
        return getattr(plugin, name)
    raise AttributeError(f"module 'kbench' has no attribute {name!r}")


def __dir__() -> list[str]:
    """What ``kbench`` answers to, for tab completion: its own names and, through
    :func:`__getattr__`, ``advise``, ``Advice`` and the plugin authors' names."""
    return sorted({*globals(), *__all__, *plugin.__all__})
