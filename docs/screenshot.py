"""Take docs/leaderboard.png, the README's picture of the page, from results/leaderboard.html in
headless Chromium (`.ci/chromium up` installs it; `pip install -e ".[browser]"`), after the
README's first command has regenerated the page:

    python docs/screenshot.py

The picture opens at the approximation task's section: its ranking, the critical-difference
diagram and the charts of the selected dataset.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.support.ui import WebDriverWait

ROOT = Path(__file__).resolve().parents[1]
PAGE, PICTURE = ROOT / "results" / "leaderboard.html", ROOT / "docs" / "leaderboard.png"
#: the section the picture opens at, and the window it is taken in (CSS pixels)
SECTION, WIDTH, HEIGHT = "approximation", 1400, 3000


def main() -> int:
    binary = next((p for p in map(shutil.which, ("chromium", "chromium-browser", "google-chrome"))
                   if p), None)
    driver = shutil.which("chromedriver")
    if binary is None or driver is None:
        print("headless Chromium not found (chromium and chromedriver on PATH): `.ci/chromium up` "
              "installs them",
              file=sys.stderr)
        return 2
    options = webdriver.ChromeOptions()
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu",
                     f"--window-size={WIDTH},{HEIGHT}"):
        options.add_argument(argument)
    options.binary_location = binary
    browser = webdriver.Chrome(service=Service(driver), options=options)
    try:
        browser.get(PAGE.as_uri())
        WebDriverWait(browser,
                      60).until(lambda b: b.execute_script("return "
                                                           "document.body.dataset.ready") == "true")
        found = browser.execute_script(
            "const h = Array.from(document.querySelectorAll('h2')).find((e) => "
            "e.textContent.startsWith(arguments[0]));if (h) { h.scrollIntoView(); } return "
            "Boolean(h);", f"{SECTION}:")
        if not found:
            print(f"{PAGE} has no section {SECTION!r}", file=sys.stderr)
            return 1
        browser.save_screenshot(str(PICTURE))
    finally:
        browser.quit()
    print(f"wrote {PICTURE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
