#!/usr/bin/env python3
"""bench/footprint's measuring part: the three services of each layout running together.

A layout is a directory holding forcescale, forcescaled, forcescale-web and forcescale-mqtt
(programs of their own, or links to one multi-call program). For each layout in turn, every
round: forcescaled replays the built-in demo in a loop (forcescale demo --write), one
client WATCHes it, forcescale-web serves one /events stream, and forcescale-mqtt publishes
to a real mosquitto broker. When each service has shown it works (a READING on the watch,
an SSE event, an MQTT message), and SETTLE seconds more, each service's Rss and Pss
(/proc/PID/smaps_rollup) and VmHWM are read. Then `forcescale status` runs STARTS times per
layout, the layouts interleaved, against the first layout's daemon: its wall time from
spawn to exit, the median and the fastest quarter's mean.

    footprint.py WORK ROUNDS SETTLE STARTS NAME=DIR [NAME=DIR...]
"""
import json
import os
import socket
import statistics
import subprocess
import sys
import threading
import time

WORK, ROUNDS, SETTLE, STARTS = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
LAYOUTS = [argument.split("=", 1) for argument in sys.argv[5:]]
SERVICES = ("forcescaled", "forcescale-web", "forcescale-mqtt")


class Failure(Exception):
    pass


def wait_for(what, condition, limit=60.0):
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.02)
    raise Failure(f"{what} did not happen within {limit:.0f} s")


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def memory(pid):
    figures = {}
    with open(f"/proc/{pid}/smaps_rollup") as rollup:
        for line in rollup:
            key, _, value = line.partition(":")
            if key in ("Rss", "Pss"):
                figures[key.lower()] = int(value.split()[0])
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                figures["hwm"] = int(line.split()[1])
    return figures


