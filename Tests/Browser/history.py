#!/usr/bin/python3
"""forcescale-web's History view in a real browser (issue 42).

forcescale-web (--log-db LOG) serves the page to Debian's chromium, driven as dashboard.py
drives it. First there is no log: the view says how to switch logging on. Then forcescaled
replays the recording in a loop with --log-db LOG, and the view is checked against
`forcescale log` on the same file while the daemon goes on writing it:

- the sessions listed (Refresh, pressed from the keyboard) are the newest of
  `forcescale log sessions --json`, newest first, with their device, readings and PEAKs;
- paging: "Older sessions" shows the ten before, "Newest sessions" the first page again;
- a session opened from the keyboard shows its plot (the SVG, loaded), its stable weights
  (as many as /api/sessions/ID lists) and PEAKs, and download links whose CSV, JSON lines
  and SVG are byte for byte `forcescale log export` and `forcescale log plot`;
- one way to show time: the table's start is the summary's, in the browser's locale, and
  the plot the page shows carries no time of day of its own;
- a session id the log does not have answers 404, a malformed one 400;
- the keyboard alone (Tab) reaches Refresh, the paging buttons, the sessions and the
  downloads;
- a URL per session: opening one puts `#session-N` in the URL and names it in the title,
  Back returns to the list (focus on its button) and Forward to it, loading the URL opens
  it, `#session-N` of a session the log lacks says so; the page of sessions is in the URL
  too (`#sessions-before-N`) and survives a reload;
- at 1280 and 390 CSS pixels wide (the phone by Chrome's device metrics, since a headless
  window is never narrower than about 500 px), with a session open: no sideways scrolling,
  every value of every row inside the screen and uncut, the plot's labels at least 11 px
  (the narrow plot on the phone), and axe-core 4.x (accessibility.py) with no serious or
  critical violation, as without a log and with a session open;
- screenshots at both widths; with --screenshots DIR, the documentation's too (docs/images,
  made by scripts/screenshots): the History view with a session open, whole, at 1280 and
  390 CSS pixels wide.

Run by Tests/ForcescaleCLITests/WebPageTests.swift, which writes the recording; on its own:

  Tests/Browser/history.py --bin-dir .build/debug --recording FILE --artifacts DIR

Exit status 0 when every check passed, 1 with what was expected and what was seen.
"""

import argparse
import http.client
import json
import os
import subprocess
import sys

from dashboard import CheckFailed, Child, Dashboard, StreamWatcher, authorization, daemon_answers, keyed_url, log, run_checks, wait_until
from selenium.webdriver.common.keys import Keys

HISTORY = """
const $ = (id) => document.getElementById(id);
const detail = $("session-detail");
const plot = $("session-plot");
return {
  log: $("history").getAttribute("data-log"),
  status: $("history-status").textContent,
  tableShown: !$("sessions").hidden,
  rows: [...document.querySelectorAll("#sessions-body tr")].map((row) => ({
    session: Number(row.dataset.session),
    cells: [...row.querySelectorAll("td")].map((cell) => cell.textContent),
  })),
  olderShown: !$("history-older").hidden,
  newestShown: !$("history-newest").hidden,
  detailShown: !detail.hidden,
  detailSession: detail.hidden ? null : Number(detail.dataset.session),
  title: $("session-title").textContent,
  titleFocused: document.activeElement === $("session-title"),
  plotSrc: plot.getAttribute("src"),
  plotLoaded: plot.complete && plot.naturalWidth > 0,
  plotAlt: plot.alt,
  weights: [...document.querySelectorAll("#session-weights .stable-weight")].map((item) => item.textContent),
  peaks: [...document.querySelectorAll("#session-peaks .session-peak")].map((item) => item.textContent),
  downloads: ["csv", "json", "svg"].map((kind) => $("download-" + kind).getAttribute("href")),
  overflow: document.documentElement.scrollWidth - window.innerWidth,
  hash: location.hash,
  documentTitle: document.title,
  missingShown: !$("session-missing").hidden,
  missing: $("session-missing").textContent,
  focused: document.activeElement ? (document.activeElement.id || document.activeElement.className + ":" + document.activeElement.textContent) : "",
  plotCurrentSrc: plot.currentSrc,
  plotShownWidth: plot.getBoundingClientRect().width,
  plotNaturalWidth: plot.naturalWidth,
  summary: $("session-summary").textContent,
  width: window.innerWidth,
  // Each cell of the sessions' list: where it lies, and whether its text is cut.
  cellsOutside: [...document.querySelectorAll("#sessions-body td")].filter((cell) => {
    const r = cell.getBoundingClientRect();
    return r.left < -0.5 || r.right > window.innerWidth + 0.5 || cell.scrollWidth > cell.clientWidth + 1;
  }).map((cell) => cell.textContent),
  wrapOverflow: document.querySelector(".table-wrap").scrollWidth - document.querySelector(".table-wrap").clientWidth,
  stale: $("content").getAttribute("data-stale") === "true",
};
"""


