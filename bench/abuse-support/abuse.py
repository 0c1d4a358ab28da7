#!/usr/bin/env python3
"""bench/abuse's cases: `abuse.py BIN_DIR RECORDING WORK_DIR [CASE...]`.

forcescaled (on RECORDING, looped) and forcescale-web under hostile load and faults, on
loopback and Unix sockets only, every loop bounded in count and time. Each case prints one
line: its name, what it measured, the figure it holds to, and PASS or FAIL; the exit status
is 1 when any failed. Cases by name (all by default): see CASES at the end.
"""
import json, os, select, signal, socket, subprocess, sys, threading, time

BIN, RECORDING, WORK = sys.argv[1], sys.argv[2], sys.argv[3]
CHOSEN = sys.argv[4:]
results = []


def now():
    return time.monotonic()


def status_kib(pid, key):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return -1


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")   # utime + stime


def report(name, measured, goal, ok):
    results.append(ok)
    print(f"{'PASS' if ok else 'FAIL'}  {name}: {measured} (goal: {goal})", flush=True)


class Daemon:
    def __init__(self, tag):
        self.socket = f"{WORK}/{tag}.sock"
        self.state = f"{WORK}/{tag}.state"
        self.start()

    def start(self):
        self.process = subprocess.Popen(
            [f"{BIN}/forcescaled", "--replay", RECORDING, "--loop", "--no-rumble", "-q",
             "--socket", self.socket, "--state-dir", self.state],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = now() + 30
        while now() < deadline:
            try:
                client = self.connect()
                client.close()
                return
            except OSError:
                time.sleep(0.05)
        raise SystemExit("forcescaled did not listen within 30 s")

    def connect(self):
        client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        client.settimeout(10)
        client.connect(self.socket)
        LineReader(client).line()   # VERSION
        return client

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGCONT)
            self.process.kill()
        self.process.wait()


class LineReader:
    def __init__(self, sock):
        self.sock, self.buffer = sock, b""

    def line(self):
        while b"\n" not in self.buffer:
            chunk = self.sock.recv(65536)
            if not chunk:
                return None
            self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\n")
        return line

    def reply(self, klass):
        """The next line of class `klass` or ERROR, skipping stream lines."""
        while True:
            line = self.line()
            if line is None or b'"class":"%s"' % klass in line or b'"class":"ERROR"' in line:
                return line


KEY = None


def auth():
    """The header line that carries forcescale-web's read key (docs/web.md, "Access")."""
    return f"Authorization: Bearer {KEY}\r\n" if KEY else ""


class Web:
    def __init__(self, daemon):
        self.err = open(f"{WORK}/web.err", "w+")
        # Its keys go into WORK; every request here sends the read key (KEY).
        self.process = subprocess.Popen(
            [f"{BIN}/forcescale-web", "--socket", daemon.socket, "--listen", "127.0.0.1:0", "--key-dir", WORK],
            stdout=subprocess.DEVNULL, stderr=self.err)
        deadline = now() + 30
        self.port = None
        while now() < deadline and self.port is None:
            time.sleep(0.05)
            with open(f"{WORK}/web.err") as f:
                for line in f:
                    if "listening on http://127.0.0.1:" in line:
                        self.port = int(line.split("127.0.0.1:")[1].split("/")[0])
        if self.port is None:
            raise SystemExit("forcescale-web did not say where it listens within 30 s")
        global KEY
        with open(f"{WORK}/read-key") as f:
            KEY = f.read().strip()

    def stop(self):
        self.process.terminate()
        self.process.wait()


def connect(port, source="127.0.0.1", rcvbuf=None):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if rcvbuf:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    s.bind((source, 0))
    s.settimeout(10)
    s.connect(("127.0.0.1", port))
    return s


def response_head(s, timeout=10):
    """The status and head of the response on `s`, or None when it closed without one."""
    s.settimeout(timeout)
    data = b""
    try:
        while b"\r\n\r\n" not in data:
            chunk = s.recv(65536)
            if not chunk:
                return None, data
            data += chunk
    except (ConnectionResetError, socket.timeout):
        return None, data
    head = data.split(b"\r\n\r\n")[0].decode("latin-1")
    return int(head.split(" ")[1]), head


