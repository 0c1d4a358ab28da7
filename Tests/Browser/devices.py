#!/usr/bin/python3
"""forcescale-web's page with two devices at once, in a real browser (issue 28).

forcescaled serves two recordings (`--replay` twice: each a device named after its file),
and forcescale-web (with --allow-control) serves the page to Debian's chromium, driven as
dashboard.py drives it. Checked against a second /events client:

- one card per device, in the order of their names, each titled with the device's own name
  (the recording's `N:` line) over its name in the protocol (the file's), its dial labelled
  with both;
- each card shows a stable weight its own device's readings carried (the two recordings
  press differently, so a card showing the other device's weight fails);
- each card's plot has its axes in grams and seconds and a line;
- the tare button of one card tares that device only: its readings go to zero, the other's
  stay where they were;
- /metrics has each device's series and info, and passes `promtool check metrics`.

Run by Tests/ForcescaleCLITests/WebPageTests.swift, which writes the recordings; on its own:

  Tests/Browser/devices.py --bin-dir .build/debug --recording A --recording B --artifacts DIR

Exit status 0 when every check passed, 1 with what was expected and what was seen.
"""

import argparse
import http.client
import os
import subprocess
import sys
import time

from dashboard import CheckFailed, Child, Dashboard, authorization, check_axes, daemon_answers, grams_text, log, recorded_name, run_checks, shown, wait_until


class Devices(Dashboard):
    def start_daemon(self):
        arguments = [os.path.join(self.arguments.bin_dir, "forcescaled"), "--loop",
                     "--socket", self.socket, "--state-dir", os.path.join(self.work, "state")]
        for recording in self.arguments.recording:
            arguments += ["--replay", recording]
        self.daemon = Child("forcescaled", arguments, self.work)
        wait_until(f"forcescaled to answer on {self.socket}",
                   lambda: self.daemon_failed() or daemon_answers(self.socket), seen=self.daemon.text)

    def stable_reading_of(self, device, since=0.0):
        stable = [reading for reading in self.watcher.readings(since)
                  if reading.get("device") == device and reading.get("stable") and reading.get("contacts", 0) > 0
                  and not reading.get("saturated")]
        return stable[-1] if stable else None

    def run(self):
        names = sorted(os.path.basename(path) for path in self.arguments.recording)
        names_of = {os.path.basename(path): recorded_name(path) for path in self.arguments.recording}
        if len(set(names_of.values())) != len(names):
            raise CheckFailed(f"the recordings should name their devices differently: {names_of}")
        self.web_arguments = ["--allow-control"]
        self.open_page()

        page = self.page_until(f"a card for each of {names}",
                               lambda page: page["connectionState"] == "live" and page.get("devices") == names)
        log(f"cards: {page['devices']}")
        weights = {}
        for device in names:
            reading = wait_until(f"a stable reading of {device} on /events", lambda: self.stable_reading_of(device),
                                 seen=self.watcher.summary)
            weight = grams_text(shown(reading))
            page = self.page_until(f"{device}'s card showing its stable weight {weight} g",
                                   lambda page: page["weight"] == weight and page["stable"] == "stable" and page["sparkline"] >= 10,
                                   device=device)
            # Titled with the name the device gives itself, the protocol's name beneath.
            name = names_of[device]
            page = self.page_until(f"{device}'s card titled {name!r}", lambda page: page["title"] == name, device=device)
            if page["node"] != device or page["device"] != device or name not in page["label"] or device not in page["label"]:
                raise CheckFailed(f"{device}'s card is titled {page['title']!r} over {page['node']!r}, shows {page['device']!r}, "
                                  f"its dial {page['label']!r}")
            check_axes(page)
            weights[device] = weight
            log(f"{device}: {weight} g as /events carried it; plot axes {page['yUnit']} {page['yTicks']}, {page['xUnit']} {page['xTicks']}")
        if len(set(weights.values())) != len(names):
            raise CheckFailed(f"the recordings should press differently: {weights}")
        self.screenshot("devices-desktop.png")
        self.check_metrics(names)
        self.check_tare(names)

    def check_metrics(self, names):
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        connection.request("GET", "/metrics", headers=authorization(self.port))
        text = connection.getresponse().read().decode()
        connection.close()
        for device in names:
            for series in (f'forcescale_readings_total{{device="{device}"}}', f'forcescale_weight_grams{{device="{device}"}}',
                           f'forcescale_device_info{{device="{device}",'):
                if series not in text:
                    raise CheckFailed(f"/metrics has no {series}:\n{text}")
        checked = subprocess.run(["/usr/bin/promtool", "check", "metrics"], input=text, capture_output=True, text=True, timeout=60)
        if checked.returncode != 0:
            raise CheckFailed(f"promtool check metrics: {checked.stdout}{checked.stderr}\n{text}")
        log(f"/metrics: each device's series and info; promtool check metrics passed")

    def check_tare(self, names):
        """The first card's tare zeroes its device only."""
        device, other = names[0], names[1]
        before = self.stable_reading_of(other)
        card = self.browser.find_element("css selector", f'#scales .scale[data-device="{device}"]')
        button = card.find_element("css selector", ".tare")
        self.page_until("the tare buttons offered", lambda page: button.is_displayed(), device=device)
        # Clicked while the device's held pressure is stable now, so the tare takes that.
        now = time.monotonic()
        wait_until(f"a stable reading on {device} before its tare", lambda: self.stable_reading_of(device, since=now),
                   seen=self.watcher.summary)
        pressed = time.monotonic()
        button.click()
        self.page_until(f"'tared' on {device}'s card",
                        lambda page: card.find_element("css selector", ".tare-result").text == "tared", device=device)
        # Once the same press is stable again (the recording's held pressure), it weighs
        # about nothing on the tared device; the other device's stable weight is unchanged.
        tared = wait_until(f"a stable reading of about 0 g on {device} after its tare",
                           lambda: next((r for r in self.watcher.readings(pressed) if r.get("device") == device and r.get("stable")
                                         and r.get("contacts", 0) > 0 and abs(shown(r)) < 1), None), seen=self.watcher.summary)
        untouched = wait_until(f"a stable reading on {other} after the tare of {device}",
                               lambda: self.stable_reading_of(other, since=pressed),
                               seen=self.watcher.summary)
        if shown(untouched) != shown(before):
            raise CheckFailed(f"taring {device} changed {other}: {shown(before)} g before, {shown(untouched)} g after")
        weight = grams_text(shown(tared))
        self.page_until(f"{device}'s card showing about 0 g", lambda page: abs(float(page["grams"] or 99)) < 1, device=device)
        log(f"tare of {device}: it reads {weight} g; {other} still reads {shown(untouched)} g")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bin-dir", required=True, help="the directory of the built forcescaled and forcescale-web")
    parser.add_argument("--recording", required=True, action="append", help="an evemu recording forcescaled serves in a loop (give two)")
    parser.add_argument("--artifacts", required=True, help="where the screenshots go")
    return run_checks(Devices(parser.parse_args()), "devices-failure.png")


if __name__ == "__main__":
    sys.exit(main())
