"""The lines forcescaled sends (docs/protocol.md), one dataclass per class.

Every documented field is an attribute under its protocol name (``settled_grams``,
``proto_minor``), ``None`` where the protocol leaves an optional field out. As the
protocol's forward-compatibility rules ask, nothing a later daemon adds is dropped: fields
this module does not know are kept in ``extra`` (in the order they came), and a line of a
class it does not know becomes an :class:`Unknown` with all of its fields. Each message
keeps the ``line`` it was read from, and :meth:`Message.to_line` writes it again as the
daemon does (keys in the documented order, times with six decimals, absent fields left out).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field, fields, MISSING
from typing import Any, ClassVar, TypeVar, Union

__all__ = [
    "Record",
    "Message",
    "Version",
    "Reading",
    "Peak",
    "Watch",
    "Poll",
    "PressureAxis",
    "Device",
    "Devices",
    "CalibrationSummary",
    "LogSummary",
    "RumbleSummary",
    "ServedDevice",
    "Status",
    "Tare",
    "Calibrate",
    "CurvePoint",
    "Calibration",
    "Rumble",
    "Grab",
    "Error",
    "Unknown",
    "decode_line",
    "LineProblem",
    "MESSAGE_CLASSES",
]

# What a field holds, for reading it from JSON and writing it back.
_Kind = Union[str, tuple[str, str]]


class LineProblem(ValueError):
    """Why a line is not a protocol message (wrapped in ``ProtocolError`` by the clients)."""


@dataclass(kw_only=True)
class Record:
    """An object of the protocol: a message or one nested in it. ``extra`` holds the fields
    this module does not know, as received."""

    # (JSON key, attribute, kind) in the order the daemon writes them.
    _SPEC: ClassVar[tuple[tuple[str, str, _Kind], ...]] = ()

    extra: dict[str, Any] = field(default_factory=dict, repr=False)

    def to_dict(self) -> dict[str, Any]:
        """The record as a JSON object (known fields in the protocol's order, then ``extra``)."""
        result: dict[str, Any] = {}
        for key, attribute, kind in self._SPEC:
            value = getattr(self, attribute)
            if value is not None:
                result[key] = _plain(value, kind)
        result.update(self.extra)
        return result


@dataclass(kw_only=True)
class Message(Record):
    """A line of the daemon: ``CLASS`` is its ``class``; ``line`` the text it was read from
    (without its newline; empty for a message made here)."""

    CLASS: ClassVar[str] = ""

    line: str = field(default="", repr=False, compare=False)

    @property
    def class_name(self) -> str:
        """The line's ``class``."""
        return self.CLASS

    def to_dict(self) -> dict[str, Any]:
        return {"class": self.class_name, **super().to_dict()}

    def to_line(self) -> str:
        """The line as the daemon writes this message: what ``line`` holds for a message
        read from the daemon, byte for byte, when it has no ``extra`` fields."""
        return _write_object(self.class_name, self)


# MARK: - The stream


@dataclass(kw_only=True)
class Reading(Message):
    """READING: one measurement. ``grams`` are after tare, always grams; a ``saturated``
    reading's weight is a lower bound. ``settled_grams`` (on stable readings) is the weight
    a scale shows; ``drift`` (protocol 1.8) the steady change in grams per second."""

    CLASS: ClassVar[str] = "READING"
    _SPEC = (
        ("device", "device", "str"),
        ("time", "time", "time"),
        ("raw", "raw", "int"),
        ("force", "force", "float"),
        ("grams", "grams", "float"),
        ("saturated", "saturated", "bool"),
        ("contacts", "contacts", "int"),
        ("stable", "stable", "bool"),
        ("model", "model", "str"),
        ("beyond_calibration", "beyond_calibration", "float"),
        ("settled_grams", "settled_grams", "float"),
        ("drift", "drift", "float"),
    )

    time: float
    raw: int
    force: float
    grams: float
    saturated: bool
    contacts: int
    stable: bool
    model: str
    device: str | None = None
    beyond_calibration: float | None = None
    settled_grams: float | None = None
    drift: float | None = None

    @property
    def shown_grams(self) -> float:
        """The weight to show: the settled weight while stable, the frame's otherwise."""
        return self.settled_grams if self.settled_grams is not None else self.grams

    @property
    def is_settled_weight(self) -> bool:
        """Whether this is the weight of something resting on the pad: stable, touching."""
        return self.stable and self.contacts > 0


@dataclass(kw_only=True)
class Peak(Message):
    """PEAK: a frame reached the peak threshold (the cue for one rumble)."""

    CLASS: ClassVar[str] = "PEAK"
    _SPEC = (
        ("device", "device", "str"),
        ("time", "time", "time"),
        ("raw", "raw", "int"),
        ("grams", "grams", "float"),
        ("rumble", "rumble", "str"),
        ("rumble_latency", "rumble_latency", "float"),
        ("rumble_errno", "rumble_errno", "int"),
    )

    time: float
    raw: int
    grams: float
    device: str | None = None
    rumble: str | None = None
    rumble_latency: float | None = None
    rumble_errno: int | None = None


# MARK: - Replies


@dataclass(kw_only=True)
class Version(Message):
    """VERSION: the greeting."""

    CLASS: ClassVar[str] = "VERSION"
    _SPEC = (("release", "release", "str"), ("proto_major", "proto_major", "int"), ("proto_minor", "proto_minor", "int"))

    release: str
    proto_major: int
    proto_minor: int


@dataclass(kw_only=True)
class Watch(Message):
    """WATCH's reply."""

    CLASS: ClassVar[str] = "WATCH"
    _SPEC = (("enable", "enable", "bool"), ("device", "device", "str"))

    enable: bool
    device: str | None = None


@dataclass(kw_only=True)
class Poll(Message):
    """POLL's reply: the newest reading (``readings``: each device's, when several are served)."""

    CLASS: ClassVar[str] = "POLL"
    _SPEC = (("time", "time", "time"), ("reading", "reading", "Reading"), ("readings", "readings", ("list", "Reading")))

    time: float | None = None
    reading: Reading | None = None
    readings: list[Reading] | None = None


@dataclass(kw_only=True)
class PressureAxis(Record):
    """One pressure axis of a DEVICES entry."""

    _SPEC = (
        ("axis", "axis", "str"),
        ("min", "min", "int"),
        ("max", "max", "int"),
        ("fuzz", "fuzz", "int"),
        ("resolution", "resolution", "int"),
    )

    axis: str
    min: int
    max: int
    fuzz: int
    resolution: int


@dataclass(kw_only=True)
class Device(Record):
    """One entry of DEVICES (``forcescale devices --json``)."""

    _SPEC = (
        ("path", "path", "str"),
        ("name", "name", "str"),
        ("id", "id", "str"),
        ("kind", "kind", "str"),
        ("active", "active", "bool"),
        ("pressure", "pressure", ("list", "PressureAxis")),
        ("canWeigh", "can_weigh", "bool"),
        ("canRumble", "can_rumble", "bool"),
        ("error", "error", "str"),
    )

    path: str
    active: bool
    name: str | None = None
    id: str | None = None
    kind: str | None = None
    pressure: list[PressureAxis] | None = None
    can_weigh: bool | None = None
    can_rumble: bool | None = None
    error: str | None = None


@dataclass(kw_only=True)
class Devices(Message):
    """DEVICES's reply: the input devices the daemon found."""

    CLASS: ClassVar[str] = "DEVICES"
    _SPEC = (("devices", "devices", ("list", "Device")),)

    devices: list[Device]


@dataclass(kw_only=True)
class CalibrationSummary(Record):
    """A device's calibration in STATUS."""

    _SPEC = (
        ("points", "points", "int"),
        ("tare", "tare", "float"),
        ("model", "model", "str"),
        ("uncertainty", "uncertainty", "float"),
    )

    points: int
    tare: float
    model: str | None = None
    uncertainty: float | None = None


@dataclass(kw_only=True)
class LogSummary(Record):
    """STATUS's ``log``: the force log's state."""

    _SPEC = (
        ("path", "path", "str"),
        ("written", "written", "int"),
        ("pending", "pending", "int"),
        ("dropped", "dropped", "int"),
        ("error", "error", "str"),
    )

    path: str
    written: int
    pending: int
    dropped: int
    error: str | None = None


@dataclass(kw_only=True)
class RumbleSummary(Record):
    """STATUS's ``rumbles``: the PEAK rumbles since the daemon started."""

    _SPEC = (
        ("played", "played", "int"),
        ("failed", "failed", "int"),
        ("p50", "p50", "float"),
        ("p99", "p99", "float"),
        ("max", "max", "float"),
    )

    played: int
    failed: int
    p50: float | None = None
    p99: float | None = None
    max: float | None = None


@dataclass(kw_only=True)
class ServedDevice(Record):
    """One device served, in STATUS's ``devices``."""

    _SPEC = (
        ("device", "device", "str"),
        ("name", "name", "str"),
        ("model", "model", "str"),
        ("calibration", "calibration", "CalibrationSummary"),
        ("rumble", "rumble", "str"),
        ("pressure", "pressure", "str"),
        ("contacts", "contacts", "str"),
        ("full_scale", "full_scale", "float"),
        ("feedback", "feedback", "str"),
        ("rumble_error", "rumble_error", "str"),
        ("dropped_events", "dropped_events", "int"),
    )

    device: str
    name: str
    calibration: CalibrationSummary
    dropped_events: int
    model: str | None = None
    rumble: str | None = None
    pressure: str | None = None
    contacts: str | None = None
    full_scale: float | None = None
    feedback: str | None = None
    rumble_error: str | None = None


@dataclass(kw_only=True)
class Status(Message):
    """STATUS's reply. ``dropped`` counts stream lines discarded for watchers that read too
    slowly, over all clients, since the daemon started."""

    CLASS: ClassVar[str] = "STATUS"
    _SPEC = (
        ("release", "release", "str"),
        ("uptime", "uptime", "float"),
        ("clients", "clients", "int"),
        ("device", "device", "str"),
        ("model", "model", "str"),
        ("calibration", "calibration", "CalibrationSummary"),
        ("rumble", "rumble", "str"),
        ("dropped", "dropped", "int"),
        ("log", "log", "LogSummary"),
        ("rumbles", "rumbles", "RumbleSummary"),
        ("devices", "devices", ("list", "ServedDevice")),
    )

    release: str
    uptime: float
    clients: int
    dropped: int
    device: str | None = None
    model: str | None = None
    calibration: CalibrationSummary | None = None
    rumble: str | None = None
    log: LogSummary | None = None
    rumbles: RumbleSummary | None = None
    devices: list[ServedDevice] | None = None


@dataclass(kw_only=True)
class Tare(Message):
    """TARE's reply: the tare offset now stored."""

    CLASS: ClassVar[str] = "TARE"
    _SPEC = (("device", "device", "str"), ("grams", "grams", "float"))

    grams: float
    device: str | None = None


@dataclass(kw_only=True)
class Calibrate(Message):
    """CALIBRATE's reply: the point measured (``sd`` and ``n``: its frames' spread and count)."""

    CLASS: ClassVar[str] = "CALIBRATE"
    _SPEC = (
        ("device", "device", "str"),
        ("grams", "grams", "float"),
        ("raw", "raw", "float"),
        ("points", "points", "int"),
        ("sd", "sd", "float"),
        ("n", "n", "int"),
        ("added", "added", "bool"),
    )

    grams: float
    raw: float
    points: int
    device: str | None = None
    sd: float | None = None
    n: int | None = None
    added: bool | None = None


@dataclass(kw_only=True)
class CurvePoint(Record):
    """One point of CALIBRATION's ``curve``, with how the fit judges it."""

    _SPEC = (
        ("raw", "raw", "float"),
        ("grams", "grams", "float"),
        ("sd", "sd", "float"),
        ("n", "n", "int"),
        ("residual", "residual", "float"),
        ("loo", "loo", "float"),
        ("expected", "expected", "float"),
    )

    raw: float
    grams: float
    sd: float | None = None
    n: int | None = None
    residual: float | None = None
    loo: float | None = None
    expected: float | None = None


@dataclass(kw_only=True)
class Calibration(Message):
    """CALIBRATION's reply: a device's curve, its fit and tare."""

    CLASS: ClassVar[str] = "CALIBRATION"
    _SPEC = (
        ("device", "device", "str"),
        ("points", "points", "int"),
        ("curve", "curve", ("list", "CurvePoint")),
        ("tare", "tare", "float"),
        ("model", "model", "str"),
        ("parameters", "parameters", "numbers"),
        ("uncertainty", "uncertainty", "float"),
        ("preview", "preview", "bool"),
    )

    points: int
    curve: list[CurvePoint]
    tare: float
    device: str | None = None
    model: str | None = None
    parameters: dict[str, float] | None = None
    uncertainty: float | None = None
    preview: bool | None = None


@dataclass(kw_only=True)
class Rumble(Message):
    """RUMBLE's reply: the pattern started playing."""

    CLASS: ClassVar[str] = "RUMBLE"
    _SPEC = (("pattern", "pattern", "str"),)

    pattern: str


@dataclass(kw_only=True)
class Grab(Message):
    """GRAB's reply, or (with ``ended``) the notice that a grab ended unasked."""

    CLASS: ClassVar[str] = "GRAB"
    _SPEC = (
        ("device", "device", "str"),
        ("grabbed", "grabbed", "bool"),
        ("seconds", "seconds", "float"),
        ("ended", "ended", "str"),
    )

    grabbed: bool
    device: str | None = None
    seconds: float | None = None
    ended: str | None = None


@dataclass(kw_only=True)
class Error(Message):
    """ERROR: the daemon refused a request (``request``: its class, when known)."""

    CLASS: ClassVar[str] = "ERROR"
    _SPEC = (("message", "message", "str"), ("request", "request", "str"))

    message: str
    request: str | None = None


@dataclass(kw_only=True)
class Unknown(Message):
    """A line of a class this module does not know (a later daemon's): kept whole, its
    fields (all but ``class``) in ``extra``."""

    name: str

    @property
    def class_name(self) -> str:
        return self.name


_KNOWN: tuple[type[Message], ...] = (
    Version, Reading, Peak, Watch, Poll, Devices, Status, Tare, Calibrate, Calibration, Rumble, Grab, Error
)
MESSAGE_CLASSES: dict[str, type[Message]] = {cls.CLASS: cls for cls in _KNOWN}
"""The message class of each ``class`` this module knows."""

_NESTABLE: tuple[type[Record], ...] = (
    Reading, PressureAxis, Device, CalibrationSummary, LogSummary, RumbleSummary, ServedDevice, CurvePoint
)
_NESTED: dict[str, type[Record]] = {cls.__name__: cls for cls in _NESTABLE}

_R = TypeVar("_R", bound=Record)


def decode_line(line: str) -> Message:
    """The message a line of the daemon holds.

    - Parameters: line: one line, without its newline.
    - Returns: the message of its class, or :class:`Unknown` for a class not known here.
    - Raises: :class:`LineProblem` when the line is not a JSON object with a string
      ``class``, or a known class has a field missing or of the wrong type.
    """
    try:
        value = json.loads(line)
    except ValueError as error:
        raise LineProblem(f"not JSON: {error}") from None
    if not isinstance(value, dict) or not isinstance(value.get("class"), str):
        raise LineProblem('not a JSON object with a "class"')
    name = value["class"]
    cls = MESSAGE_CLASSES.get(name)
    if cls is None:
        return Unknown(name=name, extra={k: v for k, v in value.items() if k != "class"}, line=line)
    message = _decode(cls, value, "")
    message.line = line
    return message


def _decode(cls: type[_R], obj: dict[str, Any], where: str) -> _R:
    known = {key for key, _, _ in cls._SPEC}
    required = _required(cls)
    values: dict[str, Any] = {}
    for key, attribute, kind in cls._SPEC:
        value = obj.get(key)
        if value is None:
            if attribute in required:
                raise LineProblem(f"missing '{where}{key}'")
            continue
        values[attribute] = _convert(value, kind, where + key)
    extra = {k: v for k, v in obj.items() if k not in known and k != "class"}
    return cls(**values, extra=extra)


_REQUIRED: dict[type[Record], frozenset[str]] = {}


def _required(cls: type[Record]) -> frozenset[str]:
    names = _REQUIRED.get(cls)
    if names is None:
        names = frozenset(
            f.name for f in fields(cls) if f.default is MISSING and f.default_factory is MISSING
        )
        _REQUIRED[cls] = names
    return names


def _convert(value: Any, kind: _Kind, where: str) -> Any:
    if kind == "str":
        if isinstance(value, str):
            return value
        raise LineProblem(f"'{where}' must be a string")
    if kind == "bool":
        if isinstance(value, bool):
            return value
        raise LineProblem(f"'{where}' must be true or false")
    if kind == "int":
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        if isinstance(value, float) and value.is_integer():
            return int(value)
        raise LineProblem(f"'{where}' must be a whole number")
    if kind in ("float", "time"):
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
        raise LineProblem(f"'{where}' must be a number")
    if kind == "numbers":
        if isinstance(value, dict) and all(
            isinstance(v, (int, float)) and not isinstance(v, bool) for v in value.values()
        ):
            return {k: float(v) for k, v in value.items()}
        raise LineProblem(f"'{where}' must be an object of numbers")
    if isinstance(kind, tuple):
        _, name = kind
        if not isinstance(value, list):
            raise LineProblem(f"'{where}' must be an array")
        return [_nested(item, name, f"{where}[{index}]") for index, item in enumerate(value)]
    assert isinstance(kind, str)
    return _nested(value, kind, where)


def _nested(value: Any, name: str, where: str) -> Record:
    if not isinstance(value, dict):
        raise LineProblem(f"'{where}' must be an object")
    return _decode(_NESTED[name], value, where + ".")


def _plain(value: Any, kind: _Kind) -> Any:
    if isinstance(value, Record):
        return value.to_dict()
    if isinstance(value, list):
        return [_plain(item, kind) for item in value]
    return value


# MARK: - Writing lines as the daemon does


def _write_object(class_name: str | None, record: Record) -> str:
    parts: list[str] = []
    if class_name is not None:
        parts.append('"class":' + json.dumps(class_name, ensure_ascii=False))
    for key, attribute, kind in record._SPEC:
        value = getattr(record, attribute)
        if value is not None:
            parts.append(json.dumps(key) + ":" + _write_value(value, kind))
    for key, value in record.extra.items():
        parts.append(json.dumps(key, ensure_ascii=False) + ":" + _write_value(value, "any"))
    return "{" + ",".join(parts) + "}"


def _write_value(value: Any, kind: _Kind) -> str:
    if isinstance(value, Reading):
        return _write_object(Reading.CLASS, value)
    if isinstance(value, Record):
        return _write_object(None, value)
    if isinstance(value, list):
        return "[" + ",".join(_write_value(item, kind) for item in value) + "]"
    if isinstance(value, dict):
        return "{" + ",".join(
            json.dumps(k, ensure_ascii=False) + ":" + _write_value(v, "any") for k, v in value.items()
        ) + "}"
    if kind == "time" and isinstance(value, float):
        return f"{value:.6f}"
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError("NaN and infinities are not JSON numbers")
        return repr(value)
    return json.dumps(value, ensure_ascii=False)
