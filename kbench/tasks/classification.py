"""Classification on features: least squares on ±1 / one-hot targets along the λ path (the
KRR machinery, from the training moments), or logistic regression by Newton's method
(Bach 2013 §4.4), which needs the training features in memory."""

from __future__ import annotations

import time

import numpy as np

from kbench._validation import check_lam_path
from kbench.datasets.base import CLASSIFICATION
from kbench.exact.baseline import DEFAULT_EXACT_MAX_N, DENSE_MAX_N
from kbench.hookspecs import hookimpl
from kbench.lowrank.features import features_of, require_whole
from kbench.parameters import Param
from kbench.tasks.base import Headline, RidgePath, Task, Validation

LEARNERS = ("least-squares", "logistic")


def encode(y: np.ndarray, classes: np.ndarray) -> np.ndarray:
    """±1 (n×1) for two classes, one-hot (n×C) for more."""
    if len(classes) == 2:
        return np.where(y == classes[1], 1.0, -1.0)[:, None]
    return (y[:, None] == classes[None, :]).astype(float)


def decide(scores: np.ndarray, classes: np.ndarray) -> np.ndarray:
    """Class labels from decision values (n×1 for binary, n×C otherwise)."""
    if scores.shape[1] == 1:
        return np.where(scores[:, 0] > 0, classes[1], classes[0])
    return classes[np.argmax(scores, axis=1)]


def signs(Y: np.ndarray) -> np.ndarray:
    """The ±1 codes of each column of an encoding (one-vs-rest for one-hot columns)."""
    return Y if Y.shape[1] == 1 else 2.0 * Y - 1.0


def learner_loss(scores: np.ndarray, Y: np.ndarray, learner: str) -> np.ndarray:
    """Each λ's mean loss (over rows and columns) of decision values ``scores`` (L×m×c)
    against encoded targets ``Y`` (m×c): the squared error the least-squares learner
    minimises, or the logistic loss log(1 + e^(−ys)) of the logistic one; NaN for no rows."""
    if Y.shape[0] == 0:
        return np.full(scores.shape[0], np.nan)
    if learner == "logistic":
        return np.logaddexp(0.0, -signs(Y)[None] * scores).mean(axis=(1, 2))
    return ((scores - Y[None]) ** 2).mean(axis=(1, 2))


def prior_scores(Y_train: np.ndarray, learner: str) -> np.ndarray:
    """The decision values (c) of the trivial predictor, the class prior: each column's
    training mean (least squares), or its log-odds (logistic)."""
    if learner == "logistic":
        share = np.clip((signs(Y_train) > 0).mean(axis=0), 1e-12, 1 - 1e-12)
        return np.log(share / (1.0 - share))
    return Y_train.mean(axis=0)


def logistic_path(Phi: np.ndarray, Y: np.ndarray, lams: np.ndarray, max_iter: int = 50,
                  tol: float = 1e-10) -> np.ndarray:
    """One-vs-rest L2 logistic regression by Newton's method, minimising
    Σᵢ log(1 + exp(−yᵢ wᵀφᵢ)) + nλ‖w‖² for each λ (largest first, warm-started). L×r×c."""
    n, r = Phi.shape
    order = np.argsort(-lams)
    W = np.zeros((len(lams), r, Y.shape[1]))
    for c in range(Y.shape[1]):
        y = Y[:, c] if Y.shape[1] == 1 else 2.0 * Y[:, c] - 1.0
        w = np.zeros(r)
        for index in order:
            ridge = 2.0 * n * lams[index]
            for _ in range(max_iter):
                margin = y * (Phi @ w)
                p = 0.5 * (1.0 + np.tanh(-0.5 * margin))  # σ(−margin), overflow-free
                gradient = -(Phi.T @ (y * p)) + ridge * w
                hessian = (Phi.T * (p * (1.0 - p))) @ Phi
                hessian[np.diag_indices(r)] += ridge
                step = np.linalg.solve(hessian, gradient)
                w -= step
                if abs(step @ gradient) < tol * n:  # Newton decrement
                    break
            W[index, :, c] = w
    return W