class Services:
    """The three services of one layout, a broker and the clients that prove each works."""

    def __init__(self, name, directory, round_number, daemon_only=False):
        self.processes = []
        self.work = f"{WORK}/{name}-{round_number}"
        self.work += "-alone" if daemon_only else ""
        os.makedirs(self.work)
        self.socket = f"{self.work}/sock"
        demo = f"{WORK}/demo.events"
        if not os.path.exists(demo):
            subprocess.run([f"{directory}/forcescale", "demo", "--write", demo], check=True, stdout=subprocess.DEVNULL)
        open(f"{self.work}/empty.conf", "w").close()
        self.daemon = self.start("forcescaled", [f"{directory}/forcescaled", "--config", f"{self.work}/empty.conf",
                                                 "--replay", demo, "--loop", "--socket", self.socket,
                                                 "--state-dir", f"{self.work}/state", "--no-rumble"])
        def connected():
            # The path is there from bind(2); the daemon accepts from its listen(2) on.
            watcher = socket.socket(socket.AF_UNIX)
            try:
                watcher.connect(self.socket)
                return watcher
            except OSError:
                watcher.close()
                return None
        self.watcher = wait_for("forcescaled to accept", connected)
        self.watcher.sendall(b'{"class":"WATCH","enable":true}\n')
        self.watched = self.drain(self.watcher, b'"class":"READING"')
        if daemon_only:
            wait_for("a READING on the watch", lambda: self.watched[0])
            return

        # A build that makes access keys writes them into WORK, and the stream sends the read
        # key; an older layout's forcescale-web has none (docs/web.md, "Access").
        keyed = "--key-dir" in subprocess.run([f"{directory}/forcescale-web", "--help"], capture_output=True, text=True).stdout
        key_dir = os.path.join(WORK, "web-keys")
        os.makedirs(key_dir, exist_ok=True)
        self.web = subprocess.Popen([f"{directory}/forcescale-web", "--socket", self.socket, "--listen", "127.0.0.1:0"]
                                    + (["--key-dir", key_dir] if keyed else []),
                                    stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        self.processes.append(self.web)
        port = [None]

        def read_web_log():
            for line in self.web.stderr:
                if port[0] is None and "listening on http://127.0.0.1:" in line:
                    port[0] = int(line.split("127.0.0.1:")[1].split("/")[0])
        threading.Thread(target=read_web_log, daemon=True).start()
        wait_for("forcescale-web to say where it listens", lambda: port[0])
        self.stream = socket.create_connection(("127.0.0.1", port[0]))
        authorization = ""
        if keyed:
            with open(os.path.join(key_dir, "read-key")) as key_file:
                authorization = f"Authorization: Bearer {key_file.read().strip()}\r\n"
        self.stream.sendall(f"GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\n{authorization}Accept: text/event-stream\r\n\r\n".encode())
        self.streamed = self.drain(self.stream, b"event: reading")

        broker_port = free_port()
        with open(f"{self.work}/mosquitto.conf", "w") as conf:
            conf.write(f"listener {broker_port} 127.0.0.1\nallow_anonymous true\npersistence false\n")
        self.start("mosquitto", ["/usr/sbin/mosquitto", "-c", f"{self.work}/mosquitto.conf"])

        def broker_up():
            try:
                socket.create_connection(("127.0.0.1", broker_port), timeout=1).close()
                return True
            except OSError:
                return False
        wait_for("mosquitto to listen", broker_up)
        subscriber = self.start("mosquitto_sub", ["/usr/bin/mosquitto_sub", "-h", "127.0.0.1", "-p", str(broker_port),
                                                  "-t", "forcescale/#", "-C", "1"], stdout=subprocess.PIPE)
        self.mqtt = self.start("forcescale-mqtt", [f"{directory}/forcescale-mqtt", "--config", f"{self.work}/empty.conf",
                                                   "--socket", self.socket, "--broker", f"127.0.0.1:{broker_port}"])
        wait_for("a READING on the watch", lambda: self.watched[0])
        wait_for("an SSE reading from forcescale-web", lambda: self.streamed[0])
        wait_for("an MQTT message from forcescale-mqtt", lambda: subscriber.poll() is not None and subscriber.returncode == 0)

    def start(self, name, arguments, stdout=subprocess.DEVNULL):
        process = subprocess.Popen(arguments, stdout=stdout, stderr=open(f"{self.work}/{name}.stderr", "w"))
        self.processes.append(process)
        return process

    @staticmethod
    def drain(connection, marker):
        seen = [False]

        def read():
            while True:
                data = connection.recv(1 << 16)
                if not data:
                    return
                if marker in data:
                    seen[0] = True
        threading.Thread(target=read, daemon=True).start()
        return seen

    def measure(self):
        for name, process in zip(SERVICES, (self.daemon, self.web, self.mqtt)):
            if process.poll() is not None:
                raise Failure(f"{name} exited with status {process.returncode}; see {self.work}")
        return {name: memory(process.pid) for name, process in zip(SERVICES, (self.daemon, self.web, self.mqtt))}

    def stop(self):
        for process in reversed(self.processes):
            if process.poll() is None:
                process.terminate()
        for process in reversed(self.processes):
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()


results = {name: [] for name, _ in LAYOUTS}
starts = {name: [] for name, _ in LAYOUTS}
try:
    for round_number in range(ROUNDS):
        for name, directory in LAYOUTS:
            services = Services(name, directory, round_number)
            try:
                time.sleep(SETTLE)
                results[name].append(services.measure())
                if round_number == 0 and name == LAYOUTS[0][0]:
                    for _ in range(STARTS):
                        for start_name, start_directory in LAYOUTS:
                            began = time.perf_counter()
                            subprocess.run([f"{start_directory}/forcescale", "status", "--socket", services.socket],
                                           check=True, stdout=subprocess.DEVNULL)
                            starts[start_name].append(time.perf_counter() - began)
            finally:
                services.stop()
    alone = {name: [] for name, _ in LAYOUTS}
    for round_number in range(ROUNDS):
        for name, directory in LAYOUTS:
            services = Services(name, directory, round_number, daemon_only=True)
            try:
                time.sleep(SETTLE)
                if services.daemon.poll() is not None:
                    raise Failure(f"forcescaled exited with status {services.daemon.returncode}; see {services.work}")
                alone[name].append(memory(services.daemon.pid))
            finally:
                services.stop()
except Failure as failure:
    sys.exit(f"bench/footprint: {failure}")

# The ratios are against the baseline: the first layout after this tree's, when there is one.
reference = LAYOUTS[1][0] if len(LAYOUTS) > 1 else LAYOUTS[0][0]
print(f"\nMemory, KiB: the median of {ROUNDS} rounds (the three services and a broker running together)")
print("| layout | forcescaled Rss / Pss / VmHWM | forcescale-web Rss / Pss | forcescale-mqtt Rss / Pss | Pss of the three | × " + reference + " |")
print("|---|---|---|---|---|---|")
sums = {name: statistics.median(sum(run[service]["pss"] for service in SERVICES) for run in results[name]) for name, _ in LAYOUTS}
for name, _ in LAYOUTS:
    figure = lambda service, key: statistics.median(run[service][key] for run in results[name])
    print(f"| {name} | {figure('forcescaled', 'rss'):,.0f} / {figure('forcescaled', 'pss'):,.0f} / {figure('forcescaled', 'hwm'):,.0f}"
          f" | {figure('forcescale-web', 'rss'):,.0f} / {figure('forcescale-web', 'pss'):,.0f}"
          f" | {figure('forcescale-mqtt', 'rss'):,.0f} / {figure('forcescale-mqtt', 'pss'):,.0f}"
          f" | {sums[name]:,.0f} | {sums[name] / sums[reference]:.2f}× |")
print(f"\n`forcescale status`, spawn to exit, ms ({STARTS} runs each, the layouts interleaved)")
print("| layout | median | fastest quarter | × " + reference + " (median) |")
print("|---|---|---|---|")
for name, _ in LAYOUTS:
    times = sorted(starts[name])
    quarter = times[:max(1, len(times) // 4)]
    print(f"| {name} | {statistics.median(times) * 1000:.2f} | {statistics.mean(quarter) * 1000:.2f} |"
          f" {statistics.median(times) / statistics.median(starts[reference]):.2f}× |")
print(f"\nThe daemon alone (the demo, one watcher), KiB: the median of {ROUNDS} rounds")
print("| layout | VmHWM | Rss | Pss | × " + reference + " (VmHWM) |")
print("|---|---|---|---|---|")
for name, _ in LAYOUTS:
    figure = lambda key: statistics.median(run[key] for run in alone[name])
    print(f"| {name} | {figure('hwm'):,.0f} | {figure('rss'):,.0f} | {figure('pss'):,.0f} |"
          f" {figure('hwm') / statistics.median(run['hwm'] for run in alone[reference]):.2f}× |")
