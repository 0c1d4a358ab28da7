"""The exceptions of forcescale: each says what went wrong and what to do, in the words
the command-line client uses, and those that answer an ERROR of the daemon carry it."""

from __future__ import annotations

__all__ = [
    "ForcescaleError",
    "ConnectError",
    "NotListeningError",
    "SocketPermissionError",
    "ConnectionClosedError",
    "ReplyTimeoutError",
    "ProtocolError",
    "UnsupportedProtocolError",
    "DaemonError",
    "NotPermittedError",
    "UnknownDeviceError",
    "NoDeviceError",
    "NoStableReadingError",
]


class ForcescaleError(Exception):
    """Anything that went wrong talking to forcescaled or reading its log.

    ``message`` is the sentence to show a person (``str(error)`` is the same).
    """

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class ConnectError(ForcescaleError, ConnectionError):
    """Connecting to the daemon's socket failed (the path is too long, not a socket…)."""

    def __init__(self, message: str, *, path: str) -> None:
        super().__init__(message)
        self.path = path


class NotListeningError(ConnectError):
    """Nothing listens on the socket: no socket file, or a stale one."""

    def __init__(self, path: str) -> None:
        super().__init__(
            f"no forcescaled is listening on {path}; start it with 'forcescaled' "
            "(or 'systemctl start forcescaled'), or give --socket",
            path=path,
        )


class SocketPermissionError(ForcescaleError, PermissionError):
    """The socket file's permissions keep this user out; ``group`` is the group to join."""

    def __init__(self, path: str, group: str) -> None:
        super().__init__(f"permission denied on {path}: join group '{group}' (then log in again)")
        self.path = path
        self.group = group


class ConnectionClosedError(ForcescaleError, ConnectionError):
    """The daemon closed the connection (it stopped, or dropped this client)."""

    def __init__(self, path: str) -> None:
        super().__init__(f"forcescaled closed the connection on {path}")
        self.path = path


class ReplyTimeoutError(ForcescaleError, TimeoutError):
    """No reply of the expected class came in time."""

    def __init__(self, path: str, waiting_for: str, seconds: float) -> None:
        super().__init__(f"{path}: no {waiting_for} reply from forcescaled within {plain_seconds(seconds)} s")
        self.path = path
        self.waiting_for = waiting_for
        self.seconds = seconds


class ProtocolError(ForcescaleError):
    """The daemon sent a line that is not a protocol message: not a JSON object with a
    ``class``, or a known class with a field missing or of the wrong type. ``line`` is the
    line as received."""

    def __init__(self, path: str, line: str, problem: str) -> None:
        shown = line if len(line) <= 80 else line[:80] + "…"
        super().__init__(f"{path}: forcescaled sent a line that is not a protocol message ({problem}): {shown}")
        self.path = path
        self.line = line
        self.problem = problem


class UnsupportedProtocolError(ForcescaleError):
    """The daemon speaks a protocol major version this client does not know."""

    def __init__(self, path: str, major: int, known: int) -> None:
        super().__init__(
            f"{path}: forcescaled speaks protocol {major}, this forcescale speaks {known}; install matching versions"
        )
        self.path = path
        self.major = major


class DaemonError(ForcescaleError):
    """The daemon answered a request with an ERROR line.

    ``message`` is the daemon's sentence, ``request`` the class of the request it refused
    (``None`` when the line got no further than that), ``line`` the ERROR line as sent.
    """

    def __init__(self, message: str, request: str | None = None, line: str = "") -> None:
        super().__init__(message)
        self.request = request
        self.line = line


class NotPermittedError(DaemonError, PermissionError):
    """The daemon refused a control request (TARE, CALIBRATE, GRAB, RUMBLE…) to this user:
    its message names who may."""


class UnknownDeviceError(DaemonError, LookupError):
    """The request named a device the daemon does not serve, or named none while several
    are served: the daemon's message lists those it serves."""


class NoDeviceError(ForcescaleError):
    """``weigh`` found no single device to weigh on: none is open, or several are served
    and none was named."""


class NoStableReadingError(ForcescaleError, TimeoutError):
    """``weigh`` saw no stable reading with something on the pad within its timeout.

    ``drift`` is the weight's trend in grams per second when it was still moving at the end
    (protocol 1.8), and ``grams`` where it was then; the message says what that most likely
    means, in ``forcescale weigh``'s words."""

    def __init__(self, seconds: float, drift: float | None = None, grams: float | None = None) -> None:
        if drift is None or grams is None:
            message = f"no stable reading within {plain_seconds(seconds)} s: put the object on the pad and keep it still"
        else:
            meaning = (
                "a pad's firmware lets go of a contact it does not take for a finger this way: rest a finger on the object, "
                'or weigh it on a conductive platform (docs/weighing.md, "A weight that does not stop")'
                if drift < 0
                else "it is still being pressed or settling into the pad: let go of it and keep it still, or give --timeout more time "
                '(docs/weighing.md, "A weight that does not stop")'
            )
            message = (
                f"the weight did not stop within {plain_seconds(seconds)} s: drifting {_one_decimal(drift)} g/s "
                f"at {_one_decimal(grams)} g, so it is not a weight yet; {meaning}"
            )
        super().__init__(message)
        self.seconds = seconds
        self.drift = drift
        self.grams = grams


def _one_decimal(value: float) -> str:
    """``-6.0``: one decimal, rounded half away from zero, as the CLI writes grams."""
    scaled = int(abs(value) * 10 + 0.5)
    sign = "-" if value < 0 and scaled != 0 else ""
    return f"{sign}{scaled // 10}.{scaled % 10}"


def plain_seconds(value: float) -> str:
    """``10`` for 10.0, ``2.5`` for 2.5: a duration as a person would type it."""
    if value == round(value) and abs(value) < 1e15:
        return str(int(value))
    return repr(float(value))


def daemon_error(message: str, request: str | None, line: str) -> DaemonError:
    """The exception for an ERROR line, typed by what its message says."""
    if message.startswith("permission denied"):
        return NotPermittedError(message, request, line)
    if (message.startswith("no device '") and "is served" in message) or (
        "devices are served (" in message and "name one" in message
    ):
        return UnknownDeviceError(message, request, line)
    return DaemonError(message, request, line)
