"""The blocking client: :class:`Client`."""

from __future__ import annotations

import collections
import os
import select
import socket as _socket
import time
from collections.abc import Callable, Generator
from typing import Any, TypeVar

from ._core import (
    MAXIMUM_PENDING,
    Disconnected,
    DroppedCheck,
    LineCutter,
    Notice,
    ReconnectPolicy,
    Reconnected,
    Weight,
    Weighing,
    check_greeting,
    connect_error,
    default_socket,
    is_stream,
    raise_if_error,
    sort_line,
    weighing_device,
    weight_of,
)
from .errors import (
    ConnectError,
    ConnectionClosedError,
    ForcescaleError,
    NoStableReadingError,
    ProtocolError,
    ReplyTimeoutError,
    SocketPermissionError,
)
from .messages import (
    Calibrate,
    Calibration,
    Device,
    Devices,
    Grab,
    Message,
    Poll,
    Reading,
    Rumble,
    Status,
    Tare,
    Version,
    Watch,
)

_M = TypeVar("_M", bound=Message)

_CAUGHT = (ForcescaleError, OSError)


def retryable(error: BaseException) -> bool:
    """Whether a watch with a reconnect policy tries again after this failure: the daemon
    is not there, went away, is not answering or keeps this user out for now. Anything
    else (it refused the WATCH, speaks another protocol) ends the watch."""
    if isinstance(error, (ConnectError, ConnectionClosedError, ReplyTimeoutError, SocketPermissionError)):
        return True
    return isinstance(error, OSError) and not isinstance(error, ForcescaleError)


class _Connection:
    """One connection to the daemon, its greeting read; every wait has a deadline."""

    def __init__(self, path: str, timeout: float) -> None:
        self.path = path
        self._socket = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
        self._cutter = LineCutter(path)
        self._lines: collections.deque[Message | ProtocolError] = collections.deque()
        self._ended = False
        try:
            self._socket.connect(path)
        except OSError as error:
            self._socket.close()
            raise connect_error(path, error) from None
        try:
            greeting = self.next_line(time.monotonic() + timeout)
            if greeting is None:
                raise ReplyTimeoutError(path, "VERSION", timeout)
            self.version = check_greeting(path, greeting)
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        self._socket.close()

    def fileno(self) -> int:
        return self._socket.fileno()

    def send(self, request: dict[str, Any]) -> None:
        data = (_request_line(request) + "\n").encode()
        try:
            self._socket.sendall(data)
        except (BrokenPipeError, ConnectionResetError):
            raise ConnectionClosedError(self.path) from None

    def next_line(self, deadline: float | None) -> Message | ProtocolError | None:
        """The next line (or the problem with it), ``None`` when the deadline passed."""
        while not self._lines:
            if self._ended:
                raise ConnectionClosedError(self.path)
            wait = None if deadline is None else deadline - time.monotonic()
            if wait is not None and wait <= 0:
                return None
            readable, _, _ = select.select([self._socket], [], [], wait)
            if not readable:
                continue
            try:
                data = self._socket.recv(65536)
            except ConnectionResetError:
                data = b""
            if not data:
                self._ended = True
                continue
            self._lines.extend(self._cutter.feed(data))
        return self._lines.popleft()


def _request_line(request: dict[str, Any]) -> str:
    import json

    return json.dumps({k: v for k, v in request.items() if v is not None}, separators=(",", ":"), ensure_ascii=False)


