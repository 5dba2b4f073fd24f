"""The workflow on a real SLURM cluster (`.ci/slurm up` starts a throwaway one; .ci/run does
so before the tests). Skipped, with the reason, where no cluster answers."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import time
from pathlib import Path

import pandas as pd
import pytest

from tests.conftest import ROOT, add_plugin, snakemake

TINY = {
    "out": "out",
    "seed": 0,
    "repetitions": 1,
    "kernel": "gaussian:sigma=median",
    "datasets": ["sklearn:diabetes"],
    "samplers": ["uniform", "rff"],
    "tasks": ["krr", "approximation"],
    "ranks": [5, 10],
    "lams": [1.0e-4, 1.0e-2],
}
#: values, not timings, that a cluster run and a local run share exactly
VALUES = ["test_mse", "train_mse", "test_mse_exact", "rel_fro_error", "rel_spec_error",
          "rank_realized",
          "split_checksum", "blas_threads", "status"]
SLEEPY = '''
import os
import time
import kbench
from kbench.samplers.uniform import UniformSampler

class Sleepy(UniformSampler):
    """Uniform landmarks; a fit at rank 10 first sleeps ``seconds``, or with the file
    $KBENCH_SLEEP_ONCE named, only while that file does not exist (it creates it): a retry
    does not sleep."""
    name = "sleepy"

    def __init__(self, seconds: float = 0.0):
        super().__init__()
        self.seconds = seconds

    def _fit(self, X, kernel, rank, lam, rng):
        once = os.environ.get("KBENCH_SLEEP_ONCE")
        if rank == 10 and not (once and os.path.exists(once)):
            if once:
                open(once, "w").close()
            time.sleep(self.seconds)
        return super()._fit(X, kernel, rank, lam, rng)

@kbench.hookimpl
def kbench_register_samplers():
    return [Sleepy]
'''


def _cluster_answers() -> str | None:
    """None when an idle SLURM node answers, else why the tests are skipped."""
    if importlib.util.find_spec("snakemake_executor_plugin_slurm") is None:
        return ("Snakemake's SLURM executor plugin is not installed: pip install -e '.[slurm]' "
                "(`.ci/slurm up` does)")
    if shutil.which("sinfo") is None or shutil.which("sbatch") is None:
        return "no SLURM client on this machine (start a throwaway cluster with `.ci/slurm up`)"
    try:
        states = subprocess.run(["sinfo", "-h", "-o", "%T"], capture_output=True, text=True,
                                timeout=20)
    except subprocess.TimeoutExpired:
        return "sinfo did not answer within 20 s"
    if states.returncode != 0 or not any(s.startswith(("idle", "mix", "alloc"))
                                         for s in states.stdout.split()):
        return (f"no SLURM node is up (sinfo: {(states.stdout + states.stderr).strip()[:200]!r}); "
                "`.ci/slurm up`")
    return None


# one worker runs both: the throwaway cluster has one node, and the runtime test counts on it
pytestmark = [pytest.mark.slurm, pytest.mark.slow, pytest.mark.xdist_group("slurm"),
              pytest.mark.skipif(_cluster_answers() is not None,
                                                    reason=str(_cluster_answers()))]


@pytest.fixture(scope="module")
def sleepy_path(tmp_path_factory):
    root = tmp_path_factory.mktemp("plugins")
    add_plugin(root, "sleepy-sampler", SLEEPY)
    return root


def on_slurm(workdir: Path, config: dict, **kwargs):
    """The repository's SLURM profile, polling job states every 2 s instead of its 10 s (a
    throwaway cluster answers at once; each stage of the DAG would otherwise wait a poll) and
    waiting 5 s instead of 60 for a failed job's files (the cluster shares this machine's
    file system, with no latency to wait out)."""
    return snakemake(workdir, config, "--workflow-profile", str(ROOT / "profiles" / "slurm"),
                     "--seconds-between-status-checks", "2", "--latency-wait", "5", **kwargs)


def cells(workdir: Path) -> pd.DataFrame:
    keys = ["sampler_label", "task_label", "rank", "lam"]
    return pd.read_parquet(workdir / "out" / "all.parquet").sort_values(keys).reset_index(drop=True)


def test_the_slurm_profile_runs_a_sweep_to_the_leaderboard_with_the_local_numbers(tmp_path,
                                                                                  sleepy_path):
    """Unmodified profile, no accounting database (squeue status checks), runtime = 1 min:
    kbench gives the run job's fits 31 s (Sweep.time_limit; a quarter each for the four
    samplers at the start, the time the first three leave to the last), so the fit that sleeps 300 s
    is recorded as timeout before SLURM's limit, its siblings are kept, the leaderboard is written,
    and every value equals a local run's. The distributed squeak's merge tree runs as separate SLURM
    jobs, one per node (2 leaves, 1 merge), before its run job."""
    config = {**TINY, "samplers": ["uniform", "rff", "squeak:shards=2", "sleepy:seconds=300"],
              "resources": {"runtime": 1}}
    (tmp_path / "slurm").mkdir()
    (tmp_path / "local").mkdir()
    # the local run meanwhile: the cluster's jobs mostly wait on its scheduler and the sleepy fit
    local = snakemake(tmp_path / "local", config, "--cores", "1", plugins=sleepy_path,
                      background=True)
    start = time.monotonic()
    result = on_slurm(tmp_path / "slurm", config, plugins=sleepy_path)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-3000:]
    assert "Error in rule" not in output  # no SLURM kill
    # every job but the local aggregate and report ones went through sbatch
    assert output.count("submitted with SLURM jobid") == 1 + 1 + 3 + 1, output[-3000:]
    assert time.monotonic() - start < 600
    local_output, _ = local.communicate(timeout=600)
    assert local.returncode == 0, local_output[-3000:]
    by_slurm, by_local = cells(tmp_path / "slurm"), cells(tmp_path / "local")
    status = by_slurm.groupby(["sampler", "rank"]).status.unique().map(tuple).to_dict()
    assert status.pop(("sleepy", 10)) == ("timeout",) and set(status.values()) == {("ok",)}
    assert by_slurm[by_slurm.status == "timeout"].error.str.contains("time-limit").all()
    values = [c for c in VALUES if c in by_slurm]
    pd.testing.assert_frame_equal(by_slurm[values], by_local[values], check_exact=True)
    header = (tmp_path / "slurm" / "out" / "leaderboard.md").read_text()
    assert "--workflow-profile" in header
    assert "(executor: `slurm; 1 prepare, 1 exact, 3 part, 1 run jobs`)" in header
    assert (by_slurm[by_slurm.sampler_label == "squeak:shards=2"].merge_tree == "jobs").all()
    assert (tmp_path / "slurm" / "out" / "leaderboard.html").is_file()


def test_a_job_slurm_kills_keeps_its_cells_and_the_retry_finishes_the_rest(tmp_path, sleepy_path):
    """The run job is cancelled while its second fit sleeps: the first fit's cell stays (same
    file), the profile's retry computes only the missing one (its fit does not sleep again),
    and the workflow completes."""
    config = {**TINY, "samplers": ["sleepy:seconds=110"], "tasks": ["krr"],
              "resources": {"runtime": 2}}
    process = on_slurm(tmp_path, config, plugins=sleepy_path, background=True,
                       env={"KBENCH_SLEEP_ONCE": str(tmp_path / "slept")})
    cells_dir = tmp_path / "out" / "cells"
    try:
        deadline = time.monotonic() + 300
        while not list(cells_dir.rglob("rank5_rep0.parquet")) and time.monotonic() < deadline:
            time.sleep(0.5)
        first = list(cells_dir.rglob("rank5_rep0.parquet"))
        assert first, "the first cell was never written"
        written = pd.read_parquet(first[0]).timestamp.tolist()  # when kbench computed it
        jobs = subprocess.run(["squeue", "-h", "-o", "%i|%k"], capture_output=True,
                              text=True).stdout.split()
        run_jobs = [line.split("|")[0] for line in jobs if "rule_run" in line]
        assert len(run_jobs) == 1, jobs
        subprocess.run(["scancel", run_jobs[0]], check=True)
        output, _ = process.communicate(timeout=600)
    finally:
        process.kill()
    assert process.returncode == 0, output[-4000:]
    assert "CANCELLED" in output or "failed" in output.lower()
    frame = cells(tmp_path)
    assert (frame.status == "ok").all() and sorted(frame["rank"].unique()) == [5, 10]
    assert pd.read_parquet(first[0]).timestamp.tolist() == written  # kept, not recomputed
