"""The interactive leaderboard page: one self-contained HTML file that opens offline.

Per task a summary ranking (mean standing over datasets, tests against the first, win rate,
rank to match exact, the critical-difference diagram), then selectors for dataset, kernel and metric driving two
Plotly charts (metric against rank with the exact kernel, metric against time with the
Pareto front; hover gives the configuration, the spread over repetitions and the status
counts) and a table of means. Every table sorts by a click on its header. Plotly's
JavaScript is inlined once, gzip-compressed (about 2 MB instead of 4.8 MB), and
decompressed by the browser's DecompressionStream; the data travel as one JSON block.
"""

from __future__ import annotations

import base64
import gzip
import html
import json
import math
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

import numpy as np
import pandas as pd

from kbench.reporting.advice import (
    REGIME_TEXT,
    WINNER_TEXT,
    regimes_title,
    short_names,
    split_regimes,
)
from kbench.reporting.focus import FOCUS_TEXT
from kbench.reporting.regimes import BY_REGIME_TEXT
from kbench.reporting.scores import (
    COST_TEXT,
    FAILURES_TEXT,
    NOT_OK_TEXT,
    NOT_PLANNED_TEXT,
    UNINFORMATIVE_TEXT,
    Section,
    cell_table,
)
from kbench.reporting.standing import MISSING
from kbench.reporting.styles import Style
from kbench.spec import slug_of

#: significant digits of the numbers the charts carry
DIGITS = 5


@dataclass
class Board:
    """One task's part of the page: its ranking table, footnotes, critical-difference
    diagram (PNG, or None) and caption."""

    section: Section
    ranking: pd.DataFrame
    footnotes: list[str]
    diagram: Path | None
    caption: str | None
    failures: pd.DataFrame  # failed cells by component and kind (kbench.reporting.scores.failures)
    by_regime: pd.DataFrame = field(default_factory=pd.DataFrame)  # kbench.reporting.regimes.by_regime

    @property
    def id(self) -> str:
        return "board-" + slug_of(self.section.label)


def table_html(table: pd.DataFrame, sortable: bool = True, links: tuple[str, ...] = ()) -> str:
    """A table with one header row (its index as the first column), sortable by a click; the
    ``links`` columns' web addresses as links."""
    flat = table if isinstance(table.index, pd.RangeIndex) else table.reset_index()
    if not any(column in flat for column in links):
        return flat.to_html(index=False, border=0, classes="sortable" if sortable else None, na_rep=MISSING,
                            float_format=lambda v: f"{v:.4g}")
    # with links, every text column is escaped here, and only the links are markup
    formatters = {column: _link if column in links else _text for column in flat if flat[column].dtype == object}
    return flat.to_html(index=False, border=0, classes="sortable" if sortable else None, na_rep=MISSING,
                        float_format=lambda v: f"{v:.4g}", formatters=formatters, escape=False)


def _text(value) -> str:
    return MISSING if value is None or (isinstance(value, float) and math.isnan(value)) else html.escape(str(value))


def _link(value) -> str:
    """A web address as a link (anything else as escaped text)."""
    text = _text(value)
    return f"<a href='{text}'>{text}</a>" if str(value).startswith(("https://", "http://")) else text


def inline_code(text: str) -> str:
    """Escaped text with markdown's `code` spans as <code> (the header lines are markdown)."""
    parts = html.escape(text).split("`")
    return "".join(f"<code>{part}</code>" if i % 2 else part for i, part in enumerate(parts))


def _number(value) -> float | None:
    if value is None or not isinstance(value, (int, float, np.number)) or not math.isfinite(value):
        return None
    return float(f"{value:.{DIGITS}g}")


