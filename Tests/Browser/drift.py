#!/usr/bin/python3
"""forcescale-web's page showing a weight that does not stop, in a real browser.

forcescaled serves a recording of a contact that falls steadily on a 0-255 pad (written
by `forcescale-bench contact`: about 4.5 g/s down, a raw unit of noise), forcescale-web
serves the page and headless chromium shows it. The card must say "drifting −4.5 g/s"
(the rate of protocol 1.8's `drift`, as the stream beside it carries it) with the drifting
icon, never "stable", and the live region must announce it once; axe-core must find no
serious violation while it drifts and none once the daemon is gone and the card is
dimmed. Every wait is for a DOM state, with a generous deadline.

  Tests/Browser/drift.py --bin-dir .build/debug --recording FILE --artifacts DIR
"""

import argparse
import os
import re
import sys
import tempfile

from selenium import webdriver
from selenium.webdriver.chrome.service import Service

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from accessibility import axe_findings  # noqa: E402
from dashboard import (  # noqa: E402
    CHROMEDRIVER, DEADLINE, CheckFailed, Child, StreamWatcher, daemon_answers, free_port, keyed_url, log, report_failure, tear_down,
    wait_until, web_serves,
)

CARD = """
const card = document.querySelector("#scales .scale");
if (!card) return null;
const part = (name) => card.querySelector("." + name);
return {
  state: part("stable").getAttribute("data-state"),
  text: part("stable-text").textContent,
  icons: [...card.querySelectorAll(".stable .icon")].filter((icon) => getComputedStyle(icon).display !== "none")
    .map((icon) => icon.getAttribute("class")),
  stale: document.getElementById("content").getAttribute("data-stale"),
};
"""
# Records every text the live region is given: an announcement may be replaced before a look.
WATCH_ANNOUNCE = """
window.__announced = [];
const region = document.getElementById("announce");
new MutationObserver(function () { window.__announced.push(region.textContent); })
  .observe(region, { childList: true, characterData: true, subtree: true });
"""
ANNOUNCED = "return window.__announced"
DRIFT = re.compile(r"^drifting \u2212([0-9]+\.[0-9]) g/s$")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bin-dir", required=True)
    parser.add_argument("--recording", required=True)
    parser.add_argument("--artifacts", required=True)
    arguments = parser.parse_args()
    work = tempfile.mkdtemp(prefix="forcescale-web-drift-")
    sock, port = os.path.join(work, "sock"), free_port()
    key_dir = os.path.join(work, "keys")
    os.makedirs(key_dir)
    daemon = web = browser = watcher = None
    try:
        daemon = Child("forcescaled", [os.path.join(arguments.bin_dir, "forcescaled"), "--replay", arguments.recording, "--loop",
                                       "--socket", sock, "--state-dir", os.path.join(work, "state")], work)
        wait_until("forcescaled to answer", lambda: daemon_answers(sock), seen=daemon.text)
        web = Child("forcescale-web", [os.path.join(arguments.bin_dir, "forcescale-web"), "--socket", sock,
                                       "--listen", f"127.0.0.1:{port}", "--key-dir", key_dir], work)
        # In with the key it wrote, as the allowed user's launcher opens the page.
        wait_until("forcescale-web to serve the page", lambda: web_serves(port, key_dir), seen=web.text)
        watcher = StreamWatcher(port)
        watcher.start()
        options = webdriver.ChromeOptions()
        options.binary_location = "/usr/bin/chromium"
        for argument in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--window-size=1024,900",
                         f"--user-data-dir={os.path.join(work, 'chromium')}", "--no-first-run"]:
            options.add_argument(argument)
        browser = webdriver.Chrome(service=Service(CHROMEDRIVER, log_path=os.path.join(work, "chromedriver.log")), options=options)
        browser.set_page_load_timeout(DEADLINE)
        browser.get(keyed_url(port))
        wait_until("a card", lambda: browser.execute_script(CARD) is not None)
        browser.execute_script(WATCH_ANNOUNCE)

        # The card as it was when it said so: a look later may find it between two drifts.
        seen = {}

        def drifting():
            card = browser.execute_script(CARD)
            if card and card["state"] == "drifting" and DRIFT.match(card["text"]):
                seen["card"] = card
            return "card" in seen
        wait_until("the card to say the weight is drifting", drifting, seen=lambda: browser.execute_script(CARD))
        card = seen["card"]
        shown = float(DRIFT.match(card["text"]).group(1))
        if card["icons"] != ["icon icon-drifting"]:
            raise CheckFailed(f"the drifting card shows the icons {card['icons']}")
        # The stream beside the page carries the rate the page says (the watcher may get it
        # a moment after the page did).
        def rates():
            return {round(-reading["drift"], 1) for reading in watcher.readings() if "drift" in reading}
        wait_until(f"the stream to carry the page's {shown} g/s", lambda: shown in rates(), seen=lambda: sorted(rates()))
        if not 3 <= shown <= 6:
            raise CheckFailed(f"the page says {card['text']!r}, the fall being about 4.5 g/s")
        if any(reading.get("stable") for reading in watcher.readings() if "drift" in reading):
            raise CheckFailed("a READING with a drift was stable")
        log(f"the card said {card['text']!r} with the drifting icon (the stream's drifts: {min(rates())}…{max(rates())} g/s)")
        wait_until("the live region to announce the drift", lambda: any(text.startswith("Drifting \u2212") and text.endswith(" g/s, not a weight yet")
                                                                       for text in browser.execute_script(ANNOUNCED)),
                   seen=lambda: browser.execute_script(ANNOUNCED))
        log(f"the live region said {[text for text in browser.execute_script(ANNOUNCED) if text.startswith('Drifting')][0]!r}")
        failure, summary = axe_findings(browser)
        if failure:
            raise CheckFailed("while drifting: " + failure)
        log("while drifting, " + summary)
        os.makedirs(arguments.artifacts, exist_ok=True)
        browser.save_screenshot(os.path.join(arguments.artifacts, "dashboard-drifting.png"))

        # The daemon gone: the card stays, dimmed, and must still be readable.
        daemon.stop()
        daemon = None
        wait_until("the card to be dimmed, not live", lambda: browser.execute_script(CARD)["stale"] == "true",
                   seen=lambda: browser.execute_script(CARD))
        failure, summary = axe_findings(browser)
        if failure:
            raise CheckFailed("with the card dimmed: " + failure)
        log("with the card dimmed, " + summary)
        log("all drift checks passed")
        return 0
    except Exception as failure:  # noqa: BLE001 - reported with the programs' output
        report_failure(failure, (daemon, web))
        return 1
    finally:
        tear_down(watcher, browser, (web, daemon), work)


if __name__ == "__main__":
    sys.exit(main())
