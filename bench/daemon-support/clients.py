#!/usr/bin/env python3
"""bench/daemon's watching clients: `clients.py SOCKET N SECONDS DAEMON_PID`.

Connects N clients to forcescaled's SOCKET, reads each VERSION greeting, sends
{"class":"WATCH","enable":true} on each and waits for every WATCH reply. Then, for SECONDS,
one epoll loop reads all of them and counts READING lines. At the start and the end of that
window it reads the daemon's utime + stime from /proc/PID/stat and its run time from
/proc/PID/schedstat, so the daemon's CPU and the
readings delivered cover the same span; at the end, its VmHWM, VmRSS, RssFile and RssAnon. Client 0 also measures latency: its own
CLOCK_MONOTONIC when recv() returned, minus the READING's "time" (the daemon stamps readings
on CLOCK_MONOTONIC; for a replay, that is each event's due time). Last, a separate connection
asks STATUS for the daemon's "dropped" count, its devices' "dropped_events" and how many devices
it lists. Prints `key=value` lines.
"""
import json, os, select, socket, sys, time

path, n, seconds, pid = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
ticks = os.sysconf("SC_CLK_TCK")
mono = time.CLOCK_MONOTONIC


def cpu(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / ticks   # utime, stime (fields 14, 15)


def run_time(pid):
    """Seconds on a CPU by the scheduler's clock (/proc/PID/schedstat): utime and stime are
    sampled at the timer tick, and a process woken just after each tick by a device paced
    on it (a 1 kHz writer and a 250 Hz tick, in the VM) is seldom running when the tick
    samples, so for it they read low; the scheduler's clock counts every run."""
    with open(f"/proc/{pid}/schedstat") as f:
        return int(f.read().split()[0]) / 1e9


def status(pid, key):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return -1


def read_line(sock, buf):
    while b"\n" not in buf:
        chunk = sock.recv(65536)
        if not chunk:
            raise SystemExit("daemon closed the connection")
        buf += chunk
    line, _, rest = buf.partition(b"\n")
    return line, rest


socks, bufs = [], []
for i in range(n):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    line, rest = read_line(s, b"")
    assert b'"VERSION"' in line, line
    s.sendall(b'{"class":"WATCH","enable":true}\n')
    socks.append(s)
    bufs.append(rest)
# Wait for every WATCH reply; READING lines may come before or after it.
for i, s in enumerate(socks):
    buf = bufs[i]
    while True:
        line, buf = read_line(s, buf)
        if b'"class":"WATCH"' in line:
            break
    bufs[i] = buf
    s.setblocking(False)

ep = select.epoll()
index = {}
for i, s in enumerate(socks):
    ep.register(s.fileno(), select.EPOLLIN)
    index[s.fileno()] = i
counts = [0] * n
tails = [b""] * n
latencies = []
READING = b'"class":"READING"'

mine0 = os.times()
cpu0, run0, t0 = cpu(pid), run_time(pid), time.clock_gettime(mono)
end = t0 + seconds
while True:
    now = time.clock_gettime(mono)
    if now >= end:
        break
    for fd, _ in ep.poll(end - now):
        i = index[fd]
        try:
            data = socks[i].recv(262144)
        except BlockingIOError:
            continue
        if i == 0:
            received = time.clock_gettime(mono)
        if not data:
            raise SystemExit(f"client {i}: daemon closed the connection")
        data = tails[i] + data
        cut = data.rfind(b"\n") + 1
        whole, tails[i] = data[:cut], data[cut:]
        counts[i] += whole.count(READING)
        if i == 0:
            for line in whole.split(b"\n"):
                if line.startswith(b'{"class":"READING"'):
                    at = line.index(b'"time":') + 7
                    latencies.append(received - float(line[at:line.index(b",", at)]))
cpu1, run1, t1 = cpu(pid), run_time(pid), time.clock_gettime(mono)
mine1 = os.times()
hwm, rss = status(pid, "VmHWM"), status(pid, "VmRSS")
# Where the resident memory is: mapped files (the program, its libraries) and its own.
rss_file, rss_anon = status(pid, "RssFile"), status(pid, "RssAnon")

s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(path)
_, rest = read_line(s, b"")
s.sendall(b'{"class":"STATUS"}\n')
while True:
    line, rest = read_line(s, rest)
    if b'"class":"STATUS"' in line:
        break
st = json.loads(line)

latencies.sort()
def pct(p):
    return latencies[min(len(latencies) - 1, int(p / 100 * len(latencies)))] * 1000 if latencies else float("nan")

total = sum(counts)
print(f"clients={n}")
print(f"window_s={t1 - t0:.3f}")
print(f"readings_total={total}")
print(f"readings_min={min(counts)}")
print(f"readings_max={max(counts)}")
print(f"daemon_cpu_s={cpu1 - cpu0:.2f}")
print(f"daemon_us_per_reading={(cpu1 - cpu0) * 1e6 / total if total else float('nan'):.2f}")
print(f"daemon_run_s={run1 - run0:.2f}")
print(f"daemon_run_us_per_reading={(run1 - run0) * 1e6 / total if total else float('nan'):.2f}")
print(f"clients_cpu_s={(mine1.user + mine1.system) - (mine0.user + mine0.system):.2f}")
print(f"dropped={st.get('dropped')}")
# Events the kernel dropped (SYN_DROPPED), over every device STATUS lists (protocol 1.5).
print(f"dropped_events={sum(device.get('dropped_events', 0) for device in st.get('devices', []))}")
print(f"status_clients={st.get('clients')}")
print(f"status_devices={len(st.get('devices', []))}")
print(f"daemon_vmhwm_kib={hwm}")
print(f"daemon_vmrss_kib={rss}")
print(f"daemon_rssfile_kib={rss_file}")
print(f"daemon_rssanon_kib={rss_anon}")
print(f"latency_n={len(latencies)}")
print(f"latency_p50_ms={pct(50):.3f}")
print(f"latency_p99_ms={pct(99):.3f}")
print(f"latency_max_ms={(latencies[-1] * 1000 if latencies else float('nan')):.3f}")
