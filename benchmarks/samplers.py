"""Sampler speed and memory against scikit-learn's Nystroem (issue: foundation).

    python benchmarks/samplers.py            # speed: n=50 000, d=20, p=1000 (about 3 minutes)
    python benchmarks/samplers.py --memory   # peak RSS: n=200 000, p=500, one process per sampler
    python benchmarks/samplers.py --write    # also rewrite the tables in benchmarks/README.md

Each time is the median of --repeats runs of fit + the training features (the factor a
pivoted-Cholesky sampler returns, else transform(X)), measured in one process together
with scikit-learn's ``Nystroem().fit_transform`` on the same data, so ratios compare like
with like on this machine. Targets (issue 2) are ratios, never wall-clock limits.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

import numpy as np
from sklearn.kernel_approximation import Nystroem

import kbench
from _common import env_line, environment, median_time, peak_rss_mb, update_readme, write_results

#: target ratio of each sampler's time to uniform's (issue 2); uniform's is to scikit-learn's
TARGETS = {"uniform": 1.0, "rls-fast": 3.0, "rp-cholesky": 2.0, "pivoted-cholesky": 3.0,
           "squeak": 10.0}
SAMPLERS = ["uniform", "rls-fast", "rp-cholesky", "pivoted-cholesky", "squeak", "rff", "orf"]


def make_data(n: int, d: int):
    X = np.random.default_rng(0).standard_normal((n, d))
    kernel = kbench.make_kernel("gaussian", sigma="median").fit(X)
    return X, kernel


def training_features(name: str, X, kernel, p: int, lam: float):
    approx = kbench.make_sampler(name).fit(X, kernel, rank=p, lam=lam, seed=0)
    features = approx.train_features if approx.train_features is not None else approx.transform(X)
    return approx, features


def speed(args) -> dict:
    X, kernel = make_data(args.n, args.d)
    gamma = 1.0 / (2.0 * kernel.sigma_**2)
    rows = {}
    sk = median_time(lambda: Nystroem(gamma=gamma, n_components=args.p,
                                      random_state=0).fit_transform(X),
                     args.repeats)
    rows["scikit-learn Nystroem"] = {"seconds": sk}
    print(f"scikit-learn Nystroem: {sk:.2f} s", flush=True)
    for name in SAMPLERS:
        seconds = median_time(lambda name=name: training_features(name, X, kernel, args.p,
                                                                  args.lam),
                              args.repeats)
        approx, _ = training_features(name, X, kernel, args.p, args.lam)
        rows[name] = {"seconds": seconds, "rank_realized": approx.rank,
                      "dictionary_size": approx.info.get("dictionary_size")}
        print(f"{name}: {seconds:.2f} s (rank {approx.rank})", flush=True)
    uniform = rows["uniform"]["seconds"]
    for name, row in rows.items():
        if name == "uniform":
            row["ratio"], row["against"] = uniform / sk, "scikit-learn"
        elif name in SAMPLERS:
            row["ratio"], row["against"] = row["seconds"] / uniform, "uniform"
        row["target"] = TARGETS.get(name)
    return {"setting": vars(args) | {"sigma": kernel.sigma_}, "rows": rows}


def speed_table(result: dict, env: dict) -> str:
    s = result["setting"]
    lines = [
        f"n = {s['n']}, d = {s['d']}, p = {s['p']}, gaussian kernel (σ = median = "
        f"{s['sigma']:.3f}), λ = {s['lam']:g}, median of {s['repeats']} runs. {env_line(env)}.",
        "",
        "| method | seconds | ratio | against | target | met |",
        "|---|---:|---:|---|---:|---|",
    ]
    for name, row in result["rows"].items():
        ratio = f"{row['ratio']:.2f}" if "ratio" in row else ""
        target = f"≤ {row['target']:g}" if row.get("target") else ""
        met = ("yes" if row["ratio"] <= row["target"] else "**no**") if row.get("target") else ""
        lines.append(f"| {name} | {row['seconds']:.2f} | {ratio} | {row.get('against', '')} | "
                     f"{target} | {met} |")
    return "\n".join(lines) + "\n"


def child(args) -> None:
    """Fit one sampler and print its peak RSS (run in a fresh process by --memory)."""
    X, kernel = make_data(args.n, args.d)
    try:
        approx, features = training_features(args.child, X, kernel, args.p, args.lam)
        status = f"ok, features {features.shape[0]}×{features.shape[1]}"
    except ValueError as exc:
        status = f"refused: {exc}"
    peak_mb = peak_rss_mb()
    print(json.dumps({"sampler": args.child, "peak_rss_mb": peak_mb, "status": status}))


def memory(args) -> dict:
    rows = []
    for name in ["rls"] + SAMPLERS:
        out = subprocess.run(
            [sys.executable, __file__, "--child", name, "--n", str(args.n), "--d", str(args.d),
             "--p", str(args.p), "--lam", str(args.lam)],
            capture_output=True, text=True, check=True,
        )
        row = json.loads(out.stdout.strip().splitlines()[-1])
        print(f"{name}: {row['peak_rss_mb']:.0f} MB, {row['status'][:90]}", flush=True)
        rows.append(row)
    return {"setting": vars(args), "rows": rows}


def memory_table(result: dict, env: dict) -> str:
    s = result["setting"]
    n_by_n_gib = s["n"] ** 2 * 8 / 2**30
    lines = [
        f"n = {s['n']}, d = {s['d']}, p = {s['p']}, λ = {s['lam']:g}; one process per sampler, "
        f"peak RSS includes X and the n×p features; an n×n float64 array would take "
        f"{n_by_n_gib:.0f} GiB. {env_line(env)}.",
        "",
        "| sampler | peak RSS (MB) | < 4 GiB | outcome |",
        "|---|---:|---|---|",
    ]
    for row in result["rows"]:
        ok = "yes" if row["peak_rss_mb"] < 4096 else "**no**"
        lines.append(f"| {row['sampler']} | {row['peak_rss_mb']:.0f} | {ok} | "
                     f"{row['status'][:120]} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int)
    parser.add_argument("--d", type=int, default=20)
    parser.add_argument("--p", type=int)
    parser.add_argument("--lam", type=float, default=1e-4)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--memory", action="store_true", help="peak-RSS check instead of speed")
    parser.add_argument("--write", action="store_true", help="rewrite the table in "
                                                             "benchmarks/README.md")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return child(args)
    env = environment()
    if args.memory:
        args.n, args.p = args.n or 200_000, args.p or 500
        result = memory(args)
        section, table = "samplers-memory", memory_table(result, env)
    else:
        args.n, args.p = args.n or 50_000, args.p or 1000
        result = speed(args)
        section, table = "samplers-speed", speed_table(result, env)
    print(f"results: {write_results(section, {'environment': env, **result})}")
    print(table)
    if args.write:
        update_readme(section, table)


if __name__ == "__main__":
    main()
