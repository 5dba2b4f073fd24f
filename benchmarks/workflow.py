"""The Snakemake workflow's overhead, and the default sweep against an older commit.

    python benchmarks/workflow.py [--write]
    python benchmarks/workflow.py --default-sweep --before COMMIT [--write]
    python benchmarks/workflow.py --job-cost [--write]

The first: a 500-cell sweep of tiny cells (1 dataset × 5 samplers × 1 task × 10 ranks × 10
repetitions; one run job per (dataset, kernel) covers its samplers, task, 10 ranks and 10
repetitions) runs through `snakemake --cores N` in a temporary directory. Overhead per cell =
(wall time − the cells' own recorded time / N) / cells: what Snakemake, process start-up,
data loading and result writing add to the work itself.

The second: the default sweep (workflows/config/default.yaml) at COMMIT (a git worktree,
imported through PYTHONPATH, with its own config and profile) and at this checkout, one after the
other on this machine; wall time, CPU seconds (user + sys of Snakemake and every process it started)
and where they go: process starts (the jobs × a process that only imports kbench), exact baselines,
sampler fits, tasks (from the rows' own timings, each computation once), the aggregation and the
page (rerun alone), and the rest (Snakemake, planning, loading splits, status checks, writing
cells). Targets: at most 400 CPU seconds for the default sweep (issue 48); issue 29's, at most half
the CPU seconds of 172c1e8, was met at 0.49× (8d93f18).

The third: what one job costs besides its cells, in the default sweep at this checkout. A
Python process that imports kbench's command line, and a `kbench run` job of the sweep
whose cells are all done (start-up, planning, status checks), each the median of 5; from
them, the largest share of cells' own compute that one process per job allows, were
Snakemake free and the cores never idle: own / (own + jobs × the no-op job).
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd
import yaml

from _common import env_line, environment, median_time, update_readme, write_results

ROOT = Path(__file__).resolve().parents[1]
CONFIG = {
    "out": "out",
    "seed": 0,
    "repetitions": 10,
    "kernel": "gaussian:sigma=median",
    "datasets": ["synthetic:moons:n=200"],
    "samplers": ["uniform", "rff", "orf", "rp-cholesky", "pivoted-cholesky"],
    "tasks": ["approximation"],
    "ranks": [2, 4, 6, 8, 10, 12, 14, 16, 18, 20],
    "lams": [1.0e-3],
}


def own_seconds(frame: pd.DataFrame) -> dict[str, float]:
    """The cells' own compute by kind, from their own timings, each computation once (a
    sampler fit, feature map or exact baseline shared by several rows records the same cost
    in each; a recomputation records its own, so it counts again): sampler fits with their
    feature maps, task evaluations (fit and prediction), exact baselines."""
    ok = frame[frame.status == "ok"]
    fit = ["dataset", "kernel", "sampler_label", "rank", "repetition"]
    fits = sum(ok.dropna(subset=[column]).drop_duplicates([*fit, column])[column].sum()
               for column in ("time_sample_s", "time_features_s"))
    cells = ok.drop_duplicates([*fit, "task_label"])
    tasks = cells[["time_fit_s", "time_predict_s"]].fillna(0).to_numpy().sum()
    exact = ok.dropna(subset=["time_exact_s"]).drop_duplicates(["dataset", "kernel", "repetition",
                                                                "time_exact_s"])
    return {"fits_s": float(fits), "tasks_s": float(tasks),
            "exact_s": float(exact.time_exact_s.sum())}


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def cpu_run(command: list[str], **kwargs) -> tuple[float, float]:
    """Wall and CPU seconds (user + sys, the process and every descendant it waited for) of a
    command run to completion."""
    cpu, start = _children_cpu(), time.perf_counter()
    subprocess.run(command, check=True, capture_output=True, **kwargs)
    return time.perf_counter() - start, _children_cpu() - cpu


#: the default sweep's CPU seconds on 2 cores, at most (issue 48)
CPU_TARGET_S = 400


def default_sweep(snakefile: Path, workdir: Path, cores: int,
                  pythonpath: Path | None = None) -> dict:
    """The default sweep through ``snakefile`` in ``workdir``: wall and CPU seconds, and where
    the CPU went. The cells' own compute comes from their rows; process start-up (Python and
    kbench's imports) is the jobs times a process that only imports kbench; the aggregation
    and the page are rerun alone on the results; Snakemake, planning, loading splits, status
    checks and writing cells are the rest."""
    # its own
    config = yaml.safe_load(
        (snakefile.parent / "workflows" / "config" / "default.yaml").read_text())
    (workdir / "config.yaml").write_text(yaml.safe_dump({**config, "out": "out"}))
    env = dict(os.environ, PYTHONPATH=str(pythonpath)) if pythonpath else None
    wall, cpu = cpu_run([sys.executable, "-m", "snakemake", "--snakefile", str(snakefile),
                         "--directory", str(workdir),
                         "--configfile", str(workdir / "config.yaml"), "--cores", str(cores)],
                        env=env,
                        # not the checkout's folder: `python -m` puts the cwd first on sys.path
                        cwd=workdir)
    frame = pd.read_parquet(workdir / "out" / "all.parquet")
    own = own_seconds(frame)
    dry = subprocess.run([sys.executable, "-m", "snakemake", "--snakefile", str(snakefile),
                          "--directory",
                          str(workdir), "--configfile", str(workdir / "config.yaml"), "-n",
                          "--forceall",
                          "--quiet", "rules"], check=True, capture_output=True, text=True, env=env,
                         cwd=workdir)
    # less the target rule
    jobs = int(re.search(r"total\s+(\d+)", dry.stdout + dry.stderr).group(1)) - 1
    imports = statistics.median(cpu_run([sys.executable, "-c",
                                         "import kbench.cli, kbench.sweep.scheduler"],
                                        env=env, cwd=workdir)[1] for _ in range(5))
    kbench = [sys.executable, "-m", "kbench.cli"]
    sweep = frame["sweep"].iloc[0]
    _, aggregate = cpu_run([*kbench, "aggregate", "out", "--sweep", sweep, "--out",
                            "again.parquet"], cwd=workdir, env=env)
    _, page = cpu_run([*kbench, "leaderboard", "out/all.parquet", "--out", "page"], cwd=workdir,
                      env=env)
    parts = {"start_s": jobs * imports, **own, "report_s": aggregate + page}
    return {"wall_s": wall, "cpu_s": cpu, "jobs": jobs, "import_s": imports, **parts,
            "rest_s": cpu - sum(parts.values()), "cells_own_s": sum(own.values()),
            "share": sum(own.values()) / (wall * cores), "rows": len(frame)}


def job_cost(cores: int, write: bool) -> None:
    env = environment()
    config = yaml.safe_load((ROOT / "workflows" / "config" / "default.yaml").read_text())
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        sweep = default_sweep(ROOT / "Snakefile", workdir, cores)

        def process_seconds(command: list[str]) -> float:
            def once():
                subprocess.run(command, check=True, capture_output=True, cwd=workdir)
            return median_time(once, 5)

        importing = process_seconds([sys.executable, "-c",
                                     "import kbench.cli, kbench.sweep.scheduler"])
        job = ["kbench", "run", "--datasets", config["datasets"][0], "--samplers",
               config["samplers"][0],
               "--tasks", ",".join(config["tasks"]), "--ranks", ",".join(map(str, config["ranks"])),
               "--lams", ",".join(map(str, config["lams"])), "--kernel", config["kernel"],
               "--repetitions", str(config["repetitions"]), "--only-repetition", "0", "--seed",
               str(config["seed"]),
               "--data-cache", "out/data", "--out", "out", "--quiet"]
        noop = process_seconds(job)
    from kbench.workflow import Sweep

    jobs = sum(Sweep({**config, "out": "out"}).job_counts().values())
    ceiling = sweep["cells_own_s"] / (sweep["cells_own_s"] + jobs * noop)
    write_results("workflow-job-cost", {"environment": env, "cores": cores, **sweep, "jobs": jobs,
                                        "import_s": importing, "noop_job_s": noop,
                                        "share_ceiling": ceiling})
    table = "\n".join([
        f"The default sweep at this checkout, `snakemake --cores {cores}`; processes timed in the "
        f"same session, median of 5. {env_line(env)}.",
        "",
        "| wall time (s) | cells' own compute (s) | share | jobs | Python + kbench import (s) | "
        "no-op `kbench run` job (s) | share ceiling with one process per job |",
        "|---:|---:|---:|---:|---:|---:|---:|",
        f"| {sweep['wall_s']:.0f} | {sweep['cells_own_s']:.0f} | {sweep['share']:.0%} | {jobs} | "
        f"{importing:.2f} | {noop:.2f} | {ceiling:.0%} |",
    ]) + "\n"
    print(table)
    if write:
        update_readme("workflow-job-cost", table)


def compare_default_sweep(before: str, cores: int, write: bool) -> None:
    env = environment()
    commit = subprocess.run(["git", "rev-parse", "--short", before], cwd=ROOT, check=True,
                            capture_output=True, text=True).stdout.strip()
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, check=True,
                          capture_output=True, text=True).stdout.strip()
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        old = Path(tmp) / "before"
        subprocess.run(["git", "worktree", "add", "--detach", str(old), commit], cwd=ROOT,
                       check=True,
                       capture_output=True)
        try:
            (Path(tmp) / "run-before").mkdir()
            result_before = default_sweep(old / "Snakefile", Path(tmp) / "run-before", cores,
                                          pythonpath=old)
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(old)], cwd=ROOT, check=True)
        (Path(tmp) / "run-after").mkdir()
        result_after = default_sweep(ROOT / "Snakefile", Path(tmp) / "run-after", cores)
    speedup = result_before["wall_s"] / result_after["wall_s"]
    cpu_ratio = result_after["cpu_s"] / result_before["cpu_s"]
    write_results("workflow-default-sweep",
                  {"environment": env, "cores": cores, "load_before": load,
                                             "before": {"commit": commit, **result_before},
                                             "after": {"commit": head, **result_after},
                                             "speedup": speedup,
                                             "cpu_ratio": cpu_ratio})
    rows = [(f"before ({commit})", result_before),
            (f"after ({head}, uncommitted changes included)", result_after)]
    table = "\n".join([
        f"The default sweep (`workflows/config/default.yaml`), `snakemake --cores {cores}`, both "
        f"runs in one session, one after the other (1-minute load average {load:.1f} before the "
        f"first). {env_line(env)}. CPU = user + sys of Snakemake and every process it started.",
        "",
        "| checkout | rows | jobs | wall (s) | CPU (s) | process starts (s) | exact baselines (s) "
        "| fits (s) | tasks (s) | aggregate + page (s) | Snakemake, planning, I/O (s) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
        *[f"| {name} | {r['rows']} | {r['jobs']} | {r['wall_s']:.0f} | {r['cpu_s']:.0f} | "
          f"{r['start_s']:.0f} | {r['exact_s']:.0f} | {r['fits_s']:.0f} | {r['tasks_s']:.0f} | "
          f"{r['report_s']:.0f} | {r['rest_s']:.0f} |"
          for name, r in rows],
        "",
        "| target | measured | met |",
        "|---|---:|---|",
        f"| the default sweep's CPU seconds at most {CPU_TARGET_S} | {result_after['cpu_s']:.0f} "
        f"| {'yes' if result_after['cpu_s'] <= CPU_TARGET_S else '**no**'} |",
        f"| CPU seconds against the commit before | {cpu_ratio:.2f}× | |",
        f"| wall time | {speedup:.2f}× faster | |",
    ]) + "\n"
    print(table)
    if write:
        update_readme("workflow-default-sweep", table)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--write", action="store_true")
    parser.add_argument("--default-sweep", action="store_true", help="Time the default sweep "
                                                                     "against --before.")
    parser.add_argument("--before", default="172c1e8", help="The commit to compare with "
                                                            "(--default-sweep).")
    parser.add_argument("--job-cost", action="store_true", help="What a job of the default sweep "
                                                                "costs besides its cells.")
    args = parser.parse_args()
    if args.job_cost:
        job_cost(args.cores, args.write)
        return
    if args.default_sweep:
        compare_default_sweep(args.before, args.cores, args.write)
        return
    env = environment()
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        (workdir / "config.yaml").write_text(yaml.safe_dump(CONFIG))
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "snakemake", "--snakefile", str(ROOT / "Snakefile"),
                        "--directory", str(workdir), "--configfile", str(workdir / "config.yaml"),
                        "--cores", str(args.cores), "--quiet"], check=True, capture_output=True)
        wall = time.perf_counter() - start
        frame = pd.read_parquet(workdir / "out" / "all.parquet")
    cells = len(frame.drop_duplicates(["dataset", "sampler", "task", "rank", "repetition"]))
    own = frame[["time_sample_s", "time_features_s", "time_fit_s"]].fillna(0).sum().sum()
    overhead = (wall - own / args.cores) / cells
    result = {"cells": cells, "jobs": cells // (len(CONFIG["ranks"]) * len(CONFIG["tasks"])),
              "wall_s": wall,
              "cells_own_s": float(own), "cores": args.cores, "overhead_per_cell_s": overhead}
    write_results("workflow-overhead", {"environment": env, **result})
    table = "\n".join([
        f"{cells} cells in {result['jobs']} run jobs (+ prepare, aggregate, leaderboard), "
        f"`snakemake --cores {args.cores}`. {env_line(env)}.",
        "",
        "| wall time (s) | cells' own time (s) | overhead per cell (s) | target | met |",
        "|---:|---:|---:|---:|---|",
        f"| {wall:.1f} | {own:.2f} | {overhead:.3f} | < 0.3 | "
        f"{'yes' if overhead < 0.3 else '**no**'} |",
    ]) + "\n"
    print(table)
    if args.write:
        update_readme("workflow-overhead", table)


if __name__ == "__main__":
    main()
