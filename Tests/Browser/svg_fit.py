#!/usr/bin/python3
"""Every text of an SVG that forcescale draws lies inside its drawing (issue 54).

Each SVG given is opened by Debian's chromium (headless, driven as dashboard.py drives
it), which lays its texts out with the fonts a reader's browser would use (DejaVu Sans,
which the plots name first). For every <text> the script takes its box as chromium
measures it (getBBox), carries its four corners through the element's transform to the
drawing's own coordinates (getCTM: the rotated axis name too), and checks that they lie
within the viewBox, 0.5 px allowed for antialiasing. It also reports the smallest
font-size used, so that a caller can hold a narrow layout to readable text.

  Tests/Browser/svg_fit.py FILE.svg...

Prints one line per file (`ok FILE: N texts, smallest font 12 px`) or what lies outside,
and `all texts fit` at the end; exit status 0 when every text of every file fits, 1 if not.
"""

import json
import os
import pathlib
import shutil
import sys
import tempfile

from selenium import webdriver
from selenium.webdriver.chrome.service import Service

CHROMEDRIVER = "/usr/bin/chromedriver"
SLACK = 0.5

MEASURE = """
const svg = document.documentElement;
const box = svg.viewBox.baseVal;
const texts = [...document.querySelectorAll("text")].map((text) => {
  const b = text.getBBox();
  const m = text.getCTM();
  const corners = [[b.x, b.y], [b.x + b.width, b.y], [b.x, b.y + b.height], [b.x + b.width, b.y + b.height]]
    .map(([x, y]) => [m.a * x + m.c * y + m.e, m.b * x + m.d * y + m.f]);
  return {
    text: text.textContent,
    left: Math.min(...corners.map((c) => c[0])), right: Math.max(...corners.map((c) => c[0])),
    top: Math.min(...corners.map((c) => c[1])), bottom: Math.max(...corners.map((c) => c[1])),
    fontSize: parseFloat(getComputedStyle(text).fontSize),
  };
});
return {root: svg.localName, width: box.width, height: box.height, texts: texts,
        fonts: document.fonts.status};
"""


def browser(work):
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for argument in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                     f"--user-data-dir={os.path.join(work, 'chromium')}", "--no-first-run", "--no-default-browser-check"]:
        options.add_argument(argument)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER, log_path=os.path.join(work, "chromedriver.log")), options=options)
    driver.set_page_load_timeout(60)
    return driver


def check(driver, path):
    """Returns (problems, summary) for one SVG file."""
    driver.get(pathlib.Path(path).resolve().as_uri())
    page = driver.execute_script(MEASURE)
    if page["root"] != "svg" or not page["width"] or not page["height"]:
        return [f"{path}: not an SVG with a viewBox ({page['root']}, {page['width']} x {page['height']})"], ""
    problems = []
    for text in page["texts"]:
        if (text["left"] < -SLACK or text["top"] < -SLACK or text["right"] > page["width"] + SLACK
                or text["bottom"] > page["height"] + SLACK):
            problems.append(f"{path}: {text['text']!r} spans x {text['left']:.1f}..{text['right']:.1f}, "
                            f"y {text['top']:.1f}..{text['bottom']:.1f}, outside 0..{page['width']:g} x 0..{page['height']:g}")
    smallest = min((text["fontSize"] for text in page["texts"]), default=0)
    summary = (f"{path}: {len(page['texts'])} texts inside {page['width']:g} x {page['height']:g}, "
               f"smallest font {smallest:g} px; " + json.dumps({"smallest_font": smallest, "width": page["width"]}))
    return problems, summary


def main():
    files = sys.argv[1:]
    if not files:
        print(__doc__)
        return 2
    work = tempfile.mkdtemp(prefix="forcescale-svg-fit-")
    driver = None
    try:
        driver = browser(work)
        failures = []
        for path in files:
            problems, summary = check(driver, path)
            failures += problems
            print(("FAILED " if problems else "ok ") + summary if summary else problems[0], flush=True)
            for problem in problems:
                print("  " + problem, flush=True)
        if failures:
            print(f"FAILED: {len(failures)} texts lie outside their drawing", flush=True)
            return 1
        print("all texts fit", flush=True)
        return 0
    finally:
        if driver:
            driver.quit()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
