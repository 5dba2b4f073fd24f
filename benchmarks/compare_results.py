"""Compare two trees of published results: did a change move any number?

    python benchmarks/compare_results.py OLD_RESULTS_DIR NEW_RESULTS_DIR [--rtol R] [--atol A]

Every ``all.parquet`` is compared row by row (rows matched on their identity columns) with
tolerance 0 (NaN equals NaN), or with ``--rtol``/``--atol``: numbers within
A + R·max(|old|, |new|) of each other agree (float64 round-off of a changed summation order
is ~1e-12 relative, more in a difference of close numbers such as a relative excess; a
changed sample moves numbers by O(1)); each column that moved reports its largest absolute
and relative differences. Timing
and provenance columns are excluded (seconds, peak RSS, timestamps, host, versions). Every
``leaderboard.md``, paper page and ``*.claims.json`` is compared line by line with those columns'
cells, the "Generated" line and figure links masked. Prints one line per file and exits 1 when a
number moved.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pandas as pd

#: columns that measure the run, not the result
TIMING = re.compile(r"^time_|_s$|seconds|peak_rss|timestamp|^host$|_version$|_commit$"
                    r"|^blas_threads$")
IDENTITY = ["dataset", "kernel", "sampler_label", "task_label", "rank", "lam", "components",
            "repetition",
            "base_seed"]


def compare_frames(old: Path, new: Path, rtol: float = 0.0, atol: float = 0.0) -> list[str]:
    a, b = pd.read_parquet(old), pd.read_parquet(new)
    keys = [c for c in IDENTITY if c in a.columns]
    columns = sorted(c for c in set(a.columns) | set(b.columns) if not TIMING.search(c))
    if len(a) != len(b):
        return [f"{len(a)} rows before, {len(b)} after"]
    missing = [c for c in columns if c not in a.columns or c not in b.columns]
    if missing:
        return [f"columns in one file only: {missing}"]
    a = a.sort_values(keys, kind="stable", ignore_index=True)[columns]
    b = b.sort_values(keys, kind="stable", ignore_index=True)[columns]
    moved = []
    for column in columns:
        x, y = a[column], b[column]
        same = (x == y) | (x.isna() & y.isna())
        worst = ""
        if pd.api.types.is_numeric_dtype(x) and pd.api.types.is_numeric_dtype(y) and not same.all():
            scale = pd.concat([x.abs(), y.abs()], axis=1).max(axis=1)
            gap = (x - y).abs()
            same |= gap <= atol + rtol * scale
            worst = (f", largest difference {gap.max():.2e} absolute, "
                     f"{(gap / scale.where(scale > 0)).max():.2e} relative")
        if not same.all():
            moved.append(f"{column}: {int((~same).sum())} of {len(x)} values differ{worst}")
    return moved


_MASK = re.compile(r"\]\(figures/[^)]*\)")


def _lines(path: Path) -> list[str]:
    """The page's lines with the generation time, figure links and timing columns masked (a
    table's timing columns are named by its header row: seconds, ``n = …`` cost columns)."""
    lines, timing = [], set()
    previous = ""
    for raw in path.read_text().splitlines():
        if raw.startswith("Generated "):
            continue
        line = _MASK.sub("](figure)", raw)
        if not line.startswith("|"):
            timing = set()
        else:
            cells = [c.strip() for c in line.strip("|").split("|")]
            if not previous.startswith("|"):  # a table's first row is its header
                timing = {i for i, c in enumerate(cells) if TIMING.search(c)
                          or c.startswith("n = ")}
            line = "|".join("…" if i in timing else c for i, c in enumerate(cells))
        previous = raw
        lines.append(line)
    return lines


def compare_pages(old: Path, new: Path) -> list[str]:
    a, b = _lines(old), _lines(new)
    if a == b:
        return []
    diffs = [f"line {i + 1}: {x!r} → {y!r}" for i, (x, y) in enumerate(zip(a, b)) if x != y]
    return diffs[:5] + ([f"{len(a)} lines before, {len(b)} after"] if len(a) != len(b) else [])


def main(old_root: str, new_root: str, *options: str) -> int:
    old_root, new_root = Path(old_root), Path(new_root)
    tolerances = dict(zip(options[::2], map(float, options[1::2]), strict=True))
    rtol, atol = tolerances.pop("--rtol", 0.0), tolerances.pop("--atol", 0.0)
    if tolerances:
        raise SystemExit(f"unknown options {sorted(tolerances)}: --rtol R and --atol A are known")
    moved = 0
    for old in sorted(old_root.rglob("*")):
        new = new_root / old.relative_to(old_root)
        if old.suffix not in (".parquet", ".md", ".json") or not old.is_file():
            continue
        if not new.is_file():
            print(f"{old.relative_to(old_root)}: missing in {new_root}")
            moved += 1
            continue
        if old.suffix == ".parquet":
            found = compare_frames(old, new, rtol, atol)
        elif old.suffix == ".json":
            found = [] if old.read_text() == new.read_text() else ["the claims differ"]
        else:
            found = compare_pages(old, new)
        moved += bool(found)
        print(f"{old.relative_to(old_root)}: " + ("; ".join(found) if found else "no number moved"))
    return 1 if moved else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
