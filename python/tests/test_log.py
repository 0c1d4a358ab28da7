"""forcescale.log reads what forcescaled logged, and reads it as `forcescale log` does."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

import forcescale
from forcescale import log

from conftest import PATIENCE, Daemon, clean_environment, program, python, run, wait_for


def logged_demo(daemons: Callable[..., Daemon], demo_recording: str, scratch: Path) -> str:
    """The demo served under --log until its three objects have been logged (the mug's PEAK
    among them); returns the log's path."""
    path = str(scratch / "force.sqlite")
    daemon = daemons([demo_recording], ["--log-db", path])

    def three_sessions_ended() -> bool:
        try:
            with log.open(path) as db:
                ended = [s for s in db.sessions() if s.ended is not None]
                return len(ended) >= 3 and len(db.peaks()) >= 1
        except log.LogError:
            return False

    wait_for(three_sessions_ended, "three sessions and a PEAK in the force log")
    daemon.stop()
    return path


def micro(seconds: float) -> int:
    return round(seconds * 1e6)


def test_the_log_reads_as_forcescale_log_reads_it(daemons: Callable[..., Daemon], demo_recording: str, scratch: Path) -> None:
    path = logged_demo(daemons, demo_recording, scratch)
    listed = [json.loads(line) for line in run([program("forcescale"), "log", "sessions", "--json", "--db", path]).stdout.splitlines()]
    with log.open(path) as db:
        sessions = db.sessions()
        assert [s.id for s in sessions] == [entry["session"] for entry in listed]
        for session, entry in zip(sessions, listed):
            assert session.device == entry["device"] and session.device_key == entry["device_key"]
            assert micro(session.started) == round(entry["started"] * 1e6)
            assert session.readings == entry["readings"] and session.model == entry["model"]
            assert session.peak_grams == entry["peak_grams"]
            assert session.stable_grams == entry.get("stable_grams")
            assert session.peak_saturated == entry.get("peak_saturated", False)
            assert session.stable_saturated == entry.get("stable_saturated", False)
            exported = [json.loads(line) for line in run([program("forcescale"), "log", "export", "--session", str(session.id),
                                                          "--format", "jsonl", "--db", path]).stdout.splitlines()]
            readings = list(db.readings(session))
            assert len(readings) == len(exported) == session.readings
            for reading, row in zip(readings, exported):
                assert micro(reading.time) == round(row["time"] * 1e6)
                assert (reading.raw, reading.force, reading.grams, reading.contacts, reading.saturated, reading.stable) == (
                    row["raw"], row["force"], row["grams"], row["contacts"], row["saturated"], row["stable"])
        peaks = [json.loads(line) for line in run([program("forcescale"), "log", "export", "--peaks", "--format", "jsonl",
                                                   "--db", path]).stdout.splitlines()]
        assert [(p.session, micro(p.time), p.raw, p.grams) for p in db.peaks()] == [
            (p["session"], round(p["time"] * 1e6), p["raw"], p["grams"]) for p in peaks]
        # The mug pressed the pad to its top on landing: a saturated peak, and a PEAK.
        assert any(s.peak_saturated for s in sessions) and all(p.grams == 385.0 for p in db.peaks())
        weights = db.stable_weights()
        assert [w.session for w in weights] == [s.id for s in sessions if s.stable_grams is not None]
        assert {round(w.grams) for w in weights} >= {20, 180}
        assert db.session(sessions[0].id) == sessions[0] and db.session(10**9) is None
        assert db.sessions(device="DEMO PAD") == sessions and db.sessions(device="no such pad") == []
        last_end = sessions[-1].ended
        assert last_end is not None
        assert db.sessions(since=last_end) == [s for s in sessions if s.ended is None or s.ended >= last_end]
        frame = db.to_dataframe(sessions[0])
        assert len(frame) == sessions[0].readings and list(frame.columns)[:4] == ["session", "n", "time", "raw"]
        assert list(db.to_dataframe()["id"]) == [s.id for s in sessions]


def test_without_pandas_to_dataframe_says_what_to_install(daemons: Callable[..., Daemon], demo_recording: str, scratch: Path) -> None:
    path = logged_demo(daemons, demo_recording, scratch)
    script = ("import sys\nsys.modules['pandas'] = None\nfrom forcescale import log\n"
              "db = log.open(sys.argv[1])\nprint(len(db.sessions()))\n"
              "try:\n    db.to_dataframe()\nexcept log.LogError as e:\n    print(e)\n")
    result = python(script, args=[path])
    assert result.returncode == 0, result.stderr
    count, message = result.stdout.splitlines()
    assert int(count) >= 3
    assert message == "to_dataframe needs pandas, which is not installed (Debian: apt install python3-pandas)"


def test_what_is_not_a_log_is_named(scratch: Path) -> None:
    missing = str(scratch / "none.sqlite")
    with pytest.raises(log.LogError) as error:
        log.open(missing)
    cli = run([program("forcescale"), "log", "sessions", "--db", missing])
    assert str(error.value).startswith(f"{missing}: no force log there (logging is off by default: start forcescaled with --log")
    assert cli.returncode != 0 and f"{missing}: no force log there" in cli.stderr
    other = scratch / "other.sqlite"
    with sqlite3.connect(other) as db:
        db.execute("CREATE TABLE notes (text TEXT)")
    with pytest.raises(log.LogError) as error:
        log.open(other)
    assert str(error.value) == f"{other}: an SQLite database, but not a forcescale log (it has no sessions and readings tables)"
    newer = scratch / "newer.sqlite"
    with sqlite3.connect(newer) as db:
        db.execute("CREATE TABLE sessions (id INTEGER)")
        db.execute("PRAGMA user_version = 99")
    with pytest.raises(log.LogError) as error:
        log.open(newer)
    assert "written by a newer forcescale (log schema 99; this one reads up to 4)" in str(error.value)
    text = scratch / "text.sqlite"
    text.write_text("not a database at all, but long enough to be read as one by sqlite " * 20)
    with pytest.raises(log.LogError) as error:
        log.open(text).sessions()
    assert "not an SQLite database" in str(error.value)
    assert isinstance(error.value, forcescale.ForcescaleError)
