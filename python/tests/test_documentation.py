"""docs/python.md's examples, run as they are written against a real forcescaled.

Each is the fenced block after a `<!-- python example NAME: … -->` comment, run with Debian's
python3 and this checkout's module, with $XDG_RUNTIME_DIR pointing at the daemon's socket
(the client's default), as a person would run it."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from conftest import EXAMPLES, ROOT, Daemon, clean_environment, program, run
from test_log import logged_demo

DOCUMENT = ROOT / "docs" / "python.md"


def example(name: str) -> str:
    text = DOCUMENT.read_text()
    found = re.findall(r"<!-- python example ([a-z-]+):[^\n]*-->\n```python\n(.*?)```", text, re.S)
    names = [found_name for found_name, _ in found]
    assert sorted(names) == sorted(set(names)) and set(names) == {"weigh", "csv", "experiment", "plot"}, names
    return str(dict(found)[name])


def run_example(name: str, scratch: Path, args: list[str] | None = None) -> tuple[str, str]:
    # Named as docs/python.md names them (a script named csv.py would hide the csv module).
    script = scratch / {"weigh": "weigh.py", "csv": "log_run.py", "experiment": "experiment.py", "plot": "plot_session.py"}[name]
    script.write_text(example(name))
    env = clean_environment(XDG_RUNTIME_DIR=str(scratch / "runtime"), HOME=str(scratch))
    result = run(["/usr/bin/python3", str(script)] + (args or []), env=env, cwd=scratch)
    assert result.returncode == 0, f"docs/python.md's {name} example failed: {result.stderr}"
    return result.stdout, result.stderr


def user_daemon(daemons: Callable[..., Daemon], scratch: Path, recording: str) -> Daemon:
    """forcescaled where a user's daemon listens: $XDG_RUNTIME_DIR/forcescale.sock."""
    (scratch / "runtime").mkdir(exist_ok=True)
    return daemons([recording], socket_name="runtime/forcescale.sock")


def test_weigh_in_three_lines(daemons: Callable[..., Daemon], scratch: Path) -> None:
    daemon = user_daemon(daemons, scratch, str(EXAMPLES / "letter.events"))
    assert len(example("weigh").strip().splitlines()) == 3
    out, _ = run_example("weigh", scratch)
    cli = run([program("forcescale"), "weigh", "--socket", daemon.socket])
    assert out == cli.stdout == "19.6 g\n"


def test_log_a_run_to_csv(daemons: Callable[..., Daemon], scratch: Path, demo_recording: str) -> None:
    user_daemon(daemons, scratch, demo_recording)
    run_example("csv", scratch, ["run.csv"])
    rows = (scratch / "run.csv").read_text().splitlines()
    assert rows[0] == "time,device,grams,settled_grams,stable,saturated"
    assert len(rows) == 501
    times = [float(row.split(",")[0]) for row in rows[1:]]
    assert times == sorted(times)
    assert {row.split(",")[1] for row in rows[1:]} == {"demo.events"}
    assert {row.split(",")[4] for row in rows[1:]} <= {"True", "False"}


def test_an_experiment_that_marks_events(daemons: Callable[..., Daemon], scratch: Path, demo_recording: str) -> None:
    user_daemon(daemons, scratch, demo_recording)
    out, _ = run_example("experiment", scratch)
    marks = [line.split() for line in out.splitlines()]
    assert all(len(mark) >= 5 and mark[1] == "s" and mark[-1] == "g" for mark in marks), out
    times = [float(mark[0]) for mark in marks]
    assert times == sorted(times) and 0 <= times[0] and times[-1] <= 15, out
    kinds = [mark[2] for mark in marks]
    # A pass of the demo is about 13 s: a letter, an apple and a mug each settle and are
    # lifted, and the mug's landing presses the pad to the top of its range.
    assert kinds.count("settled") >= 3 and kinds.count("lifted") >= 2 and kinds.count("peak") >= 1, out


def test_plot_a_session(daemons: Callable[..., Daemon], scratch: Path, demo_recording: str) -> None:
    path = logged_demo(daemons, demo_recording, scratch)
    run_example("plot", scratch, [path, "session.png"])
    image = (scratch / "session.png").read_bytes()
    assert image.startswith(b"\x89PNG\r\n\x1a\n") and len(image) > 10_000
