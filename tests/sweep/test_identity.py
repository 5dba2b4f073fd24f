"""A cell's identity: its file covers the seed and λ path (no sweep overwrites another's
cells), its rows record the packages behind it, and a new package version recomputes
exactly the cells that package made."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import kbench
from kbench.sweep.layout import CELLS_DIR, sweep_id
from kbench.sweep.store import read_results
from tests.conftest import add_plugin

ARGS = (["sklearn:diabetes"], ["uniform", "rff"], ["krr", "approximation"], [5, 10])

COPY = """
import kbench
from kbench.samplers.uniform import UniformSampler

class Copy(UniformSampler):
    '''uniform under another name'''
    name = "copy"

@kbench.hookimpl
def kbench_register_samplers():
    return [Copy]
"""


def digests(root: Path) -> dict[str, str]:
    """Every cell file below ``root`` by path, with the SHA-256 of its bytes."""
    return {str(f.relative_to(root)): hashlib.sha256(f.read_bytes()).hexdigest()
            for f in sorted((root / CELLS_DIR).rglob("*.parquet"))}


def cli(args, plugins: Path | None = None, **kwargs) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    if plugins is not None:
        env["PYTHONPATH"] = f"{plugins}{os.pathsep}{env.get('PYTHONPATH', '')}"
    return subprocess.run([sys.executable, "-m", "kbench.cli", *args], capture_output=True,
                          text=True, env=env,
                          **kwargs)


def test_another_lambda_path_or_seed_keeps_every_cell_of_the_first_sweep(tmp_path):
    kbench.run(*ARGS, [1e-3, 1e-2], repetitions=1, out=tmp_path, progress=False)
    first = digests(tmp_path)
    assert len(first) == 8 and all(name.startswith(f"{CELLS_DIR}/{sweep_id(0, [1e-3, 1e-2])}/")
                                   for name in first)
    _, again = kbench.run(*ARGS, [1e-2, 1e-3], repetitions=1, out=tmp_path, progress=False,
                          return_summary=True)
    assert again.counts["already done"] == 8  # the λ path is a set: its order changes nothing
    kbench.run(*ARGS, [1e-4, 1e-3, 1e-2], repetitions=1, out=tmp_path, progress=False)
    kbench.run(*ARGS, [1e-3, 1e-2], repetitions=1, seed=1, out=tmp_path, progress=False)
    after = digests(tmp_path)
    assert len(after) == 24 and {name: after[name] for name in first} == first
    frame = read_results(tmp_path)
    assert frame.groupby("sweep")["base_seed"].unique().map(list).to_dict() == {
        sweep_id(0, [1e-3, 1e-2]): [0], sweep_id(0, [1e-4, 1e-3, 1e-2]): [0],
        sweep_id(1, [1e-3, 1e-2]): [1]}


@pytest.mark.slow  # end to end: three CLI sweeps and their pages
def test_a_leaderboard_over_several_sweeps_names_them_or_takes_the_one_asked_for(tmp_path):
    for lams in ([1e-3, 1e-2], [1e-4, 1e-2]):
        kbench.run(*ARGS, lams, repetitions=1, out=tmp_path, progress=False)
    refused = cli(["leaderboard", str(tmp_path)])
    assert refused.returncode == 2 and "2 sweeps" in refused.stderr
    for lams in ("0.001, 0.01", "0.0001, 0.01"):
        assert f"λ path {lams}" in refused.stderr
    chosen = cli(["leaderboard", str(tmp_path), "--sweep", sweep_id(0, [1e-4, 1e-2])])
    assert chosen.returncode == 0, chosen.stderr
    unknown = cli(["aggregate", str(tmp_path), "--sweep", "seed9_lams-00000000", "--out",
                   str(tmp_path / "a.parquet")])
    assert unknown.returncode == 2 and "holds no sweep 'seed9_lams-00000000'" in unknown.stderr


def test_two_sweeps_started_at_once_into_one_folder_both_keep_their_cells(tmp_path):
    args = ["run", "--datasets", "sklearn:diabetes", "--samplers", "uniform,rff", "--tasks", "krr",
            "--ranks", "5,10", "--lams", "1e-3,1e-2", "--repetitions", "2", "--out", str(tmp_path),
            "--quiet"]
    env = {**os.environ}
    runs = [subprocess.Popen([sys.executable, "-m", "kbench.cli", *args, "--seed", str(seed)],
                             env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for seed in (0, 1)]
    for process in runs:
        _, err = process.communicate(timeout=600)
        assert process.returncode == 0, err
    frame = read_results(tmp_path)
    cells = frame.drop_duplicates(["sweep", "sampler_label", "rank", "repetition"])
    assert cells.groupby("base_seed").size().to_dict() == {0: 8, 1: 8}
    assert (frame["status"] == "ok").all()


@pytest.mark.slow  # end to end: two CLI sweeps across a reinstall
def test_a_new_plugin_version_recomputes_exactly_that_plugins_cells(tmp_path):
    plugins = tmp_path / "plugins"
    plugins.mkdir()
    add_plugin(plugins, "copy-sampler", COPY, version="1.0")
    out = tmp_path / "out"
    args = ["run", "--datasets", "sklearn:diabetes", "--samplers", "uniform,copy", "--tasks",
            "krr,approximation",
            "--ranks", "5,10", "--lams", "1e-3,1e-2", "--repetitions", "1", "--out", str(out),
            "--quiet"]
    assert cli(args, plugins).returncode == 0
    before = read_results(out)
    assert set(zip(before["sampler"], before["sampler_package"],
                   before["sampler_package_version"])) == {
        ("uniform", "kbench", kbench.__version__), ("copy", "copy-sampler", "1.0")}
    assert ((before["task_package"] == "kbench").all()
            and (before["dataset_package"] == "kbench").all())
    files = digests(out)
    (plugins / "copy_sampler-1.0.dist-info").rename(plugins / "copy_sampler-2.0.dist-info")
    metadata = plugins / "copy_sampler-2.0.dist-info" / "METADATA"
    metadata.write_text(metadata.read_text().replace("Version: 1.0", "Version: 2.0"))
    rerun = cli(args, plugins)
    assert rerun.returncode == 0 and "4 already done" in rerun.stdout, rerun.stdout
    after = digests(out)
    changed = {name for name in files if after[name] != files[name]}
    assert changed == {name for name in files if "/copy-" in name} and len(changed) == 4
    assert set(read_results(out).query("sampler == 'copy'")["sampler_package_version"]) == {"2.0"}


@pytest.mark.parametrize("column",
                         ["kbench_version", "sampler_package", "task_package", "dataset_package",
                                    "kernel_package", "sweep", "cell_inputs"])
def test_every_row_records_where_it_came_from(tmp_path, column):
    frame = kbench.run(["sklearn:diabetes"], ["uniform"], ["krr"], [5], [1e-3], repetitions=1,
                       out=tmp_path,
                       progress=False)
    assert frame[column].notna().all() and pd.api.types.is_string_dtype(frame[column])