def get(port, path, source="127.0.0.1"):
    """The status (None when there was no answer within 10 s), the seconds it took, the body."""
    start = now()
    data = b""
    try:
        s = connect(port, source)
        s.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n{auth()}Connection: close\r\n\r\n".encode())
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
        s.close()
    except OSError:
        return None, now() - start, ""
    head, _, body = data.partition(b"\r\n\r\n")
    code = int(head.split(b" ")[1]) if head.startswith(b"HTTP/") else None
    return code, now() - start, body.decode()


def event_stream(port, source="127.0.0.1"):
    s = connect(port, source)
    s.sendall(f"GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\n{auth()}\r\n".encode())
    return s


def drain(socks, seconds, until=None):
    """Reads every socket for `seconds` (or until `until(received)` holds); returns the bytes
    each received."""
    received = {s: b"" for s in socks}
    poller = select.epoll()
    for s in socks:
        s.setblocking(False)
        poller.register(s.fileno(), select.EPOLLIN)
    by_fd = {s.fileno(): s for s in socks}
    end = now() + seconds
    while now() < end and not (until and until(received)):
        for fd, _ in poller.poll(0.1):
            try:
                chunk = by_fd[fd].recv(65536)
            except BlockingIOError:
                continue
            except ConnectionResetError:
                chunk = b""
            if chunk:
                received[by_fd[fd]] += chunk
            else:
                poller.unregister(fd)
    poller.close()
    return received


# MARK: The daemon


def daemon_watchers():
    daemon = Daemon("watchers")
    try:
        watchers = []
        for _ in range(1000):
            s = daemon.connect()
            s.sendall(b'{"class":"WATCH","enable":true}\n')
            watchers.append(s)
        asker = daemon.connect()
        reader = LineReader(asker)
        times = []
        for _ in range(50):
            start = now()
            asker.sendall(b'{"class":"STATUS"}\n')
            assert b'"STATUS"' in reader.reply(b"STATUS")
            times.append(now() - start)
            drain(watchers, 0.05)
        times.sort()
        rss = status_kib(daemon.process.pid, "VmRSS")
        report("daemon, 1000 watchers reading", f"STATUS p50 {times[25] * 1000:.1f} ms, max {times[-1] * 1000:.1f} ms; RSS {rss / 1024:.1f} MiB",
               "max < 250 ms, RSS < 16 MiB", times[-1] < 0.25 and rss < 16 * 1024)
    finally:
        daemon.stop()


def daemon_never_read():
    daemon = Daemon("stuck")
    try:
        stuck = []
        for _ in range(100):
            s = daemon.connect()
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            s.sendall(b'{"class":"WATCH","enable":true}\n')
            stuck.append(s)
        time.sleep(5)   # the subject: 5 s of readings that nobody reads
        asker = daemon.connect()
        start = now()
        asker.sendall(b'{"class":"STATUS"}\n')
        line = LineReader(asker).reply(b"STATUS")
        took = now() - start
        rss = status_kib(daemon.process.pid, "VmRSS")
        report("daemon, 100 watchers that never read, 5 s", f"STATUS in {took * 1000:.1f} ms, RSS {rss / 1024:.1f} MiB, dropped {json.loads(line).get('dropped')}",
               "< 250 ms, RSS < 16 MiB", took < 0.25 and rss < 16 * 1024)
    finally:
        daemon.stop()


def daemon_pipelined():
    daemon = Daemon("pipelined")
    try:
        s = daemon.connect()
        count = 100_000
        start = now()
        sender = threading.Thread(target=lambda: s.sendall(b'{"class":"POLL"}\n' * count))
        sender.start()
        reader = LineReader(s)
        replies = 0
        while replies < count:
            line = reader.line()
            if line is None:
                break
            if b'"class":"POLL"' in line:
                replies += 1
        sender.join()
        took = now() - start
        report("daemon, 100,000 pipelined POLLs on one connection", f"{replies} answered in {took:.2f} s ({replies / took:,.0f}/s)",
               "all answered", replies == count)
    finally:
        daemon.stop()


