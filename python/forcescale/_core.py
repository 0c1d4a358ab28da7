"""What the blocking and the asyncio clients share: the socket the CLI would choose, the
reconnect policy of ``forcescale watch --reconnect``, cutting bytes into lines, the
notices a watch yields beside the daemon's lines, and weighing's rules."""

from __future__ import annotations

import collections
import errno
import grp
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

from .errors import (
    ConnectError,
    ForcescaleError,
    NoDeviceError,
    NoStableReadingError,
    NotListeningError,
    ProtocolError,
    SocketPermissionError,
    UnsupportedProtocolError,
    daemon_error,
    plain_seconds,
)
from .messages import Error, LineProblem, Message, Peak, Reading, Status, Version, decode_line

SYSTEM_SOCKET = "/run/forcescale/forcescale.sock"
"""The system daemon's socket (forcescaled running as root)."""

USER_SOCKET_NAME = "forcescale.sock"
"""The socket's name in ``$XDG_RUNTIME_DIR`` (forcescaled running as a user)."""

PROTOCOL_MAJOR = 1
"""The protocol major version this client speaks."""

# A line longer than this is not the protocol: the connection is given up rather than
# buffered without bound (the daemon's own requests are at most 64 KiB).
MAXIMUM_LINE_BYTES = 16 << 20

# Stream lines kept while a request waits for its reply, at most (the oldest go first).
MAXIMUM_PENDING = 4096

# The advice forcescale gives when the daemon has no device (forcescale weigh, status).
NO_DEVICE_ADVICE = "plug one in or name it with forcescaled --device; 'forcescale devices' lists what this machine has"
DEMO_ROUTE = "Without one, try the demo: forcescale demo --write demo.events, then forcescaled --replay demo.events --loop"


def default_socket() -> str:
    """Where forcescaled listens unless told otherwise, as the CLI chooses it: the system
    socket when it exists, else ``$XDG_RUNTIME_DIR/forcescale.sock`` (a user's daemon);
    without either, the system path, so that an error names it."""
    if os.path.lexists(SYSTEM_SOCKET):
        return SYSTEM_SOCKET
    base = os.environ.get("XDG_RUNTIME_DIR", "")
    if base:
        return base + "/" + USER_SOCKET_NAME
    return SYSTEM_SOCKET


def connect_error(path: str, error: OSError) -> ForcescaleError:
    """The exception for a failed ``connect(2)`` on ``path``, in the CLI's words."""
    if error.errno in (errno.ENOENT, errno.ECONNREFUSED, errno.ENOTDIR):
        return NotListeningError(path)
    if error.errno in (errno.EACCES, errno.EPERM):
        return SocketPermissionError(path, group_to_join(path))
    reason = os.strerror(error.errno).lower() if error.errno else str(error)
    return ConnectError(f"cannot connect to forcescaled: {path}: {reason}", path=path)


def group_to_join(path: str) -> str:
    """The group whose members may connect: the socket file's, unless it is root's (then
    the packaging's group, ``forcescale``)."""
    try:
        gid = os.stat(path).st_gid
        if gid != 0:
            return grp.getgrgid(gid).gr_name
    except (OSError, KeyError):
        pass
    return "forcescale"


@dataclass(frozen=True)
class ReconnectPolicy:
    """How a watch tries again after losing the daemon, as ``forcescale watch --reconnect``
    does: the first retry after ``initial_delay`` seconds, each further one after twice the
    wait before it, never more than ``maximum_delay``; a success starts over."""

    initial_delay: float = 0.1
    maximum_delay: float = 5.0

    def __post_init__(self) -> None:
        if not (self.initial_delay > 0 and self.maximum_delay >= self.initial_delay):
            raise ValueError("a reconnect delay must be positive and the cap at least the first delay")

    def delay(self, attempt: int) -> float:
        """The wait in seconds before retry ``attempt`` (1, 2…) since the loss."""
        delay = self.initial_delay
        for _ in range(max(attempt, 1) - 1):
            if delay >= self.maximum_delay:
                break
            delay *= 2
        return min(delay, self.maximum_delay)


