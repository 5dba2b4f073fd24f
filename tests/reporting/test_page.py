"""The page model: every block kind drawn by both renderers, parts in one order."""

from __future__ import annotations

import dataclasses
import re

import pandas as pd
import pytest

from kbench.reporting import html, markdown
from kbench.reporting.page import (
    Bullets,
    Charts,
    Folded,
    Heading,
    Image,
    Page,
    Paragraph,
    Part,
    Table,
)


@pytest.fixture
def page(tmp_path):
    figure = tmp_path / "figures" / "a.png"
    figure.parent.mkdir()
    figure.write_bytes(b"\x89PNG fake")  # read as bytes and inlined; never decoded
    table = pd.DataFrame({"value": [1.5, 2.25]}, index=pd.Index(["x", "y|z"], name="sampler"))
    first = Part("one", "First part", "first", (
        Paragraph("a <caption>"), Bullets(("item a", "item b")), Heading("a heading"),
        Table(table), Table(table.reset_index(), index=False, links=("value",), messages=True),
        Folded("folded summary", (Paragraph("inside the fold"),), hover="the whole name"),
        Image(figure, "a figure"),
        Charts("board", "one", (Paragraph("the static charts"),))))
    second = Part("two", "Second part", "second",
                  (Charts("cost", "cost-0", (Image(figure, "cost figure"),)),))
    return Page(("Made by `kbench x`.",), ("a note",), (first, second), {"boards": []}), tmp_path


def test_markdown_draws_every_block_kind_in_order(page):
    model, folder = page
    text = markdown.render(model, folder)
    expected = ["Made by `kbench x`.", "Note: a note", "## First part", "a &lt;caption>",
                "- item a", "### a heading",
                "| y\\|z ", "<details><summary title=\"the whole name\">folded summary</summary>",
                "inside the fold", "</details>",
                "![a figure](figures/a.png)", "the static charts", "## Second part",
                "![cost figure](figures/a.png)"]
    positions = [text.find(piece) for piece in expected]
    assert -1 not in positions and positions == sorted(positions), dict(zip(expected, positions))


def test_html_draws_every_block_kind_in_order(page):
    model, _ = page
    text = html.render(model)
    expected = ["<code>kbench x</code>", "<a href='#one'>first</a><a href='#two'>second</a>",
                "Note: a note",
                "<section id='one'><h2>First part</h2>", "<p class='caption'>a &lt;caption&gt;</p>",
                "<li>item b</li>",
                "<h3>a heading</h3>", "<div class='messages'>", "<summary title='the whole "
                                                                "name'>folded summary",
                "<img alt='a' src='data:image/png;base64,", "<select class='dataset'>",
                "<section id='two'>", "<div class='chart' id='cost-0'>", "<script id='kbench-data'"]
    positions = [text.find(piece) for piece in expected]
    assert -1 not in positions and positions == sorted(positions), dict(zip(expected, positions))
    assert "the static charts" not in text  # the script draws the charts from the page's data
    assert len(re.findall("<section ", text)) == 2


def test_a_block_no_renderer_knows_is_an_error(page):
    model, folder = page

    @dataclasses.dataclass(frozen=True)
    class Unknown:
        text: str

    broken = dataclasses.replace(model, parts=(Part("x", "X", "x", (Unknown("?"),)),))
    for draw in (lambda: markdown.render(broken, folder), lambda: html.render(broken)):
        with pytest.raises(TypeError, match="a page block of unknown kind: Unknown"):
            draw()