def daemon_bad_lines():
    daemon = Daemon("bad")
    try:
        s = daemon.connect()
        big = b"x" * (10 * 1024 * 1024) + b"\n"
        start = now()
        try:
            s.sendall(big)
        except (BrokenPipeError, ConnectionResetError):
            pass
        reader = LineReader(s)
        line = reader.line()
        closed = reader.line() is None
        took = now() - start
        report("daemon, a 10 MB line", f"{line.decode() if line else 'nothing'}, closed {closed}, {took:.2f} s",
               "ERROR 'line longer than 65536 bytes', then closed", line == b'{"class":"ERROR","message":"line longer than 65536 bytes"}' and closed)
        s = daemon.connect()
        reader = LineReader(s)
        lines = [b'{"class":"WATCH","device":"\xff\xfe"}', b"\xc0\x80", b'{"class":"POLL"', b"null", b"[]", b'{"class":1}',
                 b'{"class":"POLL",}', b"\x00\x01\x02", b'{"class":"' + b"A" * 60000 + b'"}', b'{"class":"CALIBRATE","grams":"x"}']
        answers = []
        for line in lines * 100:
            s.sendall(line + b"\n")
            answers.append(reader.line())
        errors = sum(1 for a in answers if a and a.startswith(b'{"class":"ERROR"'))
        utf8 = answers[0] == b'{"class":"ERROR","message":"malformed JSON at byte 27: invalid UTF-8"}'
        report("daemon, 1000 malformed lines (invalid UTF-8 among them)", f"{errors} ERRORs; invalid UTF-8: {answers[0].decode(errors='replace')}",
               "one ERROR each, 'invalid UTF-8' at byte 27", errors == len(answers) and utf8)
    finally:
        daemon.stop()


# MARK: The web server


def web_slow_headers(daemon, web, source="127.0.0.1"):
    head = b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: "
    slow = [connect(web.port, source) for _ in range(300)]
    worst, answered, failed = 0.0, 0, 0
    start = now()
    sent = 0
    while now() - start < 15:
        if now() - start >= sent * 5:
            for s in slow:
                try:
                    s.send(head[sent:sent + 1])
                except OSError:
                    pass
            sent += 1
        for path in ("/api/status", "/metrics"):
            code, took, _ = get(web.port, path)
            worst = max(worst, took)
            answered += code == 200
            failed += code != 200
        time.sleep(0.25)
    received = drain(slow, 5, until=lambda r: False)
    codes = [r.split(b" ")[1].decode() if r.startswith(b"HTTP/1.1 ") else "closed" for r in received.values()]
    for s in slow:
        s.close()
    summary = {c: codes.count(c) for c in set(codes)}
    report(f"web, 300 slow clients from {source} (a byte every 5 s) for 15 s", f"{answered} answers to /api/status and /metrics beside them, {failed} without an answer in 10 s, slowest {worst * 1000:.0f} ms; the slow ones got {summary}",
           "every request answered within 2 s", failed == 0 and worst < 2)


def web_past_the_limit(daemon, web, held):
    streams, codes, slowest = [], {}, 0.0
    end = now() + 60
    for index in range(1000):
        if now() > end:
            codes["not tried (60 s passed)"] = 1000 - index
            break
        start = now()
        s = event_stream(web.port, f"127.0.0.{1 + index % 6}")
        code, _ = response_head(s)
        slowest = max(slowest, now() - start)
        codes[code] = codes.get(code, 0) + 1
        if code == 200:
            streams.append(s)
        else:
            s.close()
    code, took, _ = get(web.port, "/metrics")
    served = 240 - held
    report(f"web, 1000 /events streams from 6 addresses beside {held} streams that never read", f"answers {codes}, slowest answer {slowest * 1000:.0f} ms; /metrics beside them {code} in {took * 1000:.0f} ms",
           f"{served} streams (240 in all), the rest 503 at once (< 1 s), /metrics < 2 s", codes.get(200) == served and codes.get(503) == 1000 - served and slowest < 1 and code == 200 and took < 2)
    return streams


