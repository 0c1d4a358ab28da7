#!/usr/bin/env python3
"""bench/history's client: times forcescale-web's history endpoints, ROUNDS rounds, each
request on a connection of its own, from sending it to the last byte of the answer, and
reads the server's VmHWM after each.

usage: measure.py PORT SERVER_PID ENDED_ID OPEN_ID ROUNDS
prints key=value lines: for each case its median and every round's time in ms, its status
and size; the server's VmHWM before the first request, after the first page of sessions,
after each session served and at the end, the highest of these, and its RssAnon and
RssFile at the end."""
import http.client, os, statistics, sys, time

# forcescale-web's read key, which bench/history puts in FORCESCALE_WEB_KEY (docs/web.md, "Access").
AUTHORIZATION = {"Authorization": f"Bearer {os.environ['FORCESCALE_WEB_KEY']}"} if os.environ.get("FORCESCALE_WEB_KEY") else {}

port, pid, ended, open_id, rounds = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4], int(sys.argv[5])


def proc_status(field):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


highest = 0


def vmhwm():
    """VmHWM now. The kernel folds the resident size into its high-water mark lazily (file
    pages reclaimed meanwhile leave it behind), so a later reading can be lower: the
    highest of every reading taken is kept as well."""
    global highest
    value = proc_status("VmHWM")
    highest = max(highest, value)
    return value


def get(path):
    """(status, bytes, seconds) of one GET, the body read as it comes and not kept."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    start = time.monotonic()
    connection.request("GET", path, headers=AUTHORIZATION)
    response = connection.getresponse()
    size = 0
    while True:
        piece = response.read(65536)
        if not piece:
            break
        size += len(piece)
    seconds = time.monotonic() - start
    connection.close()
    return response.status, size, seconds


cases = [
    ("list", "/api/sessions"),
    ("list200", "/api/sessions?limit=200"),
    ("listmiddle", f"/api/sessions?before={ended}"),
    ("svg_ended", f"/api/sessions/{ended}.svg"),
    ("svg_open", f"/api/sessions/{open_id}.svg"),
    ("summary_ended", f"/api/sessions/{ended}"),
    ("csv_ended", f"/api/sessions/{ended}.csv"),
]
print(f"hwm_start_kib={vmhwm()}")
times = {name: [] for name, _ in cases}
for round_ in range(rounds):
    for name, path in cases:
        status, size, seconds = get(path)
        if status != 200:
            sys.exit(f"measure.py: GET {path}: {status}")
        times[name].append(seconds * 1000)
        print(f"{name}_status={status}")
        print(f"{name}_bytes={size}")
        if round_ == 0 and name == "list":
            print(f"hwm_after_list_kib={vmhwm()}")
        if name.startswith("svg") or name.startswith("summary") or name.startswith("csv"):
            print(f"hwm_after_{name}_r{round_ + 1}_kib={vmhwm()}")
for name, _ in cases:
    print(f"{name}_ms_median={statistics.median(times[name]):.1f}")
    print(f"{name}_ms_all={' '.join(f'{t:.1f}' for t in times[name])}")
print(f"hwm_end_kib={vmhwm()}")
print(f"hwm_max_kib={highest}")
print(f"rss_anon_end_kib={proc_status('RssAnon')}")
print(f"rss_file_end_kib={proc_status('RssFile')}")
