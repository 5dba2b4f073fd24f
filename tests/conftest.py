"""Shared fixtures: small seeded data and kernels, plugin packages, a built leaderboard page."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import uuid
from pathlib import Path

import numpy as np
import pytest
import yaml
from click.testing import CliRunner
from threadpoolctl import threadpool_limits

import kbench
from kbench.cli import main
from kbench.reporting.build import build

#: the repository's root
ROOT = Path(__file__).resolve().parents[1]

# The suite starts a few hundred Python processes (the CLI, Snakemake and its jobs) on
# kbench's sources, and each compiles them anew (0.7 s of a 1.8 s start) unless Python may
# cache their bytecode: its default, which an environment's PYTHONDONTWRITEBYTECODE turns off.
# The tests' processes cache it (in the checkout's ignored __pycache__ folders).
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
sys.dont_write_bytecode = False


@pytest.fixture(scope="session", autouse=True)
def one_blas_thread_per_xdist_worker():
    """Under pytest-xdist every core runs a worker: BLAS threads of one worker competing with
    the others for the cores spin instead of computing (a 4-second test took 130 s), so each
    worker computes with one BLAS thread. Alone, pytest keeps the machine's default."""
    if "PYTEST_XDIST_WORKER" not in os.environ:
        yield
        return
    with threadpool_limits(limits=1):
        yield

def pytest_xdist_auto_num_workers(config) -> int:
    """``-n auto``: a worker per core, and one more for the ``slurm`` group when the slow tests
    run (``-m "not network"``), whose worker spends its minutes waiting on the cluster's
    scheduler, not computing; bare ``pytest`` deselects them, and a third worker on two cores
    only slows the longest group."""
    slurm = "not slow" not in (config.getoption("markexpr") or "")
    return (os.cpu_count() or 1) + slurm


COLUMN_SAMPLERS = ["uniform", "rls", "rls-fast", "squeak", "bless", "recursive-rls",
                   "pivoted-cholesky", "rp-cholesky"]
FEATURE_SAMPLERS = ["rff", "orf", "sorf", "fastfood"]
ALL_SAMPLERS = COLUMN_SAMPLERS + FEATURE_SAMPLERS


@pytest.fixture
def data300():
    """300 points in 5-D with a Gaussian kernel at the median bandwidth."""
    X = np.random.default_rng(1).standard_normal((300, 5))
    kernel = kbench.make_kernel("gaussian", sigma="median").fit(X)
    return X, kernel


def exact_leverage_scores(K: np.ndarray, lam: float) -> np.ndarray:
    """diag(K(K + nλI)⁻¹) by a dense solve (independent of kbench.lowrank.linalg)."""
    n = K.shape[0]
    return np.diag(np.linalg.solve(K + n * lam * np.eye(n), K)).copy()


TOY_SAMPLER = """
import kbench
from kbench.reporting.build import build
from kbench.samplers.uniform import UniformSampler

class {cls}(UniformSampler):
    '''{doc}'''
    name = "{name}"

@kbench.hookimpl
def {hook}():
    return [{cls}]
"""


def kbench_in_process(args: list[str]) -> subprocess.CompletedProcess:
    """``kbench ARGS`` run by click's test runner in this process: the command's exit code and
    streams without a second interpreter's two-second start. For commands that load no plugin
    of a test folder and stop before any sweep; an exception that is not the command's exit
    is raised (a traceback the user would see)."""
    result = CliRunner().invoke(main, args)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return subprocess.CompletedProcess(args, result.exit_code, result.stdout, result.stderr)


def add_plugin(root, dist: str, body: str, version: str = "1.0") -> str:
    """Write module + ``<dist>-<version>.dist-info`` (METADATA, entry_points.txt) under ``root``."""
    module = f"kbench_test_{dist.replace('-', '_')}_{uuid.uuid4().hex[:8]}"
    (root / f"{module}.py").write_text(textwrap.dedent(body))
    # wheel naming: no dash in the name
    info = root / f"{dist.replace('-', '_')}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n")
    (info / "entry_points.txt").write_text(f"[kbench]\n{dist} = {module}\n")
    return module


@pytest.fixture(scope="session")
def leaderboard_page(tmp_path_factory) -> Path:
    """A leaderboard built by this kbench: 3 samplers × 2 tasks on two datasets, one of them
    under two kernels (the page tests read it, never the committed results/)."""
    out = tmp_path_factory.mktemp("leaderboard")
    for kernel in ("gaussian:sigma=median", "laplacian:sigma=median"):
        kbench.run(["sklearn:diabetes", "synthetic:smile:n=300"], ["uniform", "rls", "rff"],
                   ["krr", "approximation"],
                   [5, 20], [1e-3, 1e-2], repetitions=2, kernel=kernel, out=out / "cells",
                   progress=False)
    build(kbench.read_results(out / "cells"), out, command="pytest")
    return out / "leaderboard.html"


@pytest.fixture(scope="module")
def page(leaderboard_page) -> Path:
    return leaderboard_page


def snakemake(workdir: Path, config: dict, *args: str, plugins: Path | None = None,
              env: dict | None = None,
              background: bool = False, timeout: float = 900):
    """Run the repository's Snakefile in ``workdir`` on ``config`` (written to
    ``workdir/config.yaml``) with Snakemake's ``args``. ``plugins`` goes on PYTHONPATH (the
    jobs, sbatch's included, inherit the environment), ``env`` adds variables. Returns the
    finished process, or with ``background`` the running one (output merged into stdout)."""
    Path(workdir).mkdir(parents=True, exist_ok=True)
    (Path(workdir) / "config.yaml").write_text(yaml.safe_dump(config))
    environment = {**os.environ, **(env or {})}
    if plugins is not None:
        environment["PYTHONPATH"] = f"{plugins}{os.pathsep}{environment.get('PYTHONPATH', '')}"
    command = [sys.executable, "-m", "snakemake", "--snakefile", str(ROOT / "Snakefile"),
               "--directory",
               str(workdir), "--configfile", str(Path(workdir) / "config.yaml"), *args]
    if background:
        return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True,
                                env=environment)
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=environment)
