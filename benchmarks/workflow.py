"""Scheduler overhead of the Snakemake workflow (issue: workflow).

    python benchmarks/workflow.py [--write]

A 500-cell sweep of tiny cells (1 dataset × 5 samplers × 1 task × 10 ranks × 10
repetitions; one job per (dataset, kernel, sampler, repetition) covers its task and 10 ranks) runs
through `snakemake --cores N` in a temporary directory. Overhead per cell = (wall time −
the cells' own recorded time / N) / cells: what Snakemake, process start-up, data loading
and result writing add to the work itself.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd
import yaml

from _common import env_line, environment, update_readme, write_results

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
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
    result = {"cells": cells, "jobs": cells // (len(CONFIG["ranks"]) * len(CONFIG["tasks"])), "wall_s": wall,
              "cells_own_s": float(own), "cores": args.cores, "overhead_per_cell_s": overhead}
    write_results("workflow-overhead", {"environment": env, **result})
    table = "\n".join([
        f"{cells} cells in {result['jobs']} run jobs (+ prepare, aggregate, leaderboard), "
        f"`snakemake --cores {args.cores}`. {env_line(env)}.",
        "",
        "| wall time (s) | cells' own time (s) | overhead per cell (s) | target | met |",
        "|---:|---:|---:|---:|---|",
        f"| {wall:.1f} | {own:.2f} | {overhead:.3f} | < 0.3 | {'yes' if overhead < 0.3 else '**no**'} |",
    ]) + "\n"
    print(table)
    if args.write:
        update_readme("workflow-overhead", table)


if __name__ == "__main__":
    main()