def web_streams_survive_daemon_kill(daemon, web, streams):
    streams = streams[:100]
    drain(streams, 1)
    daemon.process.kill()
    daemon.process.wait()
    start = now()
    down = drain(streams, 10, until=lambda r: all(b'{"up":false}' in v for v in r.values()))
    went = now() - start
    daemon.start()
    start = now()
    back = drain(streams, 20, until=lambda r: all(b'{"up":true}' in v and b"event: reading" in v.split(b'{"up":true}')[-1] for v in r.values()))
    came = now() - start
    told_down = sum(b'{"up":false}' in v for v in down.values())
    resumed = sum(b'{"up":true}' in v and b"event: reading" in v.split(b'{"up":true}')[-1] for v in back.values())
    report("web, daemon killed (-9) and restarted under 100 streams", f"{told_down} told it is down in {went:.2f} s; {resumed} resumed readings {came:.2f} s after the restart",
           "all 100, each", told_down == 100 and resumed == 100)


def web_daemon_stopped(daemon, web, streams, ask):
    streams = streams[:100]
    drain(streams, 1)
    daemon.process.send_signal(signal.SIGSTOP)
    start = now()
    figures = []
    if ask:
        body = get(web.port, "/api/status")
        said = "up" if '"up":true' in body[2] else "down"
        figures.append(f"/api/status {said} in {body[1]:.2f} s")
        metrics = get(web.port, "/metrics")
        up = [l for l in metrics[2].split("\n") if l.startswith("forcescale_daemon_up ")]
        figures.append(f"/metrics {up[0] if up else '?'} in {metrics[1] * 1000:.0f} ms")
    down = drain(streams, 25, until=lambda r: all(b'{"up":false}' in v for v in r.values()))
    told = sum(b'{"up":false}' in v for v in down.values())
    went = now() - start
    daemon.process.send_signal(signal.SIGCONT)
    start = now()
    back = drain(streams, 20, until=lambda r: all(b'{"up":true}' in v for v in r.values()))
    came = now() - start
    resumed = sum(b'{"up":true}' in v for v in back.values())
    status = get(web.port, "/api/status")[2]
    what = "asked for /api/status once" if ask else "nobody asking (streams only)"
    goal = "all three say down once asked, within the 2 s reply deadline (4 s with margin), up again within 5 s" if ask else "the streams say down within 18 s (15 s of silence, 2 s for a STATUS, 1 s to spare), up again within 5 s"
    ok = told == 100 and resumed == 100 and '"up":true' in status and (not ask or "down" in figures[0] and "_up 0" in figures[1]) and went < (4 if ask else 18) and came < 5
    report(f"web, daemon stopped (SIGSTOP) under 100 streams, {what}", f"{'; '.join(figures) + '; ' if figures else ''}{told} streams told down after {went:.2f} s; {resumed} told up {came:.2f} s after SIGCONT",
           goal, ok)