def chart_data(frame: pd.DataFrame, board: Board) -> dict:
    """The rows behind a task's charts: per (dataset, kernel, sampler, rank), for each metric
    its repetition mean, standard deviation, min, max, count and the exact kernel's mean,
    the mean seconds and the cells' status counts. Metrics are read at the λ chosen for the
    headline: the sampler's for its values, the exact kernel's for the exact ones."""
    section = board.section
    task = section.task
    further = [m for m in task.metrics if m.metric != task.headline.metric]  # (the kit refuses a repeat)
    metrics = [task.headline, *further]
    cells = cell_table(frame, section.label, task, extra=("dataset_name", "kernel", *(m.metric for m in further)),
                       exact_extra=tuple(m.exact for m in further if m.exact and m.exact != task.headline.exact))
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
            record += [_number(values.mean()), _number(values.std(ddof=1)) if len(values) > 1 else None,
                       _number(values.min()), _number(values.max()), len(values), _number(exact)]
        records.append(record)
    return {"id": board.id, "label": section.label, "columns": {n: i for i, n in enumerate(names)},
            "metrics": [{"name": m.metric, "smaller": m.smaller_is_better, "exact": m.exact is not None}
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
                      "seconds": [[_number(v) for v in seconds.loc[s, sizes]] for s in seconds.index]})
    return found


def _plotly_gzip_base64() -> str:
    from plotly.offline import get_plotlyjs

    return base64.b64encode(gzip.compress(get_plotlyjs().encode(), 9, mtime=0)).decode()


def _asset(name: str) -> str:
    return resources.files("kbench.reporting").joinpath("assets", name).read_text(encoding="utf-8")


def _png(path: Path) -> str:
    data = base64.b64encode(Path(path).read_bytes()).decode()
    return f"<img alt='{html.escape(Path(path).stem)}' src='data:image/png;base64,{data}'>"


def _advice_html(advice) -> list[str]:
    esc = html.escape
    return ["<section id='advice'><h2>Which sampler for my data</h2>",
            "<ul>" + "".join(f"<li>{esc(s)}</li>" for s in advice.statements) + "</ul>", "</section>"]


def _datasets_html(advice) -> list[str]:
    """Each dataset's regime and facts, and the first place per rank budget, folded: at a
    hundred datasets they are the page's longest tables, read after the answers and standings."""
    esc = html.escape
    parts = []
    if len(advice.regimes):
        compact, facts = split_regimes(advice.regimes)
        parts += [f"<h3>{esc(regimes_title(advice.regimes))}</h3>", f"<p class='caption'>{esc(REGIME_TEXT)}</p>",
                  "<details><summary>Each dataset's regime</summary>", table_html(compact), "</details>",
                  "<details><summary>Each dataset's spec, source, preprocessing and documentation</summary>",
                  table_html(facts, links=("documentation",)), "</details>"]
    if len(advice.winners):
        names = short_names(advice.winners["dataset"].unique())
        parts += ["<h3>First place per rank budget</h3>", f"<p class='caption'>{esc(WINNER_TEXT)}</p>",
                  f"<details><summary>Each dataset's ({len(names)})</summary>"]
        for dataset, rows in advice.winners.groupby("dataset", sort=True):
            parts += [f"<details><summary title='{esc(dataset)}'>{esc(names[dataset])}</summary>",
                      table_html(rows.drop(columns="dataset").reset_index(drop=True)), "</details>"]
        parts.append("</details>")
    return ["<section id='datasets'><h2>Datasets</h2>", *parts, "</section>"] if parts else []


def _board_html(board: Board) -> list[str]:
    esc = html.escape
    parts = [f"<section id='{board.id}'><h2>{esc(board.section.title)}</h2>"]
    if len(board.ranking):
        parts += [table_html(board.ranking), *(f"<p class='caption'>{esc(f)}</p>" for f in board.footnotes)]
    if len(board.by_regime):
        parts += ["<h3>By regime</h3>", f"<p class='caption'>{esc(BY_REGIME_TEXT)}</p>", table_html(board.by_regime)]
    if len(board.section.uninformative):
        parts += ["<h3>Uninformative datasets</h3>", f"<p class='caption'>{esc(UNINFORMATIVE_TEXT)}</p>",
                  table_html(board.section.uninformative)]
    if len(board.failures):
        parts += [f"<p class='caption'>{esc(FAILURES_TEXT)}</p>", table_html(board.failures)]
    if board.diagram is not None:
        parts += [_png(board.diagram), f"<p class='caption'>{esc(board.caption)}</p>"]
    return [*parts, "<div class='controls'>",
            *(f"<label>{name} <select class='{name}'></select></label>" for name in ("dataset", "kernel", "metric")),
            "</div><div class='charts'><div class='chart rank'></div><div class='chart time'></div></div>",
            "<p class='caption'>Mean over repetitions; bars span min to max. Means by rank:</p>",
            "<table class='means'></table></section>"]


