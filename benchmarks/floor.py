"""Every sampler and task against its BLAS floor, in one table (issue 31).

    python benchmarks/floor.py [--write]          # n = 50 000, p ∈ {200, 1000}, then n = 750 000
    python benchmarks/floor.py --skip-streaming   # without the 750 000-row krr path

The floor of a computation is the work its algorithm cannot avoid, the kernel evaluations
and the BLAS-3 products, run the fastest way this machine runs them: each primitive (a
Gaussian kernel block, a GEMM, ΦᵀΦ, an eigendecomposition, cos and sin of a projection) is
first timed at several block sizes and thread layouts, and the fastest is kept. Then every
kbench call is timed interleaved with its floor, in this process and BLAS (the fastest of
at least ``--repeats`` alternations, more while a comparison has run under 3 s), so a slower
moment of the machine slows both.

The floor models (n rows, d = 20, rank p, n_test test rows, L λ values, K(a, b) an a×b
kernel block, GEMM(a, b, c) an (a×b)(b×c) product, ΦᵀΦ over a rows of p features):

- uniform: K(p, p) + eigh(p) + K(n, p) + GEMM(n, p, p) (the features Φ = K_nm W);
- rls-fast: its first pass, K(n, p) + GEMM(n, p, p) + ΦᵀΦ + Cholesky(p) + the triangular
  solve for the n scores, then uniform's floor on the chosen landmarks;
- rp-cholesky, pivoted-cholesky: for each block of pivots the fit made (its
  ``info["block_sizes"]``: t pivots after k), their kernel columns K(n, t), in the layout
  fastest for t columns, and the factor's update, GEMM(t, k + t, n): the n×t block by the k
  earlier columns and its own t×t triangle. A block's pivots are known only once the blocks
  before it are eliminated on all n points (an rp-cholesky round draws them ∝ the residual
  diagonal; a greedy panel's candidates are the points of largest residual), so its columns
  cannot be evaluated with another block's. A round accepts t ≈ 77 of its 100 candidates; a
  greedy panel as many pivots as its candidates can tell apart (1, 3, 11, … at first on
  standard normal data). Blocks that narrow run well below the speed of one wide block, so
  the table also gives each ratio against K(n, p) + GEMM(n, p, p/2), the same kernel entries
  and flops in one block each: what the fit's passes over the n points cost;
- squeak, bless, recursive-rls: the kernel entries the fit evaluates (``kernel_evals``, less
  the n diagonal entries and the landmarks' K(p, p), which uniform's floor has), as blocks of
  p columns, + the dense factorisations of their dictionaries at the sizes the
  fit reports (SQUEAK: a Cholesky factorisation and triangular inverse per DICT-UPDATE;
  BLESS and recursive RLS: a Cholesky factorisation and a triangular solve for the scored
  rows per level) + uniform's floor;
- rff, orf, sorf, fastfood: the n×p/2 projection, GEMM(n, d, p/2), + cos and sin of it;
- krr, classification: uniform's floor + ΦᵀΦ and Φᵀ[targets] over the n training rows +
  eigh(p) + the test features (K(n_test, p) + GEMM(n_test, p, p)) + their predictions,
  GEMM(n_test, p, L·targets);
- kpca: the same, the predictions replaced by the test rows' projection GEMM(n_test, p, p);
- approximation: uniform's floor + ΦᵀΦ + the compared rows' Φ_SΦ_Sᵀ, GEMM(s, p, s), and
  the eigenvalues of the s×s error (s = 3000 points; their kernel matrix is the task's
  ``prepare``, outside the timing as in a sweep).

Why not K(n, p) + one GEMM for the krr path: ΦᵀΦ = W(K_nmᵀK_nm)W skips the features but
forms the normal matrix of K_nm, which squares K_mm's condition number; on a 2-d dataset
(cond K_mm ≈ 10¹³) it changed the test MSE at λ = 10⁻⁷ by a factor 100. kbench forms
Φ = K_nm W, then ΦᵀΦ (docs/architecture.md).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable

import numpy as np
import scipy.linalg
from sklearn.kernel_approximation import Nystroem
from threadpoolctl import ThreadpoolController

import kbench
from _common import env_line, environment, peak_rss_mb, write_results
from kbench._parallel import blas_threads, for_each_block
from kbench.datasets.base import Dataset

SAMPLERS = ["uniform", "rls-fast", "rp-cholesky", "pivoted-cholesky", "squeak", "bless",
            "recursive-rls",
            "rff", "orf", "sorf", "fastfood"]
TASKS = ["krr", "classification", "kpca", "approximation"]
LAMS = np.logspace(-7, -2, 20)
#: targets: every row within 1.5× its floor, the streamed krr path within 1.3× and ≤ 3 GiB
TARGET, STREAMED_TARGET, STREAMED_PEAK_GIB = 1.5, 1.3, 3.0
#: uniform fit + features against scikit-learn's Nystroem in the same run
SKLEARN_TARGET = 0.8
BLAS = ThreadpoolController().select(user_api="blas")


def fastest(candidates: dict[str, Callable[[], object]], repeats: int = 3) -> tuple[str, float]:
    """The label and time of the fastest candidate (each the fastest of ``repeats`` runs)."""
    best = None
    for label, fn in candidates.items():
        seconds = min(_time(fn) for _ in range(repeats))
        if best is None or seconds < best[1]:
            best = (label, seconds)
    return best


def _time(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


class Primitives:
    """The unavoidable pieces, each run in the layout that is fastest here (``calibrate``):
    a layout is a number of rows per block and of threads (blocks spread over threads run
    BLAS on one thread each; one thread runs BLAS on all of them)."""

    #: the layouts tried: rows per block (None: all at once) and threads
    LAYOUTS = [(rows, threads) for rows in (None, 256, 1024, 4096, 16384)
               for threads in sorted({1, blas_threads()})]

    def __init__(self, sigma: float) -> None:
        self.gamma = 0.5 / sigma**2
        self.layout = {"kernel": (1024, 1), "features": (None, 1), "cos, sin": (None, 1),
                       "update": (None, 1)}
        #: the kernel's fastest layout for a Cholesky block's t columns, by t (calibrate_columns)
        self.column_layouts: dict[int, tuple] = {}

    def _rows(self, work, n, what) -> None:
        """``work(start, stop)`` over the rows 0..n in the layout of ``what`` (a primitive's
        name, or a layout)."""
        rows, threads = self.layout[what] if isinstance(what, str) else what
        rows = n if rows is None else rows
        starts = range(0, n, max(rows, 1))
        if threads <= 1:  # one Python thread, BLAS on all of its threads
            for start in starts:
                work(start, min(start + rows, n))
            return
        with BLAS.limit(limits=threads):  # kbench's helper: that many threads, BLAS on one each
            for_each_block(lambda start: work(start, min(start + rows, n)), starts,
                           min_per_thread=1)

    # -- a Gaussian kernel block: one GEMM of [x, ‖x‖², 1]·γ[2y, −1, −‖y‖²] and an exp ----------
    def _kernel_into(self, A, right, out) -> None:
        left = np.hstack([A, np.einsum("ij,ij->i", A, A)[:, None], np.ones((len(A), 1))])
        np.matmul(left, right, out=out)
        np.minimum(out, 0.0, out=out)
        np.exp(out, out=out)

    def _right(self, B):
        g = self.gamma
        return np.hstack([2 * g * B, -g * np.ones((len(B), 1)),
                          -g * np.einsum("ij,ij->i", B, B)[:, None]]).T

    def kernel(self, A: np.ndarray, B: np.ndarray, layout="kernel") -> np.ndarray:
        right, out = self._right(B), np.empty((len(A), len(B)))
        self._rows(lambda i, j: self._kernel_into(A[i:j], right, out[i:j]), len(A), layout)
        return out

    def kernel_columns(self, A: np.ndarray, B: np.ndarray) -> np.ndarray:
        """K(A, B) for a Cholesky block's few columns B, in the layout fastest for that many."""
        return self.kernel(A, B, self.column_layouts[len(B)])

    def calibrate_columns(self, X: np.ndarray, widths) -> None:
        """The kernel's fastest layout for each block width t (columns) not yet calibrated."""
        for t in sorted(set(widths) - set(self.column_layouts)):
            self.column_layouts[t] = self._fastest_layout(
                lambda layout: self.kernel(X, X[:t], layout))  # noqa: B023

    def features(self, A: np.ndarray, B: np.ndarray, W: np.ndarray,
                 layout="features") -> np.ndarray:
        """K(A, B) W: the kernel block and one GEMM, block by block or whole."""
        right, out = self._right(B), np.empty((len(A), W.shape[1]))

        def work(i, j):
            block = np.empty((j - i, len(B)))
            self._kernel_into(A[i:j], right, block)
            np.matmul(block, W, out=out[i:j])
        self._rows(work, len(A), layout)
        return out

    def update(self, left: np.ndarray, rows: np.ndarray, layout="update") -> np.ndarray:
        """left @ rows for a short ``left`` (t×m) and wide ``rows`` (m×n), by column blocks or
        whole."""
        out = np.empty((left.shape[0], rows.shape[1]))

        def work(i, j):
            np.matmul(left, rows[:, i:j], out=out[:, i:j])
        self._rows(work, rows.shape[1], layout)
        return out

    @staticmethod
    def gemm(A: np.ndarray, B: np.ndarray) -> np.ndarray:
        return A @ B

    @staticmethod
    def gram(A: np.ndarray) -> np.ndarray:
        return A.T @ A  # numpy calls SYRK for a product with its own transpose

    @staticmethod
    def eigh(S: np.ndarray):
        return np.linalg.eigh(S)

    @staticmethod
    def eigvalsh(S: np.ndarray):
        return np.linalg.eigvalsh(S)

    def cos_sin(self, X: np.ndarray, Omega: np.ndarray, layout="cos, sin") -> np.ndarray:
        """[cos XΩ, sin XΩ]: the projection and two elementwise passes, by blocks or whole."""
        k = Omega.shape[1]
        out = np.empty((len(X), 2 * k))

        def work(i, j):
            P = X[i:j] @ Omega
            np.cos(P, out=out[i:j, :k])
            np.sin(P, out=out[i:j, k:])
        self._rows(work, len(X), layout)
        return out

    def calibrate(self, X: np.ndarray, p: int) -> None:
        """The fastest layout of each primitive on these rows at rank p."""
        L, W = X[:p], random((p, p))
        Omega = random((X.shape[1], p // 2)) * np.sqrt(2 * self.gamma)
        factor, left = random((p, len(X))), random((77, p))  # an rp-cholesky round halfway
        trials = {"kernel": lambda layout: self.kernel(X, L, layout),
                  "features": lambda layout: self.features(X, L, W, layout),
                  "cos, sin": lambda layout: self.cos_sin(X, Omega, layout),
                  "update": lambda layout: self.update(left, factor, layout)}
        for what, trial in trials.items():
            self.layout[what] = self._fastest_layout(trial)

    def _fastest_layout(self, run) -> tuple:
        """The layout in which ``run(layout)`` is fastest (each the fastest of two runs)."""
        times = {layout: min(_time(lambda: run(layout)) for _ in range(2))  # noqa: B023
                 for layout in self.LAYOUTS}
        return min(times, key=times.get)

    def describe(self) -> dict[str, str]:
        return {what: _layout_text(layout) for what, layout in self.layout.items()}

    def describe_columns(self) -> dict[int, str]:
        return {t: _layout_text(layout) for t, layout in sorted(self.column_layouts.items())}


def _layout_text(layout) -> str:
    rows, threads = layout
    return ("all rows at once" if rows is None else f"{rows}-row blocks") + f", {threads} thread(s)"


# ---------------------------------------------------------------------------------------
# Floor models
# ---------------------------------------------------------------------------------------
def random(shape, seed=2) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape)


def uniform_floor(f: Primitives, X: np.ndarray, p: int) -> Callable[[], np.ndarray]:
    L = X[:p]
    W = random((p, p))

    def run():
        f.eigh(f.kernel(L, L))
        return f.features(X, L, W)
    return run


def rls_fast_floor(f, X, p):
    final = uniform_floor(f, X, p)
    spd = np.eye(p) * p

    def run():
        B = final()
        f.gram(B)
        R = scipy.linalg.cholesky(spd, lower=True, check_finite=False)
        scipy.linalg.solve_triangular(R, B.T, lower=True, check_finite=False)
        return final()
    return run


def cholesky_floor(f, X, p, approx):
    sizes = approx.info["block_sizes"]
    f.calibrate_columns(X, sizes)
    factor, left = random((p, len(X))), random((max(sizes), p))

    def run():
        k = 0
        for t in sizes:
            f.kernel_columns(X, X[k : k + t])
            f.update(left[:t, : k + t], factor[: k + t])
            k += t
    return run


def square_floor(f, X, p):
    """K(n, p) + GEMM(n, p, p/2): a Cholesky factor's flops as one product."""
    L = X[:p]
    half = random((p, p // 2))

    def run():
        return f.features(X, L, half)
    return run


def factorizations(name: str, info: dict) -> list[tuple[str, int, int]]:
    """The dense factorisations a dictionary sampler's fit made, read from its ``info``:
    ("chol+inv", s, 0) a Cholesky factorisation and triangular inverse of size s (SQUEAK's
    DICT-UPDATE), ("chol+solve", s, c) a Cholesky factorisation of size s and a triangular
    solve with c right-hand sides (BLESS's and recursive RLS's score estimates)."""
    if name == "squeak":
        return [("chol+inv", merged, 0) for merged, _, _ in info["history"] if merged]
    if name == "bless":
        sizes = [(candidates, atoms) for _, candidates, atoms in info["history"]]
        return [("chol+solve", sizes[h - 1][1], sizes[h][0]) for h in range(1, len(sizes))
                if sizes[h - 1][1] and sizes[h][0]]
    if name == "recursive-rls":
        return [("chol+solve", s, c)
                for s, c in zip(info["sample_sizes"], info["level_sizes"], strict=True)]
    return []


def dictionary_floor(f, X, p, approx, name):
    """The fit's kernel entries, as blocks of p columns, its dense factorisations
    (:func:`factorizations`), then uniform's floor: K(p, p), which the fit counted, and the
    transform's K(n, p), which it did not."""
    final = uniform_floor(f, X, p)
    rows = max(0, (approx.info["kernel_evals"] - len(X) - p * p) // p)
    L = X[:p]
    steps = factorizations(name, approx.info)
    largest = max([s for _, s, _ in steps] + [1])
    spd = random((largest, largest)) / largest
    spd = spd @ spd.T + np.eye(largest)
    rhs = random((largest, max([c for _, _, c in steps] + [1])), seed=3)

    def run():
        for start in range(0, rows, len(X)):
            f.kernel(X[: min(len(X), rows - start)], L)
        for kind, s, c in steps:
            A = np.array(spd[:s, :s], order="F")
            factor, _ = scipy.linalg.lapack.dpotrf(A, lower=1, overwrite_a=1)
            if kind == "chol+inv":
                scipy.linalg.lapack.dtrtri(factor, lower=1, overwrite_c=1)
            else:
                scipy.linalg.lapack.dtrtrs(factor, np.asfortranarray(rhs[:s, :c]),
                                           lower=1, overwrite_b=1)
        return final()
    return run


def fourier_floor(f, X, p):
    Omega = random((X.shape[1], p // 2)) * np.sqrt(2 * f.gamma)  # gaussian frequencies, N(0, σ⁻²)

    def run():
        return f.cos_sin(X, Omega)
    return run


def task_floor(f, data: Dataset, p: int, task: str):
    X, X_test = data.X_train, data.X_test
    features = uniform_floor(f, X, p)
    L = X[:p]
    W = random((p, p))
    targets = np.ones((len(X), 3))
    predictions = random((p, len(LAMS) * 2))
    s = min(3000, len(X))

    def run():
        Phi = features()
        G = f.gram(Phi)
        Phi.T @ targets
        f.eigh(G)
        Phi_test = f.features(X_test, L, W)
        if task in ("krr", "classification"):
            Phi_test @ predictions
        elif task == "kpca":
            f.gemm(Phi_test, W)
        else:
            Phi_S = Phi[:s]
            f.eigvalsh(Phi_S @ Phi_S.T)
    return run


# ---------------------------------------------------------------------------------------
# kbench calls
# ---------------------------------------------------------------------------------------
def make_data(n: int, n_test: int, d: int, task_type: str = "regression") -> Dataset:
    rng = np.random.default_rng(0)
    X = rng.standard_normal((n + n_test, d))
    y = np.sin(X[:, :3].sum(axis=1)) + 0.1 * rng.standard_normal(n + n_test)
    if task_type == "binary":
        y = np.where(y > 0, "a", "b")
    return Dataset("benchmark", X[:n], y[:n], X[n:], y[n:], task_type, [f"x{j}" for j in range(d)],
                   {})


def sampler_call(name, X, kernel, p, lam):
    sampler = kbench.make_sampler(name)

    def run():
        approx = sampler.fit(X, kernel, rank=p, lam=lam, seed=0)
        return approx if approx.train_features is not None else approx.transform(X)
    return run


def sklearn_call(X, kernel, p):
    nystroem = Nystroem(gamma=0.5 / kernel.sigma_**2, n_components=p, random_state=0)
    return lambda: nystroem.fit_transform(X)


def task_call(task_name, data, kernel, p):
    task = kbench.make_task(task_name) if task_name == "approximation" else \
        kbench.make_task(task_name, exact_max_n=1)
    task.prepare(data, kernel)
    sampler = kbench.make_sampler("uniform")
    lams = LAMS if task.uses_lams else None

    def run():
        approx = sampler.fit(data.X_train, kernel, rank=p, seed=0)
        return task.evaluate(data, approx, kernel, lams=lams)
    return run


#: a comparison alternates its two calls for at least this many seconds (``--repeats`` at least):
#: the fastest of one run each is noisy on a shared machine, and a fast call costs little to repeat
MIN_SECONDS = 3.0


def interleaved(ours, floor, repeats: int, seconds: float = MIN_SECONDS) -> tuple[float, float]:
    """The fastest of at least ``repeats`` alternations of kbench's call and its floor, more
    until ``seconds`` have passed (at most 100)."""
    times_ours, times_floor = [], []
    start = time.perf_counter()
    while len(times_ours) < repeats or (time.perf_counter() - start < seconds
                                        and len(times_ours) < 100):
        times_floor.append(_time(floor))
        times_ours.append(_time(ours))
    return min(times_ours), min(times_floor)


def table_rows(args, env) -> dict:
    data = make_data(args.n, args.n_test, args.d)
    binary = make_data(args.n, args.n_test, args.d, "binary")
    kernel = kbench.make_kernel("gaussian", sigma="median").fit(data.X_train)
    f = Primitives(kernel.sigma_)
    rows, layouts = [], {}
    for p in args.ps:
        f.calibrate(data.X_train, p)
        layouts[p] = f.describe()
        print(f"fastest layouts at p = {p}:", layouts[p], flush=True)
        ours, theirs = interleaved(sampler_call("uniform", data.X_train, kernel, p, args.lam),
                                   sklearn_call(data.X_train, kernel, p), args.repeats)
        rows.append({"what": "uniform vs scikit-learn Nystroem", "p": p, "seconds": ours,
                     "floor": theirs,
                     "ratio": ours / theirs, "target": SKLEARN_TARGET, "against": "scikit-learn"})
        print(rows[-1], flush=True)
        for name in args.samplers:
            call = sampler_call(name, data.X_train, kernel, p, args.lam)
            if name == "uniform":
                floor = uniform_floor(f, data.X_train, p)
            elif name == "rls-fast":
                floor = rls_fast_floor(f, data.X_train, p)
            elif name in ("rp-cholesky", "pivoted-cholesky"):
                approx = kbench.make_sampler(name).fit(data.X_train, kernel, rank=p, lam=args.lam,
                                                       seed=0)
                floor = cholesky_floor(f, data.X_train, p, approx)
            elif name in ("rff", "orf", "sorf", "fastfood"):
                floor = fourier_floor(f, data.X_train, p)
            else:
                approx = kbench.make_sampler(name).fit(data.X_train, kernel, rank=p, lam=args.lam,
                                                       seed=0)
                floor = dictionary_floor(f, data.X_train, p, approx, name)
            ours, low = interleaved(call, floor, args.repeats)
            rows.append({"what": f"sampler {name}", "p": p, "seconds": ours, "floor": low,
                         "ratio": ours / low,
                         "target": TARGET, "against": "floor"})
            if name in ("rp-cholesky", "pivoted-cholesky"):
                again, square = interleaved(call, square_floor(f, data.X_train, p), args.repeats)
                sizes = approx.info["block_sizes"]
                rows[-1].update(square_floor=square, square_ratio=again / square, block_sizes=sizes,
                                column_layouts={t: f.describe_columns()[t]
                                                for t in sorted(set(sizes))})
            print(rows[-1], flush=True)
        for name in args.tasks:
            dataset = binary if name == "classification" else data
            ours, low = interleaved(task_call(name, dataset, kernel, p),
                                    task_floor(f, dataset, p, name),
                                    args.repeats)
            rows.append({"what": f"uniform + {name}", "p": p, "seconds": ours, "floor": low,
                         "ratio": ours / low,
                         "target": TARGET, "against": "floor"})
            print(rows[-1], flush=True)
    return {"rows": rows, "layouts": layouts, "sigma": kernel.sigma_}


# ---------------------------------------------------------------------------------------
# The streamed krr path
# ---------------------------------------------------------------------------------------
def streaming_child(which: str, args) -> None:
    """One process: kbench's streamed uniform + krr, or its blocked floor, or both
    interleaved (``timing``); prints seconds and peak RSS as JSON."""
    data = make_data(args.n, args.n_test, args.d)
    kernel = kbench.make_kernel("gaussian", sigma="median").fit(data.X_train)
    p = max(args.ps)
    task = kbench.make_task("krr", exact_max_n=1)
    sampler = kbench.make_sampler("uniform")
    f = Primitives(kernel.sigma_)
    if which == "timing":  # the memory run measures kbench alone
        f.calibrate(data.X_train[:50_000], p)
    L, W = data.X_train[:p], random((p, p))
    predictions = random((p, len(LAMS)))

    def ours():
        approx = sampler.fit(data.X_train, kernel, rank=p, seed=0)
        return task.evaluate(data, approx, kernel, lams=LAMS)

    def floor():
        f.eigh(f.kernel(L, L))
        G, c = np.zeros((p, p)), np.zeros(p)
        step = 50_000
        for start in range(0, len(data.X_train), step):
            Phi = f.features(data.X_train[start : start + step], L, W)
            G += f.gram(Phi)
            c += Phi.T @ data.y_train[start : start + step]
        f.eigh(G)
        f.features(data.X_test, L, W) @ predictions

    result = {}
    if which == "timing":
        result["seconds"], result["floor"] = interleaved(ours, floor, args.repeats)
        result["layouts"] = f.describe()
    else:
        result["seconds"] = _time(ours)
    result["peak_rss_mb"] = peak_rss_mb()
    print(json.dumps(result))


def streaming(args) -> dict:
    results = {}
    for which in ("memory", "timing"):
        command = [sys.executable, __file__, "--streaming-child", which, "--n",
                   str(args.streaming_n),
                   "--n-test", str(args.n_test), "--d", str(args.d), "--ps", str(max(args.ps)),
                   "--repeats", str(args.streaming_repeats)]
        out = subprocess.run(command, capture_output=True, text=True)
        if out.returncode != 0:
            raise SystemExit(f"streamed krr ({which}) failed:\n{out.stderr[-2000:]}")
        results[which] = json.loads(out.stdout.strip().splitlines()[-1])
        print(which, results[which], flush=True)
    seconds, low = results["timing"]["seconds"], results["timing"]["floor"]
    return {"seconds": seconds, "floor": low, "ratio": seconds / low,
            "peak_rss_mb": results["memory"]["peak_rss_mb"],
            "layouts": results["timing"]["layouts"]}


# ---------------------------------------------------------------------------------------
def markdown(result: dict, args, env: dict) -> str:
    met = lambda ok: "yes" if ok else "**no**"  # noqa: E731
    lines = [
        "# kbench against its floor",
        "",
        "Written by `python benchmarks/floor.py --write` (the floor models: its docstring). n = "
        f"{args.n} training rows (d = {args.d}, standard normal), {args.n_test} test rows, "
        f"gaussian kernel (σ = median = {result['sigma']:.3f}), λ = {args.lam:g} for the samplers "
        f"that use it, {len(LAMS)} λ in [1e-7, 1e-2] for krr and classification; each time the "
        f"fastest of {args.repeats} or more runs interleaved with its floor (as many as "
        f"{MIN_SECONDS:g} s allow, up to 100). {env_line(env)}; BLAS kernels: "
        f"{', '.join(sorted(env['blas_kernels']))}.",
        "",
        "Fastest layouts of the floor's primitives here (rows per block, threads): "
        + "; ".join(f"p = {p}: " + ", ".join(f"{what} {layout}" for what, layout in layouts.items())
                    for p, layouts in result["layouts"].items()) + ".",
        "",
        "| computation | p | kbench (s) | floor (s) | ratio | target | met |",
        "|---|---:|---:|---:|---:|---:|---|",
    ]
    for row in result["rows"]:
        floor_label = "scikit-learn" if row["against"] == "scikit-learn" else ""
        lines.append(f"| {row['what']} | {row['p']} | {row['seconds']:.3f} | {row['floor']:.3f}"
                     f"{' (' + floor_label + ')' if floor_label else ''} | {row['ratio']:.2f} | "
                     f"≤ {row['target']:g} | {met(row['ratio'] <= row['target'])} |")
    squares = [row for row in result["rows"] if "square_ratio" in row]
    if squares:
        lines += ["", "Against K(n, p) + GEMM(n, p, p/2), the Cholesky fits' kernel entries and "
                      "update flops in one block each, what their passes over the n points cost "
                      "(timed again, interleaved): "
                  + "; ".join(f"{row['what'].removeprefix('sampler ')} at p = {row['p']}, "
                              f"{len(row['block_sizes'])} blocks "
                              f"({', '.join(map(str, row['block_sizes'][:4]))}"
                              f"{', …' if len(row['block_sizes']) > 4 else ''}): "
                              f"{row['square_ratio']:.2f}×"
                              for row in squares)
                  + ". The kernel columns' fastest layout for each block width is in "
                    "benchmarks/results/floor.json."]
    streamed = result.get("streaming")
    if streamed:
        peak = streamed["peak_rss_mb"] / 1024
        lines += [
            "",
            f"Streamed krr path: n = {args.streaming_n} training rows, {args.n_test} test rows, p "
            f"= {max(args.ps)}, features in row blocks (1 GiB budget); floor in 50 000-row blocks "
            f"(kernel block, Φ, ΦᵀΦ, Φᵀy), fastest of {args.streaming_repeats} interleaved runs; "
            "peak RSS of kbench's run alone, in its own process.",
            "",
            "| computation | kbench (s) | floor (s) | ratio | target | met | peak RSS | ≤ 3 GiB |",
            "|---|---:|---:|---:|---:|---|---:|---|",
            f"| uniform + krr, streamed | {streamed['seconds']:.1f} | {streamed['floor']:.1f} | "
            f"{streamed['ratio']:.2f} | ≤ {STREAMED_TARGET:g} | "
            f"{met(streamed['ratio'] <= STREAMED_TARGET)} | {peak:.2f} GiB | "
            f"{met(peak <= STREAMED_PEAK_GIB)} |",
        ]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=50_000)
    parser.add_argument("--n-test", type=int, default=10_000)
    parser.add_argument("--d", type=int, default=20)
    parser.add_argument("--ps", type=lambda s: [int(v) for v in s.split(",")], default=[200, 1000])
    parser.add_argument("--lam", type=float, default=1e-4)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--streaming-n", type=int, default=750_000)
    parser.add_argument("--streaming-repeats", type=int, default=2)
    parser.add_argument("--samplers", type=lambda s: s.split(","), default=SAMPLERS,
                        help="comma-separated samplers to time (default: all)")
    parser.add_argument("--tasks", type=lambda s: s.split(",") if s else [], default=TASKS,
                        help="comma-separated tasks to time ('' for none; default: all)")
    parser.add_argument("--skip-streaming", action="store_true")
    parser.add_argument("--write", action="store_true",
                        help="write benchmarks/floor.md and benchmarks/results/floor.json")
    parser.add_argument("--streaming-child", choices=("memory", "timing"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.streaming_child:
        return streaming_child(args.streaming_child, args)
    env = environment()
    env["blas_kernels"] = sorted({f"{lib.internal_api} {lib.version}: "
                                  f"{getattr(lib, 'architecture', '?')}, {lib.num_threads} threads"
                                  for lib in BLAS.lib_controllers})
    result = table_rows(args, env)
    if not args.skip_streaming:
        result["streaming"] = streaming(args)
    text = markdown(result, args, env)
    print(text)
    if args.write:
        write_results("floor", {"environment": env, "setting": vars(args), **result})
        path = __file__.replace("floor.py", "floor.md")
        with open(path + ".tmp", "w") as out:
            out.write(text)
        os.replace(path + ".tmp", path)


if __name__ == "__main__":
    main()
