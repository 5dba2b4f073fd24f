"""The markdown leaderboard: :class:`~kbench.reporting.page.Page` as markdown, its figures
as image links relative to the page."""

from __future__ import annotations

import html
import re
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


def plain(value):
    """A text as markdown shows it: "|" escaped, so that it does not end a table cell (a
    traceback's, a file name's), and a "<" that would open an HTML tag (``<i>``, ``</script``)."""
    if not isinstance(value, str):
        return value
    return re.sub(r"<(?=[A-Za-z/!?])", "&lt;", value).replace("|", "\\|")


def markdown_table(table: pd.DataFrame, **options) -> str:
    """A table as markdown, missing values as "—", every text (cells, index, column names)
    :func:`plain`; ``options`` go to ``DataFrame.to_markdown``."""
    cells = table.map(plain).astype(object).where(table.notna(), None)
    cells.index = cells.index.map(plain)
    cells.columns = cells.columns.map(plain)
    return cells.to_markdown(**{"floatfmt": ".4g", "missingval": MISSING, **options})


def render(page: Page, folder: Path) -> str:
    """The page as markdown; image links relative to ``folder``, where the page is written."""
    md = ["# kbench leaderboard", "", *page.header, "", *(f"Note: {note}\n" for note in page.notes)]
    for part in page.parts:
        md += [f"## {plain(part.title)}", ""]
        for block in part.blocks:
            md += _block(block, Path(folder))
    return "\n".join(md)


def _block(block: Block, folder: Path) -> list[str]:
    """A block's lines, each block followed by an empty line."""
    if isinstance(block, Paragraph):
        return [plain(block.text), ""]
    if isinstance(block, Bullets):
        return [*(f"- {plain(item)}" for item in block.items), ""]
    if isinstance(block, Heading):
        return [f"### {plain(block.text)}", ""]
    if isinstance(block, Table):
        options = {"index": block.index} | ({"disable_numparse": True} if block.as_text else {})
        return [markdown_table(block.frame, **options), ""]
    if isinstance(block, Image):
        return [f"![{block.alt}]({block.path.relative_to(folder).as_posix()})", ""]
    if isinstance(block, Charts):
        return [line for inner in block.static for line in _block(inner, folder)]
    if isinstance(block, Folded):
        inner = [line for each in block.blocks for line in _block(each, folder)]
        hover = f" title=\"{html.escape(block.hover)}\"" if block.hover else ""
        return [f"<details><summary{hover}>{plain(block.summary)}</summary>", "", *inner,
                "</details>", ""]
    raise TypeError(f"a page block of unknown kind: {type(block).__name__}")