class Client:
    """A client of forcescaled, as ScaleClient is for Swift and libgps for gpsd.

    Connects on first use and reads the daemon's VERSION greeting; each request waits at
    most ``timeout`` seconds for its reply (CALIBRATE and ``weigh`` take their own). Use it
    from one thread; close it (or use ``with``) when done.

    - Parameters: socket: the daemon's socket; by default the one the CLI would use (the
      system's when it exists, else ``$XDG_RUNTIME_DIR/forcescale.sock``). timeout: seconds
      for the greeting and for each reply.
    """

    def __init__(self, socket: str | os.PathLike[str] | None = None, *, timeout: float = 5.0) -> None:
        self.socket = os.fspath(socket) if socket is not None else default_socket()
        self.timeout = timeout
        self._connection: _Connection | None = None
        self._pending: collections.deque[Message] = collections.deque(maxlen=MAXIMUM_PENDING)
        self._watching = False

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Client(socket={self.socket!r})"

    # MARK: Connecting

    def connect(self) -> Version:
        """Connects now if not connected. - Returns: the daemon's greeting. - Raises:
        NotListeningError, SocketPermissionError, ConnectError, ReplyTimeoutError,
        UnsupportedProtocolError."""
        if self._connection is None:
            self._connection = _Connection(self.socket, self.timeout)
        return self._connection.version

    def close(self) -> None:
        """Closes the connection; the next request connects again."""
        if self._connection is not None:
            self._connection.close()
            self._connection = None
        self._pending.clear()
        self._watching = False

    # MARK: Requests

    def version(self) -> Version:
        """The daemon's VERSION greeting (release and protocol version)."""
        return self.connect()

    def status(self, device: str | None = None) -> Status:
        """STATUS: the daemon's state (of one device served, if named)."""
        return self.request({"class": "STATUS", "device": device}, Status)

    def devices(self) -> list[Device]:
        """DEVICES: the input devices the daemon found, in its order."""
        return self.request({"class": "DEVICES"}, Devices).devices

    def poll(self, device: str | None = None) -> Poll:
        """POLL: the newest reading, whether or not this client watches."""
        return self.request({"class": "POLL", "device": device}, Poll)

    def tare(self, device: str | None = None) -> Tare:
        """TARE: takes the weight on the pad now as zero. - Raises: NotPermittedError (a
        PermissionError) when this user may not, with the daemon's words;
        UnknownDeviceError when the device is not served or several are and none was named."""
        return self.request({"class": "TARE", "device": device}, Tare)

    def calibrate(self, grams: float, device: str | None = None, *, add: bool = True, timeout: float = 60.0) -> Calibrate:
        """CALIBRATE: measures ``grams`` resting on the pad (the daemon waits for it to
        settle) and adds the point unless ``add`` is false."""
        return self.request(
            {"class": "CALIBRATE", "grams": grams, "device": device, "add": None if add else False}, Calibrate, timeout
        )

    def calibration(self, device: str | None = None) -> Calibration:
        """CALIBRATION: the device's curve, its fit and tare (changes nothing)."""
        return self.request({"class": "CALIBRATION", "device": device}, Calibration)

    def rumble(self, pattern: str | None = None) -> Rumble:
        """RUMBLE: plays a haptic pattern (``impact-medium`` by default)."""
        return self.request({"class": "RUMBLE", "pattern": pattern}, Rumble)

    def grab(self, enable: bool = True, *, seconds: float | None = None, device: str | None = None) -> Grab:
        """GRAB: takes the device for this client's weighing (``enable`` false gives it back)."""
        return self.request({"class": "GRAB", "enable": enable, "seconds": seconds, "device": device}, Grab)

    def request(self, request: dict[str, Any], reply: type[_M], timeout: float | None = None,
                on_stream: Callable[[Message], None] | None = None) -> _M:
        """Sends a request (``None`` values left out) and waits for its reply of class
        ``reply``. Stream lines that come meanwhile go to ``on_stream``, or are kept for
        :meth:`watch` while it runs.

        - Raises: DaemonError (NotPermittedError, UnknownDeviceError) for an ERROR reply;
          ReplyTimeoutError; ConnectionClosedError; ProtocolError for a line that is not
          the protocol; what connecting raises.
        """
        connection = self._connection or self._open()
        seconds = self.timeout if timeout is None else timeout
        deadline = time.monotonic() + seconds
        try:
            connection.send(request)
            while True:
                line = connection.next_line(deadline)
                if line is None:
                    raise ReplyTimeoutError(self.socket, reply.CLASS, seconds)
                answer = sort_line(line, reply, on_stream, self._pending if self._watching else None)
                if answer is not None:
                    return answer
        except ConnectionClosedError:
            self.close()
            raise
        except ForcescaleError:
            # The connection is fine: an ERROR, a late reply, a line this module cannot read.
            raise
        except OSError:
            self.close()
            raise

    def _open(self) -> _Connection:
        self.connect()
        assert self._connection is not None
        return self._connection

    # MARK: The stream

    def watch(self, device: str | None = None, *, reconnect: bool | ReconnectPolicy = False,
              timeout: float | None = None, check_dropped: float | None = 1.0) -> Generator[Message | Notice, None, None]:
        """Watches the daemon's stream: yields each READING, PEAK and GRAB-ended line as
        its message (lines of classes this client does not know as :class:`Unknown`).

        - Parameters: device: one device's lines only (its name or path). reconnect: find a
          lost daemon again, as ``forcescale watch --reconnect`` does (true, or a
          :class:`ReconnectPolicy`): the watch yields :class:`Disconnected` when the wait
          begins and :class:`Reconnected` when the daemon is back. timeout: seconds to wait
          for each line (``None``: for ever). check_dropped: how often, in seconds, to ask
          STATUS whether the daemon dropped lines for a slow watcher, yielded as
          :class:`Dropped` (``None``: never).
        - Raises: what requests raise; without ``reconnect``, ConnectionClosedError when the
          daemon goes; ReplyTimeoutError when ``timeout`` passes without a line.
        """
        policy = reconnect if isinstance(reconnect, ReconnectPolicy) else (ReconnectPolicy() if reconnect else None)
        dropped = DroppedCheck(check_dropped, time.monotonic)
        failures = 0
        lost = False
        heard = time.monotonic()
        try:
            while True:
                if self._connection is None or not self._watching:
                    try:
                        self.connect()
                        self._watching = True
                        self.request({"class": "WATCH", "enable": True, "device": device}, Watch)
                    except _CAUGHT as error:
                        self._watching = False
                        if policy is None or not retryable(error):
                            raise
                        self.close()
                        failures += 1
                        delay = policy.delay(failures + 1)
                        if not lost:
                            lost = True
                            yield Disconnected(error=_as_forcescale(error, self.socket), retry_in=delay)
                        time.sleep(delay)
                        continue
                    if lost:
                        lost = False
                        dropped.reconnected()
                        assert self._connection is not None
                        yield Reconnected(version=self._connection.version, path=self.socket)
                    failures = 0
                    heard = time.monotonic()
                while self._pending:
                    kept = self._pending.popleft()
                    if isinstance(kept, Status):
                        notice = dropped.answered(kept)
                        if notice is not None:
                            yield notice
                    else:
                        yield kept
                connection = self._connection
                assert connection is not None
                try:
                    if dropped.should_ask():
                        connection.send({"class": "STATUS"})
                        dropped.asked()
                    wait = dropped.due_in()
                    if timeout is not None:
                        left = max(0.0, heard + timeout - time.monotonic())
                        wait = left if wait is None else min(wait, left)
                    line = connection.next_line(None if wait is None else time.monotonic() + wait)
                except _CAUGHT as error:
                    if policy is None or not retryable(error):
                        self.close()
                        raise
                    self.close()
                    failures = 0
                    lost = True
                    yield Disconnected(error=_as_forcescale(error, self.socket), retry_in=policy.delay(1))
                    time.sleep(policy.delay(1))
                    continue
                if line is None:
                    if timeout is not None and time.monotonic() - heard >= timeout:
                        raise ReplyTimeoutError(self.socket, "READING", timeout)
                    continue
                if isinstance(line, ProtocolError):
                    raise line
                if isinstance(line, Status):
                    notice = dropped.answered(line)
                    if notice is not None:
                        yield notice
                    continue
                if is_stream(line):
                    heard = time.monotonic()
                    yield line
                    continue
                raise_if_error(line)
                # Any other reply (a WATCH reply that came late) answers no one waiting.
        finally:
            if self._watching and self._connection is not None:
                self._watching = False
                try:
                    self._connection.send({"class": "WATCH", "enable": False})
                except (ForcescaleError, OSError):
                    self.close()
            self._pending.clear()

    # MARK: Weighing

    def weigh(self, timeout: float = 30.0, device: str | None = None) -> Weight:
        """Waits for a steady weight on the pad, as ``forcescale weigh`` does.

        - Parameters: timeout: seconds to wait for a stable reading with something on the
          pad. device: the device to weigh on; needed when several are served.
        - Returns: the :class:`Weight`, with the calibration's ± when there is one; when the
          pad saturated, a lower bound (``saturated``; ``str()`` says "at least …").
        - Raises: NoStableReadingError when nothing settles in time; NoDeviceError without a
          single device to weigh on; what requests raise.
        """
        status = self.status(device)
        served = weighing_device(status, self.socket)
        weighing = Weighing()
        take = weighing.take

        deadline = time.monotonic() + timeout
        self.request({"class": "WATCH", "enable": True, "device": served}, Watch, on_stream=take)
        try:
            poll = self.request({"class": "POLL", "device": served}, Poll, on_stream=take)
            # A weight resting still may send no frames at all: the newest reading says it.
            take(poll.reading)
            connection = self._connection
            assert connection is not None
            while weighing.found is None:
                line = connection.next_line(deadline)
                if line is None:
                    raise weighing.timed_out(timeout)
                if isinstance(line, ProtocolError):
                    raise line
                take(line)
        finally:
            if self._connection is not None:
                try:
                    self.request({"class": "WATCH", "enable": False}, Watch, on_stream=lambda _: None)
                except ForcescaleError:
                    self.close()
        return weight_of(weighing.found, status)


def _as_forcescale(error: BaseException, path: str) -> ForcescaleError:
    if isinstance(error, ForcescaleError):
        return error
    if isinstance(error, OSError):
        return connect_error(path, error)
    return ForcescaleError(str(error))
