"""The task contract: ``evaluate(data, approx, kernel, lams) -> list[dict]`` (one row per λ
or per KPCA component). A task sees only the LowRank feature map, never the sampler.

A task class also owns what the rest of kbench needs to know about it (docs/plugins.md):
its headline metric and direction, the exact-kernel column of that metric, whether it
reports one row per λ of the path, whether it needs the exact baseline, and which
sampler families it scores. The runner, the workflow and the leaderboard read these from
the registry, so a plugin task reaches a leaderboard like a built-in one.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import pandas as pd

from kbench.datasets.base import LABELED
from kbench.errors import ContractViolation, Refused
from kbench.exact.baseline import DEFAULT_EXACT_MAX_N, EXACT_MAX_N, exact_baseline
from kbench.parameters import Declared
from kbench.samplers.base import FAMILIES


def _check_fields(declared, bools=(), amounts=(), numbers_=()) -> None:
    """A TypeError naming the field of a task's declaration that is not what it says: a flag
    True or False, an amount a finite number ≥ 0, a value a finite number."""
    owner = type(declared).__name__
    for name in bools:
        if not isinstance(getattr(declared, name), bool | np.bool_):
            raise TypeError(f"{owner}({declared.metric!r}): {name} must be True or False, got "
                            f"{getattr(declared, name)!r}.")
    for name in (*amounts, *numbers_):
        value = getattr(declared, name)
        if isinstance(value, bool) or not isinstance(value,
                                                     numbers.Real) or not math.isfinite(value) or (
                name in amounts and value < 0):
            raise TypeError(f"{owner}({declared.metric!r}): {name} must be a finite number"
                            f"{' >= 0' if name in amounts else ''}, got {value!r}.")


@dataclass(frozen=True)
class Headline:
    """The metric a leaderboard ranks a task's cells by, and when two values of it are a tie
    (docs/conventions.md):

    * the noise floor: closer than ``atol + rtol·max(|a|, |b|)`` (float64 round-off, or a
      quantity that is zero to working precision);
    * the region of practical equivalence: a :meth:`difference` of at most ``equivalence``
      in magnitude, relative to the larger value (``relative``) or in the metric's units."""

    metric: str
    smaller_is_better: bool
    #: the column holding the exact-kernel value of the same metric, if the task has one
    exact: str | None = None
    atol: float = 0.0
    rtol: float = 0.0
    equivalence: float = 0.0
    relative: bool = True

    def __post_init__(self) -> None:
        _check_fields(self, bools=("smaller_is_better", "relative"),
                      amounts=("atol", "rtol", "equivalence"))

    def check_numbers(self, rows: pd.DataFrame, task: str) -> None:
        """A ValueError naming the column when rows hold text where the headline (or its exact
        value) is read: a plugin's text, which ``check-plugin`` refuses, named, not a parse
        error."""
        for column in (c for c in (self.metric, self.exact) if c is not None and c in rows):
            written = rows[column].dropna()
            text = written[pd.to_numeric(written, errors="coerce").isna()]
            if len(text):
                raise ValueError(f"task {task!r}: its headline column {column!r} holds text "
                                 f"({text.iloc[0]!r}), not numbers; kbench ranks numbers (kbench "
                                 "check-plugin checks a task for this).")

    def difference(self, ours, theirs) -> np.ndarray:
        """How much better ``ours`` is than ``theirs`` (arrays of values; NaN or infinite: a
        failed cell), on the scale the equivalence region is declared in: relative to the
        larger magnitude (in [−1, 1] for values of one sign) or in the metric's units; 0
        within the noise floor. A failure loses by 1 against a value and ties with a failure."""
        a, b = (np.asarray(v, dtype=float) for v in (ours, theirs))
        a, b = np.where(np.isfinite(a), a, np.nan), np.where(np.isfinite(b), b, np.nan)
        gain = (b - a) if self.smaller_is_better else (a - b)
        scale = np.maximum(np.abs(a), np.abs(b))
        with np.errstate(invalid="ignore", divide="ignore"):
            if self.relative:
                gain = np.where(scale > 0, gain / scale, 0.0)
            gain = np.where(np.abs(a - b) <= self.atol + self.rtol * scale, 0.0, gain)
        gain = np.where(np.isnan(a) & ~np.isnan(b), -1.0, gain)
        gain = np.where(~np.isnan(a) & np.isnan(b), 1.0, gain)
        return np.where(np.isnan(a) & np.isnan(b), 0.0, gain)

    def equivalent(self, ours, theirs) -> np.ndarray:
        """Whether each pair of values is a tie: inside the equivalence region (or the noise
        floor)."""
        return np.abs(self.difference(ours, theirs)) <= self.equivalence


