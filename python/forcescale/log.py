"""The force log, read-only: the SQLite file ``forcescaled --log`` keeps (one session per
touch, its readings, its PEAKs and its stable weight), read as ``forcescale log`` reads it.

>>> from forcescale import log
>>> with log.open() as db:                     # doctest: +SKIP
...     for session in db.sessions():
...         print(session.id, session.device, session.stable_text)

Times are seconds since the Unix epoch (the daemon stores whole microseconds). Opening
never writes: the file is opened read-only, and a WAL reader never waits for the daemon's
writer. :meth:`Log.to_dataframe` gives a pandas DataFrame when pandas is installed.
"""

from __future__ import annotations

import importlib
import os
import sqlite3
import urllib.parse
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from typing import Any

from ._core import format_grams
from .errors import ForcescaleError

__all__ = [
    "SCHEMA_VERSION",
    "DEFAULT_FILE",
    "LogError",
    "Session",
    "LoggedReading",
    "LoggedPeak",
    "StableWeight",
    "Log",
    "open",
    "default_path",
]

SCHEMA_VERSION = 4
"""The newest log schema this module reads (``PRAGMA user_version``); older ones are read
as they are."""

DEFAULT_FILE = "log.sqlite"
SYSTEM_STATE_DIRECTORY = "/var/lib/forcescale"

# ReadingFlags of the readings table.
_SATURATED = 1
_STABLE = 2


class LogError(ForcescaleError):
    """The log cannot be read: not there, not a force log, or written by a newer forcescale.
    ``path`` is the file."""

    def __init__(self, message: str, path: str) -> None:
        super().__init__(message)
        self.path = path


def default_path() -> str:
    """The log ``forcescale log`` reads by default: the system daemon's when it exists,
    else the one a daemon run by this user keeps (``$XDG_STATE_HOME/forcescale``, or
    ``~/.local/state/forcescale``)."""
    system_file = SYSTEM_STATE_DIRECTORY + "/" + DEFAULT_FILE
    if os.path.exists(system_file) or os.geteuid() == 0:
        return system_file
    state = os.environ.get("XDG_STATE_HOME", "")
    if state:
        return state + "/forcescale/" + DEFAULT_FILE
    home = os.environ.get("HOME", "")
    if home:
        return home + "/.local/state/forcescale/" + DEFAULT_FILE
    return system_file


@dataclass(frozen=True)
class Session:
    """One touch: from the first contact to the release.

    ``peak_grams`` and ``stable_grams`` (the settled weight of its last stable reading with a
    contact; ``None`` when it never settled) are lower bounds when their ``…_saturated`` flag
    is set. ``ended`` is ``None`` while the touch goes on.
    """

    id: int
    device: str
    device_key: str
    started: float
    ended: float | None
    readings: int
    peak_grams: float
    peak_saturated: bool
    stable_grams: float | None
    stable_saturated: bool
    model: str

    @property
    def stable_text(self) -> str:
        """The stable weight as the CLI says it: ``20.0 g``, ``at least 385.0 g (saturated)``, or ``-``."""
        if self.stable_grams is None:
            return "-"
        text = format_grams(self.stable_grams)
        return f"at least {text} (saturated)" if self.stable_saturated else text


@dataclass(frozen=True)
class LoggedReading:
    """One reading of a session, numbered ``n`` from 0 in the order the daemon got them."""

    session: int
    n: int
    time: float
    raw: int
    force: float
    grams: float
    saturated: bool
    stable: bool
    contacts: int


@dataclass(frozen=True)
class LoggedPeak:
    """A PEAK of a session, with what became of its rumble (``None`` where none was tried;
    ``rumble_latency`` in seconds)."""

    session: int
    time: float
    raw: int
    grams: float
    rumble: str | None
    rumble_latency: float | None
    rumble_errno: int | None


@dataclass(frozen=True)
class StableWeight:
    """A session's stable weight: what rested on the pad, as a scale shows it."""

    session: int
    device: str
    time: float
    grams: float
    saturated: bool


def _seconds(microseconds: int) -> float:
    return microseconds / 1e6


def _microseconds(seconds: float) -> int:
    return round(seconds * 1e6)


