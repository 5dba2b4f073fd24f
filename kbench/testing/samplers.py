"""The sampler conformance kit: shapes and rank bounds, determinism, agreement with the
kernel (0 ≼ L ≼ K for Nyström maps, E[ZZᵀ] ≈ K for random features), rank > n, bad input,
and the declared parameters of the sampler and of the kernel it is checked with."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from kbench.datasets import load_dataset
from kbench.errors import ContractViolation
from kbench.exact.baseline import exact_baseline
from kbench.kernels import DEFAULT_KERNEL
from kbench.kernels.base import check_kernel
from kbench.lowrank.checks import compared_with_exact, info_columns
from kbench.lowrank.maps import LowRank
from kbench.lowrank.workspace import Workspace
from kbench.registry import create, list_plugins
from kbench.samplers.base import Sampler
from kbench.spec import Spec
from kbench.sweep.parts import fits_seed, graph_of, part_arrays
from kbench.sweep.worker import FIT_COLUMNS
from kbench.testing._kit import (
    check_declared,
    expect_value_errors,
    kbench_columns,
    plugin_factory,
    run_checks,
    small_problem,
)


@dataclass
class _Problem:
    """A small seeded problem and the sampler under check."""

    make: Callable[[], Sampler]
    X: np.ndarray
    kernel: object
    lam: float
    kernel_spec: str = DEFAULT_KERNEL

    @property
    def n(self) -> int:
        return self.X.shape[0]

    def fit(self, rank: int = 10, seed: int = 0, data=None):
        return self.make().fit(self.X if data is None else data, self.kernel, rank=rank,
                               lam=self.lam, seed=seed)


def _shapes(p: _Problem) -> None:
    # the result columns info writes, by the kind of value each fit gives
    kinds: dict[str, set[str]] = {}
    for rank in (1, 10, 40):
        approx = p.fit(rank)
        # (one of kbench's: refused)
        for key, value in info_columns(approx.info, kbench_columns()).items():
            kinds.setdefault(key, set()).add("text" if isinstance(value, str) else "a boolean"
                                             if isinstance(value, bool | np.bool_) else "a number")
        assert isinstance(approx, LowRank), f"fit returned {type(approx).__name__}, not LowRank"
        Z = approx.transform(p.X)
        assert Z.shape == (p.n, approx.rank), f"transform gave {Z.shape}, rank says {approx.rank}"
        assert 1 <= approx.rank <= rank, f"rank {approx.rank} outside [1, {rank}]"
        assert np.all(np.isfinite(Z)), "transform returned NaN or inf"
        assert isinstance(approx.info.get("kernel_evals"), int), "info['kernel_evals'] missing"
        if approx.landmarks is not None:
            landmarks = np.asarray(approx.landmarks)
            assert len(np.unique(landmarks)) == len(landmarks) <= rank, "landmarks not distinct"
            assert landmarks.min() >= 0 and landmarks.max() < p.n, "landmark index out of range"
        rng = np.random.default_rng(1)  # points drawn as the problem's (small_problem)
        X_new = (rng.random((7, 1)) if p.kernel.unit_interval
                 else rng.standard_normal((7, p.X.shape[1])))
        Z_new = approx.transform(X_new)
        assert Z_new.shape == (7, approx.rank), f"transform of new rows gave {Z_new.shape}"
        assert np.all(np.isfinite(Z_new)), \
            "transform of rows it was not fitted on returned NaN or inf"
    mixed = {key: sorted(found) for key, found in kinds.items() if len(found) > 1}
    assert not mixed, (f"info[{next(iter(mixed))!r}] is "
                       f"{' in one fit and '.join(next(iter(mixed.values())))} in another: a "
                       "result column keeps one type, or the sweep's cells cannot be read as one "
                       "table")


def _determinism(p: _Problem) -> None:
    X = p.X.copy()
    a = p.fit(seed=3).transform(X)
    assert np.array_equal(X, p.X), \
        "fit changed its argument X in place (work on a copy: the caller's data is shared)"
    b = p.fit(seed=3).transform(X)
    assert np.array_equal(a, b), "the same seed gave different features"


#: seeds a sweep could give a fit (its seeds are 32-bit draws): a sampler that fails on some
#: seeds fails on one of these unless it fails on fewer than one seed in ~6 (5/6 ** 16 < 5%)
_SEEDS = tuple(int(s) for s in np.random.SeedSequence(2024).generate_state(16))


def _seeds(p: _Problem) -> None:
    bad = [seed for seed in _SEEDS if not np.all(np.isfinite(p.fit(seed=seed).transform(p.X)))]
    assert not bad, (f"transform returned NaN or inf with {len(bad)} of {len(_SEEDS)} seeds "
                     f"(e.g. seed={bad[0]})")


def _kernel_agreement(p: _Problem) -> None:
    approx = p.fit(40)
    if not approx.nystrom_type:
        return _unbiased(p)
    K = p.kernel(p.X)
    L = approx.transform(p.X) @ approx.transform(p.X).T
    tolerance = 1e-8 * np.trace(K)
    assert np.linalg.eigvalsh(K - L).min() >= -tolerance, "K − L is not PSD: L is not below K"
    assert np.linalg.eigvalsh(L).min() >= -tolerance, "L is not PSD"


#: the random-feature check: points, dimension, features (odd: the random-phase one too), fits
_RF_N, _RF_D, _RF_RANK, _RF_FITS = 30, 32, 255, 64
#: the bias a random-feature map may keep, as a fraction of ‖K‖_F (see _unbiased)
_RF_BIAS = 0.2


def _spectral_kernel(spec: str, X: np.ndarray):
    """The check's kernel fitted on X; a data-driven σ (median, cv) becomes half its value,
    far from the median heuristic and from 1 (the median distance is ≈ √(2d) = 8 here)."""
    kernel = create(spec, "kernel").fit(X)
    if not isinstance(kernel.get_params().get("sigma"), str):
        return kernel
    parsed = Spec.parse(spec, "kernel")
    sigma = kernel.resolved_params()["sigma"] / 2
    return create(Spec.of("kernel", parsed.name, {**parsed.params, "sigma": sigma})).fit(X)


def _unbiased(p: _Problem) -> None:
    """Random features: M, the mean of ZZᵀ over S = 64 seeded fits, is K (entries i < j).

    For an unbiased map E‖M − K‖²_F = Σ Var(M_ij) = τ², estimated by τ² = Σ v_ij / S from
    the sample variances v_ij of the entries over the S fits: the Monte-Carlo error,
    measured, so it follows each map's own variance. M is nearly gaussian at S = 64, so
    ‖M − K‖²_F/τ² is a weighted sum of χ²₁ with weights summing to 1, and exceeds 16 with
    probability below P(χ²₁ > 16) ≈ 6e-5 however the variance is spread (Székely & Bakirov
    2003, for thresholds above 1.54); the margin also covers the error of τ itself, and
    the fits are seeded, so the outcome is fixed. On top,
    a bias of 0.2‖K‖_F is allowed: sorf's frequencies all have norm √d/σ, a bias of about
    0.10‖K‖_F at d = 32 (O(1/d), the README's note). Measured ‖M − K‖_F/‖K‖_F (τ/‖K‖_F):
    rff 0.047 (0.047), orf 0.040 (0.039), fastfood 0.051 (0.056), sorf 0.110 (0.039), so
    tolerances of 0.35–0.42; frequencies drawn for σ = 1 give 1.00, for 1.25σ 0.84, for
    the median σ 2.8 (a σ off by 10% is not caught: 0.33).
    """
    rng = np.random.default_rng(0)  # (a kernel on [0, 1): points there)
    X = rng.random((_RF_N, 1)) if p.kernel.unit_interval else rng.standard_normal((_RF_N, _RF_D))
    kernel = _spectral_kernel(p.kernel_spec, X)
    i, j = np.triu_indices(_RF_N, 1)
    products = np.array([
        (Z := p.make().fit(X, kernel, rank=_RF_RANK, lam=p.lam, seed=seed).transform(X)) @ Z.T
        for seed in range(_RF_FITS)])[:, i, j]
    K = kernel(X)[i, j]
    scale = np.linalg.norm(K)
    assert scale > 0, f"{kernel.spec()} is 0 between all the check's points: pass a wider kernel"
    error = np.linalg.norm(products.mean(axis=0) - K) / scale
    tau = np.sqrt(products.var(axis=0, ddof=1).sum() / _RF_FITS) / scale
    assert error <= 4 * tau + _RF_BIAS, (
        f"E[ZZᵀ] is not K: the mean of ZZᵀ over {_RF_FITS} seeds is {error:.3f}·‖K‖_F off, beyond "
        f"4× its Monte-Carlo error ({tau:.3f}) plus a bias of {_RF_BIAS}; is the map drawn for the "
        f"kernel's parameters ({kernel.spec()})?")


def _rank_above_n(p: _Problem) -> None:
    approx = p.fit(p.n + 50)
    if approx.nystrom_type:
        assert approx.rank <= p.n, f"rank {approx.rank} > n = {p.n}"
        assert any("exceeds n" in w for w in approx.info.get("warnings", [])), \
            "rank > n was not recorded as a warning in info['warnings']"


def _bad_input(p: _Problem) -> None:
    bad = p.X.copy()
    bad[0, 0] = np.nan
    expect_value_errors({
        "NaN in X": lambda: p.fit(data=bad),
        "1-D X": lambda: p.fit(data=p.X[:, 0]),
        "rank 0": lambda: p.fit(rank=0),
        "lam <= 0": lambda: p.make().fit(p.X, p.kernel, rank=5, lam=-1.0),
        "wrong number of columns": lambda: p.fit().transform(np.hstack([p.X, p.X])),
    })


def _declared(p: _Problem) -> None:
    for plugin in (p.make(), p.kernel):
        cls = type(plugin)
        check_declared(getattr(cls, "parameters", None), cls, f"{cls.kind} {cls.name!r}",
                       lambda given, cls=cls: cls(**given))


def _parts(p: _Problem) -> None:
    """A sampler whose fits are built in parts: its parts named in order, each built by the
    hook into arrays, and a fit handed the last (``use_prebuilt``) equal to one built in one
    piece."""
    sampler = p.make()
    try:
        graph = graph_of(sampler)
        if not graph:
            return
        for seed in (0, 1):
            made: dict = {}
            parts_seed = fits_seed(sampler, seed)
            for part, inputs in graph.items():
                built = sampler.build_part(p.X, p.kernel, p.lam, parts_seed, part,
                                           [made[name] for name in inputs])
                made[part] = part_arrays(built, sampler.name, part)
            from_parts = p.make()
            from_parts.use_prebuilt({parts_seed: made[list(graph)[-1]]})
            apart = from_parts.fit(p.X, p.kernel, rank=10, lam=p.lam, seed=seed)
            assert "prebuilt" in apart.info, ("a fit handed its parts (use_prebuilt) did not use "
                                              "them: its info has no 'prebuilt' (does parts_seed "
                                              "draw the seed _fit draws?)")
            # the same arithmetic either way: equal up to round-off
            whole = p.fit(10, seed).transform(p.X)
            assert np.allclose(apart.transform(p.X), whole, rtol=1e-9, atol=1e-12), \
                "the fit from its parts differs from the fit built in one piece"
    except ContractViolation as exc:
        raise AssertionError(str(exc)) from None


def _against_exact(p: _Problem) -> None:
    """A sampler that compares its fits with the exact kernel: its hook, given a fit and the
    exact baseline of the same training rows, returns new columns of numbers, as a sweep checks,
    leaves the baseline as it was, and names no column its fit's info or a task writes."""
    sampler = p.make()
    if not sampler.compares_with_exact:
        return
    lam = p.lam if sampler.needs_lam else None
    # classes and a real-valued target: every built-in task takes one of them
    for spec in _EXACT_DATA:
        data = load_dataset(spec)
        kernel = create(p.kernel_spec, "kernel").fit(data.X_train, data.y_train)
        approx = sampler.fit(data.X_train, kernel, rank=10, lam=lam, seed=0)
        try:
            with Workspace():
                exact = exact_baseline(data, kernel)
                reserved = {*kbench_columns(), *FIT_COLUMNS}
                columns = compared_with_exact(f"sampler {sampler.name!r}", sampler, approx, exact,
                                              lam, reserved)
                for task, written in _task_columns(sampler, data, approx, kernel):
                    shared = sorted(set(columns) & written)
                    assert not shared, (f"against_exact returns {shared}, which task {task!r} "
                                        "writes too (a sweep records its cells as errors); rename "
                                        "them")
        except ContractViolation as exc:
            raise AssertionError(str(exc)) from None


#: the data a sampler's comparison with the exact kernel is checked on
_EXACT_DATA = ("synthetic:two-balls:n=160", "synthetic:friedman1:n=160")


def _task_columns(sampler: Sampler, data, approx: LowRank, kernel):
    """(name, columns of its rows) of each registered task that takes this data and family,
    evaluated on ``approx`` at one λ, in the caller's workspace."""
    for name in list_plugins("tasks"):
        task = create(name, "task")
        if data.task_type in task.accepts and sampler.family in task.families:
            task.prepare(data, kernel)
            rows = task.evaluate(data, approx, kernel, lams=[1e-3])
            yield name, {key for row in rows for key in row}


#: the sampler contract checks, by name
CHECKS: list[tuple[str, Callable[[_Problem], None]]] = [
    ("shapes and rank bounds", _shapes), ("determinism", _determinism),
                                      ("finite on every seed", _seeds),
    ("PSD order 0 ≼ L ≼ K, or E[ZZᵀ] ≈ K for random features", _kernel_agreement),
    ("rank > n", _rank_above_n), ("bad input", _bad_input), ("declared parameters", _declared),
    ("built in parts", _parts), ("compared with the exact kernel", _against_exact)]


def check_sampler(sampler: str | Spec | type | Sampler, lam: float = 1e-3,
                  timeout: float | None = 60.0,
                  kernel: str = DEFAULT_KERNEL, **params) -> list[str]:
    """Run the contract checks on a sampler: a spec (``"squeak:qbar=20"``), a Sampler
    subclass or an instance; ``params`` are its parameters (with a spec or a class).

    ``lam`` is the ridge λ the fits get, ``timeout`` the seconds each check may take (None:
    no limit), ``kernel`` the spec of the kernel the checks use (a sampler made for one
    kernel family, say polynomial sketches, is checked with one of its own). Returns the
    names of the checks that passed; raises AssertionError naming the ones that failed.
    """
    make, label = plugin_factory("sampler", sampler, params)
    X, fitted = small_problem(kernel)
    try:  # a kernel's diag its matrix's: else no bound the checks read holds
        check_kernel(fitted, X)
    except ContractViolation as exc:
        raise AssertionError(f"{label} cannot be checked with the kernel {kernel!r}: "
                             f"{exc}") from None
    # the kernel is a plugin: its failure is reported, named
    except Exception as exc:  # noqa: BLE001
        raise AssertionError(f"{label} cannot be checked with the kernel {kernel!r}, which fails "
                             f"on the check's rows: {type(exc).__name__}: {exc}") from None
    reason = make().refuses(fitted)
    if reason:  # by design, as a sweep plans: a kernel to check it with is the caller's to choose
        raise ValueError(f"{label} refuses the kernel {kernel!r} (its refuses()): {reason} Check "
                         "it with a kernel it takes (kbench check-plugin --kernel).")
    return run_checks(label, CHECKS, _Problem(make, X, fitted, lam, kernel), timeout)
