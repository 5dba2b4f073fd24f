"""Where kbench keeps downloaded datasets: one directory, chosen by the user in one place.

scikit-learn's and openml-python's caches hold pickles and other files their loaders
trust, so no dataset spec may point a loader at a folder: both caches live under the data
home, ``$KBENCH_DATA_HOME`` if set, else ``~/.cache/kbench`` (``sklearn/`` and ``openml/``).
openml-python's config file is ``openml/config`` there, and nothing of openml's is created
under the user's home (kbench.datasets.openml_data.import_openml).
"""

from __future__ import annotations

import os
from pathlib import Path

from kbench._files import expand_home

ENVIRONMENT_VARIABLE = "KBENCH_DATA_HOME"


def data_home(provider: str) -> Path:
    """The cache folder of ``provider`` ('sklearn' or 'openml') under kbench's data home."""
    root = os.environ.get(ENVIRONMENT_VARIABLE) or "~/.cache/kbench"
    return expand_home(root) / provider