class Log:
    """An open force log, read-only. Close it (or use ``with``) when done."""

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        self.path = os.fspath(path) if path is not None else default_path()
        if not os.path.exists(self.path):
            raise LogError(
                f"{self.path}: no force log there (logging is off by default: start forcescaled with --log, "
                "or --log-db PATH, or set log = on in forcescale.conf; or give the log's path)",
                self.path,
            )
        uri = "file:" + urllib.parse.quote(os.path.abspath(self.path)) + "?mode=ro"
        try:
            self._db = sqlite3.connect(uri, uri=True, check_same_thread=False)
            self._db.execute("PRAGMA busy_timeout = 5000")
            version = int(self._db.execute("PRAGMA user_version").fetchone()[0])
            tables = int(self._db.execute("SELECT count(*) FROM sqlite_master").fetchone()[0])
        except sqlite3.DatabaseError as error:
            if hasattr(self, "_db"):
                self._db.close()
            if "not a database" in str(error) or "file is encrypted" in str(error):
                raise LogError(f"{self.path}: not an SQLite database (give the path of a force log written by forcescaled)", self.path) from None
            raise LogError(f"{self.path}: {error}", self.path) from None
        if version > SCHEMA_VERSION:
            self._db.close()
            raise LogError(
                f"{self.path}: written by a newer forcescale (log schema {version}; this one reads up to {SCHEMA_VERSION}): update forcescale",
                self.path,
            )
        if version == 0:
            self._db.close()
            message = "an SQLite database, but not a forcescale log (it has no sessions and readings tables)" if tables else "not a forcescale log yet (empty)"
            raise LogError(f"{self.path}: {message}", self.path)
        self.schema_version = version

    def __enter__(self) -> Log:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Closes the file."""
        self._db.close()

    def _query(self, sql: str, *parameters: Any) -> Iterator[tuple[Any, ...]]:
        try:
            yield from self._db.execute(sql, parameters)
        except sqlite3.Error as error:
            raise LogError(f"{self.path}: {error}", self.path) from None

    # MARK: Sessions

    def sessions(self, since: float | None = None, device: str | None = None) -> list[Session]:
        """The sessions, oldest first.

        - Parameters: since: only sessions still going on at or after this time (seconds
          since the epoch): ended then or later, or not ended. device: only those of devices
          whose name or key contains this, ignoring case.
        """
        # A log before version 4 knows no saturation: none is claimed, as forcescale log does.
        saturation = "s.peak_saturated, s.stable_saturated" if self.schema_version >= 4 else "0, 0"
        sql = (
            f"SELECT s.id, d.name, d.key, s.started, s.ended, s.readings, s.peak_grams, {saturation},"
            " s.stable_grams, s.model FROM sessions s LEFT JOIN devices d ON d.id = s.device"
            " WHERE (?1 IS NULL OR s.ended IS NULL OR s.ended >= ?1) ORDER BY s.id"
        )
        needle = device.lower() if device is not None else None
        result = []
        for row in self._query(sql, None if since is None else _microseconds(since)):
            name, key = row[1] or "", row[2] or ""
            if needle is not None and needle not in name.lower() and needle not in key.lower():
                continue
            result.append(Session(
                id=row[0], device=name, device_key=key, started=_seconds(row[3]),
                ended=None if row[4] is None else _seconds(row[4]), readings=row[5], peak_grams=row[6],
                peak_saturated=bool(row[7]), stable_saturated=bool(row[8]), stable_grams=row[9], model=row[10],
            ))
        return result

    def session(self, id: int) -> Session | None:
        """One session by its id, or ``None``."""
        return next((s for s in self.sessions() if s.id == id), None)

    # MARK: Readings, peaks, weights

    def readings(self, session: int | Session) -> Iterator[LoggedReading]:
        """A session's readings in order, read as they are iterated (a long session costs
        no more memory than a reading)."""
        number = session.id if isinstance(session, Session) else session
        for row in self._query(
            "SELECT n, time, raw, force, grams, flags, contacts FROM readings WHERE session = ?1 ORDER BY n", number
        ):
            yield LoggedReading(
                session=number, n=row[0], time=_seconds(row[1]), raw=row[2], force=row[3], grams=row[4],
                saturated=bool(row[5] & _SATURATED), stable=bool(row[5] & _STABLE), contacts=row[6],
            )

    def peaks(self, session: int | Session | None = None, since: float | None = None) -> list[LoggedPeak]:
        """The PEAKs of one session, or of all (from ``since`` on), in time order."""
        if self.schema_version < 2:
            return []
        rumble = "rumble, rumble_latency, rumble_errno" if self.schema_version >= 3 else "NULL, NULL, NULL"
        number = session.id if isinstance(session, Session) else session
        rows = self._query(
            f"SELECT session, time, raw, grams, {rumble} FROM peaks"
            " WHERE (?1 IS NULL OR session = ?1) AND (?2 IS NULL OR time >= ?2) ORDER BY time",
            number, None if since is None else _microseconds(since),
        )
        return [
            LoggedPeak(session=r[0], time=_seconds(r[1]), raw=r[2], grams=r[3], rumble=r[4],
                       rumble_latency=None if r[5] is None else _seconds(r[5]), rumble_errno=r[6])
            for r in rows
        ]

    def stable_weights(self, since: float | None = None, device: str | None = None) -> list[StableWeight]:
        """The stable weight of each session that settled, oldest first, timed at its end
        (or its start while it goes on)."""
        return [
            StableWeight(session=s.id, device=s.device, time=s.ended if s.ended is not None else s.started,
                         grams=s.stable_grams, saturated=s.stable_saturated)
            for s in self.sessions(since, device)
            if s.stable_grams is not None
        ]

    # MARK: pandas

    def to_dataframe(self, session: int | Session | None = None) -> Any:
        """A pandas DataFrame: a session's readings, or the sessions when none is named.
        pandas is imported here only, and needed only here.

        - Raises: LogError naming the package to install when pandas is not importable.
        """
        try:
            pandas: Any = importlib.import_module("pandas")
        except ImportError:
            raise LogError("to_dataframe needs pandas, which is not installed (Debian: apt install python3-pandas)", self.path) from None
        if session is None:
            return pandas.DataFrame([asdict(s) for s in self.sessions()], columns=list(Session.__dataclass_fields__))
        return pandas.DataFrame([asdict(r) for r in self.readings(session)], columns=list(LoggedReading.__dataclass_fields__))


def open(path: str | os.PathLike[str] | None = None) -> Log:
    """Opens the force log at ``path`` (by default where ``forcescale log`` looks) read-only.

    - Raises: LogError when there is no log there, it is not a force log, or a newer
      forcescale wrote it.
    """
    return Log(path)
