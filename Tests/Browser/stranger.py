#!/usr/bin/python3
"""forcescale-web from a stranger's browser, and framed by another page (issue 60).

Run by Tests/ForcescaleCLITests/WebAccessTests.swift against a forcescale-web it started
(with --allow-control) on a daemon whose pad is pressed:

- `--stranger URL`: run as a user outside every forcescale group (nobody), headless chromium
  opens the bare address: it gets the page that says a key is needed, no dashboard, no
  Tare and no "Weigh what I add", and the page's own origin cannot tare, grab or read the
  status with fetch (401). The test then checks that the daemon was not tared.
- `--frame KEYED_URL`: the allowed user's browser, let in through the address with the key
  (the cookie set), opens a page of another origin that frames the dashboard: the frame is
  refused (X-Frame-Options: DENY, CSP frame-ancestors 'none'), while a frame of that page's
  own holds its document, so that the probe is shown to see into frames that load.

Prints "all browser checks passed" at the end; any failure exits 1 with why. Self-contained
(no import from dashboard.py), so that it runs from a copy that nobody may read.
"""

import argparse
import os
import shutil
import sys
import tempfile
import time
import urllib.parse

from selenium import webdriver
from selenium.common.exceptions import WebDriverException
from selenium.webdriver.chrome.service import Service

CHROMEDRIVER = "/usr/bin/chromedriver"
DEADLINE = 60


class CheckFailed(Exception):
    pass


def wait_until(what, condition):
    deadline = time.monotonic() + DEADLINE
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.1)
    raise CheckFailed(f"waited {DEADLINE} s for {what}")


def browser(work):
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for argument in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--window-size=1024,900",
                     f"--user-data-dir={os.path.join(work, 'chromium')}", "--no-first-run", "--no-default-browser-check"]:
        options.add_argument(argument)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER, log_path=os.path.join(work, "chromedriver.log")), options=options)
    driver.set_page_load_timeout(DEADLINE)
    driver.set_script_timeout(DEADLINE)
    return driver


FETCH = """
const done = arguments[arguments.length - 1];
fetch(arguments[0], { method: arguments[1], headers: { "Content-Type": "application/json" } })
  .then(r => r.text().then(t => done([r.status, t])), e => done([0, String(e)]));
"""


def stranger(driver, url):
    driver.get(url)
    text = driver.find_element("tag name", "body").text
    if "a key is needed" not in text or "forcescale-web-open" not in text:
        raise CheckFailed(f"the bare address shows {text!r}, not the page that says a key is needed")
    for selector in ("button.tare", "#weigh-added", "#scales", "#history"):
        if driver.find_elements("css selector", selector):
            raise CheckFailed(f"the bare address offers {selector}")
    print(f"the bare address: {text.splitlines()[0]!r}, no Tare, no dashboard")
    # The page's own origin, as a script of the page would ask (the Origin is the real one).
    for method, path in (("POST", "api/tare"), ("POST", "api/grab"), ("GET", "api/status"), ("GET", "api/sessions"), ("GET", "metrics")):
        status, body = driver.execute_async_script(FETCH, url + path, method)
        if status != 401 or '"up"' in body or "forcescale_" in body or '"class"' in body:
            raise CheckFailed(f"{method} /{path} from the page's origin got {status}: {body[:300]}")
        print(f"{method} /{path} from the page's origin: {status}")


def frame(driver, keyed_url):
    driver.get(keyed_url)
    base = keyed_url.split("?")[0]
    if driver.current_url != base:
        raise CheckFailed(f"the key was not taken out of the address: {driver.current_url}")
    wait_until("the dashboard, let in", lambda: driver.find_elements("id", "scales"))
    # Another origin (an opaque one: a data: page) framing the dashboard, beside a frame of
    # its own whose document the probe must see.
    page = ('<!DOCTYPE html><html><body>'
            f'<iframe id="dashboard" src="{base}" width="800" height="600" style="opacity:0.01"></iframe>'
            '<iframe id="own" srcdoc="<p id=&quot;scales&quot;>a frame that loads</p>"></iframe></body></html>')
    driver.get("data:text/html," + urllib.parse.quote(page))
    driver.switch_to.frame(driver.find_element("id", "own"))
    seen = wait_until("the page's own frame to load", lambda: driver.find_elements("id", "scales"))
    if not seen:
        raise CheckFailed("the probe sees nothing in a frame that loads")
    driver.switch_to.default_content()
    framed = driver.find_element("id", "dashboard")

    def refused():
        driver.switch_to.default_content()
        driver.switch_to.frame(framed)
        # A refused frame holds the browser's error document, never the dashboard.
        found = driver.find_elements("id", "scales") or driver.find_elements("css selector", "button.tare")
        location = driver.execute_script("return document.location.href")
        driver.switch_to.default_content()
        if found:
            raise CheckFailed(f"another origin framed the dashboard ({location})")
        return location.startswith("chrome-error:")
    wait_until("the framed dashboard to be refused", refused)
    print("framed by another origin: refused (the frame holds the browser's error page)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stranger", help="the bare address, opened as a user without a key")
    parser.add_argument("--frame", help="the address with the key, then framed by another origin")
    arguments = parser.parse_args()
    work = tempfile.mkdtemp(prefix="forcescale-web-stranger-")
    driver = None
    try:
        driver = browser(work)
        if arguments.stranger:
            stranger(driver, arguments.stranger)
        if arguments.frame:
            frame(driver, arguments.frame)
        print("all browser checks passed")
        return 0
    except (CheckFailed, WebDriverException) as error:
        print(f"FAILED: {error}", file=sys.stderr)
        return 1
    finally:
        if driver:
            try:
                driver.quit()
            except WebDriverException:
                pass
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