@dataclass(frozen=True)
class Validation:
    """What a λ-path task chooses λ on, and how it tells an informative dataset
    (docs/conventions.md): ``metric``, a column of its rows measured on the validation rows
    (a loss, continuous in λ); the exact kernel's value in ``<metric>_exact`` and a trivial
    predictor's (the training mean, the class prior) in ``<metric>_trivial``. A dataset is
    informative when the exact kernel's :meth:`skill` at the λ it chooses reaches ``margin``."""

    metric: str
    smaller_is_better: bool = True
    margin: float = 0.0
    #: the value of a perfect predictor
    perfect: float = 0.0

    def __post_init__(self) -> None:
        _check_fields(self, bools=("smaller_is_better",), amounts=("margin",),
                      numbers_=("perfect",))

    @property
    def exact(self) -> str:
        return f"{self.metric}_exact"

    @property
    def trivial(self) -> str:
        return f"{self.metric}_trivial"

    def skill(self, value, trivial) -> np.ndarray:
        """The share of the way from the trivial predictor's value to a perfect one's:
        1 − MSE/MSE_trivial (R²) for a squared error."""
        value, trivial = np.asarray(value, dtype=float), np.asarray(trivial, dtype=float)
        with np.errstate(invalid="ignore", divide="ignore"):
            return (value - trivial) / (self.perfect - trivial)


class Task(Declared):
    """Base class of tasks; subclasses set ``name`` and implement ``evaluate``."""

    kind = "task"
    parameters = {"exact_max_n": EXACT_MAX_N}
    #: task types of the datasets the task accepts (kbench.datasets.TASK_TYPES; a task that
    #: needs no target also accepts "unlabeled")
    accepts: ClassVar[tuple[str, ...]] = LABELED
    #: what leaderboards rank by (None: the task has no leaderboard section)
    headline: ClassVar[Headline | None] = None
    #: what a λ-path task chooses λ on, and its trivial predictor (None: λ is not chosen)
    validation: ClassVar[Validation | None] = None
    #: further metrics the interactive leaderboard charts, read at the λ the headline chose
    metrics: ClassVar[tuple[Headline, ...]] = ()
    #: True when ``evaluate`` returns one row per λ of the path (the sweep then marks the λ
    #: chosen on validation data: kbench.tasks.selection); False for λ-free tasks (one row,
    #: or one per component)
    uses_lams: ClassVar[bool] = True
    #: True when the task compares with the exact baseline (computed once per repetition)
    needs_exact: ClassVar[bool] = True
    #: the sampler families whose headline metric the task defines
    families: ClassVar[tuple[str, ...]] = FAMILIES

    def __init__(self, exact_max_n: int = DEFAULT_EXACT_MAX_N) -> None:
        self.exact_max_n = exact_max_n

    def __repr__(self) -> str:
        params = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({params})"

    def evaluate(self, data, approx, kernel, lams=(1e-3,)) -> list[dict]:
        raise NotImplementedError

    def prepare(self, data, kernel) -> None:
        """Compute now what every evaluation of this task on ``data`` shares, whatever the
        sampler, kept in the workspace (:func:`kbench.plugin.cached`): the sweep calls it once per
        (dataset, kernel, repetition), in the workspace its jobs open, before they fork. Nothing by
        default; an error here is recorded in each of the task's cells on that data (``failed_in``
        task), which are not evaluated."""

    def exact_scores(self, exact, data, lams) -> dict[str, np.ndarray]:
        """The exact kernel's values along the λ path ``lams`` of what λ is chosen on, by
        column name: ``validation.exact`` (and ``headline.exact``, the test metric an oracle
        selection chooses on), from the exact baseline ``exact``: what the sweep extends a λ
        path by (kbench.tasks.selection.resolve_path). Nothing by default."""
        return {}

    def prepare_exact(self, exact, data, lams) -> None:
        """Ask the matrix-free exact baseline ``exact`` now for what :meth:`evaluate` will ask
        of it on ``data`` along the λ path ``lams`` (ridge solves, eigenpairs): it is then
        computed once, before the jobs fork (or in the workflow's exact job), and saved with
        the baseline. Nothing by default; never called for the dense baseline."""

    def check_ranks(self, ranks) -> None:
        """Raise a ValueError when the task's parameters cannot be scored at any of a sweep's
        ``ranks`` (KPCA: more components than the largest rank): a usage error before any
        work. Nothing by default."""

    def headline_rows(self, rows):
        """The rows (a DataFrame of this task's ok rows) that carry the headline metric; a
        task with several rows per λ (KPCA: one per number of components) keeps one kind."""
        return rows

    def headline_setting(self, rank: int) -> str:
        """What the headline compares at ``rank`` besides the rank itself ("" if nothing;
        KPCA: the number of components), shown in leaderboard column headers."""
        return ""

    # -- helpers shared by the tasks -------------------------------------------------------
    def check_data(self, data) -> None:
        if data.task_type not in self.accepts:
            other = "classification" if data.task_type != "regression" else "krr"
            raise Refused(
                f"task {self.name!r} needs a {' or '.join(self.accepts)} dataset; {data.name} is "
                f"{data.task_type}: use the {other!r} task."
            )

    def exact(self, data, kernel):
        return exact_baseline(data, kernel, self.exact_max_n)