class ClassificationTask(Task):
    """Least-squares (or logistic) classifier on the features: balanced accuracy (the
    headline: a constant predictor scores 1/C on any class balance), accuracy and AUC
    (binary) per λ on the test rows, balanced accuracy on the validation rows (λ is chosen
    on it), against the majority class and the exact-kernel classifier."""

    name = "classification"
    accepts = CLASSIFICATION
    # half a point of balanced accuracy is too small to matter
    headline = Headline("balanced_accuracy", smaller_is_better=False,
                        exact="balanced_accuracy_exact",
                        equivalence=0.005, relative=False)
    # λ is chosen on the learner's own loss on the validation rows (continuous in λ, as
    # scikit-learn's RidgeClassifierCV chooses; accuracies are steps with plateaus); a
    # dataset is ranked when the exact kernel's loss is 5% below the class prior's
    validation = Validation("val_loss", margin=0.05)
    metrics = (Headline("accuracy", smaller_is_better=False, exact="accuracy_exact"),
               Headline("auc", smaller_is_better=False, exact="auc_exact"))

    parameters = {
        "learner": Param(str, "least squares on ±1 (one-vs-rest) targets, or logistic regression",
                         choices=LEARNERS),
        **Task.parameters,
    }

    def __init__(self, learner: str = "least-squares",
                 exact_max_n: int = DEFAULT_EXACT_MAX_N) -> None:
        super().__init__(exact_max_n)
        self.learner = learner

    def _fit(self, features, Y, lams, classes) -> tuple[np.ndarray, float]:
        """Weights (L×r×c) and the seconds spent: least squares from the training moments
        (ΦᵀY of ±1 targets is the difference of the two classes' one-hot columns), logistic
        from the whole training features, which it needs in memory."""
        if self.learner == "logistic":
            Phi = require_whole(features.train, "the logistic learner")
            start = time.perf_counter()
            return logistic_path(Phi, Y, lams), time.perf_counter() - start
        moments = features.moments()
        start = time.perf_counter()
        cross = moments.cross["classes"]
        if len(classes) == 2:
            cross = cross[:, 1:] - cross[:, :1]
        W = RidgePath(moments.gram, moments.n, lams).weights(cross)
        return W, moments.seconds + time.perf_counter() - start

    def prepare_exact(self, exact, data, lams) -> None:
        if data.task_type in self.accepts and self.learner == "least-squares":
            exact.ridge_path(encode(data.y_train, data.classes), check_lam_path(lams))

    def exact_scores(self, exact, data, lams) -> dict[str, np.ndarray]:
        if data.task_type not in self.accepts or self.learner != "least-squares":
            return {}
        classes = data.classes
        predictions = exact.ridge_path(encode(data.y_train, classes), check_lam_path(lams))
        return {self.validation.exact: learner_loss(predictions.validation,
                                                    encode(data.y_val, classes), self.learner),
                self.headline.exact: np.array([
                    balanced_accuracy(data.y_test, decide(scores, classes))
                    for scores in predictions.test])}

    def evaluate(self, data, approx, kernel, lams=(1e-3,)) -> list[dict]:
        features = features_of(data, approx, kernel)
        self.check_data(data)
        lams = check_lam_path(lams)
        classes = data.classes
        Y = encode(data.y_train, classes)
        W, time_fit = self._fit(features, Y, lams, classes)
        val_scores, _ = held_out_scores(features.validation, W)
        scores, time_predict = held_out_scores(features.test, W)
        exact = self.exact(data, kernel)
        exact_scores, note = None, None
        if data.meta.get("classes_without_training_rows"):
            note = (f"class(es) {', '.join(data.meta['classes_without_training_rows'][:5])} of the "
                    "test or validation rows have no training row: no classifier predicts them")
        if exact is not None and self.learner == "logistic" and not exact.dense:
            note = "; ".join(filter(None,
                                    [note, "the exact logistic classifier needs the dense baseline "
                                           f"(n_train ≤ {DENSE_MAX_N}); n_train = {data.n_train}"]))
        elif exact is not None:
            if self.learner == "logistic":
                # exact features U diag(√s) reproduce K: logistic on them is the kernel machine
                keep = exact.s > exact.s[0] * exact.n * np.finfo(float).eps
                exact_features = exact.U[:, keep] * np.sqrt(exact.s[keep])
                weights = logistic_path(exact_features, Y, lams)
                inverse_root = exact.U[:, keep] / np.sqrt(exact.s[keep])
                exact_scores = [(exact.K_val @ inverse_root) @ weights,
                                (exact.K_test @ inverse_root) @ weights]
            else:
                predictions = exact.ridge_path(Y, lams)
                exact_scores = [predictions.validation, predictions.test]
        values, counts = np.unique(data.y_train, return_counts=True)
        majority = float(np.mean(data.y_test == values[np.argmax(counts)]))
        Y_val = encode(data.y_val, classes)
        losses = {self.validation.metric: learner_loss(val_scores, Y_val, self.learner),
                  self.validation.trivial: learner_loss(
                      np.broadcast_to(prior_scores(Y, self.learner), (1, *Y_val.shape)),
                      Y_val, self.learner).repeat(len(lams))}
        if exact_scores is not None:
            losses[self.validation.exact] = learner_loss(exact_scores[0], Y_val, self.learner)
        rows = []
        diagnostics = exact.diagnostics_path(lams) if exact_scores is not None else None
        solver = exact.solver_path(Y, lams) if exact_scores is not None else None
        for i, lam in enumerate(lams):
            row = {"lam": float(lam), **self._metrics(scores[i], data.y_test, classes),
                   **{name: float(values[i]) for name, values in losses.items()},
                   "majority_baseline": majority, "learner": self.learner,
                   "time_features_s": features.seconds, "time_fit_s": time_fit,
                   "time_predict_s": time_predict}
            if exact_scores is not None:
                exact_metrics = self._metrics(exact_scores[1][i], data.y_test, classes)
                if np.isnan(exact_scores[1][i]).any():  # a matrix-free solve that did not converge
                    exact_metrics = dict.fromkeys(exact_metrics, float("nan"))
                row.update({f"{k}_exact": v for k, v in exact_metrics.items()})
                row.update(diagnostics[i], **solver[i])
            if note:
                row["note"] = note
            rows.append(row)
        return rows

    @staticmethod
    def _metrics(scores, y_true, classes) -> dict[str, float]:
        predicted = decide(scores, classes)
        metrics = {"accuracy": float(np.mean(predicted == y_true)),
                   "balanced_accuracy": balanced_accuracy(y_true, predicted)}
        if len(classes) == 2 and len(np.unique(y_true)) == 2:
            metrics["auc"] = roc_auc(y_true == classes[1], scores[:, 0])
        return metrics


