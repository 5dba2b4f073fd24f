"""Matrix-free exact KRR (kbench.exact.pcg): passes over K for a λ path, and the cost of a pass.

    python benchmarks/pcg.py [--write]      # about 20 minutes on 2 cores

Main path (issue 13): n_train = 50 000, d = 20 (standard normal X, y = sin of a sum of
three coordinates + noise), gaussian σ = median, 20 λ in [1e-4, 1e-1], preconditioner
rank 200. Targets: ≤ 40 passes over K in all (a pass = every entry of K evaluated once,
shared by all λ; the final residual pass included), every relative residual ≤ 1e-8, and
the time per pass ≤ 1.3× one blocked kernel evaluation of the same size (measured here,
n² entries in the same row blocks, multiplied by nothing).

Small λ: λ in [1e-7, 1e-5] at n_train = --small-n (8 000), for preconditioner ranks 200,
500 and 1000 (at most 300 passes): passes and total time (preconditioner included), and
the rank that minimises the time.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import kbench
from _common import env_line, environment, update_readme, write_results
from kbench.exact.pcg import DEFAULT_BLOCK_MB, solve_krr_path

RANKS = (200, 500, 1000)


def make_problem(n: int, d: int):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((n, d))
    y = np.sin(X[:, :3].sum(axis=1)) + 0.1 * rng.standard_normal(n)
    kernel = kbench.make_kernel("gaussian", sigma="median").fit(X)
    return X, y, kernel


def one_kernel_pass(kernel, X) -> float:
    """Seconds to evaluate all of K once in the row blocks kernel_product uses."""
    rows = max(1, int(DEFAULT_BLOCK_MB * 2**20 // (8 * X.shape[0])))
    start = time.perf_counter()
    for first in range(0, X.shape[0], rows):
        kernel._evaluate(X[first : first + rows], X)
    return time.perf_counter() - start


def solve(kernel, X, y, lams, rank: int) -> dict:
    start = time.perf_counter()
    solution = solve_krr_path(kernel, X, y, lams, tol=1e-8, preconditioner_rank=rank,
                              max_passes=300)
    seconds = time.perf_counter() - start
    return {"rank": rank, "passes": solution.passes, "seconds": seconds,
            "max_residual": float(solution.residual.max()),
            "converged": bool(solution.converged.all()),
            "iterations": solution.iterations.tolist()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=50_000)
    parser.add_argument("--small-n", type=int, default=8_000)
    parser.add_argument("--d", type=int, default=20)
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    env = environment()
    X, y, kernel = make_problem(args.n, args.d)
    kernel_seconds = one_kernel_pass(kernel, X)
    print(f"one blocked kernel evaluation at n = {args.n}: {kernel_seconds:.1f} s", flush=True)
    main_path = solve(kernel, X, y, np.logspace(-4, -1, 20), 200)
    per_pass = main_path["seconds"] / main_path["passes"]
    print("main path", main_path, flush=True)
    X, y, kernel = make_problem(args.small_n, args.d)
    small = [solve(kernel, X, y, np.logspace(-7, -5, 5), rank) for rank in RANKS]
    for row in small:
        print("small λ", row, flush=True)
    best = min((row for row in small if row["converged"]), key=lambda row: row["seconds"],
               default=None)
    write_results("pcg",
                  {"environment": env, "setting": vars(args), "kernel_pass_seconds": kernel_seconds,
                          "main": main_path, "small_lambda": small})
    ratio = per_pass / kernel_seconds
    lines = [
        f"Main path: n_train = {args.n}, d = {args.d}, gaussian σ = median, 20 λ in [1e-4, 1e-1], "
        f"preconditioner rank 200. {env_line(env)}.",
        "",
        "| measure | value | target | met |",
        "|---|---:|---:|---|",
        f"| passes over K (all λ, final residual pass included) | {main_path['passes']} | ≤ 40 | "
        f"{'yes' if main_path['passes'] <= 40 else '**no**'} |",
        f"| largest relative residual | {main_path['max_residual']:.1e} | ≤ 1e-8 | "
        f"{'yes' if main_path['max_residual'] <= 1e-8 else '**no**'} |",
        f"| seconds per pass / one blocked kernel evaluation ({kernel_seconds:.1f} s) | "
        f"{ratio:.2f} | ≤ 1.3 | {'yes' if ratio <= 1.3 else '**no**'} |",
        "",
        f"Small λ: 5 λ in [1e-7, 1e-5] at n_train = {args.small_n}, up to 300 passes.",
        "",
        "| preconditioner rank | passes | seconds (preconditioner included) | converged |",
        "|---:|---:|---:|---|",
        *[f"| {row['rank']} | {row['passes']} | {row['seconds']:.1f} | "
          f"{'yes' if row['converged'] else 'no'} |"
          for row in small],
        "",
        f"Fastest: rank {best['rank']} ({best['seconds']:.1f} s)." if best else "No rank "
                                                                                "converged.",
    ]
    table = "\n".join(lines) + "\n"
    print(table)
    if args.write:
        update_readme("pcg", table)


if __name__ == "__main__":
    main()
