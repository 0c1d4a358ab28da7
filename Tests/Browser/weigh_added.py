#!/usr/bin/python3
"""forcescale-web's "Weigh what I add" in a real browser (the page's weigh --tare-first).

forcescaled serves a recording of a contact resting on the demo's 0-255 pad with an object
added within the same touch (Tests/ForcescaleCLITests/AddedWeightTests.swift writes them:
steady, drifting, lifted too early, never steady), forcescale-web runs with
--allow-control, and headless chromium clicks the button at the start of a touch, as a
person would after putting a finger down. With --expect added the page must take the
contact as zero, ask for the object, and show the weight added within its ± (and
--tolerance) of the truth, twice ("Start again" starts over); with --expect lifted it must
say the contact was lifted and show no weight. Every wait is for a DOM state, with a
generous deadline.

  Tests/Browser/weigh_added.py --bin-dir .build/debug --recording FILE --expect added --added GRAMS --artifacts DIR
"""

import argparse
import os
import re
import sys
import tempfile

from selenium import webdriver
from selenium.webdriver.chrome.service import Service

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dashboard import (  # noqa: E402
    CHROMEDRIVER, DEADLINE, CheckFailed, Child, StreamWatcher, daemon_answers, free_port, keyed_url, log, report_failure, tear_down,
    wait_until, web_serves,
)

STEP = 'return document.getElementById("weigh-added-step").textContent'
GRAB_STATE = 'return document.getElementById("weigh-added-grab-state").textContent'
FRAMED = 'return document.getElementById("controls").hasAttribute("data-grabbed")'
# Records every text the grab's status is given, with whether the controls were framed then:
# a short weighing may take and give back the pad between two looks.
WATCH_GRAB = """
window.__grabStates = [];
const state = document.getElementById("weigh-added-grab-state");
new MutationObserver(function () {
  window.__grabStates.push([state.textContent, document.getElementById("controls").hasAttribute("data-grabbed")]);
}).observe(state, { childList: true, characterData: true, subtree: true });
"""
GRAB_STATES = "return window.__grabStates"
# Records every text the step line is given: on a loaded machine the zero may be taken and
# the weight shown between two looks, and a wait for the zero's text would then never see it.
WATCH_STEPS = """
window.__steps = [];
const step = document.getElementById("weigh-added-step");
new MutationObserver(function () { window.__steps.push(step.textContent); })
  .observe(step, { childList: true, characterData: true, subtree: true });
"""
STEPS = "return window.__steps"
FORGET_STEPS = "window.__steps = []"


