"""What the interactive page's charts draw: per task configuration, the repetition means
and spreads of every metric by (dataset, kernel, sampler, rank); per size family, seconds
against n_train; each sampler's style. The page carries them as one JSON block."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from kbench.reporting.scores import Section, cell_table
from kbench.reporting.styles import Style
from kbench.spec import slug_of

#: significant digits of the numbers the charts carry
DIGITS = 5


def board_id(label: str) -> str:
    """The page's anchor of a task configuration's part, and its charts' key."""
    return "board-" + slug_of(label)


def chart_payload(frame: pd.DataFrame, found: list[Section], costs: dict,
                  look: dict[str, Style]) -> dict:
    """Everything the charts draw: each section's rows, the cost families, the styles."""
    return {"boards": [chart_data(frame, section) for section in found], "costs": cost_data(costs),
            "styles": {sampler: style.plotly() for sampler, style in look.items()}}


def _number(value) -> float | None:
    if value is None or not isinstance(value, (int, float, np.number)) or not math.isfinite(value):
        return None
    return float(f"{value:.{DIGITS}g}")


def chart_data(frame: pd.DataFrame, section: Section) -> dict:
    """The rows behind a task's charts: per (dataset, kernel, sampler, rank), for each metric
    its repetition mean, standard deviation, min, max, count and the exact kernel's mean,
    the mean seconds and the cells' status counts. Metrics are read at the λ chosen for the
    headline: the sampler's for its values, the exact kernel's for the exact ones."""
    task = section.task
    # (the kit refuses a repeat)
    further = [m for m in task.metrics if m.metric != task.headline.metric]
    metrics = [task.headline, *further]
    cells = cell_table(frame, section.label, task,
                       extra=("dataset_name", "kernel", *(m.metric for m in further)),
                       exact_extra=tuple(m.exact for m in further if m.exact
                                         and m.exact != task.headline.exact))
    cells[task.headline.metric] = cells["metric"]
    if task.headline.exact:
        cells[task.headline.exact] = cells["exact"]
    keys = ["dataset_name", "kernel", "sampler", "rank"]
    rows = frame[frame["task_label"] == section.label].drop_duplicates(
        ["dataset", "kernel", "sampler_label", "rank", "repetition"])
    status = rows.groupby(["dataset", "kernel", "sampler_label", "rank"])["status"].agg(
        lambda s: ", ".join(f"{k} {v}" for k, v in s.value_counts().items()))
    status.index = status.index.set_names(keys)
    present = [m for m in metrics if cells[m.metric].notna().any()]
    names = ["dataset", "kernel", "sampler", "rank", "seconds", "status"]
    for m in present:
        names += [f"{m.metric}:{part}" for part in ("mean", "sd", "min", "max", "n", "exact")]
    records = []
    for key, group in cells.groupby(keys):
        record = [*key[:3], int(key[3]), _number(group["seconds"].mean()), status.get(key, "")]
        for m in present:
            values = group[m.metric].dropna()
            exact = group[m.exact].mean() if m.exact else None
            record += [_number(values.mean()), _number(values.std(ddof=1)) if len(values) > 1
                       else None,
                       _number(values.min()), _number(values.max()), len(values), _number(exact)]
        records.append(record)
    return {"id": board_id(section.label), "label": section.label,
            "columns": {n: i for i, n in enumerate(names)},
            "metrics": [{"name": m.metric, "smaller": m.smaller_is_better,
                         "exact": m.exact is not None}
                        for m in present],
            "rows": records}


def cost_data(costs: dict) -> list[dict]:
    """The cost-in-n charts: per size family, seconds against n_train per sampler."""
    found = []
    for i, (family, (seconds, _memory, rank)) in enumerate(costs.items()):
        sizes = [c for c in seconds.columns if c.startswith("n = ")]
        found.append({"id": f"cost-{i}", "family": family, "rank": rank,
                      "sizes": [int(c.removeprefix("n = ").replace(",", "")) for c in sizes],
                      "samplers": list(seconds.index),
                      "seconds": [[_number(v) for v in seconds.loc[s, sizes]]
                                  for s in seconds.index]})
    return found
