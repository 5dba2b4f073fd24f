"""The interactive leaderboard page: one self-contained HTML file that opens offline.

Per task a summary ranking (mean standing over datasets, tests against the first, win rate,
rank to match exact, the critical-difference diagram), then selectors for dataset, kernel and metric
driving two Plotly charts (metric against rank with the exact kernel, metric against time with the
Pareto front; hover gives the configuration, the spread over repetitions and the status counts) and
a table of means. Every table sorts by a click on its header. Plotly's JavaScript is inlined once,
gzip-compressed (about 2 MB instead of 4.8 MB), and decompressed by the browser's
DecompressionStream; the data travel as one JSON block.
"""

from __future__ import annotations

import base64
import gzip
import html
import json
import math
from importlib import resources
from pathlib import Path

import pandas as pd

from kbench.reporting.page import (
    Block,
    Bullets,
    Charts,
    Folded,
    Heading,
    Image,
    Page,
    Paragraph,
    Table,
)
from kbench.reporting.standing import MISSING

#: each kind of charts' markup (kbench.reporting.page.Charts), filled by the page's script
CHARTS = {
    "board": ("<div class='controls'>"
              + "".join(f"<label>{name} <select class='{name}'></select></label>"
                        for name in ("dataset", "kernel", "metric"))
              + "</div><div class='charts'><div class='chart rank'></div><div class='chart "
                "time'></div></div><p class='caption'>Mean over repetitions; bars span min to max. "
                "Means by rank:</p><table class='means'></table>"),
    "cost": "<div class='chart' id='{id}'></div>",
}


def table_html(table: pd.DataFrame, sortable: bool = True, links: tuple[str, ...] = ()) -> str:
    """A table with one header row (its index as the first column), sortable by a click; the
    ``links`` columns' web addresses as links."""
    flat = table if isinstance(table.index, pd.RangeIndex) else table.reset_index()
    if not any(column in flat for column in links):
        return flat.to_html(index=False, border=0, classes="sortable" if sortable else None,
                            na_rep=MISSING,
                            float_format=lambda v: f"{v:.4g}")
    # with links, every text column is escaped here, and only the links are markup
    formatters = {column: _link if column in links else _text for column in flat
                  if flat[column].dtype == object}
    return flat.to_html(index=False, border=0, classes="sortable" if sortable else None,
                        na_rep=MISSING,
                        float_format=lambda v: f"{v:.4g}", formatters=formatters, escape=False)


def _text(value) -> str:
    return MISSING if value is None or (isinstance(value, float)
                                        and math.isnan(value)) else html.escape(str(value))


def _link(value) -> str:
    """A web address as a link (anything else as escaped text)."""
    text = _text(value)
    return (f"<a href='{text}'>{text}</a>" if str(value).startswith(("https://", "http://"))
            else text)


def inline_code(text: str) -> str:
    """Escaped text with markdown's `code` spans as <code> (the header lines are markdown)."""
    parts = html.escape(text).split("`")
    return "".join(f"<code>{part}</code>" if i % 2 else part for i, part in enumerate(parts))


def _plotly_gzip_base64() -> str:
    from plotly.offline import get_plotlyjs

    return base64.b64encode(gzip.compress(get_plotlyjs().encode(), 9, mtime=0)).decode()


def _asset(name: str) -> str:
    return resources.files("kbench.reporting").joinpath("assets", name).read_text(encoding="utf-8")


def _png(path: Path) -> str:
    data = base64.b64encode(Path(path).read_bytes()).decode()
    return f"<img alt='{html.escape(Path(path).stem)}' src='data:image/png;base64,{data}'>"


def render(page: Page) -> str:
    """The page as one self-contained HTML file: its parts, then the charts' data and script."""
    esc = html.escape
    parts = ["<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
             "<meta name='viewport' content='width=device-width, initial-scale=1'>",
             "<title>kbench leaderboard</title>",
             f"<style>{_asset('leaderboard.css')}</style></head><body>",
             "<h1>kbench leaderboard</h1>",
             *(f"<p class='note'>{inline_code(line)}</p>" for line in page.header),
             "<nav>" + "".join(f"<a href='#{part.id}'>{esc(part.nav)}</a>" for part in page.parts)
             + "</nav>",
             "<p id='loading'>Drawing the charts…</p>",
             *(f"<p class='note'>Note: {esc(note)}</p>" for note in page.notes)]
    for part in page.parts:
        parts += [f"<section id='{esc(part.id)}'><h2>{esc(part.title)}</h2>",
                  *(piece for block in part.blocks for piece in _block(block)), "</section>"]
    # every "<" escaped: no label ("</script>", "<!--<script>") changes how the page's
    # HTML is parsed
    payload = json.dumps(page.data, ensure_ascii=False, allow_nan=False).replace("<", "\\u003c")
    parts += [f"<script id='kbench-data' type='application/json'>{payload}</script>",
              "<script id='plotly-gz' "
              f"type='application/octet-stream'>{_plotly_gzip_base64()}</script>",
              f"<script>{_asset('leaderboard.js')}</script></body></html>"]
    return "\n".join(parts)


def _block(block: Block) -> list[str]:
    esc = html.escape
    if isinstance(block, Paragraph):
        return [f"<p class='caption'>{esc(block.text)}</p>"]
    if isinstance(block, Bullets):
        return ["<ul>" + "".join(f"<li>{esc(item)}</li>" for item in block.items) + "</ul>"]
    if isinstance(block, Heading):
        return [f"<h3>{esc(block.text)}</h3>"]
    if isinstance(block, Table):
        frame = block.frame if block.index else block.frame.reset_index(drop=True)
        table = table_html(frame, links=block.links)
        return [f"<div class='messages'>{table}</div>" if block.messages else table]
    if isinstance(block, Image):
        return [_png(block.path)]
    if isinstance(block, Charts):
        return [CHARTS[block.kind].format(id=esc(block.id))]
    if isinstance(block, Folded):
        hover = f" title='{esc(block.hover)}'" if block.hover else ""
        return [f"<details><summary{hover}>{esc(block.summary)}</summary>",
                *(piece for each in block.blocks for piece in _block(each)), "</details>"]
    raise TypeError(f"a page block of unknown kind: {type(block).__name__}")