def check_given_back(browser):
    """Once the weighing has ended, the page gives the pad back and says so; the record of
    what it said starts afresh for the next weighing."""
    wait_until("the page to say the pad was given back", lambda: browser.execute_script(GRAB_STATE) == "The pad was given back."
               and not browser.execute_script(FRAMED), seen=lambda: browser.execute_script(GRAB_STATE))
    log("the page said the pad was given back")
    browser.execute_script("window.__grabStates = []")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bin-dir", required=True)
    parser.add_argument("--recording", required=True)
    parser.add_argument("--expect", choices=["added", "lifted"], default="added")
    parser.add_argument("--added", type=float, default=0, help="the grams the recording adds to the contact")
    parser.add_argument("--tolerance", type=float, default=0, help="grams of drift allowed beside the ±")
    parser.add_argument("--artifacts", required=True)
    parser.add_argument("--grab", action="store_true", help="tick 'Take the pad while weighing' and check that the page says the pad is taken, then given back")
    arguments = parser.parse_args()
    work = tempfile.mkdtemp(prefix="forcescale-web-added-")
    sock, port, key_dir = os.path.join(work, "sock"), free_port(), os.path.join(work, "keys")
    os.makedirs(key_dir)
    daemon = web = browser = watcher = None
    try:
        daemon = Child("forcescaled", [os.path.join(arguments.bin_dir, "forcescaled"), "--replay", arguments.recording, "--loop",
                                       "--socket", sock, "--state-dir", os.path.join(work, "state")], work)
        wait_until("forcescaled to answer", lambda: daemon_answers(sock), seen=daemon.text)
        web = Child("forcescale-web", [os.path.join(arguments.bin_dir, "forcescale-web"), "--socket", sock,
                                       "--listen", f"127.0.0.1:{port}", "--allow-control", "--key-dir", key_dir], work)
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
        button = browser.find_element("id", "weigh-added")
        wait_until("the button, offered with --allow-control", lambda: button.is_displayed())
        choice = browser.find_element("id", "weigh-added-grab")
        if choice.is_selected():
            raise CheckFailed("'Take the pad while weighing' is ticked before anyone ticked it: it must be off by default")
        if arguments.grab:
            wait_until("the choice to take the pad", lambda: browser.find_element("id", "weigh-added-grab-choice").is_displayed())
            choice.click()
            browser.execute_script(WATCH_GRAB)
        browser.execute_script(WATCH_STEPS)

        for attempt in (("first", "again") if arguments.expect == "added" else ("first",)):
            # Click as a touch begins: a reading with contacts after one without, since now.
            since = max(1, len(watcher.readings()))

            def touch_begins():
                readings = watcher.readings()
                return any(readings[i]["contacts"] > 0 and readings[i - 1]["contacts"] == 0 for i in range(since, len(readings)))
            wait_until("a touch to begin", touch_begins, seen=watcher.summary)
            browser.execute_script(FORGET_STEPS)
            button.click()
            wait_until("the page to ask for a contact", lambda: any("Put a contact on the pad" in text for text in browser.execute_script(STEPS)),
                       seen=lambda: browser.execute_script(STEPS))
            wait_until("the zero", lambda: any("Zero taken at" in text for text in browser.execute_script(STEPS)),
                       seen=lambda: browser.execute_script(STEPS))
            if arguments.grab:
                def taken():
                    return [text for text, framed in browser.execute_script(GRAB_STATES) if " is taken: the desktop sees nothing of it" in text and framed]
                wait_until("the page to say the pad is taken, the controls framed", lambda: taken(), seen=lambda: browser.execute_script(GRAB_STATES))
                log(f"{attempt}: the page said {taken()[0]!r}")
            if arguments.expect == "lifted":
                # Ordered after anything the page could show as a weight: the lift ends it.
                wait_until("the page to say the contact was lifted", lambda: "lifted" in browser.execute_script(STEP),
                           seen=lambda: browser.execute_script(STEP))
                text = browser.execute_script(STEP)
                if " added" in text or text != "The contact was lifted before the object settled: nothing was weighed. Start again.":
                    raise CheckFailed(f"after the lift the page reads {text!r}")
                log(f"the page said {text!r}")
                if arguments.grab:
                    check_given_back(browser)
                continue
            wait_until("the weight added", lambda: browser.execute_script(STEP).endswith(" added"), seen=lambda: browser.execute_script(STEP))
            text = browser.execute_script(STEP)
            match = re.match(r"^(-?[0-9.]+) g ± ([0-9.]+) g added$", text)
            if not match:
                raise CheckFailed(f"the result reads {text!r}")
            grams, uncertainty = float(match.group(1)), float(match.group(2))
            if abs(grams - arguments.added) > uncertainty + 0.1 + arguments.tolerance or not 0 < uncertainty < 3:
                raise CheckFailed(f"the page weighed {grams} ± {uncertainty} g for {arguments.added} g added")
            log(f"{attempt}: the page showed {text!r} for {arguments.added:.1f} g added")
            if arguments.grab:
                check_given_back(browser)
            if attempt == "first":
                os.makedirs(arguments.artifacts, exist_ok=True)
                browser.save_screenshot(os.path.join(arguments.artifacts, "weigh-added.png"))
                if button.text != "Start again":
                    raise CheckFailed(f"the button reads {button.text!r} after a result")
        log("all weigh-what-I-add checks passed")
        return 0
    except Exception as failure:  # noqa: BLE001 - reported with the programs' output
        report_failure(failure, (daemon, web))
        return 1
    finally:
        tear_down(watcher, browser, (web, daemon), work)


if __name__ == "__main__":
    sys.exit(main())