class LineCutter:
    """Bytes in, the daemon's lines out (decoded, or the problem with one)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._pending = bytearray()

    def feed(self, data: bytes) -> list[Message | ProtocolError]:
        self._pending += data
        out: list[Message | ProtocolError] = []
        start = 0
        while True:
            end = self._pending.find(b"\n", start)
            if end < 0:
                break
            raw = bytes(self._pending[start:end])
            start = end + 1
            if raw.endswith(b"\r"):
                raw = raw[:-1]
            if raw:
                out.append(self.decode(raw))
        del self._pending[:start]
        if len(self._pending) > MAXIMUM_LINE_BYTES:
            raise ProtocolError(self.path, self._pending[:80].decode("utf-8", "replace"), "a line longer than 16 MiB")
        return out

    def decode(self, raw: bytes) -> Message | ProtocolError:
        text = raw.decode("utf-8", "replace")
        try:
            return decode_line(text)
        except LineProblem as problem:
            return ProtocolError(self.path, text, str(problem))


def check_greeting(path: str, message: Message | ProtocolError) -> Version:
    """The greeting, checked: a VERSION of a major this client speaks."""
    if isinstance(message, ProtocolError):
        raise message
    if not isinstance(message, Version):
        raise ProtocolError(path, message.line, f"expected a VERSION line, got {message.class_name}")
    if message.proto_major != PROTOCOL_MAJOR:
        raise UnsupportedProtocolError(path, message.proto_major, PROTOCOL_MAJOR)
    return message


def raise_if_error(message: Message) -> None:
    """Raises the typed exception for an ERROR line."""
    if isinstance(message, Error):
        raise daemon_error(message.message, message.request, message.line)


def is_stream(message: Message) -> bool:
    """Whether a line belongs to the stream WATCH starts rather than answering a request:
    READING, PEAK, a GRAB that ended unasked, or a class this client does not know."""
    from .messages import Grab, Unknown

    return isinstance(message, (Reading, Peak, Unknown)) or (isinstance(message, Grab) and message.ended is not None)


_Reply = TypeVar("_Reply", bound=Message)


def sort_line(line: Message | ProtocolError, reply: type[_Reply], on_stream: Callable[[Message], None] | None,
              pending: collections.deque[Message] | None) -> _Reply | None:
    """Where a line met while a request waits belongs, for the blocking and the asyncio
    client alike: the reply itself (returned), an ERROR or an unreadable line (raised), a
    stream line for `on_stream` or, while a watch runs (`pending`), kept for it, as is a
    STATUS that answers the watch's dropped-line check; anything else is passed over."""
    if isinstance(line, ProtocolError):
        raise line
    if isinstance(line, reply) and not is_stream(line):
        return line
    raise_if_error(line)
    if is_stream(line):
        if on_stream is not None:
            on_stream(line)
        elif pending is not None:
            pending.append(line)
    elif isinstance(line, Status) and pending is not None:
        # The answer to a watch's dropped-line check, which the watch awaits.
        pending.append(line)
    return None


# MARK: - Notices a watch yields beside the daemon's lines


@dataclass(frozen=True)
class Notice:
    """Something a watch says about the connection rather than the daemon's readings."""


@dataclass(frozen=True)
class Dropped(Notice):
    """The daemon discarded ``count`` stream lines because a watcher did not read them in
    time (a client that falls behind misses lines rather than slowing the daemon down).
    ``total`` is STATUS's ``dropped`` now. The daemon counts over all its clients: with
    several slow watchers at once, some of the lines may have been another's."""

    count: int
    total: int

    def __str__(self) -> str:
        return f"forcescaled dropped {self.count} line{'s' if self.count != 1 else ''} of the stream: this watcher read too slowly"


@dataclass(frozen=True)
class Disconnected(Notice):
    """The daemon was lost (or could not be reached); the watch tries again in ``retry_in``
    seconds, then less and less often (only with ``reconnect``)."""

    error: ForcescaleError
    retry_in: float

    def __str__(self) -> str:
        return f"waiting for forcescaled ({self.error}); trying again in {plain_seconds(self.retry_in)} s, then less and less often"


@dataclass(frozen=True)
class Reconnected(Notice):
    """The daemon is back (only with ``reconnect``): the watch goes on."""

    version: Version
    path: str = ""

    def __str__(self) -> str:
        return f"watching forcescaled {self.version.release} on {self.path} again"


class DroppedCheck:
    """Asks STATUS now and then while watching and says when ``dropped`` grew."""

    def __init__(self, every: float | None, now: Callable[[], float]) -> None:
        self.every = every
        self._now = now
        self._due: float | None = now() if every is not None else None
        self._baseline: int | None = None
        self.outstanding = False

    def due_in(self) -> float | None:
        if self._due is None or self.outstanding:
            return None
        return max(0.0, self._due - self._now())

    def should_ask(self) -> bool:
        return self._due is not None and not self.outstanding and self._now() >= self._due

    def asked(self) -> None:
        self.outstanding = True

    def answered(self, status: Status) -> Dropped | None:
        self.outstanding = False
        if self.every is not None:
            self._due = self._now() + self.every
        previous, self._baseline = self._baseline, status.dropped
        if previous is not None and status.dropped > previous:
            return Dropped(count=status.dropped - previous, total=status.dropped)
        return None

    def reconnected(self) -> None:
        """A new daemon counts from 0 again."""
        self._baseline = None
        self.outstanding = False
        if self.every is not None:
            self._due = self._now()


