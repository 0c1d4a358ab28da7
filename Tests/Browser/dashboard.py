#!/usr/bin/python3
"""forcescale-web's page in a real browser (issue 11).

Debian's chromium, driven headless through Debian's chromedriver (/usr/bin/chromedriver,
never a downloaded one) with python3-selenium, against the real programs: forcescaled
serving a scripted replay on a private socket, and forcescale-web on a free loopback port.
A second client reads /events beside the browser, and every number the page shows is
checked against what that client saw the stream carry:

- the weight is exactly a READING's grams, its settled_grams while stable (written as the CLI writes it), the dial's
  aria-valuenow is that reading's force in percent rounded down, "100%+" when saturated;
- PEAK appears with the PEAK's grams; the unit menu offers the units the server put into
  the page (ScaleCore's MassUnit, #units), and in each the held weight reads exactly as
  `forcescale watch --unit U` writes it, within half a last decimal of grams / grams_per_unit;
- the live region announces stable weights only;
- the card is titled with the device's own name (the recording's N: line) over its name in
  the protocol;
- axe-core 4.x (accessibility.py) finds no serious or critical violation on the live view;
- stopping the daemon makes the page say it is reconnecting, and it shows readings again
  when the daemon is back; the same when forcescale-web itself goes away and comes back;
- screenshots (desktop and phone width, and the reconnecting state) go to --artifacts;
  with --screenshots DIR, the documentation's too (docs/images, made by scripts/screenshots):
  the live view with the held weight stable, at 1280 and 390 CSS pixels wide.

Every wait is for a condition with a generous deadline (a busy 2-core machine), never a
fixed sleep. Run by Tests/ForcescaleCLITests/WebPageTests.swift, which writes the
recording; on its own:

  Tests/Browser/dashboard.py --bin-dir .build/debug --recording FILE --artifacts DIR

Exit status 0 when every check passed, 1 with what was expected and what was seen.
"""

import argparse
import base64
import http.client
import json
import math
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import traceback

from selenium import webdriver
from selenium.common.exceptions import TimeoutException, WebDriverException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.support.ui import Select, WebDriverWait

# Seconds for any one condition: long, since a condition ends as soon as it holds.
DEADLINE = 60
CHROMEDRIVER = "/usr/bin/chromedriver"



class CheckFailed(Exception):
    pass


def log(message):
    print(f"[{time.strftime('%H:%M:%S')}] {message}", flush=True)


def shown(reading):
    """The grams the page shows for a reading: its settled weight while stable (protocol
    1.3), the frame's otherwise."""
    return reading.get("settled_grams", reading["grams"])


# forcescale-web's key by port: it writes its keys into --key-dir when it starts (read-key,
# and control-key with --allow-control), and every request needs one. The requests here
# carry the best of them (Authorization: Bearer), as the allowed user's tools do; the
# browser enters through the address with ?key=, as forcescale-web-open and make run open it.
KEYS = {}


def written_key(key_dir):
    """The key forcescale-web wrote into key_dir: control-key when there is one, else
    read-key; None before it wrote them."""
    for name in ("control-key", "read-key"):
        try:
            with open(os.path.join(key_dir, name), encoding="ascii") as file:
                return file.read().strip()
        except FileNotFoundError:
            continue
    return None


def authorization(port):
    """The header that carries the key of the forcescale-web on `port`."""
    return {"Authorization": f"Bearer {KEYS[port]}"} if port in KEYS else {}


def keyed_url(port):
    """The address that lets a browser in: forcescale-web answers it with its cookie and a
    redirect to the bare address."""
    return f"http://127.0.0.1:{port}/?key={KEYS[port]}"


def web_serves(port, key_dir):
    """True once the forcescale-web on `port` has written its keys into key_dir and serves
    its page with them (a key of an earlier run, not yet replaced, gets 401: read again)."""
    key = written_key(key_dir)
    if key is None:
        return False
    KEYS[port] = key
    return page_answers(port)


