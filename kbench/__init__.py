"""kbench: benchmarks for low-rank kernel approximations.

The public API is ``kbench.__all__``: what users and plugin authors import (README,
docs/plugins.md, docs/architecture.md). Everything else is internal and may change::

    kernel = kbench.make_kernel("gaussian", sigma=1.0)
    approx = kbench.make_sampler("rls-fast").fit(X, kernel, rank=200, lam=1e-3, seed=0)
    approx.transform(X_new)
"""

from kbench._provenance import KBENCH_VERSION
from kbench.datasets import load_dataset
from kbench.datasets.base import Dataset, DatasetProvider, RawData
from kbench.errors import (
    ConfigError,
    ContractViolation,
    Failure,
    KbenchError,
    PluginError,
    Refused,
    Status,
    UnknownPluginError,
)
from kbench.exact.baseline import ExactBaseline, exact_baseline
from kbench.hookspecs import hookimpl
from kbench.kernels import (
    GaussianKernel,
    Kernel,
    LaplacianKernel,
    LinearKernel,
    MaternKernel,
    PolynomialKernel,
)
from kbench.lowrank.features import Features, features_of
from kbench.lowrank.linalg import inverse_sqrt_psd
from kbench.lowrank.maps import CholeskyMap, FourierMap, LowRank, NystromMap, nystrom
from kbench.lowrank.workspace import Workspace, cached
from kbench.parameters import Param
from kbench.registry import PluginInfo, create, list_plugins, make_kernel, make_sampler, make_task
from kbench.samplers.base import Sampler, landmarks_from_dictionary
from kbench.spec import Spec
from kbench.sweep.scheduler import run
from kbench.sweep.store import read_results
from kbench.tasks.base import Headline, RidgePath, Task, Validation

__version__ = KBENCH_VERSION

__all__ = [
    "Advice",
    "CholeskyMap",
    "ConfigError",
    "ContractViolation",
    "Dataset",
    "DatasetProvider",
    "ExactBaseline",
    "Failure",
    "Features",
    "FourierMap",
    "GaussianKernel",
    "Headline",
    "KbenchError",
    "Kernel",
    "LaplacianKernel",
    "LinearKernel",
    "LowRank",
    "MaternKernel",
    "NystromMap",
    "Param",
    "PluginError",
    "PluginInfo",
    "PolynomialKernel",
    "RawData",
    "Refused",
    "RidgePath",
    "Sampler",
    "Spec",
    "Status",
    "Task",
    "UnknownPluginError",
    "Validation",
    "Workspace",
    "__version__",
    "advise",
    "cached",
    "create",
    "exact_baseline",
    "features_of",
    "hookimpl",
    "inverse_sqrt_psd",
    "landmarks_from_dictionary",
    "list_plugins",
    "load_dataset",
    "make_kernel",
    "make_sampler",
    "make_task",
    "nystrom",
    "read_results",
    "run",
]


def __getattr__(name: str):
    """``advise`` and ``Advice``, loaded when first used (PEP 562): the advisor needs
    scipy.stats and the reporting layer, which ``import kbench`` in a sweep's worker does not."""
    if name in ("Advice", "advise"):
        from kbench import advisor

        return getattr(advisor, name)
    raise AttributeError(f"module 'kbench' has no attribute {name!r}")
