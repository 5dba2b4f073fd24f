"""Regenerate the advisor's published evidence from the published results, from the
repository's root (a dataset's source is its results folder, relative)::

    python -m kbench.advisor.collect results/all.parquet results/{real,large,evidence}/all.parquet
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import pandas as pd

from kbench._files import atomic_path
from kbench.advisor.evidence import PUBLISHED, collect_all


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(
        description="Collect the advisor's evidence from published results.")
    parser.add_argument("results", nargs="+", type=Path,
                        help="all.parquet files of published sweeps")
    parser.add_argument("--out", type=Path, default=Path(__file__).with_name(PUBLISHED))
    args = parser.parse_args(argv)
    # a dataset's source is its results folder relative to the repository (run from its root)
    evidence = collect_all({os.path.relpath(path.parent): pd.read_parquet(path)
                            for path in args.results})
    with atomic_path(args.out) as partial:
        evidence.to_parquet(partial, index=False)
    datasets = evidence[["source", "dataset"]].drop_duplicates()
    print(f"{args.out}: {len(evidence)} cells, {len(datasets)} datasets, tasks "
          f"{sorted(evidence['task'].unique())}")


if __name__ == "__main__":
    main()
