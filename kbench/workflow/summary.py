"""The last lines of a workflow run: its cells by status, its leaderboard's verdicts and
where the page is."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from kbench.errors import Status
from kbench.sweep.schema import CELL_KEYS


def run_summary(out, verdicts: list[str] = ()) -> str:
    """A workflow run's last lines: its cells by status (``out/all.parquet``), the
    ``verdicts`` of its leaderboard and where that is."""
    out = Path(out)
    cells = pd.read_parquet(out / "all.parquet",
                            columns=[*CELL_KEYS, "status"]).drop_duplicates(CELL_KEYS)
    counts = cells["status"].value_counts()
    failed = int(sum(n for status, n in counts.items() if Status(status).failed))
    page = out / "leaderboard.html"
    lines = [f"kbench: {len(cells)} cells: "
             + ", ".join(f"{n} {status}" for status, n in counts.items())]
    if page.is_file() and page.stat().st_mtime >= (out / "all.parquet").stat().st_mtime:
        lines += [*(f"kbench: {verdict}" for verdict in verdicts),
                  f"kbench: the leaderboard is {page} (open it in a browser; "
                  f"{out / 'leaderboard.md'} holds the same tables)"]
    # the run stopped before its leaderboard job (--until, a failed job): the page, if any, is older
    else:
        lines.append(f"kbench: the leaderboard ({page}) was not rebuilt from these cells"
                     + (" and is older than them" if page.is_file() else "")
                     + "; run the workflow again (without --until) to rebuild it")
    if failed:
        lines.insert(1, f"kbench: {failed} cells failed; each task's section of the leaderboard "
                        "lists them with their messages; to compute them again (after raising "
                        "cell_timeout or memory_limit_mb, say), run with --config "
                        "retry_failed=True")
    return "\n".join(lines)