class History(Dashboard):
    def __init__(self, arguments):
        super().__init__(arguments)
        self.log_path = os.path.join(self.work, "force.sqlite")
        self.web_arguments = ["--log-db", self.log_path]

    def start_daemon(self):
        arguments = [os.path.join(self.arguments.bin_dir, "forcescaled"), "--replay", self.arguments.recording, "--loop",
                     "--socket", self.socket, "--state-dir", os.path.join(self.work, "state"), "--log-db", self.log_path]
        self.daemon = Child("forcescaled", arguments, self.work)
        wait_until(f"forcescaled to answer on {self.socket}",
                   lambda: self.daemon_failed() or daemon_answers(self.socket), seen=self.daemon.text)

    def history(self):
        return self.browser.execute_script(HISTORY)

    def history_until(self, what, condition):
        last = {}

        def check():
            last["page"] = self.history()
            return condition(last["page"])

        wait_until(f"the History view to show {what}", check, seen=lambda: str(last.get("page")))
        return last["page"]

    def forcescale(self, arguments):
        result = subprocess.run([os.path.join(self.arguments.bin_dir, "forcescale")] + arguments + ["--db", self.log_path],
                                capture_output=True, timeout=60)
        if result.returncode != 0:
            raise CheckFailed(f"forcescale {' '.join(arguments)} exited {result.returncode}: {result.stderr.decode()}")
        return result.stdout

    def cli_sessions(self):
        return [json.loads(line) for line in self.forcescale(["log", "sessions", "--json"]).decode().splitlines()]

    def get(self, path):
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        connection.request("GET", path, headers=authorization(self.port))
        response = connection.getresponse()
        return response.status, response.read()

    def press(self, element_id):
        """Focuses the control by script and presses Enter, as a keyboard user would."""
        element = self.browser.find_element("id", element_id)
        self.browser.execute_script("arguments[0].focus()", element)
        element.send_keys(Keys.ENTER)

    def run(self):
        # The page first, with no log yet.
        self.start_web()
        self.watcher = StreamWatcher(self.port)
        self.watcher.start()
        self.start_browser()
        # In through the address with the key, as the launcher opens it; the later visits
        # of the bare address carry the cookie it set.
        self.browser.get(keyed_url(self.port))
        page = self.history_until("that there is no log, and how to switch logging on",
                                  lambda page: page["log"] == "missing")
        if "forcescaled with --log" not in page["status"] or self.log_path not in page["status"] or page["tableShown"]:
            raise CheckFailed(f"without a log the view says {page['status']!r} (table shown: {page['tableShown']})")
        log(f"no log: {page['status']}")
        self.check_accessibility("the page without a log")

        # Then forcescaled logs the recording, looping, and goes on while the view is read.
        self.start_daemon()
        wait_until("12 ended sessions in the log", lambda: os.path.exists(self.log_path)
                   and len([s for s in self.cli_sessions() if "ended" in s]) >= 12, deadline=180)
        self.press("history-refresh")
        page = self.history_until("ten sessions", lambda page: page["log"] == "present" and len(page["rows"]) == 10)
        self.check_rows(page)
        # The demo's mug presses the pad to the top of its range: its peak is a lower bound.
        if not any(row["cells"][5].startswith("at least ") for row in page["rows"]):
            raise CheckFailed(f"no session of ten shows a saturated peak as a lower bound: {[row['cells'] for row in page['rows']]}")
        first = [row["session"] for row in page["rows"]]
        log(f"first page: sessions {first}")
        if not page["olderShown"] or page["newestShown"]:
            raise CheckFailed(f"the first page offers older: {page['olderShown']}, newest: {page['newestShown']}")
        self.screenshot("history-desktop.png")

        self.press("history-older")
        page = self.history_until("the page before", lambda page: page["rows"] and page["rows"][0]["session"] < min(first))
        older = [row["session"] for row in page["rows"]]
        if older[0] != min(first) - 1 or older != sorted(older, reverse=True) or not page["newestShown"]:
            raise CheckFailed(f"after sessions {first} the older page shows {older} (newest offered: {page['newestShown']})")
        self.check_rows(page)
        log(f"older page: sessions {older}")
        # The page of sessions is in the URL: a reload shows the same page.
        if page["hash"] != f"#sessions-before-{min(first)}":
            raise CheckFailed(f"the older page's URL ends in {page['hash']!r}, not #sessions-before-{min(first)}")
        self.browser.refresh()
        page = self.history_until("the same older page after a reload",
                                  lambda page: [row["session"] for row in page["rows"]] == older and page["newestShown"])
        log(f"reloaded {page['hash']}: sessions {older} again")
        self.press("history-newest")
        page = self.history_until("the newest page again", lambda page: page["rows"] and page["rows"][0]["session"] >= first[0]
                                  and not page["newestShown"])

        # The oldest on the page: ended, since newer sessions follow it.
        ended = page["rows"][-1]["session"]
        self.check_session(ended)
        self.check_accessibility("the History view with a session open")
        self.check_errors(ended)
        self.check_keyboard()
        self.check_url(ended)
        self.check_widths(ended)

    def check_rows(self, page):
        """Each row is the session as `forcescale log sessions --json` has it, newest first."""
        listed = {session["session"]: session for session in self.cli_sessions()}
        shown = [row["session"] for row in page["rows"]]
        expected = sorted((sid for sid in listed if min(shown) <= sid <= max(shown)), reverse=True)
        if shown != expected:
            raise CheckFailed(f"the view lists sessions {shown}; the log has {expected} in that range")
        for row in page["rows"]:
            session = listed[row["session"]]
            cells = row["cells"]
            if cells[0] != f"Session {session['session']}" or cells[1] != session["device"]:
                raise CheckFailed(f"row {cells} is not session {session['session']} on {session['device']}")
            # An ended session's count is final; an open one only grows.
            if "ended" in session and cells[4] != str(session["readings"]):
                raise CheckFailed(f"session {session['session']} shows {cells[4]} readings, the log has {session['readings']}")
            if "ended" not in session and not cells[3].startswith("still on"):
                raise CheckFailed(f"the open session {session['session']} shows its length as {cells[3]!r}")
            # A saturated peak or stable weight is a lower bound, said so; no other is.
            for index, key in ((5, "peak"), (6, "stable")):
                if session.get(f"{key}_grams") is None:
                    continue
                bound = f"at least {session[key + '_grams']:.1f} g (saturated)"
                if bool(session.get(f"{key}_saturated")) != (cells[index] == bound) or (not session.get(f"{key}_saturated") and "at least" in cells[index]):
                    raise CheckFailed(f"session {session['session']} shows its {key} weight as {cells[index]!r}; "
                                      f"the log has {session[key + '_grams']} g, saturated: {bool(session.get(key + '_saturated'))}")
            if cells[7] != str(len(session.get("peaks", []))):
                raise CheckFailed(f"session {session['session']} shows {cells[7]} PEAKs, the log has {len(session.get('peaks', []))}")

    def check_session(self, session_id):
        button = self.browser.find_element("css selector", f'#sessions-body tr[data-session="{session_id}"] .open-session')
        self.browser.execute_script("arguments[0].focus()", button)
        button.send_keys(Keys.ENTER)
        page = self.history_until(f"session {session_id} opened with its plot loaded",
                                  lambda page: page["detailSession"] == session_id and page["plotLoaded"])
        summary = json.loads(self.get(f"/api/sessions/{session_id}")[1])
        device = summary["session"]["device"]
        if page["title"] != f"Session {session_id} on {device}" or not page["titleFocused"]:
            raise CheckFailed(f"the opened session is titled {page['title']!r} (focused: {page['titleFocused']})")
        if len(page["weights"]) != len(summary["stable_weights"]) or not page["weights"]:
            raise CheckFailed(f"the view lists stable weights {page['weights']}; the server {summary['stable_weights']}")
        if len(page["peaks"]) != len(summary["session"].get("peaks", [])):
            raise CheckFailed(f"the view lists PEAKs {page['peaks']}; the log {summary['session'].get('peaks')}")
        if not page["plotAlt"].startswith(f"Plot of session {session_id}"):
            raise CheckFailed(f"the plot's text alternative is {page['plotAlt']!r}")
        expected = {
            0: self.forcescale(["log", "export", "--session", str(session_id), "--format", "csv"]),
            1: self.forcescale(["log", "export", "--session", str(session_id), "--format", "jsonl"]),
            2: self.forcescale(["log", "plot", "--session", str(session_id), "--output", "-"]),
        }
        for index, href in enumerate(page["downloads"]):
            status, body = self.get("/" + href)
            if status != 200 or body != expected[index]:
                raise CheckFailed(f"{href}: {status}, {len(body)} bytes, not the {len(expected[index])} bytes forcescale log writes")
        log(f"session {session_id}: {page['weights']}, PEAKs {page['peaks']}; downloads {page['downloads']} equal forcescale log's")
        # One way to show time: the table's start, the summary's and the plot's agree: the
        # page writes the browser's locale, and the picture it shows carries no time of day.
        started = next(row["cells"][2] for row in page["rows"] if row["session"] == session_id)
        status, svg = self.get(page["plotSrc"] if page["plotSrc"].startswith("/") else "/" + page["plotSrc"])
        if f"Started {started};" not in page["summary"] or status != 200 or b">started " in svg or b"+0000" in svg:
            raise CheckFailed(f"the table says {started!r}, the summary {page['summary']!r}, and the plot {page['plotSrc']} "
                              f"({status}) {'has' if b'>started ' in svg else 'has no'} time of its own")
        self.screenshot("history-session.png")

    def check_errors(self, session_id):
        status, body = self.get(f"/api/sessions/{session_id + 100000}")
        if status != 404 or b"no session" not in body:
            raise CheckFailed(f"an unknown session answered {status} {body!r}")
        status, body = self.get("/api/sessions/twelve")
        if status != 400 or b"not a session id" not in body:
            raise CheckFailed(f"a malformed session id answered {status} {body!r}")
        log("an unknown session: 404; a malformed id: 400")

    def check_keyboard(self):
        """Tab from the top of the page reaches every History control."""
        self.browser.execute_script("document.activeElement && document.activeElement.blur(); window.scrollTo(0, 0)")
        reached = set()
        for _ in range(80):
            self.browser.switch_to.active_element.send_keys(Keys.TAB)
            reached.add(self.browser.execute_script(
                "const e = document.activeElement; return e.id || (e.className + ':' + e.textContent);"))
        wanted = {"history-refresh", "history-older", "download-csv", "download-json", "download-svg"}
        sessions = [name for name in reached if name.startswith("open-session:")]
        if not wanted <= reached or len(sessions) < 10:
            raise CheckFailed(f"Tab reached {sorted(reached)}; missing {sorted(wanted - reached)}, sessions {len(sessions)}")
        log(f"keyboard: Tab reaches {sorted(wanted)} and {len(sessions)} sessions")

    def check_url(self, session_id):
        """The open session is in the URL and the title; Back returns to the list and Forward
        to the session; the URL alone opens it; a session the log lacks says so."""
        page = self.history()
        if page["hash"] != f"#session-{session_id}" or not page["documentTitle"].startswith(f"Session {session_id} on "):
            raise CheckFailed(f"with session {session_id} open the URL ends in {page['hash']!r} and the title is {page['documentTitle']!r}")
        self.browser.back()
        page = self.history_until("the list again after Back", lambda page: not page["detailShown"] and page["hash"] == "")
        if page["documentTitle"] != "forcescale" or page["focused"] != f"open-session:Session {session_id}":
            raise CheckFailed(f"after Back the title is {page['documentTitle']!r} and focus is on {page['focused']!r}")
        self.browser.forward()
        self.history_until(f"session {session_id} again after Forward", lambda page: page["detailSession"] == session_id and page["plotLoaded"])
        # A fresh load of the session's URL, as from a link or a bookmark.
        self.browser.get("about:blank")
        self.browser.get(f"{self.url}#session-{session_id}")
        page = self.history_until(f"session {session_id} opened by its URL",
                                  lambda page: page["detailSession"] == session_id and page["plotLoaded"] and page["rows"])
        if not page["documentTitle"].startswith(f"Session {session_id} on "):
            raise CheckFailed(f"opened by its URL, session {session_id}'s page is titled {page['documentTitle']!r}")
        log(f"URL: {page['hash']} opens session {session_id}, titled {page['documentTitle']!r}; Back and Forward walk it")
        missing = session_id + 100000
        self.browser.get("about:blank")
        self.browser.get(f"{self.url}#session-{missing}")
        page = self.history_until(f"that session {missing} is not in the log",
                                  lambda page: page["missingShown"] and not page["detailShown"] and page["rows"])
        if f"Session {missing} is not in the force log" not in page["missing"] or not page["documentTitle"].startswith(f"Session {missing} not found"):
            raise CheckFailed(f"#session-{missing} says {page['missing']!r}, titled {page['documentTitle']!r}")
        log(f"URL: #session-{missing} says {page['missing']!r}")
        self.browser.get("about:blank")
        self.browser.get(f"{self.url}#session-{session_id}")
        self.history_until(f"session {session_id} opened by its URL again", lambda page: page["detailSession"] == session_id and page["plotLoaded"])

    def check_widths(self, session_id):
        """At 1280 and 390 CSS px (a phone's metrics, as Chrome's device emulation sets them:
        a headless window is never narrower than about 500 px), with the session open: no
        sideways scrolling, every value of every session's row inside the screen and uncut,
        the plot's labels at least 11 CSS px (its 12 px text times its drawn width over its
        own), the narrow plot on the phone, and axe-core. With --screenshots, the documentation's
        pictures of the view at each width."""
        for width, height, name in ((1280, 800, "history-desktop.png"), (390, 844, "history-phone.png")):
            self.browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                                         {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600})
            narrow = width < 600
            page = self.history_until(f"session {session_id} laid out at {width} px with its {'narrow ' if narrow else ''}plot loaded",
                                      lambda page: page["width"] == width and page["detailSession"] == session_id and page["plotLoaded"]
                                      and ("layout=narrow" in page["plotCurrentSrc"]) == narrow
                                      and page["plotNaturalWidth"] == (360 if narrow else 800))
            # The live card above is dimmed until the reloaded page's stream has a reading;
            # axe-core judges the page as it is used, live.
            self.page_until(f"a live reading at {width} px", lambda snapshot: snapshot["connectionState"] == "live" and snapshot["grams"] is not None)
            self.history_until("the page no longer dimmed", lambda page: page["stale"] is False)
            label = 12 * page["plotShownWidth"] / page["plotNaturalWidth"]
            if page["overflow"] > 0 or page["wrapOverflow"] > 0 or page["cellsOutside"] or label < 11:
                raise CheckFailed(f"at {width} px: the page is {page['overflow']} px too wide, the list {page['wrapOverflow']} px; "
                                  f"cells outside or cut: {page['cellsOutside']}; the plot's labels are {label:.1f} px")
            self.check_accessibility(f"the History view with a session open at {width} px")
            self.browser.execute_script("document.getElementById('history').scrollIntoView()")
            self.screenshot(f"history-{width}.png")
            log(f"{width} px: no sideways scrolling, every row's values inside; plot {page['plotShownWidth']:.0f} px wide "
                f"of {page['plotNaturalWidth']}, labels {label:.1f} px")
            self.docs_screenshot(name, width, height, element_id="history")
            self.browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bin-dir", required=True, help="the directory of the built forcescaled, forcescale and forcescale-web")
    parser.add_argument("--recording", required=True, help="the evemu recording forcescaled serves in a loop")
    parser.add_argument("--artifacts", required=True, help="where the screenshots go")
    parser.add_argument("--screenshots", help="also make the documentation's screenshots (history-*.png) in this directory")
    return run_checks(History(parser.parse_args()), "history-failure.png")


if __name__ == "__main__":
    sys.exit(main())
