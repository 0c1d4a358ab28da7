#!/usr/bin/env python3
"""bench/soak's driver: `soak.py BIN DESC WORK SECONDS WARMUP`.

Runs, for SECONDS, on loopback and Unix sockets only:
- forcescaled serving 4 devices in a loop (--replay of 4 recordings made here from DESC's
  description: a pen pressing 2 s of every 2.5 s, a frame every millisecond), with the force
  log on (--log-db) and its retention (--log-keep-readings 200000);
- 20 watchers (WATCH, one epoll loop; each checks that every device's reading times rise);
- forcescale-web with 20 Server-Sent Events clients on /events and /metrics fetched every
  second;
- forcescale-mqtt publishing to a real mosquitto broker (--live-interval-ms 1000), with
  mosquitto_sub counting what arrives.
Every 10 s it samples each program's VmRSS, open fds, threads and CPU time (utime + stime),
the log's file and WAL sizes, and the readings delivered; after WARMUP seconds it fits a line
to each figure and says whether it grows. Prints the samples to WORK/samples.csv and a report
on stdout; the exit status is 1 when a goal is not met.
"""
import http.client, json, os, selectors, signal, socket, subprocess, sys, threading, time

BIN, DESC, WORK, SECONDS, WARMUP = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4]), float(sys.argv[5])
DEVICES, WATCHERS, STREAMS, KEEP_READINGS, SAMPLE_EVERY = 4, 20, 20, 200_000, 10.0
TICKS = os.sysconf("SC_CLK_TCK")
processes = []


def stop_all():
    for process in reversed(processes):
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
    for process in reversed(processes):
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()


def start(name, arguments, **options):
    process = subprocess.Popen(arguments, stdout=subprocess.DEVNULL, stderr=open(f"{WORK}/{name}.stderr", "w"), **options)
    processes.append(process)
    return process


def wait_for(what, condition, limit=60.0):
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.05)
    stop_all()
    raise SystemExit(f"soak: {what} did not happen within {limit:.0f} s")


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


# The recordings: DESC's description, then touches at 1 kHz.
header = []
with open(DESC) as description:
    for line in description:
        if line.startswith("E:"):
            break
        header.append(line)
touches = 24   # a minute of them; the daemon loops the file
for device in range(DEVICES):
    with open(f"{WORK}/device{device}.events", "w") as out:
        out.writelines(header)
        for touch in range(touches):
            start_us = 1_000_000 + touch * 2_500_000
            stamp = lambda us: f"{us // 1_000_000}.{us % 1_000_000:06d}"
            out.write(f"E: {stamp(start_us)} 0001 0140 0001\nE: {stamp(start_us)} 0001 014a 0001\n")
            for frame in range(2000):
                us = start_us + frame * 1000
                pressure = 100 + (frame * 37 + touch * 11 + device * 5) % 800
                out.write(f"E: {stamp(us)} 0003 0018 {pressure:04d}\nE: {stamp(us)} 0000 0000 0000\n")
            end = start_us + 2_000_000
            out.write(f"E: {stamp(end)} 0003 0018 0000\nE: {stamp(end)} 0001 014a 0000\nE: {stamp(end)} 0001 0140 0000\nE: {stamp(end)} 0000 0000 0000\n")

socket_path, log_path = f"{WORK}/sock", f"{WORK}/log.sqlite"
replays = sum(([ "--replay", f"{WORK}/device{device}.events"] for device in range(DEVICES)), [])
daemon = start("forcescaled", [f"{BIN}/forcescaled", *replays, "--loop", "--socket", socket_path, "--state-dir", f"{WORK}/state",
                               "--log-db", log_path, "--log-keep-readings", str(KEEP_READINGS), "--no-rumble"])
wait_for("forcescaled to listen", lambda: os.path.exists(socket_path))

