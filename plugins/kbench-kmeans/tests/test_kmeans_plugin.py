"""The kmeans plugin loads through the entry point and honours kbench's contract."""

import numpy as np

import kbench
from kbench.testing import CHECKS, check_sampler


def test_kmeans_is_registered_by_its_own_package():
    info = kbench.list_plugins("sampler")["kmeans"]
    assert info.source == "kbench-kmeans"


def test_kmeans_passes_the_conformance_kit():
    assert len(check_sampler("kmeans")) == len(CHECKS)


def test_kmeans_landmarks_beat_uniform_on_clustered_data():
    """Centres summarise clusters: lower trace error than uniform landmarks at equal rank."""
    data = kbench.load_dataset("synthetic:gaussian-blobs", n=1500, seed=0)
    kernel = kbench.make_kernel("gaussian", sigma=1.0)

    def trace_error(name):
        Z = kbench.make_sampler(name).fit(data.X_train, kernel, rank=30,
                                          seed=0).transform(data.X_train)
        return 1 - (Z * Z).sum() / len(Z)

    assert trace_error("kmeans") < trace_error("uniform")
    assert np.isfinite(trace_error("kmeans"))


def test_cli_check_plugin_kmeans():
    from click.testing import CliRunner

    from kbench.cli import main

    result = CliRunner().invoke(main, ["check-plugin", "kmeans"])
    assert result.exit_code == 0, result.output
    assert ("from kbench-kmeans 0.1.0" in result.output
            and "all 9 contract checks passed" in result.output)
