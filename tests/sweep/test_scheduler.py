"""Sweeps from the command line: one file per cell, resume after a kill, paired splits,
failures recorded as data, clear usage errors."""

from __future__ import annotations

import gc
import json
import os
import signal
import subprocess
import sys
import time
import weakref
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import kbench
from kbench.sweep import context as context_module
from kbench.sweep import worker
from kbench.sweep.config import SweepConfig
from kbench.sweep.plan import plan
from kbench.sweep.schema import SCHEMA_VERSION
from kbench.sweep.store import read_results, write_cell
from tests.conftest import add_plugin, kbench_in_process

SWEEP = ["--datasets", "synthetic:moons:n=240,sklearn:diabetes", "--samplers",
         "uniform,rp-cholesky,rff",
         "--tasks", "krr,approximation", "--ranks", "5,10,20", "--lams", "1e-4,1e-2",
         "--repetitions", "2", "--quiet"]

FAILING = """
import time
import numpy as np
import kbench
from kbench.samplers.uniform import UniformSampler

class Raiser(UniformSampler):
    name = "raiser"
    def _fit(self, X, kernel, rank, lam, rng):
        raise RuntimeError("boom")

class Sleeper(UniformSampler):
    name = "sleeper"
    def _fit(self, X, kernel, rank, lam, rng):
        time.sleep(60)

class Hog(UniformSampler):
    name = "hog"
    def _fit(self, X, kernel, rank, lam, rng):
        return np.ones(int(4e9))  # 32 GB

class Quitter(UniformSampler):
    name = "quitter"
    def _fit(self, X, kernel, rank, lam, rng):
        import os
        os._exit(0)

class Slow(UniformSampler):
    name = "slow"
    def _fit(self, X, kernel, rank, lam, rng):
        time.sleep(0.15)
        return super()._fit(X, kernel, rank, lam, rng)

class Lingerer(UniformSampler):
    name = "lingerer"
    def _fit(self, X, kernel, rank, lam, rng):
        if rank == 10:
            time.sleep(10)  # past a 4 s cell timeout, within 4 s times the batch's 4 cells
        return super()._fit(X, kernel, rank, lam, rng)

class Victim(UniformSampler):
    '''Its first fit writes its process id to the file $KBENCH_TEST_VICTIM and waits to be
    killed.'''
    name = "victim"
    def _fit(self, X, kernel, rank, lam, rng):
        import os
        path = os.environ["KBENCH_TEST_VICTIM"]
        if not os.path.exists(path):
            with open(path + ".tmp", "w") as stream:
                stream.write(str(os.getpid()))
            os.replace(path + ".tmp", path)
            time.sleep(120)
        return super()._fit(X, kernel, rank, lam, rng)

@kbench.hookimpl
def kbench_register_samplers():
    return [Raiser, Sleeper, Hog, Slow, Quitter, Lingerer, Victim]
"""


@pytest.fixture(scope="module")
def plugin_path(tmp_path_factory):
    root = tmp_path_factory.mktemp("plugins")
    add_plugin(root, "failing-samplers", FAILING)
    return root


def kbench_cli(args, plugin_path=None, **kwargs):
    env = dict(os.environ)
    if plugin_path is not None:
        env["PYTHONPATH"] = f"{plugin_path}{os.pathsep}{env.get('PYTHONPATH', '')}"
    return subprocess.run([sys.executable, "-m", "kbench.cli", *args], capture_output=True,
                          text=True, env=env, **kwargs)


