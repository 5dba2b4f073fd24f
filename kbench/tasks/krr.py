"""Kernel ridge regression on features along a λ path (Bach 2013 §4; docs/conventions.md)."""

from __future__ import annotations

import time

import numpy as np

from kbench.hookspecs import hookimpl
from kbench.tasks.base import (
    Headline,
    Task,
    check_lams,
    feature_matrices,
    relative_excess,
    ridge_path,
)


def _mse(pred: np.ndarray, target: np.ndarray) -> np.ndarray:
    """Mean squared error of each λ's predictions (L×n) against one target (n)."""
    return np.mean((pred - target[None, :]) ** 2, axis=1)


class KRRTask(Task):
    """Kernel ridge regression: train/test MSE per λ, relative excess over exact KRR, and the
    fixed-design risk (1/n)‖f̂ − f*‖² when the generator knows f*."""

    name = "krr"
    accepts = ("regression",)
    headline = Headline("test_mse", smaller_is_better=True, exact="test_mse_exact")

    def evaluate(self, data, approx, kernel, lams=(1e-3,)) -> list[dict]:
        self.check_data(data)
        lams = check_lams(lams)
        Phi, Phi_test, time_features = feature_matrices(data, approx)
        start = time.perf_counter()
        W = ridge_path(Phi, data.y_train[:, None], lams)[:, :, 0]  # L×r
        time_fit = time.perf_counter() - start
        start = time.perf_counter()
        test_pred = (Phi_test @ W.T).T
        time_predict = time.perf_counter() - start
        train_pred = (Phi @ W.T).T
        metrics = {
            "train_mse": _mse(train_pred, data.y_train),
            "test_mse": _mse(test_pred, data.y_test),
        }
        if data.f_train is not None:
            metrics["risk_fixed_design"] = _mse(train_pred, data.f_train)
        exact = self.exact(data, kernel)
        if exact is not None:
            exact_train, exact_test = (p[:, :, 0] for p in exact.ridge_path(data.y_train[:, None], lams))
            metrics["test_mse_exact"] = _mse(exact_test, data.y_test)
            if data.f_train is not None:
                metrics["risk_fixed_design_exact"] = _mse(exact_train, data.f_train)
        rows = []
        diagnostics = exact.diagnostics_path(lams) if exact is not None else None
        for i, lam in enumerate(lams):
            row = {"lam": float(lam), **{k: float(v[i]) for k, v in metrics.items()},
                   "time_features_s": time_features, "time_fit_s": time_fit,
                   "time_predict_s": time_predict}
            if exact is not None:
                row["rel_excess_test_mse"] = relative_excess(row["test_mse"], row["test_mse_exact"])
                if "risk_fixed_design_exact" in row:
                    row["risk_ratio"] = row["risk_fixed_design"] / row["risk_fixed_design_exact"]
                row.update(diagnostics[i], time_exact_s=exact.seconds)
            rows.append(row)
        return rows


@hookimpl
def kbench_register_tasks():
    return [KRRTask]