web = subprocess.Popen([f"{BIN}/forcescale-web", "--socket", socket_path, "--listen", "127.0.0.1:0", "--key-dir", WORK],
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
processes.append(web)
web_port = None
deadline = time.monotonic() + 60
while web_port is None and time.monotonic() < deadline:
    line = web.stderr.readline()
    if "listening on http://127.0.0.1:" in line:
        web_port = int(line.split("127.0.0.1:")[1].split("/")[0])
if web_port is None:
    stop_all()
    raise SystemExit("soak: forcescale-web did not say where it listens within 60 s")
threading.Thread(target=lambda: [None for _ in web.stderr], daemon=True).start()   # keep its pipe drained
# Every request sends forcescale-web's read key (docs/web.md, "Access").
with open(f"{WORK}/read-key") as key_file:
    WEB_KEY = key_file.read().strip()

broker_port = free_port()
with open(f"{WORK}/mosquitto.conf", "w") as conf:
    conf.write(f"listener {broker_port} 127.0.0.1\nallow_anonymous true\npersistence false\n")
start("mosquitto", ["/usr/sbin/mosquitto", "-c", f"{WORK}/mosquitto.conf"])


def broker_up():
    try:
        socket.create_connection(("127.0.0.1", broker_port), timeout=1).close()
        return True
    except OSError:
        return False


wait_for("mosquitto to listen", broker_up)
mqtt_received = [0]
subscriber = subprocess.Popen(["/usr/bin/mosquitto_sub", "-h", "127.0.0.1", "-p", str(broker_port), "-t", "forcescale/#", "-v"],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
processes.append(subscriber)


def count_mqtt():
    for _ in subscriber.stdout:
        mqtt_received[0] += 1


threading.Thread(target=count_mqtt, daemon=True).start()
open(f"{WORK}/mqtt.conf", "w").close()
mqtt = start("forcescale-mqtt", [f"{BIN}/forcescale-mqtt", "--config", f"{WORK}/mqtt.conf", "--socket", socket_path,
                                 "--broker", f"127.0.0.1:{broker_port}", "--live-interval-ms", "1000"])

# The watchers and the SSE clients, read by one selector loop in a thread.
selector = selectors.DefaultSelector()
watched = [0] * WATCHERS
streamed = [0] * STREAMS
backwards = [0]
last_time = [dict() for _ in range(WATCHERS)]
lock = threading.Lock()
for index in range(WATCHERS):
    client = socket.socket(socket.AF_UNIX)
    client.connect(socket_path)
    client.sendall(b'{"class":"WATCH","enable":true}\n')
    client.setblocking(False)
    selector.register(client, selectors.EVENT_READ, ("watch", index, bytearray()))
for index in range(STREAMS):
    client = socket.create_connection(("127.0.0.1", web_port))
    client.sendall(f"GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {WEB_KEY}\r\nAccept: text/event-stream\r\n\r\n".encode())
    client.setblocking(False)
    selector.register(client, selectors.EVENT_READ, ("sse", index, bytearray()))
running = True
lost = []


def read_clients():
    while running:
        for key, _ in selector.select(timeout=0.5):
            kind, index, pending = key.data
            try:
                data = key.fileobj.recv(1 << 16)
            except BlockingIOError:
                continue
            if not data:
                lost.append(f"{kind} client {index} was disconnected after {time.monotonic() - began:.0f} s")
                selector.unregister(key.fileobj)
                continue
            pending += data
            if kind == "sse":
                with lock:
                    streamed[index] += data.count(b"event: reading")
                del pending[:max(0, len(pending) - 32)]
                continue
            end = pending.rfind(b"\n")
            if end < 0:
                continue
            lines = bytes(pending[:end]).split(b"\n")
            del pending[:end + 1]
            count = 0
            for line in lines:
                if b'"class":"READING"' not in line:
                    continue
                count += 1
                if index == 0 or index == WATCHERS - 1:   # two watchers check every reading's order
                    reading = json.loads(line)
                    device = reading.get("device")
                    previous = last_time[index].get(device)
                    if previous is not None and reading["time"] < previous:
                        backwards[0] += 1
                    last_time[index][device] = reading["time"]
            with lock:
                watched[index] += count


began = time.monotonic()
reader = threading.Thread(target=read_clients, daemon=True)
reader.start()

metrics_failures = [0]
metrics_fetched = [0]


def fetch_metrics():
    while running:
        began = time.monotonic()
        try:
            connection = http.client.HTTPConnection("127.0.0.1", web_port, timeout=10)
            connection.request("GET", "/metrics", headers={"Authorization": f"Bearer {WEB_KEY}"})
            response = connection.getresponse()
            body = response.read()
            connection.close()
            if response.status == 200 and b"forcescale" in body:
                metrics_fetched[0] += 1
            else:
                metrics_failures[0] += 1
        except OSError:
            metrics_failures[0] += 1
        time.sleep(max(0.0, 1.0 - (time.monotonic() - began)))


threading.Thread(target=fetch_metrics, daemon=True).start()


def proc(pid):
    status = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            status[key] = value.split()
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return {
        "rss_kib": int(status["VmRSS"][0]),
        "fds": len(os.listdir(f"/proc/{pid}/fd")),
        "threads": int(status["Threads"][0]),
        "cpu_s": (int(fields[11]) + int(fields[12])) / TICKS,
    }


def size(path):
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def status():
    with socket.socket(socket.AF_UNIX) as client:
        client.settimeout(10)
        client.connect(socket_path)
        stream = client.makefile("rb")
        stream.readline()
        client.sendall(b'{"class":"STATUS"}\n')
        return json.loads(stream.readline())


programs = {"forcescaled": daemon.pid, "forcescale-web": web.pid, "forcescale-mqtt": mqtt.pid}
samples = []
csv = open(f"{WORK}/samples.csv", "w")
csv.write("seconds," + ",".join(f"{name}_{figure}" for name in programs for figure in ("rss_kib", "fds", "threads", "cpu_s"))
          + ",log_kib,wal_kib,readings_watcher0,readings_sse0,mqtt_messages,log_written,log_dropped,daemon_dropped,load1\n")
while time.monotonic() - began < SECONDS:
    time.sleep(SAMPLE_EVERY)
    for name, process in [("forcescaled", daemon), ("forcescale-web", web), ("forcescale-mqtt", mqtt), ("mosquitto", processes[2])]:
        if process.poll() is not None:
            running = False
            stop_all()
            raise SystemExit(f"soak: {name} exited with status {process.returncode} after {time.monotonic() - began:.0f} s; see {WORK}/{name}.stderr")
    sample = {"seconds": time.monotonic() - began}
    for name, pid in programs.items():
        for figure, value in proc(pid).items():
            sample[f"{name}_{figure}"] = value
    sample["log_kib"] = size(log_path) / 1024
    sample["wal_kib"] = size(log_path + "-wal") / 1024
    with lock:
        sample["readings_watcher0"] = watched[0]
        sample["readings_sse0"] = streamed[0]
    sample["mqtt_messages"] = mqtt_received[0]
    daemon_status = status()
    log = daemon_status.get("log", {})
    sample["log_written"] = log.get("written", 0)
    sample["log_dropped"] = log.get("dropped", 0)
    sample["daemon_dropped"] = daemon_status.get("dropped", 0)
    with open("/proc/loadavg") as loadavg:
        sample["load1"] = float(loadavg.read().split()[0])
    samples.append(sample)
    csv.write(",".join(f"{value:.3f}" if isinstance(value, float) else str(value) for value in sample.values()) + "\n")
    csv.flush()

# What held during the run is taken before anything stops (a stop ends every connection).
final_status = status()
running = False
# A copy under another name: the reader thread may still append the disconnects the stop
# below makes, and they are not the run's.
lost_while_running = list(lost)
stop_all()
csv.close()


def fit(points):
    """Least-squares slope (per hour) and the residuals' standard deviation."""
    n = len(points)
    mean_x = sum(x for x, _ in points) / n
    mean_y = sum(y for _, y in points) / n
    sxx = sum((x - mean_x) ** 2 for x, _ in points)
    slope = sum((x - mean_x) * (y - mean_y) for x, y in points) / sxx if sxx > 0 else 0.0
    residual = (sum((y - mean_y - slope * (x - mean_x)) ** 2 for x, y in points) / max(1, n - 2)) ** 0.5
    return slope * 3600, residual


after = [sample for sample in samples if sample["seconds"] >= WARMUP]
if len(after) < 6:
    raise SystemExit(f"soak: only {len(after)} samples after the warm-up: run longer than {WARMUP + 60:.0f} s")
span_hours = (after[-1]["seconds"] - after[0]["seconds"]) / 3600
failed = []
print(f"{len(samples)} samples every {SAMPLE_EVERY:.0f} s over {samples[-1]['seconds']:.0f} s; the fits use the {len(after)} after the warm-up ({WARMUP:.0f} s)")
print()
print("| figure | at warm-up's end | at the end | range after warm-up | fitted slope | growth over the run (slope × span) | verdict |")
print("|---|---|---|---|---|---|---|")


def judge(label, key, unit, scale=1.0, tolerance=0.0, exact=False):
    values = [sample[key] * scale for sample in after]
    slope, residual = fit([(sample["seconds"], sample[key] * scale) for sample in after])
    growth = slope * span_hours
    if exact:
        ok = max(values) - min(values) <= tolerance
    else:
        ok = growth <= max(tolerance, 3 * residual)
    if not ok:
        failed.append(label)
    print(f"| {label} | {values[0]:.1f} {unit} | {values[-1]:.1f} {unit} | {min(values):.1f}–{max(values):.1f} {unit} | {slope:+.2f} {unit}/h "
          f"| {growth:+.2f} {unit} (noise ±{3 * residual:.2f}) | {'flat' if ok else 'GROWS'} |")


for name in programs:
    judge(f"{name} RSS", f"{name}_rss_kib", "MiB", scale=1 / 1024, tolerance=0.25)
    judge(f"{name} fds", f"{name}_fds", "", tolerance=0, exact=True)
    judge(f"{name} threads", f"{name}_threads", "", tolerance=0, exact=True)
judge("log file", "log_kib", "MiB", scale=1 / 1024, tolerance=1.0)
judge("log WAL", "wal_kib", "MiB", scale=1 / 1024, tolerance=1.0)

first, last = after[0], after[-1]
seconds = last["seconds"] - first["seconds"]
readings = last["readings_watcher0"] - first["readings_watcher0"]
print()
print(f"readings per watcher: {readings / seconds:.1f}/s (4 devices, one reading per 10 ms each at most); "
      f"SSE readings per stream: {(last['readings_sse0'] - first['readings_sse0']) / seconds:.1f}/s; "
      f"MQTT messages: {(last['mqtt_messages'] - first['mqtt_messages']) / seconds:.2f}/s; /metrics fetched {metrics_fetched[0]}, failed {metrics_failures[0]}")
for name in programs:
    cpu = last[f"{name}_cpu_s"] - first[f"{name}_cpu_s"]
    print(f"{name}: {100 * cpu / seconds:.1f} % of a CPU, {1e6 * cpu / max(1, readings):.1f} µs per reading a watcher got")
with lock:
    spread = (min(watched), max(watched), min(streamed), max(streamed))
print(f"watchers got {spread[0]}–{spread[1]} readings each; streams {spread[2]}–{spread[3]}; readings out of order: {backwards[0]}")
dropped = final_status.get("dropped", 0)
print(f"the daemon's dropped (lines to clients that did not keep up): {dropped}; the log's dropped: {final_status.get('log', {}).get('dropped')}, "
      f"written {final_status.get('log', {}).get('written')}")
# Where the figures stepped, with the host's load then: a step that comes with a load spike is
# a high-water mark of queues that grew while the programs were starved of CPU.
for key in [f"{name}_rss_kib" for name in programs] + ["daemon_dropped"]:
    steps = [(b["seconds"], b[key] - a[key], b["load1"]) for a, b in zip(samples, samples[1:]) if b[key] - a[key] >= (256 if key.endswith("kib") else 1)]
    if steps:
        print(f"{key} rose by " + "; ".join(f"{rise:.0f} at {at:.0f} s (load {load:.1f})" for at, rise, load in steps[:8]))
print(f"host load average (1 min) over the run: {min(s['load1'] for s in samples):.1f}–{max(s['load1'] for s in samples):.1f}")
checks = [
    ("no client disconnected", not lost_while_running, "; ".join(lost_while_running[:5])),
    ("nothing dropped for the watchers", dropped == 0, f"dropped {dropped}"),
    ("the log dropped nothing", final_status.get("log", {}).get("dropped", 1) == 0, str(final_status.get("log"))),
    ("readings in order", backwards[0] == 0, f"{backwards[0]} backwards"),
    ("every watcher got all but the last moment's readings", spread[1] - spread[0] <= 2 * DEVICES * 100, f"{spread}"),
    ("/metrics answered every second", metrics_failures[0] == 0 and metrics_fetched[0] >= 0.9 * SECONDS, f"{metrics_fetched[0]} fetched, {metrics_failures[0]} failed"),
    ("MQTT messages arrived", last["mqtt_messages"] > first["mqtt_messages"], f"{last['mqtt_messages']}"),
]
for label, ok, detail in checks:
    print(f"{'ok' if ok else 'FAILED'}: {label}" + ("" if ok else f" ({detail})"))
    if not ok:
        failed.append(label)
print()
print("verdict: " + ("met (no growth after the warm-up, nothing dropped)" if not failed else "NOT met: " + ", ".join(failed)))
sys.exit(1 if failed else 0)