class RidgePath:
    """Ridge regression on features along a λ path from the training moments alone (the
    normal equations; Bach 2013 §4): one eigendecomposition G = ΦᵀΦ = V diag(s) Vᵀ, then
    w(λ) = V diag(1/(s + nλ)) Vᵀ ΦᵀY for every λ, never the n×p features."""

    def __init__(self, gram: np.ndarray, n: int, lams: np.ndarray) -> None:
        s, self.V = np.linalg.eigh(gram)
        self.s = np.clip(s, 0.0, None)
        self.shrink = 1.0 / (self.s[None, :] + n * np.asarray(lams)[:, None])  # L×r

    def coefficients(self, cross: np.ndarray) -> np.ndarray:
        """w(λ) in the eigenbasis, Vᵀw = (Vᵀ ΦᵀY)/(s + nλ), for ``cross`` = ΦᵀY (r×c): L×r×c."""
        return self.shrink[:, :, None] * (self.V.T @ cross)[None]

    def weights(self, cross: np.ndarray) -> np.ndarray:
        """The weights w(λ) (L×r×c) of the targets whose ``cross`` = ΦᵀY (r×c)."""
        return self.V @ self.coefficients(cross)

    def squared_errors(self, coefficients: np.ndarray, cross: np.ndarray,
                       target_squares) -> np.ndarray:
        """‖t − Φw(λ)‖² (L×c) for the targets t with Φᵀt = ``cross`` and tᵀt = ``target_squares``
        (per column), from tᵀt − 2wᵀΦᵀt + wᵀΦᵀΦw in the eigenbasis. Rounding costs about
        eps·tᵀt absolute, far below any error a benchmark resolves."""
        projected = self.V.T @ cross  # r×c
        fitted = np.einsum("lrc,rc->lc", coefficients, projected)
        energy = np.einsum("r,lrc->lc", self.s, coefficients * coefficients)
        return np.asarray(target_squares)[None, :] - 2.0 * fitted + energy


