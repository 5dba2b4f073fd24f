"""Conformance checks a sampler plugin runs in its own test suite (docs/plugins.md).

    from kbench.testing import check_sampler

    def test_my_sampler_honours_the_contract():
        check_sampler("my-sampler")          # or the class itself

``check_sampler`` fits the sampler on small seeded problems and checks the contract every
kbench task relies on: shapes and rank bounds, determinism under a seed, a PSD
approximation below K for Nyström-type maps, clamping of rank > n, and clear ValueErrors
on bad input. It raises an AssertionError listing every check that failed.
"""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Callable, Iterator

import numpy as np

from kbench.lowrank.maps import LowRank
from kbench.registry import create, get_registry
from kbench.samplers.base import Sampler
from kbench.sweep.signals import raising_on


def _problem(kernel: str, n: int = 120, d: int = 4, seed: int = 0):

    X = np.random.default_rng(seed).standard_normal((n, d))
    return X, create(kernel, "kernel").fit(X)


@contextlib.contextmanager
def _time_limit(seconds: float | None) -> Iterator[None]:
    """Raise TimeoutError in the block after ``seconds`` (SIGALRM, main thread only; a
    sampler stuck in one long C call is stopped when the call returns)."""
    if seconds is None:
        yield
        return
    error = lambda: TimeoutError(f"did not finish within {seconds:g} s (a loop without a bound?)")  # noqa: E731
    with raising_on(signal.SIGALRM, error):
        signal.setitimer(signal.ITIMER_REAL, seconds)
        try:
            yield
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)


def check_sampler(sampler: str | type | Sampler, lam: float = 1e-3, timeout: float | None = 60.0,
                  kernel: str = "gaussian:sigma=median", **params) -> list[str]:
    """Run the contract checks on a sampler (registry name, class or instance).

    ``kernel`` is the spec of the kernel the checks use (a sampler made for one kernel
    family, say polynomial sketches, is checked with one of its own). Each check fails
    after ``timeout`` seconds (None: no limit). Returns the names of the checks that
    passed; raises AssertionError naming the ones that failed (each with its reason).
    """
    if isinstance(sampler, str):
        get_registry().create("sampler", sampler, **params)  # an unknown name stops here, once
        make = lambda: get_registry().create("sampler", sampler, **params)  # noqa: E731
    elif isinstance(sampler, type):
        make = lambda: sampler(**params)  # noqa: E731
    else:
        make = lambda: sampler  # noqa: E731
    X, kernel = _problem(kernel)
    n = X.shape[0]
    K = kernel(X)
    failures: list[str] = []
    passed: list[str] = []

    def check(name: str, body: Callable[[], None]) -> None:
        try:
            with _time_limit(timeout):
                body()
        except Exception as exc:  # report every failure, not only the first
            failures.append(f"{name}: {type(exc).__name__}: {exc}")
        else:
            passed.append(name)

    def fit(rank=10, seed=0, data=X, **kw):
        return make().fit(data, kernel, rank=rank, lam=lam, seed=seed, **kw)

    def shapes():
        for rank in (1, 10, 40):
            approx = fit(rank)
            assert isinstance(approx, LowRank), f"fit returned {type(approx).__name__}, not LowRank"
            Z = approx.transform(X)
            assert Z.shape == (n, approx.rank), f"transform gave {Z.shape}, rank says {approx.rank}"
            assert 1 <= approx.rank <= rank, f"rank {approx.rank} outside [1, {rank}]"
            assert np.all(np.isfinite(Z)), "transform returned NaN or inf"
            assert isinstance(approx.info.get("kernel_evals"), int), "info['kernel_evals'] missing"
            if approx.landmarks is not None:
                landmarks = np.asarray(approx.landmarks)
                assert len(np.unique(landmarks)) == len(landmarks) <= rank, "landmarks not distinct"
                assert landmarks.min() >= 0 and landmarks.max() < n, "landmark index out of range"
            X_new = np.random.default_rng(1).standard_normal((7, X.shape[1]))
            assert approx.transform(X_new).shape == (7, approx.rank)

    def determinism():
        a, b = fit(seed=3).transform(X), fit(seed=3).transform(X)
        assert np.array_equal(a, b), "the same seed gave different features"

    def psd_order():
        approx = fit(40)
        if not approx.nystrom_type:
            return
        L = approx.transform(X) @ approx.transform(X).T
        tolerance = 1e-8 * np.trace(K)
        assert np.linalg.eigvalsh(K - L).min() >= -tolerance, "K − L is not PSD: L is not below K"
        assert np.linalg.eigvalsh(L).min() >= -tolerance, "L is not PSD"

    def rank_above_n():
        approx = fit(n + 50)
        if approx.nystrom_type:
            assert approx.rank <= n, f"rank {approx.rank} > n = {n}"
            assert any("exceeds n" in w for w in approx.info.get("warnings", [])), \
                "rank > n was not recorded as a warning in info['warnings']"

    def bad_input():
        bad = X.copy()
        bad[0, 0] = np.nan
        cases = {
            "NaN in X": lambda: fit(data=bad),
            "1-D X": lambda: fit(data=X[:, 0]),
            "rank 0": lambda: fit(rank=0),
            "lam <= 0": lambda: make().fit(X, kernel, rank=5, lam=-1.0),
            "wrong number of columns": lambda: fit().transform(X[:, :2]),
        }
        for label, call in cases.items():
            try:
                call()
            except ValueError:
                continue
            raise AssertionError(f"{label} did not raise ValueError")

    for name, body in [("shapes and rank bounds", shapes), ("determinism", determinism),
                       ("PSD order 0 ≼ L ≼ K", psd_order), ("rank > n", rank_above_n),
                       ("bad input", bad_input)]:
        check(name, body)
    if failures:
        raise AssertionError(f"sampler {sampler!r} fails {len(failures)} contract check(s):\n  "
                             + "\n  ".join(failures))
    return passed
