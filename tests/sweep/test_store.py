"""The result store: files of an older schema version are migrated on read, newer ones refused."""

from __future__ import annotations

import json

import pandas as pd
import pytest

import kbench
from kbench.sweep.schema import SCHEMA_VERSION, migrate
from kbench.sweep.store import describe_sweeps, read_cell


def version_1_rows() -> pd.DataFrame:
    """Two rows as kbench's schema version 1 wrote them: the identity was the plugin names
    with their parameters as JSON; there was no label, base seed or inputs fingerprint."""
    return pd.DataFrame({
        "dataset": ["sklearn:diabetes"] * 2, "kernel": ["gaussian:sigma=median"] * 2,
        "sampler": ["squeak", "uniform"],
        "sampler_params": [json.dumps({"qbar": 20, "eps": 0.3}), "{}"],
        "sampler_label_params": ["eps=0.3,qbar=20", ""],
        "task": ["kpca", "krr"], "task_params": [json.dumps({"components": [1, 5]}), "{}"],
        "task_label_params": ["components=1;5", ""],
        "rank": [10, 10], "lam": [float("nan"), 1e-3], "components": [5.0, float("nan")],
        "repetition": [0, 0], "seed": [123, 456], "status": ["ok", "error"],
        "error": ["", "LinAlgError: x"],
        "test_mse": [float("nan"), 0.5], "timestamp": ["2026-11-20T10:00:00+00:00"] * 2,
        "schema_version": [1, 1],
    })


def test_a_version_1_file_reads_as_the_current_version(tmp_path):
    (tmp_path / "cells").mkdir()
    version_1_rows().to_parquet(tmp_path / "cells" / "old.parquet")
    frame = kbench.read_results(tmp_path)
    assert SCHEMA_VERSION == 4 and (frame["schema_version"] == SCHEMA_VERSION).all()
    assert sorted(frame["sampler_label"]) == ["squeak:eps=0.3,qbar=20", "uniform"]
    assert sorted(frame["task_label"]) == ["kpca:components=1;5", "krr"]
    assert frame["base_seed"].isna().all() and "sampler_label_params" not in frame
    # values travel unchanged
    assert frame.loc[frame.sampler == "uniform", "test_mse"].item() == 0.5
    assert sorted(frame["status"]) == ["error", "ok"]
    # version 3 records the sweep and the packages; version 1 did not: one sweep of its own
    assert frame["sweep"].isna().all() and frame["sampler_package"].isna().all()
    assert "unrecorded: 2 cells" in describe_sweeps(frame)
    # version 4 chooses λ on validation rows; older λ-path rows were read at their best test value
    assert frame.loc[frame.task == "krr", "selected_on"].item() == "test"
    assert frame.loc[frame.task == "kpca", "selected_on"].isna().all()  # λ-free: nothing chosen


def test_migration_leaves_its_argument_unchanged_and_keeps_current_rows():
    old = version_1_rows()
    before = old.copy()
    current = migrate(old).iloc[:1]
    pd.testing.assert_frame_equal(old, before)
    assert migrate(current) is current  # nothing to do: the same frame


def test_a_newer_or_unversioned_file_is_refused_with_the_versions(tmp_path):
    newer = tmp_path / "newer.parquet"
    version_1_rows().assign(schema_version=SCHEMA_VERSION + 1).to_parquet(newer)
    with pytest.raises(ValueError, match=rf"schema_version {SCHEMA_VERSION + 1}, written by a "
                                         rf"newer kbench.*up to {SCHEMA_VERSION}: upgrade kbench"):
        read_cell(newer)
    stranger = tmp_path / "stranger.parquet"
    version_1_rows().drop(columns="schema_version").to_parquet(stranger)
    with pytest.raises(ValueError, match="no schema_version: not a kbench result file"):
        read_cell(stranger)
    unknown = tmp_path / "zero.parquet"
    version_1_rows().assign(schema_version=0).to_parquet(unknown)
    with pytest.raises(ValueError, match="schema_version 0, which this kbench cannot migrate"):
        read_cell(unknown)


def test_the_commit_is_dirty_when_the_code_changes_not_when_results_do(tmp_path):
    import subprocess

    from kbench._provenance import checkout_commit

    def git(*args):
        return subprocess.run(["git", "-C", str(tmp_path), *args], capture_output=True, text=True,
                              check=True).stdout

    for folder in ("pkg", "results"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "file.txt").write_text("one\n")
    git("init", "-q")
    git("add", ".")
    git("-c", "user.name=k", "-c", "user.email=k@b", "commit", "-qm", "first")
    head = git("rev-parse", "HEAD").strip()[:12]
    assert checkout_commit(tmp_path / "pkg") == head
    (tmp_path / "results" / "file.txt").write_text("two\n")  # a sweep's published output
    assert checkout_commit(tmp_path / "pkg") == head
    (tmp_path / "pkg" / "file.txt").write_text("two\n")  # the code itself
    assert checkout_commit(tmp_path / "pkg") == head + "+dirty"
    assert checkout_commit(tmp_path / "elsewhere" / "pkg") is None  # not a checkout