def served_units(port):
    """The units forcescale-web put into its page (ScaleCore's MassUnit, the JSON of
    <script id="units">), in order: what the page converts and rounds with. Read from the
    page as served, so that no factor or decimal is restated here."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    connection.request("GET", "/", headers=authorization(port))
    page = connection.getresponse().read().decode("utf-8")
    connection.close()
    match = re.search(r'<script type="application/json" id="units">\n(.*?)\n</script>', page, re.S)
    if not match:
        raise CheckFailed("the page has no <script type=\"application/json\" id=\"units\">")
    return json.loads(match.group(1))["units"]


def grams_text(value):
    """A number of grams as the stream carries it (the daemon rounds to 0.1 g), written with
    one decimal, as the page writes grams: the number itself, nothing rounded here."""
    if abs(value * 10 - round(value * 10)) > 1e-6:
        raise CheckFailed(f"the stream carried {value} g, not a number of tenths")
    # -0.0 (a tared weight) is written 0.0, as the page and the CLI write it.
    return f"{value + 0.0:.1f}"


def held_weight(output, percent, unit):
    """The weight of the last stable line at `percent` in `forcescale watch --unit UNIT`'s
    output (a line per reading when not on a terminal), or None."""
    pattern = re.compile(r"^ *-?[0-9]+\.[0-9]{3} s +" + re.escape(percent) + r" +(-?[0-9]+(?:\.[0-9]+)?) " + re.escape(unit)
                         + r" +\[[# ]*\]  stable$")
    weights = [match.group(1) for match in map(pattern.match, output.splitlines()) if match]
    return weights[-1] if weights else None


def percent_text(reading):
    """The gauge's rule: rounded down, 100%+ when saturated."""
    if reading["saturated"]:
        return "100%+", "100"
    percent = math.floor(max(0.0, min(1.0, reading["force"])) * 100)
    return f"{percent}%", str(percent)


def check_axes(page):
    """The plot's axes say grams and seconds, with ticks from 0 up to at least full scale
    (385 g) at a step of 1, 2 or 5 times a power of ten, and every 10 s back to 30 s."""
    ticks = [float(text) for text in page["yTicks"]]
    steps = {round(b - a, 6) for a, b in zip(ticks, ticks[1:])}
    step = next(iter(steps), 0)
    mantissa = step / 10 ** math.floor(math.log10(step)) if step > 0 else 0
    if page["yUnit"] != "g" or not page["xUnit"].startswith("s") or ticks[:1] != [0.0] or ticks[-1] < 385 \
            or len(steps) != 1 or round(mantissa, 6) not in (1.0, 2.0, 5.0):
        raise CheckFailed(f"the plot's axes: {page['yUnit']!r} with ticks {page['yTicks']}, {page['xUnit']!r} with ticks {page['xTicks']}")
    if page["xTicks"] != ["−30", "−20", "−10", "0"]:
        raise CheckFailed(f"the time axis has ticks {page['xTicks']}")


def recorded_name(path):
    """The device's own name, as the evemu recording's `N:` line gives it."""
    with open(path, encoding="utf-8") as file:
        for line in file:
            if line.startswith("N: "):
                return line[3:].rstrip("\n")
    raise CheckFailed(f"{path} has no N: line")


def wait_until(what, condition, deadline=DEADLINE, seen=lambda: ""):
    """Polls `condition` until it returns something true; fails saying what it waited for."""
    end = time.monotonic() + deadline
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > end:
            raise CheckFailed(f"waited {deadline} s for {what}; saw {seen()}")
        time.sleep(0.05)


class Child:
    """A program under test, its output in files (no pipe to fill up), stopped at the end."""

    def __init__(self, name, arguments, directory):
        self.name = name
        self.arguments = arguments
        self.output_path = os.path.join(directory, f"{name}.log")
        self.start()

    def start(self):
        self.output = open(self.output_path, "ab")
        self.process = subprocess.Popen(self.arguments, stdin=subprocess.DEVNULL, stdout=self.output,
                                        stderr=subprocess.STDOUT)

    def running(self):
        return self.process.poll() is None

    def text(self):
        with open(self.output_path, "rb") as file:
            return file.read().decode("utf-8", "replace")[-3000:]

    def stop(self):
        if self.running():
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(DEADLINE)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
                raise CheckFailed(f"{self.name} did not stop within {DEADLINE} s of SIGTERM: {self.text()}")
        self.output.close()


def daemon_answers(path):
    """True once forcescaled accepts a connection on `path` and greets it with VERSION."""
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
            connection.settimeout(5)
            connection.connect(path)
            return connection.recv(4096).startswith(b'{"class":"VERSION"')
    except OSError:
        return False


def page_answers(port):
    try:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
        connection.request("GET", "/", headers=authorization(port))
        response = connection.getresponse()
        response.read()
        connection.close()
        return response.status == 200
    except OSError:
        return False


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def report_failure(failure, children):
    """Says why a check script failed, with the output of the programs it ran."""
    if not isinstance(failure, (CheckFailed, WebDriverException)):
        traceback.print_exc()
    print(f"FAILED: {failure}", flush=True)
    for child in children:
        if child:
            print(f"--- {child.name}'s output:\n{child.text()}", flush=True)


