"""What plugin authors subclass and call (docs/plugins.md): the base classes of samplers,
tasks, kernels and dataset providers, the feature maps a sampler returns and the helpers that
build them, parameter declarations, the hook marker, the exact baseline a task compares with,
the job's workspace, and the errors a plugin raises. Users call ``kbench`` (``kbench.__all__``)::

    import kbench

    class EveryOther(kbench.plugin.Sampler):
        name = "every-other"

        def _fit(self, X, kernel, rank, lam, rng):
            return kbench.plugin.nystrom(X, kernel, range(0, len(X), 2)[:rank])

    @kbench.plugin.hookimpl
    def kbench_register_samplers():
        return [EveryOther]
"""

from kbench.datasets.base import Dataset, DatasetProvider, RawData
from kbench.errors import ContractViolation, NotDownloaded, Refused
from kbench.exact.baseline import exact_baseline
from kbench.exact.dense import ExactBaseline
from kbench.hookspecs import hookimpl
from kbench.kernels import Kernel
from kbench.lowrank.features import Features, features_of
from kbench.lowrank.linalg import inverse_sqrt_psd
from kbench.lowrank.maps import CholeskyMap, FourierMap, LowRank, NystromMap, nystrom
from kbench.lowrank.workspace import Workspace, cached
from kbench.parameters import Param
from kbench.samplers.base import Sampler, landmarks_from_dictionary
from kbench.tasks.base import Headline, RidgePath, Task, Validation

__all__ = [
    "CholeskyMap",
    "ContractViolation",
    "Dataset",
    "DatasetProvider",
    "ExactBaseline",
    "Features",
    "FourierMap",
    "Headline",
    "Kernel",
    "LowRank",
    "NotDownloaded",
    "NystromMap",
    "Param",
    "RawData",
    "Refused",
    "RidgePath",
    "Sampler",
    "Task",
    "Validation",
    "Workspace",
    "cached",
    "exact_baseline",
    "features_of",
    "hookimpl",
    "inverse_sqrt_psd",
    "landmarks_from_dictionary",
    "nystrom",
]
