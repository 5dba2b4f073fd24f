"""The page's header: when and from what it was made, the command, every version, and how
its numbers are computed (markdown code spans, which the HTML page draws as code)."""

from __future__ import annotations

import platform
import re
from datetime import datetime, timezone

import pandas as pd

from kbench.errors import one_line
from kbench.reporting.selection import chooses_lam, selection_text
from kbench.sweep.schema import CELL_KEYS

#: more kbench commits than this are counted, not listed, in a page's header
MAX_COMMITS = 3


def versions(frame: pd.DataFrame) -> str:
    """Every version the rows were computed with: kbench's (and its commit), numpy's, scipy's,
    scikit-learn's and each plugin package's, several values of one joined by " / "."""
    found = {}
    for package, column in (("kbench", "kbench_version"), ("numpy", "numpy_version"),
                            ("scipy", "scipy_version"),
                            ("scikit-learn", "sklearn_version")):
        if column in frame:
            found[package] = set(frame[column].dropna().astype(str))
    if frame.get("kbench_commit") is not None and frame["kbench_commit"].notna().any():
        pairs = frame[["kbench_version", "kbench_commit"]].dropna().drop_duplicates()
        if len(pairs) <= MAX_COMMITS:
            found["kbench"] = {f"{v} (commit {c})" for v, c in pairs.itertuples(index=False)}
        else:  # a board computed in batches over many commits: each row records its own
            found["kbench"] = {f"{v} ({len(c)} commits, {c.str.endswith('+dirty').sum()} with "
                               "local changes: each row records its own)"
                               for v, c in pairs.groupby("kbench_version")["kbench_commit"]}
    for kind in ("dataset", "kernel", "sampler", "task"):
        if f"{kind}_package" in frame:
            pairs = frame[[f"{kind}_package", f"{kind}_package_version"]].dropna().drop_duplicates()
            for package, version in pairs.itertuples(index=False):
                if package != "kbench":
                    found.setdefault(package, set()).add(str(version))
    return ", ".join(f"{package} {' / '.join(sorted(v))}" for package, v in found.items() if v)


def code_span(text: str) -> str:
    """``text`` on one line as a markdown code span (no markup inside it is read): fenced
    by one backtick more than its longest run of them (CommonMark 6.1)."""
    text = one_line(text)
    fence = "`" * (1 + max((len(run) for run in re.findall("`+", text)), default=0))
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def header(frame: pd.DataFrame, command: str | None, executor: str | None = None) -> list[str]:
    first = frame.iloc[0]
    cells = frame.drop_duplicates(CELL_KEYS)
    sweep = f" (sweep {first['sweep']})" if pd.notna(first.get("sweep")) else ""
    return [
        f"Generated {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC from {len(frame)} rows "
        f"({len(cells)} cells){sweep}.",
        f"Command: {code_span(command or 'kbench leaderboard')}"
        + (f" (executor: {code_span(executor)})." if executor else "."),
        f"Versions: {versions(frame)}; BLAS threads {first.get('blas_threads')}; host "
        f"{first.get('host')} ({platform.machine()}, Python {platform.python_version()}).",
        "A row is one sampler configuration, a section one task configuration. Metric of a cell: "
        "its test "
        + (f"value at the λ it chose {selection_text(frame)}; the exact kernel's at the λ it chose "
           "the same way; "
           if chooses_lam(frame) else "value (these tasks choose no λ: their metrics do not depend "
                                      "on one); ")
        + "KPCA at one number of components per rank for every sampler (the largest of the task's "
          "list not above the rank). Rankings: datasets are the unit (a sampler's standing on a "
          "dataset averages its places over the dataset's ranks), differences inside the task's "
          "region of practical equivalence are ties, failures are last, and datasets where the "
          "exact kernel does not beat a trivial predictor are left out (the text under each table "
          "says how).",
    ]