def tear_down(watcher, browser, children, work):
    """Ends a check script's stream watcher, browser and programs, and removes its folder:
    nothing of the run stays behind (what failed was printed before)."""
    if watcher:
        watcher.stopping = True
    if browser:
        try:
            browser.quit()
        except WebDriverException:
            pass
    for child in children:
        if child:
            try:
                child.stop()
            except CheckFailed:
                pass
    shutil.rmtree(work, ignore_errors=True)


class StreamWatcher(threading.Thread):
    """A second /events client beside the browser: what the stream carried, in order.

    It reconnects after the server goes away, as the page does, so that it sees the
    readings after a restart too."""

    def __init__(self, port):
        super().__init__(daemon=True)
        self.port = port
        self.lock = threading.Lock()
        self.events = []
        self.stopping = False

    def run(self):
        while not self.stopping:
            try:
                connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
                connection.request("GET", "/events", headers={"Accept": "text/event-stream", **authorization(self.port)})
                response = connection.getresponse()
                if response.status != 200:
                    raise OSError(f"status {response.status}")
                name, data = "message", []
                while not self.stopping:
                    # The response's own readline: /events is sent in HTTP/1.1 chunks, whose
                    # framing falls anywhere in a line (the raw socket's lines would be cut
                    # at every chunk boundary).
                    line = response.readline()
                    if not line.endswith(b"\n"):
                        # The connection ended, perhaps within a line: as EventSource does,
                        # an event not finished by a blank line is dropped, not half-read.
                        break
                    line = line.decode("utf-8").rstrip("\r\n")
                    if line == "":
                        if data:
                            self.record(name, "\n".join(data))
                        name, data = "message", []
                    elif line.startswith(":"):
                        continue
                    else:
                        field, _, value = line.partition(":")
                        value = value[1:] if value.startswith(" ") else value
                        if field == "event":
                            name = value
                        elif field == "data":
                            data.append(value)
                connection.close()
            except (OSError, http.client.HTTPException):
                pass
            if not self.stopping:
                # The server is away (restarted by the test): try again shortly.
                time.sleep(0.2)

    def record(self, name, data):
        try:
            value = json.loads(data)
        except ValueError:
            value = {"unparsed": data}
        with self.lock:
            self.events.append((time.monotonic(), name, value))

    def readings(self, since=0.0):
        with self.lock:
            readings = [value for at, name, value in self.events if name == "reading" and at >= since]
        broken = next((reading for reading in readings if "unparsed" in reading), None)
        if broken:
            raise CheckFailed(f"/events carried a reading that is not JSON: {broken['unparsed']!r}")
        return readings

    def peaks(self):
        with self.lock:
            return [value for at, name, value in self.events if name == "peak"]

    def summary(self):
        with self.lock:
            tail = self.events[-5:]
            count = len(self.events)
        return f"{count} events on /events, the last: {[(name, value) for _, name, value in tail]}"


# What the page shows of one device's card (the first, or the one whose data-device is the
# script's argument), read in one script so that the values belong together.
SNAPSHOT = """
const $ = (id) => document.getElementById(id);
const cards = [...document.querySelectorAll("#scales .scale")];
const card = arguments.length && arguments[0] !== null ? cards.find((c) => c.dataset.device === arguments[0]) : cards[0];
if (!card) return { cards: cards.length, grams: null, connectionState: $("connection").getAttribute("data-state") };
const part = (name) => card.querySelector("." + name);
const dial = part("dial");
return {
  cards: cards.length,
  devices: cards.map((c) => c.dataset.device),
  title: part("title").textContent,
  node: part("node").hidden ? null : part("node").textContent,
  weight: part("weight-value").textContent,
  grams: part("weight-value").getAttribute("data-grams"),
  unit: part("weight-unit").textContent,
  percent: part("percent").textContent,
  valuenow: dial.getAttribute("aria-valuenow"),
  valuetext: dial.getAttribute("aria-valuetext"),
  label: dial.getAttribute("aria-label"),
  role: dial.getAttribute("role"),
  stable: part("stable").getAttribute("data-state"),
  stableText: part("stable-text").textContent,
  // The shape beside the words: the one icon shown (never colour alone).
  stableShape: [...card.querySelectorAll(".stable .icon")].filter((icon) => getComputedStyle(icon).display !== "none")
    .map((icon) => icon.getAttribute("class").replace("icon ", "")).join(","),
  live: $("announce").getAttribute("aria-live"),
  discTransition: getComputedStyle(part("disc")).transitionDuration,
  peakShown: !part("peak").hidden && part("peak").offsetParent !== null,
  peak: part("peak").textContent,
  connection: $("connection-text").textContent,
  connectionState: $("connection").getAttribute("data-state"),
  reconnectingShown: !$("reconnecting").hidden && $("reconnecting").offsetParent !== null,
  reconnecting: $("reconnecting").textContent,
  device: part("device").textContent,
  model: part("model").textContent,
  sparkline: part("line").getAttribute("points").split(" ").filter(Boolean).length,
  // The plot's axes: the unit labels and the ticks' numbers, in the order drawn.
  yUnit: part("y-unit").textContent,
  xUnit: part("x-unit").textContent,
  yTicks: [...card.querySelectorAll(".y-tick")].map((t) => t.textContent),
  xTicks: [...card.querySelectorAll(".x-tick")].map((t) => t.textContent),
  announcements: window.__announcements || [],
  overflow: document.documentElement.scrollWidth - window.innerWidth,
};
"""

