"""How each sampler's fit scales with n at a fixed rank (issue 13: samplers scale linearly).

    python benchmarks/scaling.py [--write]     # n = 10⁴ … 10⁶, d = 20, p = 500 (about 45 minutes)

Every (sampler, n) runs in a fresh process, which times the fit and the training features
(the factor a pivoted-Cholesky sampler returns, else transform(X); after a warm-up run, the
fastest of as many runs as fit in REPEAT_SECONDS, at most MAX_REPEATS, at least --repeats) and
reports its peak RSS, the n×p features included (3.7 GiB at n = 10⁶); the data is a
standard normal X with the gaussian kernel (σ = median), as in samplers.py. A cell up to
n = FRESH_PROCESSES_UP_TO, where a fit takes a fraction of a second, runs in FRESH_PROCESSES
processes and keeps the fastest (the timeit rule: slower runs measure the machine, not the
code): one process's OpenMP threads, just woken from a large GEMM, can make a 500×500
eigendecomposition 2–4× slower, which alone moves a slope by 0.05.
The log-log slope of time in n is fitted over all n; target: within [0.85, 1.15] for every
sampler but ``rls`` (exact leverage scores, O(n³), refused above its size limit). A slope
below the band ("below") is a sampler whose fit costs less than O(n): BLESS's dictionary
at a fixed λ costs about q̄/λ kernel rows whatever n, so only its features grow with n. An n×n
float64 array at n = 10⁶ would take 7.3 TiB, so a sampler that allocated one could not
finish.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time

import numpy as np
from samplers import make_data, training_features

from _common import env_line, environment, min_time, peak_rss_mb, update_readme, write_results

SAMPLERS = ["uniform", "rls-fast", "squeak", "bless", "recursive-rls", "pivoted-cholesky",
            "rp-cholesky",
            "rff", "orf", "sorf", "fastfood"]
SIZES = [10_000, 31_623, 100_000, 316_228, 1_000_000]
SLOPE_BAND = (0.85, 1.15)
#: small n is timed as the fastest of several runs (at most MAX_REPEATS, within about
#: REPEAT_SECONDS) in each of several fresh processes: a single run of a fraction of a
#: second is at the mercy of the machine
REPEAT_SECONDS, MAX_REPEATS = 10.0, 7
FRESH_PROCESSES, FRESH_PROCESSES_UP_TO = 3, 100_000


def child(name: str, n: int, d: int, p: int, lam: float, repeats: int) -> None:
    """One (sampler, n): time fit + training features (fastest of ``repeats`` runs, more
    where they fit in REPEAT_SECONDS, after one warm-up run), print the seconds, the number
    of runs and the process's peak RSS."""
    X, kernel = make_data(n, d)
    start = time.perf_counter()
    approx, _ = training_features(name, X, kernel, p, lam)
    warmup = time.perf_counter() - start
    repeats = max(repeats, min(MAX_REPEATS, int(REPEAT_SECONDS / warmup)))
    seconds = min_time(lambda: training_features(name, X, kernel, p, lam), repeats)
    peak = peak_rss_mb()
    print(json.dumps({"seconds": seconds, "runs": repeats, "peak_rss_mb": peak,
                      "rank": approx.rank}))


def run_child(name: str, n: int, args: argparse.Namespace) -> dict:
    """Time one (sampler, n) in a fresh process; its JSON line as a dict."""
    out = subprocess.run([sys.executable, __file__, "--child", name, str(n), "--d", str(args.d),
                          "--p",
                          str(args.p), "--lam", str(args.lam), "--repeats", str(args.repeats)],
                         capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"{name} at n = {n} failed:\n{out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--d", type=int, default=20)
    parser.add_argument("--p", type=int, default=500)
    parser.add_argument("--lam", type=float, default=1e-3)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--write", action="store_true")
    parser.add_argument("--child", nargs=2, metavar=("SAMPLER", "N"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child[0], int(args.child[1]), args.d, args.p, args.lam, args.repeats)
        return
    env = environment()
    results = {}
    for name in SAMPLERS:
        results[name] = []
        for n in SIZES:
            processes = [run_child(name, n, args)
                         for _ in range(FRESH_PROCESSES if n <= FRESH_PROCESSES_UP_TO else 1)]
            row = {"n": n, **min(processes, key=lambda r: r["seconds"]),
                   "process_seconds": [r["seconds"] for r in processes]}
            results[name].append(row)
            print(f"{name} n={n}: {row['seconds']:.2f} s (processes: "
                  f"{', '.join(f'{t:.2f}' for t in row['process_seconds'])}), peak RSS "
                  f"{row['peak_rss_mb']:.0f} MB", flush=True)
    slopes = {name: float(np.polyfit(np.log([r["n"] for r in rows]),
                                     np.log([r["seconds"] for r in rows]), 1)[0])
              for name, rows in results.items()}
    write_results("samplers-scaling",
                  {"environment": env, "d": args.d, "p": args.p, "lam": args.lam,
                   "results": results, "slopes": slopes})
    low, high = SLOPE_BAND
    within = {name: "yes" if low <= slope <= high else "**no**" if slope > high else "below"
              for name, slope in slopes.items()}
    header = " | ".join(f"n = {n:.0e}".replace("e+0", "e") for n in SIZES)
    table = "\n".join([
        f"Fit + training features: time (s) and peak RSS (MB) at n = 10⁴ … 10⁶, d = {args.d}, p = "
        f"{args.p}, λ = {args.lam:g} (for rls-fast, squeak and bless), gaussian σ = median; the "
        f"fastest of up to {MAX_REPEATS} runs in a fresh process, of {FRESH_PROCESSES} processes "
        f"up to n = {FRESH_PROCESSES_UP_TO:.0e}. {env_line(env)}.".replace("e+0", "e"),
        "",
        f"| sampler | {header} | slope in n | within [{low}, {high}] |",
        "|---|" + "---:|" * len(SIZES) + "---:|---|",
        *[f"| {name} | "
          + " | ".join(f"{r['seconds']:.2f} s, {r['peak_rss_mb']:.0f} MB" for r in rows)
          + f" | {slopes[name]:.2f} | {within[name]} |"
          for name, rows in results.items()],
    ]) + "\n"
    print(table)
    if args.write:
        update_readme("samplers-scaling", table)


if __name__ == "__main__":
    main()