def held_out_scores(rows, W: np.ndarray) -> tuple[np.ndarray, float]:
    """Decision values of each λ (weights ``W``: L×r×c) on held-out rows (their
    :class:`kbench.lowrank.features.FeatureRows`), L×rows×c, and the seconds they took."""
    scores, seconds = np.empty((W.shape[0], rows.n, W.shape[2])), 0.0
    for first, block in rows.blocks():
        start = time.perf_counter()
        scores[:, first : first + len(block)] = block @ W
        seconds += time.perf_counter() - start
    return scores, seconds


# The two metrics below are short closed forms, computed here rather than imported from
# scikit-learn: importing sklearn.metrics costs each sweep process about a second, more than
# most cells of a small dataset take (tests compare both with scikit-learn's).
def balanced_accuracy(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """The mean over the classes present in y_true of their recall (Brodersen et al. 2010)."""
    classes, index = np.unique(y_true, return_inverse=True)
    hits = np.bincount(index, weights=(y_pred == y_true), minlength=len(classes))
    return float(np.mean(hits / np.bincount(index, minlength=len(classes))))


def roc_auc(positive: np.ndarray, scores: np.ndarray) -> float:
    """Area under the ROC curve, as the Mann–Whitney statistic P(s₊ > s₋) + ½P(s₊ = s₋):
    (sum of the positives' mid-ranks − n₊(n₊ + 1)/2) / (n₊n₋)."""
    values, index, counts = np.unique(scores, return_inverse=True, return_counts=True)
    mid_ranks = np.cumsum(counts) - (counts - 1) / 2.0  # ties share their average rank
    n_pos = int(np.count_nonzero(positive))
    n_neg = positive.size - n_pos
    return float((mid_ranks[index][positive].sum() - n_pos * (n_pos + 1) / 2.0) / (n_pos * n_neg))


@hookimpl
def kbench_register_tasks():
    return [ClassificationTask]
