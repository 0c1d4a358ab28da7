"""Client and AsyncClient against the real forcescaled, compared with what the command-line
client says and does on the same daemon."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

import forcescale

from conftest import EXAMPLES, PATIENCE, Daemon, clean_environment, program, python, recordings, run, wait_for
from test_protocol import CALIBRATION_CURVE

LETTER = str(EXAMPLES / "letter.events")


def cli(*arguments: str, env: dict[str, str] | None = None, as_user: str | None = None) -> tuple[int, str, str]:
    prefix = ["/usr/bin/setpriv", f"--reuid={as_user}", "--regid=nogroup", "--clear-groups"] if as_user else []
    result = run(prefix + [program("forcescale"), *arguments], env=env)
    return result.returncode, result.stdout, result.stderr


def saturating_letter(directory: Path) -> str:
    """The letter recording pressed at the axis maximum: a weight the pad cannot weigh."""
    path = directory / "saturated.events"
    text = (EXAMPLES / "letter.events").read_text()
    assert "0003 0018 13\n" in text
    path.write_text(text.replace("0003 0018 13\n", "0003 0018 255\n"))
    return str(path)


# MARK: - Requests and weighing


def test_requests_give_the_daemons_replies(daemons: Callable[..., Daemon]) -> None:
    daemon = daemons([LETTER])
    with forcescale.Client(daemon.socket) as scale:
        version = scale.version()
        assert (version.proto_major, version.release) == (1, run([program("forcescaled"), "--version"]).stdout.strip())
        status = scale.status()
        assert status.device == "letter.events" and status.devices is not None
        assert status.devices[0].name == "forcescale demo pad (synthetic)"
        devices = scale.devices()
        assert [d.path for d in devices] == [LETTER] and devices[0].can_weigh is True
        poll = scale.poll()
        assert poll.reading is not None and poll.reading.raw == 13
        tare = scale.tare()
        assert tare.device == "letter.events" and tare.grams > 0
        assert scale.calibration().tare == tare.grams
        with pytest.raises(forcescale.DaemonError) as refused:
            scale.rumble("success")
        assert refused.value.request == "RUMBLE"
        assert refused.value.message.startswith("rumble unavailable:")
        with pytest.raises(forcescale.UnknownDeviceError) as unknown:
            scale.tare(device="event9")
        assert isinstance(unknown.value, LookupError)
        assert str(unknown.value) == "no device 'event9' is served (served: letter.events)"
        assert unknown.value.line == '{"class":"ERROR","message":"no device \'event9\' is served (served: letter.events)","request":"TARE"}'
        # The connection stays up after an ERROR.
        assert scale.status().clients == 1


def test_weigh_says_what_forcescale_weigh_says(daemons: Callable[..., Daemon], scratch: Path) -> None:
    daemon = daemons([LETTER])
    with forcescale.Client(daemon.socket) as scale:
        weight = scale.weigh(timeout=PATIENCE)
        status, out, _ = cli("weigh", "--socket", daemon.socket)
        assert status == 0
        assert str(weight) + "\n" == out == "19.6 g\n"
        assert (weight.grams, weight.uncertainty, weight.saturated) == (19.6, None, False)
        # Calibrated below the letter: its weight is past the heaviest point, with the
        # calibration's uncertainty grown for it.
        scale.request({"class": "CALIBRATION", "curve": [dict(raw=4.0, grams=6.0, sd=0.5, n=50),
                       dict(raw=7.0, grams=10.6, sd=0.5, n=50), dict(raw=10.0, grams=15.0, sd=0.5, n=50)]},
                      forcescale.Calibration)
        weight = scale.weigh(timeout=PATIENCE)
        status, out, _ = cli("weigh", "--socket", daemon.socket)
        assert status == 0
        assert str(weight) + "\n" == out
        assert weight.beyond_calibration == 15.0 and weight.uncertainty is not None
        assert " ± " in out and out.endswith(" (beyond the heaviest calibration weight, 15 g)\n"), out


def test_a_saturated_weight_is_a_lower_bound(daemons: Callable[..., Daemon], scratch: Path) -> None:
    daemon = daemons([saturating_letter(scratch)])
    weight = forcescale.Client(daemon.socket).weigh(timeout=PATIENCE)
    status, out, err = cli("weigh", "--socket", daemon.socket)
    assert status == 3, err
    assert weight.saturated and weight.is_lower_bound
    assert str(weight) + "\n" == out == "at least 385.0 g (saturated)\n"


def test_weigh_gives_up_as_forcescale_weigh_does(daemons: Callable[..., Daemon]) -> None:
    # A pen dragged across a tablet: readings all the time, never a stable one.
    daemon = daemons([str(recordings() / "tablets" / "Wacom Intuos4 6x9.stylus-drag.events")])
    with pytest.raises(forcescale.NoStableReadingError) as error:
        forcescale.Client(daemon.socket).weigh(timeout=1.5)
    status, _, err = cli("weigh", "--timeout", "1.5", "--socket", daemon.socket)
    assert status == 1
    assert err == f"error: {error.value}\n"
    assert str(error.value) == "no stable reading within 1.5 s: put the object on the pad and keep it still"


def test_weigh_says_a_falling_weight_is_not_a_weight(daemons: Callable[..., Daemon], scratch: Path) -> None:
    # A contact that falls 3 raw units a second for 40 s (a pad letting go of an object it
    # does not take for a finger), from forcescale-bench's contact generator, as the Swift
    # tests make it.
    path = str(scratch / "falling.events")
    made = run([program("forcescale-bench"), "contact", path, "7", "2", "40", "130", "-3@0:40"])
    assert made.returncode == 0, made.stderr
    daemon = daemons([path])
    with forcescale.Client(daemon.socket) as scale:
        # A drift 2 s or more into the touch: moving for longer than the rule needs to tell
        # a slope from the noise, with most of the fall still to come.
        began: list[float] = []

        def drifting() -> bool:
            reading = scale.poll().reading
            if reading is None or reading.contacts == 0:
                began.clear()
                return False
            if not began:
                began.append(reading.time)
            return reading.drift is not None and reading.time - began[0] >= 2
        wait_for(drifting, "a READING with a drift 2 s into the touch")
        with pytest.raises(forcescale.NoStableReadingError) as error:
            scale.weigh(timeout=3)
    assert error.value.drift is not None and error.value.drift < 0
    assert str(error.value).startswith("the weight did not stop within 3 s: drifting -"), str(error.value)
    assert "rest a finger on the object, or weigh it on a conductive platform" in str(error.value)
    status, _, err = cli("weigh", "--timeout", "3", "--socket", daemon.socket)
    assert status == 1
    assert err.startswith("error: the weight did not stop within 3 s: drifting -"), err


def test_weigh_asks_which_of_several_devices(daemons: Callable[..., Daemon], demo_recording: str) -> None:
    daemon = daemons([LETTER, demo_recording])
    scale = forcescale.Client(daemon.socket)
    with pytest.raises(forcescale.NoDeviceError) as error:
        scale.weigh()
    assert str(error.value).startswith("forcescaled serves 2 devices (letter.events, demo.events): name the one")
    assert str(scale.weigh(timeout=PATIENCE, device="letter.events")) == "19.6 g"


# MARK: - No daemon, or not this user's


def test_no_daemon_gives_the_clis_advice(scratch: Path) -> None:
    runtime = scratch / "runtime"
    runtime.mkdir()
    assert not os.path.lexists(forcescale.SYSTEM_SOCKET), "this machine runs a system forcescaled: the default socket is its"
    env = clean_environment(XDG_RUNTIME_DIR=str(runtime))
    script = ("import forcescale\nc = forcescale.Client()\nprint(c.socket)\n"
              "try:\n    c.status()\nexcept forcescale.NotListeningError as e:\n    print(e)\n")
    result = python(script, env=env)
    assert result.returncode == 0, result.stderr
    socket, message = result.stdout.splitlines()
    assert socket == f"{runtime}/forcescale.sock"
    status, _, err = cli("status", env=env)
    assert status == 69
    assert err == f"error: {message}\n"
    assert message == (f"no forcescaled is listening on {runtime}/forcescale.sock; start it with 'forcescaled' "
                       "(or 'systemctl start forcescaled'), or give --socket")
    # An explicit socket, and the asyncio client, say the same.
    other = str(scratch / "nothing.sock")
    with pytest.raises(forcescale.NotListeningError) as error:
        forcescale.Client(other).status()
    assert isinstance(error.value, ConnectionError)
    status, _, err = cli("status", "--socket", other)
    assert err == f"error: {error.value}\n"
    with pytest.raises(forcescale.NotListeningError) as async_error:
        asyncio.run(forcescale.AsyncClient(other).status())
    assert str(async_error.value) == str(error.value)


def test_a_socket_this_user_may_not_open_gives_the_clis_advice(daemons: Callable[..., Daemon]) -> None:
    daemon = daemons([LETTER])
    script = ("import sys, forcescale\ntry:\n    forcescale.Client(sys.argv[1]).status()\n"
              "except PermissionError as e:\n    print(type(e).__name__); print(e)\n")
    result = python(script, args=[daemon.socket], as_user="nobody")
    assert result.returncode == 0, result.stderr
    kind, message = result.stdout.splitlines()
    status, _, err = cli("status", "--socket", daemon.socket, as_user="nobody")
    assert status == 77
    assert kind == "SocketPermissionError"
    assert err == f"error: {message}\n"
    assert message == f"permission denied on {daemon.socket}: join group 'forcescale' (then log in again)"


def test_tare_refused_raises_a_permission_error_with_the_daemons_words(daemons: Callable[..., Daemon]) -> None:
    daemon = daemons([LETTER])
    # Anyone may connect now; the daemon still lets only root and its own user tare.
    os.chmod(daemon.socket, 0o666)
    script = ("import sys, forcescale\nc = forcescale.Client(sys.argv[1])\nprint(c.status().release)\n"
              "try:\n    c.tare()\nexcept PermissionError as e:\n"
              "    print(type(e).__name__); print(e.request); print(e.line); print(e)\n")
    result = python(script, args=[daemon.socket], as_user="nobody")
    assert result.returncode == 0, result.stderr
    release, kind, request, line, message = result.stdout.splitlines()
    assert (kind, request) == ("NotPermittedError", "TARE")
    assert message.startswith("permission denied: only root") and message.endswith(" may TARE")
    assert line == '{"class":"ERROR","message":' + f'"{message}","request":"TARE"}}'
    status, _, err = cli("tare", "--socket", daemon.socket, as_user="nobody")
    assert status == 77
    assert err == f"error: {message}\n"


# MARK: - The stream


def readings_until(stream: Iterator[object], predicate: Callable[[object], bool], what: str) -> list[object]:
    seen: list[object] = []
    end = time.monotonic() + PATIENCE
    for item in stream:
        seen.append(item)
        if predicate(item):
            return seen
        assert time.monotonic() < end, f"no {what} within {PATIENCE:.0f} s: {seen[-3:]}"
    raise AssertionError(f"the stream ended before {what}")


def test_a_restarted_daemon_is_found_again(daemons: Callable[..., Daemon], demo_recording: str) -> None:
    daemon = daemons([demo_recording])
    scale = forcescale.Client(daemon.socket)
    stream = scale.watch(reconnect=True, timeout=PATIENCE)
    readings_until(stream, lambda item: isinstance(item, forcescale.Reading), "READING")
    daemon.stop()
    lost = readings_until(stream, lambda item: isinstance(item, forcescale.Disconnected), "Disconnected")[-1]
    assert isinstance(lost, forcescale.Disconnected)
    assert isinstance(lost.error, forcescale.ConnectionClosedError)
    assert lost.retry_in == 0.1
    assert str(lost).startswith(f"waiting for forcescaled (forcescaled closed the connection on {daemon.socket}); trying again in 0.1 s")
    daemon.start()
    back = readings_until(stream, lambda item: isinstance(item, forcescale.Reconnected), "Reconnected")
    assert not any(isinstance(item, forcescale.Reading) for item in back), "readings while the daemon was away"
    after = readings_until(stream, lambda item: isinstance(item, forcescale.Reading), "READING after the restart")
    assert isinstance(after[-1], forcescale.Reading) and after[-1].device == "demo.events"
    stream.close()
    # Without reconnect, losing the daemon ends the watch with the error.
    plain = forcescale.Client(daemon.socket).watch(timeout=PATIENCE)
    readings_until(plain, lambda item: isinstance(item, forcescale.Reading), "READING")
    daemon.stop()
    with pytest.raises(forcescale.ConnectionClosedError):
        for _ in plain:
            pass


def test_the_asyncio_client_finds_a_restarted_daemon_again(daemons: Callable[..., Daemon], demo_recording: str) -> None:
    daemon = daemons([demo_recording])

    async def scenario() -> list[str]:
        kinds: list[str] = []
        async with forcescale.AsyncClient(daemon.socket) as scale:
            assert (await scale.status()).device == "demo.events"
            weight = await scale.weigh(timeout=PATIENCE)
            assert weight.grams > 0 and not weight.saturated
            stream = scale.watch(reconnect=forcescale.ReconnectPolicy(0.05, 1.0), timeout=PATIENCE)
            end = asyncio.get_running_loop().time() + PATIENCE
            async for item in stream:
                assert asyncio.get_running_loop().time() < end, kinds[-5:]
                kind = type(item).__name__
                if not kinds or kinds[-1] != kind:
                    kinds.append(kind)
                if kind == "Reading" and "Disconnected" not in kinds:
                    daemon.stop()
                elif kind == "Disconnected":
                    await asyncio.get_running_loop().run_in_executor(None, daemon.start)
                elif kind == "Reading" and "Reconnected" in kinds:
                    break
            await stream.aclose()
        return kinds

    kinds = asyncio.run(scenario())
    assert kinds[0] == "Reading" and kinds[-1] == "Reading", kinds
    assert kinds.index("Disconnected") < kinds.index("Reconnected"), kinds


def test_a_slow_watcher_is_told_what_the_daemon_dropped(daemons: Callable[..., Daemon], demo_recording: str) -> None:
    daemon = daemons([demo_recording])
    scale = forcescale.Client(daemon.socket)
    stream = scale.watch(timeout=PATIENCE, check_dropped=0.2)
    first = readings_until(stream, lambda item: isinstance(item, forcescale.Reading), "READING")[-1]
    assert isinstance(first, forcescale.Reading)
    # This watcher stops reading; the daemon discards what it cannot send, and counts it.
    with forcescale.Client(daemon.socket) as observer:
        total = wait_for(lambda: observer.status().dropped, "the daemon to drop lines for the stalled watcher")
    seen = readings_until(stream, lambda item: isinstance(item, forcescale.Dropped), "a Dropped notice")
    notice = seen[-1]
    assert isinstance(notice, forcescale.Dropped)
    assert notice.count >= total and notice.total >= total
    lines = "line" if notice.count == 1 else "lines"
    assert str(notice) == f"forcescaled dropped {notice.count} {lines} of the stream: this watcher read too slowly"
    # The readings go on after the gap, newer than those before it.
    later = readings_until(stream, lambda item: isinstance(item, forcescale.Reading), "READING after the gap")[-1]
    assert isinstance(later, forcescale.Reading) and later.time > first.time
    stream.close()


def test_unknown_device_ends_a_watch_with_the_daemons_error(daemons: Callable[..., Daemon]) -> None:
    daemon = daemons([LETTER])
    with pytest.raises(forcescale.UnknownDeviceError) as error:
        next(forcescale.Client(daemon.socket).watch(device="event9", reconnect=True))
    assert error.value.request == "WATCH"


def test_a_watch_that_hears_nothing_for_its_timeout_ends(daemons: Callable[..., Daemon]) -> None:
    # The letter played once (over before long, however busy the machine): then silence.
    # The daemon stays up and answers the dropped-line checks every 0.2 s, which are no
    # readings and do not keep the watch waiting.
    daemon = daemons([LETTER], loop=False)
    stream = forcescale.Client(daemon.socket).watch(timeout=1.5, check_dropped=0.2)
    with pytest.raises(forcescale.ReplyTimeoutError) as error:
        for item in stream:
            assert isinstance(item, forcescale.Reading), item
    assert isinstance(error.value, TimeoutError)
    assert str(error.value) == f"{daemon.socket}: no READING reply from forcescaled within 1.5 s"


def test_the_reconnect_policy_is_the_clis() -> None:
    policy = forcescale.ReconnectPolicy()
    assert [policy.delay(n) for n in range(1, 9)] == [0.1, 0.2, 0.4, 0.8, 1.6, 3.2, 5.0, 5.0]
    with pytest.raises(ValueError):
        forcescale.ReconnectPolicy(0, 1)
