"""How a page's rows chose λ: on the validation rows, on the test set (the oracle λ, a
paper's protocol), or not at all (tasks whose metrics do not depend on λ)."""

from __future__ import annotations

import pandas as pd

from kbench.reporting.scores import task_of


def chooses_lam(frame: pd.DataFrame) -> bool:
    """Whether some row's task chooses λ (krr, classification: a task with a λ path; not
    kpca or approximation, whose metrics do not depend on one); unknown tasks are taken to."""
    return any(task is None or task.uses_lams
               for task in map(task_of, frame["task_label"].dropna().unique()))


def selection_text(frame: pd.DataFrame) -> str:
    """How the rows chose λ, for a page's header: on the validation rows, on the test rows
    (oracle), or both (rows of several kinds)."""
    legacy = "on the test set (the oracle λ: rows from before kbench chose λ on validation data)"
    if "lam_selected" not in frame or frame["lam_selected"].isna().all():
        return legacy
    kinds = set(frame["selected_on"].dropna())
    said = {"validation": "on the validation rows (carved from the training rows), the test metric "
                          "read at it",
            "test": "on the test set (the oracle λ: a paper's protocol reproduced, or a task that "
                    "declares no validation criterion)"}
    return "; ".join(said[kind] for kind in sorted(kinds, reverse=True))
