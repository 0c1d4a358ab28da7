"""forcescale: the Python client of forcescaled, the daemon that weighs with a pressure
touchpad or pen tablet (docs/python.md).

>>> import forcescale
>>> print(forcescale.Client().weigh())      # doctest: +SKIP
179.7 g ± 0.9 g

:class:`Client` blocks; :class:`AsyncClient` is its asyncio twin; :mod:`forcescale.log`
reads the daemon's force log. Only the standard library is needed.
"""

from ._core import (
    PROTOCOL_MAJOR,
    SYSTEM_SOCKET,
    Disconnected,
    Dropped,
    Notice,
    ReconnectPolicy,
    Reconnected,
    Weight,
    default_socket,
)
from .aio import AsyncClient
from .client import Client
from .errors import (
    ConnectError,
    ConnectionClosedError,
    DaemonError,
    ForcescaleError,
    NoDeviceError,
    NoStableReadingError,
    NotListeningError,
    NotPermittedError,
    ProtocolError,
    ReplyTimeoutError,
    SocketPermissionError,
    UnknownDeviceError,
    UnsupportedProtocolError,
)
from .messages import (
    Calibrate,
    Calibration,
    CalibrationSummary,
    CurvePoint,
    Device,
    Devices,
    Error,
    Grab,
    LogSummary,
    Message,
    Peak,
    Poll,
    PressureAxis,
    Reading,
    Record,
    Rumble,
    RumbleSummary,
    ServedDevice,
    Status,
    Tare,
    Unknown,
    Version,
    Watch,
    decode_line,
)

__version__ = "0.1.0"

__all__ = [
    "AsyncClient", "Client", "ReconnectPolicy", "Weight", "Notice", "Dropped", "Disconnected", "Reconnected",
    "default_socket", "SYSTEM_SOCKET", "PROTOCOL_MAJOR", "decode_line",
    "ForcescaleError", "ConnectError", "NotListeningError", "SocketPermissionError", "ConnectionClosedError",
    "ReplyTimeoutError", "ProtocolError", "UnsupportedProtocolError", "DaemonError", "NotPermittedError",
    "UnknownDeviceError", "NoDeviceError", "NoStableReadingError",
    "Record", "Message", "Version", "Reading", "Peak", "Watch", "Poll", "PressureAxis", "Device", "Devices",
    "CalibrationSummary", "LogSummary", "RumbleSummary", "ServedDevice", "Status", "Tare", "Calibrate",
    "CurvePoint", "Calibration", "Rumble", "Grab", "Error", "Unknown",
]