# MARK: - Weighing


@dataclass(frozen=True)
class Weight:
    """A weight as ``forcescale weigh`` gives it.

    ``grams`` is the settled weight (after tare); ``uncertainty`` the calibration's bound
    in grams (grown past the heaviest calibration weight), ``None`` without one. When
    ``saturated``, the pad was at the top of its range and ``grams`` is a lower bound: the
    object weighs at least that. ``str()`` says it as the CLI does: ``179.7 g ± 0.9 g``,
    ``at least 385.0 g (saturated)``.
    """

    grams: float
    uncertainty: float | None
    saturated: bool
    beyond_calibration: float | None
    device: str | None
    reading: Reading = field(repr=False)

    @property
    def is_lower_bound(self) -> bool:
        """Whether ``grams`` is only a lower bound (the pad saturated)."""
        return self.saturated

    def __str__(self) -> str:
        if self.saturated:
            return f"at least {format_grams(self.grams)} (saturated)"
        text = format_grams(self.grams)
        if self.uncertainty is not None:
            text += " ± " + format_grams(self.uncertainty)
        if self.beyond_calibration is not None:
            text += f" (beyond the heaviest calibration weight, {sentence_grams(self.beyond_calibration)})"
        return text


def fixed(value: float, decimals: int) -> str:
    """``value`` with exactly ``decimals`` decimals, rounded half away from zero, as the
    CLI writes weights."""
    scale = 10**decimals
    scaled = int(abs(value) * scale + 0.5)
    sign = "-" if value < 0 and scaled != 0 else ""
    if decimals == 0:
        return sign + str(scaled)
    return f"{sign}{scaled // scale}.{scaled % scale:0{decimals}d}"


def format_grams(grams: float) -> str:
    """``179.7 g``: a weight as the CLI's gauge and commands write it."""
    return fixed(grams, 1) + " g"


def sentence_grams(grams: float) -> str:
    """``20 g``, ``5.7 g``: a weight in a sentence (no decimal when whole)."""
    tenths = round(grams * 10)
    return (str(tenths // 10) if tenths % 10 == 0 else repr(tenths / 10)) + " g"


class Weighing:
    """What ``weigh`` watches for: the first settled weight, and meanwhile the newest drift,
    so that a timeout can say the weight was still moving, as ``forcescale weigh`` does (a
    drift within the last second of event time, the contact still down, the newest reading
    not stable)."""

    def __init__(self) -> None:
        self.found: Reading | None = None
        self.latest: Reading | None = None
        self.drifting: Reading | None = None

    def take(self, message: Message | None) -> None:
        if self.found is not None or not isinstance(message, Reading):
            return
        if message.is_settled_weight:
            self.found = message
            return
        self.latest = message
        if message.drift is not None:
            self.drifting = message

    def timed_out(self, seconds: float) -> NoStableReadingError:
        moving, latest = self.drifting, self.latest
        if (moving is not None and latest is not None and latest.contacts > 0 and not latest.stable
                and latest.time - moving.time <= 1.0):
            return NoStableReadingError(seconds, moving.drift, moving.grams)
        return NoStableReadingError(seconds)


def weighing_device(status: Status, path: str) -> str:
    """The device ``weigh`` weighs on, from STATUS (asked with the device wanted, if any)."""
    if status.device is not None:
        return status.device
    if status.devices is not None and len(status.devices) > 1:
        names = ", ".join(entry.device for entry in status.devices)
        raise NoDeviceError(
            f"forcescaled serves {len(status.devices)} devices ({names}): name the one to weigh on with device=… "
            "(forcescale weigh --device)"
        )
    raise NoDeviceError(f"forcescaled on {path} has no pressure device open: {NO_DEVICE_ADVICE}. {DEMO_ROUTE}")


def weight_of(reading: Reading, status: Status) -> Weight:
    """The weight a settled reading gives, with the calibration's uncertainty from STATUS."""
    uncertainty: float | None = None
    calibration = status.calibration
    if reading.model == "calibrated" and calibration is not None and calibration.uncertainty is not None:
        uncertainty = calibration.uncertainty
        heaviest = reading.beyond_calibration
        if heaviest is not None:
            grams = reading.shown_grams + calibration.tare
            if heaviest > 0 and grams > heaviest:
                uncertainty = uncertainty * (grams / heaviest) ** 2
    return Weight(
        grams=reading.shown_grams,
        uncertainty=uncertainty,
        saturated=reading.saturated,
        beyond_calibration=reading.beyond_calibration,
        device=reading.device,
        reading=reading,
    )
