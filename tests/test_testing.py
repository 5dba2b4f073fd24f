"""The conformance kit: every built-in sampler passes; broken samplers are caught."""

from __future__ import annotations

import numpy as np
import pytest

from kbench.lowrank.maps import nystrom
from kbench.samplers.uniform import UniformSampler
from kbench.testing import check_sampler
from tests.conftest import ALL_SAMPLERS


@pytest.mark.parametrize("name", ALL_SAMPLERS)
def test_builtin_samplers_pass_the_conformance_kit(name):
    assert len(check_sampler(name)) == 5


class Unseeded(UniformSampler):
    """Ignores the seed it is given."""

    name = "unseeded"

    def _fit(self, X, kernel, rank, lam, rng):
        return super()._fit(X, kernel, rank, lam, np.random.default_rng())


class Inflated(UniformSampler):
    """Scales its features up: L is no longer below K."""

    name = "inflated"

    def _fit(self, X, kernel, rank, lam, rng):
        approx = super()._fit(X, kernel, rank, lam, rng)
        approx.projection *= 1.5
        return approx


class TooMany(UniformSampler):
    """Returns more landmarks than the rank asked for."""

    name = "too-many"

    def _fit(self, X, kernel, rank, lam, rng):
        return nystrom(X, kernel, rng.choice(X.shape[0], size=min(rank + 2, X.shape[0]), replace=False))


@pytest.mark.parametrize(
    "cls, failing",
    [(Unseeded, "determinism"), (Inflated, "PSD order"), (TooMany, "shapes and rank bounds")],
)
def test_broken_samplers_are_caught(cls, failing):
    with pytest.raises(AssertionError, match=failing):
        check_sampler(cls)


def test_cli_check_plugin():
    from click.testing import CliRunner

    from kbench.cli import main

    result = CliRunner().invoke(main, ["check-plugin", "rp-cholesky"])
    assert result.exit_code == 0 and "all 5 contract checks passed" in result.output
    result = CliRunner().invoke(main, ["check-plugin", "rp-choleski"])
    assert result.exit_code == 2 and "did you mean 'rp-cholesky'" in result.output
