"""The asyncio client: :class:`AsyncClient`, the twin of :class:`forcescale.Client` for
programs that already run an event loop."""

from __future__ import annotations

import asyncio
import collections
import os
from collections.abc import AsyncGenerator, Callable
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
from .client import _as_forcescale, _request_line, retryable
from .errors import ConnectionClosedError, ForcescaleError, NoStableReadingError, ProtocolError, ReplyTimeoutError
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


class _AsyncConnection:
    """One connection, its greeting read; every wait has a deadline on the loop's clock."""

    def __init__(self, path: str, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.path = path
        self._reader = reader
        self._writer = writer
        self._cutter = LineCutter(path)
        self._lines: collections.deque[Message | ProtocolError] = collections.deque()
        self._ended = False
        self.version: Version

    @classmethod
    async def open(cls, path: str, timeout: float) -> _AsyncConnection:
        try:
            reader, writer = await asyncio.open_unix_connection(path, limit=1 << 20)
        except OSError as error:
            raise connect_error(path, error) from None
        connection = cls(path, reader, writer)
        try:
            loop = asyncio.get_running_loop()
            greeting = await connection.next_line(loop.time() + timeout)
            if greeting is None:
                raise ReplyTimeoutError(path, "VERSION", timeout)
            connection.version = check_greeting(path, greeting)
        except BaseException:
            connection.close()
            raise
        return connection

    def close(self) -> None:
        self._writer.close()

    async def send(self, request: dict[str, Any]) -> None:
        try:
            self._writer.write((_request_line(request) + "\n").encode())
            await self._writer.drain()
        except (BrokenPipeError, ConnectionResetError):
            raise ConnectionClosedError(self.path) from None

    async def next_line(self, deadline: float | None) -> Message | ProtocolError | None:
        loop = asyncio.get_running_loop()
        while not self._lines:
            if self._ended:
                raise ConnectionClosedError(self.path)
            try:
                if deadline is None:
                    data = await self._reader.read(65536)
                else:
                    wait = deadline - loop.time()
                    if wait <= 0:
                        return None
                    data = await asyncio.wait_for(self._reader.read(65536), wait)
            except asyncio.TimeoutError:
                return None
            except ConnectionResetError:
                data = b""
            if not data:
                self._ended = True
                continue
            self._lines.extend(self._cutter.feed(data))
        return self._lines.popleft()


class AsyncClient:
    """:class:`forcescale.Client` for asyncio: the same requests as coroutines, ``watch``
    as an async iterator. One task at a time may use it.

    - Parameters: socket: the daemon's socket (the CLI's choice by default). timeout:
      seconds for the greeting and for each reply.
    """

    def __init__(self, socket: str | os.PathLike[str] | None = None, *, timeout: float = 5.0) -> None:
        self.socket = os.fspath(socket) if socket is not None else default_socket()
        self.timeout = timeout
        self._connection: _AsyncConnection | None = None
        self._pending: collections.deque[Message] = collections.deque(maxlen=MAXIMUM_PENDING)
        self._watching = False

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"AsyncClient(socket={self.socket!r})"

    async def connect(self) -> Version:
        """Connects now if not connected; returns the greeting."""
        if self._connection is None:
            self._connection = await _AsyncConnection.open(self.socket, self.timeout)
        return self._connection.version

    def close(self) -> None:
        """Closes the connection; the next request connects again."""
        if self._connection is not None:
            self._connection.close()
            self._connection = None
        self._pending.clear()
        self._watching = False

    async def version(self) -> Version:
        """The daemon's VERSION greeting."""
        return await self.connect()

    async def status(self, device: str | None = None) -> Status:
        """STATUS, as :meth:`forcescale.Client.status`."""
        return await self.request({"class": "STATUS", "device": device}, Status)

    async def devices(self) -> list[Device]:
        """DEVICES's entries, as :meth:`forcescale.Client.devices`."""
        return (await self.request({"class": "DEVICES"}, Devices)).devices

    async def poll(self, device: str | None = None) -> Poll:
        """POLL, as :meth:`forcescale.Client.poll`."""
        return await self.request({"class": "POLL", "device": device}, Poll)

    async def tare(self, device: str | None = None) -> Tare:
        """TARE, as :meth:`forcescale.Client.tare` (NotPermittedError when refused)."""
        return await self.request({"class": "TARE", "device": device}, Tare)

    async def calibrate(self, grams: float, device: str | None = None, *, add: bool = True, timeout: float = 60.0) -> Calibrate:
        """CALIBRATE, as :meth:`forcescale.Client.calibrate`."""
        return await self.request(
            {"class": "CALIBRATE", "grams": grams, "device": device, "add": None if add else False}, Calibrate, timeout
        )

    async def calibration(self, device: str | None = None) -> Calibration:
        """CALIBRATION, as :meth:`forcescale.Client.calibration`."""
        return await self.request({"class": "CALIBRATION", "device": device}, Calibration)

    async def rumble(self, pattern: str | None = None) -> Rumble:
        """RUMBLE, as :meth:`forcescale.Client.rumble`."""
        return await self.request({"class": "RUMBLE", "pattern": pattern}, Rumble)

    async def grab(self, enable: bool = True, *, seconds: float | None = None, device: str | None = None) -> Grab:
        """GRAB, as :meth:`forcescale.Client.grab`."""
        return await self.request({"class": "GRAB", "enable": enable, "seconds": seconds, "device": device}, Grab)

    async def request(self, request: dict[str, Any], reply: type[_M], timeout: float | None = None,
                      on_stream: Callable[[Message], None] | None = None) -> _M:
        """Sends a request and waits for its reply, as :meth:`forcescale.Client.request`."""
        if self._connection is None:
            await self.connect()
        connection = self._connection
        assert connection is not None
        seconds = self.timeout if timeout is None else timeout
        deadline = asyncio.get_running_loop().time() + seconds
        try:
            await connection.send(request)
            while True:
                line = await connection.next_line(deadline)
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

    async def watch(self, device: str | None = None, *, reconnect: bool | ReconnectPolicy = False,
                    timeout: float | None = None, check_dropped: float | None = 1.0) -> AsyncGenerator[Message | Notice, None]:
        """The stream, as :meth:`forcescale.Client.watch` yields it."""
        loop = asyncio.get_running_loop()
        policy = reconnect if isinstance(reconnect, ReconnectPolicy) else (ReconnectPolicy() if reconnect else None)
        dropped = DroppedCheck(check_dropped, loop.time)
        failures = 0
        lost = False
        heard = loop.time()
        try:
            while True:
                if self._connection is None or not self._watching:
                    try:
                        await self.connect()
                        self._watching = True
                        await self.request({"class": "WATCH", "enable": True, "device": device}, Watch)
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
                        await asyncio.sleep(delay)
                        continue
                    if lost:
                        lost = False
                        dropped.reconnected()
                        assert self._connection is not None
                        yield Reconnected(version=self._connection.version, path=self.socket)
                    failures = 0
                    heard = loop.time()
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
                        await connection.send({"class": "STATUS"})
                        dropped.asked()
                    wait = dropped.due_in()
                    if timeout is not None:
                        left = max(0.0, heard + timeout - loop.time())
                        wait = left if wait is None else min(wait, left)
                    line = await connection.next_line(None if wait is None else loop.time() + wait)
                except _CAUGHT as error:
                    if policy is None or not retryable(error):
                        self.close()
                        raise
                    self.close()
                    failures = 0
                    lost = True
                    yield Disconnected(error=_as_forcescale(error, self.socket), retry_in=policy.delay(1))
                    await asyncio.sleep(policy.delay(1))
                    continue
                if line is None:
                    if timeout is not None and loop.time() - heard >= timeout:
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
                    heard = loop.time()
                    yield line
                    continue
                raise_if_error(line)
        finally:
            if self._watching and self._connection is not None:
                self._watching = False
                try:
                    await self._connection.send({"class": "WATCH", "enable": False})
                except (ForcescaleError, OSError):
                    self.close()
            self._pending.clear()

    async def weigh(self, timeout: float = 30.0, device: str | None = None) -> Weight:
        """A steady weight, as :meth:`forcescale.Client.weigh` gives it."""
        status = await self.status(device)
        served = weighing_device(status, self.socket)
        weighing = Weighing()
        take = weighing.take

        deadline = asyncio.get_running_loop().time() + timeout
        await self.request({"class": "WATCH", "enable": True, "device": served}, Watch, on_stream=take)
        try:
            poll = await self.request({"class": "POLL", "device": served}, Poll, on_stream=take)
            take(poll.reading)
            connection = self._connection
            assert connection is not None
            while weighing.found is None:
                line = await connection.next_line(deadline)
                if line is None:
                    raise weighing.timed_out(timeout)
                if isinstance(line, ProtocolError):
                    raise line
                take(line)
        finally:
            if self._connection is not None:
                try:
                    await self.request({"class": "WATCH", "enable": False}, Watch, on_stream=lambda _: None)
                except ForcescaleError:
                    self.close()
        return weight_of(weighing.found, status)