# Records every text the live region is given, from now on.
WATCH_ANNOUNCEMENTS = """
window.__announcements = [];
const region = document.getElementById("announce");
new MutationObserver(() => window.__announcements.push(region.textContent))
  .observe(region, { childList: true, characterData: true, subtree: true });
"""


class Dashboard:
    def __init__(self, arguments):
        self.arguments = arguments
        self.work = tempfile.mkdtemp(prefix="forcescale-web-browser-")
        self.socket = os.path.join(self.work, "sock")
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/"
        self.key_dir = os.path.join(self.work, "keys")
        os.makedirs(self.key_dir, exist_ok=True)
        self.daemon = None
        self.web = None
        self.browser = None
        self.watcher = None
        self.web_arguments = []
        os.makedirs(arguments.artifacts, exist_ok=True)

    # Programs

    def start_daemon(self):
        arguments = [os.path.join(self.arguments.bin_dir, "forcescaled"), "--replay", self.arguments.recording, "--loop",
                     "--socket", self.socket, "--state-dir", os.path.join(self.work, "state")]
        if self.daemon is None:
            self.daemon = Child("forcescaled", arguments, self.work)
        else:
            self.daemon.start()
        wait_until(f"forcescaled to answer on {self.socket}",
                   lambda: self.daemon_failed() or daemon_answers(self.socket), seen=self.daemon.text)

    def daemon_failed(self):
        if not self.daemon.running():
            raise CheckFailed(f"forcescaled exited with {self.daemon.process.returncode}: {self.daemon.text()}")
        return False

    def start_web(self):
        arguments = [os.path.join(self.arguments.bin_dir, "forcescale-web"), "--socket", self.socket,
                     "--listen", f"127.0.0.1:{self.port}", "--key-dir", self.key_dir] + self.web_arguments
        if self.web is None:
            self.web = Child("forcescale-web", arguments, self.work)
        else:
            self.web.start()

        def answers():
            if not self.web.running():
                raise CheckFailed(f"forcescale-web exited with {self.web.process.returncode}: {self.web.text()}")
            return web_serves(self.port, self.key_dir)

        wait_until(f"forcescale-web to serve {self.url}", answers, seen=self.web.text)

    def start_browser(self):
        options = webdriver.ChromeOptions()
        options.binary_location = "/usr/bin/chromium"
        # Root needs --no-sandbox; /dev/shm may be small in a container.
        for argument in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                         "--window-size=1024,900", f"--user-data-dir={os.path.join(self.work, 'chromium')}",
                         "--no-first-run", "--no-default-browser-check"]:
            options.add_argument(argument)
        self.browser = webdriver.Chrome(service=Service(CHROMEDRIVER, log_path=os.path.join(self.work, "chromedriver.log")),
                                        options=options)
        self.browser.set_page_load_timeout(DEADLINE)
        if getattr(self.arguments, "screenshots", None):
            # The documentation's pictures show times in UTC, whatever the machine's zone.
            self.browser.execute_cdp_cmd("Emulation.setTimezoneOverride", {"timezoneId": "UTC"})

    def close(self):
        if self.watcher:
            self.watcher.stopping = True
        if self.browser:
            try:
                self.browser.quit()
            except WebDriverException:
                pass
        for child in (self.web, self.daemon):
            if child:
                try:
                    child.stop()
                except CheckFailed as failure:
                    log(str(failure))
        # What failed was printed before; nothing of the run stays behind.
        shutil.rmtree(self.work, ignore_errors=True)

    # The page

    def snapshot(self, device=None):
        return self.browser.execute_script(SNAPSHOT, device)

    def page_until(self, what, condition, device=None):
        """Waits until `condition(snapshot)` holds on the page (the card of `device`, or the
        first), by WebDriverWait."""
        last = {}

        def check(_):
            last["page"] = self.snapshot(device)
            return condition(last["page"])

        try:
            WebDriverWait(self.browser, DEADLINE, poll_frequency=0.1).until(check)
            return last["page"]
        except TimeoutException:
            raise CheckFailed(f"waited {DEADLINE} s for the page to show {what}; it showed {last.get('page')}; "
                              f"{self.watcher.summary()}") from None

    def screenshot(self, name):
        path = os.path.join(self.arguments.artifacts, name)
        self.browser.save_screenshot(path)
        log(f"screenshot: {path}")

    def docs_screenshot(self, name, width, height, element_id=None, ready=None):
        """With --screenshots DIR, a picture for the documentation, made the same way every
        run: the page laid out at `width` x `height` CSS pixels (a phone's metrics below 600),
        one device pixel per CSS pixel, reduced motion (no disc caught mid-animation), times
        in UTC (start_browser);
        the viewport, or with `element_id` the page's width beside that element, whole
        (beyond the viewport if need be). `ready(snapshot)`, when given, must hold both before and after the capture, or
        it is taken again: the live view moves on while it is taken."""
        directory = getattr(self.arguments, "screenshots", None)
        if not directory:
            return
        os.makedirs(directory, exist_ok=True)
        browser = self.browser
        browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                                {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600})
        browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-reduced-motion", "value": "reduce"}]})
        try:
            for attempt in range(20):
                if ready:
                    self.page_until(f"the state to show in {name}", ready)
                # Two animation frames: the new metrics laid out and painted.
                browser.execute_async_script("requestAnimationFrame(() => requestAnimationFrame(arguments[0]))")
                parameters = {"format": "png", "captureBeyondViewport": element_id is not None}
                if element_id:
                    # The page's whole width, from 16 px above the element to 16 px below it.
                    rect = browser.execute_script(
                        "const r = document.getElementById(arguments[0]).getBoundingClientRect();"
                        "const top = Math.max(0, r.top + window.scrollY - 16);"
                        "return {x: 0, y: top, width: window.innerWidth, height: r.bottom + window.scrollY + 16 - top};", element_id)
                    parameters["clip"] = dict(rect, scale=1)
                data = base64.b64decode(browser.execute_cdp_cmd("Page.captureScreenshot", parameters)["data"])
                if not ready or ready(self.snapshot()):
                    break
            else:
                raise CheckFailed(f"{name}: the page did not hold still for a picture in 20 attempts")
            path = os.path.join(directory, name)
            with open(path, "wb") as file:
                file.write(data)
            log(f"documentation screenshot: {path} ({width} px wide)")
        finally:
            browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
            browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": []})

    # The checks

    def open_page(self):
        """Starts forcescaled, forcescale-web, the stream watcher and the browser on the page."""
        self.start_daemon()
        self.start_web()
        self.watcher = StreamWatcher(self.port)
        self.watcher.start()
        self.start_browser()
        self.browser.get(keyed_url(self.port))
        if self.browser.current_url != self.url:
            raise CheckFailed(f"the key was not taken out of the address bar: {self.browser.current_url}")

    def run(self):
        self.open_page()
        self.browser.execute_script(WATCH_ANNOUNCEMENTS)
        started = time.monotonic()

        page = self.page_until("a live connection and a reading",
                               lambda page: page["connectionState"] == "live" and page["grams"] is not None)
        if page["role"] != "meter":
            raise CheckFailed(f"the dial has role {page['role']}, not meter")
        log(f"live: {page['weight']} {page['unit']}, {page['percent']}")

        self.check_stable_weight()
        self.check_accessibility("the live view with a stable weight")
        self.check_saturation_and_peak()
        self.check_samples()
        self.check_units()
        self.check_announcements(started)
        self.check_phone_width()
        self.check_reduced_motion()
        self.check_daemon_restart()
        self.check_server_restart()

    def check_accessibility(self, what):
        """axe-core 4.x finds no serious or critical violation on the page as it is now."""
        from accessibility import axe_findings
        failure, summary = axe_findings(self.browser)
        if failure:
            raise CheckFailed(f"on {what}: {failure}")
        log(f"{what}: {summary}")

    def stable_reading(self):
        # A held press, not the moment a saturated press happens to settle.
        stable = [reading for reading in self.watcher.readings()
                  if reading.get("stable") and reading.get("contacts", 0) > 0 and not reading.get("saturated")]
        return stable[-1] if stable else None

    def check_stable_weight(self):
        """The weight of a stable press, exactly as the stream carries it, with its force."""
        reading = wait_until("a stable reading on /events", self.stable_reading, seen=self.watcher.summary)
        weight, (percent, valuenow) = grams_text(shown(reading)), percent_text(reading)
        # The shape is read in the same snapshot as the weight: a later one may already show
        # the press rising (settling) on a busy machine.
        page = self.page_until(f"the stable weight {weight} g at {percent}",
                               lambda page: page["weight"] == weight and page["unit"] == "g" and page["stable"] == "stable"
                               and page["stableText"] == "stable" and page["valuenow"] == valuenow and page["percent"] == percent)
        if page["stableShape"] != "icon-stable" or page["live"] != "polite":
            raise CheckFailed(f"a stable weight shows the shape {page['stableShape']!r}, live region {page['live']!r}")
        if not page["device"] or page["device"] == "–" or page["model"] != reading["model"]:
            raise CheckFailed(f"device and model not shown: {page['device']!r}, {page['model']!r} (the stream says {reading})")
        if page["device"] != reading["device"] or page["cards"] != 1:
            raise CheckFailed(f"one card for {reading['device']!r} expected; the page has {page['cards']}, showing {page['device']!r}")
        # Titled with the name the device gives itself, its name in the protocol beneath.
        name = recorded_name(self.arguments.recording)
        page = self.page_until(f"the card titled {name!r} over {reading['device']!r}",
                               lambda page: page["title"] == name and page["node"] == reading["device"])
        # The page may have opened a moment ago: wait for the line to grow, not for a time.
        page = self.page_until("a plot of at least 10 points", lambda page: page["sparkline"] >= 10)
        check_axes(page)
        log(f"stable: the page shows {weight} g, aria-valuenow {valuenow}, as /events carried {reading}")
        self.screenshot("dashboard-desktop.png")

        def held(page):
            return page["weight"] == weight and page["stable"] == "stable" and page["connectionState"] == "live" and page["sparkline"] >= 10
        self.docs_screenshot("live-desktop.png", 1280, 800, ready=held)
        self.docs_screenshot("live-phone.png", 390, 844, ready=held)

    def check_saturation_and_peak(self):
        saturated = wait_until("a saturated reading on /events",
                               lambda: next((r for r in self.watcher.readings() if r.get("saturated")), None),
                               seen=self.watcher.summary)
        weight = grams_text(shown(saturated))
        # A lower bound, said so in the weight, the state's words (with its own shape) and
        # the dial's text: never a bare weight.
        bound = f"at least {weight} g (saturated)"
        self.page_until(f"100%+ with ≥{weight} g, '{bound}' and aria-valuenow 100",
                        lambda page: page["percent"] == "100%+" and page["valuenow"] == "100" and page["weight"] == "≥" + weight
                        and page["stable"] == "saturated" and page["stableShape"] == "icon-saturated"
                        and page["stableText"].startswith(bound) and page["valuetext"].startswith(bound))
        self.screenshot("dashboard-saturated.png")
        peak = wait_until("a PEAK on /events", lambda: (self.watcher.peaks() or [None])[-1], seen=self.watcher.summary)
        text = f"PEAK{grams_text(peak['grams'])} g"
        self.page_until(f"the PEAK mark '{text}'", lambda page: page["peakShown"] and page["peak"].strip() == text)
        log(f"saturated: 100%+ at {weight} g; {text} as /events carried {peak}")

    def check_samples(self):
        """Whatever the page shows at any moment is a reading the stream carried, written by
        the gauge's rules: 25 samples over more than one pass of the recording."""
        matched = set()
        for _ in range(25):
            page = self.snapshot()
            grams = float(page["grams"])

            def carried():
                return next((r for r in reversed(self.watcher.readings())
                             if shown(r) == grams and percent_text(r) == (page["percent"], page["valuenow"])), None)

            reading = wait_until(f"/events to carry a reading of {grams} g at {page['percent']} (the page shows {page})",
                                 carried, seen=self.watcher.summary)
            if page["weight"] != ("≥" if reading.get("saturated") else "") + grams_text(shown(reading)):
                raise CheckFailed(f"the page writes {shown(reading)} g as {page['weight']}")
            matched.add(page["weight"])
            # The next sample after the page has moved on.
            self.page_until("the next reading", lambda now: now["grams"] != page["grams"] or now["percent"] != page["percent"])
        if len(matched) < 3:
            raise CheckFailed(f"25 samples of a moving recording showed only {sorted(matched)}")
        log(f"samples: {len(matched)} different weights, each as /events carried it")

    def check_units(self):
        """The unit menu offers the served units, in their order; in each, the held weight
        reads as `forcescale watch --unit U` writes the same held weight (the CLI's own
        rounding), with the served decimals, and is grams / grams_per_unit to within half a
        last decimal."""
        units = served_units(self.port)
        offered = self.browser.execute_script('return [...document.querySelectorAll("#unit option")].map((o) => [o.value, o.textContent])')
        if offered != [[unit["symbol"], f"{unit['symbol']} ({unit['name']})"] for unit in units]:
            raise CheckFailed(f"the unit menu offers {offered}; the page's units are {units}")
        reading = self.stable_reading()
        percent = percent_text(reading)[0]
        # Every unit's watch at once: each shows the held press within one pass of the loop.
        watches = {unit["symbol"]: Child(f"watch-{unit['symbol']}", [
            os.path.join(self.arguments.bin_dir, "forcescale"), "watch", "--socket", self.socket, "--unit", unit["symbol"]], self.work)
            for unit in units}
        try:
            select = Select(self.browser.find_element("id", "unit"))
            for unit in units:
                name, watch = unit["symbol"], watches[unit["symbol"]]
                weight = wait_until(f"forcescale watch --unit {name} to show the held press ({percent}, stable)",
                                    lambda: held_weight(watch.text(), percent, name), seen=watch.text)
                value, decimals = float(weight), len(weight.partition(".")[2])
                if decimals != unit["decimals"] or abs(value - shown(reading) / unit["grams_per_unit"]) > 0.5 * 10 ** -decimals * (1 + 1e-9):
                    raise CheckFailed(f"forcescale watch writes {shown(reading)} g as {weight} {name}; the page's units say "
                                      f"{unit['grams_per_unit']} g per {name}, {unit['decimals']} decimals")
                select.select_by_value(name)
                self.page_until(f"{shown(reading)} g as {weight} {name}, as forcescale watch writes it",
                                lambda page: page["unit"] == name and page["weight"] == weight and page["stable"] == "stable")
                log(f"unit {name}: {shown(reading)} g shows as {weight} {name}, as forcescale watch --unit {name} writes it")
        finally:
            for watch in watches.values():
                watch.stop()
        select.select_by_value("g")
        self.page_until("grams again", lambda page: page["unit"] == "g")

    def check_announcements(self, started):
        page = self.snapshot()
        settled = [r for r in self.watcher.readings() if r.get("stable") and r.get("contacts", 0) > 0]
        stable = {grams_text(shown(r)) for r in settled if not r.get("saturated")}
        # A saturated weight is announced as the lower bound it is.
        bounds = {f"Stable: at least {grams_text(shown(r))} g (saturated)" for r in settled if r.get("saturated")}
        if not page["announcements"]:
            raise CheckFailed(f"the live region announced nothing in {time.monotonic() - started:.0f} s of stable presses")
        for text in page["announcements"]:
            # In another unit than g the number is a conversion: only the form is checked.
            if text in bounds or (text.startswith("Stable: at least ") and text.endswith(" (saturated)") and not text.endswith(" g (saturated)")):
                continue
            parts = text.split(" ")
            if len(parts) != 3 or parts[0] != "Stable:" or (parts[2] == "g" and parts[1] not in stable):
                raise CheckFailed(f"the live region said {text!r}; stable weights on /events: {sorted(stable)}, lower bounds {sorted(bounds)}")
        log(f"announced: {page['announcements'][:4]}")

    def check_phone_width(self):
        self.browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                                     {"width": 390, "height": 844, "deviceScaleFactor": 1, "mobile": True})
        page = self.page_until("a stable weight at phone width", lambda page: page["stable"] == "stable")
        if page["overflow"] > 0:
            raise CheckFailed(f"at 390 px the page is {page['overflow']} px wider than the screen")
        self.screenshot("dashboard-phone.png")
        self.browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})

    def check_reduced_motion(self):
        """The disc animates its growth, except for a reader who asks for reduced motion."""
        before = self.snapshot()["discTransition"]
        self.browser.execute_cdp_cmd("Emulation.setEmulatedMedia",
                                     {"features": [{"name": "prefers-reduced-motion", "value": "reduce"}]})
        reduced = self.snapshot()["discTransition"]
        self.browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": []})
        if before in ("", "0s") or reduced.split(",") != ["0s"] * len(reduced.split(",")):
            raise CheckFailed(f"the disc's transition is {before!r}, and {reduced!r} with reduced motion asked for")
        log(f"motion: the disc's transition is {before}, {reduced} with prefers-reduced-motion")

    def fresh_reading_shown(self):
        """Marks what the page shows now as old; true once a newer reading replaces it."""
        self.browser.execute_script('document.querySelector("#scales .scale .weight-value").removeAttribute("data-grams")')

    def check_daemon_restart(self):
        self.daemon.stop()
        page = self.page_until("that it is reconnecting, with the daemon stopped",
                               lambda page: page["connectionState"] == "reconnecting" and page["reconnectingShown"]
                               and "forcescaled" in page["reconnecting"] and page["stableText"] == "no live reading")
        log(f"daemon stopped: {page['connection']} / {page['reconnecting']}")
        self.screenshot("dashboard-reconnecting.png")
        self.fresh_reading_shown()
        restarted = time.monotonic()
        self.start_daemon()
        reading = wait_until("a reading on /events after the daemon's restart", lambda: (self.watcher.readings(restarted) or [None])[-1],
                             seen=self.watcher.summary)
        self.page_until("readings again after the daemon's restart",
                        lambda page: page["connectionState"] == "live" and not page["reconnectingShown"] and page["grams"] is not None)
        log(f"daemon restarted: live again (the stream carries {reading['grams']} g)")

    def check_server_restart(self):
        old_key = KEYS[self.port]
        self.web.stop()
        page = self.page_until("that it is reconnecting, with forcescale-web stopped",
                               lambda page: page["connectionState"] == "reconnecting" and page["reconnectingShown"]
                               and "connection" in page["reconnecting"])
        log(f"forcescale-web stopped: {page['reconnecting']}")
        self.fresh_reading_shown()
        self.start_web()
        # A restarted forcescale-web has new keys: the old one (the page's cookie) gets 401
        # and no data, and the page is opened again with the new key, as forcescale-web-open
        # does.
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        connection.request("GET", "/api/status", headers={"Authorization": f"Bearer {old_key}"})
        refused = connection.getresponse()
        body = refused.read()
        connection.close()
        if refused.status != 401 or b'"up"' in body:
            raise CheckFailed(f"the key of forcescale-web's previous run got {refused.status}: {body!r}")
        self.browser.get(keyed_url(self.port))
        self.page_until("readings again after forcescale-web's restart",
                        lambda page: page["connectionState"] == "live" and not page["reconnectingShown"] and page["grams"] is not None)
        log("forcescale-web restarted: live again")


def run_checks(page, failure_screenshot):
    """Runs a page's checks; on a failure says why, with a screenshot and the programs' output.
    Returns the exit status (0 when every check passed)."""
    status = 0
    try:
        page.run()
        log("all browser checks passed")
    except Exception as failure:  # noqa: BLE001 - any failure is reported with the programs' output
        status = 1
        if not isinstance(failure, (CheckFailed, WebDriverException)):
            traceback.print_exc()
        print(f"FAILED: {failure}", flush=True)
        if page.browser:
            try:
                page.screenshot(failure_screenshot)
            except WebDriverException:
                pass
        for child in (page.daemon, page.web):
            if child:
                print(f"--- {child.name}'s output:\n{child.text()}", flush=True)
    finally:
        page.close()
    return status


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bin-dir", required=True, help="the directory of the built forcescaled and forcescale-web")
    parser.add_argument("--recording", required=True, help="the evemu recording forcescaled serves in a loop")
    parser.add_argument("--artifacts", required=True, help="where the screenshots go")
    parser.add_argument("--screenshots", help="also make the documentation's screenshots (live-*.png) in this directory")
    return run_checks(Dashboard(parser.parse_args()), "dashboard-failure.png")


if __name__ == "__main__":
    sys.exit(main())
