#!/usr/bin/env python3
"""bench/web's clients: N Server-Sent Events connections to forcescale-web's /events, read
by one selector loop for SECONDS, counting the `event: reading` frames each gets, and the
latency of client 0's readings (CLOCK_MONOTONIC at recv minus the READING's "time": the
daemon restamps a replay's events on CLOCK_MONOTONIC at their due time). Also samples the
server's CPU (utime + stime of /proc/PID/stat) over the same window and its VmHWM at the end.

usage: sse_clients.py PORT CLIENTS SECONDS SERVER_PID
prints key=value lines."""
import json, os, selectors, socket, sys, time

# forcescale-web's read key, which bench/web puts in FORCESCALE_WEB_KEY for a build that makes
# one (docs/web.md, "Access").
AUTHORIZATION = f"Authorization: Bearer {os.environ['FORCESCALE_WEB_KEY']}\r\n" if os.environ.get("FORCESCALE_WEB_KEY") else ""

port, count, seconds, pid = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
ticks = os.sysconf("SC_CLK_TCK")


def cpu_seconds():
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / ticks


def status(field):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


selector = selectors.DefaultSelector()
clients = []
for index in range(count):
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(f"GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\n{AUTHORIZATION}Accept: text/event-stream\r\n\r\n".encode())
    s.setblocking(False)
    state = {"index": index, "buffer": b"", "readings": 0, "latencies": []}
    clients.append(state)
    selector.register(s, selectors.EVENT_READ, state)

# Let every client get its response head and greeting before the window opens.
time.sleep(0.5)
for key, _ in selector.select(timeout=0):
    try:
        key.fileobj.recv(1 << 20)
    except BlockingIOError:
        pass

start_cpu, start = cpu_seconds(), time.monotonic()
end = start + seconds
while True:
    left = end - time.monotonic()
    if left <= 0:
        break
    for key, _ in selector.select(timeout=left):
        state = key.data
        try:
            data = key.fileobj.recv(1 << 20)
        except BlockingIOError:
            continue
        now = time.clock_gettime(time.CLOCK_MONOTONIC)
        if not data:
            selector.unregister(key.fileobj)
            continue
        buffer = state["buffer"] + data
        # Count whole frames; the chunk-size lines of the chunked encoding never contain
        # "event: reading", so they can be left in.
        *frames, buffer = buffer.split(b"\n\n")
        state["buffer"] = buffer
        for frame in frames:
            if b"event: reading" in frame:
                state["readings"] += 1
                if state["index"] == 0:
                    for line in frame.split(b"\n"):
                        if line.startswith(b"data: "):
                            state["latencies"].append(now - json.loads(line[6:])["time"])
elapsed = time.monotonic() - start
cpu = cpu_seconds() - start_cpu
total = sum(c["readings"] for c in clients)
latencies = sorted(clients[0]["latencies"])


def percentile(p):
    return latencies[min(len(latencies) - 1, int(p * len(latencies)))] * 1000 if latencies else float("nan")


print(f"clients={count}")
print(f"seconds={elapsed:.2f}")
print(f"readings_total={total}")
print(f"readings_min={min(c['readings'] for c in clients)}")
print(f"readings_max={max(c['readings'] for c in clients)}")
print(f"server_cpu_s={cpu:.3f}")
print(f"server_us_per_event={cpu * 1e6 / total if total else float('nan'):.2f}")
print(f"server_vmhwm_kib={status('VmHWM')}")
print(f"server_rssanon_kib={status('RssAnon')}")
print(f"server_rssfile_kib={status('RssFile')}")
print(f"latency_p50_ms={percentile(0.5):.3f}")
print(f"latency_p99_ms={percentile(0.99):.3f}")
print(f"latency_max_ms={percentile(1.0):.3f}")
