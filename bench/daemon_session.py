"""A JSON-lines session with forcescaled for the calibration bench's daemon paths.

DaemonSession(path, daemon, name, directory) connects once the daemon listens (its socket
file appears a moment before it does), reads VERSION and starts watching; then `send` a
request, `reply(cls)` for the reply of that class (an ERROR ends the run with its message),
and `next_message()` for the stream, replies that came early included.
"""
import json
import socket
import time


class DaemonSession:
    def __init__(self, path, daemon, name, directory):
        self.name, self.directory = name, directory
        for attempt in range(1000):
            client = socket.socket(socket.AF_UNIX)
            try:
                client.connect(path)
                break
            except (FileNotFoundError, ConnectionRefusedError):
                client.close()
                if daemon.poll() is not None or attempt == 999:
                    raise SystemExit("%s: forcescaled did not start; see %s" % (name, directory))
                time.sleep(0.01)
        self.stream = client.makefile("rwb", buffering=0)
        self.pending = []
        self.reply("VERSION")
        self.send({"class": "WATCH", "enable": True})
        self.reply("WATCH")

    def send(self, request):
        self.stream.write((json.dumps(request, separators=(",", ":")) + "\n").encode())

    def _line(self):
        line = self.stream.readline()
        if not line:
            raise SystemExit("%s: forcescaled closed the connection; see %s" % (self.name, self.directory))
        return json.loads(line)

    def reply(self, cls):
        while True:
            message = self._line()
            if message["class"] == "ERROR":
                raise SystemExit("%s: %s" % (self.name, message["message"]))
            if message["class"] == cls:
                return message
            self.pending.append(message)

    def next_message(self):
        return self.pending.pop(0) if self.pending else self._line()