def test_sweep_writes_one_file_per_cell_and_reruns_nothing(tmp_path):
    out = tmp_path / "results"
    first = kbench_cli(["run", *SWEEP, "--jobs", "2", "--out", str(out)])
    assert first.returncode == 0, first.stderr
    files = sorted((out / "cells").rglob("*.parquet"))
    # datasets × samplers × tasks × ranks × repetitions, but for krr on the classification
    # dataset: it cannot run by design, so it is not planned, and the summary says why
    assert len(files) == (2 * 3 * 2 * 3 * 2) - (3 * 3 * 2) == 54
    assert "54 cells:" in first.stdout and "0 already done" in first.stdout
    assert "3 combinations not planned, by design: task 'krr' needs a regression dataset; " \
           "synthetic:moons:n=240 is binary" in first.stdout
    frame = read_results(out)
    cells = frame.drop_duplicates(["dataset", "sampler", "task", "rank", "repetition"])
    assert len(cells) == 54 and (frame["status"] == "ok").all()
    ok = frame[frame.status == "ok"]
    for column in ("rank_realized", "time_sample_s", "time_features_s", "time_fit_s", "peak_rss_mb",
                   "kernel_evals", "blas_threads", "host", "timestamp", "kbench_version"):
        assert ok[column].notna().all(), column
    assert ok.loc[ok.task == "krr", "d_eff"].notna().all()
    second = kbench_cli(["run", *SWEEP, "--out", str(out)])
    assert second.returncode == 0 and "54 already done" in second.stdout


def test_the_cell_timeout_is_per_cell_not_shared_by_a_workers_cells(tmp_path, plugin_path):
    """One worker runs ranks 1, 2, 3 and 10 in order: the cell at rank 10 takes 10 s, past
    --cell-timeout 4 although the four cells' 16 s are not spent; the ones before it stay."""
    out = tmp_path / "results"
    result = kbench_cli(["run", "--datasets", "sklearn:diabetes", "--samplers", "lingerer",
                         "--tasks", "krr",
                         "--ranks", "1,2,3,10", "--lams", "1e-3", "--repetitions", "1",
                         "--cell-timeout", "4",
                         "--quiet", "--out", str(out)], plugin_path, timeout=120)
    assert result.returncode == 1, result.stdout + result.stderr
    frame = read_results(out)
    assert frame.set_index("rank").status.to_dict() == {1: "ok", 2: "ok", 3: "ok", 10: "timeout"}
    assert "no result within --cell-timeout 4 s per cell" in frame.set_index("rank").error[10]


def test_paired_samplers_share_their_splits(tmp_path):
    frame = kbench.run(["synthetic:two-balls:n=200", "sklearn:wine"], ["uniform", "rff", "squeak"],
                       ["approximation"], [10], [1e-3], repetitions=3, out=tmp_path, progress=False)
    checksums = frame.groupby(["dataset", "repetition"]).split_checksum.nunique()
    assert (checksums == 1).all()  # every sampler of a repetition saw the same split
    per_rep = frame.groupby("dataset").split_checksum.nunique()
    assert (per_rep == 3).all()  # and each repetition has its own split
    seeds = frame.groupby(["dataset", "repetition", "sampler"]).seed.first().unstack()
    assert (seeds.nunique(axis=1) == 3).all()  # samplers are seeded independently


