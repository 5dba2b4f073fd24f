"""Datasets that scikit-learn ships (offline) or downloads (``sklearn:<name>``) into
kbench's data home."""

from __future__ import annotations

from kbench.datasets.base import DatasetProvider, RawData
from kbench.datasets.home import ENVIRONMENT_VARIABLE, data_home
from kbench.errors import NotDownloaded
from kbench.hookspecs import hookimpl

#: name -> (scikit-learn loader, task type, needs the network)
BUNDLED = {
    "diabetes": ("load_diabetes", "regression", False),
    "breast_cancer": ("load_breast_cancer", "binary", False),
    "digits": ("load_digits", "multiclass", False),
    "wine": ("load_wine", "multiclass", False),
    "iris": ("load_iris", "multiclass", False),
    "california_housing": ("fetch_california_housing", "regression", True),
    "covtype": ("fetch_covtype", "multiclass", True),
}


class SklearnProvider(DatasetProvider):
    """scikit-learn's bundled datasets; california_housing and covtype need a download."""

    name = "sklearn"

    def names(self):
        return sorted(BUNDLED)

    def task_type(self, name, **params):
        return BUNDLED[name][1]

    def load(self, name, n, seed):
        from sklearn import datasets

        loader_name, task_type, needs_network = BUNDLED[name]
        loader = getattr(datasets, loader_name)
        kwargs = {"data_home": str(data_home("sklearn"))} if needs_network else {}
        try:
            bunch = loader(**kwargs)
        except OSError as exc:  # URLError is an OSError
            raise NotDownloaded(
                f"sklearn:{name} is downloaded on first use into {kwargs['data_home']} and the "
                f"download failed ({exc}); connect to the network once, or set "
                f"{ENVIRONMENT_VARIABLE} to a folder whose sklearn/ subfolder holds scikit-learn's "
                "cache."
            ) from None
        names = [str(f) for f in getattr(bunch, "feature_names", [])] or None
        meta = {"source": f"sklearn.datasets ({loader.__name__})", "needs_network": needs_network}
        return RawData(bunch.data, bunch.target, task_type, names, meta)


@hookimpl
def kbench_register_datasets():
    return [SklearnProvider]
