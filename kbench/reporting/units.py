"""The dataset as the unit of analysis: what one unit is (a frame at any of its sizes, under any
kernel), and how often one sampler beats another on paired cells, per unit (win rates)."""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
import pandas as pd

from kbench.spec import Spec


@functools.cache
def unit_of(key: str) -> str:
    """The unit of analysis a dataset key belongs to: the dataset's label without its kernel
    (``"diabetes [polynomial]"``: the kernels of one dataset share its data and split) and
    without the size ``n`` its spec subsamples or generates, so that one frame (one
    generator) run at several sizes or under several kernels is one piece of evidence, not
    several (docs/conventions.md)."""
    label = key.partition(" [")[0]
    try:
        spec = Spec.parse(label, "dataset")
    except ValueError:
        return label
    if "n" not in spec.params:
        return label
    return Spec.of("dataset", spec.name, {k: v for k, v in spec.params.items() if k != "n"}).label


def dataset_units(frame: pd.DataFrame) -> pd.Index:
    """The unit of analysis of each row of a frame indexed by (dataset, rank)."""
    return frame.index.get_level_values("dataset").map(unit_of).rename("dataset")


@dataclass
class WinRate:
    """How often one sampler beats another on paired cells: the mean over datasets of each
    dataset's share, with a 95% interval resampling datasets."""

    rate: float
    low: float
    high: float
    pairs: int
    datasets: int

    @property
    def text(self) -> str:
        if self.datasets < 2:
            return f"{self.rate:.2f}"
        return f"{self.rate:.2f} [{self.low:.2f}, {self.high:.2f}]"

    @classmethod
    def of(cls, scores: pd.DataFrame, rng: np.random.Generator, n_boot: int = 2000) -> WinRate:
        """From per-pair scores (column ``score``: 1 win, 0.5 tie, 0 loss) and their
        ``dataset``: per-dataset shares, their mean, percentile bootstrap over datasets."""
        shares = scores.groupby(scores["dataset"].map(unit_of))["score"].mean().to_numpy()
        boot = shares[rng.integers(0, len(shares), size=(n_boot, len(shares)))].mean(axis=1)
        low, high = np.percentile(boot, [2.5, 97.5])
        return cls(float(shares.mean()), float(low), float(high), len(scores), len(shares))


def win_rate(ours: pd.DataFrame, theirs: pd.DataFrame, headline, rng: np.random.Generator,
             n_boot: int = 2000) -> WinRate | None:
    """How often ``ours`` beats ``theirs`` on paired cells (same dataset, rank and
    repetition, hence the same split; :func:`pair_scores`); None when no cell pairs up."""
    pairing = ["dataset", "rank", "repetition"]
    paired = ours.set_index(pairing)["metric"].to_frame("ours").join(
        theirs.set_index(pairing)["metric"].rename("theirs"), how="inner")
    if paired.empty:
        return None
    scores = pd.DataFrame({"dataset": paired.index.get_level_values("dataset"),
                           "score": pair_scores(paired["ours"], paired["theirs"], headline)})
    return WinRate.of(scores, rng, n_boot)


def pair_scores(ours: pd.Series, theirs: pd.Series, headline) -> np.ndarray:
    """Per pair of values: 1 where ours is better outside the equivalence region, 0.5 on a
    tie (inside it, or both failed: NaN), 0 where it is worse; a failure loses."""
    gain = headline.difference(ours.to_numpy(dtype=float), theirs.to_numpy(dtype=float))
    return np.where(np.abs(gain) <= headline.equivalence, 0.5, (gain > 0).astype(float))