def test_killed_sweep_resumes_with_the_missing_cells_only(tmp_path, plugin_path):
    out = tmp_path / "results"
    args = ["run", *SWEEP[:3], "slow,uniform,rff", *SWEEP[4:], "--out", str(out)]
    process = subprocess.Popen([sys.executable, "-m", "kbench.cli", *args], start_new_session=True,
                               env={**os.environ, "PYTHONPATH": str(plugin_path)},
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    cells = out / "cells"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and len(list(cells.rglob("*.parquet"))) < 30:
        assert process.poll() is None, "the sweep ended before it could be killed"
        time.sleep(0.05)
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    before = {p: p.stat().st_mtime_ns for p in cells.rglob("*.parquet")}
    assert 30 <= len(before) < 54, len(before)  # killed halfway (54 cells in all)
    rerun = kbench_cli(args, plugin_path)
    assert rerun.returncode == 0, rerun.stderr
    assert f"{len(before)} already done" in rerun.stdout
    after = {p: p.stat().st_mtime_ns for p in cells.rglob("*.parquet")}
    assert len(after) == 54
    assert all(after[p] == mtime for p, mtime in before.items())  # finished cells untouched
    assert (read_results(out).status != "error").all()


def test_a_worker_killed_from_outside_is_recorded_killed_not_oom_and_a_rerun_computes_it(tmp_path,
                                                                                         plugin_path):
    out, victim = tmp_path / "results", tmp_path / "victim.pid"
    args = ["run", "--datasets", "sklearn:diabetes", "--samplers", "victim", "--tasks", "krr",
            "--ranks", "5",
            "--lams", "1e-3", "--repetitions", "1", "--quiet", "--out", str(out)]
    env = {**os.environ, "PYTHONPATH": str(plugin_path), "KBENCH_TEST_VICTIM": str(victim)}
    process = subprocess.Popen([sys.executable, "-m", "kbench.cli", *args], env=env, text=True,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    # the worker writes its pid when it fits
    while not victim.exists() and time.monotonic() < deadline:
        assert process.poll() is None, process.communicate()
        time.sleep(0.05)
    os.kill(int(victim.read_text()), signal.SIGKILL)
    stdout, stderr = process.communicate(timeout=120)
    assert process.returncode == 1, stderr
    frame = read_results(out)
    assert (frame.status == "killed").all() and frame.error.str.contains("from outside "
                                                                         "kbench").all()
    rerun = subprocess.run([sys.executable, "-m", "kbench.cli", *args], env=env,
                           capture_output=True, text=True)
    assert rerun.returncode == 0 and "0 already done" in rerun.stdout, rerun.stderr
    assert (read_results(out).status == "ok").all()


def test_stale_temporary_files_are_swept_and_an_unwritable_folder_refused_before_any_fit(tmp_path):
    cells = tmp_path / "r" / "cells" / "some" / "folder"
    cells.mkdir(parents=True)
    stale, fresh = cells / ".rank5_rep0.abc.tmp", cells / ".rank10_rep0.def.tmp"
    stale.write_text("half a cell")
    fresh.write_text("a write in progress")
    os.utime(stale, (time.time() - 2 * 3600, time.time() - 2 * 3600))  # older than STALE_SECONDS
    done = kbench_cli(["run", *SWEEP, "--out", str(tmp_path / "r")])
    assert done.returncode == 0, done.stderr
    assert not stale.exists() and fresh.exists()
    (tmp_path / "blocked").mkdir()
    (tmp_path / "blocked" / "cells").write_text("a file where the cells go")
    refused = kbench_cli(["run", *SWEEP, "--out", str(tmp_path / "blocked")])
    assert refused.returncode == 2 and "cannot write results in" in refused.stderr, refused.stderr
    assert "Traceback" not in refused.stderr


def test_failures_are_recorded_and_the_sweep_goes_on(tmp_path, plugin_path):
    out = tmp_path / "results"
    result = kbench_cli(["run", "--datasets", "sklearn:diabetes", "--samplers",
                         "uniform,raiser,sleeper,hog,quitter",
                         "--tasks", "krr", "--ranks", "5", "--lams", "1e-3", "--repetitions", "1",
                         "--jobs", "2", "--cell-timeout", "3", "--memory-limit", "1000", "--quiet",
                         "--out", str(out)], plugin_path, timeout=120)
    assert result.returncode == 1, result.stdout + result.stderr  # some cells failed
    frame = read_results(out)
    status = frame.groupby("sampler").status.first().to_dict()
    assert status == {"uniform": "ok", "raiser": "error", "sleeper": "timeout", "hog": "oom",
                      "quitter": "error"}
    errors = frame.groupby("sampler").error.first()
    assert "RuntimeError: boom" in errors["raiser"]
    assert "--cell-timeout 3" in errors["sleeper"]
    assert "MemoryError" in errors["hog"]
    assert "worker exited with code 0 without writing the cell" in errors["quitter"]
    assert "1 ok, 2 error, 1 timeout, 1 oom" in result.stdout


@pytest.mark.parametrize(
    "change, message",
    [
        ({"--samplers": "unifrom"}, "did you mean 'uniform'"),
        ({"--tasks": "kpac"}, "did you mean 'kpca'"),
        ({"--datasets": "synthetic:two-bals"}, "did you mean 'two-balls'"),
        ({"--ranks": "10,abc"}, "--ranks must be an integer in [1, 10000000]"),
        ({"--ranks": "0,5"}, "--ranks must be an integer in [1, 10000000]"),
        ({"--ranks": "2.5"}, "--ranks must be an integer in [1, 10000000]"),
        ({"--lams": "-1e-3"}, "--lams must be a finite number > 0"),
        ({"--kernel": "gausian"}, "did you mean 'gaussian'"),
        ({"--samplers": "squeak:qbarr=3"}, "did you mean 'qbar'"),
        ({"--ranks": "inf"}, "--ranks must be an integer in [1, 10000000]"),
        ({"--datasets": ""}, "no datasets given"),
        ({"--samplers": ","}, "--samplers ',' has an empty item"),
    ],
)
def test_bad_sweep_input_exits_with_code_2(tmp_path, change, message):
    args = dict(zip(SWEEP[0:10:2], SWEEP[1:10:2]))
    args.update(change)
    flat = [x for pair in args.items() for x in pair]
    result = kbench_in_process(["run", *flat, "--out", str(tmp_path / "r")])
    assert result.returncode == 2, result.stdout + result.stderr
    assert message in " ".join(result.stderr.split())
    assert not list((tmp_path / "r").rglob("*.parquet"))


def test_output_directory_that_is_a_file(tmp_path):
    target = tmp_path / "file.txt"
    target.write_text("x")
    result = kbench_in_process(["run", *SWEEP, "--out", str(target)])
    assert result.returncode == 2 and "is a file, not a folder" in result.stderr


def test_results_of_a_newer_schema_version_are_refused(tmp_path):
    cells = tmp_path / "cells"
    cells.mkdir()
    pd.DataFrame({"dataset": ["d"],
                  "schema_version": [SCHEMA_VERSION + 1]}).to_parquet(cells / "new.parquet")
    with pytest.raises(ValueError, match=f"schema_version {SCHEMA_VERSION + 1}, written by a newer "
                                         "kbench; this kbench reads versions up to "
                                         f"{SCHEMA_VERSION}"):
        read_results(tmp_path)
    result = kbench_cli(["leaderboard", str(tmp_path)])
    assert result.returncode == 2 and "schema_version" in result.stderr


def test_read_results_keeps_the_newest_row_of_an_identity(tmp_path):
    base = {"dataset": "d", "kernel": "k", "sampler_label": "s", "task_label": "krr", "rank": 5,
            "lam": 1e-3, "components": np.nan, "repetition": 0, "base_seed": 0, "status": "ok"}
    write_cell(tmp_path / "cells" / "a.parquet",
               [{**base, "test_mse": 1.0, "timestamp": "2026-01-01T00:00"}])
    write_cell(tmp_path / "cells" / "b.parquet",
               [{**base, "test_mse": 2.0, "timestamp": "2026-02-01T00:00"}])
    frame = read_results(tmp_path)
    assert len(frame) == 1 and frame.test_mse.iloc[0] == 2.0


def test_atomic_write_leaves_nothing_on_failure(tmp_path, monkeypatch):
    import pyarrow.parquet as pq

    def broken(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(pq, "write_table", broken)
    with pytest.raises(OSError, match="disk full"):
        write_cell(tmp_path / "cells" / "x.parquet", [{"a": 1}])
    assert list((tmp_path / "cells").iterdir()) == []


def test_list_json_shows_the_kmeans_plugin_with_its_package():
    result = kbench_cli(["list", "samplers", "--json"])
    rows = {row["name"]: row for row in json.loads(result.stdout)["samplers"]}
    assert rows["kmeans"]["source"] == "kbench-kmeans"


def test_leaderboard_command(tmp_path):
    kbench.run(["sklearn:diabetes"], ["uniform", "rff"], ["krr"], [5, 10], [1e-3], repetitions=2,
               out=tmp_path, progress=False)
    result = kbench_cli(["leaderboard", str(tmp_path), "--out", str(tmp_path / "board")])
    assert result.returncode == 0
    text = Path(tmp_path / "board" / "leaderboard.md").read_text()
    assert "## krr: test_mse" in text and "| uniform" in text and "## Cells by status" in text


def test_a_dataset_that_cannot_be_loaded_fails_its_cells_only(tmp_path):
    broken = tmp_path / "broken.csv"  # exists (the plan accepts it), but cannot be parsed
    broken.write_bytes(b"a,b\n1,2,3,4\n\xff\xfe")
    spec = f"file:{broken}"
    frame, summary = kbench.run([spec, "sklearn:diabetes"], ["uniform"], ["krr"],
                                [5], [1e-3], repetitions=1, out=tmp_path / "out", progress=False,
                                return_summary=True)
    status = frame.groupby("dataset").status.first().to_dict()
    assert status == {spec: "error", "sklearn:diabetes": "ok"}
    assert f"loading {spec} failed" in frame.loc[frame.status == "error", "error"].iloc[0]
    assert summary.failed == 1


def test_a_missing_file_dataset_is_refused_before_any_cell(tmp_path):
    with pytest.raises(ValueError, match="no such file"):
        kbench.run(["file:/no/such/data.csv", "sklearn:diabetes"], ["uniform"], ["krr"], [5],
                   [1e-3],
                   repetitions=1, out=tmp_path, progress=False)
    assert not list(tmp_path.rglob("*.parquet"))


def test_rows_record_what_the_sampler_did(tmp_path):
    """sampler_lam is the path's smallest λ; rls-fast scores never exceed the exact ones
    (Alaoui & Mahoney Lemma 2: a deterministic bound, so only rounding is allowed); SQUEAK
    records its dictionary; time_exact_s is the exact baseline's cost."""
    lams = [1e-3, 1e-2]
    frame = kbench.run(["sklearn:diabetes"], ["uniform", "rls", "rls-fast", "squeak"],
                       ["krr", "kpca"],
                       [20], lams, repetitions=2, out=tmp_path, progress=False)
    assert (frame.status == "ok").all()
    uniform = frame.sampler == "uniform"
    assert (frame.loc[~uniform, "sampler_lam"] == 1e-3).all() and frame.loc[uniform,
                                                                            "sampler_lam"].isna().all()
    fast = frame[frame.sampler == "rls-fast"]
    assert (fast.scores_max_excess <= 1e-10).all() and (fast.scores_sum_ratio <= 1 + 1e-10).all()
    exact = frame[frame.sampler == "rls"]
    assert np.allclose(exact.scores_max_excess, 0,
                       atol=1e-10) and np.allclose(exact.scores_sum_ratio, 1)
    assert frame.loc[~frame.sampler.str.startswith("rls"), "scores_max_excess"].isna().all()
    squeak = frame[frame.sampler == "squeak"]
    assert (squeak.unique_atoms <= squeak.dictionary_size).all() and (squeak.unique_atoms > 0).all()
    assert (frame.time_exact_s > 0).all()


def forked_children(parent: int) -> list[int]:
    """The children of ``parent`` that are forks of it, its workers (same command line), not
    the programs it runs and lets exit on their own (git for the provenance, multiprocessing's
    resource tracker), which may outlive it by a moment."""
    try:
        own = Path(f"/proc/{parent}/cmdline").read_bytes()
        pids = [int(pid)
                for pid in Path(f"/proc/{parent}/task/{parent}/children").read_text().split()]
    except (FileNotFoundError, ProcessLookupError):
        return []
    forks = []
    for pid in pids:
        try:
            if Path(f"/proc/{pid}/cmdline").read_bytes() == own:
                forks.append(pid)
        except (FileNotFoundError, ProcessLookupError):  # it exited meanwhile
            pass
    return forks


def still_running(pid: int) -> bool:
    """The process exists and is not a zombie (state Z: exited, not yet reaped)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state not in ("Z", "X")


@pytest.mark.parametrize("signal_name", ["SIGTERM", "SIGINT", "SIGKILL"])
def test_a_signal_to_kbench_run_stops_its_workers(tmp_path, plugin_path, signal_name):
    """The workers die with the sweep (no orphan keeps computing; after a SIGKILL, which the
    sweep cannot pass on, by the kernel's parent-death signal); nothing is half-written.
    The sweep starts with the signal's default disposition, as from a terminal: a process
    started with SIGINT ignored (nohup, a background job of a script) keeps ignoring it, as
    Unix programs do, so the test must not inherit that from whoever runs pytest."""
    import signal
    import time

    env = {**os.environ,
           "PYTHONPATH": f"{plugin_path}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    signum = getattr(signal, signal_name)
    process = subprocess.Popen(
        [sys.executable, "-m", "kbench.cli", "run", "--datasets", "sklearn:diabetes", "--samplers",
         "sleeper", "--tasks", "krr", "--ranks", "5", "--lams", "1e-3", "--repetitions", "1",
         "--quiet", "--out", str(tmp_path / "out")],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        # (SIGKILL has no handler)
        preexec_fn=lambda: signum != signal.SIGKILL and signal.signal(signum, signal.SIG_DFL))
    deadline = time.monotonic() + 60
    while not (workers := forked_children(process.pid)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert workers, "no worker started"
    process.send_signal(signum)
    assert process.wait(timeout=30) != 0  # the sweep stops its workers before exiting
    # no worker keeps running: each is gone, or a zombie (dead, its exit status not yet
    # collected: an orphan's is collected by init a moment later)
    deadline = time.monotonic() + 10
    while (running := [pid for pid in workers
                       if still_running(pid)]) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not running
    assert not [p for p in (tmp_path / "out").rglob("*") if p.is_file()]


def test_the_exact_baseline_is_shared_through_the_data_cache_and_never_stale(tmp_path, monkeypatch):
    """`kbench prepare --exact` computes it once; a run with the same data cache loads it
    (exact values, its recorded cost) instead of computing it; a file of another split is
    ignored."""
    from kbench.exact.baseline import _shared_key
    from kbench.exact.dense import ExactBaseline
    from kbench.sweep.context import load_split_cached, prepare_exact, split_checksum
    from kbench.sweep.layout import exact_path

    dataset, kernel, cache = "sklearn:diabetes", "gaussian:sigma=median", tmp_path / "data"
    path = prepare_exact(dataset, kernel, 0, 0, cache, exact_max_n=5000)
    assert path == exact_path(cache, dataset, kernel, 0, 0) and path.is_file()
    data = load_split_cached(dataset, 0, 0, cache)
    fitted = kbench.make_kernel("gaussian", sigma="median").fit(data.X_train)
    key = _shared_key(data, fitted, (path, split_checksum(data)), dense=True)
    saved, fresh = ExactBaseline.load(path, key), ExactBaseline(data, fitted)
    for name in ("s", "U", "K_val", "K_test", "diag_test", "trace", "ones_K_ones"):
        np.testing.assert_array_equal(getattr(saved, name), getattr(fresh, name))
    assert ExactBaseline.load(path, {**key, "split_checksum": "another split"}) is None

    def no_recomputation(self, data, kernel):
        raise AssertionError("the exact baseline was recomputed")

    monkeypatch.setattr(ExactBaseline, "__init__", no_recomputation)
    frame = kbench.run(dataset, "uniform", "krr", [10], [1e-3], repetitions=[0],
                       out=tmp_path / "out",
                       data_cache=cache, progress=False)
    assert (frame.status == "ok").all() and (frame.time_exact_s == saved.seconds).all()
    assert frame.test_mse_exact.iloc[0] == pytest.approx(
        np.mean((fresh.ridge_path(data.y_train[:, None], [1e-3]).test[0, :, 0] - data.y_test) ** 2),
        rel=1e-12)


def test_a_time_limit_records_the_fits_past_their_share_as_timeouts(tmp_path, plugin_path):
    """--time-limit (a cluster job's): every cell is written before it, the slow fits as timeout."""
    start = time.monotonic()
    result = kbench_cli(["run", "--datasets", "sklearn:diabetes", "--samplers", "uniform,sleeper",
                         "--tasks", "krr", "--ranks", "5,10", "--lams", "1e-3", "--repetitions",
                         "1",
                         "--time-limit", "8", "--out", str(tmp_path), "--quiet"], plugin_path,
                        timeout=120)
    elapsed = time.monotonic() - start
    assert result.returncode == 1, result.stderr[-2000:]
    frame = read_results(tmp_path)
    assert frame.groupby("sampler").status.unique().map(tuple).to_dict() == {"uniform": ("ok",),
                                                                             "sleeper": ("timeout",
                                                                                         )}
    assert frame[frame.sampler == "sleeper"].error.str.contains("share").all()
    # not waiting for the sleeper, whose fit alone takes 60 s (a loaded machine's start-up aside)
    assert elapsed < 45


def test_a_time_limit_holds_while_the_parent_computes_the_exact_baseline(tmp_path, monkeypatch):
    """The shared exact baseline (a matrix-free one takes minutes) is computed in the parent
    before any fit: past the sweep's --time-limit its cells are timeouts of the exact stage,
    and a dataset prepared after the limit is not loaded at all."""
    from kbench.exact.dense import ExactBaseline

    def slow(self, data, kernel):
        time.sleep(120)  # a stand-in for minutes of kernel passes, cut by the limit's alarm

    monkeypatch.setattr(ExactBaseline, "__init__", slow)
    start = time.monotonic()
    frame = kbench.run("sklearn:diabetes,synthetic:friedman1:n=200", "uniform", "krr", [10], [1e-3],
                       repetitions=[0], out=tmp_path, time_limit=2, progress=False)
    assert time.monotonic() - start < 60  # 2 s, plus loading and writing on a loaded machine
    assert (frame.status == "timeout").all()
    first, second = (frame[frame.dataset == name].iloc[0]
                     for name in ("sklearn:diabetes", "synthetic:friedman1:n=200"))
    assert first.failed_in == "exact" and ("the exact baseline on sklearn:diabetes did not finish "
                                           "within the sweep's --time-limit (2 s)" in first.error)
    assert (second.failed_in == "dataset"
            and "had passed before its data were loaded" in second.error)


def test_a_failing_exact_baseline_is_recorded_by_the_cells_that_need_it(tmp_path, monkeypatch):
    """The workflow's exact job does not fail on it: its file says why there is no baseline,
    and the run's cells that need one record the error (the sweep goes on)."""
    from kbench.exact.dense import ExactBaseline
    from kbench.sweep.context import prepare_exact

    def overflow(self, data, kernel):
        raise FloatingPointError("kernel values overflow")

    monkeypatch.setattr(ExactBaseline, "__init__", overflow)
    path = prepare_exact("sklearn:diabetes", "gaussian:sigma=median", 0, 0, tmp_path / "data",
                         exact_max_n=5000)
    with np.load(path) as archive:
        assert "overflow" in str(archive["absent"])
    frame = kbench.run("sklearn:diabetes", "uniform", "krr,approximation", [10], [1e-3],
                       repetitions=[0],
                       out=tmp_path / "out", data_cache=tmp_path / "data", progress=False)
    assert frame.groupby("task").status.unique().map(tuple).to_dict() == {"krr": ("error",),
                                                                          "approximation": ("error",
                                                                                            )}
    assert frame.error.str.contains("overflow").all()


def test_a_job_frees_its_fit_when_it_returns(tmp_path, monkeypatch):
    """A worker runs its jobs one after another: each fit (a pivoted Cholesky factor holds
    n × rank floats) is freed when its job returns, not left to the garbage collector while
    the next job fits (10⁶-row jobs ran out of memory so)."""
    data, kernel, lams = "synthetic:friedman1:n=300", "gaussian:sigma=median", [1e-3]
    job = plan(SweepConfig([data], ["rp-cholesky"], ["krr", "kpca"], [10], lams, [0], kernel,
                           tmp_path))[0]
    context = context_module.prepare_context(job.dataset, job.kernel, 0, 0, [],
                                             context_module.environment(), lams=lams)
    fits, check_fit = [], worker.check_fit

    def recording(approx, *args, **kwargs):
        fits.append(weakref.ref(approx))
        return check_fit(approx, *args, **kwargs)

    monkeypatch.setattr(worker, "check_fit", recording)
    gc.disable()
    try:
        worker.run_job(job, context)
        assert len(fits) == 1 and fits[0]() is None
    finally:
        gc.enable()
    assert sorted(p.name for p in tmp_path.rglob("*.parquet"))  # its cells were written


def test_the_kernel_chosen_on_a_split_is_chosen_once_for_every_job(tmp_path, monkeypatch):
    """σ by validation (eigendecompositions over a grid) is chosen by the first job on a
    split and read by the others from the data cache: the same σ to the last digit; a file
    of another split is not read."""
    data, kernel = "synthetic:friedman1:n=300", "gaussian:sigma=cv"
    job = plan(SweepConfig([data], ["uniform"], ["krr"], [10], [1e-3], [0], kernel, tmp_path))[0]
    calls = []
    cv_sigma = kbench.kernels.bandwidth.cv_sigma
    monkeypatch.setattr(kbench.kernels.stationary, "cv_sigma", lambda *a, **k: calls.append(1)
                        or cv_sigma(*a, **k))
    contexts = [context_module.prepare_context(job.dataset, job.kernel, 0, 0, [],
                                               context_module.environment(), tmp_path)
                for _ in range(2)]
    assert len(calls) == 1
    assert contexts[0].kernel.spec() == contexts[1].kernel.spec() and contexts[0].kernel.sigma_ > 0
    saved = next((tmp_path / "kernels").rglob("*.json"))
    saved.write_text(saved.read_text().replace(contexts[0].split_checksum, "another split"))
    context_module.prepare_context(job.dataset, job.kernel, 0, 0, [], context_module.environment(),
                                   tmp_path)
    assert len(calls) == 2


def test_a_task_whose_prepare_fails_records_it_in_each_of_its_cells(tmp_path, monkeypatch):
    """The failure of a task's ``prepare`` is not swallowed: each of the task's cells records
    it (failed_in task) without evaluating; the other task's cells are scored."""
    data, lams = "synthetic:friedman1:n=200", [1e-3]
    jobs = plan(SweepConfig([data], ["uniform"], ["krr", "approximation:max_n=50"], [5, 10], lams,
                            [0],
                            "gaussian:sigma=median", tmp_path))
    tasks = {cell.task: kbench.registry.create(cell.task) for job in jobs for cell in job.cells}
    approximation = next(task for task in tasks.values() if task.name == "approximation")
    monkeypatch.setattr(type(approximation), "prepare", lambda self, data, kernel: 1 / 0)
    monkeypatch.setattr(type(approximation), "evaluate", lambda *args,
                        **kwargs: pytest.fail("evaluated"))
    context = context_module.prepare_context(jobs[0].dataset, jobs[0].kernel, 0, 0, tasks,
                                             context_module.environment(), lams=lams)
    for job in jobs:
        worker.run_job(job, context)
    frame = read_results(tmp_path / "cells")
    assert set(frame.loc[frame.task == "krr", "status"]) == {"ok"}
    failed = frame[frame.task == "approximation"]
    assert (len(failed) == 2 and set(failed.status) == {"error"}
            and set(failed.failed_in) == {"task"})
    assert failed.error.str.startswith("preparing the task failed: ZeroDivisionError").all()
