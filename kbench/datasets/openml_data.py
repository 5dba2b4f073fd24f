"""OpenML datasets by id through openml-python (``openml:<id>[:target=col]``).

openml-python keeps what it downloads in its cache, ``openml/`` under kbench's data home
(``$KBENCH_DATA_HOME``, else ``~/.cache/kbench``); a dataset in the cache loads with no
network. Categorical features are one-hot encoded; the dataset's default target is used
unless ``target`` names another column.
"""

from __future__ import annotations

from kbench.datasets.base import DatasetProvider
from kbench.datasets.home import ENVIRONMENT_VARIABLE, data_home
from kbench.datasets.tabular import frame_to_raw
from kbench.hookspecs import hookimpl


class OpenMLProvider(DatasetProvider):
    """OpenML datasets by id, through openml-python and its on-disk cache."""

    name = "openml"

    def load(self, name: str, n: int | None, seed: int, target: str | None = None,
             task_type: str | None = None):
        try:
            import openml
        except ImportError:  # pragma: no cover - openml is a dependency
            raise ValueError("openml:<id> needs openml-python: pip install openml") from None
        try:
            dataset_id = int(name)
        except ValueError:
            raise ValueError(f"openml:{name}: an OpenML dataset is named by its integer id, "
                             "e.g. openml:61 (iris).") from None
        cache = data_home("openml")
        openml.config.set_root_cache_directory(str(cache))
        try:
            dataset = openml.datasets.get_dataset(
                dataset_id, download_data=True, download_qualities=False,
                download_features_meta_data=True)
            target = target or dataset.default_target_attribute
            frame, _, _, _ = dataset.get_data(dataset_format="dataframe")
        except Exception as exc:  # openml raises its own errors, requests' and OSError
            raise ValueError(
                f"openml:{dataset_id} could not be loaded ({type(exc).__name__}: {exc}). It is "
                f"downloaded on first use into {cache}: check the network, or set "
                f"{ENVIRONMENT_VARIABLE} to a folder whose openml/ subfolder is a cache that holds it."
            ) from None
        if target is None:
            raise ValueError(f"openml:{dataset_id} has no default target; pass target=<column>.")
        meta = {"source": f"OpenML dataset {dataset_id} ({dataset.name}, version {dataset.version})",
                "openml_id": dataset_id}
        return frame_to_raw(frame, target, task_type, meta, f"openml:{dataset_id}")


@hookimpl
def kbench_register_datasets():
    return [OpenMLProvider]
