"""λ chosen on held-out data (kbench.tasks.selection): the choice, its marks on the rows, and
λ paths extended until the choice is interior, in the sweep as users run it."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.kernel_ridge import KernelRidge

import kbench
from kbench.sweep.config import AUTO_LAMS, lam_path
from kbench.tasks.selection import best_index, extensions, mark, resolve_path


def test_the_best_value_is_chosen_and_ties_go_to_the_larger_lambda():
    assert best_index([3.0, 1.0, 2.0], smaller_is_better=True) == 1
    # a plateau: its largest λ
    assert best_index([0.7, 0.9, 0.9, 0.5], smaller_is_better=False) == 2
    # an unconverged exact solve
    assert best_index([np.nan, 2.0, np.nan], smaller_is_better=True) == 1
    assert best_index([-np.inf, 2.0, 3.0], smaller_is_better=True) == 1  # an overflow is no choice
    assert best_index([np.nan, np.nan], smaller_is_better=True) is None


def test_a_choice_at_an_end_adds_the_next_decade_within_the_bounds():
    lams = [1e-4, 1e-3, 1e-2]
    assert extensions(lams, [1.0, 2.0, 3.0], True, (1e-8, 1.0)) == [1e-5]
    assert extensions(lams, [3.0, 2.0, 1.0], True, (1e-8, 1.0)) == [0.1]
    assert extensions(lams, [2.0, 1.0, 3.0], True, (1e-8, 1.0)) == []  # interior
    assert extensions(lams, [1.0, 2.0, 3.0], True, (1e-4, 1.0)) == []  # the bound stops it
    assert extensions(lams, [1.0, 2.0, 3.0], True, None) == []  # a fixed path
    assert extensions([1e-3], [1.0], True, (1e-8, 1.0)) == [1e-4, 1e-2]


def test_a_path_is_extended_until_the_minimum_of_a_curve_is_interior():
    """A curve with its minimum at λ = 10⁻⁷·³, below a path starting at 10⁻⁴: three decades
    are added, one at a time, and no more; a bound at 10⁻⁶ stops them."""
    asked = []

    def curves(path):
        asked.append(list(path))
        return [((np.log10(path) + 7.3) ** 2, True)]

    path = resolve_path([1e-4, 1e-3, 1e-2], (1e-12, 1e3), curves)
    assert np.allclose(path, [1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2], rtol=1e-12)
    assert len(asked) == 5  # each extension, then the path that is interior
    assert resolve_path([1e-4, 1e-3], (1e-6, 1e3), curves) == [1e-6, 1e-5, 1e-4, 1e-3]


def test_rows_are_marked_with_the_lambda_each_chose():
    task = kbench.make_task("krr")
    rows = [{"lam": lam, "val_mse": v, "val_mse_exact": e, "test_mse": t}
            for lam, v, e, t in ((1e-3, 0.5, 0.40, 0.1), (1e-2, 0.4, 0.45, 0.9),
                                 (1e-1, 0.6, 0.50, 0.2))]
    marked = mark(rows, task, "validation")
    assert {(r["lam_selected"], r["lam_selected_exact"], r["lam_at_edge"], r["lam_at_edge_exact"],
             r["selected_on"]) for r in marked} == {(1e-2, 1e-3, False, True, "validation")}
    assert "lam_selected" not in rows[0]  # new dicts
    oracle = mark(rows, task, "oracle")  # chosen on the test metric: a paper's reproduction
    assert oracle[0]["lam_selected"] == 1e-3 and oracle[0]["selected_on"] == "test"


def test_a_lambda_path_task_without_a_validation_criterion_records_its_test_selection():
    """A plugin's λ-path task that declares no validation criterion follows the oracle in a
    sweep that chooses on validation data, and its rows say so (its page then does)."""
    bare = type("Bare", (type(kbench.make_task("krr")),), {"validation": None})()
    rows = [{"lam": lam, "test_mse": t, "test_mse_exact": e}
            for lam, t, e in ((1e-3, 0.3, 0.2), (1e-2, 0.1, 0.4))]
    marked = mark(rows, bare, "validation")
    assert {(r["lam_selected"], r["lam_selected_exact"], r["selected_on"])
            for r in marked} == {(1e-2, 1e-3, "test")}


def test_auto_is_a_path_with_bounds_and_a_listed_path_is_fixed():
    assert lam_path("auto") == (AUTO_LAMS, (1e-12, 1e3))
    assert lam_path([1e-2, 1e-3]) == ((1e-3, 1e-2), None)
    assert lam_path([1e-2, 1e-3], [1e-3, 1e-2]) == ((1e-3, 1e-2), None)  # bounds at its ends: fixed
    with pytest.raises(ValueError, match="reaches beyond lam_bounds"):
        lam_path([1e-2, 1e-3], [1e-2, 1.0])
    with pytest.raises(ValueError, match="lams must be a list of λ > 0 or 'auto'"):
        lam_path("automatic")


def cells(frame, task):
    rows = frame[frame["task_label"] == task]
    return rows.groupby(["sampler_label", "rank", "repetition"])


@pytest.fixture(scope="module")
def low_optimum(tmp_path_factory):
    """krr on diabetes with a path (0.1, 1) far above its validation optimum, extended within
    [1e-8, 1]; and the same path fixed."""
    out = tmp_path_factory.mktemp("lams")
    common = dict(datasets=["sklearn:diabetes"], samplers=["uniform", "rls-fast"], tasks=["krr"],
                  ranks=[20, 100],
                  repetitions=2, progress=False)
    extended = kbench.run(lams=[0.1, 1.0], lam_bounds=[1e-8, 1.0], out=out / "extended", **common)
    fixed = kbench.run(lams=[0.1, 1.0], out=out / "fixed", **common)
    return extended, fixed


def test_an_optimum_below_the_path_gets_an_interior_lambda(low_optimum):
    extended, _ = low_optimum
    for _, rows in cells(extended, "krr"):
        chosen = rows["lam_selected_exact"].iloc[0]
        assert chosen < 0.1 and not rows["lam_at_edge_exact"].iloc[0]
        assert rows["lam"].min() < chosen < rows["lam"].max()  # interior
        assert (rows["selected_on"] == "validation").all()


def test_a_fixed_path_flags_a_choice_at_its_end(low_optimum):
    _, fixed = low_optimum
    for _, rows in cells(fixed, "krr"):
        assert rows["lam_selected_exact"].iloc[0] == 0.1 and rows["lam_at_edge_exact"].all()
        assert sorted(rows["lam"]) == [0.1, 1.0]  # never extended


def test_the_chosen_lambda_minimises_the_validation_error_not_the_test_error(low_optimum):
    extended, _ = low_optimum
    differ = 0
    for _, rows in cells(extended, "krr"):
        assert rows.loc[rows["val_mse"].idxmin(), "lam"] == rows["lam_selected"].iloc[0]
        assert rows.loc[rows["val_mse_exact"].idxmin(), "lam"] == rows["lam_selected_exact"].iloc[0]
        differ += rows.loc[rows["test_mse"].idxmin(), "lam"] != rows["lam_selected"].iloc[0]
    assert differ > 0  # the test metric would have chosen otherwise somewhere


def test_the_exact_kernels_validation_error_is_scikit_learns():
    """val_mse_exact against scikit-learn's KernelRidge(alpha = nλ) fitted on the training
    rows (tolerance: two ridge solves of a 264×264 system, 1e-9 relative)."""
    data = kbench.load_dataset("sklearn:diabetes", seed=0)
    kernel = kbench.make_kernel("gaussian", sigma=2.0)
    approx = kbench.make_sampler("uniform").fit(data.X_train, kernel, 20, seed=0)
    rows = kbench.make_task("krr").evaluate(data, approx, kernel, lams=[1e-3, 1e-2])
    for row in rows:
        model = KernelRidge(alpha=data.n_train * row["lam"], kernel="rbf",
                            gamma=1 / 8).fit(data.X_train, data.y_train)
        assert row["val_mse_exact"] == pytest.approx(
            np.mean((model.predict(data.X_val) - data.y_val) ** 2), rel=1e-9)
        assert row["val_mse_trivial"] == pytest.approx(
            np.mean((data.y_val - data.y_train.mean()) ** 2), rel=1e-12)