def render(frame: pd.DataFrame, header: list[str], notes: list[str], boards: list[Board], advice,
           focus_views: list | None, focused: str | None, costs: dict,
           statuses: tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame],
           look: dict[str, Style]) -> str:
    """The page. ``advice``: kbench.reporting.advice.Advice; ``focus_views``:
    kbench.reporting.focus.FocusTables; ``look``: each sampler's style on every chart."""
    esc = html.escape
    nav = [("advice", "Which sampler for my data")]
    if focused:
        nav.append(("focus", f"Focus: {focused}"))
    nav += [(b.id, b.section.label) for b in boards]
    if len(advice.regimes) or len(advice.winners):
        nav.append(("datasets", "Datasets"))
    if costs:
        nav.append(("cost", "Cost in n"))
    nav.append(("status", "Cells by status"))
    parts = ["<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
             "<meta name='viewport' content='width=device-width, initial-scale=1'>",
             "<title>kbench leaderboard</title>", f"<style>{_asset('leaderboard.css')}</style></head><body>",
             "<h1>kbench leaderboard</h1>", *(f"<p class='note'>{inline_code(line)}</p>" for line in header),
             "<nav>" + "".join(f"<a href='#{i}'>{esc(t)}</a>" for i, t in nav) + "</nav>",
             "<p id='loading'>Drawing the charts…</p>",
             *(f"<p class='note'>Note: {esc(note)}</p>" for note in notes)]
    parts += _advice_html(advice)
    if focused:
        parts += [f"<section id='focus'><h2>Focus: {esc(focused)}</h2>", f"<p class='caption'>{esc(FOCUS_TEXT)}</p>"]
        for view in focus_views:
            parts += [f"<h3>{esc(view.section.title)}</h3>", table_html(view.overall)]
            for dataset, table in view.per_dataset.items():
                parts += [f"<details><summary>{esc(dataset)}: by rank</summary>", table_html(table), "</details>"]
        parts.append("</section>")
    for board in boards:
        parts += _board_html(board)
    parts += _datasets_html(advice)
    if costs:
        parts += ["<section id='cost'><h2>Sampler cost in n</h2>", f"<p class='caption'>{esc(COST_TEXT)}</p>"]
        for i, (family, (seconds, memory, rank)) in enumerate(costs.items()):
            parts += [f"<h3>{esc(family)}, rank {rank}</h3>", table_html(seconds), table_html(memory),
                      f"<div class='chart' id='cost-{i}'></div>"]
        parts.append("</section>")
    by_status, not_ok, unplanned = statuses
    parts += ["<section id='status'><h2>Cells by status</h2>", table_html(by_status)]
    if len(not_ok):
        parts += ["<h3>Cells not ok</h3>", f"<p class='caption'>{esc(NOT_OK_TEXT)}</p>",
                  f"<div class='messages'>{table_html(not_ok)}</div>"]
    if len(unplanned):
        parts += ["<h3>Not planned, by design</h3>", f"<p class='caption'>{esc(NOT_PLANNED_TEXT)}</p>",
                  f"<details><summary>{int(unplanned['combinations'].sum())} combinations, {len(unplanned)} "
                  "reasons</summary>", table_html(unplanned), "</details>"]
    parts.append("</section>")
    data = {"boards": [chart_data(frame, b) for b in boards], "costs": cost_data(costs),
            "styles": {sampler: style.plotly() for sampler, style in look.items()}}
    payload = json.dumps(data, ensure_ascii=False, allow_nan=False).replace("</", "<\\/")
    parts += [f"<script id='kbench-data' type='application/json'>{payload}</script>",
              f"<script id='plotly-gz' type='application/octet-stream'>{_plotly_gzip_base64()}</script>",
              f"<script>{_asset('leaderboard.js')}</script></body></html>"]
    return "\n".join(parts)

