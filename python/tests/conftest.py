"""What the suite shares: the programs of this build, the recordings, and forcescaled run
for real on a private socket (as Tests/ForcescaleCLITests/DaemonTestSupport.swift runs it).

The programs come from FORCESCALE_BIN_DIR (make test sets it to `swift build
--show-bin-path`), else the checkout's .build/debug. The shared recordings come from
FORCESCALE_RECORDINGS, else ../shared/recordings beside the checkout, else
/work/shared/recordings; they are read where they are, never copied into the tree.

Every wait is for an event with a generous deadline (PATIENCE), never a fixed sleep.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
PYTHON_DIR = ROOT / "python"
EXAMPLES = ROOT / "docs" / "examples"

# Seconds any one wait may take on a loaded 2-core machine before it is a failure.
PATIENCE = 90.0


def bin_dir() -> Path:
    given = os.environ.get("FORCESCALE_BIN_DIR")
    return Path(given) if given else ROOT / ".build" / "debug"


def program(name: str) -> str:
    path = bin_dir() / name
    assert os.access(path, os.X_OK), f"{path} is not there: build first (swift build) or set FORCESCALE_BIN_DIR"
    return str(path)


def recordings() -> Path:
    given = os.environ.get("FORCESCALE_RECORDINGS")
    if given:
        return Path(given)
    beside = (ROOT / ".." / "shared" / "recordings").resolve()
    return beside if beside.exists() else Path("/work/shared/recordings")


def wait_for(condition: Callable[[], Any], what: str, deadline: float = PATIENCE) -> Any:
    """Polls ``condition`` until it returns something true; fails naming ``what``."""
    end = time.monotonic() + deadline
    delay = 0.01
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > end:
            pytest.fail(f"waited {deadline:.0f} s for {what}")
        time.sleep(delay)
        delay = min(delay * 2, 0.2)


def clean_environment(**extra: str) -> dict[str, str]:
    env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "PYTHONPATH": str(PYTHON_DIR), "PYTHONDONTWRITEBYTECODE": "1"}
    env.update(extra)
    return env


def run(arguments: list[str], env: dict[str, str] | None = None, cwd: str | Path | None = None,
        timeout: float = PATIENCE, input: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(arguments, env=env if env is not None else clean_environment(), cwd=cwd, timeout=timeout,
                          capture_output=True, text=True, input=input)


def python(script: str, env: dict[str, str] | None = None, cwd: str | Path | None = None, args: list[str] | None = None,
           as_user: str | None = None) -> subprocess.CompletedProcess[str]:
    """Runs a script under Debian's python3 with this checkout's module on the path."""
    prefix = ["/usr/bin/setpriv", f"--reuid={as_user}", "--regid=nogroup", "--clear-groups"] if as_user else []
    return run(prefix + ["/usr/bin/python3", "-c", script] + (args or []), env=env, cwd=cwd)


class Daemon:
    """forcescaled replaying recordings (in a loop unless told) on a socket of its own."""

    def __init__(self, recordings: list[str], directory: Path, arguments: list[str] | None = None,
                 socket_name: str = "sock", loop: bool = True) -> None:
        self.recordings = recordings
        self.directory = directory
        self.socket = str(directory / socket_name)
        self.state = str(directory / "state")
        self.arguments = arguments or []
        self.loop = loop
        self.process: subprocess.Popen[bytes] | None = None
        self.start()

    def start(self) -> None:
        command = [program("forcescaled")]
        for recording in self.recordings:
            command += ["--replay", recording]
        command += (["--loop"] if self.loop else []) + ["--socket", self.socket, "--state-dir", self.state] + self.arguments
        self.errors = open(self.directory / "forcescaled.stderr", "ab")
        self.process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=self.errors, env=clean_environment())
        wait_for(self._listening, f"forcescaled to listen on {self.socket}")

    def _listening(self) -> bool:
        assert self.process is not None
        if self.process.poll() is not None:
            pytest.fail(f"forcescaled exited with {self.process.returncode}: {self.stderr()}")
        probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            probe.connect(self.socket)
            return True
        except OSError:
            return False
        finally:
            probe.close()

    def stderr(self) -> str:
        return (self.directory / "forcescaled.stderr").read_text(errors="replace")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(PATIENCE)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None
        self.errors.close()

    def restart(self) -> None:
        self.stop()
        self.start()

    def raw_session(self) -> RawConnection:
        return RawConnection(self.socket)


class RawConnection:
    """A connection written against docs/protocol.md alone, not the module under test: the
    daemon's lines as it sent them."""

    def __init__(self, path: str) -> None:
        self.socket = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.socket.connect(path)
        self.buffer = b""

    def close(self) -> None:
        self.socket.close()

    def send(self, line: str) -> None:
        self.socket.sendall(line.encode() + b"\n")

    def line(self, deadline: float = PATIENCE) -> str:
        end = time.monotonic() + deadline
        while b"\n" not in self.buffer:
            left = end - time.monotonic()
            if left <= 0:
                pytest.fail(f"no line from forcescaled within {deadline:.0f} s")
            self.socket.settimeout(left)
            try:
                data = self.socket.recv(65536)
            except socket.timeout:
                continue
            if not data:
                pytest.fail("forcescaled closed the connection")
            self.buffer += data
        line, self.buffer = self.buffer.split(b"\n", 1)
        return line.decode()

    def ask(self, request: str, reply_class: str, seen: list[str] | None = None) -> str:
        """Sends a request and returns its reply (the line of ``reply_class`` or ERROR),
        keeping every line read meanwhile in ``seen``."""
        self.send(request)
        end = time.monotonic() + PATIENCE
        while True:
            line = self.line(end - time.monotonic())
            if seen is not None:
                seen.append(line)
            if line.startswith(f'{{"class":"{reply_class}"') or line.startswith('{"class":"ERROR"'):
                return line


@pytest.fixture
def scratch() -> Iterator[Path]:
    """A directory of its own that every user can enter (socket paths stay short)."""
    directory = Path(tempfile.mkdtemp(prefix="fs-py-"))
    directory.chmod(0o755)
    try:
        yield directory
    finally:
        subprocess.run(["rm", "-rf", str(directory)], check=False)


@pytest.fixture
def demo_recording(scratch: Path) -> str:
    """The demo session (`forcescale demo --write`): a letter, an apple and a mug, each
    resting still for 2 s or more, the mug pressed to saturation on landing (one PEAK)."""
    path = scratch / "demo.events"
    written = run([program("forcescale"), "demo", "--write", str(path)])
    assert written.returncode == 0, written.stderr
    return str(path)


@pytest.fixture
def daemons(scratch: Path) -> Iterator[Callable[..., Daemon]]:
    started: list[Daemon] = []

    def start(recordings: list[str], arguments: list[str] | None = None, socket_name: str = "sock",
              loop: bool = True) -> Daemon:
        daemon = Daemon(recordings, scratch, arguments, socket_name, loop)
        started.append(daemon)
        return daemon

    yield start
    for daemon in started:
        daemon.stop()


sys.path.insert(0, str(PYTHON_DIR))
