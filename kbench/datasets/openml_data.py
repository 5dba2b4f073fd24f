"""OpenML datasets by id through openml-python (``openml:<id>[:target=col]``).

openml-python keeps what it downloads in its cache, ``openml/`` under kbench's data home
(``$KBENCH_DATA_HOME``, else ``~/.cache/kbench``); a dataset in the cache loads with no
network. Its config file is there too (``openml/config``), and nothing is created under the
user's home: see :func:`import_openml`. Categorical features are one-hot encoded; the
dataset's default target is used unless ``target`` names another column.
"""

from __future__ import annotations

import os
import platform
import sys
from types import ModuleType

from kbench.datasets.base import DatasetProvider
from kbench.datasets.home import ENVIRONMENT_VARIABLE, data_home
from kbench.datasets.tabular import TABLE_OPTIONS, frame_to_raw
from kbench.errors import NotDownloaded
from kbench.hookspecs import hookimpl


def import_openml() -> ModuleType:
    """openml-python, imported with its config and cache folders under kbench's data home.

    Importing openml runs ``openml.config._setup()``, which creates its config folder
    (``$XDG_CONFIG_HOME/openml``, else ``~/.config/openml``; ``~/.openml`` off Linux), reads
    the config file there, and creates its cache folder (``$OPENML_CACHE_DIR``, else
    ``$XDG_CACHE_HOME/openml`` or ``~/.cache/openml``). For that import only, kbench sets
    ``OPENML_CACHE_DIR`` to the data home's ``openml/`` and ``XDG_CONFIG_HOME`` to the data
    home (``HOME`` too off Linux), so both folders are ``openml/`` under the data home and
    the config file ``openml/config``; the environment is restored afterwards. An openml
    imported before (by the user's own code) is returned as it is; ``load`` still points its
    cache at the data home."""
    if "openml" in sys.modules:
        return sys.modules["openml"]
    cache = data_home("openml")
    redirect = {"OPENML_CACHE_DIR": str(cache), "XDG_CONFIG_HOME": str(cache.parent)}
    # openml's config is ~/.openml there, whatever XDG says
    if platform.system().lower() != "linux":
        redirect.update(HOME=str(cache.parent), USERPROFILE=str(cache.parent))
    saved = {key: os.environ.get(key) for key in redirect}
    os.environ.update(redirect)
    try:
        import openml
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    return openml


class OpenMLProvider(DatasetProvider):
    """OpenML datasets by id, through openml-python and its on-disk cache."""

    name = "openml"
    options = {key: TABLE_OPTIONS[key] for key in ("target", "task_type")}

    def load(self, name: str, n: int | None, seed: int, target: str | None = None,
             task_type: str | None = None):
        try:
            openml = import_openml()
        except ImportError:  # pragma: no cover - openml is a dependency
            raise ValueError("openml:<id> needs openml-python: pip install openml") from None
        if not (name.isascii() and name.isdigit() and int(name) >= 1):
            raise ValueError(f"openml:{name}: an OpenML dataset is named by its integer id (1 or "
                             "more), e.g. openml:61 (iris).")
        dataset_id = int(name)
        cache = data_home("openml")
        openml.config.set_root_cache_directory(str(cache))
        try:
            dataset = openml.datasets.get_dataset(
                dataset_id, download_data=True, download_qualities=False,
                download_features_meta_data=True)
            target = target or dataset.default_target_attribute
            frame, _, _, _ = dataset.get_data(dataset_format="dataframe")
        except Exception as exc:  # openml raises its own errors, requests' and OSError
            raise NotDownloaded(
                f"openml:{dataset_id} could not be loaded ({type(exc).__name__}: {exc}). It is "
                f"downloaded on first use into {cache}: check the network, or set "
                f"{ENVIRONMENT_VARIABLE} to a folder whose openml/ subfolder is a cache that holds "
                "it."
            ) from None
        if target is None:
            raise ValueError(f"openml:{dataset_id} has no default target; pass target=<column>.")
        meta = {"source": f"OpenML dataset {dataset_id} ({dataset.name}, version "
                          f"{dataset.version})",
                "openml_id": dataset_id}
        return frame_to_raw(frame, target, task_type, meta, f"openml:{dataset_id}")


@hookimpl
def kbench_register_datasets():
    return [OpenMLProvider]