def web_heads():
    daemon = Daemon("heads")
    web = Web(daemon)
    try:
        codes = {}
        for size in range(6000, 20001, 8):
            s = connect(web.port)
            s.sendall(b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n" + auth().encode() + b"X-Big: " + b"a" * size + b"\r\n\r\n")
            code, _ = response_head(s)
            codes.setdefault(code, []).append(size)
            s.close()
        for lines in range(1, 301):
            s = connect(web.port)
            s.sendall(b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n" + auth().encode() + b"".join(b"X-%d: x\r\n" % i for i in range(lines)) + b"\r\n")
            code, _ = response_head(s)
            codes.setdefault(code, []).append(-lines)
            s.close()
        summary = {str(c): len(v) for c, v in codes.items()}
        largest = max(v for v in codes.get(200, [0]))
        report("web, heads of 6,000-20,000 bytes (every 8) and of 1-300 header lines", f"answers {summary}; largest 200: a {largest}-byte header",
               "200 or 431 each, none closed without an answer", set(codes) <= {200, 431})
        bad = [(b"GARBAGE\r\n\r\n", "closed"), (b"GET /metrics HTTP/1.1\r\n\r\n", 400),
               (b"POST /api/tare HTTP/1.1\r\nHost: x\r\nContent-Length: 5000\r\n\r\n" + b"a" * 5000, 413),
               (b"POST /api/tare HTTP/1.1\r\nHost: x\r\nContent-Length: 100000000\r\n\r\n", 413),
               (b"POST /api/tare HTTP/1.1\r\nHost: 127.0.0.1\r\n" + auth().encode() + b"Origin: http://evil.example\r\nContent-Length: 0\r\n\r\n", 403),
               (b"GET /nope HTTP/1.1\r\nHost: 127.0.0.1\r\n" + auth().encode() + b"\r\n", 404),
               (b"DELETE /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n" + auth().encode() + b"\r\n", 405),
               (b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 401), (b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n", 421)]
        seen = []
        for request, expected in bad:
            s = connect(web.port)
            s.sendall(request)
            code, _ = response_head(s, timeout=15)
            seen.append((code or "closed") == expected)
            s.close()
        report("web, malformed requests (not HTTP, no Host, bodies too big, a foreign tare, unknown path and method)", f"{sum(seen)} of {len(seen)} got their answer",
               "each its answer (or a close for not HTTP)", all(seen))
        # Pipelined: every request written at once on one connection, the answers read as
        # they come.
        count = 100_000
        s = connect(web.port)
        cpu = cpu_seconds(web.process.pid)
        start = now()
        sender = threading.Thread(target=lambda: s.sendall(f"GET /nope HTTP/1.1\r\nHost: 127.0.0.1\r\n{auth()}\r\n".encode() * count))
        sender.start()
        answers, data = 0, b""
        s.settimeout(10)
        try:
            while answers < count and now() - start < 120:
                chunk = s.recv(1 << 20)
                if not chunk:
                    break
                data += chunk
                answers += data.count(b"HTTP/1.1 404 ")
                data = data[data.rfind(b"HTTP/1.1 404 ") + 1:] if b"HTTP/1.1 404 " in data else data
        except OSError:
            pass
        sender.join()
        s.close()
        took = now() - start
        cpu = cpu_seconds(web.process.pid) - cpu
        report("web, 100,000 pipelined requests on one connection", f"{answers} answered (404) in {took:.2f} s ({answers / took:,.0f}/s), forcescale-web's CPU {cpu:.2f} s",
               "all answered", answers == count)
        start = now()
        count, errors = 0, 0
        while count < 10_000 and now() - start < 60:
            errors += get(web.port, "/metrics")[0] != 200
            count += 1
        took = now() - start
        report("web, /metrics one after another", f"{count} in {took:.1f} s ({count / took:,.0f}/s), {errors} errors",
               "no error", errors == 0)
    finally:
        web.stop()
        daemon.stop()


def web_load():
    daemon = Daemon("web")
    web = Web(daemon)
    try:
        deadline = now() + 30
        while now() < deadline and '"up":true' not in get(web.port, "/api/status")[2]:
            time.sleep(0.1)
        web_slow_headers(daemon, web)
        web_slow_headers(daemon, web, "127.0.0.2")
        stuck = []
        for _ in range(20):
            s = connect(web.port, "127.0.0.7", rcvbuf=4096)
            s.sendall(f"GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\n{auth()}\r\n".encode())
            stuck.append(s)
        streams = web_past_the_limit(daemon, web, len(stuck))
        rss = status_kib(web.process.pid, "VmHWM")
        report("web, peak RSS after the cases above", f"{rss / 1024:.1f} MiB", "< 24 MiB", rss < 24 * 1024)
        web_daemon_stopped(daemon, web, streams, ask=True)
        web_daemon_stopped(daemon, web, streams, ask=False)
        web_streams_survive_daemon_kill(daemon, web, streams)
        for s in streams + stuck:
            s.close()
    finally:
        web.stop()
        daemon.stop()


CASES = {"daemon-watchers": daemon_watchers, "daemon-never-read": daemon_never_read, "daemon-pipelined": daemon_pipelined,
         "daemon-bad-lines": daemon_bad_lines, "web-heads": web_heads, "web-load": web_load}
for name in CHOSEN or CASES:
    if name not in CASES:
        raise SystemExit(f"abuse.py: unknown case {name} (the cases: {', '.join(CASES)})")
    CASES[name]()
sys.exit(0 if all(results) else 1)
