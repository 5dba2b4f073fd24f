"""The page header's versions: every version the rows were computed with."""

from __future__ import annotations

import pandas as pd

from kbench.reporting.header import versions


def rows(commits: list[str]) -> pd.DataFrame:
    return pd.DataFrame({"kbench_version": "0.1.0", "kbench_commit": commits,
                         "numpy_version": "2.0.0"})


def test_a_few_commits_are_listed_and_many_counted():
    assert versions(rows(["aaa", "bbb+dirty", "aaa"])) == (
        "kbench 0.1.0 (commit aaa) / 0.1.0 (commit bbb+dirty), numpy 2.0.0")
    # a board computed in batches over many commits: one line, not 14 hashes
    many = rows([f"c{i}" + ("+dirty" if i % 3 == 0 else "") for i in range(14)])
    assert versions(many) == ("kbench 0.1.0 (14 commits, 5 with local changes: each row records "
                              "its own), numpy 2.0.0")
