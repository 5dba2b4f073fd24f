"""The ranges kbench writes its numbers in: a result file holding a value outside one was
edited or written by another program, and is refused before it is ranked
(:func:`kbench.sweep.store.check_values`); the conformance kit checks a task's rows against
the same table."""

_SQUARES = (lambda v: v >= 0, "means of squares >= 0")
_RATE = (lambda v: (v >= 0) & (v <= 1), "rates in [0, 1]")
_R2 = (lambda v: v <= 1, "R² <= 1 (1 - SSE/SST)")
#: column → (the test a value kbench writes passes, what kbench writes)
VALUE_RANGES = {
    "rank": (lambda v: (v >= 1) & (v % 1 == 0), "whole ranks >= 1"),
    "lam": (lambda v: v > 0, "λ > 0"),
    **dict.fromkeys([f"{part}_mse{exact}" for part in ("train", "val", "test") for exact in ("", "_exact")], _SQUARES),
    **dict.fromkeys(["test_r2", "test_r2_exact"], _R2),
    **dict.fromkeys([f"{rate}{exact}" for rate in ("accuracy", "balanced_accuracy", "auc") for exact in ("", "_exact")],
                    _RATE),
}
