"""Structured random features: transform time against dense rff as d grows (issue 14).

    python benchmarks/structured.py [--write]     # about 2 minutes

transform(X) of n = 4 000 rows, p = 4 096 features, gaussian kernel, for d = 64 … 1 024
(median of --repeats runs each). rff and orf multiply by a dense p/2 × d frequency matrix,
O(p·d) per row; sorf and fastfood apply Walsh–Hadamard transforms, O(p log d) per row
(kbench.lowrank.maps.fwht). The projections Ωx alone (before the cos/sin, which costs the same
for all four) are timed too, and the slope of their log time in log d is fitted. Target:
at d = 512, sorf and fastfood no slower than rff, and their projection time growing like
log d, not d.
"""

from __future__ import annotations

import argparse

import numpy as np

import kbench
from _common import env_line, environment, median_time, update_readme, write_results

SAMPLERS = ["rff", "orf", "sorf", "fastfood"]
DIMENSIONS = [64, 128, 256, 512, 1024]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=4000)
    parser.add_argument("--p", type=int, default=4096)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    env = environment()
    rng = np.random.default_rng(0)
    results: dict[str, dict[int, float]] = {name: {} for name in SAMPLERS}
    projections: dict[str, dict[int, float]] = {name: {} for name in SAMPLERS}
    for d in DIMENSIONS:
        X = rng.standard_normal((args.n, d))
        kernel = kbench.make_kernel("gaussian", sigma="median").fit(X)
        for name in SAMPLERS:
            approx = kbench.make_sampler(name).fit(X, kernel, rank=args.p, seed=0)
            results[name][d] = median_time(lambda a=approx, x=X: a.transform(x), args.repeats)
            projections[name][d] = median_time(lambda a=approx, x=X: a._project(x), args.repeats)
        print(f"d = {d}: " + ", ".join(f"{name} {results[name][d]:.3f} s" for name in results),
              flush=True)
    slopes = {name: float(np.polyfit(np.log(DIMENSIONS), np.log([times[d] for d in DIMENSIONS]),
                                     1)[0])
              for name, times in projections.items()}
    write_results("structured-features",
                  {"environment": env, "n": args.n, "p": args.p, "seconds": results,
                                          "projection_seconds": projections,
                                          "projection_slopes": slopes})
    at = 512
    rff = results["rff"][at]
    header = " | ".join(f"d = {d}" for d in DIMENSIONS)
    table = "\n".join([
        f"transform(X) (projection Ωx alone in brackets), n = {args.n}, p = {args.p}, gaussian σ = "
        f"median, seconds (median of {args.repeats} runs); slope: of log projection time in log d. "
        f"{env_line(env)}.",
        "",
        f"| features | {header} | projection slope in d | / rff at d = {at} |",
        "|---|" + "---:|" * len(DIMENSIONS) + "---:|---:|",
        *[f"| {name} | "
          + " | ".join(f"{times[d]:.3f} ({projections[name][d]:.3f})" for d in DIMENSIONS)
          + f" | {slopes[name]:.2f} | {times[at] / rff:.2f} |" for name, times in results.items()],
    ]) + "\n"
    print(table)
    if args.write:
        update_readme("structured-features", table)


if __name__ == "__main__":
    main()
