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
from dataclasses import dataclass

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


@dataclass
class _Problem:
    """A small seeded problem and the sampler under check."""

    make: Callable[[], Sampler]
    X: np.ndarray
    kernel: object
    lam: float

    @property
    def n(self) -> int:
        return self.X.shape[0]

    def fit(self, rank: int = 10, seed: int = 0, data=None):
        return self.make().fit(self.X if data is None else data, self.kernel, rank=rank, lam=self.lam, seed=seed)


def _shapes(p: _Problem) -> None:
    for rank in (1, 10, 40):
        approx = p.fit(rank)
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
        X_new = np.random.default_rng(1).standard_normal((7, p.X.shape[1]))
        assert approx.transform(X_new).shape == (7, approx.rank)


def _determinism(p: _Problem) -> None:
    a, b = p.fit(seed=3).transform(p.X), p.fit(seed=3).transform(p.X)
    assert np.array_equal(a, b), "the same seed gave different features"


def _psd_order(p: _Problem) -> None:
    approx = p.fit(40)
    if not approx.nystrom_type:
        return
    K = p.kernel(p.X)
    L = approx.transform(p.X) @ approx.transform(p.X).T
    tolerance = 1e-8 * np.trace(K)
    assert np.linalg.eigvalsh(K - L).min() >= -tolerance, "K − L is not PSD: L is not below K"
    assert np.linalg.eigvalsh(L).min() >= -tolerance, "L is not PSD"


def _rank_above_n(p: _Problem) -> None:
    approx = p.fit(p.n + 50)
    if approx.nystrom_type:
        assert approx.rank <= p.n, f"rank {approx.rank} > n = {p.n}"
        assert any("exceeds n" in w for w in approx.info.get("warnings", [])), \
            "rank > n was not recorded as a warning in info['warnings']"


def _bad_input(p: _Problem) -> None:
    bad = p.X.copy()
    bad[0, 0] = np.nan
    cases = {
        "NaN in X": lambda: p.fit(data=bad),
        "1-D X": lambda: p.fit(data=p.X[:, 0]),
        "rank 0": lambda: p.fit(rank=0),
        "lam <= 0": lambda: p.make().fit(p.X, p.kernel, rank=5, lam=-1.0),
        "wrong number of columns": lambda: p.fit().transform(p.X[:, :2]),
    }
    for label, call in cases.items():
        try:
            call()
        except ValueError:
            continue
        raise AssertionError(f"{label} did not raise ValueError")


#: the contract checks, by name
CHECKS: list[tuple[str, Callable[[_Problem], None]]] = [
    ("shapes and rank bounds", _shapes), ("determinism", _determinism), ("PSD order 0 ≼ L ≼ K", _psd_order),
    ("rank > n", _rank_above_n), ("bad input", _bad_input)]


def check_sampler(sampler: str | type | Sampler, lam: float = 1e-3, timeout: float | None = 60.0,
                  kernel: str = "gaussian:sigma=median", **params) -> list[str]:
    """Run the contract checks on a sampler (registry name, class or instance).

    Parameters
    ----------
    sampler : a registry name, a Sampler subclass or an instance.
    lam : the ridge λ the fits get.
    timeout : seconds each check may take (None: no limit).
    kernel : the spec of the kernel the checks use (a sampler made for one kernel family,
        say polynomial sketches, is checked with one of its own).
    **params : the sampler's parameters (with a name or a class).

    Returns
    -------
    The names of the checks that passed; raises AssertionError naming the ones that failed,
    each with its reason.
    """
    if isinstance(sampler, str):
        get_registry().create("sampler", sampler, **params)  # an unknown name stops here, once
        make = lambda: get_registry().create("sampler", sampler, **params)  # noqa: E731
    elif isinstance(sampler, type):
        make = lambda: sampler(**params)  # noqa: E731
    else:
        make = lambda: sampler  # noqa: E731
    problem = _Problem(make, *_problem(kernel), lam)
    failures, passed = [], []
    for name, body in CHECKS:
        try:
            with _time_limit(timeout):
                body(problem)
        except Exception as exc:  # report every failure, not only the first
            failures.append(f"{name}: {type(exc).__name__}: {exc}")
        else:
            passed.append(name)
    if failures:
        raise AssertionError(f"sampler {sampler!r} fails {len(failures)} contract check(s):\n  "
                             + "\n  ".join(failures))
    return passed