def check_rows(rows, task: str) -> list[dict]:
    """A task's result: a non-empty list of dicts from column names (text) to scalars (numbers,
    text, booleans, None), or a :class:`kbench.ContractViolation` saying what came instead."""
    if not isinstance(rows, list | tuple) or not rows:
        raise ContractViolation(f"task {task!r} returned {_kind(rows)}, not a non-empty list of "
                                "dict rows.")
    for index, row in enumerate(rows):
        if not isinstance(row, dict):
            raise ContractViolation(f"task {task!r}: row {index} is {_kind(row)}, not a dict of "
                                    "columns.")
        for key, value in row.items():
            if not isinstance(key, str):
                raise ContractViolation(f"task {task!r}: row {index} has a column named {key!r}, "
                                        "not text.")
            if (value is not None and not isinstance(value, numbers.Real | str | np.generic)
                    or isinstance(value, numbers.Complex | np.complexfloating)
                    and not isinstance(value, numbers.Real)):
                raise ContractViolation(f"task {task!r}: row {index}, column {key!r} is "
                                        f"{_kind(value)}, not a real number, text, a boolean or "
                                        "None.")
            if key.startswith("time_") and key.endswith("_s") and value is not None and not (
                    isinstance(value, numbers.Real | np.number) and not isinstance(value, bool)
                    and np.isfinite(value) and value >= 0):
                raise ContractViolation(f"task {task!r}: row {index}, column {key!r} is {value!r}; "
                                        "a time_*_s column holds seconds, a finite number ≥ 0 "
                                        "(None if not measured).")
            if isinstance(value, int) and not -2**63 <= value < 2**63:
                raise ContractViolation(f"task {task!r}: row {index}, column {key!r} is an integer "
                                        f"beyond 64 bits ({len(str(abs(value)))} digits); return "
                                        "it as a float.")
    return list(rows)


def check_columns(rows: list[dict], task: str, reserved) -> list[dict]:
    """``rows`` without a column kbench writes itself (``reserved``: a cell's identity, its
    fit's and its split's columns), which a task's value would overwrite."""
    clash = sorted({key for row in rows for key in row} & set(reserved))
    if clash:
        raise ContractViolation(f"task {task!r} returned the column(s) "
                                f"{', '.join(map(repr, clash[:5]))}, which kbench writes itself "
                                "(the cell's identity and provenance); rename them.")
    return require_lam(rows, task)


def check_headline(task: Task, rows: list[dict], rank: int) -> None:
    """A ContractViolation unless the rows :meth:`Task.headline_rows` keeps from a cell of
    ``rank`` hold a finite headline: a cell the leaderboard cannot rank is not ``ok``."""
    if task.headline is None:
        return
    metric = task.headline.metric
    kept = task.headline_rows(pd.DataFrame(rows).assign(rank=rank))
    if not len(kept) or metric not in kept:
        raise ContractViolation(f"task {task.name!r}: headline_rows kept no row with the headline "
                                f"{metric!r}")
    values = pd.to_numeric(kept[metric], errors="coerce").to_numpy(dtype=float)
    if not np.isfinite(values).all():
        raise ContractViolation(f"task {task.name!r}: the headline {metric!r} is not finite: "
                                f"{kept[metric].tolist()[:8]}")


def require_lam(rows: list[dict], task: str) -> list[dict]:
    """``rows``, each with its ``lam`` (NaN for a λ-free task), a number, which with
    ``components`` keys the rows of a result file: no two rows of a cell share them."""
    missing = next((index for index, row in enumerate(rows) if "lam" not in row), None)
    if missing is not None:
        raise ContractViolation(f"task {task!r}: row {missing} has no 'lam' (a λ-free task writes "
                                "NaN), which keys every row of a result file.")
    text = next((row["lam"] for row in rows
                 if not isinstance(row["lam"], numbers.Real | np.floating)
                 or isinstance(row["lam"], bool)), None)
    if text is not None or any(row["lam"] is None for row in rows):
        raise ContractViolation(f"task {task!r}: lam must be a number (NaN for a λ-free task), got "
                                f"{text!r}.")
    # (repr: NaN equals NaN)
    keys = [repr((float(row["lam"]), row.get("components"))) for row in rows]
    if len(set(keys)) < len(keys):
        raise ContractViolation(f"task {task!r} returned several rows of one λ and components (a "
                                "result file keeps one row per λ and components): give each row "
                                "its own, or return one row.")
    return rows


def _kind(value) -> str:
    shape = getattr(value, "shape", None)
    return f"a {type(value).__name__}" + (f" of shape {shape}" if shape is not None else "")


def relative_excess(value: float, exact: float | None) -> float:
    """(approx − exact)/exact, NaN when there is no exact value."""
    if exact is None or not np.isfinite(exact) or exact == 0:
        return float("nan")
    return float((value - exact) / exact)
