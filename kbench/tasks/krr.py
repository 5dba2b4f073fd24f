"""Kernel ridge regression on features along a λ path (Bach 2013 §4; docs/conventions.md)."""

from __future__ import annotations

import time

import numpy as np

from kbench._validation import check_lam_path
from kbench.hookspecs import hookimpl
from kbench.lowrank.features import features_of
from kbench.tasks.base import Headline, RidgePath, Task, Validation, relative_excess


def mean_squared_errors(predictions: np.ndarray, target: np.ndarray) -> np.ndarray:
    """Mean squared error of each λ's predictions (L×n) against one target (n); NaN for no rows."""
    if target.size == 0:
        return np.full(predictions.shape[0], np.nan)
    return np.mean((predictions - target[None, :]) ** 2, axis=1)


class KRRTask(Task):
    """Kernel ridge regression: train, validation and test MSE and test R² (1 − MSE / the
    test targets' variance, as sklearn's r2_score) per λ, the exact kernel's, the validation
    MSE of the training mean (the trivial predictor), relative excess over exact KRR, and
    the fixed-design risk (1/n)‖f̂ − f*‖² when the generator knows f*.

    Streams: the weights come from the training moments (ΦᵀΦ, Φᵀy, Φᵀf*), the training
    errors from the same quadratic forms, the validation and test errors from their blocks."""

    name = "krr"
    accepts = ("regression",)
    # relative differences below 1e-9: the round-off of the ridge solves, not the sampler;
    # 1% of test MSE is too small to matter
    headline = Headline("test_mse", smaller_is_better=True, exact="test_mse_exact", rtol=1e-9,
                        equivalence=0.01)
    # λ is chosen on the validation MSE; a dataset is ranked when the exact kernel explains
    # 5% of the validation targets' variance about the training mean (R² ≥ 0.05)
    validation = Validation("val_mse", margin=0.05)
    metrics = (Headline("train_mse", smaller_is_better=True),
               Headline("test_r2", smaller_is_better=False, exact="test_r2_exact"),
               Headline("risk_fixed_design", smaller_is_better=True,
                        exact="risk_fixed_design_exact"),
               Headline("rel_excess_test_mse", smaller_is_better=True))

    def prepare_exact(self, exact, data, lams) -> None:
        if data.task_type in self.accepts:
            exact.ridge_path(data.y_train[:, None], check_lam_path(lams))

    def exact_scores(self, exact, data, lams) -> dict[str, np.ndarray]:
        if data.task_type not in self.accepts:
            return {}
        return self._held_out_exact(exact.ridge_path(data.y_train[:, None], check_lam_path(lams)),
                                    data)

    def _held_out_exact(self, predictions, data) -> dict[str, np.ndarray]:
        """The exact kernel's validation and test MSE along the path (its ``Predictions``)."""
        return {self.validation.exact: mean_squared_errors(predictions.validation[:, :, 0],
                                                           data.y_val),
                self.headline.exact: mean_squared_errors(predictions.test[:, :, 0], data.y_test)}

    def evaluate(self, data, approx, kernel, lams=(1e-3,)) -> list[dict]:
        features = features_of(data, approx, kernel)
        self.check_data(data)
        lams = check_lam_path(lams)
        moments = features.moments()
        n = moments.n
        start = time.perf_counter()
        path = RidgePath(moments.gram, n, lams)
        coefficients = path.coefficients(moments.cross["y"])
        W = (path.V @ coefficients)[:, :, 0]  # L×r
        y = data.y_train
        metrics = {"train_mse": path.squared_errors(coefficients, moments.cross["y"],
                                                    [y @ y])[:, 0] / n}
        if data.f_train is not None:
            f = data.f_train
            metrics["risk_fixed_design"] = path.squared_errors(coefficients, moments.cross["f"],
                                                               [f @ f])[:, 0] / n
        time_fit = moments.seconds + time.perf_counter() - start
        metrics[self.validation.metric], _ = held_out_errors(features.validation, W, data.y_val)
        metrics["test_mse"], time_predict = held_out_errors(features.test, W, data.y_test)
        # the training mean
        trivial = mean_squared_errors(np.full((1, data.y_val.size), y.mean()), data.y_val)
        metrics[self.validation.trivial] = np.repeat(trivial, len(lams))
        test_variance = float(np.var(data.y_test))
        metrics["test_r2"] = 1.0 - metrics["test_mse"] / test_variance
        exact = self.exact(data, kernel)
        if exact is not None:
            predictions = exact.ridge_path(data.y_train[:, None], lams)
            metrics.update(self._held_out_exact(predictions, data))
            metrics["test_r2_exact"] = 1.0 - metrics["test_mse_exact"] / test_variance
            if data.f_train is not None:
                metrics["risk_fixed_design_exact"] = mean_squared_errors(
                    predictions.train[:, :, 0], data.f_train)
        rows = []
        diagnostics = exact.diagnostics_path(lams) if exact is not None else None
        solver = exact.solver_path(data.y_train[:, None], lams) if exact is not None else None
        for i, lam in enumerate(lams):
            row = {"lam": float(lam), **{k: float(v[i]) for k, v in metrics.items()},
                   "time_features_s": features.seconds, "time_fit_s": time_fit,
                   "time_predict_s": time_predict}
            if exact is not None:
                row["rel_excess_test_mse"] = relative_excess(row["test_mse"], row["test_mse_exact"])
                if "risk_fixed_design_exact" in row:
                    row["risk_ratio"] = row["risk_fixed_design"] / row["risk_fixed_design_exact"]
                row.update(diagnostics[i], **solver[i], time_exact_s=exact.seconds)
            rows.append(row)
        return rows


def held_out_errors(rows, W: np.ndarray, target: np.ndarray) -> tuple[np.ndarray, float]:
    """The mean squared error of each λ's predictions (weights ``W``: L×r) on held-out rows
    (their :class:`kbench.lowrank.features.FeatureRows`), NaN without rows, and the seconds
    the predictions took."""
    errors, seconds = np.zeros(W.shape[0]), 0.0
    for first, block in rows.blocks():
        start = time.perf_counter()
        residual = block @ W.T - target[first : first + len(block), None]  # b×L
        errors += np.einsum("il,il->l", residual, residual)
        seconds += time.perf_counter() - start
    with np.errstate(invalid="ignore", divide="ignore"):
        return errors / len(target), seconds


@hookimpl
def kbench_register_tasks():
    return [KRRTask]
